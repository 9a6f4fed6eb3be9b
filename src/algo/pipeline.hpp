// The engine of every collective across processes (docs/design.md section 6): a composition is
// three steps over staging regions, produce / network / consume, and this engine runs them, in
// chunks when the plan pipelines (Traff & Hunold [TraffHunold] sec. 5, pipelining the node-local
// and lane phases; Jain et al. [Jain] sec. III-C, multiple buffers and pipelining) and as one chunk
// otherwise. The compositions are algo/bcast.cpp, algo/reductions.cpp, algo/gathers.cpp,
// algo/scatter.cpp, algo/alltoall.cpp and algo/reduce_scatter_block.cpp.
//
// Roles: drivers run the inter-process step of each chunk (one leader: thread 0 on the process
// communicator; lanes: each lane's thread on its lane, for its part of the chunk). Workers
// produce chunks: every thread with one chunk, and when pipelining the threads that drive
// nothing (every thread when all of them drive a lane).
// Phases, per chunk i (elements [iC, iC + C) of every rank block, K chunks; a chunk travels in
// region i: a part of a caller's output where the result ends up anyway, or a staging region):
//   1. produce: workers wait until chunk i-2 has been consumed by everybody (when regions are
//      reused, two in turn), then fill their share of region i from the inputs, post "produced".
//   2. network: drivers wait for "produced i" from all workers, run the inter-process step on
//      (their lane's part of) region i, post "sent i". full_lane and the multi-sender algorithms
//      are this step's variants (MPI's collective, or tlc's point-to-point algorithm, per lane).
//   3. consume: every thread waits for "sent i" from all drivers and takes its share of chunk i
//      out of the region, post "consumed i". Workers consume chunk i-1 right after producing
//      chunk i, so their work on chunk i overlaps the network phase of chunk i-1.
// Cost: (K + 1) * max(intra(C), network(C)) instead of K times their sum; with one chunk,
// intra + network + intra, with two flag rendezvous (produced, sent).
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
  // count elements per rank block (0 for v-variants); `pieces` rank blocks travel in one region
  // (1 for bcast and the reductions, whose region holds one block; the number of ranks for the
  // movers, whose region holds a piece of every rank's block). Not pipelined: one chunk holding
  // everything (count(0) == count).
  Pipeline(TeamImpl& team, int me, std::size_t element_size, std::size_t count, const Plan& plan,
           std::size_t pieces = 1)
      : team_(team), me_(me), e_(element_size), n_(count) {
    // Who drives the network step is the plan's to say (src/select/): thread 0 on the process
    // communicator, or each lane's thread on its lane.
    on_lanes_ = plan.leader() == Leader::lane_threads;
    lanes_ = on_lanes_ ? plan.lanes : 1;
    if (plan.form == Form::pipelined) {
      chunk_ = chunk_elements(plan, element_size, pieces);
      chunks_ = (n_ + chunk_ - 1) / chunk_;
    } else {
      chunk_ = whole;
      chunks_ = 1;
    }
    const int threads = team.threads();
    int drivers = 0;
    for (int t = 0; t < threads; ++t) drivers += drives(t) ? 1 : 0;
    // With one chunk there is nothing to overlap: every thread works.
    dedicated_ = chunks_ > 1 && drivers < threads;
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
  std::size_t chunks() const noexcept { return chunks_; }
  int lanes() const noexcept { return lanes_; }
  // Elements of chunk i of a block of `block` elements (v-variants: each rank's own count).
  std::size_t piece(std::size_t i, std::size_t block) const noexcept {
    const std::size_t begin = i * chunk_;
    return block > begin ? std::min(chunk_, block - begin) : 0;
  }
  // The part of chunk i that lane l carries (elements relative to the chunk).
  Slice lane_part(std::size_t i, int l) const noexcept { return slice_of(count(i), e_, l, lanes_); }
  // This thread's index among the workers and their number (-1 and the number: no worker).
  int worker() const noexcept { return worker_; }
  int workers() const noexcept { return workers_; }
  // Whether chunk i travels in the region of chunk i-2 (two staging regions), so that producing
  // it must wait until that chunk has been consumed; true unless said otherwise.
  void set_reuses_regions(bool reuses) noexcept { reuses_regions_ = reuses; }
  // The chunks travel in the team's staging buffer, in regions of `bytes`: one region, or two
  // used in turn when pipelining. A step: every thread calls it with the same bytes.
  void use_staging(std::size_t bytes) {
    region_bytes_ = bytes;
    team_.grow_staging(me_, chunks_ > 1 ? 2 * bytes : bytes);
    reuses_regions_ = chunks_ > 1;
  }
  std::byte* region(std::size_t i) const noexcept {
    return team_.staging() + (i % 2) * region_bytes_;
  }
  std::size_t count(std::size_t i) const noexcept { return piece(i, n_); }
  std::size_t first(std::size_t i) const noexcept { return i * chunk_; }        // element
  std::size_t offset(std::size_t i) const noexcept { return i * chunk_ * e_; }  // bytes
  // This worker's slice of chunk i (elements relative to the chunk); empty for non-workers.
  Slice work_slice(std::size_t i) const noexcept {
    return worker_ < 0 ? Slice{} : slice_of(count(i), e_, worker_, workers_);
  }

  // produce(i), network(i, comm, l) and consume(i) are the three phases above; l is the lane
  // whose part of chunk i this call of network carries (0 with one leader).
  template <class Produce, class Network, class Consume>
  void run(Produce&& produce, Network&& network, Consume&& consume, bool shared_outputs) {
    std::uint64_t& base = team_.rendezvous().pipeline_chunks(me_);
    const auto all = [](int) { return true; };
    const auto works = [this](int t) { return this->works(t); };
    const auto drives = [this](int t) { return this->drives(t); };
    auto produce_step = [&](std::size_t i) {
      if (i >= 2 && reuses_regions_)
        team_.rendezvous().wait_posted(Rendezvous::consumed, base + i - 1, all);
      produce(i);
      team_.rendezvous().post(me_, Rendezvous::produced, base + i + 1);
    };
    auto network_step = [&](std::size_t i) {
      team_.rendezvous().wait_posted(Rendezvous::produced, base + i + 1, works);
      team_.telemetry().mark_led(me_);
      try {
        if (!on_lanes_) {
          network(i, team_.comm(), 0);
        } else {
          for (int l = 0; l < lanes_; ++l)
            if (team_.lane_thread(l) == me_) network(i, team_.lane(l), l);
        }
      } catch (...) {
        team_.abort("an inter-process step failed");
        throw;
      }
      team_.rendezvous().post(me_, Rendezvous::sent, base + i + 1);
    };
    auto consume_step = [&](std::size_t i) {
      team_.rendezvous().wait_posted(Rendezvous::sent, base + i + 1, drives);
      consume(i);
      team_.rendezvous().post(me_, Rendezvous::consumed, base + i + 1);
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
    if (shared_outputs) team_.rendezvous().wait_posted(Rendezvous::consumed, base + chunks_, all);
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
  static constexpr std::size_t whole = ~std::size_t{0} >> 1;  // one chunk: every element

  TeamImpl& team_;
  int me_;
  std::size_t e_, n_;
  bool on_lanes_ = false;
  int lanes_ = 1;
  std::size_t chunk_ = 1, chunks_ = 0;
  bool dedicated_ = false;
  bool reuses_regions_ = true;
  std::size_t region_bytes_ = 0;
  int worker_ = -1, workers_ = 0;
};

}  // namespace tlc::detail
