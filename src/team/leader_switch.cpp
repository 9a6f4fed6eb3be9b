// Leaders by arrival chosen from measured times (team/leader_switch.hpp).
#include <algorithm>
#include <array>
#include <bit>
#include <cstdio>

#include "inter/process_comm.hpp"
#include "team/leader_switch.hpp"
#include "team/telemetry.hpp"

namespace tlc::detail {

namespace {

// The rule's numbers (team/leader_switch.hpp says what they do; docs/design.md why).
constexpr double wait_share_to_try = 0.03;  // waiting for the last arrival, of the static time
constexpr double faster_enough = 0.9;       // a trial wins under this share of the other's mean
constexpr std::uint32_t first_look = 2, static_calls = 16, arrival_calls = 128,
                        longest_phase = 1024;
// A trial runs warm_up calls of the other plan unmeasured (its first call may still grow
// buffers), then `window` measured ones; the plan it is compared with is measured over the last
// `window` calls of its phase, so that both were measured under the same arrivals.
constexpr std::uint32_t warm_up = 1, window = 4;
constexpr std::uint64_t decision_distance = 3;  // calls from a decision to its effect

std::uint64_t entry_word(std::uint64_t effective, bool by_arrival) noexcept {
  return (effective << 1) | (by_arrival ? 1u : 0u);
}

}  // namespace

void LeaderSwitch::prepare(int threads, ProcessComm* comm, bool report) {
  comm_ = comm;
  report_ = report;
  threads_ = threads;
  if (!comm_) return;
  modes_ = std::make_unique<Mode[]>(class_count);
  threads_state_ = std::make_unique<ThreadState[]>(static_cast<std::size_t>(threads));
  for (int t = 0; t < threads; ++t)
    threads_state_[static_cast<std::size_t>(t)].sums = std::make_unique<Sums[]>(class_count * 2);
  phases_ = std::make_unique<Phase[]>(class_count);
  // A class's first call may grow buffers and touch fresh memory, as a trial's first call may:
  // measured, it made the static plan look slow enough that balanced calls switched (and ran
  // led by arrival, slower, for a whole phase). The first look measures after it.
  for (int c = 0; c < class_count; ++c) {
    phases_[c].length = warm_up + first_look;
    phases_[c].measure_from = warm_up;
  }
}

int LeaderSwitch::class_of(Collective c, std::size_t bytes) noexcept {
  const int power = std::bit_width(bytes) - 1;  // at least min_power
  const int size = std::clamp(power - min_power, 0, size_classes - 1);
  return static_cast<int>(c) * size_classes + size;
}

bool LeaderSwitch::led_by_arrival(int cls, std::uint64_t call) const noexcept {
  const Mode& m = modes_[static_cast<std::size_t>(cls)];
  const std::uint64_t a = m.entries[0].word.load(std::memory_order_acquire);
  const std::uint64_t b = m.entries[1].word.load(std::memory_order_acquire);
  // The entry in effect: the later of those whose effective call has come.
  const bool a_in = (a >> 1) <= call, b_in = (b >> 1) <= call;
  const std::uint64_t in = a_in && b_in ? std::max(a, b) : a_in ? a : b;
  return (in & 1u) != 0;
}

void LeaderSwitch::arrive(int me, std::uint64_t call) noexcept {
  ThreadState& t = threads_state_[static_cast<std::size_t>(me)];
  t.arrived_here = Telemetry::now();
  t.arrived_ns[call % 4].store(t.arrived_here, std::memory_order_relaxed);
}

void LeaderSwitch::exit(int me, int cls, bool by_arrival) noexcept {
  ThreadState& t = threads_state_[static_cast<std::size_t>(me)];
  Sums& s = t.sums[static_cast<std::size_t>(cls) * 2 + (by_arrival ? 1 : 0)];
  // Single writer: a load and a store, no read-modify-write.
  const auto took = std::max<std::int64_t>(0, Telemetry::now() - t.arrived_here);
  s.ns.store(s.ns.load(std::memory_order_relaxed) + static_cast<std::uint64_t>(took),
             std::memory_order_relaxed);
  s.calls.store(s.calls.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
}

void LeaderSwitch::after_call(int cls, std::uint64_t call, bool by_arrival) {
  Phase& p = phases_[static_cast<std::size_t>(cls)];
  if (!by_arrival) {
    // Every thread has begun this static call (thread 0 took its begin step): their stamps are
    // written, and none is overwritten before thread 0 has begun call + 1.
    std::int64_t last = 0;
    double sum = 0;
    for (int t = 0; t < threads_; ++t) {
      const std::int64_t a = threads_state_[static_cast<std::size_t>(t)].arrived_ns[call % 4].load(
          std::memory_order_relaxed);
      last = std::max(last, a);
      sum += static_cast<double>(a);
    }
    p.wait_ns += static_cast<double>(last) - sum / threads_;
    ++p.waited_calls;
  }
  if (by_arrival != by_arrival_phase(p)) return;
  ++p.calls;
  if (p.calls == p.measure_from) {
    read_sums(cls, p);
    if (p.last_decision == 0) {  // the first look: the warm-up call's wait does not count either
      p.wait_ns = 0;
      p.waited_calls = 0;
    }
  }
  if (p.calls < p.length || call < p.last_decision + decision_distance) return;
  decide(cls, call, p);
}

std::array<double, 4> LeaderSwitch::read_sums(int cls, Phase& p) const noexcept {
  std::array<double, 4> since{};
  for (int plan = 0; plan < 2; ++plan) {
    double ns = 0, calls = 0;
    for (int t = 0; t < threads_; ++t) {
      const Sums& s = threads_state_[static_cast<std::size_t>(t)]
                          .sums[static_cast<std::size_t>(cls) * 2 + static_cast<std::size_t>(plan)];
      ns += static_cast<double>(s.ns.load(std::memory_order_relaxed));
      calls += static_cast<double>(s.calls.load(std::memory_order_relaxed));
    }
    since[static_cast<std::size_t>(plan) * 2] = ns - p.seen_ns[plan];
    since[static_cast<std::size_t>(plan) * 2 + 1] = calls - p.seen_calls[plan];
    p.seen_ns[plan] = ns;
    p.seen_calls[plan] = calls;
  }
  return since;
}

void LeaderSwitch::decide(int cls, std::uint64_t call, Phase& p) {
  // This process's sums over the phase's measured calls, then every process's.
  std::array<double, 6> v{};
  const std::array<double, 4> since = read_sums(cls, p);
  std::copy(since.begin(), since.end(), v.begin());
  v[4] = p.wait_ns;
  v[5] = static_cast<double>(p.waited_calls);
  p.wait_ns = 0;
  p.waited_calls = 0;
  comm_->sum_in_place(v);
  // From here on every process computes the same from the same numbers.
  const auto mean = [](double ns, double calls) { return calls > 0 ? ns / calls : 0.0; };
  const double static_mean = mean(v[0], v[1]), arrival_mean = mean(v[2], v[3]);
  const double wait_mean = mean(v[4], v[5]);
  const auto longer = [](std::uint32_t n) { return std::min(2 * n, longest_phase); };
  const double wait_share = static_mean > 0 ? wait_mean / static_mean : 0.0;
  switch (p.kind) {
    case Phase::static_plan:
      p.static_since_trial += p.calls;
      // Waits worth trying for: enough of the call, and either more than when the last trial
      // lost or the back-off since then served.
      if (wait_share >= wait_share_to_try &&
          (wait_share >= 1.5 * p.lost_wait_share || p.static_since_trial >= p.retry_after)) {
        p.kind = Phase::trying_arrival;
        p.other_mean_ns = static_mean;
        p.trial_wait_share = wait_share;
        p.length = warm_up + window;
      } else {
        p.length = static_calls;
      }
      break;
    case Phase::trying_arrival:
      p.static_since_trial = 0;
      if (arrival_mean > 0 && arrival_mean < faster_enough * p.other_mean_ns) {
        p.kind = Phase::by_arrival;
        p.length = p.arrival_length = arrival_calls;
        p.retry_after = static_calls;
        p.lost_wait_share = 0;
      } else {
        p.kind = Phase::static_plan;
        p.length = static_calls;
        p.retry_after = longer(p.retry_after);
        p.lost_wait_share = p.trial_wait_share;
      }
      break;
    case Phase::by_arrival:
      p.kind = Phase::trying_static;
      p.other_mean_ns = arrival_mean;
      p.length = window;  // static buffers are warm: no call unmeasured
      break;
    case Phase::trying_static:
      if (static_mean > 0 && static_mean < faster_enough * p.other_mean_ns) {
        p.kind = Phase::static_plan;
        p.length = static_calls;
      } else {
        p.kind = Phase::by_arrival;
        p.arrival_length = longer(p.arrival_length);
        p.length = p.arrival_length;
      }
      break;
  }
  const bool settled = p.kind == Phase::static_plan || p.kind == Phase::by_arrival;
  if (report_ && settled && (p.kind == Phase::by_arrival) != p.settled_by_arrival)
    std::fprintf(stderr,
                 "tlc: %s with blocks from %zu KiB (below twice that) now %s (measured over the "
                 "last calls: "
                 "%.0f us static, %.0f us by arrival)\n",
                 to_string(static_cast<Collective>(cls / size_classes)),
                 (min_bytes >> 10) << (cls % size_classes),
                 p.kind == Phase::by_arrival ? "led by arrival" : "with static leaders",
                 (p.kind == Phase::by_arrival ? p.other_mean_ns : static_mean) / 1e3,
                 (p.kind == Phase::by_arrival ? arrival_mean : p.other_mean_ns) / 1e3);
  if (settled) p.settled_by_arrival = p.kind == Phase::by_arrival;
  p.calls = 0;
  p.measure_from = p.kind == Phase::trying_arrival  ? warm_up
                   : p.kind == Phase::trying_static ? 0
                                                    : p.length - std::min(p.length, window);
  p.last_decision = call;
  // Into the older entry: no thread reads it any more (team/leader_switch.hpp).
  Mode& m = modes_[static_cast<std::size_t>(cls)];
  const std::uint64_t a = m.entries[0].word.load(std::memory_order_relaxed);
  const std::uint64_t b = m.entries[1].word.load(std::memory_order_relaxed);
  Entry& older = (a >> 1) <= (b >> 1) ? m.entries[0] : m.entries[1];
  older.word.store(entry_word(call + decision_distance, by_arrival_phase(p)),
                   std::memory_order_release);
}

}  // namespace tlc::detail
