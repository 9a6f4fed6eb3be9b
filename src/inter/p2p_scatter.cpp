// Scatter on point-to-point messages: linear.
#include <vector>

#include "inter/p2p.hpp"

namespace tlc::detail::p2p {

namespace {

// Linear scatter ([Thakur] sec. 4; Open MPI's basic linear scatter): the root posts one send per
// other process, each from that process's block, all at once, and waits for them together; every
// other process receives its block in one message. The root's own block stays where it is.
// Cost: (P-1) alpha + (P-1)/P n beta at the root (n: all blocks), alpha + n/P beta elsewhere;
// for few processes cheaper than a binomial tree (ceil(lg P) alpha, the same bytes), with no
// process forwarding another's data.
// The root sends block p (bytes_of(p) bytes at send + displ_of(p)) to process p.
template <class BytesOf, class DisplOf>
void linear(ProcessComm& lane, const std::byte* send, BytesOf bytes_of, DisplOf displ_of,
            std::byte* recv, std::size_t recv_bytes, int root) {
  const int size = lane.size(), rank = lane.rank();
  if (rank != root) {  // one message: received as it arrives (p2p::receive)
    receive(lane, recv, recv_bytes, root, {util::Tag::scatter, util::root_word(root)},
            "linear scatter");
    return;
  }
  if (size == 2) {
    MPI_Request request;
    const int other = 1 - root;
    util::isend(lane, send + displ_of(other), bytes_of(other), other,
                {util::Tag::scatter, util::root_word(root)}, request);
    lane.wait_all(std::span(&request, 1), "linear scatter");
    return;
  }
  thread_local std::vector<MPI_Request> requests;
  requests.assign(static_cast<std::size_t>(size), MPI_REQUEST_NULL);
  for (int p = 0; p < size; ++p) {
    if (p == root) continue;
    util::isend(lane, send + displ_of(p), bytes_of(p), p,
                {util::Tag::scatter, util::root_word(root)}, requests[static_cast<std::size_t>(p)]);
  }
  lane.wait_all(requests, "linear scatter");
}

}  // namespace

void linear_scatterv(ProcessComm& lane, const std::byte* send, std::span<const std::size_t> bytes,
                     std::span<const std::size_t> displs, std::byte* recv, std::size_t recv_bytes,
                     int root) {
  util::expect_root(root, lane, "scatter");
  if (lane.size() == 1) return;
  if (lane.rank() == root) {
    util::expect_per_process(bytes, lane, "scatter sizes");
    util::expect_per_process(displs, lane, "scatter displacements");
  }
  linear(
      lane, send, [&](int p) { return bytes[static_cast<std::size_t>(p)]; },
      [&](int p) { return displs[static_cast<std::size_t>(p)]; }, recv, recv_bytes, root);
}

void linear_scatter(ProcessComm& lane, const std::byte* send, std::byte* recv,
                    std::size_t block_bytes, int root) {
  util::expect_root(root, lane, "scatter");
  if (lane.size() == 1) return;
  linear(
      lane, send, [&](int) { return block_bytes; },
      [&](int p) { return static_cast<std::size_t>(p) * block_bytes; }, recv, block_bytes, root);
}

}  // namespace tlc::detail::p2p
