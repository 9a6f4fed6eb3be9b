// What each collective is, in one table: validation, the planner, the cost model, the
// compositions and the tests read these properties here instead of repeating switch statements.
// Adding a collective is adding its row (and, for a collective with one count for every rank,
// its intra-process work in the cost model).
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

// What one thread's send or receive buffer holds, in rank blocks (the root's, where the root's
// differs): the cost model counts the bytes the callers bring to a process's working set by it.
enum class Blocks : unsigned char {
  none,      // no such buffer (barrier; bcast's one buffer, in and out, is its receive buffer)
  one,       // one block
  per_rank,  // a block for every rank of the team
};

// What the operation between processes moves, in rank blocks: MPI's collective and tlc's
// point-to-point algorithms are priced on these bytes.
enum class ProcessBytes : unsigned char {
  one_block,     // one block, the same size in every process (bcast, the reductions)
  every_block,   // the blocks of all ranks (the gathers and scatters, reduce_scatter_block's input)
  process_pair,  // what one process sends another: (ranks / processes)^2 blocks (alltoall)
};

// The MPI collective whose MPICH default algorithms ([Thakur] sec. 4) price MPI's own step across
// processes. Collectives whose messages follow one pattern share it.
enum class MpiPricing : unsigned char {
  barrier,
  bcast,
  reduce,
  allreduce,
  allgather,
  gather,          // gather and scatter: the same binomial tree, towards the root or away from it
  alltoall,        // pairwise exchange
  reduce_scatter,  // pairwise exchange, combining on the way
  scan,            // scan and exscan: log2 P steps, each sending and combining the whole block
};

// Where hierarchical's one-thread composition runs MPI's call on the caller's own buffers
// (Form::direct, algo/*.cpp), skipping the staging buffer. The multi-sender algorithms that have
// such a form are in registry.hpp (multi_sender_direct).
enum class DirectForm : unsigned char {
  none,             // no such composition
  one_thread_here,  // wherever this process has one thread
  // ... and the call is not in place: the direct alltoall hands MPI both of the caller's
  // buffers, which MPI requires to be separate.
  not_in_place,
  // Only where every process has one thread: MPI's reduce_scatter_block gives each process one
  // block, where a process of several threads needs one per thread.
  one_thread_everywhere,
};

struct CollectiveTraits {
  Collective collective = Collective::barrier;  // the row's own collective (checked below)
  // The collective with one count for every rank that a v-variant generalises, or the collective
  // itself: the cost model prices a v-variant's work as its fixed-count collective's, with the
  // MPI factors fitted for that one.
  Collective fixed_count = Collective::barrier;
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
  Blocks send = Blocks::one;
  Blocks recv = Blocks::one;
  ProcessBytes process_bytes = ProcessBytes::one_block;
  MpiPricing mpi_pricing = MpiPricing::barrier;
  DirectForm hierarchical_direct = DirectForm::none;
};

namespace collective_traits_table {
// One row per collective, in the order of the Collective enumeration; a row names the properties
// that differ from the defaults above. Packed by hand: clang-format would give every field a line.
// clang-format off
inline constexpr std::array<CollectiveTraits, collective_count> table = {{
    {.collective = Collective::barrier, .fixed_count = Collective::barrier, .inline_capable = true,
     .send = Blocks::none, .recv = Blocks::none, .mpi_pricing = MpiPricing::barrier},
    {.collective = Collective::bcast, .fixed_count = Collective::bcast, .has_root = true,
     .inline_capable = true, .chunking = Chunking::block, .send = Blocks::none,
     .mpi_pricing = MpiPricing::bcast, .hierarchical_direct = DirectForm::one_thread_here},
    {.collective = Collective::reduce, .fixed_count = Collective::reduce, .has_root = true,
     .reduction = true, .inline_capable = true, .chunking = Chunking::block,
     .mpi_pricing = MpiPricing::reduce},
    {.collective = Collective::allreduce, .fixed_count = Collective::allreduce, .reduction = true,
     .in_place_output_races_in_flat = true, .inline_capable = true, .chunking = Chunking::block,
     .mpi_pricing = MpiPricing::allreduce, .hierarchical_direct = DirectForm::one_thread_here},
    {.collective = Collective::allgather, .fixed_count = Collective::allgather,
     .chunking = Chunking::pieces, .recv = Blocks::per_rank,
     .process_bytes = ProcessBytes::every_block, .mpi_pricing = MpiPricing::allgather,
     .hierarchical_direct = DirectForm::one_thread_here},
    {.collective = Collective::allgatherv, .fixed_count = Collective::allgather, .v_variant = true,
     .recv = Blocks::per_rank, .process_bytes = ProcessBytes::every_block,
     .mpi_pricing = MpiPricing::allgather},
    {.collective = Collective::gather, .fixed_count = Collective::gather, .has_root = true,
     .chunking = Chunking::pieces, .recv = Blocks::per_rank,
     .process_bytes = ProcessBytes::every_block, .mpi_pricing = MpiPricing::gather,
     .hierarchical_direct = DirectForm::one_thread_here},
    {.collective = Collective::gatherv, .fixed_count = Collective::gather, .has_root = true,
     .v_variant = true, .recv = Blocks::per_rank, .process_bytes = ProcessBytes::every_block,
     .mpi_pricing = MpiPricing::gather},
    {.collective = Collective::scatter, .fixed_count = Collective::scatter, .has_root = true,
     .buffer_holds_every_block = true, .chunking = Chunking::pieces, .send = Blocks::per_rank,
     .process_bytes = ProcessBytes::every_block, .mpi_pricing = MpiPricing::gather,
     .hierarchical_direct = DirectForm::one_thread_here},
    {.collective = Collective::scatterv, .fixed_count = Collective::scatter, .has_root = true,
     .v_variant = true, .send = Blocks::per_rank, .process_bytes = ProcessBytes::every_block,
     .mpi_pricing = MpiPricing::gather},
    {.collective = Collective::alltoall, .fixed_count = Collective::alltoall,
     .buffer_holds_every_block = true, .in_place_output_races = true, .chunking = Chunking::pieces,
     .send = Blocks::per_rank, .recv = Blocks::per_rank,
     .process_bytes = ProcessBytes::process_pair, .mpi_pricing = MpiPricing::alltoall,
     .hierarchical_direct = DirectForm::not_in_place},
    {.collective = Collective::alltoallv, .fixed_count = Collective::alltoall, .v_variant = true,
     .send = Blocks::per_rank, .recv = Blocks::per_rank,
     .process_bytes = ProcessBytes::process_pair, .mpi_pricing = MpiPricing::alltoall},
    {.collective = Collective::reduce_scatter_block,
     .fixed_count = Collective::reduce_scatter_block, .reduction = true,
     .buffer_holds_every_block = true, .in_place_output_races = true, .chunking = Chunking::pieces,
     .send = Blocks::per_rank, .process_bytes = ProcessBytes::every_block,
     .mpi_pricing = MpiPricing::reduce_scatter,
     .hierarchical_direct = DirectForm::one_thread_everywhere},
    {.collective = Collective::scan, .fixed_count = Collective::scan, .reduction = true,
     .in_place_output_races_in_flat = true, .inline_capable = true, .chunking = Chunking::block,
     .mpi_pricing = MpiPricing::scan},
    {.collective = Collective::exscan, .fixed_count = Collective::exscan, .reduction = true,
     .in_place_output_races_in_flat = true, .inline_capable = true, .chunking = Chunking::block,
     .mpi_pricing = MpiPricing::scan},
}};
// clang-format on

constexpr bool rows_in_order() {
  for (std::size_t i = 0; i < collective_count; ++i)
    if (table[i].collective != static_cast<Collective>(i)) return false;
  return true;
}
static_assert(rows_in_order(), "one row per collective, in the order of the enumeration");
}  // namespace collective_traits_table

constexpr const CollectiveTraits& traits_of(Collective c) noexcept {
  return collective_traits_table::table[static_cast<std::size_t>(c)];
}

}  // namespace tlc::detail
