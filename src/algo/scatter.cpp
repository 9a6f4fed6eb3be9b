// scatter and scatterv across processes (Parsons [Parsons] ch. 2.3; Traff & Hunold
// [TraffHunold] sec. 3; docs/references.md).
//
// Region (algo/pieces.hpp): in the root's process a piece of every rank's block, lane part after
// lane part, ranks in order; elsewhere this process's T pieces.
// Steps (T threads here, N ranks, n bytes per rank, L lanes):
//   produce: the root process's workers copy the N pieces of the root's send buffer in (N n
//            bytes shared among them); elsewhere nothing;
//   network: from the root's process, per lane part: MPI_Scatterv (hierarchical, full_lane) or
//            tlc's linear scatter (linear);
//   consume: every thread copies its own piece out (the root keeps its own in place).
// direct (one thread here): MPI_Scatterv on the caller's buffers (one thread everywhere: or
// tlc's linear scatter).
// Cost: N n / T + network + n bytes copied per thread; MPICH's scatter is a binomial tree,
// log P alpha + (P-1)/P N n beta ([Thakur] sec. 4); the linear one (P-1) alpha + the same bytes.
#include "algo/across.hpp"
#include "algo/pieces.hpp"
#include "inter/p2p.hpp"

namespace tlc::detail {

void scatter_across(TeamImpl& team, int me, const CallView& view, const Plan& plan) {
  const Call& c = view[me].call;
  const std::size_t e = c.type.size, n = view[me].count;
  const bool v = c.collective == Collective::scatterv;
  const auto N = static_cast<std::size_t>(team.size());
  const auto T = static_cast<std::size_t>(team.threads());
  const auto first = static_cast<std::size_t>(team.first_rank());
  const std::size_t my_rank = first + static_cast<std::size_t>(me);
  const int root_process = team.process_of(c.root);
  const bool root_here = root_process == team.process();
  const int root_local = c.root - team.first_rank();
  const Call* root_call = root_here ? &view[root_local].call : nullptr;
  auto count_of_rank = [&](std::size_t r) { return v ? root_call->send_counts()[r] : n; };
  auto displ_of_rank = [&](std::size_t r) { return v ? root_call->send_displs()[r] : r * n; };
  const bool keeps = my_rank == static_cast<std::size_t>(c.root) && c.in_place;
  auto* out = static_cast<std::byte*>(c.recv);

  if (plan.form == Form::direct) {
    if (!root_here) {
      if (plan.algorithm == Algorithm::linear)
        p2p::linear_scatterv(team.comm(), nullptr, {}, {}, out, c.recv_count * e, root_process);
      else
        team.comm().scatterv(nullptr, {}, {}, c.recv, c.recv_count * e, root_process);
      return;
    }
    // The root's send buffer is the rank-packed region of one lane: a group per process.
    const auto* source = static_cast<const std::byte*>(view[me].contribution);
    if (plan.algorithm == Algorithm::linear && plan.one_thread_everywhere && !v) {
      p2p::linear_scatter(team.comm(), source, nullptr, n * e, root_process);  // equal blocks
    } else if (plan.algorithm == Algorithm::linear) {
      thread_local std::vector<std::size_t> sizes, offsets;
      process_groups(team, n * e, sizes, offsets);
      p2p::linear_scatterv(team.comm(), source, sizes, offsets, nullptr, 0, root_process);
    } else {
      thread_local std::vector<MPI_Count> bytes;
      thread_local std::vector<MPI_Aint> displs;
      process_groups(team, n * e, bytes, displs);
      team.comm().scatterv(source, bytes, displs, nullptr, 0, root_process);
    }
    if (!keeps) copy_bytes(out, source + my_rank * n * e, n * e);
    return;
  }

  Pipeline pipe(team, me, e, n, plan, N);
  const std::size_t pieces = root_here ? N : T;
  const std::size_t mine = root_here ? my_rank : static_cast<std::size_t>(me);
  thread_local PieceLayout layout;
  layout.new_call();
  auto layout_of = [&](std::size_t i) -> const PieceLayout& {
    return layout.of_chunk(i, pieces, pipe.lanes(), e, [&](std::size_t k, std::size_t j) {
      return pipe.piece(k, root_here ? count_of_rank(j)
                           : v       ? view[static_cast<int>(j)].call.recv_count
                                     : n);
    });
  };
  const std::size_t region_bytes = layout_of(0).total();
  pipe.use_staging(region_bytes);
  auto region = [&](std::size_t i) { return pipe.region(i); };

  auto produce = [&](std::size_t i) {
    if (!root_here) return;
    const PieceLayout& at = layout_of(i);
    const std::byte* source = contribution_of(view, root_local);
    thread_local CopyPlan copies;
    copies.clear();
    for (std::size_t r = 0; r < N; ++r)
      for (int l = 0; l < pipe.lanes(); ++l) {
        const Slice part = at.part(l, r);
        copies.add(source + (displ_of_rank(r) + pipe.first(i) + part.begin) * e, part.size() * e,
                   region(i) + at.offset(l, r));
      }
    copies.run_share(pipe.worker(), pipe.workers());
  };
  auto network = [&](std::size_t i, ProcessComm& comm, int l) {
    const PieceLayout& at = layout_of(i);
    std::byte* lane = region(i) + at.offset(l, 0);
    const bool linear = plan.algorithm == Algorithm::linear;
    if (!root_here) {
      if (linear)
        p2p::linear_scatterv(comm, nullptr, {}, {}, lane, at.bytes(l, 0, T), root_process);
      else
        comm.scatterv(nullptr, {}, {}, lane, at.bytes(l, 0, T), root_process);
      return;
    }
    thread_local std::vector<MPI_Count> bytes;
    thread_local std::vector<MPI_Aint> displs;
    at.lane_groups(l, rank_starts(team), bytes, displs);
    if (linear) {
      thread_local std::vector<std::size_t> sizes, offsets;
      as_sizes(bytes, displs, sizes, offsets);
      p2p::linear_scatterv(comm, lane, sizes, offsets, nullptr, 0, root_process);
    } else {
      comm.scatterv(lane, bytes, displs, nullptr, 0, root_process);
    }
  };
  auto consume = [&](std::size_t i) {
    if (keeps) return;
    const PieceLayout& at = layout_of(i);
    for (int l = 0; l < pipe.lanes(); ++l) {
      const Slice part = at.part(l, mine);
      copy_bytes(out + (pipe.first(i) + part.begin) * e, region(i) + at.offset(l, mine),
                 part.size() * e);
    }
  };
  pipe.run(produce, network, consume, false);
}

}  // namespace tlc::detail
