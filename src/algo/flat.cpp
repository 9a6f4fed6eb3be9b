// Flat: the small-message algorithm of every collective inside one process, after Jain et al.
// ([Jain] sec. II-B: single-writer flags on their own cache lines, monotonic counters; sec.
// III-D: small data carried with the flag; docs/references.md).
//
// Phases (T threads of one process, n bytes per contribution):
//   1. Each thread copies its contribution (up to carry_capacity bytes) into its own slot next to
//      its arrival flag and arrives (begin_call). One rendezvous: every thread reads every flag.
//   2. Each thread computes its own output from the carried contributions: a reduction over
//      all (allreduce), over its block (reduce_scatter_block) or over lower ranks (scan),
//      copies for the data movers. Nobody writes anybody else's buffer.
//   3. Only if some contribution was too large to carry (the algorithm was forced for a large
//      message) do readers still use the owners' buffers; then a closing rendezvous keeps
//      them alive until every reader is done.
// Cost: alpha_sync (one rendezvous) + n/beta_copy (carry) + T*n/beta_read + (T-1)*gamma*n per
// thread for reductions. Best while T*n stays in cache; the selector stops at flat_max_bytes.
#include <vector>

#include "algo/algorithms.hpp"
#include "intra/sliced_reduce.hpp"

namespace tlc::detail {

namespace {

// output = op over the contributions of threads [first, last) in rank order, each offset by
// `offset` bytes. The op object is the caller's own (own): with carried contributions the other
// threads may have returned already, and a stateful op object (a capturing lambda, a user op of
// the C interface) lives on its caller's stack.
void reduce_own(const CallView& view, const Call& own, int first, int last, std::size_t offset,
                void* output, std::size_t count) {
  if (last <= first || count == 0) return;
  const Call& c = own;
  auto inputs = input_pointers(static_cast<std::size_t>(last - first));
  for (int t = first; t < last; ++t)
    inputs[static_cast<std::size_t>(t - first)] = contribution_of(view, t) + offset;
  reduce_slice_to_all(inputs, std::span<void* const>(&output, 1), c.type.size, Slice{0, count},
                      c.combine, c.op_object);
}

}  // namespace

void run_flat(TeamImpl& team, int me, CallDescriptor&& d) {
  const auto view = begin_validated(team, me, std::move(d), /*carry=*/true);
  const int threads = team.threads();
  const Call& c = view[me].call;
  const std::size_t n = view[me].count;
  const std::size_t e = c.type.size;
  // v-variants: counts and displacements stay in the callers' memory, which readers use, so
  // their owners must wait for the closing rendezvous even when the data travelled carried.
  const bool v_variant =
      c.collective == Collective::allgatherv || c.collective == Collective::gatherv ||
      c.collective == Collective::scatterv || c.collective == Collective::alltoallv;
  const bool carried = all_carried(view, threads) && !v_variant;

  auto work = [&] {
    switch (c.collective) {
      case Collective::reduce:
        if (me == c.root) reduce_own(view, c, 0, threads, 0, c.recv, n);
        break;
      case Collective::allreduce:
        reduce_own(view, c, 0, threads, 0, c.recv, n);
        break;
      case Collective::reduce_scatter_block:
        reduce_own(view, c, 0, threads, static_cast<std::size_t>(me) * n * e, c.recv, n);
        break;
      case Collective::scan:
        reduce_own(view, c, 0, me + 1, 0, c.recv, n);
        break;
      case Collective::exscan:
        reduce_own(view, c, 0, me, 0, c.recv, n);
        break;
      default: {
        thread_local CopyPlan plan;
        build_local_plan(plan, view, threads, me);
        plan.run_all();
      }
    }
  };
  // Carried contributions are read from the slots, so nobody touches another thread's buffers
  // and there is nothing to wait for; otherwise the closing rendezvous keeps them alive (and
  // holds back a user op's exception until the others are done: Rendezvous::work_then_sync).
  if (carried)
    work();
  else
    team.rendezvous().work_then_sync(me, work);
}

}  // namespace tlc::detail
