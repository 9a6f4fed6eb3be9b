// openmp_master_only_migrated: the same hybrid MPI+OpenMP computation twice.
//
//   1. "Master-only", the classic pattern: the threads reduce their vectors into one shared
//      array, an OpenMP barrier, the master thread calls MPI_Allreduce on it, another barrier,
//      and the threads read the result. All threads but one wait while MPI runs, and the data
//      goes through the shared array twice.
//   2. The same program on tlc: the OpenMP threads keep working as they are, each attaches to the
//      team as one participant and calls me.allreduce with its own buffers. No shared array, no
//      barriers, no master section; tlc does the intra-process and inter-process phases.
//
// The values are integers stored in doubles, so both versions are exact and must agree bit for
// bit whatever order the additions happen in.
//
// attach() needs all team.threads() participants running at the same time (a collective waits
// for every participant). An OpenMP parallel region gives exactly that - its threads run
// concurrently, which is why #pragma omp barrier is legal - provided it really gets
// team.threads() threads: dynamic adjustment is turned off and the count is checked.
#include <tlc/tlc.hpp>

#include <mpi.h>
#include <omp.h>

#include <cstdio>
#include <exception>
#include <mutex>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

constexpr int kElements = 1000;

// Thread `rank` (global, process-major) contributes value(rank, i) to element i.
double value(int rank, int i) { return static_cast<double>((rank + 1) * (i % 13 + 1)); }

// sum over r = 0..size-1 of value(r, i)
double expected(int size, int i) {
  return static_cast<double>(size * (size + 1) / 2 * (i % 13 + 1));
}

// The old code: returns each thread's copy of the result.
std::vector<std::vector<double>> master_only(int threads) {
  int process = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &process);
  // Global rank of this process's thread 0 (threads may differ between processes).
  int first_rank = 0;
  MPI_Exscan(&threads, &first_rank, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (process == 0) first_rank = 0;  // MPI_Exscan leaves rank 0's output undefined

  std::vector<double> shared(kElements, 0.0);
  std::vector<std::vector<double>> contributions(threads, std::vector<double>(kElements));
  std::vector<std::vector<double>> results(threads);

#pragma omp parallel num_threads(threads)
  {
    const int t = omp_get_thread_num();
    for (int i = 0; i < kElements; ++i) contributions[t][i] = value(first_rank + t, i);
#pragma omp barrier
      // Threads reduce into the shared array (each thread a block of elements).
#pragma omp for schedule(static)
    for (int i = 0; i < kElements; ++i) {
      double s = 0;
      for (int u = 0; u < threads; ++u) s += contributions[u][i];
      shared[i] = s;
    }  // implicit barrier
#pragma omp master
    MPI_Allreduce(MPI_IN_PLACE, shared.data(), kElements, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
#pragma omp barrier
    results[t] = shared;
  }
  return results;
}

// The same computation on tlc.
std::vector<std::vector<double>> with_tlc(tlc::Team& team) {
  const int threads = team.threads();
  std::vector<std::vector<double>> results(threads, std::vector<double>(kElements));
  std::mutex error_mutex;
  std::string error;
  int got_threads = 0;

  omp_set_dynamic(0);  // the region must get exactly team.threads() threads
#pragma omp parallel num_threads(threads)
  {
#pragma omp single
    got_threads = omp_get_num_threads();  // implicit barrier: everyone sees it below
    if (got_threads == threads) {
      // An exception must not leave the parallel region: catch it per thread. If one thread
      // fails, the others wake up with tlc::TeamAborted instead of waiting for it.
      try {
        tlc::Thread me = team.attach(omp_get_thread_num());
        std::vector<double> mine(kElements);
        for (int i = 0; i < kElements; ++i) mine[i] = value(me.rank(), i);
        me.allreduce(std::span<const double>(mine), std::span<double>(results[me.local_index()]));
      } catch (const std::exception& e) {
        std::lock_guard<std::mutex> lock(error_mutex);
        if (error.empty()) error = e.what();
      }
    }
  }
  if (got_threads != threads) {
    throw std::runtime_error("OpenMP gave " + std::to_string(got_threads) + " threads instead of " +
                             std::to_string(threads));
  }
  if (!error.empty()) throw std::runtime_error(error);
  return results;
}

}  // namespace

int main(int argc, char** argv) {
  tlc::Environment env(argc, argv);
  int world_rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
  try {
    tlc::TeamOptions opts;
    opts.threads = 2;  // threads per process, for both versions
    tlc::Team team(MPI_COMM_WORLD, opts);
    const int threads = team.threads();

    const auto old_results = master_only(threads);
    const auto new_results = with_tlc(team);

    int mismatches = 0;
    for (int t = 0; t < threads; ++t) {
      for (int i = 0; i < kElements; ++i) {
        const double want = expected(team.size(), i);
        if (old_results[t][i] != want || new_results[t][i] != want) {
          if (mismatches < 5) {
            std::fprintf(stderr,
                         "process %d thread %d element %d: master-only %g, tlc %g, expected %g\n",
                         world_rank, t, i, old_results[t][i], new_results[t][i], want);
          }
          ++mismatches;
        }
      }
    }
    int total = 0;
    MPI_Allreduce(&mismatches, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (total != 0) {
      if (world_rank == 0) std::fprintf(stderr, "%d wrong elements\n", total);
      return 1;
    }
    if (world_rank == 0) {
      std::printf("master-only and tlc agree on %d elements over %d threads (%d processes)\n",
                  kElements, team.size(), team.processes());
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "openmp_master_only_migrated failed on process %d: %s\n", world_rank,
                 e.what());
    std::fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  return 0;
}
