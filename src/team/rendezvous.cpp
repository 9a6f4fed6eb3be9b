// The synchronisation steps of team/rendezvous.hpp: arrival and release flags, the begin step of
// every call with its fingerprint check (Jain et al. [Jain] sec. II:
// single-writer flags on their own cache lines, values that only grow).
#include <algorithm>
#include <cstring>
#include <sstream>

#include <tlc/error.hpp>

#include "team/rendezvous.hpp"

namespace tlc::detail {

void Rendezvous::prepare(const Roster& roster, ProcessFailures& failures, ArrivalState& arrival) {
  roster_ = &roster;
  failures_ = &failures;
  arrival_ = &arrival;
  threads_ = roster.threads();
  slots_ = std::make_unique<ThreadSlot[]>(static_cast<std::size_t>(threads_));
  waiter_.set_block_check([this] { abort_if_left_behind(); });
}

void Rendezvous::abort_if_left_behind() {
  const auto last_begun = [this](int i) {
    return std::max(slot(i).begun[0].call.load(std::memory_order_acquire),
                    slot(i).begun[1].call.load(std::memory_order_acquire));
  };
  std::uint64_t newest = 0;
  for (int i = 0; i < threads_; ++i) newest = std::max(newest, last_begun(i));
  for (int i = 0; i < threads_; ++i) {
    if (!slot(i).left.load(std::memory_order_acquire) || last_begun(i) >= newest) continue;
    if (!aborted())
      failures_->abort("tlc: " + roster_->who(i) +
                       " has left the team (its body in Team::run returned) after " +
                       std::to_string(last_begun(i)) + " calls, while another thread began call " +
                       std::to_string(newest) + ", which can therefore never complete");
    return;
  }
}

void Rendezvous::arrive(int me, std::uint64_t s) noexcept {
  slot(me).arrived.value.store(s, std::memory_order_release);
  waiter_.notify();
}

void Rendezvous::wait_all_arrived(std::uint64_t s, Waiter::OnAbort on_abort) {
  const bool stop_on_abort = on_abort == Waiter::OnAbort::throw_aborted;
  int next = 0;  // threads before `next` are known to have arrived
  waiter_.wait(
      [&] {
        while (next < threads_ && slot(next).arrived.value.load(std::memory_order_acquire) >= s)
          ++next;
        return next == threads_ || (stop_on_abort && aborted());
      },
      [&] {
        std::string missing;
        for (int i = 0; i < threads_; ++i)
          if (slot(i).arrived.value.load(std::memory_order_acquire) < s)
            missing += (missing.empty() ? "" : ", ") + roster_->who(i);
        return "threads that never arrived: " + missing;
      },
      on_abort);
  if (stop_on_abort) waiter_.throw_if_aborted();
}

void Rendezvous::release(std::uint64_t s) noexcept {
  released_.value.store(s, std::memory_order_release);
  waiter_.notify();
}

void Rendezvous::wait_released(std::uint64_t s) {
  waiter_.wait(
      [&] { return released_.value.load(std::memory_order_acquire) >= s || aborted(); },
      [&] { return "the leader, " + roster_->who(0) + ", to finish the inter-process step"; });
  waiter_.throw_if_aborted();
}

void Rendezvous::begin_step(ThreadSlot& s, std::uint64_t k) {
  s.begun[k & 1].call.store(k, std::memory_order_release);
  const int parity = static_cast<int>(k & 1);
  // Alone in its process, a thread has nobody to wait for or to agree with (a one-thread
  // process's every call would pay for notify()'s fence and for the comparisons).
  if (threads_ == 1) {
    if (fingerprint(0, parity).invalid) check_fingerprints(parity);  // throws its error
    return;
  }
  waiter_.notify();
  wait_all_begun(k);
  try {
    check_fingerprints(parity);
  } catch (const Error& e) {
    // A thread that began this call led by arrival (it differs from this one's fingerprint, so
    // the check threw) does not wait for this verdict: the threads disagree about the call and
    // the plan depends on what they disagree about. Abort so that it does not hang.
    for (int i = 0; i < threads_; ++i)
      if (fingerprint(i, parity).led_by_arrival) {
        if (!aborted()) failures_->abort(e.what());
        break;
      }
    throw;
  }
}

void Rendezvous::wait_all_begun(std::uint64_t k) {
  const int parity = static_cast<int>(k & 1);
  int next = 0;   // threads before `next` are known to have begun call k
  int gone = -1;  // a thread that left the team without beginning it
  auto begun = [&](int t) {
    return slot(t).begun[parity].call.load(std::memory_order_acquire) >= k;
  };
  waiter_.wait(
      [&] {
        while (next < threads_) {
          if (begun(next)) {
            ++next;
          } else {
            // Its begin store precedes its leaving: seen gone, and still not begun, it never will.
            if (slot(next).left.load(std::memory_order_acquire) && !begun(next)) gone = next;
            break;
          }
        }
        return next == threads_ || gone >= 0 || aborted();
      },
      [&] {
        std::string missing;
        for (int i = 0; i < threads_; ++i)
          if (slot(i).begun[parity].call.load(std::memory_order_acquire) < k)
            missing += (missing.empty() ? "" : ", ") + roster_->who(i);
        return "threads that never arrived: " + missing;
      });
  if (gone >= 0 && !aborted()) {
    // The threads' counts of calls now differ for good: the team cannot be used again.
    const std::string why = "tlc: " + roster_->who(gone) +
                            " has left the team (its body in Team::run returned) without making "
                            "this call, which can therefore never complete";
    failures_->abort(why);
    throw Error(Errc::mismatch, why);
  }
  waiter_.throw_if_aborted();
}

inline ThreadSlot& Rendezvous::open_call(int me) {
  failures_->throw_if_unusable();
  ThreadSlot& s = slot(me);
  await_arrival_call(s);
  const std::uint64_t k = ++s.calls;
  failures_->entering_call(k, &s.begun[k & 1].fingerprint);
  return s;
}

Rendezvous::CallView Rendezvous::begin_call(int me, CallDescriptor&& d, bool carry) {
  ThreadSlot& s = open_call(me);
  const std::uint64_t k = s.calls;
  const int parity = static_cast<int>(k & 1);
  // The slot of this parity was last read during call k-2, and every reader finished that
  // before beginning call k-1, which this thread has waited for.
  if (carry && d.invalid.empty() && d.contribution_bytes <= carry_capacity) {
    if (d.contribution_bytes) std::memcpy(s.carry[parity], d.contribution, d.contribution_bytes);
    d.contribution = s.carry[parity];
    d.carried = true;
  }
  write_fingerprint(s.begun[parity].fingerprint, d.call, d.count, !d.invalid.empty());
  s.published[parity] = std::move(d);
  begin_step(s, k);
  return {this, parity};
}

void Rendezvous::fail_inline(int me, const CallFingerprint& f, const std::string& why) {
  ThreadSlot& s = open_call(me);
  const std::uint64_t k = s.calls;
  const int parity = static_cast<int>(k & 1);
  s.begun[parity].fingerprint = f;
  s.published[parity].invalid = why;
  begin_step(s, k);  // throws: this thread's fingerprint is invalid
  throw Error(Errc::invalid_argument,
              std::string("tlc ") + to_string(static_cast<Collective>(f.collective)) + ": " + why);
}

int Rendezvous::begin_arrival_call(int me, CallDescriptor&& d) {
  ThreadSlot& s = open_call(me);
  const std::uint64_t k = s.calls;
  ++s.arrival_calls;
  s.last_arrival_call = k;
  const int parity = static_cast<int>(k & 1);
  // Both were last read in call k-2 or earlier, which is complete: a call led by arrival waits
  // for the previous one, and a static call's readers finish before its next call begins.
  write_fingerprint(s.begun[parity].fingerprint, d.call, d.count, !d.invalid.empty());
  s.begun[parity].fingerprint.led_by_arrival = 1;
  s.published[parity] = std::move(d);
  s.begun[parity].call.store(k, std::memory_order_release);
  return parity;
}

void Rendezvous::wait_arrival_call_complete(std::uint64_t m) {
  const std::uint64_t everybody = m * static_cast<std::uint64_t>(threads_);
  waiter_.wait(
      [&] {
        return arrival_->departures.load(std::memory_order_acquire) >= everybody || aborted();
      },
      [&] { return std::string("threads of the previous call led by arrival"); });
  waiter_.throw_if_aborted();
}

namespace {

std::string collective_of(const CallFingerprint& x) {
  return to_string(static_cast<Collective>(x.collective));
}

// What differs between thread ref's fingerprint a and thread t's fingerprint f.
std::string difference(const std::string& ref_who, const CallFingerprint& a,
                       const std::string& t_who, const CallFingerprint& f) {
  std::ostringstream what;
  if (f.collective != a.collective) {
    what << ref_who << " called " << collective_of(a) << " but " << t_who << " called "
         << collective_of(f);
  } else if (f.count != a.count) {
    what << ref_who << " passed " << a.count << " elements per rank but " << t_who << " passed "
         << f.count;
  } else if (f.type_class != a.type_class || f.type_size != a.type_size ||
             f.type_alignment != a.type_alignment) {
    what << ref_who << " passed " << a.type_size << "-byte "
         << to_string(static_cast<TypeClass>(a.type_class)) << " elements but " << t_who
         << " passed " << f.type_size << "-byte "
         << to_string(static_cast<TypeClass>(f.type_class));
  } else if (f.op != a.op) {
    what << ref_who << " passed op " << to_string(static_cast<BuiltinOp>(a.op)) << " but " << t_who
         << " passed a different op (" << to_string(static_cast<BuiltinOp>(f.op)) << ")";
  } else if (f.root != a.root) {
    what << ref_who << " passed root " << a.root << " but " << t_who << " passed root " << f.root;
  } else {
    const bool ref_led = a.led_by_arrival != 0;
    what << (ref_led ? ref_who : t_who) << " leads the call by arrival and "
         << (ref_led ? t_who : ref_who) << " does not";
  }
  return what.str();
}

}  // namespace

std::string fingerprint_difference(const std::string& a_who, const CallFingerprint& a,
                                   const std::string& b_who, const CallFingerprint& b) {
  return difference(a_who, a, b_who, b);
}

void Rendezvous::check_agreement(int parity, int t, int ref) const {
  for (int i : {ref, t})
    if (fingerprint(i, parity).invalid)
      throw Error(Errc::invalid_argument,
                  std::string("tlc ") + collective_of(fingerprint(i, parity)) + ": " +
                      roster_->who(i) + ": " +
                      slots_[static_cast<std::size_t>(i)].published[parity].invalid);
  const CallFingerprint& a = fingerprint(ref, parity);
  const CallFingerprint& f = fingerprint(t, parity);
  if (a == f) return;
  throw Error(Errc::mismatch, std::string("tlc ") + collective_of(a) + ": " +
                                  difference(roster_->who(ref), a, roster_->who(t), f));
}

// Wrong arguments first (the lowest such thread's own verdict), then disagreement: the same
// order as the descriptor checks of algo/validation.cpp, so both forms throw the same error.
void Rendezvous::check_fingerprints(int parity) const {
  auto at = [&](int i) -> const CallFingerprint& { return fingerprint(i, parity); };
  const CallFingerprint& first = at(0);
  int differs = 0;
  for (int i = 0; i < threads_; ++i) {
    if (at(i).invalid) {
      const CallDescriptor& d = slots_[static_cast<std::size_t>(i)].published[parity];
      throw Error(Errc::invalid_argument, std::string("tlc ") + collective_of(at(i)) + ": " +
                                              roster_->who(i) + ": " + d.invalid);
    }
    if (!differs && !(at(i) == first)) differs = i;
  }
  if (!differs) return;
  throw Error(Errc::mismatch,
              std::string("tlc ") + collective_of(first) + ": " +
                  difference(roster_->who(0), first, roster_->who(differs), at(differs)));
}

}  // namespace tlc::detail
