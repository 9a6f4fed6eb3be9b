// Gather on point-to-point messages: linear.
#include <vector>

#include "inter/p2p.hpp"

namespace tlc::detail::p2p {

namespace {

// Linear gather ([Thakur] sec. 4; Open MPI's basic linear gather): every process other than the
// root sends its block to the root in one message; the root posts all P-1 receives at once, each
// into its block's place, and waits for them together, so they arrive in whatever order the
// senders manage. The root's own block is already in place.
// Cost: (P-1) alpha + (P-1)/P n beta at the root (n: all blocks), alpha + n/P beta elsewhere; no
// process forwards another's data, so it beats a binomial tree (ceil(lg P) alpha, the same bytes)
// for few processes, and every message is one MPI message on the callers' buffers.
// The root receives block p (bytes_of(p) bytes) at recv + displ_of(p).
template <class BytesOf, class DisplOf>
void linear(ProcessComm& lane, const std::byte* send, std::size_t send_bytes, std::byte* recv,
            BytesOf bytes_of, DisplOf displ_of, int root) {
  const int size = lane.size(), rank = lane.rank();
  if (rank != root) {
    MPI_Request request;
    util::isend(lane, send, send_bytes, root, {util::Tag::gather, util::root_word(root)}, request);
    lane.wait_all(std::span(&request, 1), "linear gather");
    return;
  }
  if (size == 2) {  // one message: received as it arrives (p2p::receive)
    const int other = 1 - root;
    receive(lane, recv + displ_of(other), bytes_of(other), other,
            {util::Tag::gather, util::root_word(root)}, "linear gather");
    return;
  }
  thread_local std::vector<MPI_Request> requests;
  requests.assign(static_cast<std::size_t>(size), MPI_REQUEST_NULL);
  for (int p = 0; p < size; ++p) {
    if (p == root) continue;
    util::irecv(lane, recv + displ_of(p), bytes_of(p), p,
                {util::Tag::gather, util::root_word(root)}, requests[static_cast<std::size_t>(p)]);
  }
  lane.wait_all(requests, "linear gather");
}

}  // namespace

void linear_gatherv(ProcessComm& lane, const std::byte* send, std::size_t send_bytes,
                    std::byte* recv, std::span<const std::size_t> bytes,
                    std::span<const std::size_t> displs, int root) {
  util::expect_root(root, lane, "gather");
  if (lane.size() == 1) return;
  if (lane.rank() == root) {
    util::expect_per_process(bytes, lane, "gather sizes");
    util::expect_per_process(displs, lane, "gather displacements");
  }
  linear(
      lane, send, send_bytes, recv, [&](int p) { return bytes[static_cast<std::size_t>(p)]; },
      [&](int p) { return displs[static_cast<std::size_t>(p)]; }, root);
}

void linear_gather(ProcessComm& lane, const std::byte* send, std::byte* recv,
                   std::size_t block_bytes, int root) {
  util::expect_root(root, lane, "gather");
  if (lane.size() == 1) return;
  linear(
      lane, send, block_bytes, recv, [&](int) { return block_bytes; },
      [&](int p) { return static_cast<std::size_t>(p) * block_bytes; }, root);
}

}  // namespace tlc::detail::p2p
