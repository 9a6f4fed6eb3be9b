// What choosing costs: the planner's lookup, which every call that does not take the inline form
// makes (src/select/planner.hpp), timed on its own so that the sweep can set it against the
// calls it measures. Internal API: the benchmark is built with the library's sources.
#include <chrono>
#include <cstddef>

#include "bench.hpp"
#include "select/planner.hpp"

namespace tlc_bench {

double plan_lookup_ns(int processes, int threads, int lanes, tlc::Collective collective,
                      std::size_t bytes) {
  using namespace tlc::detail;
  const TeamShape shape{processes, threads, lanes, 1, processes * threads, true};
  const Planner planner(shape, PlanSettings{});
  constexpr int lookups = 1 << 20;
  PlanQuery q{collective, bytes / sizeof(double), sizeof(double), true, false};
  std::size_t sink = 0;
  const auto start = std::chrono::steady_clock::now();
  for (int k = 0; k < lookups; ++k) {
    q.count = (bytes / sizeof(double)) + static_cast<std::size_t>(k & 1);  // not hoisted
    sink += static_cast<std::size_t>(planner.plan(q).form);
  }
  const std::chrono::duration<double, std::nano> took = std::chrono::steady_clock::now() - start;
  volatile std::size_t keep = sink;
  (void)keep;
  return took.count() / lookups;
}

}  // namespace tlc_bench
