// Runs a body on a team of OpenMP threads, for the modes that measure OpenMP patterns
// (master-only, MPI everywhere's threads) beside tlc's teams.
#pragma once

#include <omp.h>

#include <stdexcept>
#include <string>

namespace tlc_bench {

// Runs body(thread) on `threads` OpenMP threads. Exceptions must not leave a parallel region, so
// a short team (OMP_THREAD_LIMIT, OMP_DYNAMIC) runs nothing and is reported after it.
template <class Body>
void omp_parallel(int threads, Body&& body) {
  int got = threads;
#pragma omp parallel num_threads(threads)
  {
    if (omp_get_num_threads() != threads) {
      if (omp_get_thread_num() == 0) got = omp_get_num_threads();
    } else {
      body(omp_get_thread_num());
    }
  }
  if (got != threads)
    throw std::runtime_error("OpenMP provided " + std::to_string(got) + " threads instead of " +
                             std::to_string(threads) + " (OMP_THREAD_LIMIT? OMP_DYNAMIC?)");
}

}  // namespace tlc_bench
