// Soak: long random sequences of every collective, each result checked against the sequential
// references of reference.hpp. Every process draws the same sequence from one seed (team shapes
// and options, collectives, element types and ops, sizes, roots, in-place or not), so that the
// processes make the same calls; only the arrival skew (short sleeps before a call) is drawn per
// thread. Each round builds a team with random options: uneven thread counts per process, lanes,
// a small pipeline chunk, static or dynamic leaders, reproducible or not, and for some
// collectives a forced algorithm and form (TeamOptions::algorithms, the option behind
// TLC_ALGO_*). A forced choice that cannot serve a call falls back to the plan's choice, so every
// call is checked the same way.
//
// CI runs a short sequence; TLC_SOAK=N runs N collectives (counted once per team-wide call; also
// sizes up to tens of thousands of elements), TLC_SOAK_SEED=S another sequence,
// TLC_SOAK_THREADS=a,b,... fixed threads per process. Every mismatch is reported with the seed,
// the round, the call and what it was, so that it can be replayed.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "mpi/random_calls.hpp"

namespace {

using namespace tlc_test;
using tlc::Collective;

TEST(Soak, RandomCollectivesMatchTheReferences) {
  const std::uint64_t total = env_number("TLC_SOAK", 0);
  const bool long_run = total > 0;
  // The short version: a few seconds per process count in CI.
  const std::uint64_t wanted = long_run ? total : world_size() <= 2 ? 2000 : 700;
  const std::uint64_t seed0 = env_number("TLC_SOAK_SEED", 20261125);
  Rng rng{seed0};
  std::uint64_t done = 0, mismatches = 0, rounds = 0;
  const auto start = std::chrono::steady_clock::now();
  while (done < wanted) {
    const std::uint64_t round_start = done;
    std::string label;
    const tlc::TeamOptions o = random_options(rng, label);
    tlc::Team team(MPI_COMM_WORLD, o);
    const TeamCtx ctx{team.size(), team.first_rank(), o.threads};
    // Several runs on one team, each a batch of back-to-back calls.
    const std::size_t runs = 1 + rng.below(6);
    for (std::size_t k = 0; k < runs && done < wanted; ++k) {
      std::vector<Check> calls;
      const std::size_t batch = 1 + rng.below(40);
      for (std::size_t i = 0; i < batch && done < wanted; ++i, ++done)
        calls.push_back(random_call(ctx, rng, long_run));
      team.run([&](tlc::Thread& me) {
        for (const Check& c : calls) c.body(me);
      });
      for (std::size_t i = 0; i < calls.size(); ++i)
        for (int t = 0; t < ctx.threads; ++t) {
          const std::string problem = calls[i].verdict(t);
          if (problem.empty()) continue;
          if (mismatches++ < 25)
            ADD_FAILURE() << "seed " << seed0 << ", round " << rounds << " (" << label << "), run "
                          << k << ", call " << i << ": " << calls[i].what << ", rank "
                          << ctx.first + t << ": " << problem;
        }
    }
    ++rounds;
    // Long runs say how far they got (every process, for its own mismatches).
    if (long_run && done / 50000 != round_start / 50000) {
      std::printf("soak progress: process %d: %llu collectives, %llu mismatches\n", world_rank(),
                  static_cast<unsigned long long>(done),
                  static_cast<unsigned long long>(mismatches));
      std::fflush(stdout);
    }
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (world_rank() == 0)
    std::printf(
        "soak: %llu collectives in %llu teams, %.1f s, seed %llu, process 0: %llu "
        "mismatches\n",
        static_cast<unsigned long long>(done), static_cast<unsigned long long>(rounds), seconds,
        static_cast<unsigned long long>(seed0), static_cast<unsigned long long>(mismatches));
  EXPECT_EQ(mismatches, 0u);
}

}  // namespace
