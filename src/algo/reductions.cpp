// reduce, allreduce, scan and exscan across processes (Parsons [Parsons] ch. 2.3; Traff &
// Hunold [TraffHunold] sec. 3 and 5; docs/references.md). Chunk i of the result depends on chunk
// i of the inputs only, so a chunk is the same collective on a smaller block.
//
// Steps (T threads here, P processes, n bytes per rank, L lanes):
//   produce: the workers reduce their slice of chunk i of the T contributions, in rank order,
//            into the region: n bytes read T times, written once;
//   network: the process-level reduction of the region (in place): MPI_Allreduce / MPI_Reduce /
//            MPI_Exscan by thread 0 (hierarchical) or per lane part (full_lane), or tlc's
//            recursive doubling or Rabenseifner allreduce, binomial reduce or recursive doubling
//            exscan per lane part;
//   consume: allreduce: every thread copies the result into its output; reduce: the root copies
//            it (nothing when the region is the root's output); scan, exscan: the threads compute
//            their slices of every output's prefix, seeded with the reduction over the lower
//            processes (what MPI_Exscan left in the region).
// Regions: one chunk travels in the team's staging buffer; pipelined chunks travel in a caller's
// output where the result ends up anyway (the root's for reduce in the root process, thread 0's
// for allreduce; the other threads copy from it), else in two staging regions used in turn.
// direct (one thread here; the multi-sender algorithms: one thread everywhere): the network
// step on the caller's buffers, with no staging, no copies and no pipeline: allreduce runs
// MPI_Allreduce, recursive doubling or Rabenseifner in the output; the binomial reduce runs in
// the root's output and, elsewhere, in a private accumulator; the recursive-doubling scan and
// exscan read the caller's input and write its output.
// Cost: n T/bandwidth + network(n) + copies, e.g. allreduce with MPICH's Rabenseifner
// 2 log P alpha + 2 n beta + n gamma ([Thakur] sec. 4.5 and 5.1), per lane n/L.
#include "algo/across.hpp"
#include "inter/p2p.hpp"
#include "intra/prefix.hpp"

namespace tlc::detail {

namespace {

// The step between processes of a reduction, the one place where the plan's algorithm becomes
// a call: n elements of `in` (this process's contribution) combined across processes into `out`
// (in_place: out holds the contribution). `what`: allreduce; reduce (into the root process's
// out; in place unless binomial); scan or exscan (the combination over the processes up to this
// one, or below it; not recursive doubling: exscan in place only).
void reduction_step(ProcessComm& comm, const Plan& plan, const Call& c, Collective what,
                    const std::byte* in, std::byte* out, std::size_t n, bool in_place,
                    int root_process) {
  const Algorithm a = plan.algorithm;
  switch (what) {
    case Collective::allreduce:
      if (a == Algorithm::recursive_doubling)
        return p2p::recursive_doubling_allreduce(comm, in, out, n, c);
      if (a == Algorithm::rabenseifner) return p2p::rabenseifner_allreduce(comm, in, out, n, c);
      return comm.allreduce(in_place ? nullptr : in, out, n, c);
    case Collective::reduce:
      if (a != Algorithm::binomial) return comm.reduce_in_place(out, n, c, root_process);
      if (in_place)
        return p2p::binomial_reduce(comm, out, n, c, root_process,
                                    p2p::binomial_reduce_segment_bytes);
      return p2p::binomial_reduce(comm, in, out, n, c, root_process,
                                  p2p::binomial_reduce_segment_bytes);
    default:  // scan, exscan
      if (a == Algorithm::recursive_doubling)
        return p2p::recursive_doubling_scan(comm, in, out, n, c, what == Collective::exscan);
      return comm.exscan_in_place(out, n, c);
  }
}

// One thread here: nothing to combine inside the process, the network step runs on the
// caller's buffers (Planner: allreduce with any algorithm, reduce with the binomial tree, scan
// and exscan with recursive doubling).
void reduction_direct(TeamImpl& team, const CallDescriptor& d, const Plan& plan) {
  const Call& c = d.call;
  const std::size_t n = d.count, bytes = n * c.type.size;
  auto* out = static_cast<std::byte*>(c.recv);
  if (c.collective == Collective::reduce) {  // binomial: the root's output is the accumulator
    const int root_process = team.process_of(c.root);
    thread_local std::vector<std::byte> accumulator;
    if (root_process != team.process()) {
      if (accumulator.size() < bytes) accumulator.resize(bytes);
      out = accumulator.data();
    }
    return reduction_step(team.comm(), plan, c, c.collective,
                          static_cast<const std::byte*>(d.contribution), out, n, false,
                          root_process);
  }
  // Out of place the first exchange of an allreduce reads the input where it is (no copy into
  // the output first).
  const bool scans = c.collective == Collective::scan || c.collective == Collective::exscan;
  const auto* in = scans        ? static_cast<const std::byte*>(d.contribution)
                   : c.in_place ? out
                                : static_cast<const std::byte*>(c.send);
  reduction_step(team.comm(), plan, c, c.collective, in, out, n, c.in_place && !scans, -1);
}

}  // namespace

void reduction_across(TeamImpl& team, int me, const CallView& view, const Plan& plan) {
  const Call& c = view[me].call;
  const std::size_t e = c.type.size, n = view[me].count;
  const Collective collective = c.collective;
  if (plan.form == Form::direct) return reduction_direct(team, view[me], plan);
  const int threads = team.threads();
  Pipeline pipe(team, me, e, n, plan);
  const bool pipelined = pipe.chunks() > 1;
  const int root_process = collective == Collective::reduce ? team.process_of(c.root) : -1;
  const bool root_here = root_process == team.process();
  // Where pipelined chunks travel: a caller's output where the result ends up anyway.
  std::byte* result = !pipelined  ? nullptr
                      : root_here ? recv_of(view, c.root - team.first_rank())
                      : collective == Collective::allreduce ? recv_of(view, 0)
                                                            : nullptr;
  if (result)
    pipe.set_reuses_regions(false);
  else
    pipe.use_staging(pipe.count(0) * e);
  auto region = [&](std::size_t i) { return result ? result + pipe.offset(i) : pipe.region(i); };
  auto* out = static_cast<std::byte*>(c.recv);

  auto produce = [&](std::size_t i) {
    auto inputs = input_pointers(static_cast<std::size_t>(threads));
    for (int t = 0; t < threads; ++t)
      inputs[static_cast<std::size_t>(t)] = contribution_of(view, t) + pipe.offset(i);
    void* target = region(i);
    reduce_slice_to_all(inputs, std::span<void* const>(&target, 1), e, pipe.work_slice(i),
                        c.combine, c.op_object);
  };
  auto network = [&](std::size_t i, ProcessComm& comm, int l) {
    const Slice part = pipe.lane_part(i, l);
    std::byte* at = region(i) + part.begin * e;
    // In place on the region; scan and exscan: the combination over the lower processes.
    reduction_step(comm, plan, c, collective == Collective::scan ? Collective::exscan : collective,
                   at, at, part.size(), true, root_process);
  };
  auto consume = [&](std::size_t i) {
    switch (collective) {
      case Collective::allreduce:
        copy_bytes(out + pipe.offset(i), region(i), pipe.count(i) * e);
        return;
      case Collective::reduce:
        if (team.global_rank(me) == c.root)
          copy_bytes(out + pipe.offset(i), region(i), pipe.count(i) * e);
        return;
      default: {
        auto inputs = input_pointers(static_cast<std::size_t>(threads));
        auto outputs = output_pointers(static_cast<std::size_t>(threads));
        for (int t = 0; t < threads; ++t) {
          inputs[static_cast<std::size_t>(t)] = contribution_of(view, t) + pipe.offset(i);
          outputs[static_cast<std::size_t>(t)] = recv_of(view, t) + pipe.offset(i);
        }
        const std::byte* seed = team.process() > 0 ? region(i) : nullptr;
        prefix_slice(inputs, outputs, e, slice_of(pipe.count(i), e, me, threads), c.combine,
                     c.op_object, collective == Collective::exscan, seed);
        return;
      }
    }
  };
  // Threads read the result holder's output until their last copy (allreduce in chunks), or
  // write each other's outputs (scan, exscan): nobody returns before everybody is done.
  const bool shared =
      threads > 1 && ((collective == Collective::allreduce && result) ||
                      collective == Collective::scan || collective == Collective::exscan);
  pipe.run(produce, network, consume, shared);
}

}  // namespace tlc::detail
