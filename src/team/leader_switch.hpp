// Leaders by arrival chosen from measured times (TLC_LEADERS=auto): one of the parts a TeamImpl
// owns. The planner leads a collective by arrival where that is no slower with balanced
// arrivals (Planner::led_by_arrival); where it chose static leaders for a large call that an
// arrival-led algorithm could also serve, this part watches how the calls of that class
// (collective, power of two of the block size) actually go and switches them to the arrival-led
// plan while that is measured faster. docs/design.md, "Leaders chosen from measured times".
//
// What is measured, per class: every thread's time in the collective (exit - own arrival),
// summed per plan (static, by arrival); and, by local thread 0 in static calls, the threads'
// mean wait for the last of them (from the arrival stamps), the part of a static call that
// leading by arrival can save.
//
// Who decides: local thread 0 of every process, after its part of a call of the class, at the
// end of a phase; the processes first add up their sums in one small allreduce on a
// communicator of its own (their MPI steps pair, so they must choose alike), then each applies
// the same rule to the same numbers. Phases, in class calls (their lengths and thresholds are the
// constants at the top of leader_switch.cpp):
//   static: checked every few calls; if the threads waited for the last arrival for a visible
//     share of their time, and more than when the last trial lost or after a back-off, try;
//   trying by arrival: one call unmeasured (it may still grow buffers), then a few measured;
//     kept if their mean is clearly under the static mean of the last few static calls, else
//     back to static with a longer back-off;
//   by arrival: a run that doubles while it keeps winning, then
//   trying static again: back to static if that is clearly faster than the last arrival-led
//     calls.
// So balanced arrivals cost the stamps and one allreduce of six numbers per check, and a
// lasting imbalance a few static calls per long run.
//
// How every thread agrees: a decision taken in call d (team call numbers, the same in every
// thread and process) takes effect from call d + 3. A thread planning call m has seen local
// thread 0 finish its call m - 3: it has begun calls up to m - 1, each of which began only once
// thread 0 had begun (a static call) or finished contributing to (a call led by arrival) the
// call before. Each class keeps two entries (effective call, plan), written by thread 0 into
// the older one; decisions are at least 3 calls apart, so no thread still reads the entry that
// is overwritten.
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>

#include <tlc/options.hpp>

#include "select/collective_traits.hpp"  // collective_count

namespace tlc::detail {

class ProcessComm;

class LeaderSwitch {
 public:
  // Blocks of at least this many bytes per rank may switch. Smaller calls are short enough that
  // a window of a few calls measures mostly the machine's noise (and the allreduce that agrees
  // would be a visible share of them): they keep the planner's measured ranges.
  static constexpr int min_power = 20;
  static constexpr std::size_t min_bytes = std::size_t{1} << min_power;
  // Powers of two from min_bytes; larger blocks share the last.
  static constexpr int size_classes = 16;

  // `comm`: a communicator of the processes for the agreement (null: the switch is off);
  // `report`: say on stderr when a class changes plans (TLC_VERBOSE=1, on one process).
  void prepare(int threads, ProcessComm* comm, bool report);
  bool enabled() const noexcept { return comm_ != nullptr; }

  // The class of a call whose blocks are `bytes` (at least min_bytes).
  static int class_of(Collective c, std::size_t bytes) noexcept;

  // Whether team call number `call` of class `cls` is led by arrival. The same answer in every
  // thread of every process.
  bool led_by_arrival(int cls, std::uint64_t call) const noexcept;

  // Thread me arrives at call number `call` of a switchable class (before its begin step).
  void arrive(int me, std::uint64_t call) noexcept;
  // Thread me leaves that call, which ran led by arrival or not.
  void exit(int me, int cls, bool by_arrival) noexcept;
  // Local thread 0, after exit(): counts the call and decides at the end of a phase (an
  // allreduce with the other processes' thread 0).
  void after_call(int cls, std::uint64_t call, bool by_arrival);

 private:
  static constexpr int class_count = static_cast<int>(collective_count) * size_classes;

  struct Entry {
    // (effective call << 1) | led by arrival; one word so that a reader never sees half of one.
    std::atomic<std::uint64_t> word{0};
  };
  struct Mode {
    Entry entries[2];
  };
  // A thread's own sums, per class and plan (0 static, 1 by arrival): single writer, read by
  // local thread 0 at a decision.
  struct Sums {
    std::atomic<std::uint64_t> ns{0};
    std::atomic<std::uint64_t> calls{0};
  };
  struct alignas(64) ThreadState {
    std::array<std::atomic<std::int64_t>, 4> arrived_ns{};  // by call number mod 4
    std::int64_t arrived_here = 0;                          // this call's, for exit()
    std::unique_ptr<Sums[]> sums;                           // class_count * 2
  };
  // Local thread 0's own bookkeeping of a class.
  struct Phase {
    enum Kind : std::uint8_t { static_plan, trying_arrival, by_arrival, trying_static };
    Kind kind = static_plan;
    std::uint32_t calls = 0;  // calls of this phase's plan so far
    // Calls of this phase's plan before the next decision (prepare sets the first phase's).
    std::uint32_t length = 0;
    std::uint32_t measure_from = 0;      // calls after which the measured ones begin
    std::uint32_t arrival_length = 128;  // of the current phase by arrival
    // Back-off of the trials by arrival that lost: static calls since the last trial, how many
    // must pass before the next one (unless the waits grew), and the waits' share then.
    std::uint32_t static_since_trial = 0, retry_after = 16;
    double lost_wait_share = 0, trial_wait_share = 0;
    std::uint64_t last_decision = 0;
    bool settled_by_arrival = false;  // the plan of the last phase that was not a trial
    double wait_ns = 0;  // sum over static calls of the threads' mean wait for the last
    std::uint64_t waited_calls = 0;
    double other_mean_ns = 0;    // the mean of the plan a trial is measured against
    double seen_ns[2] = {0, 0};  // the threads' sums (ns, calls) when last read (read_sums)
    double seen_calls[2] = {0, 0};
  };

  bool by_arrival_phase(const Phase& p) const noexcept {
    return p.kind == Phase::trying_arrival || p.kind == Phase::by_arrival;
  }
  void decide(int cls, std::uint64_t call, Phase& p);
  // The threads' sums of class cls since the last read (ns and calls, static then by arrival).
  std::array<double, 4> read_sums(int cls, Phase& p) const noexcept;

  ProcessComm* comm_ = nullptr;
  bool report_ = false;
  int threads_ = 0;
  std::unique_ptr<Mode[]> modes_;
  std::unique_ptr<ThreadState[]> threads_state_;
  std::unique_ptr<Phase[]> phases_;  // local thread 0 only
};

}  // namespace tlc::detail
