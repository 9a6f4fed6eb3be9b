/// @file
/// Arrival telemetry (TLC_STATS=1 or TeamOptions::stats): per collective kind, how unevenly the
/// threads of this process reached their calls and what that cost, in the metrics of Parsons
/// (docs/references.md [Parsons] ch. 3.3). For call k with arrivals a_i and exits e_i of the T
/// threads of one process (a_mean their mean):
///   delta_i = |a_i - a_mean|, delta = mean of delta_i  (mean arrival imbalance)
///   omega = max a_i - min a_i                          (worst-case arrival imbalance)
///   time in collective = mean of (e_i - a_i)
///   time after the last arrival = mean of (e_i - max a_j)
/// Nonblocking calls are counted apart: their span from start to completion and the time spent
/// waiting in it. Times are taken inside one process only (processes need not share a clock); a
/// team over several processes reports one TeamStats per process. Calls that throw are not counted.
#pragma once

#include <cstdint>
#include <vector>

#include <tlc/options.hpp>

namespace tlc {

/// The arrival telemetry of one collective kind in one process (docs/telemetry.md).
struct CollectiveStats {
  Collective collective = Collective::barrier;  ///< the kind
  std::uint64_t calls = 0;                      ///< calls recorded
  double mean_imbalance_us = 0;                 ///< delta, averaged over calls
  double mean_worst_imbalance_us = 0;           ///< omega, averaged over calls
  double max_worst_imbalance_us = 0;            ///< the largest omega of any call
  double mean_time_in_collective_us = 0;        ///< averaged over calls and threads
  double mean_after_last_arrival_us = 0;        ///< averaged over calls and threads
  /// Per local thread: calls in which it performed (part of) the inter-process step, and calls
  /// in which it arrived last.
  std::vector<std::uint64_t> led;
  std::vector<std::uint64_t> arrived_last;  ///< per local thread, see led
  /// Calls (of calls) that ran led by arrival: by the plan, by TLC_LEADERS=dynamic or, under the
  /// default leaders, because the team measured that they were faster so (docs/imbalance.md).
  std::uint64_t led_by_arrival = 0;
  /// Nonblocking calls and persistent rounds (tlc/request.hpp), counted per thread when they
  /// complete (calls above counts the blocking ones): how many, the mean time from start to
  /// completion, and the mean time of it the thread spent inside test() and wait().
  std::uint64_t nonblocking_calls = 0;
  double mean_nonblocking_span_us = 0;  ///< start to completion, averaged over threads' calls
  double mean_nonblocking_wait_us = 0;  ///< inside test() / wait(), averaged likewise
};

/// This process's arrival telemetry, by collective kind (Team::stats()).
struct TeamStats {
  bool enabled = false;  ///< false: telemetry is off and everything below is empty
  int process = 0;       ///< this process's rank in the team's communicator
  int threads = 0;       ///< threads of this process
  std::vector<CollectiveStats> collectives;  ///< kinds with at least one call, in enum order
};

}  // namespace tlc
