// Scatter on point-to-point messages: linear.
#include <vector>

#include "inter/p2p.hpp"

namespace tlc::detail::p2p {

// Linear scatter ([Thakur] sec. 4; Open MPI's basic linear scatter): the root posts one send per
// other process, each from that process's block, all at once, and waits for them together; every
// other process receives its block in one message. The root's own block stays where it is.
// Cost: (P-1) alpha + (P-1)/P n beta at the root (n: all blocks), alpha + n/P beta elsewhere;
// for few processes cheaper than a binomial tree (ceil(lg P) alpha, the same bytes), with no
// process forwarding another's data.
void linear_scatterv(ProcessComm& lane, const std::byte* send, std::span<const std::size_t> bytes,
                     std::span<const std::size_t> displs, std::byte* recv, std::size_t recv_bytes,
                     int root) {
  const int size = lane.size(), rank = lane.rank();
  util::expect_root(root, lane, "scatter");
  if (size == 1) return;
  if (rank != root) {  // one message: received as it arrives (p2p::receive)
    receive(lane, recv, recv_bytes, root, util::tag_scatter, "linear scatter");
    return;
  }
  util::expect_per_process(bytes, lane, "scatter sizes");
  util::expect_per_process(displs, lane, "scatter displacements");
  thread_local std::vector<MPI_Request> requests;
  requests.assign(static_cast<std::size_t>(size), MPI_REQUEST_NULL);
  for (int p = 0; p < size; ++p) {
    if (p == root) continue;
    const auto q = static_cast<std::size_t>(p);
    util::isend(lane, send + displs[q], bytes[q], p, util::tag_scatter, requests[q]);
  }
  lane.wait_all(requests, "linear scatter");
}

}  // namespace tlc::detail::p2p
