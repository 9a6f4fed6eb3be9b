// The arrival telemetry of a team (TLC_STATS=1, TeamOptions::stats; the metrics of
// include/tlc/stats.hpp after Parsons [Parsons] ch. 3.3): one of the parts a TeamImpl owns.
// Each thread stamps its arrival before it announces a call and, after the call, adds its own
// figures to its own counters: nothing is shared between writers, so a counted call costs two
// clock reads and one pass over T stamps, and the uncounted path nothing but a branch.
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <tlc/options.hpp>
#include <tlc/stats.hpp>

#include "select/planner.hpp"  // collective_count

namespace tlc::detail {

// A thread's telemetry of one collective kind. Single writer (the thread), read by
// Team::stats() at any time: relaxed atomics, no read-modify-write.
struct StatsCounters {
  std::atomic<std::uint64_t> calls{0};
  std::atomic<std::uint64_t> in_ns{0};       // sum of exit - own arrival
  std::atomic<std::uint64_t> after_ns{0};    // sum of exit - last arrival in the process
  std::atomic<std::uint64_t> led{0};         // calls in which this thread ran an inter-process step
  std::atomic<std::uint64_t> by_arrival{0};  // calls that ran led by arrival
  std::atomic<std::uint64_t> last{0};        // calls in which this thread arrived last
  // Local thread 0 only, once per call for the whole process, in the calls it left after every
  // thread had arrived (all calls, except those led by arrival that it left early):
  std::atomic<std::uint64_t> measured{0};      // such calls
  std::atomic<std::uint64_t> delta_ns{0};      // sum of mean |a_i - mean a|
  std::atomic<std::uint64_t> omega_ns{0};      // sum of max a - min a
  std::atomic<std::uint64_t> omega_max_ns{0};  // largest max a - min a
  // Nonblocking calls and persistent rounds of this thread.
  std::atomic<std::uint64_t> posted{0};
  std::atomic<std::uint64_t> posted_span_ns{0};  // sum of completion - start
  std::atomic<std::uint64_t> posted_wait_ns{0};  // sum of the time inside test() and wait()
};

class Telemetry {
 public:
  // Counts when `enabled`; a team of `threads` threads here.
  void prepare(int threads, bool enabled);
  bool enabled() const noexcept { return enabled_; }

  // Thread me is about to announce its call number `call`.
  void arrive(int me, std::uint64_t call) noexcept;
  // Thread me performs (part of) the inter-process step of its current call.
  void mark_led(int me) noexcept { of(me).led = true; }
  // Thread me's current call runs led by arrival.
  void mark_by_arrival(int me) noexcept { of(me).by_arrival = true; }
  // Thread me leaves its call number `call` of kind c; `all_arrived`: every thread of the
  // process has announced it (a call led by arrival may be left before: then this thread
  // spent no time after the last arrival and cannot see the spread of the arrivals).
  void exit(int me, Collective c, std::uint64_t call, bool all_arrived) noexcept;

  // Thread me completed a nonblocking call (or persistent round) of kind c, started span_ns
  // ago, having spent wait_ns of that inside test() and wait().
  void posted_done(int me, Collective c, std::int64_t span_ns, std::int64_t wait_ns) noexcept;
  static std::int64_t now() noexcept;

  // The counters so far, of this process (`process`).
  TeamStats stats(int process) const;
  // One process's stats as numbers (for the gather to process 0), and the table of every
  // process's numbers on stderr.
  static std::vector<double> flatten(const TeamStats& s);
  static void print(const std::vector<std::vector<double>>& processes);

 private:
  // Three arrival stamps, not two: after a call led by arrival, a thread that left early may
  // take its stamp of call k+2 (before waiting for call k+1 to be complete) while a thread that
  // left call k last still reads the stamps of call k.
  struct alignas(64) PerThread {  // a cache line apart: one writer each
    std::int64_t arrival_ns[3] = {0, 0, 0};
    bool led = false;
    bool by_arrival = false;
    std::array<StatsCounters, collective_count> counters{};
  };
  PerThread& of(int t) noexcept { return threads_[static_cast<std::size_t>(t)]; }
  const PerThread& of(int t) const noexcept { return threads_[static_cast<std::size_t>(t)]; }

  bool enabled_ = false;
  int count_ = 0;
  std::unique_ptr<PerThread[]> threads_;
};

}  // namespace tlc::detail
