// The placement plan: how many threads a team gets, which NUMA domain and core each runs on,
// and which thread drives which lane on which rail. Pure computation on the views a Topology
// precomputed; it never calls hwloc, so plans are cheap and deterministic.
#include <algorithm>
#include <sstream>
#include <string>
#include <vector>

#include <tlc/error.hpp>

#include "topo/topology_impl.hpp"

namespace tlc {
namespace {

void require_non_negative(int value, const char* name) {
  if (value < 0)
    throw Error(Errc::invalid_argument, std::string("tlc: ") + name + "=" + std::to_string(value) +
                                            " is negative (use 0 for "
                                            "the default)");
}

int count_lanes(const Topology& topology, const PlacementRequest& request) {
  const int rails = static_cast<int>(topology.rails().size());
  if (request.threads_per_rail > 0 && rails == 0)
    throw Error(Errc::topology,
                "tlc: threads_per_rail=" + std::to_string(request.threads_per_rail) +
                    " needs network rails, but " + topology.source() +
                    " has none; set the number of lanes (lanes / TLC_LANES) "
                    "instead");
  if (request.threads_per_rail == 0) return request.lanes > 0 ? request.lanes : 1;
  const int implied = request.threads_per_rail * rails;
  if (request.lanes > 0 && request.lanes != implied)
    throw Error(Errc::invalid_argument,
                "tlc: lanes=" + std::to_string(request.lanes) +
                    " contradicts threads_per_rail=" + std::to_string(request.threads_per_rail) +
                    " on " + std::to_string(rails) + " rail" + (rails == 1 ? "" : "s") +
                    ", which means " + std::to_string(implied) + " lanes; set only one of them");
  return implied;
}

int count_threads(const Topology& topology, const PlacementRequest& request) {
  const int domains = topology.numa_domains();
  if (request.threads_per_numa > 0) {
    const int implied = request.threads_per_numa * domains;
    if (request.threads > 0 && request.threads != implied)
      throw Error(Errc::invalid_argument,
                  "tlc: threads=" + std::to_string(request.threads) +
                      " contradicts threads_per_numa=" + std::to_string(request.threads_per_numa) +
                      " on " + std::to_string(domains) + " NUMA domain" +
                      (domains == 1 ? "" : "s") + ", which means " + std::to_string(implied) +
                      " threads; set only one of them");
    return implied;
  }
  if (request.threads > 0) return request.threads;
  return std::max(1, topology.cores());
}

// Domain of each thread, domain-major: consecutive local indices share a domain so that
// neighbours in the intra-process trees are neighbours in memory too. An explicit count is
// spread evenly (earlier domains take the remainder); the default of one thread per allowed
// core follows the cores, which differ between domains when the launcher's binding cuts one.
std::vector<int> thread_domains(const detail::TopologyImpl& t, int threads,
                                const PlacementRequest& request) {
  const int domains = static_cast<int>(t.domains.size());
  std::vector<int> result;
  result.reserve(static_cast<std::size_t>(threads));
  if (request.threads_per_numa > 0) {
    for (int i = 0; i < threads; ++i) result.push_back(i / request.threads_per_numa);
    return result;
  }
  if (request.threads == 0) {
    for (int d = 0; d < domains; ++d)
      result.insert(result.end(), t.domain_cores[static_cast<std::size_t>(d)].size(), d);
    if (result.empty()) result.push_back(0);
    return result;
  }
  const int base = threads / domains;
  const int extra = threads % domains;
  for (int d = 0; d < domains; ++d) {
    const int n = base + (d < extra ? 1 : 0);
    for (int i = 0; i < n; ++i) result.push_back(d);
  }
  return result;
}

// Pins the threads of one domain: a core each first (no sharing of a core's caches and
// pipelines while free cores remain), then the remaining hyperthreads of those cores round by
// round.
void pin_domain(const detail::TopologyImpl& t, int domain, const std::vector<int>& members,
                std::vector<ThreadPlacement>& threads) {
  const std::vector<int>& core_ids = t.domain_cores[static_cast<std::size_t>(domain)];
  std::size_t capacity = 0;
  std::size_t rounds = 0;
  for (int c : core_ids) {
    const std::size_t n = t.cores[static_cast<std::size_t>(c)].pu_sets.size();
    capacity += n;
    rounds = std::max(rounds, n);
  }
  if (members.size() > capacity)
    throw Error(Errc::topology,
                "tlc: cannot pin " + std::to_string(members.size()) + " threads on NUMA domain " +
                    std::to_string(domain) + ": it has " + std::to_string(capacity) +
                    " allowed PU" + (capacity == 1 ? "" : "s") +
                    " (set pin=false / TLC_PIN=0 to oversubscribe, or use fewer threads)");

  struct Slot {
    int core;  // index into t.cores
    std::size_t pu;
  };
  std::vector<Slot> slots;
  for (std::size_t r = 0; r < rounds && slots.size() < members.size(); ++r)
    for (int c : core_ids)
      if (r < t.cores[static_cast<std::size_t>(c)].pu_sets.size() && slots.size() < members.size())
        slots.push_back(Slot{c, r});

  std::vector<int> sharing(t.cores.size(), 0);
  for (const Slot& s : slots) ++sharing[static_cast<std::size_t>(s.core)];
  for (std::size_t i = 0; i < members.size(); ++i) {
    const detail::CoreInfo& core = t.cores[static_cast<std::size_t>(slots[i].core)];
    ThreadPlacement& tp = threads[static_cast<std::size_t>(members[i])];
    tp.core = core.logical;
    // Alone on its core, a thread may use all of the core's PUs; sharing, it gets one.
    tp.cpuset = sharing[static_cast<std::size_t>(slots[i].core)] == 1 ? core.cpuset
                                                                      : core.pu_sets[slots[i].pu];
  }
}

// The thread that drives a lane: an idle thread of the rail's domain, the last one first
// (thread 0 of a domain tends to carry other work), else any idle thread, else round-robin
// over the lanes already placed once every thread drives one.
int lane_thread(const std::vector<ThreadPlacement>& threads,
                const std::vector<LanePlacement>& lanes, int lane, int domain) {
  const int count = static_cast<int>(threads.size());
  if (lane >= count) return lanes[static_cast<std::size_t>(lane % count)].thread;
  auto idle = [&](int t) { return threads[static_cast<std::size_t>(t)].lanes.empty(); };
  if (domain >= 0)
    for (int t = count - 1; t >= 0; --t)
      if (idle(t) && threads[static_cast<std::size_t>(t)].numa == domain) return t;
  for (int t = count - 1; t >= 0; --t)
    if (idle(t)) return t;
  return lanes[static_cast<std::size_t>(lane % count)].thread;  // unreachable: lane < count
}

}  // namespace

Placement Placement::plan(const Topology& topology, const PlacementRequest& request) {
  require_non_negative(request.threads, "threads");
  require_non_negative(request.threads_per_numa, "threads_per_numa");
  require_non_negative(request.lanes, "lanes");
  require_non_negative(request.threads_per_rail, "threads_per_rail");

  const detail::TopologyImpl& t = detail::TopologyAccess::impl(topology);
  const int lane_count = count_lanes(topology, request);
  const int thread_count = count_threads(topology, request);
  const int domains = topology.numa_domains();

  Placement plan;
  plan.pinned = request.pin;
  const std::vector<int> domain_of = thread_domains(t, thread_count, request);
  plan.threads.resize(static_cast<std::size_t>(thread_count));
  for (int i = 0; i < thread_count; ++i) {
    ThreadPlacement& tp = plan.threads[static_cast<std::size_t>(i)];
    tp.local_index = i;
    tp.numa = domain_of[static_cast<std::size_t>(i)];
  }

  if (request.pin) {
    for (int d = 0; d < domains; ++d) {
      std::vector<int> members;
      for (int i = 0; i < thread_count; ++i)
        if (domain_of[static_cast<std::size_t>(i)] == d) members.push_back(i);
      pin_domain(t, d, members, plan.threads);
    }
  }

  const std::vector<Rail>& rails = topology.rails();
  const int rail_count = static_cast<int>(rails.size());
  plan.lanes.reserve(static_cast<std::size_t>(lane_count));
  for (int l = 0; l < lane_count; ++l) {
    LanePlacement lp;
    lp.lane = l;
    lp.rail = rail_count > 0 ? l % rail_count : -1;
    const int rail_numa = lp.rail >= 0 ? rails[static_cast<std::size_t>(lp.rail)].numa : -1;
    lp.thread = lane_thread(plan.threads, plan.lanes, l, rail_numa);
    ThreadPlacement& driver = plan.threads[static_cast<std::size_t>(lp.thread)];
    lp.numa = rail_numa >= 0 ? rail_numa : driver.numa;
    driver.lanes.push_back(l);
    plan.lanes.push_back(lp);
  }
  return plan;
}

std::string Placement::describe() const {
  std::ostringstream out;
  out << "placement: " << threads.size() << " thread" << (threads.size() == 1 ? "" : "s") << ", "
      << lanes.size() << " lane" << (lanes.size() == 1 ? "" : "s") << ", "
      << (pinned ? "pinned" : "not pinned") << '\n';
  std::vector<std::vector<std::string>> rows{{"thread", "numa", "core", "cpuset", "lanes"}};
  for (const ThreadPlacement& tp : threads) {
    std::string lane_list;
    for (int l : tp.lanes) {
      if (!lane_list.empty()) lane_list += ',';
      lane_list += std::to_string(l);
    }
    rows.push_back({std::to_string(tp.local_index), std::to_string(tp.numa),
                    tp.core < 0 ? "-" : std::to_string(tp.core),
                    tp.cpuset.empty() ? "-" : tp.cpuset, lane_list.empty() ? "-" : lane_list});
  }
  out << detail::render_table(rows, "  ");
  rows = {{"lane", "rail", "numa", "thread"}};
  for (const LanePlacement& lp : lanes)
    rows.push_back({std::to_string(lp.lane), lp.rail < 0 ? "-" : std::to_string(lp.rail),
                    std::to_string(lp.numa), std::to_string(lp.thread)});
  out << detail::render_table(rows, "  ");
  return out.str();
}

}  // namespace tlc
