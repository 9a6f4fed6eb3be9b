// The two lane benchmarks of Traff & Hunold ([TraffHunold] sec. 2, docs/references.md), with
// threads as the senders, as cases of the one driver: they tell how many lanes (threads, each on
// its own communicator) a machine and MPI library can drive at once, i.e. how many threads per
// rail to ask tlc for.
//
// lane pattern: every process moves the row's bytes (as ints) to the next process (rank + 1 mod
//   P) and receives as many from the previous one, split evenly over k threads, each with its
//   own duplicate communicator, each a blocking MPI_Sendrecv of its share per call. Perfect
//   lanes: the time falls as 1/k until the network saturates.
// multi-collective: k threads each run MPI_Alltoall of the row's bytes (as ints) per process on
//   its own communicator, all at once. Perfect lanes: the time stays that of one alltoall for k
//   up to the number of physical lanes; serialised lanes (a global-lock MPI): k times.
// A call's time is the slowest thread's of the slowest process; the driver times, repeats and
// checks as for every other case (the data must have arrived: a fast wrong answer is none).
#include <algorithm>
#include <barrier>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <mpi.h>

#include "bench.hpp"

namespace tlc_bench {

namespace {

void check_mpi(int rc, const char* what) {
  if (rc != MPI_SUCCESS) throw std::runtime_error(std::string(what) + " failed");
}

class LaneCase : public Case {
 public:
  LaneCase(bool pattern, int lanes, const std::vector<MPI_Comm>& comms)
      : pattern_(pattern), lanes_(lanes), comms_(comms) {
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &size_);
  }

  int ranks() const override { return size_; }

  // n 8-byte elements per process: 2n ints, split over the lanes (pattern) or each lane's own
  // alltoall (a multiple of the processes).
  void prepare(std::size_t n) override {
    send_.assign(static_cast<std::size_t>(lanes_), {});
    recv_.assign(static_cast<std::size_t>(lanes_), {});
    if (n == 0) return;
    const std::size_t ints = 2 * n;
    const auto k = static_cast<std::size_t>(lanes_);
    for (std::size_t t = 0; t < k; ++t) {
      std::size_t share = ints;
      if (pattern_) {
        share = ints / k + (t < ints % k ? 1 : 0);
      } else {
        const auto p = static_cast<std::size_t>(size_);
        share = ints / p * p;
      }
      send_[t].assign(share, rank_);
      recv_[t].assign(share, -1);
      // multi-collective: block q of every send buffer holds q, so block q arrives from rank q
      // holding this rank's number.
      if (!pattern_) {
        const std::size_t block = share / static_cast<std::size_t>(size_);
        for (std::size_t i = 0; i < share; ++i) send_[t][i] = static_cast<int>(i / block);
      }
    }
  }

  std::size_t check(std::string& first) override {
    for (auto& r : recv_) std::fill(r.begin(), r.end(), -1);
    run({0, 1, 0});
    const int previous = (rank_ + size_ - 1) % size_;
    std::size_t wrong = 0;
    for (const std::vector<int>& r : recv_)
      for (int v : r)
        if (v != (pattern_ ? previous : rank_)) {
          if (wrong++ == 0 && first.empty())
            first = std::string(pattern_ ? "lane pattern" : "multi-collective") + ", process " +
                    std::to_string(rank_) + ": received " + std::to_string(v);
        }
    return wrong;
  }

  Timing time(const Loop& loop) override { return run(loop); }

 private:
  // Every lane on a thread of its own (started outside the timed region); a std::barrier and
  // MPI_Barrier synchronise all lanes of all processes before the timed calls.
  Timing run(const Loop& loop) {
    std::vector<PaddedDouble> seconds(static_cast<std::size_t>(lanes_));
    std::barrier<> local(lanes_);
    std::vector<std::string> errors(static_cast<std::size_t>(lanes_));
    auto lane = [&](int t) {
      try {
        auto sync = [&] {
          local.arrive_and_wait();
          if (t == 0) MPI_Barrier(MPI_COMM_WORLD);
          local.arrive_and_wait();
        };
        seconds[static_cast<std::size_t>(t)].value = timed_loop(
            loop, t, lanes_, [&] { call(t); }, sync);
      } catch (const std::exception& e) {
        errors[static_cast<std::size_t>(t)] = e.what();
      }
    };
    {
      std::vector<std::jthread> threads;
      for (int t = 1; t < lanes_; ++t) threads.emplace_back(lane, t);
      lane(0);
    }
    for (const std::string& e : errors)
      if (!e.empty()) throw std::runtime_error(e);
    return global_timing(summarise(seconds), lanes_);
  }

  void call(int t) {
    std::vector<int>& s = send_[static_cast<std::size_t>(t)];
    std::vector<int>& r = recv_[static_cast<std::size_t>(t)];
    const MPI_Comm comm = comms_[static_cast<std::size_t>(t)];
    if (pattern_) {
      const int next = (rank_ + 1) % size_, previous = (rank_ + size_ - 1) % size_;
      check_mpi(MPI_Sendrecv(s.data(), mpi_count(s.size()), MPI_INT, next, 0, r.data(),
                             mpi_count(r.size()), MPI_INT, previous, 0, comm, MPI_STATUS_IGNORE),
                "MPI_Sendrecv");
    } else {
      const int per_rank = mpi_count(s.size() / static_cast<std::size_t>(size_));
      check_mpi(MPI_Alltoall(s.data(), per_rank, MPI_INT, r.data(), per_rank, MPI_INT, comm),
                "MPI_Alltoall");
    }
  }

  bool pattern_;
  int lanes_;
  const std::vector<MPI_Comm>& comms_;
  int rank_ = 0;
  int size_ = 1;
  std::vector<std::vector<int>> send_;
  std::vector<std::vector<int>> recv_;
};

}  // namespace

int run_lane_benchmark(const Options& o, const tlc::Environment& env, bool pattern) {
  const int max_lanes = o.lanes > 0 ? o.lanes : 4;
  // Lane communicators, made once, in order, as tlc makes its lanes.
  std::vector<MPI_Comm> comms(static_cast<std::size_t>(max_lanes));
  for (MPI_Comm& c : comms) check_mpi(MPI_Comm_dup(MPI_COMM_WORLD, &c), "MPI_Comm_dup");
  static const CollectiveDef lane_pattern{
      "lane_pattern",
      Kind::bcast,
      tlc::Collective::bcast,
      "-",
      -1,
      false,
      "k threads, each on its own communicator, MPI_Sendrecv their share of the bytes to rank + "
      "1",
      "-",
      "-",
      "int",
      sizeof(int)};
  static const CollectiveDef multi_collective{
      "multi_collective",
      Kind::bcast,
      tlc::Collective::bcast,
      "-",
      -1,
      false,
      "k threads, each on its own communicator, run MPI_Alltoall of the bytes at once",
      "-",
      "-",
      "int",
      sizeof(int)};
  Sweep sweep;
  sweep.header = make_header(pattern ? "--lane-pattern" : "--multi-collective", env);
  sweep.header.threads = max_lanes;
  sweep.header.lanes = max_lanes;
  sweep.header.description =
      pattern ? "Traff & Hunold's lane pattern: k = 1.." + std::to_string(max_lanes) +
                    " threads per process, each on its own communicator, move the row's bytes "
                    "(ints) per process to the next process, split over them; perfect lanes: "
                    "kX/k1 = 1/X"
              : "Traff & Hunold's multi-collective: k = 1.." + std::to_string(max_lanes) +
                    " threads per process, each on its own communicator, run MPI_Alltoall of the "
                    "row's bytes (ints) at once; parallel lanes: kX/k1 = 1, serialised: X";
  sweep.collectives = {pattern ? &lane_pattern : &multi_collective};
  sweep.step = o.step ? o.step : 4;
  sweep.columns = [&](const CollectiveDef&) {
    std::vector<Column> c;
    for (int k = 1; k <= max_lanes; ++k) {
      std::string key = "k";
      key += std::to_string(k);
      c.push_back({std::move(key),
                   std::to_string(k) + " lane(s)",
                   k == 1 ? Role::subject : Role::baseline,
                   true,
                   std::make_unique<LaneCase>(pattern, k, comms),
                   {}});
    }
    return c;
  };
  const int rc = run_sweep(o, sweep);
  for (MPI_Comm& c : comms) MPI_Comm_free(&c);
  return rc;
}

}  // namespace tlc_bench
