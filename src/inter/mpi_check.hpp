// Every MPI call tlc makes is checked; a failure becomes tlc::Error(mpi) carrying
// MPI_Error_string. Internal communicators use MPI_ERRORS_RETURN so that this can happen.
#pragma once

#include <mpi.h>

namespace tlc::detail {

void check_mpi(int rc, const char* what);  // in inter/mpi_policy.cpp

// Held around tlc's calls that complete requests (MPI_Test, MPI_Testall, MPI_Mrecv, ...): MPICH
// 4.0 raises their errors (a truncated message) on MPI_COMM_WORLD's error handler, not on the
// request's communicator, and there MPI_ERRORS_ARE_FATAL ended the job with MPI's words. tlc
// puts its own handler on MPI_COMM_WORLD (return_world_errors_to_tlc, mpi_policy.hpp), which
// returns the error to the call while this thread holds one of these, and ends the job as
// MPI_ERRORS_ARE_FATAL does otherwise. Nested holds are fine.
class WorldErrorsReturned {
 public:
  WorldErrorsReturned() noexcept { ++depth_; }
  ~WorldErrorsReturned() { --depth_; }
  WorldErrorsReturned(const WorldErrorsReturned&) = delete;
  WorldErrorsReturned& operator=(const WorldErrorsReturned&) = delete;
  static bool held() noexcept { return depth_ > 0; }

 private:
  static thread_local int depth_;
};

}  // namespace tlc::detail
