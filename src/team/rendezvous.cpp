// The synchronisation steps of team_impl.hpp: arrival and release flags, the begin step of every
// call with its fingerprint check, and the team's staging buffer (Jain et al. [Jain] sec. II:
// single-writer flags on their own cache lines, values that only grow).
#include <algorithm>
#include <cstring>
#include <sstream>

#include <tlc/error.hpp>

#include "team/team_impl.hpp"

namespace tlc::detail {

void TeamImpl::arrive(int me, std::uint64_t s) noexcept {
  slot(me).arrived.value.store(s, std::memory_order_release);
  waiter_.notify();
}

void TeamImpl::wait_all_arrived(std::uint64_t s, Waiter::OnAbort on_abort) {
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
            missing += (missing.empty() ? "" : ", ") + who(i);
        return "threads that never arrived: " + missing;
      },
      on_abort);
  if (stop_on_abort) waiter_.throw_if_aborted();
}

void TeamImpl::release(std::uint64_t s) noexcept {
  released_.value.store(s, std::memory_order_release);
  waiter_.notify();
}

void TeamImpl::wait_released(std::uint64_t s) {
  waiter_.wait([&] { return released_.value.load(std::memory_order_acquire) >= s || aborted(); },
               [&] { return "the leader, " + who(0) + ", to finish the inter-process step"; });
  waiter_.throw_if_aborted();
}

void TeamImpl::begin_step(ThreadSlot& s, std::uint64_t k) {
  s.begun[k & 1].call.store(k, std::memory_order_release);
  waiter_.notify();
  wait_all_begun(k);
  check_fingerprints(static_cast<int>(k & 1));
}

void TeamImpl::wait_all_begun(std::uint64_t k) {
  const int parity = static_cast<int>(k & 1);
  int next = 0;  // threads before `next` are known to have begun call k
  waiter_.wait(
      [&] {
        while (next < threads_ &&
               slot(next).begun[parity].call.load(std::memory_order_acquire) >= k)
          ++next;
        return next == threads_ || aborted();
      },
      [&] {
        std::string missing;
        for (int i = 0; i < threads_; ++i)
          if (slot(i).begun[parity].call.load(std::memory_order_acquire) < k)
            missing += (missing.empty() ? "" : ", ") + who(i);
        return "threads that never arrived: " + missing;
      });
  waiter_.throw_if_aborted();
}

TeamImpl::CallView TeamImpl::begin_call(int me, CallDescriptor d, bool carry) {
  waiter_.throw_if_aborted();
  ThreadSlot& s = slot(me);
  const std::uint64_t k = ++s.calls;
  const int parity = static_cast<int>(k & 1);
  // The slot of this parity was last read during call k-2, and every reader finished that
  // before beginning call k-1, which this thread has waited for.
  if (carry && d.invalid.empty() && d.contribution_bytes <= carry_capacity) {
    if (d.contribution_bytes) std::memcpy(s.carry[parity], d.contribution, d.contribution_bytes);
    d.contribution = s.carry[parity];
    d.carried = true;
  }
  s.begun[parity].fingerprint = fingerprint_of(d.call, d.count, !d.invalid.empty());
  s.published[parity] = std::move(d);
  begin_step(s, k);
  return {this, parity};
}

void TeamImpl::fail_inline(int me, const CallFingerprint& f, const std::string& why) {
  waiter_.throw_if_aborted();
  ThreadSlot& s = slot(me);
  const std::uint64_t k = ++s.calls;
  const int parity = static_cast<int>(k & 1);
  s.begun[parity].fingerprint = f;
  s.published[parity].invalid = why;
  begin_step(s, k);  // throws: this thread's fingerprint is invalid
  throw Error(Errc::invalid_argument,
              std::string("tlc ") + to_string(static_cast<Collective>(f.collective)) + ": " + why);
}

// Wrong arguments first (the lowest such thread's own verdict), then disagreement: the same
// order as the descriptor checks of algo/validation.cpp, so both forms throw the same error.
void TeamImpl::check_fingerprints(int parity) const {
  auto at = [&](int i) -> const CallFingerprint& {
    return slots_[static_cast<std::size_t>(i)].begun[parity].fingerprint;
  };
  const CallFingerprint& first = at(0);
  int differs = 0;
  for (int i = 0; i < threads_; ++i) {
    if (at(i).invalid) {
      const CallDescriptor& d = slots_[static_cast<std::size_t>(i)].published[parity];
      throw Error(Errc::invalid_argument, std::string("tlc ") +
                                              to_string(static_cast<Collective>(at(i).collective)) +
                                              ": " + who(i) + ": " + d.invalid);
    }
    if (!differs && !(at(i) == first)) differs = i;
  }
  if (!differs) return;
  const CallFingerprint& f = at(differs);
  const auto collective = [](const CallFingerprint& x) {
    return to_string(static_cast<Collective>(x.collective));
  };
  std::ostringstream what;
  if (f.collective != first.collective) {
    what << who(0) << " called " << collective(first) << " but " << who(differs) << " called "
         << collective(f);
  } else if (f.count != first.count) {
    what << who(0) << " passed " << first.count << " elements per rank but " << who(differs)
         << " passed " << f.count;
  } else if (f.type_class != first.type_class || f.type_size != first.type_size ||
             f.type_alignment != first.type_alignment) {
    what << who(0) << " passed " << first.type_size << "-byte "
         << to_string(static_cast<TypeClass>(first.type_class)) << " elements but " << who(differs)
         << " passed " << f.type_size << "-byte "
         << to_string(static_cast<TypeClass>(f.type_class));
  } else if (f.op != first.op) {
    what << who(0) << " passed op " << to_string(static_cast<BuiltinOp>(first.op)) << " but "
         << who(differs) << " passed a different op (" << to_string(static_cast<BuiltinOp>(f.op))
         << ")";
  } else {
    what << who(0) << " passed root " << first.root << " but " << who(differs) << " passed root "
         << f.root;
  }
  throw Error(Errc::mismatch, std::string("tlc ") + collective(first) + ": " + what.str());
}

void TeamImpl::grow_staging(int me, std::size_t bytes) {
  // Every thread reads the same capacity here: the leader changes it only below, after all
  // threads have arrived, i.e. after all of them made this same decision.
  if (bytes <= staging_capacity_) return;
  const std::uint64_t s = next_step(me);
  if (me == 0) {
    arrive(me, s);
    wait_all_arrived(s);
    const std::size_t capacity = std::max(bytes, 2 * staging_capacity_);
    staging_.reset(static_cast<std::byte*>(::operator new[](capacity, std::align_val_t{4096})));
    staging_capacity_ = capacity;
    release(s);
  } else {
    arrive(me, s);
    wait_released(s);
  }
}

}  // namespace tlc::detail
