// reduce_scatter_block across processes (Traff & Hunold [TraffHunold] sec. 3, the permuted
// "_lane" decomposition; docs/references.md).
//
// Regions (algo/pieces.hpp), lane part after lane part: "reduced" holds a piece of every rank's
// block reduced over this process's threads, ranks in order; "mine" receives this process's T
// pieces of the reduction over all processes.
// Steps (T threads here, N ranks, n bytes per rank block, L lanes):
//   produce: the workers reduce their slice of every rank block's chunk over the T local inputs,
//            in rank order (N n bytes read T times, written once);
//   network: the reduce-scatter between processes, per lane: MPI_Reduce_scatter with process p
//            receiving its T_p pieces (hierarchical, full_lane), or tlc's pairwise exchange
//            (pairwise, commutative ops) in place in the reduced region;
//   consume: every thread copies its own piece out.
// direct (one thread everywhere): MPI_Reduce_scatter_block, or tlc's pairwise exchange
// (pairwise), on the caller's buffers.
// Cost: N n T/bandwidth + network + n bytes copied per thread; pairwise reduce-scatter
// (P-1) alpha + (P-1)/P N n (beta + gamma) ([Thakur] sec. 4.4), per lane N n / L.
#include "algo/across.hpp"
#include "algo/pieces.hpp"
#include "inter/p2p.hpp"

namespace tlc::detail {

void reduce_scatter_block_across(TeamImpl& team, int me, const CallView& view, const Plan& plan) {
  const Call& c = view[me].call;
  const std::size_t e = c.type.size, n = view[me].count;
  const auto N = static_cast<std::size_t>(team.size());
  const auto T = static_cast<std::size_t>(team.threads());
  auto* out = static_cast<std::byte*>(c.recv);

  if (plan.form == Form::direct && plan.algorithm == Algorithm::pairwise) {
    // tlc's pairwise exchange reads the caller's input and writes its block of the result
    // straight into the output; in place (the input in the output, the result at its start,
    // where process 0's input block still is), through a block of staging.
    thread_local std::vector<std::size_t> counts;
    counts.assign(N, n);
    team.grow_staging(me, c.in_place ? n * e : 0);
    auto* block = static_cast<std::byte*>(c.in_place ? team.staging() : c.recv);
    p2p::pairwise_reduce_scatter(team.comm(), static_cast<const std::byte*>(view[me].contribution),
                                 block, counts, c);
    if (c.in_place) copy_bytes(c.recv, block, n * e);
    return;
  }
  if (plan.form == Form::direct) {
    // In place through a block of staging (MPICH 4.0's in-place reduce-scatter copies
    // overlapping ranges).
    team.grow_staging(me, c.in_place ? n * e : 0);
    void* block = c.in_place ? team.staging() : c.recv;
    team.comm().reduce_scatter_block(view[me].contribution, block, n, c);
    copy_bytes(c.recv, block, n * e);
    return;
  }

  Pipeline pipe(team, me, e, n, plan, N);
  thread_local PieceLayout reduced, mine;
  std::size_t built = ~std::size_t{0};
  auto layouts_of = [&](std::size_t i) {
    if (built != i) {
      reduced.build(N, pipe.lanes(), e, [&](std::size_t) { return pipe.count(i); });
      mine.build(T, pipe.lanes(), e, [&](std::size_t) { return pipe.count(i); });
      built = i;
    }
  };
  layouts_of(0);
  const std::size_t reduced_bytes = reduced.total(), region_bytes = reduced_bytes + mine.total();
  pipe.use_staging(region_bytes);
  auto reduced_region = [&](std::size_t i) { return pipe.region(i); };
  auto mine_region = [&](std::size_t i) { return reduced_region(i) + reduced_bytes; };

  auto produce = [&](std::size_t i) {
    layouts_of(i);
    const Slice work = pipe.work_slice(i);
    auto inputs = input_pointers(T);
    for (int l = 0; l < pipe.lanes(); ++l) {
      const Slice part = reduced.part(l, 0);  // every rank block is cut alike
      const Slice s{std::max(work.begin, part.begin), std::min(work.end, part.end)};
      if (s.begin >= s.end) continue;
      for (std::size_t rank = 0; rank < N; ++rank) {
        for (std::size_t t = 0; t < T; ++t)
          inputs[t] =
              contribution_of(view, static_cast<int>(t)) + (rank * n + pipe.first(i) + s.begin) * e;
        void* target = reduced_region(i) + reduced.offset(l, rank) + (s.begin - part.begin) * e;
        reduce_slice_to_all(inputs, std::span<void* const>(&target, 1), e, Slice{0, s.size()},
                            c.combine, c.op_object);
      }
    }
  };
  auto network = [&](std::size_t i, ProcessComm& comm, int l) {
    layouts_of(i);
    thread_local std::vector<MPI_Count> counts;
    const int P = team.processes();
    const std::size_t part = reduced.part(l, 0).size();
    counts.resize(static_cast<std::size_t>(P));
    for (int p = 0; p < P; ++p)
      counts[static_cast<std::size_t>(p)] =
          static_cast<MPI_Count>(static_cast<std::size_t>(team.threads_of(p)) * part);
    std::byte* from = reduced_region(i) + reduced.offset(l, 0);
    std::byte* to = mine_region(i) + mine.offset(l, 0);
    if (plan.algorithm == Algorithm::pairwise) {
      // In place: this process's block of the reduction lands at its place in `from`.
      thread_local std::vector<std::size_t> sizes;
      sizes.assign(counts.begin(), counts.end());
      p2p::pairwise_reduce_scatter(comm, from, sizes, c);
      copy_bytes(to, from + reduced.bytes(l, 0, static_cast<std::size_t>(team.first_rank())),
                 T * part * e);
      return;
    }
    comm.reduce_scatter(from, to, counts, c);
  };
  auto consume = [&](std::size_t i) {
    layouts_of(i);
    const auto t = static_cast<std::size_t>(me);
    for (int l = 0; l < pipe.lanes(); ++l) {
      const Slice part = mine.part(l, t);
      copy_bytes(out + (pipe.first(i) + part.begin) * e, mine_region(i) + mine.offset(l, t),
                 part.size() * e);
    }
  };
  pipe.run(produce, network, consume, false);
}

}  // namespace tlc::detail
