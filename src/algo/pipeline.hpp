// The pipeline engine of the collectives across processes that run in chunks
// (algo/pipelined.cpp: bcast and the reductions; algo/pipelined_movers.cpp: allgather, gather,
// scatter, alltoall, reduce_scatter_block), after Traff & Hunold
// ([TraffHunold] sec. 5, pipelining the node-local and lane phases) and
// Jain et al. ([Jain] sec. III-E, the chunked shared buffer).
//
// Roles: drivers run the inter-process collective of each chunk (hierarchical: thread 0 on the
// process communicator; full_lane: each lane thread on its part of the chunk, on its lane).
// Workers produce chunks: the threads that drive nothing, or every thread when all of them
// drive a lane.
// Phases, per chunk i (elements [iC, iC + C) of every rank block, K chunks; a chunk travels in
// region i: a part of a caller's output where the result ends up anyway, or else one of two
// staging regions used in turn):
//   1. produce: workers wait until chunk i-2 has been consumed by everybody (its region is free),
//      then fill their share of region i from the inputs, post "produced i".
//   2. network: drivers wait for "produced i" from all workers, run the MPI collective on (their
//      lane's part of) region i, post "sent i".
//   3. consume: every thread waits for "sent i" from all drivers and takes its share of chunk i
//      out of the region, post "consumed i". Workers consume chunk i-1 right after producing
//      chunk i, so their work on chunk i overlaps the network phase of chunk i-1.
// Cost: (K + 1) * max(intra(C), network(C)) instead of K times their sum.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "intra/sliced_reduce.hpp"
#include "select/planner.hpp"
#include "team/team_impl.hpp"

namespace tlc::detail {

class Pipeline {
 public:
  // count elements per rank block in all; `pieces` rank blocks travel in one region (1 for
  // bcast and the reductions, whose region holds one block; the number of ranks for the movers,
  // whose region holds a piece of every rank's block).
  Pipeline(TeamImpl& team, int me, std::size_t element_size, std::size_t count, const Plan& plan,
           std::size_t pieces = 1)
      : team_(team), me_(me), e_(element_size), n_(count) {
    on_lanes_ = uses_lanes(plan.algorithm);
    lanes_ = on_lanes_ ? team.lanes() : 1;
    chunk_ = chunk_elements(plan, element_size, pieces);
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

  // Elements per rank block in one chunk: the same on every process (it depends on the plan's
  // chunk size, the team's shape and the call only). A chunk is one pipeline unit per lane: each
  // lane's MPI call keeps the plan's chunk size, so more lanes do not mean more, smaller MPI calls
  // (on a global-lock MPI, where lanes run one after the other, chunks cut in L made L lanes
  // slower than one).
  static std::size_t chunk_elements(const Plan& plan, std::size_t element_size,
                                    std::size_t pieces) noexcept {
    const auto lanes = static_cast<std::size_t>(std::max(1, plan.lanes));
    return std::max<std::size_t>(
        1, plan.chunk_bytes * lanes / (element_size * std::max<std::size_t>(1, pieces)));
  }
  std::size_t chunk_elements() const noexcept { return chunk_; }
  int lanes() const noexcept { return lanes_; }
  // The part of chunk i that lane l carries (elements relative to the chunk); the network
  // callback gets the parts of the lanes this thread drives.
  Slice lane_part(std::size_t i, int l) const noexcept { return slice_of(count(i), e_, l, lanes_); }
  // This thread's index among the workers and their number (-1 and the number: no worker).
  int worker() const noexcept { return worker_; }
  int workers() const noexcept { return workers_; }
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
            if (team_.lane_thread(l) == me_) network(i, team_.lane(l), lane_part(i, l));
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

// The non-v movers: allgather, gather, scatter, alltoall, and reduce_scatter_block, whose
// chunks hold a piece of every rank block (Chunking::pieces; algo/pipelined_movers.cpp).
void run_pipelined_mover(TeamImpl& team, int me, const TeamImpl::CallView& view, const Plan& plan);

}  // namespace tlc::detail
