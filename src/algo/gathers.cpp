// allgather, allgatherv, gather and gatherv across processes (Parsons [Parsons] ch. 2.3 and
// 2.3.2; Traff & Hunold [TraffHunold] sec. 3; docs/references.md).
//
// Region (algo/pieces.hpp): a piece of every rank's block, lane part after lane part, ranks in
// order, so each process's pieces of one lane are contiguous (outside the root's process a gather
// region holds only this process's T pieces).
// Steps (T threads here, N ranks, P processes, n bytes per rank, L lanes):
//   produce: the workers copy the local threads' pieces into their rank's place (T n bytes);
//   network: allgather: every process's pieces to every process, per lane: MPI_Allgatherv in
//            place (hierarchical, full_lane), tlc's ring (ring) or Bruck (bruck, equal process
//            blocks); gather: MPI_Gatherv (hierarchical, full_lane) or tlc's linear gather
//            (linear) to the root's process;
//   consume: allgather: every thread copies all N pieces into its output (N n bytes each);
//            gather: the root copies them.
// direct (one thread here): the MPI call on the caller's buffers (one thread everywhere:
// MPI_Allgather, or tlc's ring or Bruck in place in the output; tlc's linear gather into the
// root's output).
// Cost: T n + network + N n bytes copied per thread; ring (P-1) alpha + (P-1)/P N n beta, Bruck
// ceil(log2 P) alpha + the same bytes ([Thakur] sec. 4.1), per lane N n / L; linear gather
// (P-1) alpha + (P-1)/P N n beta at the root.
#include "algo/across.hpp"
#include "algo/pieces.hpp"
#include "inter/p2p.hpp"

namespace tlc::detail {

void gather_across(TeamImpl& team, int me, const CallView& view, const Plan& plan) {
  const Call& c = view[me].call;
  const std::size_t e = c.type.size, n = view[me].count;
  const bool all = c.collective == Collective::allgather || c.collective == Collective::allgatherv;
  const bool v = c.collective == Collective::allgatherv || c.collective == Collective::gatherv;
  const auto N = static_cast<std::size_t>(team.size());
  const auto T = static_cast<std::size_t>(team.threads());
  const auto first = static_cast<std::size_t>(team.first_rank());
  const std::size_t my_rank = first + static_cast<std::size_t>(me);
  const int root_process = all ? -1 : team.process_of(c.root);
  const bool root_here = root_process == team.process();
  // The call that knows every rank's count and displacement: the caller's own (allgather), the
  // root's (gather, in the root's process).
  const Call* layout_call = all ? &c : root_here ? &view[c.root - team.first_rank()].call : nullptr;
  const bool receives = all || team.global_rank(me) == c.root;
  const bool every_rank = all || root_here;  // the region holds a piece of every rank
  auto count_of_rank = [&](std::size_t r) { return v ? layout_call->recv_counts()[r] : n; };
  auto displ_of_rank = [&](std::size_t r) { return v ? layout_call->recv_displs()[r] : r * n; };
  const std::size_t skip = c.in_place && receives ? my_rank : N;  // its own block is in place
  auto* out = static_cast<std::byte*>(c.recv);

  if (plan.form == Form::direct) {
    const auto* mine = static_cast<const std::byte*>(view[me].contribution);
    if (!every_rank) {  // gather outside the root's process: send this thread's block
      if (plan.algorithm == Algorithm::linear)
        p2p::linear_gatherv(team.comm(), mine, view[me].contribution_bytes, nullptr, {}, {},
                            root_process);
      else
        team.comm().gatherv(mine, view[me].contribution_bytes, nullptr, {}, {}, root_process);
      return;
    }
    if (all && plan.one_thread_everywhere) {
      if (plan.algorithm == Algorithm::hierarchical) {
        team.comm().allgather(c.in_place ? nullptr : c.send, c.recv, n * e);
        return;
      }
      // Bruck: in place in the output, this rank's block at its place first. Ring: this
      // rank's block sent from the input (p2p::ring_allgatherv's own_block).
      if (plan.algorithm == Algorithm::bruck) {
        if (!c.in_place) copy_bytes(out + my_rank * n * e, mine, n * e);
        p2p::bruck_allgather(team.comm(), out, n * e);
      } else {
        p2p::ring_allgather(team.comm(), out, n * e, c.in_place ? nullptr : mine);
      }
      return;
    }
    // The caller's output is the rank-packed region of one lane: a group per process.
    copy_bytes(out + my_rank * n * e, mine, view[me].contribution_bytes);
    if (!all && plan.algorithm == Algorithm::linear) {
      if (plan.one_thread_everywhere && !v) {  // a rank per process: equal blocks
        p2p::linear_gather(team.comm(), nullptr, out, n * e, root_process);
        return;
      }
      thread_local std::vector<std::size_t> sizes, offsets;
      process_groups(team, n * e, sizes, offsets);
      p2p::linear_gatherv(team.comm(), nullptr, 0, out, sizes, offsets, root_process);
      return;
    }
    thread_local std::vector<MPI_Count> bytes;
    thread_local std::vector<MPI_Aint> displs;
    process_groups(team, n * e, bytes, displs);
    if (all)
      team.comm().allgatherv_in_place(out, bytes, displs);
    else
      team.comm().gatherv(nullptr, 0, out, bytes, displs, root_process);
    return;
  }

  Pipeline pipe(team, me, e, n, plan, N);
  const std::size_t pieces = every_rank ? N : T;
  const std::size_t base = every_rank ? first : 0;  // index of local thread 0's piece
  // Per-chunk layout; chunk 0's is built before anything moves, while every thread is still in
  // the call (its counts may live in another thread's memory).
  thread_local PieceLayout layout;
  layout.new_call();
  auto layout_of = [&](std::size_t i) -> const PieceLayout& {
    return layout.of_chunk(i, pieces, pipe.lanes(), e, [&](std::size_t k, std::size_t j) {
      return pipe.piece(
          k, every_rank ? count_of_rank(j) : view[static_cast<int>(j)].contribution_bytes / e);
    });
  };
  const std::size_t region_bytes = layout_of(0).total();
  pipe.use_staging(region_bytes);
  auto region = [&](std::size_t i) { return pipe.region(i); };

  auto produce = [&](std::size_t i) {
    const PieceLayout& at = layout_of(i);
    thread_local CopyPlan copies;
    copies.clear();
    for (std::size_t t = 0; t < T; ++t)
      for (int l = 0; l < pipe.lanes(); ++l) {
        const Slice part = at.part(l, base + t);
        copies.add(contribution_of(view, static_cast<int>(t)) + (pipe.first(i) + part.begin) * e,
                   part.size() * e, region(i) + at.offset(l, base + t));
      }
    copies.run_share(pipe.worker(), pipe.workers());
  };
  auto network = [&](std::size_t i, ProcessComm& comm, int l) {
    const PieceLayout& at = layout_of(i);
    std::byte* lane = region(i) + at.offset(l, 0);
    thread_local std::vector<MPI_Count> bytes;
    thread_local std::vector<MPI_Aint> displs;
    if (!every_rank) {
      if (plan.algorithm == Algorithm::linear)
        p2p::linear_gatherv(comm, lane, at.bytes(l, 0, T), nullptr, {}, {}, root_process);
      else
        comm.gatherv(lane, at.bytes(l, 0, T), nullptr, {}, {}, root_process);
      return;
    }
    at.lane_groups(l, rank_starts(team), bytes, displs);
    if (!all && plan.algorithm == Algorithm::linear) {
      thread_local std::vector<std::size_t> sizes, offsets;
      as_sizes(bytes, displs, sizes, offsets);
      p2p::linear_gatherv(comm, nullptr, 0, lane, sizes, offsets, root_process);
    } else if (!all) {
      comm.gatherv(nullptr, 0, lane, bytes, displs, root_process);
    } else if (plan.algorithm == Algorithm::bruck) {  // the planner ensures equal blocks
      p2p::bruck_allgather(comm, lane, static_cast<std::size_t>(bytes[0]));
    } else if (plan.algorithm == Algorithm::ring) {
      thread_local std::vector<std::size_t> sizes, offsets;
      as_sizes(bytes, displs, sizes, offsets);
      p2p::ring_allgatherv(comm, lane, sizes, offsets);
    } else {
      comm.allgatherv_in_place(lane, bytes, displs);
    }
  };
  auto consume = [&](std::size_t i) {
    if (!receives) return;
    const PieceLayout& at = layout_of(i);
    for (std::size_t r = 0; r < N; ++r) {
      if (r == skip) continue;
      for (int l = 0; l < pipe.lanes(); ++l) {
        const Slice part = at.part(l, r);
        copy_bytes(out + (displ_of_rank(r) + pipe.first(i) + part.begin) * e,
                   region(i) + at.offset(l, r), part.size() * e);
      }
    }
  };
  pipe.run(produce, network, consume, false);
}

}  // namespace tlc::detail
