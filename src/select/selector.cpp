#include "select/selector.hpp"

#include <cctype>
#include <cstdlib>

#include <tlc/algorithms.hpp>
#include <tlc/error.hpp>

#include "inter/process_comm.hpp"

namespace tlc::detail {

namespace {

constexpr const char* flat_summary =
    "single process, small messages: contributions travel in the threads' flag slots, each "
    "thread computes its own output, one rendezvous";
constexpr const char* sliced_summary =
    "single process, large messages: publish-and-slice, every thread moves an equal share of "
    "all bytes (reductions fused with the write into every output)";
constexpr const char* hierarchical_summary =
    "intra-process phase into a staging buffer, thread 0 runs the MPI collective between "
    "processes, intra-process phase out (single process: as sliced)";
constexpr const char* two_level_summary =
    "single process over several NUMA domains: reduce inside each domain, then across domains, "
    "so each byte crosses the socket link once";

constexpr const char* full_lane_summary =
    "as hierarchical, but the staging buffer is cut into L parts and lane thread l runs the MPI "
    "collective on part l over lane l, all lanes at once";

// clang-format off
#define TLC_DATA_COLLECTIVE(c)                                                                \
  {Collective::c, "hierarchical", Algorithm::hierarchical, false, hierarchical_summary},      \
  {Collective::c, "flat", Algorithm::flat, true, flat_summary},                               \
  {Collective::c, "sliced", Algorithm::sliced, true, sliced_summary},                         \
  {Collective::c, "full_lane", Algorithm::full_lane, false, full_lane_summary}
// clang-format on

// The first entry of each collective is its multi-process default.
constexpr AlgorithmInfo registry[] = {
    {Collective::barrier, "hierarchical", Algorithm::hierarchical, false,
     "rendezvous of the process's threads; thread 0 runs MPI_Barrier between processes"},
    TLC_DATA_COLLECTIVE(bcast),
    TLC_DATA_COLLECTIVE(reduce),
    {Collective::reduce, "two_level", Algorithm::two_level, true, two_level_summary},
    TLC_DATA_COLLECTIVE(allreduce),
    {Collective::allreduce, "two_level", Algorithm::two_level, true, two_level_summary},
    TLC_DATA_COLLECTIVE(allgather),
    TLC_DATA_COLLECTIVE(allgatherv),
    TLC_DATA_COLLECTIVE(gather),
    TLC_DATA_COLLECTIVE(gatherv),
    TLC_DATA_COLLECTIVE(scatter),
    TLC_DATA_COLLECTIVE(scatterv),
    TLC_DATA_COLLECTIVE(alltoall),
    TLC_DATA_COLLECTIVE(alltoallv),
    TLC_DATA_COLLECTIVE(reduce_scatter_block),
    TLC_DATA_COLLECTIVE(scan),
    TLC_DATA_COLLECTIVE(exscan),
    {Collective::allgather, "ring", Algorithm::ring, false,
     "multi-sender ring allgather: each lane thread runs the ring on its part of every block"},
    {Collective::allgatherv, "ring", Algorithm::ring, false,
     "multi-sender ring allgatherv: each lane thread runs the ring on its part of every block"},
    {Collective::allgather, "bruck", Algorithm::bruck, false,
     "multi-sender Bruck allgather (equal process blocks; ceil(log2 P) rounds), per lane part"},
    {Collective::bcast, "binomial", Algorithm::binomial, false,
     "multi-sender pipelined binomial-tree bcast, each lane thread on its part"},
    {Collective::alltoall, "pairwise", Algorithm::pairwise, false,
     "multi-sender pairwise-exchange alltoall (P-1 steps), each lane thread on its part"},
    {Collective::alltoallv, "pairwise", Algorithm::pairwise, false,
     "multi-sender pairwise-exchange alltoallv (P-1 steps), each lane thread on its part"},
    {Collective::alltoall, "isend", Algorithm::isend, false,
     "multi-sender alltoall posting every send and receive at once, per lane part"},
    {Collective::alltoallv, "isend", Algorithm::isend, false,
     "multi-sender alltoallv posting every send and receive at once, per lane part"},
    {Collective::reduce_scatter_block, "pairwise", Algorithm::pairwise, false,
     "multi-sender pairwise-exchange reduce-scatter (commutative ops), per lane part"},
    {Collective::allreduce, "recursive_doubling", Algorithm::recursive_doubling, false,
     "multi-sender recursive-doubling allreduce (any op, rank order kept), per lane part"},
    {Collective::allreduce, "rabenseifner", Algorithm::rabenseifner, false,
     "multi-sender Rabenseifner allreduce: recursive-halving reduce-scatter + recursive-doubling "
     "allgather (commutative ops), per lane part"},
};
#undef TLC_DATA_COLLECTIVE

// The point-to-point algorithms take part in automatic selection (the cost model charges them
// for running outside MPI, so they win only where their schedule is better than MPI's).
constexpr bool multi_sender_available = true;

bool has(Collective c, Algorithm a) {
  for (const auto& info : registry)
    if (info.collective == c && info.id == a) return true;
  return false;
}

std::string env_name(Collective c) {
  std::string name = "TLC_ALGO_";
  for (const char* p = to_string(c); *p; ++p)
    name += static_cast<char>(std::toupper(static_cast<unsigned char>(*p)));
  return name;
}

Algorithm lookup(Collective c, const std::string& name, const std::string& origin) {
  std::string known;
  for (const auto& info : registry) {
    if (info.collective != c) continue;
    if (name == info.name) return info.id;
    known += known.empty() ? "" : ", ";
    known += info.name;
  }
  throw Error(Errc::invalid_argument,
              "tlc: " + origin + " names unknown algorithm '" + name + "' for " + to_string(c) +
                  (known.empty() ? std::string(" (no algorithms are implemented for it yet)")
                                 : " (known: " + known + ")"));
}

}  // namespace

std::span<const AlgorithmInfo> algorithm_registry() noexcept { return registry; }

Selector::Selector(const std::map<Collective, std::string>& forced, const CostParameters& costs)
    : costs_(costs) {
  for (std::size_t i = 0; i < collective_count; ++i) {
    const auto c = static_cast<Collective>(i);
    const std::string variable = env_name(c);
    if (const char* value = std::getenv(variable.c_str()); value && *value)
      forced_[i] = lookup(c, value, variable);
  }
  // The program's own choice wins over the environment.
  for (const auto& [c, name] : forced)
    forced_[static_cast<std::size_t>(c)] =
        lookup(c, name, std::string("TeamOptions::algorithms[") + to_string(c) + "]");
}

std::optional<Algorithm> Selector::forced(Collective collective) const {
  return forced_[static_cast<std::size_t>(collective)];
}

void Selector::check_forced_for(int processes) const {
  if (processes == 1) return;
  for (const auto& info : registry) {
    if (!info.single_process || forced(info.collective) != info.id) continue;
    throw Error(Errc::invalid_argument,
                std::string("tlc: algorithm '") + info.name + "' forced for " +
                    to_string(info.collective) +
                    " works inside a single process only, but this team spans " +
                    std::to_string(processes) + " processes (use 'hierarchical')");
  }
}

// Several processes: the cheapest inter-process phase by the cost model (ties go to the
// earlier registry entry, hierarchical first); v-variants, whose sizes differ per rank, always
// take hierarchical so that no process can decide differently. One process: flat up to
// flat_max_bytes per thread, two_level for reductions over several NUMA domains, sliced
// otherwise (v-variants: sliced, the choice that needs no agreement on sizes).
Algorithm Selector::choose(Collective collective, std::size_t bytes, const TeamShape& shape,
                           bool commutative) const {
  if (auto f = forced(collective)) return *f;
  const bool v_variant = collective == Collective::allgatherv ||
                         collective == Collective::gatherv || collective == Collective::scatterv ||
                         collective == Collective::alltoallv;
  if (collective == Collective::barrier) return Algorithm::hierarchical;
  if (shape.processes > 1) {
    if (v_variant) return Algorithm::hierarchical;
    const CostQuery query{collective,  bytes,       shape.processes,      shape.ranks,
                          shape.lanes, commutative, shape.equal_processes};
    Algorithm best = Algorithm::hierarchical;
    double best_cost = -1;
    for (const auto& info : registry) {
      if (info.collective != collective || info.single_process) continue;
      if (is_multi_sender(info.id) && !multi_sender_available) continue;
      const std::optional<double> cost = predict(info.id, query, costs_);
      if (cost && (best_cost < 0 || *cost < best_cost)) {
        best = info.id;
        best_cost = *cost;
      }
    }
    return best;
  }
  if (!v_variant && bytes <= flat_max_bytes) return Algorithm::flat;
  if (shape.numa_groups > 1 && has(collective, Algorithm::two_level)) return Algorithm::two_level;
  return Algorithm::sliced;
}

}  // namespace tlc::detail

namespace tlc {

std::vector<AlgorithmDescription> algorithms() {
  std::vector<AlgorithmDescription> all;
  for (const auto& info : detail::algorithm_registry())
    all.push_back({info.collective, info.name, info.single_process, info.summary});
  return all;
}

Selection select_algorithm(const SelectionQuery& q) {
  detail::CostParameters costs = detail::CostParameters::from_environment();
  if (costs.lane_parallelism == 0) costs.lane_parallelism = detail::mpi_lane_parallelism();
  const detail::Selector selector({}, costs);
  const detail::TeamShape shape{
      q.processes, q.threads, q.lanes, q.numa_domains, q.processes * q.threads, true};
  const detail::Algorithm chosen = selector.choose(q.collective, q.bytes, shape, q.commutative);
  Selection selection;
  const detail::CostQuery query{q.collective, q.bytes,       q.processes, q.processes * q.threads,
                                q.lanes,      q.commutative, true};
  for (const auto& info : detail::algorithm_registry()) {
    if (info.collective != q.collective) continue;
    if (info.id == chosen && selection.name.empty()) selection.name = info.name;
    if (q.processes > 1 && !info.single_process)
      if (auto cost = detail::predict(info.id, query, costs))
        selection.predicted_seconds.emplace_back(info.name, *cost);
  }
  return selection;
}

int mpi_lane_parallelism() { return detail::mpi_lane_parallelism(); }

}  // namespace tlc
