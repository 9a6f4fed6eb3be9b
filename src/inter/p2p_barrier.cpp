// Barrier on point-to-point messages: dissemination.
#include "inter/p2p.hpp"

namespace tlc::detail::p2p {

// Dissemination barrier ([Hensgen], docs/references.md): in round k = 0 .. ceil(lg P) - 1 every
// process sends one byte to (rank + 2^k) mod P and receives one from (rank - 2^k) mod P; after the
// last round every process has heard, directly or through others, from every process. Each round's
// receive is posted before its send, and a round ends when both complete. Cost: ceil(lg P) alpha.
void dissemination_barrier(ProcessComm& lane) {
  const int size = lane.size(), rank = lane.rank();
  // One byte each way: zero-byte messages are never sent by these algorithms (util::isend).
  const std::byte token{1};
  std::byte incoming{};
  for (int distance = 1; distance < size; distance <<= 1) {
    MPI_Request requests[2];
    util::irecv(lane, &incoming, 1, (rank - distance + size) % size, util::Tag::barrier,
                requests[0]);
    util::isend(lane, &token, 1, (rank + distance) % size, util::Tag::barrier, requests[1]);
    lane.wait_all(requests, "the dissemination barrier");
  }
}

}  // namespace tlc::detail::p2p
