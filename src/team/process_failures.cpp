// The failures of a team across processes (team/process_failures.hpp): telling the other
// processes, hearing from them, and settling how a call that failed here ended there.
#include "team/process_failures.hpp"

#include "inter/mpi_wait.hpp"  // pace_polite_wait

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <exception>
#include <optional>
#include <utility>

namespace tlc::detail {

thread_local bool ProcessFailures::failure_agreed_ = false;
thread_local std::uint64_t ProcessFailures::current_call_ = 0;

void ProcessFailures::abort(const std::string& reason) {
  waiter_.abort(reason);
  if (!alarm_ || told_broken_.exchange(true)) return;
  try {
    alarm_->send(ProcessAlarm::Kind::broken, 0,
                 "process " + std::to_string(process_) + ": " + reason);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tlc: process %d could not tell the other processes: %s\n", process_,
                 e.what());
  }
}

void ProcessFailures::call_failed(std::uint64_t k, const Error& e) {
  if (std::exchange(failure_agreed_, false) || !alarm_ || aborted()) return;
  if (e.code() != Errc::invalid_argument && e.code() != Errc::mismatch) {
    // Found after the call's steps between processes may have started.
    abort(e.what());
    return;
  }
  std::lock_guard<std::mutex> lock(mutex_);
  if (failed_call_ >= k) return;  // another thread of this process has told already
  failed_call_ = k;
  // Processes that failed this call too may have said so already.
  processes_agreeing_ = static_cast<int>(
      std::erase_if(early_notes_, [k](const ProcessAlarm::Note& n) { return n.call == k; }));
  unsettled_ = processes_agreeing_ < processes_ - 1;
  update_attention();
  alarm_->send(ProcessAlarm::Kind::failed_call, k,
               "process " + std::to_string(process_) + ": " + e.what());
}

void ProcessFailures::listen() {
  while (std::optional<ProcessAlarm::Note> note = alarm_->receive()) hear(*note);
  if (!attention_.load(std::memory_order_acquire)) return;
  std::lock_guard<std::mutex> lock(mutex_);
  abort_if_reached_early_note();  // this thread is inside a call that failed elsewhere
}

void ProcessFailures::abort_if_reached_early_note() {
  const auto reached =
      std::find_if(early_notes_.begin(), early_notes_.end(),
                   [](const ProcessAlarm::Note& n) { return n.call <= current_call_; });
  if (reached == early_notes_.end()) return;
  const ProcessAlarm::Note note = *reached;
  early_notes_.clear();
  update_attention();
  if (!aborted())
    abort("call " + std::to_string(note.call) + " of the team failed on " + note.text);
}

void ProcessFailures::hear(const ProcessAlarm::Note& note) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (aborted()) return;
  if (note.kind == ProcessAlarm::Kind::failed_call) {
    if (unsettled_ && note.call == failed_call_) {
      unsettled_ = ++processes_agreeing_ < processes_ - 1;
      update_attention();
      return;
    }
    // A process ahead of this one: whether this process fails that call too is not known yet.
    if (note.call > current_call_) {
      early_notes_.push_back(note);
      update_attention();
      return;
    }
    // This process started that call (or had gone past it): what it started will never
    // complete, and the process that failed must hear that the team is gone.
    abort("call " + std::to_string(note.call) + " of the team failed on " + note.text);
    return;
  }
  told_broken_.store(true);  // the sender told every process
  waiter_.abort(note.text);
}

void ProcessFailures::attend() {
  using Clock = std::chrono::steady_clock;
  const Clock::time_point start = Clock::now();
  const double limit = waiter_.tuning().timeout_seconds;
  for (int attempt = 0; !aborted(); ++attempt) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      // A call this process went through without failing it failed elsewhere.
      abort_if_reached_early_note();
      if (aborted() || !unsettled_) return;
    }
    listen();
    if (limit > 0 && std::chrono::duration<double>(Clock::now() - start).count() > limit) {
      const std::string message =
          "tlc: waited " + std::to_string(limit) +
          " s (TLC_TIMEOUT) for the other processes to say how the call that failed here ended "
          "for them";
      abort(message);
      throw Error(Errc::timeout, message);
    }
    pace_polite_wait(attempt);
  }
}

}  // namespace tlc::detail
