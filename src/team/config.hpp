// The team's configuration: TeamOptions, with the TLC_* environment variables filling in what
// the program leaves unset. This is the one place that reads the environment (docs/design.md
// section 10); garbage in a variable is an error, not a silent default.
#pragma once

#include <cstddef>
#include <optional>

#include <tlc/options.hpp>
#include <tlc/topology.hpp>

#include "select/planner.hpp"

namespace tlc::detail {

// Which calls across processes compare their signatures first (TLC_CHECK, algo/validation.cpp).
enum class CheckPolicy : unsigned char {
  none,         // TLC_CHECK=0
  large_calls,  // unset, in a build with NDEBUG: calls whose block is check_from_bytes or more
  every_call,   // TLC_CHECK=1, or unset in a build with assertions
};

// The block size (bytes of one rank's block, as CallDescriptor::count) from which a call is
// compared across processes by default: where the comparison costs a small part of the call
// (docs/reliability.md, "What TLC_CHECK costs"). Only a size every process computes alike may
// decide it (v-variants, whose counts differ by rank, are compared with TLC_CHECK=1 only). On
// an oversubscribed node the threads that wait for the comparison give up their cores and are
// woken late, which costs a call far more: there only the largest calls are compared.
inline constexpr std::size_t check_from_bytes = std::size_t{1} << 20;
inline constexpr std::size_t check_from_bytes_oversubscribed = std::size_t{16} << 20;

struct Config {
  PlacementRequest placement;  // TLC_THREADS, TLC_LANES (pin is decided with the topology)
  std::optional<bool> pin;     // TLC_PIN; unset: pin when every thread fits on a PU
  // TLC_NODE: true for 'process', false for 'node'; unset: found out (several processes on a
  // node make each a node of its own, said once on stderr).
  std::optional<bool> node_is_process;
  int region_threads = 0;                // TeamOptions::region_threads
  double timeout_seconds = 0;            // TLC_TIMEOUT; 0: wait forever
  double suspect_seconds = 0.5;          // TLC_SUSPECT_MS; 0: long waits not compared
  double silent_seconds = 30;            // TLC_SILENT; 0: no process is ever silent
  bool timeout_aborts_job = false;       // TLC_TIMEOUT_ACTION=abort: MPI_Abort instead of Error
  std::size_t pipeline_chunk_asked = 0;  // TLC_PIPELINE_CHUNK; 0: not asked for
  bool stats = false;                    // TeamOptions::stats, else TLC_STATS
  CheckPolicy check = CheckPolicy::large_calls;  // TeamOptions::check, else TLC_CHECK
  bool stats_report = false;     // on, and TLC_STATS=1: print the table at team destruction
  int max_requests = 1024;       // TeamOptions::max_requests, else TLC_MAX_REQUESTS
  bool progress_thread = false;  // TeamOptions::progress, else TLC_PROGRESS: "thread"
  // TLC_ALGO_<COLLECTIVE>, TLC_FALLBACK, TLC_VERBOSE, TLC_COST_*. The team fills in the chunk
  // and whether movers pipeline once the processes have agreed on them.
  PlanSettings plan;

  // Throws Error(invalid_argument) for an unusable option or variable.
  static Config read(const TeamOptions& options);
};

}  // namespace tlc::detail
