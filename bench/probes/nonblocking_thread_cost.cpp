// What one small allreduce of a team costs in tlc's blocking form, its nonblocking form (start +
// wait, nothing between) and its persistent form (init once, start + wait per call), each checked
// after every call: the question `tlc-bench --overlap`'s pers/blk and nb/blk columns raise at
// small sizes, without the benchmark around it. Public API only.
//
//   cmake --build build --target tlc   # then, from the source tree (a static libtlc):
//   mpicxx.mpich -O2 -std=c++20 -Iinclude -Ibuild/include bench/probes/nonblocking_thread_cost.cpp
//   \
//       build/src/libtlc.a -lhwloc -o /tmp/nonblocking_thread_cost
//   TLC_NODE=process mpiexec.mpich -n 1 /tmp/nonblocking_thread_cost 2 8      # threads, doubles
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <vector>

#include <tlc/tlc.hpp>

int main(int argc, char** argv) {
  tlc::Environment env(argc, argv);
  const int threads = argc > 1 ? std::atoi(argv[1]) : 2;
  const std::size_t n = argc > 2 ? std::strtoul(argv[2], nullptr, 10) : 1;
  constexpr int calls = 20000;
  tlc::TeamOptions options;
  options.threads = threads;
  tlc::Team team(MPI_COMM_WORLD, options);
  int wrong = 0;
  team.run([&](tlc::Thread& me) {
    std::vector<double> in(n, me.rank() + 1.0), out(n, 0.0);
    const double want = me.size() * (me.size() + 1) / 2.0;
    auto check = [&] {
      for (double v : out)
        if (v != want) ++wrong;  // racy count, but any wrong makes it non-zero
    };
    auto time_it = [&](const char* name, auto&& call) {
      for (int i = 0; i < calls / 10; ++i) call();
      me.barrier();
      const auto start = std::chrono::steady_clock::now();
      for (int i = 0; i < calls; ++i) call();
      const double us =
          std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start)
              .count() /
          calls;
      check();
      if (me.rank() == 0) std::printf("%-36s %9.3f us per call\n", name, us);
    };
    for (int round = 0; round < 2; ++round) {
      if (me.rank() == 0)
        std::printf("round %d: %d process(es) x %d threads, %zu doubles\n", round + 1,
                    me.processes(), me.threads(), n);
      time_it("allreduce (blocking)", [&] { me.allreduce(in, out, std::plus<>{}); });
      time_it("iallreduce + wait", [&] { me.iallreduce(in, out, std::plus<>{}).wait(); });
      tlc::Persistent p = me.allreduce_init(in, out, std::plus<>{});
      time_it("allreduce_init once, start + wait", [&] {
        p.start();
        p.wait();
      });
    }
  });
  std::printf("%s\n", wrong ? "WRONG results" : "all results correct");
  return wrong ? 3 : 0;
}
