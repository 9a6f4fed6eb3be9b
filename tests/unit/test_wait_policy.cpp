// The wait policy under oversubscription: waiters that block are woken by notify, by abort (with
// TeamAborted) and by the timeout (with Error(timeout) and the caller's description).
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "team/wait_policy.hpp"

namespace {

using tlc::detail::Waiter;
using tlc::detail::WaitTuning;

TEST(Waiter, ManyBlockedWaitersWakeOnNotify) {
  Waiter waiter(WaitTuning{10, 1, 0});
  std::atomic<int> flag{0};
  std::atomic<int> woke{0};
  std::vector<std::thread> pool;
  for (int i = 0; i < 8; ++i)  // 4x the cores of the test machine
    pool.emplace_back([&] {
      waiter.wait([&] { return flag.load(std::memory_order_acquire) == 1; },
                  [] { return std::string(); });
      woke.fetch_add(1);
    });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));  // let them reach the blocking phase
  EXPECT_EQ(woke.load(), 0);
  flag.store(1, std::memory_order_release);
  waiter.notify();
  for (auto& t : pool) t.join();
  EXPECT_EQ(woke.load(), 8);
}

TEST(Waiter, PingPongNeverLosesAWakeup) {
  // Two threads hand a counter back and forth through the blocking path many times; a lost
  // wake-up would hang (and ctest's timeout would report it).
  Waiter waiter(WaitTuning{0, 0, 0});
  std::atomic<int> turn{0};
  constexpr int rounds = 20000;
  auto player = [&](int me) {
    for (int k = 0; k < rounds; ++k) {
      const int want = 2 * k + me;
      waiter.wait([&] { return turn.load(std::memory_order_acquire) == want; },
                  [] { return std::string(); });
      turn.store(want + 1, std::memory_order_release);
      waiter.notify();
    }
  };
  std::thread a(player, 0), b(player, 1);
  a.join();
  b.join();
  EXPECT_EQ(turn.load(), 2 * rounds);
}

TEST(Waiter, AbortWakesBlockedWaitersWithTeamAborted) {
  Waiter waiter(WaitTuning{10, 1, 0});
  std::atomic<int> aborted{0};
  std::vector<std::thread> pool;
  for (int i = 0; i < 4; ++i)
    pool.emplace_back([&] {
      try {
        waiter.wait([] { return false; }, [] { return std::string(); });
      } catch (const tlc::TeamAborted& e) {
        if (std::string(e.what()).find("test reason") != std::string::npos) aborted.fetch_add(1);
      }
    });
  std::this_thread::sleep_for(std::chrono::milliseconds(30));
  waiter.abort("test reason");
  for (auto& t : pool) t.join();
  EXPECT_EQ(aborted.load(), 4);
  EXPECT_TRUE(waiter.aborted());
}

TEST(Waiter, TimeoutReportsWhatIsMissing) {
  Waiter waiter(WaitTuning{10, 1, 0.2});
  try {
    waiter.wait([] { return false; }, [] { return std::string("thread 7"); });
    FAIL() << "no timeout";
  } catch (const tlc::Error& e) {
    EXPECT_EQ(e.code(), tlc::Errc::timeout);
    EXPECT_NE(std::string(e.what()).find("thread 7"), std::string::npos) << e.what();
  }
}

}  // namespace
