// Persistent calls of one-process teams past the lines, on slices (algo/posted/slices.hpp).
#include "algo/posted/slices.hpp"

#include <cstring>
#include <thread>

#include <tlc/error.hpp>

#include "algo/algorithms.hpp"
#include "algo/posted/schedule.hpp"
#include "select/collective_traits.hpp"
#include "team/team_impl.hpp"

namespace tlc::detail::posted {

RoundSlices::RoundSlices(int threads)
    : threads_(threads), lines_(std::make_unique<Line[]>(static_cast<std::size_t>(threads))) {}

bool RoundSlices::serves(const PostedEntry& entry, int threads) {
  return round_contribution_bytes(entry, threads) > 0;
}

std::size_t RoundSlices::aside_bytes(const PostedEntry& entry, int threads, bool on_lines) {
  if (!entry.call.in_place || !traits_of(entry.call.collective).in_place_output_races || on_lines ||
      !serves(entry, threads))
    return 0;
  return entry.contribution_bytes;
}

void RoundSlices::prepare(const PostedCall& call) {
  descriptors_.resize(static_cast<std::size_t>(threads_));
  for (int t = 0; t < threads_; ++t) {
    const PostedEntry& e = call.entries[static_cast<std::size_t>(t)];
    CallDescriptor& d = descriptors_[static_cast<std::size_t>(t)];
    d.call = e.call;
    d.count = e.count;
    d.contribution = e.aside.empty() ? e.contribution : e.aside.data();
    d.contribution_bytes = e.contribution_bytes;
  }
  has_plan_ = !traits_of(call.entries[0].call.collective).reduction;
  if (has_plan_) build_local_plan(plan_, CallView{nullptr, 0, descriptors_.data()}, threads_, -1);
}

void RoundSlices::start(PostedCall& call, int me, std::uint64_t round) {
  PostedEntry& mine = call.entries[static_cast<std::size_t>(me)];
  // A thread starts a round only after its completion of the one before, which needed every
  // task of it done: nobody reads the copy aside any more.
  if (!mine.aside.empty() && mine.invalid.empty())
    std::memcpy(mine.aside.data(), mine.contribution, mine.contribution_bytes);
  lines_[static_cast<std::size_t>(me)].started.store(round, std::memory_order_release);
}

bool RoundSlices::all_started(std::uint64_t round) const noexcept {
  for (int t = 0; t < threads_; ++t)
    if (lines_[static_cast<std::size_t>(t)].started.load(std::memory_order_acquire) < round)
      return false;
  return true;
}

bool RoundSlices::all_done(std::uint64_t round) const noexcept {
  for (int t = 0; t < threads_; ++t)
    if (lines_[static_cast<std::size_t>(t)].done.load(std::memory_order_acquire) < round)
      return false;
  return true;
}

bool RoundSlices::advanceable(std::uint64_t round) const noexcept {
  if (!all_started(round)) return false;
  for (int t = 0; t < threads_; ++t)
    if (lines_[static_cast<std::size_t>(t)].claimed.load(std::memory_order_relaxed) < round)
      return true;
  return all_done(round);
}

void RoundSlices::fail(std::uint64_t round, std::exception_ptr error) {
  std::lock_guard<std::mutex> lock(failure_mutex_);
  if (failure_round_.load(std::memory_order_relaxed) == round) return;  // the first one stays
  failure_ = std::move(error);
  failure_round_.store(round, std::memory_order_release);
}

void RoundSlices::run(PostedCall& call, int task, std::uint64_t round) {
  try {
    run_sliced_share(CallView{nullptr, 0, descriptors_.data()}, task, threads_,
                     has_plan_ ? &plan_ : nullptr);
  } catch (...) {  // a user op: the round fails on every thread, once all its tasks are done
    fail(round, std::current_exception());
  }
  lines_[static_cast<std::size_t>(task)].done.store(round, std::memory_order_release);
  call.team.waiter().notify();
}

bool RoundSlices::advance(PostedCall& call, int me, std::uint64_t round) {
  if (!all_started(round)) return false;
  // The init failed (its last thread stored that before it started this round): nothing runs.
  if (call.failed.load(std::memory_order_acquire) >= round) return true;
  Line& mine = lines_[static_cast<std::size_t>(me)];
  if (claim(me, round)) {
    const auto began = Clock::now();
    run(call, me, round);
    const auto ended = Clock::now();
    mine.steal_after = ended + (ended - began);
  }
  if (all_done(round)) return true;
  // Another thread's share only after waiting as long as this thread's own took: a thread that
  // arrives a little later runs its own (two threads copying each other's share would double
  // the round's time), one that computes instead of waiting is not waited for.
  if (Clock::now() < mine.steal_after) return false;
  for (int t = 0; t < threads_; ++t)
    if (t != me && claim(t, round)) run(call, t, round);
  return all_done(round);
}

std::exception_ptr RoundSlices::failure_of(std::uint64_t round) const {
  if (failure_round_.load(std::memory_order_acquire) != round) return nullptr;
  return failure_;  // written before the done stamps that the caller has seen
}

void RoundSlices::abandon(std::uint64_t round) noexcept {
  bool took = false;
  for (int t = 0; t < threads_; ++t)
    if (claim(t, round)) {
      if (!took)
        fail(round, std::make_exception_ptr(TeamAborted(
                        "tlc: another thread of this process gave up on this persistent call "
                        "before its round ran (its wait ended with an error)")));
      took = true;
      lines_[static_cast<std::size_t>(t)].done.store(round, std::memory_order_release);
    }
  while (!all_done(round)) std::this_thread::yield();
}

}  // namespace tlc::detail::posted
