// Pipelined collectives across processes: bcast, reduce, allreduce, scan and exscan of large
// buffers, in chunks, the intra-process phases of chunk i+1 overlapping the network phase of
// chunk i (Traff & Hunold, shared/seeds/003_153763b6ba621384.txt sec. 5, on pipelining the
// node-local and lane phases; Jain et al., shared/seeds/002_56062f46934e0b06.txt sec. III-E for
// the chunked shared buffer). These are the collectives whose chunk is a collective of its own:
// chunk i of the result depends on chunk i of the inputs only.
//
// Roles: drivers run the inter-process collective of each chunk (hierarchical: thread 0 on the
// process communicator; full_lane: each lane thread on its part of the chunk, on its lane).
// Workers produce chunks: the threads that drive nothing, or every thread when all of them
// drive a lane.
// Phases, per chunk i of C bytes (K chunks; a chunk travels in region i: the part of a caller's
// output where the result ends up anyway, or else one of two staging regions used in turn):
//   1. produce: workers wait until chunk i-2 has been consumed by everybody (its region is free),
//      then reduce their slice of chunk i of all inputs into the region (reductions; a bcast
//      produces nothing), post "produced i".
//   2. network: drivers wait for "produced i" from all workers, run the MPI collective on (their
//      part of) the region, post "sent i".
//   3. consume: every thread waits for "sent i" from all drivers and takes chunk i out of the
//      region: a copy into its own output (bcast, allreduce: from the root's or thread 0's
//      output), its slice of the prefixes of every output (scan, exscan), nothing (reduce: the
//      region is the root's output); post "consumed i". Workers consume chunk i-1 right after
//      producing chunk i, so their work on chunk i overlaps the network phase of chunk i-1.
// Where threads read or write each other's outputs (bcast, allreduce, scan, exscan) everybody
// waits at the end for the last "consumed" of all, so no output is still in use when its owner
// returns.
// Cost: (K + 1) * max(intra(C), network(C)) instead of K times their sum.
//
// Every process must make the same MPI calls, so whether and how a call pipelines depends on
// the byte count, the algorithm, the team's chunk size and the shape of the whole team only.
#include <algorithm>
#include <cstring>
#include <vector>

#include "algo/algorithms.hpp"
#include "intra/prefix.hpp"
#include "intra/sliced_reduce.hpp"

namespace tlc::detail {

namespace {

bool pipelinable(Collective c) {
  return c == Collective::bcast || c == Collective::reduce || c == Collective::allreduce ||
         c == Collective::scan || c == Collective::exscan;
}

class Pipeline {
 public:
  Pipeline(TeamImpl& team, int me, const Call& c, std::size_t count, Algorithm algorithm)
      : team_(team), me_(me), e_(c.type.size), n_(count) {
    on_lanes_ = algorithm != Algorithm::hierarchical;
    lanes_ = on_lanes_ ? team.lanes() : 1;
    // A chunk is one pipeline unit per lane: each lane's MPI call keeps the team's chunk size,
    // so more lanes do not mean more, smaller MPI calls (on a global-lock MPI, where lanes run
    // one after the other, 1 MiB chunks cut in 4 made 4 lanes twice as slow as 1 at 16 MiB).
    chunk_ = std::max<std::size_t>(
        1, team.pipeline_chunk_bytes() * static_cast<std::size_t>(lanes_) / e_);
    chunks_ = (n_ + chunk_ - 1) / chunk_;
    const int threads = team.threads();
    int drivers = 0;
    for (int t = 0; t < threads; ++t) drivers += drives(t) ? 1 : 0;
    dedicated_ = drivers < threads;
    for (int t = 0; t < threads; ++t) {
      if (t == me && works(t)) worker_ = workers_;
      workers_ += works(t) ? 1 : 0;
    }
  }

  std::size_t chunk_elements() const noexcept { return chunk_; }
  // Whether chunk i travels in the region of chunk i-2 (two staging regions), so that producing
  // it must wait until that chunk has been consumed; true unless said otherwise.
  void set_reuses_regions(bool reuses) noexcept { reuses_regions_ = reuses; }
  std::size_t count(std::size_t i) const noexcept { return std::min(chunk_, n_ - i * chunk_); }
  std::size_t offset(std::size_t i) const noexcept { return i * chunk_ * e_; }  // bytes
  // This worker's slice of chunk i (elements relative to the chunk); empty for non-workers.
  Slice work_slice(std::size_t i) const noexcept {
    return worker_ < 0 ? Slice{} : slice_of(count(i), e_, worker_, workers_);
  }
  // This thread's share of consuming chunk i among all threads (elements relative to the chunk).
  Slice thread_slice(std::size_t i) const noexcept {
    return slice_of(count(i), e_, me_, team_.threads());
  }

  // produce(i), network(i, comm, part) and consume(i) are the three phases above; part is the
  // element range of chunk i that this MPI call covers.
  template <class Produce, class Network, class Consume>
  void run(Produce&& produce, Network&& network, Consume&& consume, bool shared_outputs) {
    std::uint64_t& base = team_.pipeline_chunks(me_);
    const auto all = [](int) { return true; };
    const auto works = [this](int t) { return this->works(t); };
    const auto drives = [this](int t) { return this->drives(t); };
    auto produce_step = [&](std::size_t i) {
      if (i >= 2 && reuses_regions_) team_.wait_posted(TeamImpl::consumed, base + i - 1, all);
      produce(i);
      team_.post(me_, TeamImpl::produced, base + i + 1);
    };
    auto network_step = [&](std::size_t i) {
      team_.wait_posted(TeamImpl::produced, base + i + 1, works);
      try {
        if (!on_lanes_) {
          network(i, team_.comm(), Slice{0, count(i)});
        } else {
          for (int l = 0; l < lanes_; ++l)
            if (team_.lane_thread(l) == me_)
              network(i, team_.lane(l), slice_of(count(i), e_, l, lanes_));
        }
      } catch (...) {
        team_.abort("an inter-process collective of a pipelined chunk failed");
        throw;
      }
      team_.post(me_, TeamImpl::sent, base + i + 1);
    };
    auto consume_step = [&](std::size_t i) {
      team_.wait_posted(TeamImpl::sent, base + i + 1, drives);
      consume(i);
      team_.post(me_, TeamImpl::consumed, base + i + 1);
    };

    const bool driver = drives(me_);
    for (std::size_t i = 0; i < chunks_; ++i) {
      if (worker_ >= 0) produce_step(i);
      if (driver) {
        network_step(i);
        consume_step(i);
      } else if (i >= 1) {
        consume_step(i - 1);
      }
    }
    if (!driver && chunks_ > 0) consume_step(chunks_ - 1);
    if (shared_outputs) team_.wait_posted(TeamImpl::consumed, base + chunks_, all);
    base += chunks_;
  }

 private:
  bool drives(int t) const noexcept {
    if (!on_lanes_) return t == 0;
    for (int l = 0; l < lanes_; ++l)
      if (team_.lane_thread(l) == t) return true;
    return false;
  }
  bool works(int t) const noexcept { return !dedicated_ || !drives(t); }

  TeamImpl& team_;
  int me_;
  std::size_t e_, n_;
  bool on_lanes_ = false;
  int lanes_ = 1;
  std::size_t chunk_ = 1, chunks_ = 0;
  bool dedicated_ = false;
  bool reuses_regions_ = true;
  int worker_ = -1, workers_ = 0;
};

// Reduces this worker's slice of chunk i of every thread's contribution into region, with the
// caller's own op (c).
void produce_reduction(const Pipeline& pipe, const CallView& view, const Call& c, int threads,
                       std::size_t i, std::byte* region) {
  const std::size_t e = c.type.size;
  auto inputs = input_pointers(static_cast<std::size_t>(threads));
  for (int t = 0; t < threads; ++t)
    inputs[static_cast<std::size_t>(t)] = contribution_of(view, t) + pipe.offset(i);
  void* out = region;
  reduce_slice_to_all(inputs, std::span<void* const>(&out, 1), e, pipe.work_slice(i), c.combine,
                      c.op_object);
}

}  // namespace

bool pipelines(const TeamImpl& team, Collective c, std::size_t bytes, Algorithm algorithm) {
  if (!pipelinable(c) || is_multi_sender(algorithm)) return false;
  if (c == Collective::bcast && !team.pipeline_bcast()) return false;
  // One thread everywhere and one leader: the MPI collective runs on the callers' buffers and
  // there is no intra-process phase to overlap.
  if (algorithm == Algorithm::hierarchical && team.shape().equal_processes && team.threads() == 1)
    return false;
  return bytes >= 2 * team.pipeline_chunk_bytes();
}

void run_pipelined(TeamImpl& team, int me, const CallView& view, Algorithm algorithm) {
  const Call& c = view[me].call;
  const int threads = team.threads();
  const std::size_t e = c.type.size, n = view[me].count;
  Pipeline pipe(team, me, c, n, algorithm);
  const std::size_t chunk_bytes = pipe.chunk_elements() * e;
  const bool rooted = c.collective == Collective::bcast || c.collective == Collective::reduce;
  const bool root_process = rooted && team.process_of(c.root) == team.process();
  // Where the chunks travel. A caller's output where the result must end up anyway: the root's
  // (bcast and reduce in the root process), thread 0's (bcast elsewhere, allreduce), which the
  // other threads then copy from; otherwise (scan and exscan, whose outputs are computed from
  // the region, and reduce outside the root process, whose outputs are not written) two
  // staging regions in turn.
  std::byte* result = root_process ? recv_of(view, c.root - team.first_rank())
                      : c.collective == Collective::bcast || c.collective == Collective::allreduce
                          ? recv_of(view, 0)
                          : nullptr;
  team.grow_staging(me, result ? 0 : 2 * chunk_bytes);
  pipe.set_reuses_regions(!result);
  std::byte* staging = team.staging();
  auto region = [&](std::size_t i) {
    return result ? result + pipe.offset(i) : staging + (i % 2) * chunk_bytes;
  };
  auto part_of = [&](std::size_t i, Slice part) { return region(i) + part.begin * e; };
  auto* out = static_cast<std::byte*>(c.recv);
  auto copy_out = [&](std::size_t i) {
    if (region(i) != out + pipe.offset(i))
      std::memcpy(out + pipe.offset(i), region(i), pipe.count(i) * e);
  };
  auto produce = [&](std::size_t i) { produce_reduction(pipe, view, c, threads, i, region(i)); };
  // Threads read the result holder's output until their last copy.
  const bool shared = result && c.collective != Collective::reduce && threads > 1;

  switch (c.collective) {
    case Collective::bcast: {
      const int root = team.process_of(c.root);
      return pipe.run([](std::size_t) {},
                      [&](std::size_t i, ProcessComm& comm, Slice part) {
                        comm.bcast(part_of(i, part), part.size() * e, root);
                      },
                      copy_out, shared);
    }
    case Collective::allreduce:
      return pipe.run(
          produce,
          [&](std::size_t i, ProcessComm& comm, Slice part) {
            comm.allreduce_in_place(part_of(i, part), part.size(), c);
          },
          copy_out, shared);
    case Collective::reduce: {
      // Reduced straight into the root's output in the root process.
      const int root = team.process_of(c.root);
      return pipe.run(
          produce,
          [&](std::size_t i, ProcessComm& comm, Slice part) {
            comm.reduce_in_place(part_of(i, part), part.size(), c, root);
          },
          [](std::size_t) {}, false);
    }
    case Collective::scan:
    case Collective::exscan: {
      // The process's total of chunk i becomes, after MPI_Exscan, the reduction of chunk i over
      // all lower processes: the seed of this process's prefixes.
      const bool exclusive = c.collective == Collective::exscan;
      return pipe.run(
          produce,
          [&](std::size_t i, ProcessComm& comm, Slice part) {
            comm.exscan_in_place(part_of(i, part), part.size(), c);
          },
          [&](std::size_t i) {
            auto inputs = input_pointers(static_cast<std::size_t>(threads));
            auto outputs = output_pointers(static_cast<std::size_t>(threads));
            for (int t = 0; t < threads; ++t) {
              inputs[static_cast<std::size_t>(t)] = contribution_of(view, t) + pipe.offset(i);
              outputs[static_cast<std::size_t>(t)] = recv_of(view, t) + pipe.offset(i);
            }
            const std::byte* seed = team.process() > 0 ? region(i) : nullptr;
            prefix_slice(inputs, outputs, e, pipe.thread_slice(i), c.combine, c.op_object,
                         exclusive, seed);
          },
          true);  // threads write each other's outputs
    }
    default:
      return;
  }
}

}  // namespace tlc::detail
