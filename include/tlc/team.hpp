/// @file
/// tlc::Team: the threads of one process, joined with the teams of the other processes of a
/// communicator. Construction is collective over the communicator (one call per process).
#pragma once

#include <functional>
#include <memory>

#include <mpi.h>

#include <tlc/detail/mpi_check.h>
#include <tlc/algorithms.hpp>
#include <tlc/detail/export.hpp>
#include <tlc/options.hpp>
#include <tlc/stats.hpp>
#include <tlc/thread.hpp>
#include <tlc/topology.hpp>

namespace tlc {

namespace detail {
struct TeamAccess;
}

/// The threads of one process, joined with the teams of the other processes of a communicator.
class TLC_API Team {
 public:
  /// Collective over comm: one call per process, the same options on every process where they
  /// must agree (checked).
  Team(MPI_Comm comm, TeamOptions options = {});
  ~Team();
  Team(const Team&) = delete;
  Team& operator=(const Team&) = delete;

  int threads() const noexcept;                 ///< threads of this process
  int size() const noexcept;                    ///< threads of all processes
  int process() const noexcept;                 ///< rank of this process in the communicator
  int processes() const noexcept;               ///< processes in the communicator
  int first_rank() const noexcept;              ///< global rank of this process's thread 0
  int lanes() const noexcept;                   ///< inter-process lanes
  const Placement& placement() const noexcept;  ///< where the threads and lanes are placed
  const Topology& topology() const noexcept;    ///< the machine the team is placed on
  bool aborted() const noexcept;  ///< whether a thread failed: every later run or attach throws
  /// This process's arrival telemetry (TLC_STATS=1 or TeamOptions::stats; include/tlc/stats.hpp).
  /// May be called at any time; calls still in progress are not in it yet.
  TeamStats stats() const;

  /// Runs body once on each of the team's own (pinned) threads, waits for all of them and
  /// rethrows the first exception any of them threw. After an exception the team is aborted:
  /// every later run or attach throws tlc::TeamAborted.
  void run(const std::function<void(Thread&)>& body);

  /// For applications that keep their own threads (OpenMP, TBB): the calling thread becomes
  /// participant local_index until the returned handle is destroyed. Does not change the
  /// caller's binding (use OMP_PROC_BIND / OMP_PLACES; placement() says what tlc would choose).
  /// A collective waits for all threads() participants, so they must be attached at the same
  /// time; attaching once per thread for the life of a parallel region is the cheap pattern
  /// (tlc::current_thread() then reaches the participant from anywhere on that thread).
  Thread attach(int local_index);
  /// The same, from a parallel region of region_threads threads (OpenMP: omp_get_num_threads()):
  /// a region of another size than threads() (OMP_THREAD_LIMIT, OMP_DYNAMIC, a nested region)
  /// could never complete a collective, so this throws tlc::Error (invalid_argument) at once, on
  /// every thread of the region, instead of letting the first collective wait forever.
  Thread attach(int local_index, int region_threads);

  /// The plan this team makes for such a call (the algorithm, its form, chunks, lanes, who
  /// leads, forced algorithms included) and the cost model's time of it: what
  /// tlc::select_algorithm() answers for a team shape, answered by this team's own planner. For
  /// benchmarks and tools that label their measurements; a collective never needs it.
  Selection select_algorithm(const CallQuery& call) const;

 private:
  // The library's own code reaches the implementation through this accessor
  // (src/team/team_access.hpp), which programs never see.
  friend struct detail::TeamAccess;
  std::unique_ptr<detail::TeamImpl> impl_;
};

}  // namespace tlc
