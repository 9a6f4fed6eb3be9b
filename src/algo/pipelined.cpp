// Pipelined collectives across processes: bcast, reduce, allreduce, scan and exscan of large
// buffers, in chunks, the intra-process phases of chunk i+1 overlapping the network phase of
// chunk i (Traff & Hunold, [TraffHunold] sec. 5, on pipelining the
// node-local and lane phases; Jain et al., [Jain] sec. III-E for
// the chunked shared buffer). These are the collectives whose chunk is a collective of its own:
// chunk i of the result depends on chunk i of the inputs only.
//
// The engine and its phases are in algo/pipeline.hpp; per collective here:
//   produce: reductions reduce their slice of chunk i of all inputs into the region; a bcast
//            produces nothing;
//   network: the MPI collective of the chunk (bcast, allreduce, reduce, exscan);
//   consume: a copy into each thread's own output (bcast, allreduce: from the root's or thread
//            0's output), each thread's slice of the prefixes of every output (scan, exscan),
//            nothing (reduce: the region is the root's output).
// Where threads read or write each other's outputs (bcast, allreduce, scan, exscan) everybody
// waits at the end for the last "consumed" of all, so no output is still in use when its owner
// returns.
// Cost: (K + 1) * max(intra(C), network(C)) instead of K times their sum.
//
// Every process must make the same MPI calls, so whether and how a call pipelines (the plan's
// decision, src/select/planner.cpp) depends on what all processes share only.
#include <algorithm>
#include <cstring>
#include <vector>

#include <tlc/detail/collective_traits.hpp>

#include "algo/algorithms.hpp"
#include "algo/pipeline.hpp"
#include "intra/prefix.hpp"
#include "intra/sliced_reduce.hpp"

namespace tlc::detail {

namespace {

// Reduces this worker's slice of chunk i of every thread's contribution into region, with the
// caller's own op (c).
void produce_reduction(const Pipeline& pipe, const CallView& view, const Call& c, int threads,
                       std::size_t i, std::byte* region) {
  const std::size_t e = c.type.size;
  auto inputs = input_pointers(static_cast<std::size_t>(threads));
  for (int t = 0; t < threads; ++t)
    inputs[static_cast<std::size_t>(t)] = contribution_of(view, t) + pipe.offset(i);
  void* out = region;
  reduce_slice_to_all(inputs, std::span<void* const>(&out, 1), e, pipe.work_slice(i), c.combine,
                      c.op_object);
}

}  // namespace

void run_pipelined(TeamImpl& team, int me, const CallView& view, const Plan& plan) {
  const Call& c = view[me].call;
  if (traits_of(c.collective).chunking == Chunking::pieces)
    return run_pipelined_mover(team, me, view, plan);
  const int threads = team.threads();
  const std::size_t e = c.type.size, n = view[me].count;
  Pipeline pipe(team, me, e, n, plan);
  const std::size_t chunk_bytes = pipe.chunk_elements() * e;
  const bool rooted = c.collective == Collective::bcast || c.collective == Collective::reduce;
  const bool root_process = rooted && team.process_of(c.root) == team.process();
  // Where the chunks travel. A caller's output where the result must end up anyway: the root's
  // (bcast and reduce in the root process), thread 0's (bcast elsewhere, allreduce), which the
  // other threads then copy from; otherwise (scan and exscan, whose outputs are computed from
  // the region, and reduce outside the root process, whose outputs are not written) two
  // staging regions in turn.
  std::byte* result = root_process ? recv_of(view, c.root - team.first_rank())
                      : c.collective == Collective::bcast || c.collective == Collective::allreduce
                          ? recv_of(view, 0)
                          : nullptr;
  team.grow_staging(me, result ? 0 : 2 * chunk_bytes);
  pipe.set_reuses_regions(!result);
  std::byte* staging = team.staging();
  auto region = [&](std::size_t i) {
    return result ? result + pipe.offset(i) : staging + (i % 2) * chunk_bytes;
  };
  auto part_of = [&](std::size_t i, Slice part) { return region(i) + part.begin * e; };
  auto* out = static_cast<std::byte*>(c.recv);
  auto copy_out = [&](std::size_t i) {
    if (region(i) != out + pipe.offset(i))
      std::memcpy(out + pipe.offset(i), region(i), pipe.count(i) * e);
  };
  auto produce = [&](std::size_t i) { produce_reduction(pipe, view, c, threads, i, region(i)); };
  // Threads read the result holder's output until their last copy.
  const bool shared = result && c.collective != Collective::reduce && threads > 1;

  switch (c.collective) {
    case Collective::bcast: {
      const int root = team.process_of(c.root);
      return pipe.run([](std::size_t) {},
                      [&](std::size_t i, ProcessComm& comm, Slice part) {
                        comm.bcast(part_of(i, part), part.size() * e, root);
                      },
                      copy_out, shared);
    }
    case Collective::allreduce:
      return pipe.run(
          produce,
          [&](std::size_t i, ProcessComm& comm, Slice part) {
            comm.allreduce_in_place(part_of(i, part), part.size(), c);
          },
          copy_out, shared);
    case Collective::reduce: {
      // Reduced straight into the root's output in the root process.
      const int root = team.process_of(c.root);
      return pipe.run(
          produce,
          [&](std::size_t i, ProcessComm& comm, Slice part) {
            comm.reduce_in_place(part_of(i, part), part.size(), c, root);
          },
          [](std::size_t) {}, false);
    }
    case Collective::scan:
    case Collective::exscan: {
      // The process's total of chunk i becomes, after MPI_Exscan, the reduction of chunk i over
      // all lower processes: the seed of this process's prefixes.
      const bool exclusive = c.collective == Collective::exscan;
      return pipe.run(
          produce,
          [&](std::size_t i, ProcessComm& comm, Slice part) {
            comm.exscan_in_place(part_of(i, part), part.size(), c);
          },
          [&](std::size_t i) {
            auto inputs = input_pointers(static_cast<std::size_t>(threads));
            auto outputs = output_pointers(static_cast<std::size_t>(threads));
            for (int t = 0; t < threads; ++t) {
              inputs[static_cast<std::size_t>(t)] = contribution_of(view, t) + pipe.offset(i);
              outputs[static_cast<std::size_t>(t)] = recv_of(view, t) + pipe.offset(i);
            }
            const std::byte* seed = team.process() > 0 ? region(i) : nullptr;
            prefix_slice(inputs, outputs, e, pipe.thread_slice(i), c.combine, c.op_object,
                         exclusive, seed);
          },
          true);  // threads write each other's outputs
    }
    default:
      return;
  }
}

}  // namespace tlc::detail
