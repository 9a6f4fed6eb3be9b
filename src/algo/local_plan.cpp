// Helpers of the single-process algorithms: who reads what from whom, as a CopyPlan.
#include "algo/algorithms.hpp"

#include <vector>

namespace tlc::detail {

bool all_carried(const CallView& view, int threads) {
  for (int t = 0; t < threads; ++t)
    if (!view[t].carried && view[t].contribution_bytes > 0) return false;
  return true;
}

std::span<const void*> input_pointers(std::size_t n) {
  thread_local std::vector<const void*> pointers;
  pointers.resize(n);
  return pointers;
}

std::span<void*> output_pointers(std::size_t n) {
  thread_local std::vector<void*> pointers;
  pointers.resize(n);
  return pointers;
}

void build_local_plan(CopyPlan& plan, const CallView& view, int threads, int target) {
  plan.clear();
  const Call& c = view[0].call;
  const std::size_t e = c.type.size;
  const std::size_t n = view[0].count;  // per-rank block, in elements (non-v collectives)
  const bool all = target < 0;
  auto wanted = [&](int t) { return all || t == target; };
  const int root = c.root;
  thread_local std::vector<void*> targets;
  switch (c.collective) {
    // One segment per source with every target, so the source is read once (fan-out).
    case Collective::bcast:
      targets.clear();
      for (int t = 0; t < threads; ++t)
        if (t != root && wanted(t)) targets.push_back(recv_of(view, t));
      plan.add(contribution_of(view, root), n * e, targets.data(), targets.size());
      break;
    case Collective::allgather:
    case Collective::allgatherv:
      for (int r = 0; r < threads; ++r) {
        targets.clear();
        for (int t = 0; t < threads; ++t) {
          if (!wanted(t)) continue;
          const std::size_t displ = c.collective == Collective::allgather
                                        ? r * n
                                        : view[t].call.recv_displs()[static_cast<std::size_t>(r)];
          targets.push_back(recv_of(view, t) + displ * e);
        }
        plan.add(contribution_of(view, r), view[r].contribution_bytes, targets.data(),
                 targets.size());
      }
      break;
    case Collective::gather:
      if (!wanted(root)) break;
      for (int r = 0; r < threads; ++r)
        plan.add(contribution_of(view, r), n * e, recv_of(view, root) + r * n * e);
      break;
    case Collective::gatherv:
      if (!wanted(root)) break;
      for (int r = 0; r < threads; ++r)
        plan.add(
            contribution_of(view, r), view[r].contribution_bytes,
            recv_of(view, root) + view[root].call.recv_displs()[static_cast<std::size_t>(r)] * e);
      break;
    case Collective::scatter: {
      const std::byte* source = contribution_of(view, root);
      for (int t = 0; t < threads; ++t)
        if (wanted(t) && !(t == root && view[root].call.in_place))
          plan.add(source + t * n * e, n * e, recv_of(view, t));
      break;
    }
    case Collective::scatterv: {
      const std::byte* source = contribution_of(view, root);
      const Call& rc = view[root].call;
      for (int t = 0; t < threads; ++t)
        if (wanted(t) && !(t == root && rc.in_place))
          plan.add(source + rc.send_displs()[static_cast<std::size_t>(t)] * e,
                   rc.send_counts()[static_cast<std::size_t>(t)] * e, recv_of(view, t));
      break;
    }
    case Collective::alltoall:
      for (int s = 0; s < threads; ++s)
        for (int t = 0; t < threads; ++t)
          if (wanted(t))
            plan.add(contribution_of(view, s) + t * n * e, n * e, recv_of(view, t) + s * n * e);
      break;
    case Collective::alltoallv:
      for (int s = 0; s < threads; ++s)
        for (int t = 0; t < threads; ++t) {
          if (!wanted(t)) continue;
          const Call& sc = view[s].call;
          const auto ts = static_cast<std::size_t>(t), ss = static_cast<std::size_t>(s);
          plan.add(contribution_of(view, s) + sc.send_displs()[ts] * e, sc.send_counts()[ts] * e,
                   recv_of(view, t) + view[t].call.recv_displs()[ss] * e);
        }
      break;
    default:
      break;
  }
}

}  // namespace tlc::detail
