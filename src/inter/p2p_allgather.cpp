// Allgather on point-to-point messages: ring (any block sizes) and Bruck (equal blocks).
#include <algorithm>
#include <array>
#include <cstring>

#include "inter/p2p.hpp"

namespace tlc::detail::p2p {

namespace {

// Ring allgatherv ([Thakur] sec. 4.1, MPICH's long-message allgather).
// Steps: in step s = 0 .. P-2, process r sends block (r - s) mod P to r + 1 and receives block
// (r - s - 1) mod P from r - 1, i.e. it forwards what it received in the step before.
// Cost: (P-1) alpha + (P-1)/P n beta. Only nearest-neighbour traffic, which is why it beats the
// logarithmic algorithms for long messages ([Thakur] sec. 4.1.3); in multi-sender use each lane
// runs its own ring on its part of the buffer ([Parsons] ch. 2.3.2).
// The ring on blocks of bytes_of(p) bytes at buf + displ_of(p).
template <class BytesOf, class DisplOf>
void ring(ProcessComm& lane, std::byte* buf, BytesOf bytes_of, DisplOf displ_of,
          const std::byte* own_block) {
  const int size = lane.size(), rank = lane.rank();
  // Step 0 sends the own block; no later step reads it, so its copy into buf can wait until
  // that message is on its way.
  auto place_own_block = [&] {
    if (own_block && own_block != buf + displ_of(rank) && bytes_of(rank) != 0)
      std::memcpy(buf + displ_of(rank), own_block, bytes_of(rank));
  };
  if (size == 1) {
    place_own_block();
    return;
  }
  const int right = util::wrap(rank + 1, size), left = util::wrap(rank - 1, size);
  for (int step = 0; step + 1 < size; ++step) {
    const int send_block = util::wrap(rank - step, size);
    const int recv_block = util::wrap(rank - step - 1, size);
    const std::byte* send = step == 0 && own_block ? own_block : buf + displ_of(send_block);
    std::array<MPI_Request, 2> requests;
    util::irecv(lane, buf + displ_of(recv_block), bytes_of(recv_block), left,
                util::Tag::ring_allgather, requests[0]);
    util::isend(lane, send, bytes_of(send_block), right, util::Tag::ring_allgather, requests[1]);
    if (step == 0) place_own_block();
    lane.wait_all(requests, "ring allgatherv");
  }
}

}  // namespace

void ring_allgatherv(ProcessComm& lane, std::byte* buf, std::span<const std::size_t> bytes,
                     std::span<const std::size_t> displs, const std::byte* own_block) {
  util::expect_per_process(bytes, lane, "allgatherv sizes");
  util::expect_per_process(displs, lane, "allgatherv displacements");
  ring(
      lane, buf, [&](int p) { return bytes[static_cast<std::size_t>(p)]; },
      [&](int p) { return displs[static_cast<std::size_t>(p)]; }, own_block);
}

void ring_allgather(ProcessComm& lane, std::byte* buf, std::size_t block_bytes,
                    const std::byte* own_block) {
  ring(
      lane, buf, [&](int) { return block_bytes; },
      [&](int p) { return static_cast<std::size_t>(p) * block_bytes; }, own_block);
}

// Bruck allgather ([Thakur] sec. 4.1.2, "concatenation").
// Steps: the own block moves to the top of the buffer (position 0); in step k, with
// d = 2^k < P, process r sends its first min(d, P - d) blocks to r - d and appends the blocks
// received from r + d at position d. Position i then holds block (r + i) mod P, so a final
// rotation down by r blocks puts every block in place (the last step, for a non-power-of-two
// P, is the paper's partial step of P - 2^floor(lg P) blocks).
// Cost: ceil(lg P) alpha + (P-1)/P n beta, plus copying n + min(r, P-r) blocks locally.
// Good for short messages and non-power-of-two P, where latency dominates ([Thakur] sec. 4.1.3).
void bruck_allgather(ProcessComm& lane, std::byte* buf, std::size_t block_bytes) {
  const int size = lane.size(), rank = lane.rank();
  if (size == 1 || block_bytes == 0) return;
  const auto bb = block_bytes;
  const auto r = static_cast<std::size_t>(rank), p = static_cast<std::size_t>(size);
  // Only the own block is input in place, so position 0's old contents may go.
  if (r != 0) std::memcpy(buf, buf + r * bb, bb);
  for (std::size_t distance = 1; distance < p; distance *= 2) {
    const std::size_t blocks = std::min(distance, p - distance);
    const int to = static_cast<int>((r + p - distance) % p);
    const int from = static_cast<int>((r + distance) % p);
    std::array<MPI_Request, 2> requests;
    util::irecv(lane, buf + distance * bb, blocks * bb, from, util::Tag::bruck_allgather,
                requests[0]);
    util::isend(lane, buf, blocks * bb, to, util::Tag::bruck_allgather, requests[1]);
    lane.wait_all(requests, "Bruck allgather");
  }
  if (r == 0) return;
  // Positions [0, P-r) hold blocks r..P-1, which belong at [r, P); positions [P-r, P) hold
  // blocks 0..r-1, which belong at [0, r). The smaller part goes through scratch.
  const std::size_t head = (p - r) * bb, tail = r * bb;
  if (tail < head) {
    std::byte* saved = util::scratch(tail);
    std::memcpy(saved, buf + head, tail);
    std::memmove(buf + tail, buf, head);
    std::memcpy(buf, saved, tail);
  } else {
    std::byte* saved = util::scratch(head);
    std::memcpy(saved, buf, head);
    std::memmove(buf, buf + head, tail);
    std::memcpy(buf + tail, saved, head);
  }
}

}  // namespace tlc::detail::p2p
