// The rounds of a persistent call of a one-process team whose contributions are past the lines
// (docs/design.md section 14): the sliced algorithm's work (algo/sliced.cpp, its phase 2) cut
// into one task per thread, which any thread testing or waiting for the round takes once every
// thread has started it.
//
// Phases (T threads of one process):
//   start:       a thread stamps the round on its line and returns (an in-place call whose output
//                others' reads race with, alltoall and reduce_scatter_block, first copies its
//                input aside, as the blocking call does).
//   test / wait: once every line carries the round, the caller claims its own task and runs it;
//                if the round is not done after as long again, it claims every task nobody has
//                claimed yet (so that a thread computing instead of waiting holds nobody back,
//                and one arriving a little late still runs its own share); it stamps each task
//                it ran done. The round is complete when every task is done; after that nobody
//                reads an input or writes an output of it, so a thread may start the next round
//                at once.
// Cost: the blocking sliced algorithm's traffic (every input read once, every output written once,
// split among the threads), with its two rendezvous replaced by T start stamps and T done stamps
// read per thread and one claim (an atomic exchange) per task: no lock, no place in the order of
// the posted calls, no thread that packs for the others.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <memory>
#include <mutex>
#include <new>
#include <vector>

#include "algo/posted/calls.hpp"
#include "intra/copy_plan.hpp"
#include "team/rendezvous.hpp"

namespace tlc::detail::posted {

class RoundSlices {
 public:
  using Clock = std::chrono::steady_clock;
  explicit RoundSlices(int threads);

  // Whether the rounds of a call with this (the first thread's) entry run on slices, once the
  // lines do not take it (algo/posted/lines.cpp); the same on every thread that passes the same
  // call. And the bytes of the copy a thread makes aside of its input at each start of a call on
  // slices (0: none, or not on slices).
  static bool serves(const PostedEntry& entry, int threads);
  // on_lines: the call runs on lines instead (nothing read in place, no copy).
  static std::size_t aside_bytes(const PostedEntry& entry, int threads, bool on_lines);

  // By the last thread of the init, once the threads agree, before any round: every thread's
  // descriptor of the call and, for the movers, the copy plan.
  void prepare(const PostedCall& call);
  // Thread me starts `round`.
  void start(PostedCall& call, int me, std::uint64_t round);
  // Runs every task of `round` that thread me can claim; true once every task is done (or the
  // init failed: then none runs). Never waits.
  bool advance(PostedCall& call, int me, std::uint64_t round);
  // Whether advance has something to do or find: every thread started the round, and a task is
  // unclaimed or every task is done.
  bool advanceable(std::uint64_t round) const noexcept;
  // Whether every task of `round` is done and none failed (a recycled nonblocking call).
  bool completed(std::uint64_t round) const noexcept {
    return all_done(round) && failure_round_.load(std::memory_order_acquire) != round;
  }
  // The exception a task of `round` threw (a user op), once advance returned true.
  std::exception_ptr failure_of(std::uint64_t round) const;
  // A thread's wait or test of `round` ended with an error: claims every task nobody has
  // claimed (the round then fails on every thread instead of reading this thread's buffers) and
  // waits until the tasks that others run are done.
  void abandon(std::uint64_t round) noexcept;

 private:
  struct alignas(cache_line_size) Line {
    std::atomic<std::uint64_t> started{0};  // the round its thread last started
    std::atomic<std::uint64_t> claimed{0};  // the round in which its task was last claimed
    std::atomic<std::uint64_t> done{0};     // the round in which its task was last done
    // Its thread's own: when it may take others' tasks of the round whose own task it ran.
    Clock::time_point steal_after{};
  };
  bool all_started(std::uint64_t round) const noexcept;
  bool all_done(std::uint64_t round) const noexcept;
  bool claim(int task, std::uint64_t round) noexcept {
    Line& l = lines_[static_cast<std::size_t>(task)];
    return l.claimed.load(std::memory_order_relaxed) < round &&
           l.claimed.exchange(round, std::memory_order_acq_rel) < round;
  }
  void run(PostedCall& call, int task, std::uint64_t round);
  void fail(std::uint64_t round, std::exception_ptr error);

  int threads_;
  std::unique_ptr<Line[]> lines_;
  std::vector<CallDescriptor> descriptors_;
  CopyPlan plan_;
  bool has_plan_ = false;
  std::mutex failure_mutex_;
  std::exception_ptr failure_;
  std::atomic<std::uint64_t> failure_round_{0};  // written before the failing task's done stamp
};

}  // namespace tlc::detail::posted
