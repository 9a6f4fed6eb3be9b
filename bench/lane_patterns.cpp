// The two lane benchmarks of Traff & Hunold ([TraffHunold] sec. 2, docs/references.md),
// with threads as the senders: they tell how many lanes (threads, each on its own
// communicator) a machine and MPI library can drive at once, i.e. how many threads per rail to
// ask tlc for.
//
// lane pattern: every process moves `count` ints to the next process (rank + 1 mod P) and
//   receives as many from the previous one, split evenly over k threads, each with its own
//   duplicate communicator, each a blocking MPI_Sendrecv of count/k ints, repeated `rounds`
//   times without barriers. Perfect lanes: the time falls as 1/k until the network saturates.
// multi-collective: k threads each run MPI_Alltoall with `count` ints per process on its own
//   communicator, all at once. Perfect lanes: the time stays that of one alltoall for k up to
//   the number of physical lanes; serialised lanes (a global-lock MPI): k times.
// Per k: the best and the mean over repetitions of the slowest process's time (repetitions
// separated by MPI_Barrier, warm-up repetitions discarded), and the ratio to k = 1.
#include <mpi.h>

#include <algorithm>
#include <barrier>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "bench.hpp"

namespace tlc_bench {

namespace {

struct LaneTiming {
  double best = 0;
  double mean = 0;
};

// Runs body(thread, comm) on k threads, each with its own communicator, `repetitions` times
// after `warmup` untimed ones; returns the slowest process's times.
template <class Body>
LaneTiming time_lanes(std::vector<MPI_Comm>& comms, int k, int warmup, int repetitions,
                      Body&& body) {
  std::vector<double> samples;
  for (int rep = -warmup; rep < repetitions; ++rep) {
    MPI_Barrier(MPI_COMM_WORLD);
    const double start = MPI_Wtime();
    std::vector<std::thread> threads;
    for (int t = 1; t < k; ++t) threads.emplace_back([&, t] { body(t, comms[t]); });
    body(0, comms[0]);
    for (auto& th : threads) th.join();
    double mine = MPI_Wtime() - start, slowest = 0;
    MPI_Allreduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    if (rep >= 0) samples.push_back(slowest);
  }
  LaneTiming timing;
  timing.best = *std::min_element(samples.begin(), samples.end());
  for (double s : samples) timing.mean += s / static_cast<double>(samples.size());
  return timing;
}

void check(int rc, const char* what) {
  if (rc == MPI_SUCCESS) return;
  std::fprintf(stderr, "tlc-bench: %s failed\n", what);
  MPI_Abort(MPI_COMM_WORLD, 1);
}

}  // namespace

int run_lane_benchmark(const std::string& mode, int max_lanes, std::size_t count, int rounds,
                       int repetitions) {
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  // Lane communicators, made once, in order, as tlc makes its lanes.
  std::vector<MPI_Comm> comms(static_cast<std::size_t>(max_lanes));
  for (MPI_Comm& c : comms) check(MPI_Comm_dup(MPI_COMM_WORLD, &c), "MPI_Comm_dup");
  const bool pattern = mode == "lane-pattern";
  if (rank == 0) {
    std::printf("# tlc-bench %s: %d processes, %zu ints per process, %s\n", mode.c_str(), size,
                count,
                pattern ? ("split over k threads, each MPI_Sendrecv to rank+1 on its own "
                           "communicator, " +
                           std::to_string(rounds) + " rounds")
                              .c_str()
                        : "k threads each run MPI_Alltoall of that count on its own communicator");
    std::printf("# times: slowest process, best and mean of %d repetitions (us); ratio: to k=1\n",
                repetitions);
    std::printf("%6s %14s %14s %10s\n", "k", "best_us", "mean_us", "ratio");
  }
  double first = 0;
  for (int k = 1; k <= max_lanes; ++k) {
    const int next = (rank + 1) % size, previous = (rank + size - 1) % size;
    std::vector<std::vector<int>> send(static_cast<std::size_t>(k)), recv(send.size());
    for (int t = 0; t < k; ++t) {
      // Thread t's share: count/k ints, the first threads taking the remainder.
      const std::size_t share = pattern ? count / static_cast<std::size_t>(k) +
                                              (static_cast<std::size_t>(t) < count % k ? 1 : 0)
                                        : count;
      send[static_cast<std::size_t>(t)].assign(share, rank);
      recv[static_cast<std::size_t>(t)].assign(share, -1);
    }
    const LaneTiming timing = time_lanes(comms, k, 2, repetitions, [&](int t, MPI_Comm comm) {
      std::vector<int>& s = send[static_cast<std::size_t>(t)];
      std::vector<int>& r = recv[static_cast<std::size_t>(t)];
      if (pattern) {
        for (int round = 0; round < rounds; ++round)
          check(MPI_Sendrecv(s.data(), static_cast<int>(s.size()), MPI_INT, next, 0, r.data(),
                             static_cast<int>(r.size()), MPI_INT, previous, 0, comm,
                             MPI_STATUS_IGNORE),
                "MPI_Sendrecv");
      } else {
        const int per_rank = static_cast<int>(s.size() / static_cast<std::size_t>(size));
        check(MPI_Alltoall(s.data(), per_rank, MPI_INT, r.data(), per_rank, MPI_INT, comm),
              "MPI_Alltoall");
      }
    });
    // A fast wrong answer is no answer: the data must have arrived.
    for (int t = 0; t < k; ++t) {
      const std::vector<int>& r = recv[static_cast<std::size_t>(t)];
      const std::size_t per_rank = r.size() / static_cast<std::size_t>(size);
      const std::size_t used = pattern ? r.size() : per_rank * static_cast<std::size_t>(size);
      for (std::size_t i = 0; i < used; ++i) {
        const int expected = pattern ? previous : static_cast<int>(i / per_rank);
        if (r[i] != expected) {
          std::fprintf(stderr, "tlc-bench: %s: wrong data on process %d\n", mode.c_str(), rank);
          MPI_Abort(MPI_COMM_WORLD, 3);
        }
      }
    }
    if (k == 1) first = timing.best;
    if (rank == 0)
      std::printf("%6d %14.2f %14.2f %10.2f\n", k, timing.best * 1e6, timing.mean * 1e6,
                  timing.best / first);
  }
  for (MPI_Comm& c : comms) MPI_Comm_free(&c);
  return 0;
}

}  // namespace tlc_bench
