/// @file
/// Team construction options. Every field has a sensible default; environment variables fill in
/// what the program leaves unset (TLC_THREADS, TLC_LANES, TLC_PIN, TLC_TIMEOUT, TLC_PIPELINE_CHUNK,
/// TLC_TIMEOUT_ACTION, TLC_ALGO_*, TLC_FALLBACK, TLC_LEADERS, TLC_CHECK, TLC_STATS, TLC_TUNING,
/// TLC_COST_*; read in src/team/config.cpp).
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <string>

#include <tlc/detail/export.hpp>
#include <tlc/topology.hpp>

namespace tlc {

/// The collectives, for options, tables and statistics.
enum class Collective {
  barrier,
  bcast,
  reduce,
  allreduce,
  allgather,
  allgatherv,
  gather,
  gatherv,
  scatter,
  scatterv,
  alltoall,
  alltoallv,
  reduce_scatter_block,
  scan,
  exscan,
};

/// The collective's name: "barrier", "bcast", ..., as TLC_ALGO_<COLLECTIVE> spells it in lower
/// case.
TLC_API const char* to_string(Collective c) noexcept;

/// How a tlc::Team is built and runs. Every field has an "unset" value that lets the matching
/// TLC_* environment variable decide, and then the default.
struct TeamOptions {
  /// Threads in this process; 0: TLC_THREADS, else region_threads, else one per allowed core.
  int threads = 0;
  /// The size of the application's parallel regions that will attach to the team (OpenMP:
  /// omp_get_max_threads(), which tlc::openmp::team_options() fills in; 0: none). It sizes the
  /// team when neither `threads` nor TLC_THREADS does; when they ask for another size, team
  /// construction says so on stderr, since such regions cannot attach.
  int region_threads = 0;
  int threads_per_numa = 0;  ///< 0: spread evenly over NUMA domains
  int lanes = 0;  ///< inter-process lanes; 0: TLC_LANES, else threads_per_rail * rails, else 1
  int threads_per_rail = 0;  ///< lane threads per network rail
  /// Bind threads to cores. true: pin, and a plan that cannot be pinned (more threads than PUs)
  /// is an error; false: never pin; unset: TLC_PIN, else pin when every thread fits on a PU.
  std::optional<bool> pin;
  /// Bitwise reproducible results for a fixed team shape (fixed combination order). Turning it
  /// off lets arrival order decide where the op is inexact (floating point).
  bool reproducible = true;
  /// Turns a hang into tlc::Error(timeout) naming the missing participants; 0: TLC_TIMEOUT, else
  /// wait forever.
  double timeout_seconds = 0;
  /// What an expired time-out does: "error" throws tlc::Error(timeout) on the threads that waited;
  /// "abort" prints the same message and ends the whole job with MPI_Abort (for jobs that must
  /// not linger). "": TLC_TIMEOUT_ACTION, else "error".
  std::string timeout_action;
  /// A wait between processes that lasts longer than this many milliseconds is compared with the
  /// other processes' waits on the team's notes: where another process waits in the same call
  /// number for a different call, left the team before the call, or every process waits and
  /// their calls differ, every thread of every process gets an error naming both calls instead
  /// of hanging. A process that is only late is waited for (docs/reliability.md). Calls that
  /// complete sooner cost nothing. 0 turns the comparison off; unset: TLC_SUSPECT_MS, else 500.
  std::optional<int> suspect_ms;
  /// In such a long wait, another process that has not answered for this many seconds is
  /// silent (stopped, or hung where tlc's watch thread cannot run), and the wait ends with an
  /// error; a process that is alive answers within a fraction of a second, also while it
  /// computes outside tlc (docs/reliability.md). 0 turns this off; unset: TLC_SILENT, else 30.
  std::optional<double> silent_seconds;
  /// The machine; unset: Topology::detect().
  std::optional<Topology> topology;
  /// Chunk of the pipelined collectives across processes (bcast, reduce, allreduce, scan,
  /// exscan of at least two chunks per rank; allgather, gather, scatter, alltoall,
  /// reduce_scatter_block whose rank blocks together hold two chunks per lane): the intra-process
  /// phases of one chunk overlap the network phase of the previous one. Bytes per lane, 4 KiB to 1
  /// GiB; the same on every process. 0: TLC_PIPELINE_CHUNK, else 1 MiB, and then bcast, allgather,
  /// gather, scatter, alltoall and reduce_scatter_block pipeline only where no node is
  /// oversubscribed (measured: without cores to spare they lose).
  std::size_t pipeline_chunk_bytes = 0;
  /// Forces an algorithm per collective, optionally in one form: "full_lane", "full_lane:pipelined"
  /// (same syntax as TLC_ALGO_<COLLECTIVE>; the option wins; `tlc-info --algorithms` lists them).
  std::map<Collective, std::string> algorithms;
  /// What a forced choice that cannot serve a call does: "plan" runs the planner's own choice for
  /// that call (said once per collective on stderr with TLC_VERBOSE=1), "error" makes the call
  /// fail with tlc::Error on every thread. "": TLC_FALLBACK, else "plan".
  std::string fallback;
  /// Who leads the collectives that have an algorithm led by arrival (bcast, scatter, reduce,
  /// allreduce, reduce_scatter_block, scan, exscan, alltoall): "static" (thread 0, or the lane
  /// threads), "dynamic" (the first to arrive in a process receives a bcast or scatter, the last
  /// to arrive combines a reduce, threads that need nothing from later ones leave at once, blocks
  /// move as their owners arrive; docs/imbalance.md), or "auto": the plan leads by arrival
  /// across processes with several threads where that was measured no slower with balanced
  /// arrivals (by collective and size), static elsewhere, and calls with static leaders and
  /// blocks of 1 MiB or more switch to leaders by arrival while the team measures that faster
  /// (docs/imbalance.md). A forced algorithm (algorithms, TLC_ALGO_*) wins. "": TLC_LEADERS,
  /// else "auto".
  std::string leaders;
  /// true: every call across processes first compares, between the processes, what it is
  /// (collective, element type, op, the bytes of an op object whose type has operator==, root,
  /// count per rank, the counts of a v-variant) and fails with tlc::Error (mismatch) on every
  /// thread of every process, naming the process that differs, before any data moves. One small
  /// MPI_Allgather and one release step per call (docs/reliability.md). false: no call is
  /// compared. Must be the same on every process. Unset: TLC_CHECK, else every call in a build of
  /// tlc with assertions (no NDEBUG, CMAKE_BUILD_TYPE=Debug) and, in other builds, the calls
  /// whose block per rank is 1 MiB or more (16 MiB where a node is known oversubscribed; not
  /// v-variants), where the comparison costs a small part of the call.
  std::optional<bool> check;
  /// Arrival telemetry (include/tlc/stats.hpp, Team::stats()): unset: TLC_STATS, else off. With
  /// TLC_STATS=1, process 0 also prints every process's table on stderr when the team is
  /// destroyed.
  std::optional<bool> stats;
  /// How many nonblocking calls (and started persistent calls) each thread may have in progress
  /// at once; starting one more throws tlc::Error (invalid_argument). 0: TLC_MAX_REQUESTS, else
  /// 1024.
  int max_requests = 0;
  /// Who advances nonblocking calls between processes while no thread of the team is inside tlc:
  /// "none" (MPI's own progress, and every start, test and wait of the team), or "thread": a
  /// thread of the team's own tests the calls in flight until they complete, for programs that
  /// compute for long without calling tlc (it takes a core's share while calls are in flight;
  /// docs/design.md section 14). "": TLC_PROGRESS, else "none".
  std::string progress;
  /// The cost model's parameters, from a tuning file of `key = value` lines (alpha_us, lane_gbs,
  /// reduce_gbs, sync_us, memory_gbs, cache_gbs, cache_mib, call_us, lane_parallelism; `#`
  /// comments), as `tlc-calibrate` writes it (docs/model.md). Keys the file leaves out
  /// keep the built-in defaults; a TLC_COST_<KEY> variable (TLC_COST_ALPHA_US, ...) overrides its
  /// key over the file. An unreadable file, an unknown key or a value that is not a positive
  /// number is tlc::Error (invalid_argument) naming the file, line and key, at team construction.
  /// The plan depends on it, so it must be the same on every process (checked). "": TLC_TUNING,
  /// else no file.
  std::string tuning_file;
};

}  // namespace tlc
