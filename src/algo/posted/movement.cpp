// The posted schedules of barrier, bcast, allgather(v), gather(v), scatter(v) and alltoall(v)
// (algo/posted/schedule.hpp). T threads here, P processes, rank blocks of n elements:
//   barrier: post MPI_Ibarrier.
//   bcast: pack copies the root's buffer into `in` (root's process); post MPI_Ibcast on it;
//     unpack: every other thread copies `in`.
//   allgather(v), gather(v): pack copies each thread's block to its rank's place in `in`, rank
//     blocks packed in rank order (a process's blocks are contiguous); post MPI_Iallgatherv in
//     place / MPI_Igatherv to the root's process; unpack: each output (gather: the root's)
//     takes every rank block from `in`.
//   scatter(v): pack copies the root's blocks into `in`, packed in rank order; post
//     MPI_Iscatterv, each process receiving its threads' blocks into `out`; unpack: each thread
//     copies its block.
//   alltoall(v): pack copies every block into `in` ordered by destination process, then source
//     thread, then destination rank; post MPI_Ialltoallv; `out` then holds, per source process,
//     per source rank, per destination thread here, the blocks; unpack: each thread collects
//     its blocks.
#include <algorithm>
#include <cstring>
#include <vector>

#include "algo/posted/schedule.hpp"
#include "inter/process_comm.hpp"
#include "intra/copy_plan.hpp"
#include "intra/sliced_reduce.hpp"
#include "team/team_impl.hpp"

namespace tlc::detail::posted {

namespace {

using Bytes = std::vector<std::size_t>;

std::size_t at(std::span<const std::size_t> values, int i) {
  return values[static_cast<std::size_t>(i)];
}

// Element counts of every rank's block in rank-packed collectives: what each thread passes
// (allgather, gather, scatter: n each) or the v-variant's counts of the thread that knows them.
std::vector<std::size_t> rank_counts(const PostedCall& call, std::span<const std::size_t> counts) {
  const int size = call.team.size();
  std::vector<std::size_t> out(static_cast<std::size_t>(size), call.entries[0].count);
  if (!counts.empty())
    for (int r = 0; r < size; ++r) out[static_cast<std::size_t>(r)] = at(counts, r);
  return out;
}

// Offsets (elements) of rank blocks packed in rank order, size() + 1 entries.
std::vector<std::size_t> packed_offsets(std::span<const std::size_t> counts) {
  std::vector<std::size_t> offsets(counts.size() + 1, 0);
  for (std::size_t r = 0; r < counts.size(); ++r) offsets[r + 1] = offsets[r] + counts[r];
  return offsets;
}

// The MPI byte counts and displacements of groups of rank blocks, one group per process.
void process_groups(const PostedCall& call, std::span<const std::size_t> offsets, std::size_t e,
                    std::vector<MPI_Count>& bytes, std::vector<MPI_Aint>& displs) {
  const TeamImpl& team = call.team;
  const int P = team.processes();
  bytes.resize(static_cast<std::size_t>(P));
  displs.resize(static_cast<std::size_t>(P));
  for (int p = 0; p < P; ++p) {
    const auto first = static_cast<std::size_t>(team.first_rank_of(p));
    const auto end = first + static_cast<std::size_t>(team.threads_of(p));
    bytes[static_cast<std::size_t>(p)] =
        static_cast<MPI_Count>((offsets[end] - offsets[first]) * e);
    displs[static_cast<std::size_t>(p)] = static_cast<MPI_Aint>(offsets[first] * e);
  }
}

const PostedEntry& entry_of_rank(const PostedCall& call, int rank) {
  return call.entries[static_cast<std::size_t>(rank - call.team.first_rank())];
}

// The counts that lay out a gatherv at the root's process (the root's) or a gather anywhere.
std::span<const std::size_t> layout_counts(const PostedCall& call) {
  const Call& c = call.entries[0].call;
  switch (c.collective) {
    case Collective::allgatherv:
      return call.entries[0].layout.recv_counts;
    case Collective::gatherv:
      return entry_of_rank(call, c.root).layout.recv_counts;
    case Collective::scatterv:
      return entry_of_rank(call, c.root).layout.send_counts;
    default:
      return {};
  }
}

// alltoall(v): elements thread s here sends to rank j, and thread j here receives from rank g.
std::size_t sent(const PostedCall& call, int s, int j) {
  const PostedEntry& entry = call.entries[static_cast<std::size_t>(s)];
  return entry.call.collective == Collective::alltoall ? entry.count
                                                       : at(entry.layout.send_counts, j);
}
std::size_t received(const PostedCall& call, int j, int g) {
  const PostedEntry& entry = call.entries[static_cast<std::size_t>(j)];
  return entry.call.collective == Collective::alltoall ? entry.count
                                                       : at(entry.layout.recv_counts, g);
}
std::size_t send_displ(const PostedEntry& entry, int j) {
  return entry.call.collective == Collective::alltoall ? entry.count * static_cast<std::size_t>(j)
                                                       : at(entry.layout.send_displs, j);
}
std::size_t recv_displ(const PostedEntry& entry, int g) {
  return entry.call.collective == Collective::alltoall ? entry.count * static_cast<std::size_t>(g)
                                                       : at(entry.layout.recv_displs, g);
}

void pack_alltoall(PostedCall& call) {
  TeamImpl& team = call.team;
  const std::size_t e = call.entries[0].call.type.size;
  const int T = team.threads(), P = team.processes(), N = team.size();
  // Send side: to process q, from thread s, to rank j of q.
  call.counts.assign(static_cast<std::size_t>(P), 0);
  call.displs.assign(static_cast<std::size_t>(P), 0);
  std::size_t total = 0;
  for (int q = 0; q < P; ++q) {
    call.displs[static_cast<std::size_t>(q)] = static_cast<MPI_Aint>(total * e);
    for (int s = 0; s < T; ++s)
      for (int j = team.first_rank_of(q); j < team.first_rank_of(q) + team.threads_of(q); ++j)
        total += sent(call, s, j);
    call.counts[static_cast<std::size_t>(q)] =
        static_cast<MPI_Count>(total * e) - call.displs[static_cast<std::size_t>(q)];
  }
  call.in.resize(total * e);
  std::byte* to = call.in.data();
  for (int q = 0; q < P; ++q)
    for (int s = 0; s < T; ++s) {
      const PostedEntry& entry = call.entries[static_cast<std::size_t>(s)];
      const auto* send = static_cast<const std::byte*>(entry.contribution);
      for (int j = team.first_rank_of(q); j < team.first_rank_of(q) + team.threads_of(q); ++j) {
        const std::size_t bytes = sent(call, s, j) * e;
        copy_bytes(to, send + send_displ(entry, j) * e, bytes);
        to += bytes;
      }
    }
  // Receive side: from rank g (process q), to thread j here; offsets per (g, j) in `out`.
  call.offsets.assign(static_cast<std::size_t>(N) * static_cast<std::size_t>(T), 0);
  call.recv_counts.assign(static_cast<std::size_t>(P), 0);
  call.recv_displs.assign(static_cast<std::size_t>(P), 0);
  std::size_t offset = 0;
  for (int q = 0; q < P; ++q) {
    call.recv_displs[static_cast<std::size_t>(q)] = static_cast<MPI_Aint>(offset * e);
    for (int g = team.first_rank_of(q); g < team.first_rank_of(q) + team.threads_of(q); ++g)
      for (int j = 0; j < T; ++j) {
        call.offsets[static_cast<std::size_t>(g) * static_cast<std::size_t>(T) +
                     static_cast<std::size_t>(j)] = offset;
        offset += received(call, j, g);
      }
    call.recv_counts[static_cast<std::size_t>(q)] =
        static_cast<MPI_Count>(offset * e) - call.recv_displs[static_cast<std::size_t>(q)];
  }
  if (P > 1) call.out.resize(offset * e);
}

void unpack_alltoall(PostedCall& call, int me) {
  TeamImpl& team = call.team;
  const PostedEntry& mine = call.entries[static_cast<std::size_t>(me)];
  const std::size_t e = mine.call.type.size;
  const int T = team.threads();
  const std::byte* from = team.processes() > 1 ? call.out.data() : call.in.data();
  auto* recv = static_cast<std::byte*>(mine.call.recv);
  for (int g = 0; g < team.size(); ++g)
    copy_bytes(recv + recv_displ(mine, g) * e,
               from + call.offsets[static_cast<std::size_t>(g) * static_cast<std::size_t>(T) +
                                   static_cast<std::size_t>(me)] *
                          e,
               received(call, me, g) * e);
}

// A bcast runs the blocking call's binomial tree where its plan takes it, as rounds of
// point-to-point requests (persistent ones for a persistent call) on the caller's buffer (one
// thread here) or on staging, in one message per edge: with two processes nobody forwards, and
// above the tree's segment the blocking call pipelines, which rounds do not, so larger ones on
// more processes run MPI's. Decided alike on every process from the team's shape and the call.
PostedCall::Step bcast_step(const PostedCall& call) {
  const Call& c = call.entries[0].call;
  const std::size_t bytes = call.entries[0].count * c.type.size;
  constexpr std::size_t unsegmented_bytes = 256 * 1024;
  const PlanQuery q{Collective::bcast, call.entries[0].count, c.type.size, c.commutative, false};
  if (posted_calls(call.team).plan(call.team, q).algorithm != Algorithm::binomial ||
      (call.team.processes() > 2 && bytes > unsegmented_bytes))
    return PostedCall::Step::mpi_collective;
  return PostedCall::Step::binomial;
}

}  // namespace

// One thread in this process, several processes: bcast and alltoall (not in place) run their MPI
// step on the caller's buffers (rank blocks in rank order are the process groups MPI takes),
// with nothing to pack or unpack.
bool on_callers_buffers(const PostedCall& call) {
  const Call& c = call.entries[0].call;
  return call.team.threads() == 1 && call.team.processes() > 1 &&
         (c.collective == Collective::bcast ||
          (c.collective == Collective::alltoall && !c.in_place));
}

bool movement_direct(const PostedCall& call) {
  const Call& c = call.entries[0].call;
  if (call.team.processes() > 1 || c.collective == Collective::barrier) return false;
  const bool alltoall =
      c.collective == Collective::alltoall || c.collective == Collective::alltoallv;
  return !(alltoall && c.in_place);
}

int movement_direct_tasks(const PostedCall& call) {
  const Call& c = call.entries[0].call;
  const int T = call.team.threads();
  if (c.collective != Collective::bcast) return T;
  // bcast: one output per thread but one input; slices of it (copied into every output) let
  // every thread copy, as the blocking sliced bcast does.
  return slice_tasks(call.entries[0].count * c.type.size, T);
}

void pack_movement_direct_task(PostedCall& call, int task) {
  TeamImpl& team = call.team;
  const Call& c = call.entries[0].call;
  const std::size_t e = c.type.size;
  const int T = team.threads();
  const PostedEntry& out = call.entries[static_cast<std::size_t>(task)];
  auto* recv = static_cast<std::byte*>(out.call.recv);
  switch (c.collective) {
    case Collective::bcast: {  // task: a slice of the root's buffer, into every other output
      const Slice slice = slice_of(out.count, e, task, movement_direct_tasks(call));
      const auto* from =
          static_cast<const std::byte*>(call.entries[static_cast<std::size_t>(c.root)].call.recv) +
          slice.begin * e;
      for (int t = 0; t < T; ++t)
        if (t != c.root)
          copy_bytes(static_cast<std::byte*>(call.entries[static_cast<std::size_t>(t)].call.recv) +
                         slice.begin * e,
                     from, slice.size() * e);
      return;
    }
    case Collective::allgather:
    case Collective::allgatherv:
      for (int s = 0; s < T; ++s) {
        const PostedEntry& in = call.entries[static_cast<std::size_t>(s)];
        const std::size_t displ = c.collective == Collective::allgather
                                      ? out.count * static_cast<std::size_t>(s)
                                      : at(out.layout.recv_displs, s);
        copy_bytes(recv + displ * e, in.contribution, in.contribution_bytes);
      }
      return;
    case Collective::gather:
    case Collective::gatherv: {  // task: the input block of thread `task`, into the root's output
      const PostedEntry& root = call.entries[static_cast<std::size_t>(c.root)];
      const std::size_t displ = c.collective == Collective::gather
                                    ? root.count * static_cast<std::size_t>(task)
                                    : at(root.layout.recv_displs, task);
      copy_bytes(static_cast<std::byte*>(root.call.recv) + displ * e, out.contribution,
                 out.contribution_bytes);
      return;
    }
    case Collective::scatter:
    case Collective::scatterv: {
      if (task == c.root && c.in_place) return;  // the root's block stays in its send buffer
      const PostedEntry& root = call.entries[static_cast<std::size_t>(c.root)];
      const std::size_t count =
          c.collective == Collective::scatter ? root.count : at(root.layout.send_counts, task);
      const std::size_t displ = c.collective == Collective::scatter
                                    ? root.count * static_cast<std::size_t>(task)
                                    : at(root.layout.send_displs, task);
      copy_bytes(recv, static_cast<const std::byte*>(root.call.send) + displ * e, count * e);
      return;
    }
    case Collective::alltoall:
    case Collective::alltoallv:
      for (int s = 0; s < T; ++s) {
        const PostedEntry& in = call.entries[static_cast<std::size_t>(s)];
        copy_bytes(recv + recv_displ(out, s) * e,
                   static_cast<const std::byte*>(in.contribution) + send_displ(in, task) * e,
                   sent(call, s, task) * e);
      }
      return;
    default:
      return;
  }
}

void pack_movement(PostedCall& call) {
  TeamImpl& team = call.team;
  const Call& c = call.entries[0].call;
  const std::size_t e = c.type.size;
  const int first = team.first_rank(), T = team.threads();
  if (on_callers_buffers(call)) {
    if (c.collective == Collective::alltoall) {  // groups of the process's ranks, both sides
      const PostedEntry& mine = call.entries[0];
      const int P = team.processes();
      call.counts.resize(static_cast<std::size_t>(P));
      call.displs.resize(static_cast<std::size_t>(P));
      for (int q = 0; q < P; ++q) {
        call.counts[static_cast<std::size_t>(q)] =
            static_cast<MPI_Count>(static_cast<std::size_t>(team.threads_of(q)) * mine.count * e);
        call.displs[static_cast<std::size_t>(q)] =
            static_cast<MPI_Aint>(static_cast<std::size_t>(team.first_rank_of(q)) * mine.count * e);
      }
    }
    return;
  }
  switch (c.collective) {
    case Collective::barrier:
      return;
    case Collective::bcast: {
      const std::size_t bytes = call.entries[0].count * e;
      call.in.resize(bytes);
      if (team.process_of(c.root) == team.process())
        copy_bytes(call.in.data(), entry_of_rank(call, c.root).call.recv, bytes);
      return;
    }
    case Collective::alltoall:
    case Collective::alltoallv:
      return pack_alltoall(call);
    case Collective::allgather:
    case Collective::allgatherv:
    case Collective::gather:
    case Collective::gatherv: {
      const bool gatherv_elsewhere =
          c.collective == Collective::gatherv && team.process_of(c.root) != team.process();
      // A gatherv's counts are known at the root only: elsewhere the blocks here are laid out
      // by the sizes the threads pass (ranks outside this process get empty blocks).
      std::vector<std::size_t> counts(static_cast<std::size_t>(team.size()), 0);
      if (gatherv_elsewhere) {
        for (int t = 0; t < T; ++t)
          counts[static_cast<std::size_t>(first + t)] =
              call.entries[static_cast<std::size_t>(t)].contribution_bytes / e;
      } else {
        counts = rank_counts(call, layout_counts(call));
      }
      call.offsets = packed_offsets(counts);
      call.in.resize(call.offsets.back() * e);
      for (int t = 0; t < T; ++t) {
        const PostedEntry& entry = call.entries[static_cast<std::size_t>(t)];
        copy_bytes(
            call.in.data() + call.offsets[static_cast<std::size_t>(first + t)] * e,
            entry.contribution,
            std::min(entry.contribution_bytes, counts[static_cast<std::size_t>(first + t)] * e));
      }
      process_groups(call, call.offsets, e, call.counts, call.displs);
      return;
    }
    case Collective::scatter:
    case Collective::scatterv: {
      const bool root_here = team.process_of(c.root) == team.process();
      std::vector<std::size_t> counts(static_cast<std::size_t>(team.size()), 0);
      if (root_here) {
        counts = rank_counts(call, layout_counts(call));
      } else {
        for (int t = 0; t < T; ++t)
          counts[static_cast<std::size_t>(first + t)] =
              call.entries[static_cast<std::size_t>(t)].call.recv_count;
      }
      call.offsets = packed_offsets(counts);
      if (root_here) {
        const PostedEntry& root = entry_of_rank(call, c.root);
        const auto* send = static_cast<const std::byte*>(root.call.send);
        call.in.resize(call.offsets.back() * e);
        for (int r = 0; r < team.size(); ++r) {
          const std::size_t displ = c.collective == Collective::scatter
                                        ? call.offsets[static_cast<std::size_t>(r)]
                                        : at(root.layout.send_displs, r);
          copy_bytes(call.in.data() + call.offsets[static_cast<std::size_t>(r)] * e,
                     send + displ * e, counts[static_cast<std::size_t>(r)] * e);
        }
        process_groups(call, call.offsets, e, call.counts, call.displs);
      } else {
        call.out.resize((call.offsets[static_cast<std::size_t>(first + T)] -
                         call.offsets[static_cast<std::size_t>(first)]) *
                        e);
      }
      return;
    }
    default:
      return;
  }
}

void post_movement(PostedCall& call, PostedOp& op, ProcessComm& comm, int i) {
  TeamImpl& team = call.team;
  const Call& c = call.entries[0].call;
  const std::size_t e = c.type.size;
  const int first = team.first_rank(), T = team.threads();
  // Part i's share of every process's block (the whole layout in one part).
  auto send_layout = [&] { return part_layout(call, i, call.counts, call.displs, false); };
  if (on_callers_buffers(call)) {
    const PostedEntry& mine = call.entries[0];
    if (c.collective == Collective::bcast) {
      const PartBytes part = part_bytes(call, i, mine.count * e, e);
      if (call.step == PostedCall::Step::undecided) call.step = bcast_step(call);
      if (call.step == PostedCall::Step::binomial && call.parts() == 1)
        return comm.post_bcast_rounds(op, mine.call.recv, part.length, team.process_of(c.root), c,
                                      call.persistent ? 0 : call.pack_sequence);
      return comm.post_bcast(op, static_cast<std::byte*>(mine.call.recv) + part.offset, part.length,
                             team.process_of(c.root));
    }
    // One part: every message at once (what the blocking call's isend algorithm sends;
    // persistent requests for a persistent call), as the staged form below.
    if (call.parts() == 1) {
      call.step = PostedCall::Step::all_at_once;
      return comm.post_alltoallv_rounds(op, mine.contribution, call.counts, call.displs,
                                        mine.call.recv, call.counts, call.displs, c, mine.count * e,
                                        call.persistent ? 0 : call.pack_sequence);
    }
    const PartLayout layout = send_layout();
    return comm.post_alltoallv(op, mine.contribution, layout.counts, layout.displs, mine.call.recv,
                               layout.counts, layout.displs);
  }
  switch (c.collective) {
    case Collective::barrier:  // one part (step_parts)
      return comm.post_barrier(op);
    case Collective::bcast: {
      const PartBytes part = part_bytes(call, i, call.in.size(), e);
      if (call.step == PostedCall::Step::undecided) call.step = bcast_step(call);
      if (call.step == PostedCall::Step::binomial && call.parts() == 1)
        return comm.post_bcast_rounds(op, call.in.data(), part.length, team.process_of(c.root), c,
                                      call.persistent ? 0 : call.pack_sequence);
      return comm.post_bcast(op, call.in.data() + part.offset, part.length,
                             team.process_of(c.root));
    }
    case Collective::alltoall:
    case Collective::alltoallv: {
      // One part: every message at once, as rounds (the one-thread form above sends the same
      // messages: a process's blocks for another process travel in one message either way). The
      // tag carries an alltoall's block, which every process has alike (an alltoallv's differ).
      if (call.parts() == 1) {
        call.step = PostedCall::Step::all_at_once;
        return comm.post_alltoallv_rounds(
            op, call.in.data(), call.counts, call.displs, call.out.data(), call.recv_counts,
            call.recv_displs, c,
            c.collective == Collective::alltoall ? call.entries[0].count * e : 0,
            call.persistent ? 0 : call.pack_sequence);
      }
      const PartLayout sends = send_layout();
      const PartLayout receives = part_layout(call, i, call.recv_counts, call.recv_displs, true);
      return comm.post_alltoallv(op, call.in.data(), sends.counts, sends.displs, call.out.data(),
                                 receives.counts, receives.displs);
    }
    case Collective::allgather:
    case Collective::allgatherv: {
      const PartLayout layout = send_layout();
      return comm.post_allgatherv_in_place(op, call.in.data(), layout.counts, layout.displs);
    }
    case Collective::gather:
    case Collective::gatherv: {
      const std::size_t begin = call.offsets[static_cast<std::size_t>(first)] * e;
      const std::size_t end = call.offsets[static_cast<std::size_t>(first + T)] * e;
      const PartBytes mine = part_bytes(call, i, end - begin, e);
      const PartLayout layout = send_layout();
      // Elsewhere than at the root's process the receive side is unused: no pointer that could
      // equal the send block's.
      const int root_process = team.process_of(c.root);
      return comm.post_gatherv(op, call.in.data() + begin + mine.offset, mine.length,
                               root_process == team.process() ? call.in.data() : nullptr,
                               layout.counts, layout.displs, root_process);
    }
    case Collective::scatter:
    case Collective::scatterv: {
      const std::size_t begin = call.offsets[static_cast<std::size_t>(first)] * e;
      const std::size_t end = call.offsets[static_cast<std::size_t>(first + T)] * e;
      const PartBytes mine = part_bytes(call, i, end - begin, e);
      const PartLayout layout = send_layout();
      return comm.post_scatterv(op, call.in.data(), layout.counts, layout.displs,
                                call.out.data() + mine.offset, mine.length,
                                team.process_of(c.root));
    }
    default:
      return;
  }
}

void unpack_movement(PostedCall& call, int me) {
  TeamImpl& team = call.team;
  const PostedEntry& mine = call.entries[static_cast<std::size_t>(me)];
  const Call& c = mine.call;
  const std::size_t e = c.type.size;
  const int rank = team.global_rank(me);
  auto* recv = static_cast<std::byte*>(c.recv);
  if (movement_direct(call) || on_callers_buffers(call)) return;  // nothing in staging
  switch (c.collective) {
    case Collective::barrier:
      return;
    case Collective::bcast:
      if (rank != c.root) copy_bytes(recv, call.in.data(), call.in.size());
      return;
    case Collective::alltoall:
    case Collective::alltoallv:
      return unpack_alltoall(call, me);
    case Collective::allgather:
    case Collective::allgatherv:
    case Collective::gather:
    case Collective::gatherv: {
      const bool to_all =
          c.collective == Collective::allgather || c.collective == Collective::allgatherv;
      if (!to_all && rank != c.root) return;
      for (int r = 0; r < team.size(); ++r) {
        const std::size_t from = call.offsets[static_cast<std::size_t>(r)];
        const std::size_t count = call.offsets[static_cast<std::size_t>(r) + 1] - from;
        const std::size_t displ =
            c.collective == Collective::allgather || c.collective == Collective::gather
                ? mine.count * static_cast<std::size_t>(r)
                : at(mine.layout.recv_displs, r);
        copy_bytes(recv + displ * e, call.in.data() + from * e, count * e);
      }
      return;
    }
    case Collective::scatter:
    case Collective::scatterv: {
      if (rank == c.root && c.in_place) return;  // the root's block stays in its send buffer
      const bool root_here = team.process_of(c.root) == team.process();
      const std::size_t from = call.offsets[static_cast<std::size_t>(rank)];
      const std::size_t count = call.offsets[static_cast<std::size_t>(rank) + 1] - from;
      const std::byte* source =
          root_here ? call.in.data() + from * e
                    : call.out.data() +
                          (from - call.offsets[static_cast<std::size_t>(team.first_rank())]) * e;
      copy_bytes(recv, source, count * e);
      return;
    }
    default:
      return;
  }
}

}  // namespace tlc::detail::posted
