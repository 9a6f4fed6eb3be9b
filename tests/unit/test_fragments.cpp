// Which threads' blocks the alltoall led by arrival sends together when one more thread arrives
// (algo/fragments.hpp): runs grow until they reach the minimum or cannot grow, and every block
// is sent exactly once whatever the arrival order.
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <random>
#include <vector>

#include "algo/fragments.hpp"

namespace {

using tlc::detail::BlockState;
using tlc::detail::take_fragments;
using tlc::detail::ThreadRun;
using Runs = std::vector<ThreadRun>;

// Arrivals in `order`; the runs each arrival sends.
std::vector<Runs> arrive(int threads, const std::vector<int>& order, std::size_t block,
                         std::size_t minimum) {
  std::vector<BlockState> state(static_cast<std::size_t>(threads), BlockState::absent);
  std::vector<Runs> sent;
  for (int me : order) {
    state[static_cast<std::size_t>(me)] = BlockState::available;
    sent.push_back(take_fragments(state, me, block, minimum));
  }
  return sent;
}

TEST(Fragments, BalancedArrivalsSendTheWholeBufferOnce) {
  const auto sent = arrive(4, {0, 1, 2, 3}, 8, 64);  // 4 x 8 bytes never reach 64
  EXPECT_EQ(sent, (std::vector<Runs>{{}, {}, {}, {{0, 4}}}));
}

TEST(Fragments, ARunGoesWhenItReachesTheMinimum) {
  // Blocks of 10 bytes, minimum 20: two neighbours make a fragment.
  const auto sent = arrive(5, {1, 2, 4, 3, 0}, 10, 20);
  // 1: alone; 2: [1, 3) reaches 20; 4: alone at the edge, 3 absent; 3: [3, 5) reaches 20;
  // 0: the last, [0, 1).
  EXPECT_EQ(sent, (std::vector<Runs>{{}, {{1, 3}}, {}, {{3, 5}}, {{0, 1}}}));
}

TEST(Fragments, ARunThatCannotGrowGoesAtOnce) {
  // Threads 0 and 2 sent; 1 is closed in between them although 10 bytes < 100.
  std::vector<BlockState> state{BlockState::taken, BlockState::available, BlockState::taken,
                                BlockState::absent};
  EXPECT_EQ(take_fragments(state, 1, 10, 100), (Runs{{1, 2}}));
  EXPECT_EQ(state[1], BlockState::taken);
  // At the edge, next to a taken block.
  std::vector<BlockState> edge{BlockState::absent, BlockState::taken, BlockState::available};
  EXPECT_EQ(take_fragments(edge, 2, 10, 100), (Runs{{2, 3}}));
}

TEST(Fragments, BlocksAtLeastTheMinimumGoAloneOnArrival) {
  const auto sent = arrive(3, {2, 0, 1}, 64, 64);
  EXPECT_EQ(sent, (std::vector<Runs>{{{2, 3}}, {{0, 1}}, {{1, 2}}}));
}

TEST(Fragments, TheLastArrivalSendsEveryWaitingRun) {
  // 0, 2 and 4 wait alone (8 < 32, a neighbour absent); 1 joins 0 and 2 into [0, 3) = 24 < 32,
  // which can still grow; the last, 3, sends everything as one run.
  const auto sent = arrive(5, {0, 2, 4, 1, 3}, 8, 32);
  EXPECT_EQ(sent, (std::vector<Runs>{{}, {}, {}, {}, {{0, 5}}}));
  const auto split = arrive(6, {0, 5, 2, 3, 4, 1}, 8, 24);
  // 2, 3, 4 join 5 into [2, 6) = 32 bytes at 4's arrival; 1 is last: [0, 2).
  EXPECT_EQ(split, (std::vector<Runs>{{}, {}, {}, {}, {{2, 6}}, {{0, 2}}}));
}

TEST(Fragments, EveryBlockIsSentExactlyOnceInAnyOrder) {
  std::mt19937 random(7);
  for (int threads = 1; threads <= 9; ++threads)
    for (std::size_t minimum :
         {std::size_t{1}, std::size_t{16}, std::size_t{40}, std::size_t{1000}})
      for (int trial = 0; trial < 50; ++trial) {
        std::vector<int> order(static_cast<std::size_t>(threads));
        std::iota(order.begin(), order.end(), 0);
        std::shuffle(order.begin(), order.end(), random);
        std::vector<int> times_sent(static_cast<std::size_t>(threads), 0);
        std::vector<bool> arrived(static_cast<std::size_t>(threads), false);
        std::vector<bool> taken(static_cast<std::size_t>(threads), false);
        auto taken_or_edge = [&](int u) {
          return u < 0 || u >= threads || taken[static_cast<std::size_t>(u)];
        };
        const auto sent = arrive(threads, order, 8, minimum);
        for (std::size_t i = 0; i < order.size(); ++i) {
          arrived[static_cast<std::size_t>(order[i])] = true;
          for (const ThreadRun& r : sent[i]) {
            ASSERT_LT(r.first, r.end);
            // Below the minimum only when it cannot grow or everybody has come.
            if (static_cast<std::size_t>(r.end - r.first) * 8 < minimum && i + 1 < order.size()) {
              ASSERT_TRUE(taken_or_edge(r.first - 1) && taken_or_edge(r.end));
            }
          }
          for (const ThreadRun& r : sent[i]) {
            // Only arrived threads.
            for (int u = r.first; u < r.end; ++u) {
              taken[static_cast<std::size_t>(u)] = true;
              ASSERT_TRUE(arrived[static_cast<std::size_t>(u)]);
              ++times_sent[static_cast<std::size_t>(u)];
            }
          }
        }
        for (int n : times_sent) ASSERT_EQ(n, 1) << threads << " threads, minimum " << minimum;
      }
}

}  // namespace
