// Hierarchical: every collective across processes through one leader per process (Parsons'
// universal hierarchical algorithm, [Parsons] ch. 2.3; Traff &
// Hunold's "_hier" decompositions, [TraffHunold] sec. 3).
//
// Phases (P processes, T_p threads in process p, N ranks in all, n bytes per rank block):
//   1. begin_call (rendezvous), growing the team's staging buffer when needed.
//   2. Intra-process phase into the staging buffer, threads working in parallel: pack the
//      contributions in global rank order (movers), or reduce them by slices (reductions).
//   3. Gather to thread 0, which runs the matching MPI collective on the staging buffer (the
//      v-form wherever processes hold different numbers of ranks), then releases the others.
//   4. Intra-process phase out of the staging buffer: every thread copies its own output (or,
//      for scan/exscan, the threads compute the prefixes by slices, seeded with the exclusive
//      prefix of the lower processes).
// bcast needs no staging buffer: it travels from the root's buffer and, in the other processes,
// into thread 0's output, from which the other threads copy.
// The next call's begin_call protects the staging buffer from being overwritten early.
// Cost: 2-3 alpha_sync + intra phases of n*T_p bytes at memory speed + the MPI collective of
// n*T_p bytes per process (MPICH's algorithms, [Thakur]). The
// lane algorithms of the inter-process issue replace the single leader.
// A single-process team has nothing to do between processes and runs the sliced algorithm.
#include <algorithm>
#include <cstring>
#include <numeric>
#include <vector>

#include "algo/algorithms.hpp"
#include "algo/network_phase.hpp"
#include "intra/prefix.hpp"
#include "intra/sliced_reduce.hpp"

namespace tlc::detail {

namespace {

// Per-process blocks of a buffer packed in global rank order, from per-rank byte counts.
void per_process(const TeamImpl& team, const std::vector<std::size_t>& rank_offsets,
                 Layout& layout) {
  const int P = team.processes();
  layout.bytes.assign(static_cast<std::size_t>(P), 0);
  layout.displs.assign(static_cast<std::size_t>(P), 0);
  for (int p = 0; p < P; ++p) {
    const auto first = static_cast<std::size_t>(team.first_rank_of(p));
    const auto end = first + static_cast<std::size_t>(team.threads_of(p));
    layout.displs[static_cast<std::size_t>(p)] = static_cast<MPI_Aint>(rank_offsets[first]);
    layout.bytes[static_cast<std::size_t>(p)] =
        static_cast<MPI_Count>(rank_offsets[end] - rank_offsets[first]);
  }
  layout.total = rank_offsets.back();
}

// offsets[r] = bytes of ranks below r (size N + 1).
template <class CountOf>
const std::vector<std::size_t>& packed_offsets(int ranks, CountOf&& bytes_of) {
  thread_local std::vector<std::size_t> offsets;
  offsets.assign(static_cast<std::size_t>(ranks) + 1, 0);
  for (int r = 0; r < ranks; ++r)
    offsets[static_cast<std::size_t>(r) + 1] = offsets[static_cast<std::size_t>(r)] + bytes_of(r);
  return offsets;
}

void copy_bytes(void* to, const void* from, std::size_t bytes) {
  if (bytes && to != from) std::memcpy(to, from, bytes);
}

// Slice `me` of the local contributions, each offset by `offset` bytes, reduced into `out`.
void reduce_local_slice(TeamImpl& team, int me, const CallView& view, std::size_t count,
                        void* out) {
  const Call& c = view[me].call;
  const int threads = team.threads();
  auto inputs = input_pointers(static_cast<std::size_t>(threads));
  for (int t = 0; t < threads; ++t) inputs[static_cast<std::size_t>(t)] = contribution_of(view, t);
  reduce_slice_to_all(inputs, std::span<void* const>(&out, 1), c.type.size,
                      slice_of(count, c.type.size, me, threads), c.combine, c.op_object);
}

void bcast(TeamImpl& team, int me, const CallView& view, NetworkPhase& net) {
  const Call& c = view[me].call;
  const std::size_t bytes = view[me].count * c.type.size;
  const int root_process = team.process_of(c.root);
  const bool here = root_process == team.process();
  // The root process broadcasts straight from the root's buffer; elsewhere the data lands in
  // thread 0's output, which the other threads copy from: no staging buffer, one copy less.
  std::byte* source = here ? recv_of(view, c.root - team.first_rank()) : recv_of(view, 0);
  net.bcast(source, bytes, root_process);
  copy_bytes(c.recv, source, bytes);
  if (team.threads() > 1) team.sync(me);  // the others read the source until their copy is done
}

void reduce(TeamImpl& team, int me, const CallView& view, NetworkPhase& net) {
  const Call& c = view[me].call;
  const std::size_t n = view[me].count, bytes = n * c.type.size;
  const int root_process = team.process_of(c.root);
  team.grow_staging(me, bytes);
  reduce_local_slice(team, me, view, n, team.staging());
  net.reduce(team.staging(), n, c, root_process);
  if (team.global_rank(me) == c.root) copy_bytes(c.recv, team.staging(), bytes);
}

void allreduce(TeamImpl& team, int me, const CallView& view, NetworkPhase& net) {
  const Call& c = view[me].call;
  const std::size_t n = view[me].count, bytes = n * c.type.size;
  if (net.plan().form == Form::direct) {
    // Nothing to combine inside the process: straight from the caller's buffers.
    team.comm().allreduce(c.in_place ? nullptr : c.send, c.recv, n, c);
    return;
  }
  team.grow_staging(me, bytes);
  reduce_local_slice(team, me, view, n, team.staging());
  net.allreduce(team.staging(), n, c);
  copy_bytes(c.recv, team.staging(), bytes);
}

void allgather(TeamImpl& team, int me, const CallView& view, NetworkPhase& net) {
  const Call& c = view[me].call;
  const std::size_t e = c.type.size, n = view[me].count;
  const bool v = c.collective == Collective::allgatherv;
  auto count_of = [&](int r) { return v ? c.recv_counts()[static_cast<std::size_t>(r)] : n; };
  const auto& offsets = packed_offsets(team.size(), [&](int r) { return count_of(r) * e; });
  thread_local Layout layout;
  per_process(team, offsets, layout);
  const int rank = team.global_rank(me);
  if (net.direct() && net.plan().one_thread_everywhere) {
    team.comm().allgather(c.in_place ? nullptr : c.send, c.recv, n * e);
    return;
  }
  if (net.direct()) {
    auto* out = static_cast<std::byte*>(c.recv);
    copy_bytes(out + offsets[static_cast<std::size_t>(rank)], view[me].contribution,
               view[me].contribution_bytes);
    net.allgatherv(out, layout);
    return;
  }
  team.grow_staging(me, layout.total);
  std::byte* staging = team.staging();
  copy_bytes(staging + offsets[static_cast<std::size_t>(rank)], view[me].contribution,
             view[me].contribution_bytes);
  net.allgatherv(staging, layout);
  auto* out = static_cast<std::byte*>(c.recv);
  for (int r = 0; r < team.size(); ++r) {
    if (r == rank && c.in_place) continue;
    const std::size_t displ = v ? c.recv_displs()[static_cast<std::size_t>(r)] : r * n;
    copy_bytes(out + displ * e, staging + offsets[static_cast<std::size_t>(r)], count_of(r) * e);
  }
}

void gather(TeamImpl& team, int me, const CallView& view, NetworkPhase& net) {
  const Call& c = view[me].call;
  const std::size_t e = c.type.size, n = view[me].count;
  const bool v = c.collective == Collective::gatherv;
  const int root_process = team.process_of(c.root);
  const int threads = team.threads();
  if (root_process != team.process() && net.direct()) {
    net.gatherv(static_cast<const std::byte*>(view[me].contribution), view[me].contribution_bytes,
                nullptr, Layout{}, root_process);
    return;
  }
  if (root_process != team.process()) {
    // Pack this process's contributions in rank order; the root process knows the layout.
    const auto& offsets =
        packed_offsets(threads, [&](int t) { return view[t].contribution_bytes; });
    team.grow_staging(me, offsets.back());
    copy_bytes(team.staging() + offsets[static_cast<std::size_t>(me)], view[me].contribution,
               view[me].contribution_bytes);
    net.gatherv(team.staging(), offsets.back(), nullptr, Layout{}, root_process);
    return;
  }
  const int root = c.root - team.first_rank();
  const Call& rc = view[root].call;
  auto count_of = [&](int r) { return v ? rc.recv_counts()[static_cast<std::size_t>(r)] : n; };
  const auto& offsets = packed_offsets(team.size(), [&](int r) { return count_of(r) * e; });
  thread_local Layout layout;
  per_process(team, offsets, layout);
  if (net.direct()) {  // the root is this process's only thread
    auto* out = static_cast<std::byte*>(rc.recv);
    copy_bytes(out + offsets[static_cast<std::size_t>(c.root)], view[me].contribution,
               view[me].contribution_bytes);
    net.gatherv(nullptr, 0, out, layout, root_process);
    return;
  }
  team.grow_staging(me, layout.total);
  std::byte* staging = team.staging();
  copy_bytes(staging + offsets[static_cast<std::size_t>(team.global_rank(me))],
             view[me].contribution, view[me].contribution_bytes);
  net.gatherv(nullptr, 0, staging, layout, root_process);
  if (me != root) return;
  auto* out = static_cast<std::byte*>(rc.recv);
  for (int r = 0; r < team.size(); ++r) {
    if (r == c.root && rc.in_place) continue;
    const std::size_t displ = v ? rc.recv_displs()[static_cast<std::size_t>(r)] : r * n;
    copy_bytes(out + displ * e, staging + offsets[static_cast<std::size_t>(r)], count_of(r) * e);
  }
}

void scatter(TeamImpl& team, int me, const CallView& view, NetworkPhase& net) {
  const Call& c = view[me].call;
  const std::size_t e = c.type.size, n = view[me].count;
  const bool v = c.collective == Collective::scatterv;
  const int root_process = team.process_of(c.root);
  const int threads = team.threads();
  const bool skip_me = team.global_rank(me) == c.root && c.in_place;
  if (root_process != team.process() && net.direct()) {
    net.scatterv(nullptr, Layout{}, static_cast<std::byte*>(c.recv), c.recv_count * e,
                 root_process);
    return;
  }
  if (root_process != team.process()) {
    const auto& offsets =
        packed_offsets(threads, [&](int t) { return view[t].call.recv_count * e; });
    team.grow_staging(me, offsets.back());
    net.scatterv(nullptr, Layout{}, team.staging(), offsets.back(), root_process);
    copy_bytes(c.recv, team.staging() + offsets[static_cast<std::size_t>(me)], c.recv_count * e);
    return;
  }
  const int root = c.root - team.first_rank();
  const Call& rc = view[root].call;
  auto count_of = [&](int r) { return v ? rc.send_counts()[static_cast<std::size_t>(r)] : n; };
  const auto& offsets = packed_offsets(team.size(), [&](int r) { return count_of(r) * e; });
  thread_local Layout layout;
  per_process(team, offsets, layout);
  if (net.direct()) {  // the root is this process's only thread
    const std::byte* source = contribution_of(view, root);
    net.scatterv(source, layout, nullptr, 0, root_process);
    if (!skip_me)
      copy_bytes(c.recv, source + offsets[static_cast<std::size_t>(c.root)], count_of(c.root) * e);
    return;
  }
  team.grow_staging(me, layout.total);
  std::byte* staging = team.staging();
  // All threads of the root process share packing the root's send buffer in rank order.
  thread_local CopyPlan plan;
  plan.clear();
  const std::byte* source = contribution_of(view, root);
  for (int r = 0; r < team.size(); ++r) {
    const std::size_t displ = v ? rc.send_displs()[static_cast<std::size_t>(r)] : r * n;
    plan.add(source + displ * e, count_of(r) * e, staging + offsets[static_cast<std::size_t>(r)]);
  }
  plan.run_share(me, threads);
  net.scatterv(staging, layout, nullptr, 0, root_process);
  if (!skip_me)
    copy_bytes(c.recv, staging + offsets[static_cast<std::size_t>(team.global_rank(me))],
               count_of(team.global_rank(me)) * e);
  team.sync(me);  // the others read the root's send buffer while packing
}

void alltoall(TeamImpl& team, int me, const CallView& view, NetworkPhase& net) {
  const Call& c = view[me].call;
  const std::size_t e = c.type.size, n = view[me].count;
  const bool v = c.collective == Collective::alltoallv;
  const int threads = team.threads(), P = team.processes(), N = team.size();
  const auto T = static_cast<std::size_t>(threads);
  // Bytes local thread s sends to rank t, and local thread t receives from rank s.
  auto sent = [&](int s, int t) {
    return (v ? view[s].call.send_counts()[static_cast<std::size_t>(t)] : n) * e;
  };
  auto received = [&](int s, int t) {
    return (v ? view[t].call.recv_counts()[static_cast<std::size_t>(s)] : n) * e;
  };
  // Send side: [process q][local s][rank t of q]; receive side: [process p][rank s of p][local t].
  thread_local std::vector<std::size_t> row;     // row[s * P + q]: bytes local s sends to process q
  thread_local std::vector<std::size_t> column;  // column[s]: bytes rank s sends to this process
  row.assign(T * static_cast<std::size_t>(P), 0);
  column.assign(static_cast<std::size_t>(N), 0);
  for (int s = 0; s < threads; ++s)
    for (int q = 0; q < P; ++q)
      for (int t = team.first_rank_of(q); t < team.first_rank_of(q) + team.threads_of(q); ++t)
        row[static_cast<std::size_t>(s * P + q)] += sent(s, t);
  for (int s = 0; s < N; ++s)
    for (int t = 0; t < threads; ++t) column[static_cast<std::size_t>(s)] += received(s, t);
  thread_local Layout send_layout, recv_layout;
  send_layout.bytes.assign(static_cast<std::size_t>(P), 0);
  send_layout.displs.assign(static_cast<std::size_t>(P), 0);
  recv_layout.bytes.assign(static_cast<std::size_t>(P), 0);
  recv_layout.displs.assign(static_cast<std::size_t>(P), 0);
  std::size_t send_total = 0, recv_total = 0;
  for (int q = 0; q < P; ++q) {
    const auto Q = static_cast<std::size_t>(q);
    send_layout.displs[Q] = static_cast<MPI_Aint>(send_total);
    recv_layout.displs[Q] = static_cast<MPI_Aint>(recv_total);
    for (int s = 0; s < threads; ++s) send_total += row[static_cast<std::size_t>(s * P + q)];
    for (int s = team.first_rank_of(q); s < team.first_rank_of(q) + team.threads_of(q); ++s)
      recv_total += column[static_cast<std::size_t>(s)];
    send_layout.bytes[Q] = static_cast<MPI_Count>(send_total) - send_layout.displs[Q];
    recv_layout.bytes[Q] = static_cast<MPI_Count>(recv_total) - recv_layout.displs[Q];
  }
  if (net.direct() && net.plan().one_thread_everywhere) {
    team.comm().alltoall(c.send, c.recv, n * e);
    return;
  }
  if (net.direct()) {
    net.alltoallv(static_cast<const std::byte*>(c.send), send_layout,
                  static_cast<std::byte*>(c.recv), recv_layout);
    return;
  }
  team.grow_staging(me, send_total + recv_total);
  std::byte* send_staging = team.staging();
  std::byte* recv_staging = send_staging + send_total;

  // Pack my blocks.
  const auto* mine = static_cast<const std::byte*>(view[me].contribution);
  for (int q = 0; q < P; ++q) {
    std::size_t at = static_cast<std::size_t>(send_layout.displs[static_cast<std::size_t>(q)]);
    for (int s = 0; s < me; ++s) at += row[static_cast<std::size_t>(s * P + q)];
    for (int t = team.first_rank_of(q); t < team.first_rank_of(q) + team.threads_of(q); ++t) {
      const std::size_t displ = v ? c.send_displs()[static_cast<std::size_t>(t)] : t * n;
      copy_bytes(send_staging + at, mine + displ * e, sent(me, t));
      at += sent(me, t);
    }
  }
  // Unpack the blocks addressed to me. Their offsets depend on the other threads' counts,
  // which live in those threads' memory: read them before the network step, while every
  // thread is still inside the call.
  auto* out = static_cast<std::byte*>(c.recv);
  thread_local std::vector<std::size_t> my_blocks;
  my_blocks.resize(static_cast<std::size_t>(N));
  std::size_t at = 0;
  for (int s = 0; s < N; ++s) {
    std::size_t block = at;
    for (int t = 0; t < me; ++t) block += received(s, t);
    my_blocks[static_cast<std::size_t>(s)] = block;
    at += column[static_cast<std::size_t>(s)];
  }
  net.alltoallv(send_staging, send_layout, recv_staging, recv_layout);
  for (int s = 0; s < N; ++s) {
    const std::size_t displ = v ? c.recv_displs()[static_cast<std::size_t>(s)] : s * n;
    copy_bytes(out + displ * e, recv_staging + my_blocks[static_cast<std::size_t>(s)],
               received(s, me));
  }
}

void reduce_scatter_block(TeamImpl& team, int me, const CallView& view, NetworkPhase& net) {
  const Call& c = view[me].call;
  const std::size_t e = c.type.size, n = view[me].count;
  const auto N = static_cast<std::size_t>(team.size());
  const auto T = static_cast<std::size_t>(team.threads());
  if (net.direct() && net.plan().one_thread_everywhere) {
    // MPI's own reduce_scatter_block on the caller's buffers; in place through a block of
    // staging (MPICH 4.0's in-place reduce-scatter copies overlapping ranges).
    team.grow_staging(me, c.in_place ? n * e : 0);
    void* block = c.in_place ? team.staging() : c.recv;
    team.comm().reduce_scatter_block(view[me].contribution, block, n, c);
    copy_bytes(c.recv, block, n * e);
    return;
  }
  team.grow_staging(me, (N + T) * n * e);
  std::byte* reduced = team.staging();
  std::byte* mine = reduced + N * n * e;
  reduce_local_slice(team, me, view, N * n, reduced);
  thread_local std::vector<MPI_Count> counts;
  counts.resize(static_cast<std::size_t>(team.processes()));
  for (int p = 0; p < team.processes(); ++p)
    counts[static_cast<std::size_t>(p)] =
        static_cast<MPI_Count>(static_cast<std::size_t>(team.threads_of(p)) * n);
  net.reduce_scatter(reduced, mine, counts, c);
  copy_bytes(c.recv, mine + static_cast<std::size_t>(me) * n * e, n * e);
}

void scan(TeamImpl& team, int me, const CallView& view, NetworkPhase& net) {
  const Call& c = view[me].call;
  const std::size_t e = c.type.size, n = view[me].count;
  const int threads = team.threads();
  team.grow_staging(me, n * e);
  // The process's total becomes, after MPI_Exscan, the reduction over all lower processes.
  reduce_local_slice(team, me, view, n, team.staging());
  net.exscan(team.staging(), n, c);
  auto inputs = input_pointers(static_cast<std::size_t>(threads));
  auto outputs = output_pointers(static_cast<std::size_t>(threads));
  for (int t = 0; t < threads; ++t) {
    inputs[static_cast<std::size_t>(t)] = contribution_of(view, t);
    outputs[static_cast<std::size_t>(t)] = recv_of(view, t);
  }
  prefix_slice(inputs, outputs, e, slice_of(n, e, me, threads), c.combine, c.op_object,
               c.collective == Collective::exscan, team.process() > 0 ? team.staging() : nullptr);
  team.sync(me);
}

}  // namespace

void run_across_processes(TeamImpl& team, int me, CallDescriptor d, const Plan& plan) {
  const auto view = begin_validated(team, me, std::move(d));
  if (plan.form == Form::pipelined) return run_pipelined(team, me, view, plan);
  NetworkPhase net(team, me, plan);
  switch (view[me].call.collective) {
    case Collective::barrier:
      return net.barrier();
    case Collective::bcast:
      return bcast(team, me, view, net);
    case Collective::reduce:
      return reduce(team, me, view, net);
    case Collective::allreduce:
      return allreduce(team, me, view, net);
    case Collective::allgather:
    case Collective::allgatherv:
      return allgather(team, me, view, net);
    case Collective::gather:
    case Collective::gatherv:
      return gather(team, me, view, net);
    case Collective::scatter:
    case Collective::scatterv:
      return scatter(team, me, view, net);
    case Collective::alltoall:
    case Collective::alltoallv:
      return alltoall(team, me, view, net);
    case Collective::reduce_scatter_block:
      return reduce_scatter_block(team, me, view, net);
    case Collective::scan:
    case Collective::exscan:
      return scan(team, me, view, net);
  }
}

}  // namespace tlc::detail
