// Where a bcast's time goes under uniform arrival delays: every thread of a team (2 threads per
// process) sleeps a seeded delay in [0, 1 ms] before each call, and each call's arrival and exit
// are stamped with MPI_Wtime (the processes must share a machine: TLC_NODE=process). Per rank it
// prints the mean time in the call, the least any bcast could take (the wait for the root,
// (a_root - a_rank)+), and what is spent beyond it (docs/imbalance.md).
//
//   mpicxx -O2 -std=c++20 -I include -I build/include bench/probes/bcast_arrival.cpp \
//       build/src/libtlc.a -lhwloc -ltbb -lpthread -o /tmp/bcast_arrival
//   TLC_NODE=process TLC_PIN=0 mpiexec -n 2 [-genv ALGO hierarchical] /tmp/bcast_arrival
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <thread>
#include <vector>

#include <tlc/tlc.hpp>

int main(int argc, char** argv) {
  tlc::Environment env(argc, argv);
  constexpr int calls = 400, warm_up = 20, threads = 2, delay_us = 1000;
  const char* algorithm = std::getenv("ALGO");
  tlc::TeamOptions o;
  o.threads = threads;
  o.pin = false;
  o.algorithms[tlc::Collective::bcast] = algorithm ? algorithm : "dynamic";
  tlc::Team team(MPI_COMM_WORLD, o);
  std::vector<double> arrive(calls * threads), leave(calls * threads);
  team.run([&](tlc::Thread& me) {
    std::mt19937 random(1234 + static_cast<unsigned>(me.rank()));
    std::uniform_int_distribution<int> delay(0, delay_us);
    std::vector<double> buf(8);
    for (int c = 0; c < calls; ++c) {
      me.barrier();
      std::this_thread::sleep_for(std::chrono::microseconds(delay(random)));
      const double a = MPI_Wtime();
      me.bcast(std::span<double>(buf), 0);
      const auto at = static_cast<std::size_t>(c * threads + me.local_index());
      arrive[at] = a;
      leave[at] = MPI_Wtime();
    }
  });
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const auto per_process = static_cast<int>(arrive.size());
  std::vector<double> arrivals(arrive.size() * static_cast<std::size_t>(size)),
      exits(arrivals.size());
  MPI_Gather(arrive.data(), per_process, MPI_DOUBLE, arrivals.data(), per_process, MPI_DOUBLE, 0,
             MPI_COMM_WORLD);
  MPI_Gather(leave.data(), per_process, MPI_DOUBLE, exits.data(), per_process, MPI_DOUBLE, 0,
             MPI_COMM_WORLD);
  if (rank != 0) return 0;
  const int ranks = size * threads;
  auto index = [&](int r, int c) {
    return static_cast<std::size_t>((r / threads) * per_process + c * threads + r % threads);
  };
  std::printf("# %s bcast, %d x %d, uniform delays in [0, %d us], %d calls\n",
              o.algorithms[tlc::Collective::bcast].c_str(), size, threads, delay_us,
              calls - warm_up);
  double in_all = 0, least_all = 0;
  for (int r = 0; r < ranks; ++r) {
    double in = 0, least = 0;
    for (int c = warm_up; c < calls; ++c) {
      const double a = arrivals[index(r, c)];
      in += exits[index(r, c)] - a;
      if (r != 0) least += std::max(0.0, arrivals[index(0, c)] - a);
    }
    const double n = calls - warm_up;
    std::printf("rank %d: in %.1f us, waiting for the root %.1f us, beyond it %.1f us\n", r,
                in / n * 1e6, least / n * 1e6, (in - least) / n * 1e6);
    in_all += in / n;
    least_all += least / n;
  }
  std::printf("mean: in %.1f us, waiting for the root %.1f us\n", in_all / ranks * 1e6,
              least_all / ranks * 1e6);
}
