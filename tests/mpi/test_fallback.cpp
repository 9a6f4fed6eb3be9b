// Forced choices that cannot serve a call (docs/design.md section 7): by default the call runs the
// planner's own choice and gives the right result (TLC_VERBOSE=1 says so once per collective on
// stderr); with TeamOptions::fallback = "error" (TLC_FALLBACK=error) every thread of every
// process gets tlc::Error before any buffer is written.
#include <unistd.h>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "mpi/test_common.hpp"

namespace {

using namespace tlc_test;
using tlc::Collective;

// A non-commutative but associative op (MPI ops must be associative): composition of the
// affine maps x -> m x + c, lower rank first. Rank order decides the result.
struct Map {
  double m, c;
};
struct Compose {
  Map operator()(const Map& a, const Map& b) const { return {a.m * b.m, a.c * b.m + b.c}; }
};

// One case: the forced override, the team's threads in process p, and the call.
struct Case {
  const char* name;
  Collective collective;
  std::string algorithm;
  int (*threads_of)(int process);
  int processes_needed;  // 1: serves (or not) on any team; 2: only across processes
  bool needs_single_process;
};

template <class T>
bool all_unwritten(const std::vector<T>& v) {
  for (const T& x : v)
    if (x != T(-1)) return false;
  return true;
}

int one(int) { return 1; }
int two(int) { return 2; }
int uneven(int p) { return p % 2 + 1; }

// Every rank r contributes n values r + i; the result is checked against the sequential fold.
void run_case(const Case& k, bool fallback_error, std::size_t n) {
  tlc::TeamOptions o = test_options(k.threads_of(world_rank()));
  o.algorithms[k.collective] = k.algorithm;
  o.fallback = fallback_error ? "error" : "plan";
  tlc::Team team(MPI_COMM_WORLD, o);
  const int size = team.size();
  const bool affine = k.algorithm == "rabenseifner" || k.algorithm == "pairwise";
  std::vector<Outcome> outcomes(static_cast<std::size_t>(team.threads()));
  std::vector<char> untouched(outcomes.size(), 1);
  team.run([&](tlc::Thread& me) {
    Outcome& out = outcomes[static_cast<std::size_t>(me.local_index())];
    const auto value = [&](int r, std::size_t i) { return static_cast<double>(r + 1) + i % 7; };
    std::vector<double> recv_doubles;
    std::vector<int> recv_ints;
    try {
      if (k.collective == Collective::allreduce && affine) {
        std::vector<Map> send(n), recv(n, Map{-1, -1});
        const auto map = [&](int r, std::size_t i) { return Map{1.0 + r % 2, value(r, i)}; };
        for (std::size_t i = 0; i < n; ++i) send[i] = map(me.rank(), i);
        try {
          me.allreduce(std::span<const Map>(send), std::span<Map>(recv), Compose{});
        } catch (...) {
          bool clean = true;
          for (const Map& x : recv) clean = clean && x.m == -1 && x.c == -1;
          untouched[static_cast<std::size_t>(me.local_index())] = clean;
          throw;
        }
        for (std::size_t i = 0; i < n; ++i) {
          Map expected = map(0, i);
          for (int r = 1; r < size; ++r) expected = Compose{}(expected, map(r, i));
          if ((recv[i].m != expected.m || recv[i].c != expected.c) && out.mismatches++ == 0)
            out.first_mismatch = "element " + std::to_string(i) + ": c " +
                                 std::to_string(recv[i].c) + " instead of " +
                                 std::to_string(expected.c);
        }
        untouched[static_cast<std::size_t>(me.local_index())] = 0;
      } else if (k.collective == Collective::allreduce) {
        std::vector<double> send(n);
        std::vector<double>& recv = recv_doubles;
        recv.assign(n, -1);
        for (std::size_t i = 0; i < n; ++i) send[i] = value(me.rank(), i);
        me.allreduce(std::span<const double>(send), std::span<double>(recv));
        for (std::size_t i = 0; i < n; ++i) {
          double expected = 0;
          for (int r = 0; r < size; ++r) expected += value(r, i);
          if (recv[i] != expected && out.mismatches++ == 0)
            out.first_mismatch = "element " + std::to_string(i) + ": " + std::to_string(recv[i]) +
                                 " instead of " + std::to_string(expected);
        }
        untouched[static_cast<std::size_t>(me.local_index())] = all_unwritten(recv);
      } else if (k.collective == Collective::reduce_scatter_block) {
        const auto map = [&](int r, std::size_t i) { return Map{1.0 + r % 2, value(r, i)}; };
        std::vector<Map> send(n * static_cast<std::size_t>(size)), recv(n, Map{-1, -1});
        for (std::size_t i = 0; i < send.size(); ++i) send[i] = map(me.rank(), i);
        try {
          me.reduce_scatter_block(std::span<const Map>(send), std::span<Map>(recv), Compose{});
        } catch (...) {
          bool clean = true;
          for (const Map& x : recv) clean = clean && x.m == -1 && x.c == -1;
          untouched[static_cast<std::size_t>(me.local_index())] = clean;
          throw;
        }
        for (std::size_t i = 0; i < n; ++i) {
          const std::size_t at = static_cast<std::size_t>(me.rank()) * n + i;
          Map expected = map(0, at);
          for (int r = 1; r < size; ++r) expected = Compose{}(expected, map(r, at));
          if ((recv[i].m != expected.m || recv[i].c != expected.c) && out.mismatches++ == 0)
            out.first_mismatch = "element " + std::to_string(i);
        }
        untouched[static_cast<std::size_t>(me.local_index())] = 0;
      } else {  // allgather
        std::vector<int> send(n);
        std::vector<int>& recv = recv_ints;
        recv.assign(n * static_cast<std::size_t>(size), -1);
        for (std::size_t i = 0; i < n; ++i) send[i] = me.rank() * 1000 + static_cast<int>(i);
        me.allgather(std::span<const int>(send), std::span<int>(recv));
        for (std::size_t i = 0; i < recv.size(); ++i) {
          const int expected = static_cast<int>(i / n) * 1000 + static_cast<int>(i % n);
          if (recv[i] != expected && out.mismatches++ == 0)
            out.first_mismatch = "element " + std::to_string(i);
        }
        untouched[static_cast<std::size_t>(me.local_index())] = all_unwritten(recv);
      }
    } catch (const tlc::Error& e) {
      out.error = e.what();
      if (!affine)
        untouched[static_cast<std::size_t>(me.local_index())] =
            all_unwritten(recv_doubles) && all_unwritten(recv_ints);
    }
  });
  const std::string context = std::string(k.name) + (fallback_error ? " (fallback=error)" : "");
  for (std::size_t t = 0; t < outcomes.size(); ++t) {
    if (fallback_error) {
      EXPECT_NE(outcomes[t].error.find("cannot serve this call"), std::string::npos)
          << context << ", thread " << t << ": expected the fallback error, got '"
          << outcomes[t].error << "'";
      EXPECT_TRUE(untouched[t]) << context << ", thread " << t << ": a receive buffer was written";
    } else {
      EXPECT_EQ(outcomes[t].mismatches, 0u)
          << context << ", thread " << t << ": " << outcomes[t].first_mismatch;
      EXPECT_TRUE(outcomes[t].error.empty())
          << context << ", thread " << t << ": " << outcomes[t].error;
      EXPECT_FALSE(untouched[t]) << context << ", thread " << t << ": no result written";
    }
  }
}

// Each override below cannot serve the call on the team it is given, for the reason named.
const std::vector<Case>& cases() {
  static const std::vector<Case> all = {
      // A multi-process algorithm on a single-process team.
      {"recursive_doubling on one process", Collective::allreduce, "recursive_doubling", two, 1,
       true},
      // The inline form carries at most 4 KiB (in its lines form).
      {"flat:inline with 1000 doubles", Collective::allreduce, "flat:inline", two, 1, true},
      // A single-process algorithm on a multi-process team.
      {"flat across processes", Collective::allreduce, "flat", two, 2, false},
      // Out-of-rank-order combination and a non-commutative op.
      {"rabenseifner, non-commutative op", Collective::allreduce, "rabenseifner", two, 2, false},
      {"pairwise reduce_scatter_block, non-commutative op", Collective::reduce_scatter_block,
       "pairwise", two, 2, false},
      // Bruck needs equal process blocks.
      {"bruck, uneven threads", Collective::allgather, "bruck", uneven, 2, false},
      // full_lane with one thread everywhere.
      {"full_lane, one thread everywhere", Collective::allreduce, "full_lane", one, 2, false},
      // The direct form needs one thread in every process.
      {"hierarchical:direct, two threads", Collective::allreduce, "hierarchical:direct", two, 2,
       false},
  };
  return all;
}

bool applies(const Case& k) {
  return k.needs_single_process ? world_size() == 1 : world_size() >= k.processes_needed;
}

TEST(Fallback, ForcedChoicesThatCannotServeRunThePlansChoice) {
  int ran = 0;
  for (const Case& k : cases())
    if (applies(k)) {
      run_case(k, false, 1000);
      ++ran;
    }
  EXPECT_GT(ran, 0);
}

TEST(Fallback, WithFallbackErrorTheyFailOnEveryThreadBeforeDataMoves) {
  for (const Case& k : cases())
    if (applies(k)) run_case(k, true, 1000);
}

// TLC_VERBOSE=1: the fallback is said once per collective and team on stderr, however many
// calls fall back.
TEST(Fallback, VerboseSaysSoOnce) {
  if (world_size() != 1) GTEST_SKIP() << "checked on one process (stderr of this process)";
  const std::string text = stderr_of("TLC_VERBOSE", "1", [] {
    tlc::TeamOptions o = test_options(2);
    o.algorithms[Collective::allreduce] = "flat:inline";
    tlc::Team team(MPI_COMM_WORLD, o);
    team.run([&](tlc::Thread& me) {
      std::vector<double> v(1000, 1.0);
      for (int k = 0; k < 3; ++k) me.allreduce(std::span<double>(v));
    });
  });
  std::size_t lines = 0;
  for (std::size_t at = 0; (at = text.find("cannot serve a call", at)) != std::string::npos; ++at)
    ++lines;
  EXPECT_EQ(lines, 1u) << "stderr was:\n" << text;
}

}  // namespace
