// How a failure in one process of a team reaches the others, and how a call that failed in
// some processes ends in all of them (docs/reliability.md): one of the parts a TeamImpl owns.
// Bad arguments and threads that disagree are found before any step between processes: the
// other processes are told that this call failed here, and the team's next call first settles
// how it ended for them. Any other failure aborts the team, and the other processes' waits end
// as they hear of it (inter/alarm.hpp carries the notes).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <mpi.h>

#include <tlc/error.hpp>

#include "inter/alarm.hpp"
#include "team/wait_policy.hpp"

namespace tlc::detail {

class ProcessFailures {
 public:
  // `waiter` is the team's: an abort wakes every waiting thread of this process.
  explicit ProcessFailures(Waiter& waiter) : waiter_(waiter) {}

  // Several processes only (this one is `process` of `processes`): the notes travel on a
  // duplicate of `comm`, tagged with the team's number `nonce` (agreed between the processes).
  // Until then a failure stays in this process.
  void connect(MPI_Comm comm, int nonce, int process, int processes) {
    process_ = process;
    processes_ = processes;
    alarm_ = std::make_unique<ProcessAlarm>(comm, nonce);
  }
  bool connected() const noexcept { return alarm_ != nullptr; }

  // Marks the team aborted (every waiting thread wakes with TeamAborted) and tells the other
  // processes, whose waits then end too.
  void abort(const std::string& reason);

  // Call k of this process failed with e (every thread of the process that throws reports it;
  // the first one acts). Errors every process found together (TLC_CHECK) need nothing.
  void call_failed(std::uint64_t k, const Error& e);
  // The next throw of the current thread is an error that every process throws alike.
  static void failure_agreed_across_processes() noexcept { failure_agreed_ = true; }
  // Whether the error the current thread is throwing is such an error (not reset).
  static bool failure_agreed() noexcept { return failure_agreed_; }
  // At every begin step: TeamAborted once the team has aborted. After a call failed in this
  // process, first waits until every other process has said how that call ended there: failed
  // before its step between processes too (nothing was started: the team stays usable), or
  // started (the team aborts, since what they started will never complete).
  void throw_if_unusable() {
    if (attention_.load(std::memory_order_acquire)) [[unlikely]]
      attend();
    waiter_.throw_if_aborted();
  }
  // The number of the current thread's latest call across processes (set at its begin step):
  // notes about later calls are kept until this process gets there.
  static void entering_call(std::uint64_t k) noexcept { current_call_ = k; }
  // Reads the other processes' notes (the MPI waits call it while they poll).
  void listen();

 private:
  Waiter& waiter_;
  int process_ = 0;
  int processes_ = 1;
  std::unique_ptr<ProcessAlarm> alarm_;
  std::mutex mutex_;                             // guards the four below
  bool unsettled_ = false;                       // a call failed here; the others have not all said
  std::uint64_t failed_call_ = 0;                // the last call number that failed here
  int processes_agreeing_ = 0;                   // processes that failed failed_call_ as well
  std::vector<ProcessAlarm::Note> early_notes_;  // about calls this process had not reached
  std::atomic<bool> attention_{false};           // unsettled_ or early notes: see attend()
  std::atomic<bool> told_broken_{false};         // the others know this team is gone
  static thread_local bool failure_agreed_;
  static thread_local std::uint64_t current_call_;

  bool aborted() const noexcept { return waiter_.aborted(); }
  void attend();
  void hear(const ProcessAlarm::Note& note);
  // With mutex_ held: an early note about a call the current thread has reached (it is in
  // that call, or went through it without failing it) means the team is gone.
  void abort_if_reached_early_note();
  void update_attention() noexcept {
    attention_.store(unsettled_ || !early_notes_.empty(), std::memory_order_release);
  }
};

}  // namespace tlc::detail
