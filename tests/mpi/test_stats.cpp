// Arrival telemetry (TLC_STATS, Team::stats()): off unless asked for; counts every call once per
// thread; the thread made late on purpose is seen arriving last and the imbalance it causes is
// seen; the metrics keep their definitions' invariants (delta <= omega <= max omega, time after
// the last arrival <= time in the collective); leaders are the threads that ran the
// inter-process step; TLC_STATS=1 prints every process's table on process 0.
#include <unistd.h>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

#include "mpi/test_common.hpp"

namespace {

using namespace tlc_test;
using tlc::Collective;

const tlc::CollectiveStats* find(const tlc::TeamStats& s, Collective c) {
  for (const auto& k : s.collectives)
    if (k.collective == c) return &k;
  return nullptr;
}
// The result points into s: a temporary would leave it dangling.
const tlc::CollectiveStats* find(tlc::TeamStats&& s, Collective c) = delete;

TEST(Stats, OffUnlessAskedFor) {
  tlc::TeamOptions o = test_options(2);
  o.stats = false;
  tlc::Team team(MPI_COMM_WORLD, o);
  team.run([](tlc::Thread& me) {
    double x = 1;
    me.allreduce(std::span<double>(&x, 1));
  });
  const tlc::TeamStats s = team.stats();
  EXPECT_FALSE(s.enabled);
  EXPECT_TRUE(s.collectives.empty());
}

// Call k: local thread k % T sleeps before it arrives, long enough to be the last one even on an
// oversubscribed machine in all but rare cases.
TEST(Stats, SeesTheLateThreadAndItsImbalance) {
  constexpr int threads = 3, calls = 12;
  constexpr auto late = std::chrono::milliseconds(20);
  for (const std::string algorithm : {"", "hierarchical"}) {
    tlc::TeamOptions o = test_options(threads);
    o.stats = true;
    if (!algorithm.empty()) o.algorithms[Collective::allreduce] = algorithm;
    tlc::Team team(MPI_COMM_WORLD, o);
    std::vector<Outcome> outcomes(threads);
    team.run([&](tlc::Thread& me) {
      std::vector<double> v(1000), sum(v.size());
      for (int k = 0; k < calls; ++k) {
        for (std::size_t i = 0; i < v.size(); ++i) v[i] = me.rank() + k + static_cast<double>(i);
        if (k % threads == me.local_index()) std::this_thread::sleep_for(late);
        me.allreduce(std::span<const double>(v), std::span<double>(sum));
        const double ranks = me.size();
        for (std::size_t i = 0; i < v.size(); ++i) {
          const double expected = ranks * (ranks - 1) / 2 + ranks * (k + static_cast<double>(i));
          if (sum[i] != expected) ++outcomes[static_cast<std::size_t>(me.local_index())].mismatches;
        }
      }
      me.barrier();
    });
    expect_clean(outcomes, "allreduce " + algorithm);
    const tlc::TeamStats s = team.stats();
    ASSERT_TRUE(s.enabled);
    EXPECT_EQ(s.threads, threads);
    EXPECT_EQ(s.process, team.process());
    const tlc::CollectiveStats* k = find(s, Collective::allreduce);
    ASSERT_NE(k, nullptr);
    EXPECT_EQ(k->calls, static_cast<std::uint64_t>(calls));
    const tlc::CollectiveStats* b = find(s, Collective::barrier);
    ASSERT_NE(b, nullptr);
    EXPECT_EQ(b->calls, 1u);
    ASSERT_EQ(k->arrived_last.size(), static_cast<std::size_t>(threads));
    std::uint64_t lasts = 0;
    for (int t = 0; t < threads; ++t) {
      lasts += k->arrived_last[static_cast<std::size_t>(t)];
      EXPECT_GE(k->arrived_last[static_cast<std::size_t>(t)], 2u)
          << "thread " << t << " slept before " << calls / threads << " calls";
    }
    EXPECT_EQ(lasts, static_cast<std::uint64_t>(calls));  // one last arrival per call
    const double late_us = std::chrono::duration<double, std::micro>(late).count();
    EXPECT_GE(k->mean_worst_imbalance_us, 0.5 * late_us);
    EXPECT_GE(k->max_worst_imbalance_us, k->mean_worst_imbalance_us);
    EXPECT_LE(k->mean_imbalance_us, k->mean_worst_imbalance_us);
    EXPECT_GT(k->mean_imbalance_us, 0.0);
    // Waiting for the late thread is inside the collective for the others.
    EXPECT_GE(k->mean_time_in_collective_us, 0.5 * late_us * (threads - 1) / threads);
    EXPECT_LE(k->mean_after_last_arrival_us, k->mean_time_in_collective_us);
    // Leaders: nobody on one process; with one leader, thread 0 in every call (a hierarchical
    // allreduce of 8000 bytes is not pipelined).
    std::uint64_t led = 0;
    for (std::uint64_t x : k->led) led += x;
    if (team.processes() == 1) {
      EXPECT_EQ(led, 0u);
    } else if (algorithm == "hierarchical") {
      EXPECT_EQ(k->led[0], static_cast<std::uint64_t>(calls));
      EXPECT_EQ(led, static_cast<std::uint64_t>(calls));
    } else {
      EXPECT_GE(led, static_cast<std::uint64_t>(calls));
    }
  }
}

// full_lane on as many lanes as threads: every thread drives a lane in every call.
TEST(Stats, EveryLaneThreadLeads) {
  if (world_size() == 1) GTEST_SKIP() << "lanes run between processes";
  tlc::TeamOptions o = test_options(2);
  o.stats = true;
  o.lanes = 2;
  o.algorithms[Collective::allreduce] = "full_lane:staged";
  tlc::Team team(MPI_COMM_WORLD, o);
  team.run([](tlc::Thread& me) {
    std::vector<double> v(1000, 1.0);
    for (int k = 0; k < 5; ++k) me.allreduce(std::span<double>(v));
  });
  const tlc::TeamStats stats = team.stats();  // find() points into it: keep it alive
  const tlc::CollectiveStats* k = find(stats, Collective::allreduce);
  ASSERT_NE(k, nullptr);
  EXPECT_EQ(k->led, (std::vector<std::uint64_t>{5, 5}));
}

// Leaders elected by arrival (dynamic reduce, root rank 0): the root leads in its process, the
// last thread to arrive leads elsewhere. The order is forced, not timed: a thread that must be
// late waits until the other has returned from the same call (which it does early, having only
// deposited its contribution).
TEST(Stats, ElectedLeadersFollowArrival) {
  if (world_size() == 1) GTEST_SKIP() << "one process has no inter-process step to lead";
  constexpr int calls = 5;
  for (const int late_elsewhere : {0, 1}) {  // the late thread of the processes without the root
    tlc::TeamOptions o = test_options(2);
    o.stats = true;
    o.algorithms[Collective::reduce] = "dynamic";
    tlc::Team team(MPI_COMM_WORLD, o);
    std::atomic<int> returned{0};
    const int late = team.process() == 0 ? 0 : late_elsewhere;  // the root arrives last at home
    team.run([&](tlc::Thread& me) {
      std::vector<double> v(100, 1.0), sum(v.size());
      for (int k = 0; k < calls; ++k) {
        if (me.local_index() == late)
          while (returned.load() < k + 1) std::this_thread::yield();
        me.reduce(std::span<const double>(v), std::span<double>(sum), 0);
        if (me.local_index() != late) returned.fetch_add(1);
      }
    });
    const tlc::TeamStats stats = team.stats();
    const tlc::CollectiveStats* k = find(stats, Collective::reduce);
    ASSERT_NE(k, nullptr);
    std::vector<std::uint64_t> expected{0, 0};
    expected[static_cast<std::size_t>(late)] = calls;
    EXPECT_EQ(k->led, expected) << "process " << team.process() << ", late thread " << late;
    EXPECT_EQ(k->arrived_last, expected) << "process " << team.process();
  }
}

// TLC_STATS=1: process 0 prints a row per process and collective when the team is destroyed.
TEST(Stats, VariablePrintsEveryProcessAtDestruction) {
  const std::string text = stderr_of("TLC_STATS", "1", [] {
    tlc::Team team(MPI_COMM_WORLD, test_options(2));
    team.run([](tlc::Thread& me) {
      std::vector<double> v(10, 1.0);
      for (int k = 0; k < 7; ++k) me.allreduce(std::span<double>(v));
      me.bcast(std::span<double>(v), 0);
    });
  });
  if (world_rank() != 0) {
    EXPECT_EQ(text.find("tlc stats"), std::string::npos) << text;
    return;
  }
  std::size_t allreduce_rows = 0, bcast_rows = 0;
  std::string line;
  for (std::istringstream lines(text); std::getline(lines, line);) {
    std::istringstream fields(line);
    std::string process, collective, calls;
    fields >> process >> collective >> calls;
    if (collective == "allreduce" && calls == "7") ++allreduce_rows;
    if (collective == "bcast" && calls == "1") ++bcast_rows;
  }
  EXPECT_EQ(allreduce_rows, static_cast<std::size_t>(world_size())) << text;
  EXPECT_EQ(bcast_rows, static_cast<std::size_t>(world_size())) << text;
}

}  // namespace
