// What a call on a sub-team costs against the same call on a team of the same shape: a team of T
// threads per process, and the sub-team of all of them (me.split(0, me.rank()), the same ranks);
// with --by-process the sub-team is each process's own threads (me.split(tlc::by_process)) and
// the team it is compared with is a team of T threads on MPI_COMM_SELF in every process. Every
// size is timed in rounds that alternate the two, each round `iters` back-to-back calls between
// two barriers, timed by thread 0 of process 0; printed: the median time per call of each and
// sub-team / team (docs/design.md section 13).
//
//   mpicxx -O2 -std=c++20 -I include -I build/include bench/probes/subteam_cost.cpp \
//       build/src/libtlc.a -lhwloc -ltbb -lpthread -o /tmp/subteam_cost
//   TLC_NODE=process TLC_PIN=0 mpiexec -n 1 /tmp/subteam_cost 2            # 1 x 2
//   TLC_NODE=process TLC_PIN=0 mpiexec -n 2 /tmp/subteam_cost 1            # 2 x 1
//   TLC_NODE=process TLC_PIN=0 mpiexec -n 2 /tmp/subteam_cost 1 --by-process
//   SUBTEAM_LARGE=1 SUBTEAM_ROUNDS=21 ...                                   # 2 and 16 MiB only
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include <tlc/tlc.hpp>

namespace {

struct Case {
  const char* name;
  std::function<void(tlc::Thread&, std::vector<double>&, std::vector<double>&, std::size_t)> call;
};

const std::vector<Case>& cases() {
  static const std::vector<Case> all = {
      {"barrier", [](tlc::Thread& t, auto&, auto&, std::size_t) { t.barrier(); }},
      {"allreduce",
       [](tlc::Thread& t, auto& in, auto& out, std::size_t n) {
         t.allreduce(std::span<const double>(in.data(), n), std::span<double>(out.data(), n));
       }},
      {"bcast", [](tlc::Thread& t, auto& in, auto&,
                   std::size_t n) { t.bcast(std::span<double>(in.data(), n), 0); }},
      {"reduce",
       [](tlc::Thread& t, auto& in, auto& out, std::size_t n) {
         t.reduce(std::span<const double>(in.data(), n), std::span<double>(out.data(), n), 0);
       }},
      {"allgather",
       [](tlc::Thread& t, auto& in, auto& out, std::size_t n) {
         t.allgather(std::span<const double>(in.data(), n),
                     std::span<double>(out.data(), n * static_cast<std::size_t>(t.size())));
       }},
      {"alltoall",
       [](tlc::Thread& t, auto& in, auto& out, std::size_t n) {
         const std::size_t all = n * static_cast<std::size_t>(t.size());
         t.alltoall(std::span<const double>(in.data(), all), std::span<double>(out.data(), all));
       }},
  };
  return all;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  tlc::Environment env(argc, argv);
  const int threads = argc > 1 ? std::atoi(argv[1]) : 2;
  const bool by_process = argc > 2 && std::strcmp(argv[2], "--by-process") == 0;
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  tlc::TeamOptions o;
  o.threads = threads;
  tlc::Team parent(MPI_COMM_WORLD, o);
  // The team the sub-team is compared with: the parent itself, or a team of this process alone.
  tlc::Team self(MPI_COMM_SELF, o);
  // SUBTEAM_ROUNDS=r: more rounds; SUBTEAM_LARGE=1: only 2 and 16 MiB per rank, where one
  // round's time swings most.
  const char* large = std::getenv("SUBTEAM_LARGE");
  const std::vector<std::size_t> sizes =
      large && *large == '1'
          ? std::vector<std::size_t>{262144, 2097152}
          : std::vector<std::size_t>{1, 8, 64, 512, 4096, 32768, 262144, 2097152};
  const char* rounds_asked = std::getenv("SUBTEAM_ROUNDS");
  const int rounds = rounds_asked ? std::max(1, std::atoi(rounds_asked)) : 7;
  std::vector<std::pair<double, double>> times;  // per case and size: team, sub-team
  std::vector<tlc::Thread> subs(static_cast<std::size_t>(threads));
  parent.run([&](tlc::Thread& me) {
    subs[static_cast<std::size_t>(me.local_index())] =
        by_process ? me.split(tlc::by_process) : me.split(0, me.rank());
  });
  // The compared team's participants, in the same OS threads as the sub-team's: the sub-team's
  // are used inside the compared team's run.
  tlc::Team& compared = by_process ? self : parent;
  compared.run([&](tlc::Thread& me) {
    tlc::Thread& sub = subs[static_cast<std::size_t>(me.local_index())];
    for (const Case& c : cases())
      for (std::size_t n : sizes) {
        if (std::strcmp(c.name, "barrier") == 0 && n != 1) continue;
        const std::size_t blocks = static_cast<std::size_t>(me.size());
        std::vector<double> in(n * blocks, 1.0), out(n * blocks);
        const std::size_t bytes = std::max<std::size_t>(8, n * 8);
        const int iters =
            static_cast<int>(std::clamp<std::size_t>(4000000 / (bytes + 2000), 5, 2000));
        std::vector<double> team_t, sub_t;
        for (int r = 0; r < rounds; ++r)
          for (int form = 0; form < 2; ++form) {
            tlc::Thread& t = form == 0 ? me : sub;
            t.barrier();
            const double start = MPI_Wtime();
            for (int i = 0; i < iters; ++i) c.call(t, in, out, n);
            t.barrier();
            const double per = (MPI_Wtime() - start) / iters * 1e6;
            (form == 0 ? team_t : sub_t).push_back(per);
          }
        if (me.local_index() == 0) times.push_back({median(team_t), median(sub_t)});
      }
  });
  if (rank == 0) {
    std::printf("# %s, %d thread(s) per process; median us per call of %d rounds in turn\n",
                by_process ? "split(tlc::by_process) vs a team on MPI_COMM_SELF"
                           : "split(0, rank) (the same ranks) vs the team",
                threads, rounds);
    std::printf("%-10s %10s %12s %12s %8s\n", "collective", "bytes", "team_us", "subteam_us",
                "sub/team");
    std::size_t k = 0;
    for (const Case& c : cases())
      for (std::size_t n : sizes) {
        if (std::strcmp(c.name, "barrier") == 0 && n != 1) continue;
        const auto [team_us, sub_us] = times[k++];
        std::printf("%-10s %10zu %12.3f %12.3f %8.2f\n", c.name, n * 8, team_us, sub_us,
                    sub_us / team_us);
      }
  }
  subs.clear();
}
