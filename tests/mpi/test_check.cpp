// TLC_CHECK (TeamOptions::check): processes that make different calls get tlc::Error (mismatch)
// on every thread of every process, naming the process and what differs, before any user buffer
// is written; calls that agree run as usual; the setting itself must agree across processes.
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "mpi/test_common.hpp"

namespace {

using namespace tlc_test;
using tlc::Collective;

tlc::TeamOptions checked(int threads, const std::string& leaders = "") {
  tlc::TeamOptions o = test_options(threads);
  o.check = true;
  o.leaders = leaders;
  return o;
}

// What each thread threw ("" if nothing) and whether its receive buffer stayed untouched.
struct Seen {
  std::string error;
  bool untouched = true;
};

// Runs `call` on every thread of a checked team (process 1 deviates in the way `call` says) and
// returns what each local thread saw; the receive buffer starts as NaN.
// `elements`: of the send buffer (the receive buffer holds one such block per rank).
template <class Call>
std::vector<Seen> run_team(const tlc::TeamOptions& options, std::size_t elements, Call&& call) {
  tlc::Team team(MPI_COMM_WORLD, options);
  const int threads = team.threads();
  bool still_works = true;
  std::vector<Seen> seen(static_cast<std::size_t>(threads));
  team.run([&](tlc::Thread& me) {
    Seen& mine = seen[static_cast<std::size_t>(me.local_index())];
    std::vector<double> send(elements, 1.0 + me.rank());
    std::vector<double> recv(elements * static_cast<std::size_t>(me.size()),
                             std::numeric_limits<double>::quiet_NaN());
    try {
      call(me, send, recv);
    } catch (const tlc::Error& e) {
      mine.error = e.what();
    }
    for (double x : recv) mine.untouched = mine.untouched && std::isnan(x);
    // Nothing was started anywhere: the team still works.
    if (me.allreduce(1.0) != me.size()) still_works = false;
  });
  EXPECT_TRUE(still_works) << "the team broke after the checked failure";
  return seen;
}

template <class Call>
std::vector<Seen> run_checked(int threads, Call&& call, const std::string& leaders = "") {
  return run_team(checked(threads, leaders), 64, std::forward<Call>(call));
}

void expect_named(const std::vector<Seen>& seen, const std::string& what) {
  for (std::size_t t = 0; t < seen.size(); ++t) {
    EXPECT_NE(seen[t].error.find("process 1 has"), std::string::npos)
        << "thread " << t << ": '" << seen[t].error << "'";
    EXPECT_NE(seen[t].error.find(what), std::string::npos)
        << "thread " << t << ": '" << seen[t].error << "'";
    EXPECT_TRUE(seen[t].untouched) << "thread " << t << ": a receive buffer was written";
  }
}

TEST(Check, ProcessesThatDisagreeFailEverywhereBeforeDataMoves) {
  if (world_size() < 2) GTEST_SKIP() << "needs two processes";
  const int threads = 1 + world_rank() % 2;
  const bool odd = world_rank() == 1;
  using Buffers = std::vector<double>;
  expect_named(run_checked(threads,
                           [&](tlc::Thread& me, Buffers& send, Buffers& recv) {
                             const std::size_t n = odd ? 32 : 64;
                             me.allreduce(std::span<const double>(send.data(), n),
                                          std::span<double>(recv.data(), n));
                           }),
               "count per rank");
  expect_named(run_checked(threads,
                           [&](tlc::Thread& me, Buffers& send, Buffers& recv) {
                             std::span<const double> s(send.data(), 64);
                             std::span<double> r(recv.data(), 64);
                             if (odd)
                               me.allreduce(s, r, tlc::max{});
                             else
                               me.allreduce(s, r, std::plus<>{});
                           }),
               "op");
  expect_named(run_checked(threads,
                           [&](tlc::Thread& me, Buffers&, Buffers& recv) {
                             me.bcast(std::span<double>(recv.data(), 64), odd ? 1 : 0);
                           }),
               "root");
  // The same size, another type: int64 sums where the others sum doubles.
  expect_named(run_checked(threads,
                           [&](tlc::Thread& me, Buffers& send, Buffers& recv) {
                             if (odd) {
                               std::vector<std::int64_t> s(64, 1), r(64);
                               me.allreduce(std::span<const std::int64_t>(s),
                                            std::span<std::int64_t>(r));
                             } else {
                               me.allreduce(std::span<const double>(send.data(), 64),
                                            std::span<double>(recv.data(), 64));
                             }
                           }),
               "element type");
  expect_named(run_checked(threads,
                           [&](tlc::Thread& me, Buffers& send, Buffers& recv) {
                             std::span<const double> s(send.data(), 64);
                             if (odd)
                               me.allgather(s, std::span<double>(recv));
                             else
                               me.allreduce(s, std::span<double>(recv.data(), 64));
                           }),
               "collective");
  // Process 1 skips a call: its next call meets the others' barrier.
  expect_named(run_checked(threads,
                           [&](tlc::Thread& me, Buffers& send, Buffers& recv) {
                             std::span<const double> s(send.data(), 64);
                             std::span<double> r(recv.data(), 64);
                             if (!odd) me.barrier();
                             me.allreduce(s, r);
                           }),
               "collective barrier");
}

// v-variants whose counts agree inside each process but not between them: process 1 counts
// the blocks of process 0's ranks as 2 elements where process 0 sends 1 (or, for gatherv,
// process 1's ranks send 2 where the root counts 1). The counts are compared as sums of a word
// per pair of ranks, so the error cannot name the process; it names the counts.
TEST(Check, VariantCountsThatDisagreeBetweenProcessesFailEverywhere) {
  if (world_size() < 2) GTEST_SKIP() << "needs two processes";
  const int threads = 1 + world_rank() % 2;
  const bool odd = world_rank() == 1;
  using Buffers = std::vector<double>;
  auto expect_counts_named = [](const std::vector<Seen>& seen, const char* which) {
    for (std::size_t t = 0; t < seen.size(); ++t) {
      EXPECT_NE(seen[t].error.find("counts of this v-variant"), std::string::npos)
          << which << ", thread " << t << ": '" << seen[t].error << "'";
      EXPECT_TRUE(seen[t].untouched) << which << ", thread " << t << ": a buffer was written";
    }
  };
  // counts and displacements of blocks 2 elements apart; process 1 counts the first
  // process0_ranks ranks' blocks as 2 elements.
  auto layout = [&](tlc::Thread& me, std::vector<std::size_t>& counts,
                    std::vector<std::size_t>& displs, int process0_ranks) {
    const auto R = static_cast<std::size_t>(me.size());
    counts.assign(R, 1);
    displs.resize(R);
    for (std::size_t r = 0; r < R; ++r) displs[r] = 2 * r;
    if (odd)
      for (int r = 0; r < process0_ranks; ++r) counts[static_cast<std::size_t>(r)] = 2;
  };
  const int process0_ranks = 1;  // process 0 has one thread (1 + 0 % 2)
  expect_counts_named(
      run_checked(threads,
                  [&](tlc::Thread& me, Buffers& send, Buffers& recv) {
                    std::vector<std::size_t> sc(static_cast<std::size_t>(me.size()), 1), sd, rc, rd;
                    layout(me, rc, rd, process0_ranks);
                    sd = rd;
                    me.alltoallv(std::span<const double>(send), std::span<const std::size_t>(sc),
                                 std::span<const std::size_t>(sd), std::span<double>(recv),
                                 std::span<const std::size_t>(rc),
                                 std::span<const std::size_t>(rd));
                  }),
      "alltoallv");
  expect_counts_named(
      run_checked(threads,
                  [&](tlc::Thread& me, Buffers& send, Buffers& recv) {
                    std::vector<std::size_t> rc, rd;
                    layout(me, rc, rd, process0_ranks);
                    const std::size_t mine = rc[static_cast<std::size_t>(me.rank())];
                    me.allgatherv(std::span<const double>(send.data(), mine),
                                  std::span<double>(recv), std::span<const std::size_t>(rc),
                                  std::span<const std::size_t>(rd));
                  }),
      "allgatherv");
  expect_counts_named(run_checked(threads,
                                  [&](tlc::Thread& me, Buffers& send, Buffers& recv) {
                                    std::vector<std::size_t> rc, rd;
                                    layout(me, rc, rd, 0);  // the root's counts: 1 for everyone
                                    me.gatherv(std::span<const double>(send.data(), odd ? 2 : 1),
                                               std::span<double>(recv),
                                               std::span<const std::size_t>(rc),
                                               std::span<const std::size_t>(rd), 0);
                                  }),
                      "gatherv");
  expect_counts_named(run_checked(threads,
                                  [&](tlc::Thread& me, Buffers& send, Buffers& recv) {
                                    std::vector<std::size_t> sc, sd;
                                    layout(me, sc, sd, 0);  // the root's counts: 1 for everyone
                                    me.scatterv(std::span<const double>(send),
                                                std::span<const std::size_t>(sc),
                                                std::span<const std::size_t>(sd),
                                                std::span<double>(recv.data(), odd ? 2 : 1), 0);
                                  }),
                      "scatterv");
}

// Calls led by arrival have no rendezvous of the process's threads: the first thread to arrive
// in each process compares the call, and the others wait for its verdict.
TEST(Check, CallsLedByArrivalAreComparedToo) {
  if (world_size() < 2) GTEST_SKIP() << "needs two processes";
  const int threads = 1 + world_rank() % 2;
  const bool odd = world_rank() == 1;
  const std::size_t n = odd ? 32 : 64;
  using Buffers = std::vector<double>;
  for (Collective c : {Collective::bcast, Collective::reduce, Collective::scatter,
                       Collective::allreduce, Collective::reduce_scatter_block, Collective::scan,
                       Collective::exscan, Collective::alltoall}) {
    SCOPED_TRACE(tlc::to_string(c));
    expect_named(run_checked(
                     threads,
                     [&](tlc::Thread& me, Buffers& send, Buffers& recv) {
                       const auto size = static_cast<std::size_t>(me.size());
                       std::span<const double> s(send.data(), n);
                       switch (c) {
                         case Collective::bcast:
                           me.bcast(std::span<double>(recv.data(), n), 0);
                           break;
                         case Collective::reduce:
                           me.reduce(s, std::span<double>(recv.data(), n), 0);
                           break;
                         case Collective::scatter: {
                           std::vector<double> all(n * size, 1.0);
                           me.scatter(std::span<const double>(all),
                                      std::span<double>(recv.data(), n), 0);
                           break;
                         }
                         case Collective::allreduce:
                           me.allreduce(s, std::span<double>(recv.data(), n));
                           break;
                         case Collective::scan:
                           me.scan(s, std::span<double>(recv.data(), n));
                           break;
                         case Collective::exscan:
                           me.exscan(s, std::span<double>(recv.data(), n));
                           break;
                         case Collective::reduce_scatter_block: {
                           std::vector<double> all(n * size, 1.0);
                           me.reduce_scatter_block(std::span<const double>(all),
                                                   std::span<double>(recv.data(), n));
                           break;
                         }
                         default: {
                           std::vector<double> all(n * size, 1.0);
                           me.alltoall(std::span<const double>(all),
                                       std::span<double>(recv.data(), n * size));
                           break;
                         }
                       }
                     },
                     "dynamic"),
                 "count per rank");
  }
}

TEST(Check, CallsThatAgreeRunAsUsual) {
  const int threads = 1 + world_rank() % 3;
  tlc::Team team(MPI_COMM_WORLD, checked(threads));
  std::vector<Outcome> outcomes(static_cast<std::size_t>(threads));
  team.run([&](tlc::Thread& me) {
    Outcome& out = outcomes[static_cast<std::size_t>(me.local_index())];
    for (int k = 0; k < 5; ++k) {
      const double total = me.allreduce(static_cast<double>(me.rank() + k));
      const double n = me.size();
      if (total != n * (n - 1) / 2 + n * k && out.mismatches++ == 0)
        out.first_mismatch = "allreduce " + std::to_string(k);
      std::vector<double> all(static_cast<std::size_t>(me.size()));
      const double mine = me.rank();
      me.allgather(std::span<const double>(&mine, 1), std::span<double>(all));
      for (int r = 0; r < me.size(); ++r)
        if (all[static_cast<std::size_t>(r)] != r && out.mismatches++ == 0)
          out.first_mismatch = "allgather " + std::to_string(k);
      me.barrier();
    }
  });
  expect_clean(outcomes, "checked team");
}

// A user op with state, which says that its state matters (operator==).
struct ScaledSum {
  double scale = 1;
  double operator()(double a, double b) const { return a + scale * b; }
  friend bool operator==(const ScaledSum&, const ScaledSum&) = default;
};

// Op objects of one type whose state differs between processes (each process's threads agree):
// compared by a digest of their bytes, also through tlc::commutative.
TEST(Check, OpObjectsThatDifferBetweenProcessesFailEverywhere) {
  if (world_size() < 2) GTEST_SKIP() << "needs two processes";
  const int threads = 1 + world_rank() % 2;
  const bool odd = world_rank() == 1;
  using Buffers = std::vector<double>;
  const ScaledSum op{odd ? 2.0 : 1.0};
  expect_named(run_checked(threads,
                           [&](tlc::Thread& me, Buffers& send, Buffers& recv) {
                             me.allreduce(std::span<const double>(send.data(), 64),
                                          std::span<double>(recv.data(), 64), op);
                           }),
               "op object");
  expect_named(run_checked(threads,
                           [&](tlc::Thread& me, Buffers& send, Buffers& recv) {
                             me.reduce(std::span<const double>(send.data(), 64),
                                       std::span<double>(recv.data(), 64), 0, tlc::commutative(op));
                           }),
               "op object");
}

// What is not compared gives no false alarm: op objects of equal state, and lambdas, whose
// captures by reference are addresses that differ between processes and threads.
TEST(Check, OpObjectsOfEqualStateAndLambdasRunAsUsual) {
  const int threads = 1 + world_rank() % 3;
  tlc::Team team(MPI_COMM_WORLD, checked(threads));
  std::vector<Outcome> outcomes(static_cast<std::size_t>(threads));
  team.run([&](tlc::Thread& me) {
    Outcome& out = outcomes[static_cast<std::size_t>(me.local_index())];
    const double n = me.size();
    const double ranks = n * (n - 1) / 2;
    const double x = me.rank();
    if (me.allreduce(x, ScaledSum{1.0}) != ranks && out.mismatches++ == 0)
      out.first_mismatch = "ScaledSum";
    double scale = 1.0;  // on each thread's stack
    auto by_reference = [&scale](double a, double b) { return a + scale * b; };
    if (me.allreduce(x, by_reference) != ranks && out.mismatches++ == 0)
      out.first_mismatch = "lambda";
  });
  expect_clean(outcomes, "checked team");
}

// Unset (no TeamOptions::check, no TLC_CHECK), calls whose blocks are 1 MiB or more are compared,
// 16 MiB or more where a node is oversubscribed (a build with assertions compares every call).
TEST(Check, LargeCallsAreComparedByDefault) {
  if (world_size() < 2) GTEST_SKIP() << "needs two processes";
  if (std::getenv("TLC_CHECK")) GTEST_SKIP() << "TLC_CHECK is set";
  const int threads = 1 + world_rank() % 2;
  const bool odd = world_rank() == 1;
  const std::size_t large = (std::size_t{16} << 20) / sizeof(double);
  using Buffers = std::vector<double>;
  for (const char* leaders : {"static", "dynamic"}) {
    tlc::TeamOptions o = test_options(threads);
    o.leaders = leaders;
    expect_named(run_team(o, large + 8,
                          [&](tlc::Thread& me, Buffers& send, Buffers& recv) {
                            const std::size_t n = odd ? large + 8 : large;
                            me.reduce(std::span<const double>(send.data(), n),
                                      std::span<double>(recv.data(), n), 0);
                          }),
                 "count per rank");
  }
}

TEST(Check, MustBeOnEverywhereOrNowhere) {
  if (world_size() < 2) GTEST_SKIP() << "needs two processes";
  tlc::TeamOptions o = test_options(1);
  o.check = world_rank() == 0;
  try {
    tlc::Team team(MPI_COMM_WORLD, o);
    ADD_FAILURE() << "a team was built with TLC_CHECK on some processes only";
  } catch (const tlc::Error& e) {
    EXPECT_NE(std::string(e.what()).find("TLC_CHECK"), std::string::npos) << e.what();
  }
}

}  // namespace
