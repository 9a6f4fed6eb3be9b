// tlc-plan-cost: what choosing costs. The plan lookup every call that does not take the inline
// form makes (the thread's PlanCache, src/select/planner.hpp), and the planner's own work on a
// miss, each timed on its own for a team shape, so that they can be set against the calls
// tlc-bench measures. Internal API: linked with the library's internals (tlc_internal).
//
//   tlc-plan-cost [processes [threads [lanes]]]    (default 2 1 1): allreduce of 8 B and 64 MiB
#include <chrono>
#include <cstddef>
#include <cstdio>
#include <cstdlib>

#include <tlc/options.hpp>

#include "select/planner.hpp"

namespace {

struct PlanLookup {
  double per_call_ns = 0;  // the thread's plan cache, as every call asks it
  double planner_ns = 0;   // Planner::plan itself, what a cache miss costs
};

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
  result.per_call_ns = time([&](const PlanQuery& q) -> const Plan& {
    // With the leader switch's question too, as the library asks it (TLC_LEADERS=auto).
    return cache
        .get(planner, q, std::size_t{64} << 10, [](tlc::Collective, std::size_t) { return 0; })
        .plan;
  });
  result.planner_ns = time([&](const PlanQuery& q) { return planner.plan(q); });
  return result;
}

}  // namespace

int main(int argc, char** argv) {
  int shape[3] = {2, 1, 1};  // processes, threads, lanes
  if (argc > 4) {
    std::fprintf(stderr, "usage: %s [processes [threads [lanes]]]\n", argv[0]);
    return 2;
  }
  for (int i = 1; i < argc; ++i) {
    shape[i - 1] = std::atoi(argv[i]);
    if (shape[i - 1] < 1) {
      std::fprintf(stderr, "%s: '%s' is not a positive count\n", argv[0], argv[i]);
      return 2;
    }
  }
  std::printf("plan lookups of a team of %d process(es) x %d thread(s), %d lane(s):\n", shape[0],
              shape[1], shape[2]);
  for (const std::size_t bytes : {std::size_t{8}, std::size_t{64} << 20}) {
    const PlanLookup cost =
        plan_lookup_ns(shape[0], shape[1], shape[2], tlc::Collective::allreduce, bytes);
    std::printf(
        "  allreduce of %zu B: %.1f ns per call (the thread's plan cache), %.1f ns per "
        "miss (the planner)\n",
        bytes, cost.per_call_ns, cost.planner_ns);
  }
  return 0;
}
