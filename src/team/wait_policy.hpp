// How a thread waits for another (docs/design.md section 5): spin briefly with a pause instruction,
// then yield the core, then block on a condition variable (a futex underneath). Blocking matters:
// tests and many real runs have more threads than cores, and a spinning waiter steals the very core
// the thread it waits for needs.
//
// One Waiter serves a whole team. Writers call notify() after publishing a flag; the sleeper
// count keeps that to a fence and a load when nobody sleeps (the common, fast case). The waiter
// increments the count and re-checks its condition under the mutex, the notifier stores, fences
// and then reads the count: one of the two always sees the other, so no wake-up is lost.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

#include <tlc/error.hpp>

namespace tlc::detail {

inline void cpu_relax() noexcept {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield" ::: "memory");
#endif
}

struct WaitTuning {
  int spins = 2000;            // pause-loop iterations before yielding
  int yields = 16;             // sched_yield calls before blocking
  double timeout_seconds = 0;  // 0: wait forever
  // TLC_TIMEOUT_ACTION=abort: called with the message instead of throwing it (ends the job).
  void (*timeout_action)(const std::string& message) = nullptr;
};

class Waiter {
 public:
  explicit Waiter(WaitTuning tuning = {}) : tuning_(tuning) {}

  const WaitTuning& tuning() const noexcept { return tuning_; }
  // Only before any thread waits.
  void set_tuning(WaitTuning tuning) noexcept { tuning_ = tuning; }
  // Only before any thread waits: called by every wait that goes to sleep, before it sleeps
  // (the slow path only), to find a wait that can never end and abort instead.
  void set_block_check(std::function<void()> check) { block_check_ = std::move(check); }

  // Waits until ready() is true. Throws TeamAborted once abort() was called (unless
  // OnAbort::keep_waiting: then only ready() ends the wait, for waits that must outlast an
  // abort), and
  // Error(timeout) with describe_missing()'s text when the timeout expires.
  enum class OnAbort : bool { throw_aborted, keep_waiting };
  template <class Ready, class DescribeMissing>
  void wait(Ready&& ready, DescribeMissing&& describe_missing,
            OnAbort on_abort = OnAbort::throw_aborted) {
    for (int i = 0; i < tuning_.spins; ++i) {
      if (ready()) return;
      cpu_relax();
    }
    for (int i = 0; i < tuning_.yields; ++i) {
      if (ready()) return;
      if (on_abort == OnAbort::throw_aborted) throw_if_aborted();
      std::this_thread::yield();
    }
    block(ready, describe_missing, on_abort);
  }

  // Call after storing a flag (with release order) that another thread may wait for.
  void notify() {
    std::atomic_thread_fence(std::memory_order_seq_cst);
    if (sleepers_.load(std::memory_order_relaxed) > 0) {
      std::lock_guard<std::mutex> lock(mutex_);
      cv_.notify_all();
    }
  }

  // Marks the team aborted and wakes every waiter, which then throws TeamAborted.
  void abort(const std::string& reason);
  bool aborted() const noexcept { return aborted_.load(std::memory_order_acquire); }
  // Why the team aborted; only once aborted() is true (written once, before the flag).
  const std::string& abort_reason() const noexcept { return abort_reason_; }
  void throw_if_aborted() const {
    if (aborted()) throw_aborted();
  }

 private:
  [[noreturn]] void throw_aborted() const;
  [[noreturn]] void throw_timeout(double seconds, const std::string& missing) const;

  template <class Ready, class DescribeMissing>
  void block(Ready& ready, DescribeMissing& describe_missing, OnAbort on_abort) {
    sleepers_.fetch_add(1, std::memory_order_relaxed);
    std::atomic_thread_fence(std::memory_order_seq_cst);
    struct Leave {
      std::atomic<int>& count;
      ~Leave() { count.fetch_sub(1, std::memory_order_relaxed); }
    } leave{sleepers_};
    if (block_check_) block_check_();  // after the fence: it sees what a notifier stored
    const bool timed = tuning_.timeout_seconds > 0;
    const auto deadline = std::chrono::steady_clock::now() +
                          std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                              std::chrono::duration<double>(timed ? tuning_.timeout_seconds : 0));
    std::unique_lock<std::mutex> lock(mutex_);
    while (!ready()) {
      if (on_abort == OnAbort::throw_aborted) throw_if_aborted();
      if (!timed) {
        cv_.wait(lock);
      } else if (cv_.wait_until(lock, deadline) == std::cv_status::timeout && !ready()) {
        lock.unlock();
        throw_timeout(tuning_.timeout_seconds, describe_missing());
      }
    }
  }

  WaitTuning tuning_;
  alignas(64) std::atomic<int> sleepers_{0};
  std::atomic<bool> aborted_{false};
  std::mutex mutex_;
  std::condition_variable cv_;
  std::string abort_reason_;
  std::function<void()> block_check_;
};

}  // namespace tlc::detail
