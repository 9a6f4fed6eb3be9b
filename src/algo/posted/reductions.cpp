// The posted schedules of reduce, allreduce, reduce_scatter_block, scan and exscan
// (algo/posted/schedule.hpp). T threads here, P processes, n elements per thread:
//   reduce, allreduce: pack reduces the T contributions in rank order into `in` (n elements);
//     post: MPI_Ireduce / MPI_Iallreduce in place on it; unpack: the output (reduce: the root's)
//     copies `in`.
//   reduce_scatter_block: pack reduces the T contributions (size() blocks of n) into `in`;
//     post: MPI_Ireduce_scatter, each process receiving the blocks of its threads into `out`;
//     unpack: each thread copies its block.
//   scan, exscan: pack writes the T local inclusive prefixes into `in` (T blocks of n) and the
//     process total into `out`; post: MPI_Iexscan in place on `out` (the reduction over lower
//     processes); unpack: each thread combines that with its local prefix (scan) or the one
//     before it (exscan), lower ranks on the left.
// Rank order is kept throughout, so non-commutative ops and the bitwise result of a fixed team
// shape hold as in the blocking forms.
#include <algorithm>
#include <cstring>
#include <vector>

#include "algo/algorithms.hpp"
#include "algo/posted/schedule.hpp"
#include "inter/process_comm.hpp"
#include "intra/prefix.hpp"
#include "intra/sliced_reduce.hpp"
#include "team/team_impl.hpp"

namespace tlc::detail::posted {

namespace {

const Call& first_call(const PostedCall& call) { return call.entries[0].call; }
std::size_t element_bytes(const PostedCall& call) { return first_call(call).type.size; }

// Per-thread scratch (algo/algorithms.hpp): no allocation per call.
std::span<const void*> contributions(const PostedCall& call) {
  std::span<const void*> inputs = input_pointers(call.entries.size());
  for (std::size_t t = 0; t < call.entries.size(); ++t) inputs[t] = call.entries[t].contribution;
  return inputs;
}

}  // namespace

// Elements of the reduction a pack covers (reduce_scatter_block: every rank's block).
std::size_t pack_elements(const PostedCall& call) {
  const Call& c = first_call(call);
  const std::size_t n = call.entries[0].count;
  return c.collective == Collective::reduce_scatter_block
             ? n * static_cast<std::size_t>(call.team.size())
             : n;
}

// With one process, reduce, allreduce, scan and exscan write the outputs in their pack.
bool outputs_in_pack(const PostedCall& call) {
  return call.team.processes() == 1 &&
         first_call(call).collective != Collective::reduce_scatter_block;
}

// The pack's slices (slice_tasks).
int task_count(const PostedCall& call) {
  return slice_tasks(pack_elements(call) * element_bytes(call), call.team.threads());
}

// One thread in this process, several processes: an allreduce's MPI step runs on the caller's
// output itself (the blocking direct form's traffic), with nothing to pack or unpack.
bool allreduce_on_output(const PostedCall& call) {
  return call.team.threads() == 1 && call.team.processes() > 1 &&
         first_call(call).collective == Collective::allreduce;
}

namespace {

// A nonblocking or persistent allreduce runs the step between processes that the blocking call
// runs where that is one of tlc's point-to-point algorithms, as rounds of point-to-point
// requests (persistent ones for a persistent call) on the caller's output (one thread here) or
// on staging; else MPI's collective (and so where the plan cuts the step in parts). Decided from
// what every process knows alike (the team's shape and the call), so their steps pair up.
PostedCall::Step allreduce_step(const PostedCall& call) {
  const Call& c = first_call(call);
  const PlanQuery q{Collective::allreduce, call.entries[0].count, c.type.size, c.commutative,
                    false};
  switch (posted_calls(call.team).plan(call.team, q).algorithm) {
    case Algorithm::recursive_doubling:
      return PostedCall::Step::recursive_doubling;
    case Algorithm::rabenseifner:
      return PostedCall::Step::rabenseifner;
    default:
      return PostedCall::Step::mpi_collective;
  }
}

}  // namespace

int prepare_reduction(PostedCall& call) {
  if (allreduce_on_output(call)) return 0;
  TeamImpl& team = call.team;
  const Call& c = first_call(call);
  const std::size_t e = element_bytes(call), n = call.entries[0].count;
  const auto threads = static_cast<std::size_t>(team.threads());
  const std::size_t elements = pack_elements(call);
  const bool scans = c.collective == Collective::scan || c.collective == Collective::exscan;
  if (!outputs_in_pack(call)) {
    call.in.resize((scans ? threads : 1) * elements * e);
    if (scans) call.out.resize(n * e);
  }
  if (c.collective == Collective::reduce_scatter_block && team.processes() > 1) {
    call.out.resize(threads * n * e);
    call.counts.resize(static_cast<std::size_t>(team.processes()));
    for (int p = 0; p < team.processes(); ++p)
      call.counts[static_cast<std::size_t>(p)] =
          static_cast<MPI_Count>(static_cast<std::size_t>(team.threads_of(p)) * n);
  }
  return elements == 0 ? 0 : task_count(call);
}

void pack_reduction_task(PostedCall& call, int task) {
  TeamImpl& team = call.team;
  const Call& c = first_call(call);
  const std::size_t e = element_bytes(call), n = call.entries[0].count;
  const auto threads = static_cast<std::size_t>(team.threads());
  const std::size_t elements = pack_elements(call);
  const Slice slice = slice_of(elements, e, task, task_count(call));
  const std::span<const void*> inputs = contributions(call);
  const bool direct = outputs_in_pack(call);
  switch (c.collective) {
    case Collective::reduce:
    case Collective::allreduce:
    case Collective::reduce_scatter_block: {
      std::vector<void*> targets;
      if (!direct) {
        targets.push_back(call.in.data());
      } else if (c.collective == Collective::allreduce) {
        for (const PostedEntry& entry : call.entries) targets.push_back(entry.call.recv);
      } else {  // reduce, one process: the root's output
        targets.push_back(
            call.entries[static_cast<std::size_t>(c.root - team.first_rank())].call.recv);
      }
      reduce_slice_to_all(inputs, targets, e, slice, c.combine, c.op_object);
      return;
    }
    default: {  // scan, exscan
      std::span<void*> prefixes = output_pointers(threads);
      if (direct) {
        for (std::size_t t = 0; t < threads; ++t) prefixes[t] = call.entries[t].call.recv;
        prefix_slice(inputs, prefixes, e, slice, c.combine, c.op_object,
                     c.collective == Collective::exscan, nullptr);
        return;
      }
      for (std::size_t t = 0; t < threads; ++t) prefixes[t] = call.in.data() + t * n * e;
      prefix_slice(inputs, prefixes, e, slice, c.combine, c.op_object, false, nullptr);
      if (slice.size())
        std::memcpy(call.out.data() + slice.begin * e,
                    static_cast<const std::byte*>(prefixes[threads - 1]) + slice.begin * e,
                    slice.size() * e);
      return;
    }
  }
}

void post_reduction(PostedCall& call, PostedOp& op, ProcessComm& comm, int i) {
  TeamImpl& team = call.team;
  const Call& c = first_call(call);
  const std::size_t e = element_bytes(call);
  // Part i's elements of the block (all of them in one part).
  const PartBytes part = part_bytes(call, i, call.entries[0].count * e, e);
  const std::size_t at = part.offset, n = part.length / e;
  switch (c.collective) {
    case Collective::reduce:
      comm.post_reduce_in_place(op, call.in.data() + at, n, c, team.process_of(c.root));
      return;
    case Collective::allreduce: {
      // One thread here: on the caller's output (its input sent from where it is); else on the
      // process's contribution in staging, in place.
      const bool on_output = allreduce_on_output(call);
      const void* send = on_output && !c.in_place
                             ? static_cast<const std::byte*>(call.entries[0].contribution) + at
                             : nullptr;
      void* recv = on_output ? static_cast<std::byte*>(c.recv) + at : call.in.data() + at;
      if (call.step == PostedCall::Step::undecided) call.step = allreduce_step(call);
      if (call.step == PostedCall::Step::mpi_collective || call.parts() > 1) {
        comm.post_allreduce(op, send, recv, n, c);
      } else {
        comm.post_allreduce_rounds(op, send, recv, n, c,
                                   call.step == PostedCall::Step::rabenseifner,
                                   call.persistent ? 0 : call.pack_sequence);
      }
      return;
    }
    case Collective::reduce_scatter_block:  // one part (step_parts)
      comm.post_reduce_scatter(op, call.in.data(), call.out.data(), call.counts, c);
      return;
    default:
      comm.post_exscan_in_place(op, call.out.data() + at, n, c);
      return;
  }
}

void unpack_reduction(PostedCall& call, int me) {
  TeamImpl& team = call.team;
  const PostedEntry& mine = call.entries[static_cast<std::size_t>(me)];
  const Call& c = mine.call;
  const std::size_t e = c.type.size, n = mine.count, bytes = n * e;
  auto* recv = static_cast<std::byte*>(c.recv);
  if (outputs_in_pack(call) || allreduce_on_output(call)) return;
  switch (c.collective) {
    case Collective::reduce:
      if (team.global_rank(me) == c.root && bytes) std::memcpy(recv, call.in.data(), bytes);
      return;
    case Collective::allreduce:
      if (bytes) std::memcpy(recv, call.in.data(), bytes);
      return;
    case Collective::reduce_scatter_block: {
      const std::byte* block =
          team.processes() > 1
              ? call.out.data() + static_cast<std::size_t>(me) * bytes
              : call.in.data() + static_cast<std::size_t>(team.global_rank(me)) * bytes;
      if (bytes) std::memcpy(recv, block, bytes);
      return;
    }
    default: {  // scan, exscan
      const bool exclusive = c.collective == Collective::exscan;
      // The reduction over the lower processes (what MPI_Exscan left in `out`).
      const std::byte* lower = team.process() > 0 ? call.out.data() : nullptr;
      const std::byte* local = exclusive ? (me > 0 ? call.in.data() + (me - 1) * bytes : nullptr)
                                         : call.in.data() + static_cast<std::size_t>(me) * bytes;
      if (bytes == 0 || (!local && !lower)) return;  // rank 0's exscan output stays untouched
      if (local) {
        std::memcpy(recv, local, bytes);
        if (lower) c.combine(c.op_object, recv, lower, n, /*in_is_lower=*/true);
      } else {
        std::memcpy(recv, lower, bytes);
      }
      return;
    }
  }
}

}  // namespace tlc::detail::posted
