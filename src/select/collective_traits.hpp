// What each collective is, in one table: validation, the planner, the compositions and the
// tests read these properties here instead of repeating switch statements.
// It lives in src/select/ because choosing and pricing an algorithm is what reads most of it (the
// planner, the registry, the cost model); the compositions in src/algo/ already depend on the
// selection layer for their Plan. No public header needs it, so it is not installed.
#pragma once

#include <array>
#include <cstddef>

#include <tlc/options.hpp>

namespace tlc::detail {

inline constexpr std::size_t collective_count = static_cast<std::size_t>(Collective::exscan) + 1;

// How a collective across processes cuts its work into pipeline chunks.
enum class Chunking : unsigned char {
  none,    // not pipelined (barrier, v-variants)
  block,   // chunk i is elements [iC, iC + C) of the one block every rank holds (bcast,
           // reductions): a chunk is the same collective on a smaller block
  pieces,  // chunk i is elements [iC, iC + C) of every rank block (the movers): a chunk holds
           // a piece of every rank's block
};

struct CollectiveTraits {
  bool has_root = false;
  bool reduction = false;  // combines with an op
  bool v_variant = false;  // per-rank counts and displacements
  // Selection and cost are priced on this many rank blocks of one thread's buffer: 1, or the
  // team size where one thread's buffer holds a block per rank (alltoall, scatter at the root,
  // reduce_scatter_block's input).
  bool buffer_holds_every_block = false;
  // The in-place output overwrites input that other threads still read in every algorithm
  // (alltoall, reduce_scatter_block); see also in_place_output_races_in_flat.
  bool in_place_output_races = false;
  // ... and in flat, where every thread computes its own output from all inputs, when the inputs
  // are read in place (allreduce, scan, exscan).
  bool in_place_output_races_in_flat = false;
  // The contribution fits a begin line for small calls: the inline form of flat can serve it.
  bool inline_capable = false;
  Chunking chunking = Chunking::none;
};

namespace collective_traits_table {
constexpr std::array<CollectiveTraits, collective_count> make() {
  std::array<CollectiveTraits, collective_count> t{};
  auto at = [&](Collective c) -> CollectiveTraits& { return t[static_cast<std::size_t>(c)]; };
  for (Collective c : {Collective::bcast, Collective::reduce, Collective::gather,
                       Collective::gatherv, Collective::scatter, Collective::scatterv})
    at(c).has_root = true;
  for (Collective c : {Collective::reduce, Collective::allreduce, Collective::reduce_scatter_block,
                       Collective::scan, Collective::exscan}) {
    at(c).reduction = true;
    at(c).chunking = Chunking::block;
  }
  at(Collective::reduce_scatter_block).chunking = Chunking::pieces;
  for (Collective c :
       {Collective::allgatherv, Collective::gatherv, Collective::scatterv, Collective::alltoallv})
    at(c).v_variant = true;
  for (Collective c :
       {Collective::allgather, Collective::gather, Collective::scatter, Collective::alltoall})
    at(c).chunking = Chunking::pieces;
  at(Collective::bcast).chunking = Chunking::block;
  for (Collective c : {Collective::alltoall, Collective::scatter, Collective::reduce_scatter_block})
    at(c).buffer_holds_every_block = true;
  for (Collective c : {Collective::alltoall, Collective::reduce_scatter_block})
    at(c).in_place_output_races = true;
  for (Collective c : {Collective::allreduce, Collective::scan, Collective::exscan})
    at(c).in_place_output_races_in_flat = true;
  for (Collective c : {Collective::barrier, Collective::bcast, Collective::reduce,
                       Collective::allreduce, Collective::scan, Collective::exscan})
    at(c).inline_capable = true;
  return t;
}
inline constexpr std::array<CollectiveTraits, collective_count> table = make();
}  // namespace collective_traits_table

constexpr const CollectiveTraits& traits_of(Collective c) noexcept {
  return collective_traits_table::table[static_cast<std::size_t>(c)];
}

}  // namespace tlc::detail
