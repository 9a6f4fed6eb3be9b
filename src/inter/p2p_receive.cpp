// The receive of one message that the algorithms of a single message per step share
// (p2p::receive, inter/p2p.hpp): a message that has already arrived is taken at once.
#include "inter/mpi_policy.hpp"
#include "inter/p2p.hpp"

namespace tlc::detail::p2p {

void receive(ProcessComm& lane, std::byte* data, std::size_t bytes, int from, int tag,
             const char* what) {
  if (bytes == 0) return;
  MPI_Request request = MPI_REQUEST_NULL;
  {
    auto lock = lane.serialize();
    int arrived = 0;
    MPI_Message message = MPI_MESSAGE_NULL;
    static const std::size_t peek_up_to = mpi_takes_arrived_messages_faster()
                                              ? static_cast<std::size_t>(mpi_default_eager_bytes())
                                              : 0;
    if (bytes <= peek_up_to && !mpi_serialization::required.load(std::memory_order_relaxed))
      check_mpi(MPI_Improbe(from, tag, lane.get(), &arrived, &message, MPI_STATUS_IGNORE),
                "MPI_Improbe");
    if (arrived) {
      const WorldErrorsReturned returned;
      check_mpi(MPI_Mrecv(data, static_cast<int>(bytes), MPI_BYTE, &message, MPI_STATUS_IGNORE),
                "MPI_Mrecv");
      return;
    }
    check_mpi(large::irecv(data, static_cast<MPI_Count>(bytes), MPI_BYTE, from, tag, lane.get(),
                           &request),
              "MPI_Irecv");
  }
  lane.wait_all(std::span(&request, 1), what);
}

}  // namespace tlc::detail::p2p
