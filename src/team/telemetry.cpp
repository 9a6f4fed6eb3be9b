// The arrival telemetry of a team (team/telemetry.hpp).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>
#include <memory>
#include <string>

#include "team/telemetry.hpp"

namespace tlc::detail {

namespace {

std::int64_t now_ns() noexcept {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// Single writer: a load and a store, no read-modify-write.
void add(std::atomic<std::uint64_t>& counter, std::uint64_t v) noexcept {
  counter.store(counter.load(std::memory_order_relaxed) + v, std::memory_order_relaxed);
}

std::uint64_t read(const std::atomic<std::uint64_t>& counter) noexcept {
  return counter.load(std::memory_order_relaxed);
}

}  // namespace

void Telemetry::prepare(int threads, bool enabled) {
  enabled_ = enabled;
  count_ = threads;
  threads_ = std::make_unique<PerThread[]>(static_cast<std::size_t>(threads));
}

void Telemetry::arrive(int me, std::uint64_t call) noexcept {
  PerThread& s = of(me);
  s.arrival_ns[call % 3] = now_ns();
  s.led = false;
  s.by_arrival = false;
}

std::int64_t Telemetry::now() noexcept { return now_ns(); }

void Telemetry::posted_done(int me, Collective c, std::int64_t span_ns,
                            std::int64_t wait_ns) noexcept {
  StatsCounters& k = of(me).counters[static_cast<std::size_t>(c)];
  add(k.posted, 1);
  add(k.posted_span_ns, static_cast<std::uint64_t>(std::max<std::int64_t>(0, span_ns)));
  add(k.posted_wait_ns, static_cast<std::uint64_t>(std::max<std::int64_t>(0, wait_ns)));
}

void Telemetry::exit(int me, Collective c, std::uint64_t call, bool all_arrived) noexcept {
  const std::int64_t exit = now_ns();
  PerThread& s = of(me);
  const std::size_t stamp = call % 3;
  StatsCounters& k = s.counters[static_cast<std::size_t>(c)];
  add(k.calls, 1);
  add(k.in_ns, static_cast<std::uint64_t>(std::max<std::int64_t>(0, exit - s.arrival_ns[stamp])));
  if (s.led) add(k.led, 1);
  if (s.by_arrival) add(k.by_arrival, 1);
  if (!all_arrived) return;
  std::int64_t first = std::numeric_limits<std::int64_t>::max();
  std::int64_t last = std::numeric_limits<std::int64_t>::min();
  int last_thread = 0;
  double sum = 0;
  for (int t = 0; t < count_; ++t) {
    const std::int64_t a = of(t).arrival_ns[stamp];
    first = std::min(first, a);
    if (a > last) {
      last = a;
      last_thread = t;
    }
    sum += static_cast<double>(a);
  }
  add(k.after_ns, static_cast<std::uint64_t>(std::max<std::int64_t>(0, exit - last)));
  if (last_thread == me) add(k.last, 1);
  if (me != 0) return;
  add(k.measured, 1);
  const double mean = sum / count_;
  double delta = 0;
  for (int t = 0; t < count_; ++t)
    delta += std::fabs(static_cast<double>(of(t).arrival_ns[stamp]) - mean);
  add(k.delta_ns, static_cast<std::uint64_t>(delta / count_));
  const auto omega = static_cast<std::uint64_t>(last - first);
  add(k.omega_ns, omega);
  if (omega > read(k.omega_max_ns)) k.omega_max_ns.store(omega, std::memory_order_relaxed);
}

TeamStats Telemetry::stats(int process) const {
  TeamStats all;
  all.enabled = enabled_;
  all.process = process;
  all.threads = count_;
  if (!enabled_) return all;
  const auto T = static_cast<std::size_t>(count_);
  for (std::size_t c = 0; c < collective_count; ++c) {
    const StatsCounters& lead = threads_[0].counters[c];
    const std::uint64_t calls = read(lead.calls);
    std::uint64_t posted = 0, span_ns = 0, wait_ns = 0;
    for (std::size_t t = 0; t < T; ++t) {
      const StatsCounters& mine = threads_[t].counters[c];
      posted += read(mine.posted);
      span_ns += read(mine.posted_span_ns);
      wait_ns += read(mine.posted_wait_ns);
    }
    if (calls == 0 && posted == 0) continue;
    CollectiveStats k;
    k.collective = static_cast<Collective>(c);
    k.calls = calls;
    const double measured = static_cast<double>(std::max<std::uint64_t>(1, read(lead.measured)));
    k.mean_imbalance_us = 1e-3 * static_cast<double>(read(lead.delta_ns)) / measured;
    k.mean_worst_imbalance_us = 1e-3 * static_cast<double>(read(lead.omega_ns)) / measured;
    k.max_worst_imbalance_us = 1e-3 * static_cast<double>(read(lead.omega_max_ns));
    std::uint64_t thread_calls = 0, in_ns = 0, after_ns = 0;
    k.led.resize(T);
    k.arrived_last.resize(T);
    k.led_by_arrival = read(threads_[0].counters[c].by_arrival);
    for (std::size_t t = 0; t < T; ++t) {
      const StatsCounters& mine = threads_[t].counters[c];
      thread_calls += read(mine.calls);
      in_ns += read(mine.in_ns);
      after_ns += read(mine.after_ns);
      k.led[t] = read(mine.led);
      k.arrived_last[t] = read(mine.last);
    }
    const double per = thread_calls ? 1e-3 / static_cast<double>(thread_calls) : 0;
    k.mean_time_in_collective_us = static_cast<double>(in_ns) * per;
    k.mean_after_last_arrival_us = static_cast<double>(after_ns) * per;
    k.nonblocking_calls = posted / std::max<std::uint64_t>(1, T);
    const double per_posted = posted ? 1e-3 / static_cast<double>(posted) : 0;
    k.mean_nonblocking_span_us = static_cast<double>(span_ns) * per_posted;
    k.mean_nonblocking_wait_us = static_cast<double>(wait_ns) * per_posted;
    all.collectives.push_back(std::move(k));
  }
  return all;
}

// Threads, then per kind with calls: kind, calls, the five times, the three nonblocking
// figures, led and arrived_last per thread.
std::vector<double> Telemetry::flatten(const TeamStats& s) {
  std::vector<double> v{static_cast<double>(s.threads)};
  for (const CollectiveStats& k : s.collectives) {
    v.insert(v.end(),
             {static_cast<double>(k.collective), static_cast<double>(k.calls), k.mean_imbalance_us,
              k.mean_worst_imbalance_us, k.max_worst_imbalance_us, k.mean_time_in_collective_us,
              k.mean_after_last_arrival_us, static_cast<double>(k.nonblocking_calls),
              k.mean_nonblocking_span_us, k.mean_nonblocking_wait_us});
    for (std::uint64_t x : k.led) v.push_back(static_cast<double>(x));
    for (std::uint64_t x : k.arrived_last) v.push_back(static_cast<double>(x));
  }
  return v;
}

namespace {

std::string counts(const double* x, int n) {
  std::string s;
  for (int i = 0; i < n; ++i) {
    if (i) s += ',';
    s += std::to_string(static_cast<unsigned long long>(x[i]));
  }
  return s;
}

}  // namespace

void Telemetry::print(const std::vector<std::vector<double>>& all) {
  std::fprintf(stderr,
               "tlc stats (TLC_STATS=1): times in us within each process; delta = mean arrival "
               "imbalance, omega = worst-case imbalance (mean, max), in = mean time in the "
               "collective, after = mean time after the last arrival; led / last = calls in "
               "which each local thread ran an inter-process step / arrived last; nb = "
               "nonblocking calls, span = their mean time from start to completion, wait = the "
               "mean time of it inside test/wait\n");
  std::fprintf(stderr, "%7s %-20s %9s %10s %10s %10s %10s %10s %9s %10s %10s  %s\n", "process",
               "collective", "calls", "delta", "omega", "omega_max", "in", "after", "nb", "span",
               "wait", "led | last");
  for (std::size_t p = 0; p < all.size(); ++p) {
    const std::vector<double>& v = all[p];
    const int threads = static_cast<int>(v.at(0));
    constexpr std::size_t fields = 10;
    for (std::size_t at = 1; at + fields <= v.size();
         at += fields + 2 * static_cast<std::size_t>(threads)) {
      const double* x = v.data() + at;
      std::fprintf(stderr,
                   "%7zu %-20s %9.0f %10.2f %10.2f %10.2f %10.2f %10.2f %9.0f %10.2f %10.2f  %s | "
                   "%s\n",
                   p, to_string(static_cast<Collective>(static_cast<int>(x[0]))), x[1], x[2], x[3],
                   x[4], x[5], x[6], x[7], x[8], x[9], counts(x + fields, threads).c_str(),
                   counts(x + fields + threads, threads).c_str());
    }
  }
}

}  // namespace tlc::detail
