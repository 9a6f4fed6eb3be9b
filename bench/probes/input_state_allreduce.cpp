// What the state of an allreduce's input does to its algorithms between processes: a team of one
// thread per process, the allreduce of `m` bytes of doubles for m = 64 KiB .. 1 MiB, with the
// input
//   unchanged  written once, every call on the same bytes (what a benchmark loop does),
//   fresh      written by the calling thread just before each call (what an application that
//              computes its contribution does),
//   in-place   the previous call's output, as the input of the next one,
//   evicted    written, then 64 MiB of other data swept, before each call.
// Each call is timed alone (the writes and the sweep are not timed), after an MPI_Barrier; per
// size and state, five rounds of calls, the median round's mean printed by process 0. Force an
// algorithm with TLC_ALGO_ALLREDUCE (docs/model.md, "Inputs the partner has just read").
// Optional arguments: one input state and one size (bytes), e.g. to profile that case alone.
//
//   mpicxx -O2 -std=c++20 -I include -I build/include bench/probes/input_state_allreduce.cpp \
//       build/src/libtlc.a -lhwloc -ltbb -lpthread -o /tmp/input_state_allreduce
//   for a in recursive_doubling rabenseifner; do
//     TLC_NODE=process TLC_ALGO_ALLREDUCE=$a mpiexec -n 2 /tmp/input_state_allreduce; done
//   TLC_NODE=process TLC_ALGO_ALLREDUCE=recursive_doubling perf record -o /tmp/rd.data -- \
//       mpiexec -n 2 /tmp/input_state_allreduce fresh 262144
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <span>
#include <string>
#include <vector>

#include <tlc/tlc.hpp>

namespace {

enum class State { unchanged, fresh, in_place, evicted };
const char* name(State s) {
  switch (s) {
    case State::unchanged:
      return "unchanged";
    case State::fresh:
      return "fresh";
    case State::in_place:
      return "in-place";
    case State::evicted:
      return "evicted";
  }
  return "?";
}

void write_input(std::vector<double>& input, int call) {
  double v = call;
  for (double& x : input) x = (v += 1.0);
}

}  // namespace

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  const std::string only_state = argc > 1 ? argv[1] : "";
  const std::size_t only_bytes = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 0;
  {
    tlc::TeamOptions options;
    options.threads = 1;
    tlc::Team team(MPI_COMM_WORLD, options);
    std::vector<double> sweep((64u << 20) / sizeof(double), 0.0);
    team.run([&](tlc::Thread& me) {
      if (me.rank() == 0) std::printf("%-10s %10s %12s\n", "input", "bytes", "us per call");
      for (State state : {State::unchanged, State::fresh, State::in_place, State::evicted}) {
        if (!only_state.empty() && only_state != name(state)) continue;
        for (std::size_t m = 64u << 10; m <= (1u << 20); m *= 2) {
          if (only_bytes != 0 && m != only_bytes) continue;
          const std::size_t n = m / sizeof(double);
          std::vector<double> input(n), output(n, 0.0);
          write_input(input, 0);
          const int calls = state == State::evicted
                                ? 20
                                : static_cast<int>(std::max<std::size_t>(30, (64u << 20) / m));
          std::vector<double> rounds;
          for (int round = 0; round < 5; ++round) {
            double inside = 0;
            for (int call = 0; call < calls; ++call) {
              if (state == State::fresh || state == State::evicted) write_input(input, call);
              if (state == State::evicted)
                for (double& x : sweep) x += 1.0;
              MPI_Barrier(MPI_COMM_WORLD);
              const double start = MPI_Wtime();
              if (state == State::in_place)
                me.allreduce(std::span<double>(input));
              else
                me.allreduce(std::span<const double>(input), std::span<double>(output));
              inside += MPI_Wtime() - start;
            }
            rounds.push_back(inside / calls * 1e6);
          }
          std::sort(rounds.begin(), rounds.end());
          if (me.rank() == 0) std::printf("%-10s %10zu %12.2f\n", name(state), m, rounds[2]);
        }
      }
    });
  }
  MPI_Finalize();
  return 0;
}
