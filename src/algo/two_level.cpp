// Two-level: reductions in a process whose threads span several NUMA domains (docs/design.md
// section 5, "two_level"; the intra-node part of Traff & Hunold's hierarchical decomposition,
// [TraffHunold] sec. 3, applied to NUMA domains).
//
// Threads are grouped into maximal runs of consecutive ranks placed in the same NUMA domain
// (so rank order survives; G groups of S_g threads).
// Phases (n bytes):
//   1. begin_call (rendezvous).
//   2. Inside each group g, thread k of S_g reduces slice k of its group's inputs, in rank
//      order, into the group's partial result (a team-owned buffer). Only local memory is read.
//   3. Rendezvous.
//   4. allreduce: inside each group, thread k reduces slice k of the G partials (in group
//      order) and writes it into the outputs of its own group; reduce: thread t reduces slice t
//      of the G partials into the root's output.
//   5. Closing rendezvous.
// Socket-link traffic: (G-1)*n per group reading the other partials, instead of about
// (T - T/G)*n reads plus as many writes when every thread slices across all inputs and outputs.
// Cost: 3 alpha_sync + (T*n + G*n)/(T*beta_mem) + gamma*(T+G)*n/T per thread.
#include <algorithm>

#include "algo/algorithms.hpp"
#include "intra/sliced_reduce.hpp"

namespace tlc::detail {

void run_two_level(TeamImpl& team, int me, CallDescriptor&& d) {
  const auto view = begin_validated(team, me, std::move(d));
  const int threads = team.threads();
  const Call& c = view[me].call;
  const std::size_t n = view[me].count;
  const std::size_t e = c.type.size;
  const std::vector<int>& starts = team.numa_group_starts();
  const int groups = static_cast<int>(starts.size());
  const int g =
      static_cast<int>(std::upper_bound(starts.begin(), starts.end(), me) - starts.begin()) - 1;
  const int first = starts[static_cast<std::size_t>(g)];
  const int last = g + 1 < groups ? starts[static_cast<std::size_t>(g) + 1] : threads;

  team.grow_staging(me, static_cast<std::size_t>(groups) * n * e);
  std::byte* partials = team.staging();
  auto partial = [&](int group) { return partials + static_cast<std::size_t>(group) * n * e; };

  // Both phases read other threads' buffers (and the second writes their outputs): a user op
  // that throws is held until the phase is done everywhere (Rendezvous::work_then_sync).
  // Phase 2: the group's partial result.
  team.rendezvous().work_then_sync(me, [&] {
    auto inputs = input_pointers(static_cast<std::size_t>(last - first));
    for (int t = first; t < last; ++t)
      inputs[static_cast<std::size_t>(t - first)] = contribution_of(view, t);
    void* mine = partial(g);
    reduce_slice_to_all(inputs, std::span<void* const>(&mine, 1), e,
                        slice_of(n, e, me - first, last - first), c.combine, c.op_object);
  });

  // Phase 4: across groups.
  team.rendezvous().work_then_sync(me, [&] {
    auto across = input_pointers(static_cast<std::size_t>(groups));
    for (int h = 0; h < groups; ++h) across[static_cast<std::size_t>(h)] = partial(h);
    if (c.collective == Collective::allreduce) {
      auto outputs = output_pointers(static_cast<std::size_t>(last - first));
      for (int t = first; t < last; ++t)
        outputs[static_cast<std::size_t>(t - first)] = recv_of(view, t);
      reduce_slice_to_all(across, outputs, e, slice_of(n, e, me - first, last - first), c.combine,
                          c.op_object);
    } else {  // reduce
      void* root = recv_of(view, c.root);
      reduce_slice_to_all(across, std::span<void* const>(&root, 1), e, slice_of(n, e, me, threads),
                          c.combine, c.op_object);
    }
  });
}

}  // namespace tlc::detail
