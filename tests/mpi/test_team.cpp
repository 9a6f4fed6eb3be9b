// Team identity (global ranks, process-major), barrier ordering, attach from the application's
// own threads, and the run/attach exclusivity rules.
#include <atomic>
#include <cstdlib>
#include <optional>
#include <set>
#include <thread>

#include "mpi/test_common.hpp"

namespace {

using namespace tlc_test;

class TeamTest : public testing::TestWithParam<Shape> {};

TEST_P(TeamTest, RanksAreProcessMajorAndComplete) {
  const Shape shape = GetParam();
  const int p = world_rank(), np = world_size();
  tlc::Team team(MPI_COMM_WORLD, test_options(shape.threads_of(p)));
  EXPECT_EQ(team.threads(), shape.threads_of(p));
  EXPECT_EQ(team.size(), team_size(shape, np));
  EXPECT_EQ(team.first_rank(), global_rank(shape, p, 0));
  EXPECT_EQ(team.process(), p);
  EXPECT_EQ(team.processes(), np);

  std::vector<int> ranks(static_cast<std::size_t>(team.threads()), -1);
  std::vector<long> rank_sums(ranks.size(), -1);
  team.run([&](tlc::Thread& me) {
    ranks[static_cast<std::size_t>(me.local_index())] = me.rank();
    long mine = me.rank();
    me.allreduce(std::span<long>(&mine, 1));
    rank_sums[static_cast<std::size_t>(me.local_index())] = mine;
  });
  const long size = team.size();
  for (std::size_t t = 0; t < ranks.size(); ++t) {
    EXPECT_EQ(ranks[t], global_rank(shape, p, static_cast<int>(t)));
    EXPECT_EQ(rank_sums[t], size * (size - 1) / 2);
  }
}

TEST_P(TeamTest, BarrierSeparatesPhases) {
  const Shape shape = GetParam();
  tlc::Team team(MPI_COMM_WORLD, test_options(shape.threads_of(world_rank())));
  constexpr int rounds = 50;
  std::vector<std::atomic<int>> arrived(rounds);
  std::atomic<int> violations{0};
  team.run([&](tlc::Thread& me) {
    for (int k = 0; k < rounds; ++k) {
      arrived[static_cast<std::size_t>(k)].fetch_add(1);
      me.barrier();
      // After the barrier every thread of this process has counted round k.
      if (arrived[static_cast<std::size_t>(k)].load() != me.threads()) violations.fetch_add(1);
    }
  });
  EXPECT_EQ(violations.load(), 0);
}

TEST_P(TeamTest, BarrierWaitsForOtherProcesses) {
  // Process p's threads write their process number into a window of rank 0 only after the
  // barrier that follows process 0's reset; rank 0 then sees every other process's mark.
  const Shape shape = GetParam();
  const int p = world_rank(), np = world_size();
  tlc::Team team(MPI_COMM_WORLD, test_options(shape.threads_of(p)));
  std::vector<int> seen(static_cast<std::size_t>(team.threads()), 0);
  team.run([&](tlc::Thread& me) {
    for (int round = 1; round <= 20; ++round) {
      int token = me.process() == round % me.processes() ? round : 0;
      me.allreduce(std::span<int>(&token, 1), tlc::max{});  // everyone learns the round
      me.barrier();
      seen[static_cast<std::size_t>(me.local_index())] += token == round ? 1 : 0;
    }
  });
  for (int v : seen) EXPECT_EQ(v, 20) << "with " << np << " processes";
}

TEST_P(TeamTest, AttachFromApplicationThreads) {
  const Shape shape = GetParam();
  tlc::Team team(MPI_COMM_WORLD, test_options(shape.threads_of(world_rank())));
  std::vector<Outcome> outcomes(static_cast<std::size_t>(team.threads()));
  const long size = team.size();
  for (int repeat = 0; repeat < 3; ++repeat) {  // attach, detach, attach again
    std::vector<std::thread> pool;
    for (int t = 0; t < team.threads(); ++t) {
      pool.emplace_back([&, t] {
        try {
          tlc::Thread me = team.attach(t);
          std::vector<long> v(5, me.rank());
          me.allreduce(std::span<long>(v));
          for (long x : v)
            if (x != size * (size - 1) / 2) ++outcomes[static_cast<std::size_t>(t)].mismatches;
          me.barrier();
        } catch (const std::exception& e) {
          outcomes[static_cast<std::size_t>(t)].error = e.what();
        }
      });
    }
    for (auto& th : pool) th.join();
  }
  expect_clean(outcomes, "attach");
}

INSTANTIATE_TEST_SUITE_P(Shapes, TeamTest, testing::ValuesIn(shapes()),
                         [](const testing::TestParamInfo<Shape>& param_info) {
                           return std::string(param_info.param.name);
                         });

TEST(TeamRules, AttachTwiceAndRunWhileAttachedAreErrors) {
  tlc::Team team(MPI_COMM_WORLD, test_options(2));
  tlc::Thread first = team.attach(0);
  try {
    tlc::Thread again = team.attach(0);
    ADD_FAILURE() << "second attach(0) succeeded";
  } catch (const tlc::Error& e) {
    EXPECT_EQ(e.code(), tlc::Errc::invalid_argument);
  }
  EXPECT_THROW(team.attach(2), tlc::Error);
  EXPECT_THROW(team.attach(-1), tlc::Error);
  EXPECT_THROW(team.run([](tlc::Thread&) {}), tlc::Error);
}

// A moved-from Thread is no participant any more: its collectives are errors (before, it still
// acted as the participant it had been, next to the Thread it was moved to), and the index it
// held is given back once, by the Thread that holds it now.
TEST(TeamRules, MovedFromThreadRefusesCollectives) {
  tlc::Team team(MPI_COMM_WORLD, test_options(1));
  tlc::Thread first = team.attach(0);
  tlc::Thread moved = std::move(first);
  double x = 1;
  try {
    first.allreduce(std::span<double>(&x, 1));
    ADD_FAILURE() << "a collective on a moved-from Thread ran";
  } catch (const tlc::Error& e) {
    EXPECT_EQ(e.code(), tlc::Errc::invalid_argument);
    EXPECT_NE(std::string(e.what()).find("moved-from"), std::string::npos) << e.what();
  }
  EXPECT_THROW(first.barrier(), tlc::Error);
  EXPECT_THROW(team.attach(0), tlc::Error);  // still held, by `moved`
  moved.allreduce(std::span<double>(&x, 1));
  EXPECT_EQ(x, static_cast<double>(team.size()));
  {
    tlc::Thread last = std::move(moved);
    EXPECT_THROW(moved.barrier(), tlc::Error);
  }
  tlc::Thread again = team.attach(0);  // given back when `last` went
  again.barrier();
}

// A Thread that outlives its Team gets an error instead of touching the freed team, and its
// destruction does not touch it either.
TEST(TeamRules, ThreadOutlivingItsTeamRefusesCollectives) {
  std::optional<tlc::Thread> survivor;
  {
    tlc::Team team(MPI_COMM_WORLD, test_options(1));
    survivor.emplace(team.attach(0));
    double x = 1;
    survivor->allreduce(std::span<double>(&x, 1));
    EXPECT_EQ(x, static_cast<double>(team.size()));
  }
  double x = 1;
  try {
    survivor->allreduce(std::span<double>(&x, 1));
    ADD_FAILURE() << "a collective ran on a destroyed team";
  } catch (const tlc::Error& e) {
    EXPECT_EQ(e.code(), tlc::Errc::invalid_argument);
    EXPECT_NE(std::string(e.what()).find("destroyed"), std::string::npos) << e.what();
  }
  EXPECT_EQ(x, 1.0);
  survivor.reset();
}

TEST(TeamRules, RunRepeatedlyReusesThreads) {
  tlc::Team team(MPI_COMM_WORLD, test_options(3));
  std::atomic<int> calls{0};
  for (int i = 0; i < 50; ++i) team.run([&](tlc::Thread&) { calls.fetch_add(1); });
  EXPECT_EQ(calls.load(), 150);
}

}  // namespace

namespace {

TEST(TeamRules, DefaultPinningPinsOnlyWhatFits) {
  // ctest sets TLC_PIN=0; this test is about the default, so it clears it for the moment.
  const std::string saved = std::getenv("TLC_PIN") ? std::getenv("TLC_PIN") : "";
  ::unsetenv("TLC_PIN");
  tlc::TeamOptions o;
  o.threads = 1;
  {
    tlc::Team team(MPI_COMM_WORLD, o);
    EXPECT_TRUE(team.placement().pinned);
    EXPECT_FALSE(team.placement().threads[0].cpuset.empty());
  }
  o.threads = 64;  // more than this test machine's PUs: runs unpinned instead of failing
  {
    tlc::Team team(MPI_COMM_WORLD, o);
    if (team.topology().pus() < 64) {
      EXPECT_FALSE(team.placement().pinned);
    }
    EXPECT_EQ(team.threads(), 64);
  }
  o.pin = true;  // but an explicit request that cannot be honoured is an error
  if (tlc::Topology::detect().pus() < 64) {
    EXPECT_THROW(tlc::Team(MPI_COMM_WORLD, o), tlc::Error);
  }
  if (!saved.empty()) ::setenv("TLC_PIN", saved.c_str(), 1);
}

}  // namespace

namespace {

// A collective that moves nothing leaves the process communicator as it found it. An empty
// alltoall staged on a process of several threads once passed MPI the same (empty) address as
// send and receive buffer; Open MPI's non-blocking collectives take that for MPI_IN_PLACE and
// ran another schedule than the one-thread processes, so the next collective on the
// communicator hung. Uneven shapes (three threads on process 0, one elsewhere) put staged and
// direct forms side by side; each call after the empty ones is checked element by element.
TEST(TeamRules, EmptyCollectivesLeaveTheCommunicatorClean) {
  tlc::TeamOptions o = test_options(world_rank() == 0 ? 3 : 1);
  o.timeout_seconds = 30;
  tlc::Team team(MPI_COMM_WORLD, o);
  const int size = team.size();
  team.run([&](tlc::Thread& me) {
    for (int round = 0; round < 3; ++round) {
      std::vector<std::uint8_t> none_send, none_recv;
      me.alltoall(std::span<const std::uint8_t>(none_send), std::span<std::uint8_t>(none_recv));
      me.allgather(std::span<const std::uint8_t>(none_send), std::span<std::uint8_t>(none_recv));
      // Rank r contributes r % 3 + 1 copies of r + round.
      std::vector<std::size_t> counts(static_cast<std::size_t>(size)), displs(counts.size());
      std::size_t total = 0;
      for (std::size_t r = 0; r < counts.size(); ++r) {
        counts[r] = r % 3 + 1;
        displs[r] = total;
        total += counts[r];
      }
      const auto mine = static_cast<std::size_t>(me.rank());
      std::vector<std::uint8_t> send(counts[mine], static_cast<std::uint8_t>(me.rank() + round));
      std::vector<std::uint8_t> recv(total, 0xff);
      me.allgatherv(std::span<const std::uint8_t>(send), std::span<std::uint8_t>(recv), counts,
                    displs);
      for (std::size_t r = 0; r < counts.size(); ++r)
        for (std::size_t k = 0; k < counts[r]; ++k)
          ASSERT_EQ(recv[displs[r] + k], static_cast<std::uint8_t>(r + round))
              << "round " << round << ", block of rank " << r << ", element " << k;
    }
  });
}

// Team::select_algorithm answers with the team's own planner: a forced algorithm that serves the
// call is the plan, with the model's price of it; one that cannot serve it is the plan's own
// choice, with the reason; a single-process call small enough for a begin line is inline.
TEST(TeamRules, SelectAlgorithmIsTheTeamsOwnPlan) {
  const bool across = world_size() > 1;
  tlc::TeamOptions o = test_options(2);
  o.algorithms[tlc::Collective::allreduce] = across ? "full_lane" : "sliced";
  o.algorithms[tlc::Collective::bcast] = across ? "sliced" : "full_lane";
  tlc::Team team(MPI_COMM_WORLD, o);

  const tlc::Selection forced = team.select_algorithm({tlc::Collective::allreduce, 1 << 20, 8});
  EXPECT_EQ(forced.name, across ? "full_lane" : "sliced");
  EXPECT_TRUE(forced.fallback.empty()) << forced.fallback;
  ASSERT_TRUE(forced.plan_seconds.has_value());
  EXPECT_GT(*forced.plan_seconds, 0);
  EXPECT_FALSE(forced.predicted_seconds.empty());

  const tlc::Selection fell_back = team.select_algorithm({tlc::Collective::bcast, 1 << 20, 8});
  EXPECT_NE(fell_back.name, across ? "sliced" : "full_lane");
  EXPECT_NE(fell_back.fallback, "");

  if (!across) {
    const tlc::Selection small = team.select_algorithm({tlc::Collective::barrier, 0, 1});
    EXPECT_EQ(small.form, "inline");
    EXPECT_EQ(team.select_algorithm({tlc::Collective::scan, 8, 8}).form, "inline");
  }
}

}  // namespace
