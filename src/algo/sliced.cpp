// Sliced: the large-message algorithm of every collective inside one process, publish-and-slice
// (docs/design.md section 5; Jain et al.'s copy optimizations, [Jain] sec. III-E, without their
// copy into a shared buffer: threads read each other's buffers directly; docs/references.md).
//
// Phases (T threads, n bytes per rank block):
//   1. begin_call: every thread publishes its buffers; one rendezvous.
//   2. Every thread takes an equal, cache-line-aligned share of the work:
//      - reductions: slice t of the element range, reduced over all inputs in rank order into
//        an L1 accumulator and written straight into every output that needs it (allreduce:
//        all T; reduce: the root's; reduce_scatter_block: the owner of that block). scan and
//        exscan walk the ranks in order with the accumulator (intra/prefix.hpp);
//      - data movement: share t of all source bytes of the collective's copy plan, each source
//        chunk written to all its targets while it sits in L1 (intra/copy_plan.hpp).
//   3. Closing rendezvous: threads write each other's outputs and read each other's inputs, so
//      none leaves (not even with an exception from a user op) before all are done.
// Cost per thread: 2 alpha_sync + (bytes read + bytes written)/(T*beta_mem); reads every input
// once and writes every output once, the memory-traffic minimum.
#include <algorithm>

#include "algo/algorithms.hpp"
#include "intra/prefix.hpp"
#include "intra/sliced_reduce.hpp"

namespace tlc::detail {

void run_sliced_share(const CallView& view, int share, int threads, const CopyPlan* plan) {
  const auto T = static_cast<std::size_t>(threads);
  const Call& c = view[share].call;
  const std::size_t n = view[share].count;
  const std::size_t e = c.type.size;
  auto inputs = input_pointers(T);
  for (int t = 0; t < threads; ++t) inputs[static_cast<std::size_t>(t)] = contribution_of(view, t);
  switch (c.collective) {
    case Collective::reduce: {
      void* root = recv_of(view, c.root);
      reduce_slice_to_all(inputs, std::span<void* const>(&root, 1), e,
                          slice_of(n, e, share, threads), c.combine, c.op_object);
      break;
    }
    case Collective::allreduce: {
      auto outputs = output_pointers(T);
      for (int t = 0; t < threads; ++t) outputs[static_cast<std::size_t>(t)] = recv_of(view, t);
      reduce_slice_to_all(inputs, outputs, e, slice_of(n, e, share, threads), c.combine,
                          c.op_object);
      break;
    }
    case Collective::reduce_scatter_block: {
      // Slice t of the whole T*n range; each piece lands in the block owner's output.
      const Slice mine = slice_of(T * n, e, share, threads);
      for (std::size_t at = mine.begin; at < mine.end;) {
        const std::size_t block = at / n, block_end = std::min(mine.end, (block + 1) * n);
        for (std::size_t t = 0; t < T; ++t)
          inputs[t] = contribution_of(view, static_cast<int>(t)) + block * n * e;
        void* owner = recv_of(view, static_cast<int>(block));
        reduce_slice_to_all(inputs, std::span<void* const>(&owner, 1), e,
                            Slice{at - block * n, block_end - block * n}, c.combine, c.op_object);
        at = block_end;
      }
      break;
    }
    case Collective::scan:
    case Collective::exscan: {
      auto outputs = output_pointers(T);
      for (int t = 0; t < threads; ++t) outputs[static_cast<std::size_t>(t)] = recv_of(view, t);
      prefix_slice(inputs, outputs, e, slice_of(n, e, share, threads), c.combine, c.op_object,
                   c.collective == Collective::exscan, nullptr);
      break;
    }
    default: {
      if (plan) return plan->run_share(share, threads);
      thread_local CopyPlan built;
      build_local_plan(built, view, threads, -1);
      built.run_share(share, threads);
    }
  }
}

void run_sliced(TeamImpl& team, int me, CallDescriptor&& d) {
  const auto view = begin_validated(team, me, std::move(d));
  // The work reads and writes other threads' buffers: a user op that throws is held until all
  // of it is done (Rendezvous::work_then_sync).
  team.rendezvous().work_then_sync(me,
                                   [&] { run_sliced_share(view, me, team.threads(), nullptr); });
}

}  // namespace tlc::detail
