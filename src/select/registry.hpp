// What tlc can run: the algorithms of every collective and the forms each can take. Adding an
// algorithm is one registry line here (registry.cpp) plus its network step or phases.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>

#include <tlc/options.hpp>

#include "select/collective_traits.hpp"

namespace tlc::detail {

// Algorithm families; which collectives have which is in algorithm_registry().
enum class Algorithm : std::uint8_t {
  hierarchical,  // intra-process phase, one leader runs the MPI collective, intra-process phase
  flat,          // small messages: contributions carried in flag slots, one rendezvous
  sliced,        // large messages: publish-and-slice, every thread shares all copying
  two_level,     // reductions over several NUMA domains: reduce per domain, then across
  full_lane,     // as hierarchical, the MPI collective split over L lanes driven concurrently
  // Led by arrival (Parsons [Parsons] ch. 3): threads do not wait for each other; the thread
  // that arrives first (bcast) or last (reduce) in a process runs the inter-process step.
  dynamic,
  // Multi-sender: tlc's own point-to-point algorithm between processes, one instance per lane
  // on a disjoint part of the data.
  ring,                // allgather(v)
  bruck,               // allgather
  binomial,            // bcast (pipelined), reduce
  pairwise,            // alltoall(v), reduce_scatter_block
  isend,               // alltoall(v)
  recursive_doubling,  // allreduce, scan, exscan
  rabenseifner,        // allreduce (reduce-scatter + allgather)
  dissemination,       // barrier (on the process communicator: it moves no data to split)
  linear,              // gather, scatter (one message per process, to or from the root)
};

// Whether the algorithm is one of tlc's point-to-point (multi-sender) algorithms.
constexpr bool is_multi_sender(Algorithm a) noexcept { return a >= Algorithm::ring; }
// Whether the network step runs on the lane communicators (else thread 0 on the process one).
constexpr bool uses_lanes(Algorithm a) noexcept {
  return a == Algorithm::full_lane || (is_multi_sender(a) && a != Algorithm::dissemination);
}

// Whether multi-sender algorithm a of collective c has a direct form: with one thread in every
// process it runs on the caller's buffers (algo/reductions.cpp, bcast.cpp, gathers.cpp,
// scatter.cpp, alltoall.cpp, reduce_scatter_block.cpp).
constexpr bool multi_sender_direct(Collective c, Algorithm a) noexcept {
  switch (c) {
    case Collective::allreduce:
      return a == Algorithm::recursive_doubling || a == Algorithm::rabenseifner;
    case Collective::reduce:
    case Collective::bcast:
      return a == Algorithm::binomial;
    case Collective::allgather:
      return a == Algorithm::ring || a == Algorithm::bruck;
    case Collective::scan:
    case Collective::exscan:
      return a == Algorithm::recursive_doubling;
    case Collective::gather:
    case Collective::scatter:
      return a == Algorithm::linear;
    case Collective::alltoall:
      return a == Algorithm::pairwise || a == Algorithm::isend;
    case Collective::reduce_scatter_block:
      return a == Algorithm::pairwise;
    default:
      return false;
  }
}

// Whether the algorithm combines in an order other than rank order for this collective, so it
// can only serve commutative ops.
constexpr bool needs_commutative_op(Collective c, Algorithm a) noexcept {
  return a == Algorithm::rabenseifner ||
         (a == Algorithm::pairwise && c == Collective::reduce_scatter_block);
}

// How an algorithm runs a particular call.
enum class Form : std::uint8_t {
  inline_line,  // flat: data in the callers' begin lines (at most inline_capacity bytes)
  carried,      // flat: contributions carried in the callers' slots (read in place if large)
  sliced,       // sliced: publish and slice
  two_level,    // two_level: per NUMA domain, then across
  staged,       // across processes: through the team's staging buffer, one network step
  direct,       // across processes, one thread here: the network step on the caller's buffers
  pipelined,    // across processes: in chunks, intra-process phases overlapping the network
};
inline constexpr int form_count = static_cast<int>(Form::pipelined) + 1;
const char* to_string(Form f) noexcept;
const char* to_string(Algorithm a) noexcept;

struct AlgorithmInfo {
  Collective collective;
  const char* name;  // as accepted by TLC_ALGO_<COLLECTIVE> and TeamOptions::algorithms
  Algorithm id;
  bool single_process;  // only for teams of one process
  std::uint8_t forms;   // bit f: Form f can run it
  const char* summary;
  bool has(Form f) const noexcept { return (forms >> static_cast<unsigned>(f)) & 1u; }
};

std::span<const AlgorithmInfo> algorithm_registry() noexcept;
const AlgorithmInfo* find_algorithm(Collective c, Algorithm a) noexcept;

// A forced choice: "name" or "name:form" (TLC_ALGO_ALLREDUCE=full_lane:pipelined).
struct Override {
  Algorithm algorithm;
  std::optional<Form> form;
};
// Parses an override for collective c; `origin` names where it came from in the error.
// Throws Error(invalid_argument) naming the valid choices.
Override parse_override(Collective c, const std::string& text, const std::string& origin);

}  // namespace tlc::detail
