// What choosing costs: the plan lookup every call that does not take the inline form makes (the
// thread's PlanCache, src/select/planner.hpp), and the planner's own work on a miss, each timed on
// its own so that the sweep can set them against the calls it measures. Internal API: the benchmark
// is built with the library's sources.
#include <chrono>
#include <cstddef>

#include "bench.hpp"
#include "select/planner.hpp"

namespace tlc_bench {

PlanLookup plan_lookup_ns(int processes, int threads, int lanes, tlc::Collective collective,
                          std::size_t bytes) {
  using namespace tlc::detail;
  const TeamShape shape{processes, threads, lanes, 1, processes * threads, true};
  const Planner planner(shape, PlanSettings{});
  PlanCache cache;
  constexpr int lookups = 1 << 20;
  const std::size_t count = bytes / sizeof(double);
  // Two sizes in turn, so that the compiler cannot hoist the lookup out of the loop.
  auto time = [&](auto&& lookup) {
    PlanQuery q{collective, count, sizeof(double), true, false};
    std::size_t sink = 0;
    const auto start = std::chrono::steady_clock::now();
    for (int k = 0; k < lookups; ++k) {
      q.count = count + static_cast<std::size_t>(k & 1);
      sink += static_cast<std::size_t>(lookup(q).form);
    }
    const std::chrono::duration<double, std::nano> took = std::chrono::steady_clock::now() - start;
    volatile std::size_t keep = sink;
    (void)keep;
    return took.count() / lookups;
  };
  PlanLookup result;
  result.per_call_ns =
      time([&](const PlanQuery& q) -> const Plan& { return cache.get(planner, q); });
  result.planner_ns = time([&](const PlanQuery& q) { return planner.plan(q); });
  return result;
}

}  // namespace tlc_bench
