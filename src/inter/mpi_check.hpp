// Every MPI call tlc makes is checked; a failure becomes tlc::Error(mpi) carrying
// MPI_Error_string. Internal communicators use MPI_ERRORS_RETURN so that this can happen.
#pragma once

#include <mpi.h>

namespace tlc::detail {

void check_mpi(int rc, const char* what);  // in inter/mpi_policy.cpp

}  // namespace tlc::detail
