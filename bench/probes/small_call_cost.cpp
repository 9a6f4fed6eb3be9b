// What a small call costs through tlc against MPI's own blocking collective on the same
// processes, one thread per process: a team of one thread on every process of MPI_COMM_WORLD,
// and the blocking MPI call on MPI_COMM_WORLD from that thread, timed in rounds that alternate the
// two (each round `iters` back-to-back calls between two barriers; every process takes the
// largest time of the round), for 8, 64 and 512 bytes per rank. The difference is tlc's per-call
// work (arguments, plan, the team's begin step, the watched MPI wait) where the messages go one
// way and the MPI calls stream (docs/mpi.md, "Small calls under Open MPI"). Links the library
// like an application.
//
//   mpicxx.openmpi -O2 -std=c++20 -I include -I build-openmpi/include -o /tmp/small_call_cost
//       bench/probes/small_call_cost.cpp -L build-openmpi/src -ltlc    (one command; the shared
//       library, so also -Wl,-rpath,$PWD/build-openmpi/src)
//   TLC_NODE=process mpiexec.openmpi -n 2 /tmp/small_call_cost
//   MPICH (build/, a static library): mpicxx.mpich ... build/src/libtlc.a -lhwloc -ltbb -lpthread
//   SMALL_CALL_ONLY=gather SMALL_CALL_TLC_ONLY=1 SMALL_CALL_ITERS=100000 ...   (for a profiler)
//
// Prints per collective and size the median time per call of each over the rounds, us, their
// ratio and difference.
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <span>
#include <vector>

#include <tlc/tlc.hpp>

namespace {

using Buffer = std::vector<double>;

struct Case {
  const char* name;
  std::function<void(tlc::Thread&, Buffer&, Buffer&, std::size_t)> tlc_call;
  std::function<void(Buffer&, Buffer&, std::size_t)> mpi_call;
};

std::vector<Case> cases(int processes) {
  const MPI_Comm w = MPI_COMM_WORLD;
  const auto P = static_cast<std::size_t>(processes);
  auto in = [](Buffer& b, std::size_t n) { return std::span<const double>(b.data(), n); };
  auto out = [](Buffer& b, std::size_t n) { return std::span<double>(b.data(), n); };
  auto count = [](std::size_t n) { return static_cast<int>(n); };
  return {
      {"barrier", [](tlc::Thread& t, Buffer&, Buffer&, std::size_t) { t.barrier(); },
       [w](Buffer&, Buffer&, std::size_t) { MPI_Barrier(w); }},
      {"bcast", [=](tlc::Thread& t, Buffer& i, Buffer&, std::size_t n) { t.bcast(out(i, n), 0); },
       [=](Buffer& i, Buffer&, std::size_t n) { MPI_Bcast(i.data(), count(n), MPI_DOUBLE, 0, w); }},
      {"reduce",
       [=](tlc::Thread& t, Buffer& i, Buffer& o, std::size_t n) {
         t.reduce(in(i, n), out(o, n), 0);
       },
       [=](Buffer& i, Buffer& o, std::size_t n) {
         MPI_Reduce(i.data(), o.data(), count(n), MPI_DOUBLE, MPI_SUM, 0, w);
       }},
      {"allreduce",
       [=](tlc::Thread& t, Buffer& i, Buffer& o, std::size_t n) {
         t.allreduce(in(i, n), out(o, n));
       },
       [=](Buffer& i, Buffer& o, std::size_t n) {
         MPI_Allreduce(i.data(), o.data(), count(n), MPI_DOUBLE, MPI_SUM, w);
       }},
      {"scan",
       [=](tlc::Thread& t, Buffer& i, Buffer& o, std::size_t n) { t.scan(in(i, n), out(o, n)); },
       [=](Buffer& i, Buffer& o, std::size_t n) {
         MPI_Scan(i.data(), o.data(), count(n), MPI_DOUBLE, MPI_SUM, w);
       }},
      {"gather",
       [=](tlc::Thread& t, Buffer& i, Buffer& o, std::size_t n) {
         t.gather(in(i, n), out(o, n * P), 0);
       },
       [=](Buffer& i, Buffer& o, std::size_t n) {
         MPI_Gather(i.data(), count(n), MPI_DOUBLE, o.data(), count(n), MPI_DOUBLE, 0, w);
       }},
      {"scatter",
       [=](tlc::Thread& t, Buffer& i, Buffer& o, std::size_t n) {
         t.scatter(in(i, n * P), out(o, n), 0);
       },
       [=](Buffer& i, Buffer& o, std::size_t n) {
         MPI_Scatter(i.data(), count(n), MPI_DOUBLE, o.data(), count(n), MPI_DOUBLE, 0, w);
       }},
      {"allgather",
       [=](tlc::Thread& t, Buffer& i, Buffer& o, std::size_t n) {
         t.allgather(in(i, n), out(o, n * P));
       },
       [=](Buffer& i, Buffer& o, std::size_t n) {
         MPI_Allgather(i.data(), count(n), MPI_DOUBLE, o.data(), count(n), MPI_DOUBLE, w);
       }},
      {"alltoall",
       [=](tlc::Thread& t, Buffer& i, Buffer& o, std::size_t n) {
         t.alltoall(in(i, n * P), out(o, n * P));
       },
       [=](Buffer& i, Buffer& o, std::size_t n) {
         MPI_Alltoall(i.data(), count(n), MPI_DOUBLE, o.data(), count(n), MPI_DOUBLE, w);
       }},
  };
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  tlc::Environment env(argc, argv);
  int rank = 0, processes = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &processes);
  tlc::TeamOptions options;
  options.threads = 1;
  tlc::Team team(MPI_COMM_WORLD, options);
  const char* only = std::getenv("SMALL_CALL_ONLY");
  const bool tlc_only = std::getenv("SMALL_CALL_TLC_ONLY") != nullptr;
  const char* iters_asked = std::getenv("SMALL_CALL_ITERS");
  const int iters = iters_asked ? std::max(1, std::atoi(iters_asked)) : 10000;
  constexpr int rounds = 7;
  const std::vector<Case> all = cases(processes);
  if (rank == 0)
    std::printf(
        "# %d process(es) x 1 thread, median us per call of %d rounds in turn\n%-10s %6s "
        "%9s %9s %7s %8s\n",
        processes, rounds, "collective", "bytes", "tlc_us", "mpi_us", "tlc/mpi", "diff_us");
  team.run([&](tlc::Thread& me) {
    for (const Case& c : all)
      for (std::size_t n : {1, 8, 64}) {
        if ((only && std::strcmp(only, c.name) != 0) ||
            (std::strcmp(c.name, "barrier") == 0 && n != 1))
          continue;
        Buffer in(n * static_cast<std::size_t>(processes), 1.0), out(in.size());
        std::vector<double> tlc_us, mpi_us;
        for (int r = 0; r < rounds; ++r)
          for (int form = 0; form < (tlc_only ? 1 : 2); ++form) {
            MPI_Barrier(MPI_COMM_WORLD);
            const double start = MPI_Wtime();
            for (int i = 0; i < iters; ++i)
              form == 0 ? c.tlc_call(me, in, out, n) : c.mpi_call(in, out, n);
            double mine = (MPI_Wtime() - start) / iters * 1e6, most = 0;
            MPI_Allreduce(&mine, &most, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
            (form == 0 ? tlc_us : mpi_us).push_back(most);
          }
        if (rank != 0) continue;
        const double t = median(tlc_us), m = median(mpi_us);
        std::printf("%-10s %6zu %9.3f %9.3f %7.2f %8.3f\n", c.name, n * sizeof(double), t, m,
                    m > 0 ? t / m : 0.0, t - m);
      }
  });
}
