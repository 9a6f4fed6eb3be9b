// How a failure in one process of a team reaches the others, and how a call that failed in
// some processes ends in all of them (docs/reliability.md): one of the parts a TeamImpl owns.
// Bad arguments and threads that disagree are found before any step between processes: the
// other processes are told that this call failed here, and the team's next call first settles
// how it ended for them. Any other failure aborts the team, and the other processes' waits end
// as they hear of it (inter/alarm.hpp carries the notes).
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <mpi.h>

#include <tlc/error.hpp>

#include "inter/alarm.hpp"
#include "inter/mpi_wait.hpp"
#include "team/wait_policy.hpp"

namespace tlc::detail {

struct Call;             // tlc/detail/call.hpp
struct CallFingerprint;  // team/rendezvous.hpp
class Rendezvous;        // team/rendezvous.hpp

// Also the comparison of long waits (docs/reliability.md, "Calls that disagree across
// processes"): a wait between processes that lasts longer than TLC_SUSPECT_MS is announced to the
// other processes with the call's number and what the call is, and ended when they show that it
// cannot complete: another process waits in the same call number for a different call, has left
// the team before this call, or has not answered for TLC_SILENT seconds, or no process can go on
// and their calls differ, or every process waits in the same v-variant call and their counts
// disagree.
class ProcessFailures final : public LongWaits {
 public:
  // `waiter` is the team's: an abort wakes every waiting thread of this process.
  explicit ProcessFailures(Waiter& waiter) : waiter_(waiter) {}

  // Several processes only (this one is `process` of `processes`): the notes travel on a
  // duplicate of `comm`, tagged with the team's number `nonce` (agreed between the processes).
  // Until then a failure stays in this process.
  // suspect_seconds: TLC_SUSPECT_MS; silent_seconds: TLC_SILENT (0: never silent); verbose
  // (TLC_VERBOSE): each long wait that ends says on stderr how long it lasted and for whom.
  // calls: the team's rendezvous, where a long wait in a v-variant call reads the counts of
  // every thread of this process (only then: calls that complete soon pay nothing).
  void connect(MPI_Comm comm, int nonce, int process, int processes, double suspect_seconds,
               double silent_seconds, bool verbose, const Rendezvous& calls) {
    calls_ = &calls;
    process_ = process;
    processes_ = processes;
    suspect_seconds_ = suspect_seconds;
    silent_seconds_ = silent_seconds;
    verbose_ = verbose;
    peers_.assign(static_cast<std::size_t>(processes), Peer{});
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
  // f: the call's fingerprint (alive during the call), what a long wait says the call is.
  // Kept per thread and per team: a thread may hold participants of several teams (sub-teams)
  // and call them in turn.
  void entering_call(std::uint64_t k, const CallFingerprint* f) noexcept {
    CurrentCall& c = current();
    c.call = k;
    c.fingerprint = f;
  }
  // Reads the other processes' notes (the MPI waits call it while they poll).
  void listen();

  // While it lives, the current thread waits for nonblocking call number `sequence` (the place
  // of the call, or persistent start, in the order of the process's posted calls, the same on
  // every process), which f describes: a long wait says so instead of the blocking call.
  // calls_of(call, out) appends the call of every thread of this process to out, for the counts
  // of a v-variant (asked only when the wait lasts; the engine's, algo/posted/calls.cpp).
  using CallsOf = void (*)(const void* call, std::vector<const Call*>& out);
  class PostedWait {
   public:
    PostedWait(std::uint64_t sequence, const CallFingerprint* f, const void* call = nullptr,
               CallsOf calls_of = nullptr) noexcept
        : outer_sequence_(std::exchange(posted_sequence_, sequence)),
          outer_fingerprint_(std::exchange(posted_fingerprint_, f)),
          outer_call_(std::exchange(posted_call_, call)),
          outer_calls_of_(std::exchange(posted_calls_of_, calls_of)) {}
    ~PostedWait() {
      posted_sequence_ = outer_sequence_;
      posted_fingerprint_ = outer_fingerprint_;
      posted_call_ = outer_call_;
      posted_calls_of_ = outer_calls_of_;
    }
    PostedWait(const PostedWait&) = delete;
    PostedWait& operator=(const PostedWait&) = delete;

   private:
    std::uint64_t outer_sequence_;  // restored when this wait ends
    const CallFingerprint* outer_fingerprint_;
    const void* outer_call_;
    CallsOf outer_calls_of_;
  };

  // LongWaits, for the waits of this team's calls between processes (blocking ones, and the
  // waits of nonblocking ones inside a PostedWait).
  void began() override;
  void compare() override;
  void ended() noexcept override;

  // The watch thread's round (team/watchman.hpp): reads the notes and answers the other
  // processes' long waits (an `alive` note), also while no thread of this process is in tlc.
  void tend();

  // The team is being destroyed after `calls` calls: tells the other processes (a process
  // waiting in a later call learns it can never complete) and waits a short while for their
  // last notes, so that none arrives after the communicator is freed.
  void leave(std::uint64_t calls);

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
  static constinit thread_local bool failure_agreed_;
  // The current thread's latest call in one team (`team`: that team's id_), for the few teams
  // it used last, the latest first. A team the thread has not called (or that fell out of the
  // table) is at call 0 for it: it then only hears notes later, as a thread before its first call.
  struct CurrentCall {
    std::uint64_t team = 0;
    std::uint64_t call = 0;
    const CallFingerprint* fingerprint = nullptr;
  };
  static constinit thread_local std::array<CurrentCall, 4> current_calls_;
  const std::uint64_t id_ = next_id();  // never reused, unlike an address
  static std::uint64_t next_id() noexcept;
  CurrentCall& current() noexcept {
    if (current_calls_[0].team != id_) [[unlikely]]
      bring_to_front();
    return current_calls_[0];
  }
  void bring_to_front() noexcept;
  std::uint64_t current_call() noexcept { return current().call; }
  static constinit thread_local std::uint64_t posted_sequence_;  // 0: not waiting for a posted call
  static constinit thread_local const CallFingerprint* posted_fingerprint_;
  static constinit thread_local const void* posted_call_;
  static constinit thread_local CallsOf posted_calls_of_;
  const Rendezvous* calls_ = nullptr;  // connect()
  // The words of this process's counts in the v-variant call the current thread waits in
  // (posted: the posted call's); none for other calls.
  std::optional<ProcessAlarm::CountWords> count_words(bool posted);
  // Long waits for posted calls are numbered apart from blocking calls: this bit set.
  static constexpr std::uint64_t posted_bit = std::uint64_t{1} << 63;
  static std::string call_name(std::uint64_t k);

  // What this process has heard of each other process's long waits, and whether it has left.
  using Clock = std::chrono::steady_clock;
  struct Peer {
    enum class State { running, waiting, gone } state = State::running;
    std::uint64_t call = 0;  // waiting: the call it waits in; gone: the calls it made
    std::string what;        // waiting: the call it makes there
    std::optional<ProcessAlarm::CountWords> counts;  // waiting in a v-variant: its counts' words
    bool said_last = false;     // its last note (gone, or the team broken) has arrived
    bool answer_due = false;    // it waits long: the watch thread answers that this one is alive
    Clock::time_point heard{};  // its latest note
  };
  double suspect_seconds_ = 0;
  double silent_seconds_ = 0;
  bool verbose_ = false;
  Clock::time_point announced_at_{};  // when this process's long wait began
  Clock::time_point asked_at_{};      // its latest waiting note (they are repeated)
  std::vector<Peer> peers_;           // guarded by mutex_
  int long_waiters_ = 0;              // threads of this process in a long wait
  std::uint64_t announced_call_ = 0;  // the call of this process's waiting note; 0: none
  std::string announced_what_;        // what that note said the call is
  std::optional<ProcessAlarm::CountWords> announced_counts_;  // and its counts (v-variants)
  std::optional<Clock::time_point> all_waiting_since_;
  std::atomic<std::uint64_t> first_gone_{~std::uint64_t{0}};  // fewest calls of a process gone

  // With mutex_ held: why this process's long wait in call k cannot complete, if it cannot.
  std::string long_wait_mismatch(std::uint64_t k, const std::string& what);
  void abort_if_waiting_for_gone();

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
