// Broadcast on point-to-point messages: a binomial tree, pipelined in segments.
#include <algorithm>
#include <array>
#include <limits>
#include <span>
#include <string>
#include <vector>

#include "inter/mpi_policy.hpp"
#include "inter/p2p.hpp"

namespace tlc::detail::p2p {

namespace {

// Receives posted ahead of the segment being forwarded. Enough to keep the link busy while a
// segment is forwarded, few enough that MPI's match queues stay short and a fast parent is at
// most this many segments ahead of its slowest child (the sends of a slot are completed before
// the slot is reused).
constexpr std::size_t window = 8;
constexpr std::size_t max_children = std::numeric_limits<int>::digits;

}  // namespace

// Pipelined binomial-tree broadcast ([Thakur] sec. 4.2; the multi-sender bcast of [Parsons]
// ch. 2.3.2 is this tree pipelined, each sender owning a part of the buffer).
// Steps: ranks relative to the root, v = (r - root) mod P. The parent of v is v minus its
// lowest set bit; the children of v are v + m for every power of two m below that bit
// (below the smallest power of two >= P at the root) with v + m < P, largest subtree first.
// The buffer is cut into S = ceil(n / segment) segments; each process receives segment s from
// its parent and sends it on to all its children while segments s+1 .. s+window are already
// being received. Between two processes nobody forwards: one message whatever its size, but for
// a message between MPI's eager limit and twice that, sent as two eager ones where the MPI
// library makes that faster (mpi_splits_short_rendezvous_messages).
// Cost: unsegmented (S = 1) ceil(lg P) (alpha + n beta). Segmented, in the single-port model
// the root still sends every segment to ceil(lg P) children, so T ~ ceil(lg P) (S alpha +
// n beta) + O(lg^2 P) (alpha + n beta / S): segmenting does not cut the bandwidth term, it
// makes interior processes forward while later segments still arrive, so the tree depth is paid
// on a segment instead of on n; with several lanes sending at once (multi-sender) the sends to
// different children overlap on the network.
void binomial_bcast(ProcessComm& lane, std::byte* buf, std::size_t bytes, int root,
                    std::size_t segment_bytes) {
  const int size = lane.size(), rank = lane.rank();
  util::expect_root(root, lane, "bcast");
  if (size == 1 || bytes == 0) return;
  // Two processes: nobody forwards, so segments of the rendezvous protocol would only add a
  // handshake each; but under MPICH a message up to twice the eager limit goes faster as two
  // eager ones (no handshake at all) than as one past the limit.
  static const std::size_t eager = mpi_splits_short_rendezvous_messages()
                                       ? static_cast<std::size_t>(mpi_default_eager_bytes())
                                       : 0;
  const std::size_t segment = size == 2 && eager && bytes > eager && bytes <= 2 * eager ? eager
                              : size == 2 || segment_bytes == 0 || segment_bytes >= bytes
                                  ? bytes
                                  : segment_bytes;
  // No division on the one-message path: a small call pays for every instruction of it.
  const std::size_t segments = segment == bytes ? 1 : (bytes + segment - 1) / segment;
  auto segment_size = [&](std::size_t s) { return std::min(segment, bytes - s * segment); };

  const int relative = util::wrap(rank - root, size);
  auto real = [&](int v) { return util::wrap(v + root, size); };
  int parent = -1;
  int mask = 1;
  for (; mask < size; mask <<= 1) {
    if (relative & mask) {
      parent = real(relative - mask);
      break;
    }
  }
  // At most one child per bit of a rank: on the stack, so that a small call touches no
  // thread-local storage (each access a library call in a shared library).
  std::array<int, max_children> children;
  std::size_t fanout = 0;
  for (int m = mask >> 1; m > 0; m >>= 1)
    if (relative + m < size) children[fanout++] = real(relative + m);

  if (segments == 1) {  // one message: received as it arrives (p2p::receive)
    if (parent >= 0)
      receive(lane, buf, bytes, parent, {util::Tag::bcast, util::root_word(root)},
              "binomial bcast");
    std::array<MPI_Request, max_children> sends;
    for (std::size_t c = 0; c < fanout; ++c)
      util::isend(lane, buf, bytes, children[c], {util::Tag::bcast, util::root_word(root)},
                  sends[c]);
    lane.wait_all(std::span(sends.data(), fanout), "binomial bcast");
    return;
  }
  // Kept per thread so that a segmented call allocates nothing (each lane thread runs its own
  // instance; the function never re-enters itself).
  thread_local std::vector<MPI_Request> receives, sends;
  // Slot s % window holds segment s's receive and its sends to every child.
  const std::size_t slots = std::min(window, segments);
  receives.assign(slots, MPI_REQUEST_NULL);
  sends.assign(slots * fanout, MPI_REQUEST_NULL);
  auto post_receive = [&](std::size_t s) {
    util::irecv(lane, buf + s * segment, segment_size(s), parent,
                {util::Tag::bcast, util::root_word(root)}, receives[s % window]);
  };
  if (parent >= 0)
    for (std::size_t s = 0; s < slots; ++s) post_receive(s);
  for (std::size_t s = 0; s < segments; ++s) {
    const std::size_t slot = s % window;
    if (parent >= 0) {
      lane.wait_all(std::span(&receives[slot], 1), "binomial bcast");
      // Segments land in disjoint parts of buf, so the slot can take the next one at once.
      if (s + window < segments) post_receive(s + window);
    }
    if (fanout == 0) continue;
    // The slot's sends carried segment s - window; they must be done before it is reused.
    const std::span<MPI_Request> slot_sends(sends.data() + slot * fanout, fanout);
    lane.wait_all(slot_sends, "binomial bcast");
    for (std::size_t c = 0; c < fanout; ++c)
      util::isend(lane, buf + s * segment, segment_size(s), children[c],
                  {util::Tag::bcast, util::root_word(root)}, slot_sends[c]);
  }
  lane.wait_all(sends, "binomial bcast");
}

}  // namespace tlc::detail::p2p
