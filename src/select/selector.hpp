// Algorithm choice (DESIGN section 3): algorithms never choose themselves. The selector maps
// (collective, bytes, team shape) to an algorithm, honouring overrides from TeamOptions and
// TLC_ALGO_<COLLECTIVE>. Every thread of every process computes the same choice from the same
// inputs, so no agreement step is needed; a thread whose arguments differ is caught by the
// call's own validation, which every algorithm performs first.
#pragma once

#include <array>
#include <cstddef>
#include <map>
#include <optional>
#include <span>
#include <string>

#include <tlc/options.hpp>

#include "select/cost_model.hpp"

namespace tlc::detail {

// Algorithm families; which collectives have which is in algorithm_registry().
enum class Algorithm {
  hierarchical,  // intra-process phase, one leader runs the MPI collective, intra-process phase
  flat,          // small messages: contributions carried in flag slots, one rendezvous
  sliced,        // large messages: publish-and-slice, every thread shares all copying
  two_level,     // reductions over several NUMA domains: reduce per domain, then across
  full_lane,     // as hierarchical, the MPI collective split over L lanes driven concurrently
  // Multi-sender: tlc's own point-to-point algorithm between processes, one instance per lane
  // on a disjoint part of the data.
  ring,                // allgather(v)
  bruck,               // allgather
  binomial,            // bcast, pipelined
  pairwise,            // alltoall(v), reduce_scatter_block
  isend,               // alltoall(v)
  recursive_doubling,  // allreduce
  rabenseifner,        // allreduce (reduce-scatter + allgather)
};

// Whether the algorithm is one of tlc's point-to-point (multi-sender) algorithms.
constexpr bool is_multi_sender(Algorithm a) noexcept { return a >= Algorithm::ring; }

// Whether the algorithm combines in an order other than rank order for this collective, so it
// can only serve commutative ops.
constexpr bool needs_commutative_op(Collective c, Algorithm a) noexcept {
  return a == Algorithm::rabenseifner ||
         (a == Algorithm::pairwise && c == Collective::reduce_scatter_block);
}

struct AlgorithmInfo {
  Collective collective;
  const char* name;  // as accepted by TLC_ALGO_<COLLECTIVE> and TeamOptions::algorithms
  Algorithm id;
  bool single_process;  // only for teams of one process
  const char* summary;
};

std::span<const AlgorithmInfo> algorithm_registry() noexcept;

// What the selector may look at. Everything but `threads` and `numa_groups` is the same on
// every process, and multi-process choices use only those, so all processes choose alike.
struct TeamShape {
  int processes = 1;
  int threads = 1;  // threads of this process
  int lanes = 1;
  int numa_groups = 1;  // runs of consecutive threads in one NUMA domain
  int ranks = 1;        // threads of all processes
  bool equal_processes = true;
};

// Default thresholds of the selector (bytes of one thread's contribution).
inline constexpr std::size_t flat_max_bytes = 2048;

class Selector {
 public:
  // Throws Error(invalid_argument) naming the valid choices for an unknown algorithm name.
  Selector() = default;  // defaults everywhere, nothing forced
  Selector(const std::map<Collective, std::string>& forced, const CostParameters& costs);
  // bytes: of one rank's block (the same on every rank except in v-variants). A forced algorithm
  // is returned as forced, even one that needs_commutative_op(): the caller reports that.
  Algorithm choose(Collective collective, std::size_t bytes, const TeamShape& shape,
                   bool commutative = true) const;
  const CostParameters& costs() const noexcept { return costs_; }
  std::optional<Algorithm> forced(Collective collective) const;
  // Throws Error(invalid_argument) when a forced algorithm cannot serve a team of this many
  // processes.
  void check_forced_for(int processes) const;

 private:
  static constexpr std::size_t collective_count = static_cast<std::size_t>(Collective::exscan) + 1;
  std::array<std::optional<Algorithm>, collective_count> forced_{};
  CostParameters costs_{};
};

}  // namespace tlc::detail
