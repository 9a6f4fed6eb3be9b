// Unit tests of tlc::Placement::plan: thread counts, thread -> NUMA domain and core, pinning
// with and without hyperthreads, lanes -> rails and lane threads, and the errors for requests
// that cannot be honoured.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include <tlc/error.hpp>
#include <tlc/topology.hpp>

#include "unit/test_data.hpp"

namespace {

using tlc_test::data_path;

const tlc::Topology& dual_socket() {
  static const tlc::Topology t = tlc::Topology::from_xml(data_path("dual_socket_two_rails.xml"));
  return t;
}

const tlc::Topology& quad_numa() {
  static const tlc::Topology t = tlc::Topology::from_xml(data_path("quad_numa_one_rail.xml"));
  return t;
}

// 4 NUMA domains x 8 cores x 2 PUs, no rails.
const tlc::Topology& four_domains() {
  static const tlc::Topology t = tlc::Topology::synthetic("package:2 numa:2 core:8 pu:2");
  return t;
}

// One domain, 2 cores with 2 hyperthreads each (PUs 0,1 on core 0; 2,3 on core 1).
const tlc::Topology& two_cores_smt() {
  static const tlc::Topology t = tlc::Topology::synthetic("package:1 numa:1 core:2 pu:2");
  return t;
}

tlc::PlacementRequest request(int threads = 0, int lanes = 0) {
  tlc::PlacementRequest r;
  r.threads = threads;
  r.lanes = lanes;
  return r;
}

std::vector<int> numas(const tlc::Placement& p) {
  std::vector<int> v;
  for (const auto& t : p.threads) v.push_back(t.numa);
  return v;
}

// Returns the error a plan throws, with its message, or fails the test.
tlc::Error plan_error(const tlc::Topology& t, const tlc::PlacementRequest& r) {
  try {
    tlc::Placement::plan(t, r);
  } catch (const tlc::Error& e) {
    return e;
  }
  ADD_FAILURE() << "expected tlc::Error";
  return tlc::Error(tlc::Errc::unsupported, "no error");
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// Every lane listed by its thread, every thread's lanes pointing back to it.
void expect_consistent_lanes(const tlc::Placement& p) {
  std::size_t listed = 0;
  for (const auto& t : p.threads) {
    for (int l : t.lanes) {
      ASSERT_GE(l, 0);
      ASSERT_LT(l, static_cast<int>(p.lanes.size()));
      EXPECT_EQ(p.lanes[static_cast<std::size_t>(l)].thread, t.local_index) << "lane " << l;
    }
    listed += t.lanes.size();
  }
  EXPECT_EQ(listed, p.lanes.size());
  for (std::size_t l = 0; l < p.lanes.size(); ++l) EXPECT_EQ(p.lanes[l].lane, static_cast<int>(l));
}

TEST(PlacementThreads, DefaultIsOnePinnedThreadPerCore) {
  const tlc::Placement p = tlc::Placement::plan(four_domains(), request());
  ASSERT_EQ(p.threads.size(), 32u);
  EXPECT_TRUE(p.pinned);
  for (int i = 0; i < 32; ++i) {
    const auto& t = p.threads[static_cast<std::size_t>(i)];
    EXPECT_EQ(t.local_index, i);
    EXPECT_EQ(t.numa, i / 8);
    EXPECT_EQ(t.core, i);
    // Alone on its core, a thread gets both hyperthreads.
    EXPECT_EQ(t.cpuset, std::to_string(2 * i) + "-" + std::to_string(2 * i + 1));
  }
  ASSERT_EQ(p.lanes.size(), 1u);
}

TEST(PlacementThreads, ThreadsPerNuma) {
  tlc::PlacementRequest r;
  r.threads_per_numa = 3;
  const tlc::Placement p = tlc::Placement::plan(four_domains(), r);
  ASSERT_EQ(p.threads.size(), 12u);
  for (int i = 0; i < 12; ++i) {
    const auto& t = p.threads[static_cast<std::size_t>(i)];
    EXPECT_EQ(t.numa, i / 3);
    EXPECT_EQ(t.core, (i / 3) * 8 + i % 3);  // the first cores of each domain
  }
}

TEST(PlacementThreads, ThreadsAndThreadsPerNumaMayAgree) {
  tlc::PlacementRequest r;
  r.threads = 8;
  r.threads_per_numa = 2;
  EXPECT_EQ(tlc::Placement::plan(four_domains(), r).threads.size(), 8u);
}

TEST(PlacementThreads, UnevenCountsSpreadInBlocksEarlierDomainsFirst) {
  EXPECT_EQ(numas(tlc::Placement::plan(four_domains(), request(10))),
            (std::vector<int>{0, 0, 0, 1, 1, 1, 2, 2, 3, 3}));
  EXPECT_EQ(numas(tlc::Placement::plan(four_domains(), request(2))), (std::vector<int>{0, 1}));
  EXPECT_EQ(numas(tlc::Placement::plan(dual_socket(), request(5))),
            (std::vector<int>{0, 0, 0, 1, 1}));
}

TEST(PlacementThreads, DefaultFollowsAllowedCoresPerDomain) {
  // A binding that leaves 4 cores on socket 0 and 1 on socket 1: the default must not put 3
  // threads on a domain with one PU.
  const tlc::Topology t = dual_socket().restricted_to("0-3,8");
  const tlc::Placement p = tlc::Placement::plan(t, request());
  EXPECT_EQ(numas(p), (std::vector<int>{0, 0, 0, 0, 1}));
  EXPECT_EQ(p.threads[4].core, 8);
  EXPECT_EQ(p.threads[4].cpuset, "8");
}

TEST(PlacementThreads, DetectedMachineDefaultPlanWorks) {
  const tlc::Topology t = tlc::Topology::detect();
  const tlc::Placement p = tlc::Placement::plan(t, request());
  EXPECT_EQ(static_cast<int>(p.threads.size()), t.cores());
  EXPECT_EQ(p.lanes.size(), 1u);
}

TEST(PlacementPinning, DistinctCoresWithLinuxStyleNumbering) {
  const tlc::Placement p = tlc::Placement::plan(dual_socket(), request(16));
  std::set<int> cores;
  for (const auto& t : p.threads) {
    cores.insert(t.core);
    // Core c has PUs c and c+16 in this file.
    EXPECT_EQ(t.cpuset, std::to_string(t.core) + "," + std::to_string(t.core + 16));
    EXPECT_EQ(t.numa, t.core / 8);
  }
  EXPECT_EQ(cores.size(), 16u);
}

TEST(PlacementPinning, HyperthreadsOnlyAfterEveryCoreHasAThread) {
  const tlc::Placement three = tlc::Placement::plan(two_cores_smt(), request(3));
  ASSERT_EQ(three.threads.size(), 3u);
  EXPECT_EQ(three.threads[0].core, 0);
  EXPECT_EQ(three.threads[1].core, 1);
  EXPECT_EQ(three.threads[2].core, 0);
  // Threads 0 and 2 share core 0: one PU each. Thread 1 has core 1 to itself.
  EXPECT_EQ(three.threads[0].cpuset, "0");
  EXPECT_EQ(three.threads[1].cpuset, "2-3");
  EXPECT_EQ(three.threads[2].cpuset, "1");

  const tlc::Placement four = tlc::Placement::plan(two_cores_smt(), request(4));
  std::set<std::string> sets;
  for (const auto& t : four.threads) sets.insert(t.cpuset);
  EXPECT_EQ(sets, (std::set<std::string>{"0", "1", "2", "3"}));
  EXPECT_EQ(four.threads[3].core, 1);
}

TEST(PlacementPinning, TooManyThreadsForTheDomainIsTopologyError) {
  const tlc::Error e = plan_error(two_cores_smt(), request(5));
  EXPECT_EQ(e.code(), tlc::Errc::topology);
  EXPECT_TRUE(contains(e.what(), "cannot pin 5 threads on NUMA domain 0")) << e.what();
  EXPECT_TRUE(contains(e.what(), "4 allowed PUs")) << e.what();
  EXPECT_TRUE(contains(e.what(), "TLC_PIN=0")) << e.what();

  // The limit is per domain: 3 per domain fits 16 PUs total but not 2 PUs per domain.
  tlc::PlacementRequest r;
  r.threads_per_numa = 3;
  const tlc::Topology small = tlc::Topology::synthetic("package:2 numa:1 core:1 pu:2");
  EXPECT_EQ(plan_error(small, r).code(), tlc::Errc::topology);
}

TEST(PlacementPinning, UnpinnedPlansMayOversubscribe) {
  tlc::PlacementRequest r = request(7);
  r.pin = false;
  const tlc::Placement p = tlc::Placement::plan(two_cores_smt(), r);
  EXPECT_FALSE(p.pinned);
  ASSERT_EQ(p.threads.size(), 7u);
  for (const auto& t : p.threads) {
    EXPECT_EQ(t.core, -1);
    EXPECT_EQ(t.cpuset, "");
    EXPECT_EQ(t.numa, 0);
  }
}

TEST(PlacementLanes, RoundRobinOverTwoRailsWithLocalThreads) {
  const tlc::Topology& t = dual_socket();
  const tlc::Placement p = tlc::Placement::plan(t, request(16, 4));
  ASSERT_EQ(p.lanes.size(), 4u);
  std::set<int> drivers;
  for (int l = 0; l < 4; ++l) {
    const auto& lane = p.lanes[static_cast<std::size_t>(l)];
    EXPECT_EQ(lane.rail, l % 2);
    EXPECT_EQ(lane.numa, t.rails()[static_cast<std::size_t>(l % 2)].numa);
    EXPECT_EQ(p.threads[static_cast<std::size_t>(lane.thread)].numa, lane.numa) << "lane " << l;
    drivers.insert(lane.thread);
  }
  EXPECT_EQ(drivers.size(), 4u);
  // The last threads of each domain drive lanes; thread 0 is left alone.
  EXPECT_EQ(p.lanes[0].thread, 7);
  EXPECT_EQ(p.lanes[1].thread, 15);
  EXPECT_EQ(p.lanes[2].thread, 6);
  EXPECT_EQ(p.lanes[3].thread, 14);
  expect_consistent_lanes(p);
}

TEST(PlacementLanes, SingleRailOnDomainTwo) {
  const tlc::Placement p = tlc::Placement::plan(quad_numa(), request(0, 3));
  ASSERT_EQ(p.threads.size(), 16u);
  ASSERT_EQ(p.lanes.size(), 3u);
  for (const auto& lane : p.lanes) {
    EXPECT_EQ(lane.rail, 0);
    EXPECT_EQ(lane.numa, 2);
    EXPECT_EQ(p.threads[static_cast<std::size_t>(lane.thread)].numa, 2) << "lane " << lane.lane;
  }
  EXPECT_EQ(p.lanes[0].thread, 11);
  EXPECT_EQ(p.lanes[1].thread, 10);
  EXPECT_EQ(p.lanes[2].thread, 9);
  expect_consistent_lanes(p);
}

TEST(PlacementLanes, SpillsOutOfTheRailDomainOnlyWhenItIsFull) {
  // One thread per domain: the rail's domain has one idle thread, then others are used.
  tlc::PlacementRequest r;
  r.threads_per_numa = 1;
  r.lanes = 3;
  const tlc::Placement p = tlc::Placement::plan(quad_numa(), r);
  ASSERT_EQ(p.threads.size(), 4u);
  EXPECT_EQ(p.lanes[0].thread, 2);
  EXPECT_EQ(p.lanes[1].thread, 3);  // no idle thread left on domain 2: highest idle index
  EXPECT_EQ(p.lanes[2].thread, 1);
  for (const auto& lane : p.lanes) EXPECT_EQ(lane.numa, 2);  // the rail's domain, not the thread's
  expect_consistent_lanes(p);
}

TEST(PlacementLanes, MoreLanesThanThreadsReuseRoundRobin) {
  const tlc::Placement p = tlc::Placement::plan(dual_socket(), request(2, 5));
  ASSERT_EQ(p.lanes.size(), 5u);
  EXPECT_EQ(p.lanes[0].thread, 0);  // rail 0 on domain 0: thread 0 is the only one there
  EXPECT_EQ(p.lanes[1].thread, 1);
  EXPECT_EQ(p.lanes[2].thread, 0);
  EXPECT_EQ(p.lanes[3].thread, 1);
  EXPECT_EQ(p.lanes[4].thread, 0);
  EXPECT_EQ(p.threads[0].lanes, (std::vector<int>{0, 2, 4}));
  EXPECT_EQ(p.threads[1].lanes, (std::vector<int>{1, 3}));
  expect_consistent_lanes(p);
}

TEST(PlacementLanes, NoRailsMeansRailMinusOneAndTheThreadsDomain) {
  const tlc::Placement p = tlc::Placement::plan(four_domains(), request(8, 2));
  ASSERT_EQ(p.lanes.size(), 2u);
  for (const auto& lane : p.lanes) {
    EXPECT_EQ(lane.rail, -1);
    EXPECT_EQ(lane.numa, p.threads[static_cast<std::size_t>(lane.thread)].numa);
  }
  EXPECT_EQ(p.lanes[0].thread, 7);
  EXPECT_EQ(p.lanes[1].thread, 6);
}

TEST(PlacementLanes, RailOutsideTheAllowedDomainsUsesTheThreadsDomain) {
  // Bound to socket 0 only: hfi1_1's domain is unknown to this process.
  const tlc::Topology t = dual_socket().restricted_to("0-7");
  const tlc::Placement p = tlc::Placement::plan(t, request(0, 2));
  ASSERT_EQ(p.lanes.size(), 2u);
  EXPECT_EQ(p.lanes[1].rail, 1);
  EXPECT_EQ(p.lanes[1].numa, 0);
  EXPECT_NE(p.lanes[0].thread, p.lanes[1].thread);
}

TEST(PlacementLanes, DefaultIsOneLane) {
  const tlc::Placement p = tlc::Placement::plan(dual_socket(), request());
  ASSERT_EQ(p.lanes.size(), 1u);
  EXPECT_EQ(p.lanes[0].rail, 0);
}

TEST(PlacementLanes, ThreadsPerRailSetsTheLaneCount) {
  tlc::PlacementRequest r;
  r.threads_per_rail = 2;
  const tlc::Placement p = tlc::Placement::plan(dual_socket(), r);
  ASSERT_EQ(p.lanes.size(), 4u);
  EXPECT_EQ(p.lanes[2].rail, 0);
  EXPECT_EQ(p.lanes[3].rail, 1);

  r.threads_per_rail = 3;
  EXPECT_EQ(tlc::Placement::plan(quad_numa(), r).lanes.size(), 3u);

  r.threads_per_rail = 2;
  r.lanes = 4;  // agrees with 2 per rail x 2 rails
  EXPECT_EQ(tlc::Placement::plan(dual_socket(), r).lanes.size(), 4u);
}

TEST(PlacementErrors, ThreadsPerRailWithoutRails) {
  tlc::PlacementRequest r;
  r.threads_per_rail = 1;
  const tlc::Error e = plan_error(four_domains(), r);
  EXPECT_EQ(e.code(), tlc::Errc::topology);
  EXPECT_TRUE(contains(e.what(), "lanes")) << e.what();
}

TEST(PlacementErrors, LanesContradictThreadsPerRail) {
  tlc::PlacementRequest r;
  r.threads_per_rail = 2;
  r.lanes = 3;
  const tlc::Error e = plan_error(dual_socket(), r);
  EXPECT_EQ(e.code(), tlc::Errc::invalid_argument);
  EXPECT_TRUE(contains(e.what(), "lanes=3")) << e.what();
  EXPECT_TRUE(contains(e.what(), "4 lanes")) << e.what();
}

TEST(PlacementErrors, ThreadsContradictThreadsPerNuma) {
  tlc::PlacementRequest r;
  r.threads = 5;
  r.threads_per_numa = 2;
  const tlc::Error e = plan_error(four_domains(), r);
  EXPECT_EQ(e.code(), tlc::Errc::invalid_argument);
  EXPECT_TRUE(contains(e.what(), "threads=5")) << e.what();
  EXPECT_TRUE(contains(e.what(), "8 threads")) << e.what();
}

TEST(PlacementErrors, NegativeValues) {
  for (int field = 0; field < 4; ++field) {
    tlc::PlacementRequest r;
    (field == 0   ? r.threads
     : field == 1 ? r.threads_per_numa
     : field == 2 ? r.lanes
                  : r.threads_per_rail) = -1;
    EXPECT_EQ(plan_error(dual_socket(), r).code(), tlc::Errc::invalid_argument)
        << "field " << field;
  }
}

TEST(PlacementDescribe, ShowsThreadsAndLanes) {
  const tlc::Placement p = tlc::Placement::plan(dual_socket(), request(4, 2));
  const std::string text = p.describe();
  EXPECT_TRUE(contains(text, "4 threads")) << text;
  EXPECT_TRUE(contains(text, "2 lanes")) << text;
  EXPECT_TRUE(contains(text, "cpuset")) << text;
  EXPECT_TRUE(contains(text, "8,24")) << text;  // thread 2 on core 8
  tlc::PlacementRequest r = request(2);
  r.pin = false;
  EXPECT_TRUE(contains(tlc::Placement::plan(dual_socket(), r).describe(), "not pinned"));
}

}  // namespace
