// The failures of a team across processes (team/process_failures.hpp): telling the other
// processes, hearing from them, and settling how a call that failed here ended there.
#include "team/process_failures.hpp"

#include "inter/mpi_wait.hpp"  // pace_polite_wait
#include "select/call_signature.hpp"
#include "select/collective_traits.hpp"
#include "team/rendezvous.hpp"  // CallFingerprint

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <exception>
#include <optional>
#include <utility>

namespace tlc::detail {

constinit thread_local bool ProcessFailures::failure_agreed_ = false;
constinit thread_local std::array<ProcessFailures::CurrentCall, 4>
    ProcessFailures::current_calls_{};

std::uint64_t ProcessFailures::next_id() noexcept {
  static std::atomic<std::uint64_t> last{0};
  return last.fetch_add(1, std::memory_order_relaxed) + 1;
}

void ProcessFailures::bring_to_front() noexcept {
  auto& calls = current_calls_;
  std::size_t i = 0;
  while (i < calls.size() && calls[i].team != id_) ++i;
  const CurrentCall mine = i < calls.size() ? calls[i] : CurrentCall{id_, 0, nullptr};
  for (std::size_t j = std::min(i, calls.size() - 1); j > 0; --j) calls[j] = calls[j - 1];
  calls[0] = mine;
}
constinit thread_local std::uint64_t ProcessFailures::posted_sequence_ = 0;
constinit thread_local const CallFingerprint* ProcessFailures::posted_fingerprint_ = nullptr;
constinit thread_local const void* ProcessFailures::posted_call_ = nullptr;
constinit thread_local ProcessFailures::CallsOf ProcessFailures::posted_calls_of_ = nullptr;

std::string ProcessFailures::call_name(std::uint64_t k) {
  return k & posted_bit ? "nonblocking call " + std::to_string(k & ~posted_bit)
                        : "call " + std::to_string(k);
}

namespace {

// What a long wait says its call is: what processes making the same call say alike (the
// fingerprint without what only threads of one process compare).
std::string describe(const CallFingerprint* f) {
  if (!f) return "a call";
  const auto c = static_cast<Collective>(f->collective);
  std::string s = to_string(c);
  if (c == Collective::barrier) return s;
  s += " of " +
       (traits_of(c).v_variant
            ? std::string("per-rank counts")
            : std::to_string(f->count) + (f->count == 1 ? " element" : " elements") + " per rank") +
       " of " + to_string(static_cast<TypeClass>(f->type_class)) + " (" +
       std::to_string(f->type_size) + " bytes)";
  if (traits_of(c).reduction) s += std::string(", op ") + to_string(static_cast<BuiltinOp>(f->op));
  if (traits_of(c).has_root) s += ", root " + std::to_string(f->root);
  return s;
}

}  // namespace

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
  // A process that left the team before this thread's call never makes it.
  if (current_call() > first_gone_.load(std::memory_order_acquire)) [[unlikely]]
    abort_if_waiting_for_gone();
  if (!attention_.load(std::memory_order_acquire)) return;
  std::lock_guard<std::mutex> lock(mutex_);
  abort_if_reached_early_note();  // this thread is inside a call that failed elsewhere
}

void ProcessFailures::abort_if_reached_early_note() {
  const std::uint64_t k = current_call();
  const auto reached = std::find_if(early_notes_.begin(), early_notes_.end(),
                                    [k](const ProcessAlarm::Note& n) { return n.call <= k; });
  if (reached == early_notes_.end()) return;
  const ProcessAlarm::Note note = *reached;
  early_notes_.clear();
  update_attention();
  if (!aborted())
    abort("call " + std::to_string(note.call) + " of the team failed on " + note.text);
}

void ProcessFailures::hear(const ProcessAlarm::Note& note) {
  std::lock_guard<std::mutex> lock(mutex_);
  Peer& peer = peers_[static_cast<std::size_t>(note.process)];
  peer.heard = Clock::now();
  switch (note.kind) {
    case ProcessAlarm::Kind::waiting:
      peer.state = Peer::State::waiting;
      peer.call = note.call;
      peer.what = note.text;
      peer.counts = note.counts;
      peer.answer_due = true;
      return;
    case ProcessAlarm::Kind::alive:
      return;
    case ProcessAlarm::Kind::resumed:
      if (peer.state == Peer::State::waiting) peer.state = Peer::State::running;
      all_waiting_since_.reset();
      return;
    case ProcessAlarm::Kind::gone:
      peer.state = Peer::State::gone;
      peer.call = note.call;
      peer.said_last = true;
      if (note.call < first_gone_.load(std::memory_order_relaxed))
        first_gone_.store(note.call, std::memory_order_release);
      return;
    case ProcessAlarm::Kind::broken:
      peer.said_last = true;
      break;
    default:
      break;
  }
  if (aborted()) return;
  if (note.kind == ProcessAlarm::Kind::failed_call) {
    if (unsettled_ && note.call == failed_call_) {
      unsettled_ = ++processes_agreeing_ < processes_ - 1;
      update_attention();
      return;
    }
    // A process ahead of this one: whether this process fails that call too is not known yet.
    if (note.call > current_call()) {
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

void ProcessFailures::abort_if_waiting_for_gone() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (aborted()) return;
  for (std::size_t p = 0; p < peers_.size(); ++p)
    if (peers_[p].state == Peer::State::gone && peers_[p].call < current_call()) {
      abort("call " + std::to_string(current_call()) + " of the team (" +
            describe(current().fingerprint) + ") can never complete: process " + std::to_string(p) +
            " destroyed its team after " + std::to_string(peers_[p].call) + " calls");
      return;
    }
}

std::optional<ProcessAlarm::CountWords> ProcessFailures::count_words(bool posted) {
  const CallFingerprint* f = posted ? posted_fingerprint_ : current().fingerprint;
  if (!f || !calls_ || !traits_of(static_cast<Collective>(f->collective)).v_variant) return {};
  const Roster& roster = calls_->roster();
  std::vector<const Call*> calls;
  if (posted) {
    // Every thread here has posted its entry (the wait is for the step between processes), and
    // none is done with the call before the round completes.
    if (!posted_call_ || !posted_calls_of_) return {};
    posted_calls_of_(posted_call_, calls);
  } else {
    // The current thread is past the begin step of call k: every thread of this process has
    // published its descriptor in the slot of k's parity, and stays in the call until its steps
    // between processes are over (algo/pipeline.hpp; one thread here: direct forms), so the
    // counts they point to are alive (an abort lets them leave: began() checked for one first).
    const Rendezvous::CallView view{calls_, static_cast<int>(current_call() & 1)};
    for (int t = 0; t < roster.threads(); ++t) calls.push_back(&view[t].call);
  }
  return variant_count_words(calls, roster.first_rank(), roster.size());
}

void ProcessFailures::began() {
  std::lock_guard<std::mutex> lock(mutex_);
  ++long_waiters_;
  const bool posted = posted_sequence_ != 0;
  const std::uint64_t k = posted ? posted_sequence_ | posted_bit : current_call();
  if (announced_call_ == k || aborted()) return;  // told by another thread
  announced_call_ = k;
  announced_what_ = describe(posted ? posted_fingerprint_ : current().fingerprint);
  announced_counts_ = count_words(posted);
  announced_at_ = asked_at_ = Clock::now();
  alarm_->send(ProcessAlarm::Kind::waiting, announced_call_, announced_what_, announced_counts_);
}

void ProcessFailures::ended() noexcept {
  std::lock_guard<std::mutex> lock(mutex_);
  if (--long_waiters_ > 0 || announced_call_ == 0) return;
  const std::uint64_t call = std::exchange(announced_call_, 0);
  all_waiting_since_.reset();
  if (aborted()) return;
  if (verbose_) {
    // Who it waited for: the processes that had not reached the call (running, late).
    std::string late;
    for (std::size_t p = 0; p < peers_.size(); ++p)
      if (static_cast<int>(p) != process_ && peers_[p].state == Peer::State::running)
        late += (late.empty() ? " for process " : ", ") + std::to_string(p);
    const double waited =
        suspect_seconds_ + std::chrono::duration<double>(Clock::now() - announced_at_).count();
    std::fprintf(stderr, "tlc: process %d waited %.1f s in %s of a team (%s)%s\n", process_, waited,
                 call_name(call).c_str(), announced_what_.c_str(), late.c_str());
  }
  try {
    alarm_->send(ProcessAlarm::Kind::resumed, call, {});
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tlc: process %d could not tell the other processes: %s\n", process_,
                 e.what());
  }
}

std::string ProcessFailures::long_wait_mismatch(std::uint64_t k, const std::string& what) {
  const std::string here =
      "process " + std::to_string(process_) + " waits in " + call_name(k) + " of the team: " + what;
  // Whether no other process can move: each waits too, or has left the team (all it sends was
  // sent). A process that is running (late) may still come, and is waited for.
  bool nobody_moves = true, all_in_this_call = true;
  std::string everyone = here;
  const auto now = Clock::now();
  for (std::size_t p = 0; p < peers_.size(); ++p) {
    if (static_cast<int>(p) == process_) continue;
    const Peer& peer = peers_[p];
    const std::string there = "process " + std::to_string(p);
    // Every process that is alive answers a waiting note (its watch thread, or its own waiting
    // notes): one that has said nothing since is stopped, or hung where its watch cannot run.
    const double quiet =
        std::chrono::duration<double>(now - std::max(peer.heard, announced_at_)).count();
    if (peer.state != Peer::State::gone && silent_seconds_ > 0 && quiet > silent_seconds_)
      return there + " is silent: it has not answered for " +
             std::to_string(static_cast<long>(quiet)) +
             " s (TLC_SILENT=" + std::to_string(static_cast<long>(silent_seconds_)) + ") while " +
             here + " (stopped, or hung where its watch thread cannot run)";
    if (peer.state == Peer::State::running) {
      nobody_moves = false;
      continue;
    }
    if (peer.state == Peer::State::gone) {
      all_in_this_call = false;
      everyone +=
          "; " + there + " destroyed its team after " + std::to_string(peer.call) + " calls";
      continue;
    }
    if (peer.call == k && peer.what != what)
      return "the processes disagree about " + call_name(k) + " of the team: " + here + "; " +
             there + " waits in it for: " + peer.what;
    // Nonblocking calls may be completed in any order: waits for different ones do not show
    // that nobody can go on.
    if (peer.call != k && ((peer.call | k) & posted_bit)) nobody_moves = false;
    if (peer.call != k) all_in_this_call = false;
    everyone += "; " + there + " waits in " + call_name(peer.call) + ": " + peer.what;
  }
  // Every process waits in this very v-variant call: none can still come with other counts, and
  // the sums of their count words show whether every pair of ranks agrees (as TLC_CHECK's).
  if (nobody_moves && all_in_this_call && announced_counts_) {
    ProcessAlarm::CountWords sums = *announced_counts_;
    bool counted = true;
    for (std::size_t p = 0; p < peers_.size() && counted; ++p) {
      if (static_cast<int>(p) == process_) continue;
      counted = peers_[p].counts.has_value();
      if (counted) {
        sums[0] += (*peers_[p].counts)[0];
        sums[1] += (*peers_[p].counts)[1];
      }
    }
    if (counted && sums[0] != sums[1])
      return "the processes disagree about the counts of " + call_name(k) + " of the team (" +
             what +
             "): every process waits in it, and the v-variant counts disagree between processes "
             "(a count that some rank passes for a rank of another process differs from the "
             "count that rank passes, or the processes pass different counts arrays)";
  }
  // Nobody can go on, and not because every process waits in this very call (a call that is
  // slow inside MPI is not a mismatch). Processes ahead of a late one wait in later calls
  // legitimately, and a call's last transfers may still be under way after a process has left,
  // so this must hold for a further TLC_SUSPECT_MS.
  if (!nobody_moves || all_in_this_call) {
    all_waiting_since_.reset();
    return {};
  }
  if (!all_waiting_since_) all_waiting_since_ = now;
  if (std::chrono::duration<double>(now - *all_waiting_since_).count() < suspect_seconds_)
    return {};
  return call_name(k) +
         " of the team can never complete: no process can go on (their calls differ): " + everyone;
}

void ProcessFailures::compare() {
  std::string why;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (aborted() || announced_call_ == 0) return;
    why = long_wait_mismatch(announced_call_, announced_what_);
    // Asks again now and then: the answers say who is still alive.
    const double ask_every = std::max(suspect_seconds_, silent_seconds_ / 4);
    if (why.empty() &&
        std::chrono::duration<double>(Clock::now() - asked_at_).count() > ask_every) {
      asked_at_ = Clock::now();
      alarm_->send(ProcessAlarm::Kind::waiting, announced_call_, announced_what_,
                   announced_counts_);
    }
  }
  if (why.empty()) return;
  abort("tlc: " + why + " (found after a wait of more than TLC_SUSPECT_MS=" +
        std::to_string(static_cast<long>(suspect_seconds_ * 1000 + 0.5)) + " ms)");
}

void ProcessFailures::tend() {
  while (std::optional<ProcessAlarm::Note> note = alarm_->receive()) hear(*note);
  std::vector<int> asking;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    for (std::size_t p = 0; p < peers_.size(); ++p)
      if (std::exchange(peers_[p].answer_due, false)) asking.push_back(static_cast<int>(p));
  }
  for (const int p : asking) alarm_->send_to(p, ProcessAlarm::Kind::alive, 0, {});
}

void ProcessFailures::leave(std::uint64_t calls) {
  if (!alarm_) return;
  if (aborted()) {
    // The others heard that the team broke, or will; some of their notes may still come.
    alarm_->keep_communicator();
    return;
  }
  try {
    alarm_->send(ProcessAlarm::Kind::gone, calls,
                 "process " + std::to_string(process_) + " left the team");
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tlc: process %d could not tell the other processes: %s\n", process_,
                 e.what());
    alarm_->keep_communicator();
    return;
  }
  // The others' last notes usually come at once (teams end at the same point of a program). A
  // process that leaves much later only costs this process the communicator, kept for good.
  const auto said_last = [this] {
    std::lock_guard<std::mutex> lock(mutex_);
    for (std::size_t p = 0; p < peers_.size(); ++p)
      if (static_cast<int>(p) != process_ && !peers_[p].said_last) return false;
    return true;
  };
  const auto deadline =
      Clock::now() + std::chrono::duration<double>(std::max(1.0, suspect_seconds_));
  for (int attempt = 0;; ++attempt) {
    while (std::optional<ProcessAlarm::Note> note = alarm_->receive()) hear(*note);
    if (said_last() && alarm_->sent()) return;
    if (Clock::now() > deadline) break;
    pace_polite_wait(attempt);
  }
  alarm_->keep_communicator();
}

}  // namespace tlc::detail
