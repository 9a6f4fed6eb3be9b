// Calls of one-process teams on the threads' lines and slices. Nonblocking calls run on the
// team's ring of slots (team/line_ring.hpp), persistent rounds on the lines or slices of their
// call (RoundLines, algo/posted/calls.hpp; RoundSlices, algo/posted/slices.hpp). On lines: bcast,
// reduce, allreduce, scan, exscan, allgather, gather, scatter, alltoall and reduce_scatter_block
// whose contribution fits a line, and barrier; each thread computes its output with
// output_from_lines (intra/lines.hpp), as the blocking calls' lines form does. On slices: the same
// collectives past the lines, each slot one share of the blocking sliced algorithm's work
// (run_sliced_share, algo/sliced.cpp).
//
// Phases (T threads of one process, c bytes contributed per thread):
//   start: each thread writes its arguments into its slot of the call (on lines with a copy of
//          its contribution, where the blocking call's plan is flat and c <= lines_max_bytes; on
//          slices a pointer to it) and stamps the
//          call there with one release store; it returns at once.
//   test / wait, on lines: each thread waits until every slot carries the call, then computes its
//          own output from the lines: a fold in rank order with the call's combine kernel (the
//          arithmetic and order of the blocking forms, so bitwise their results), or copies of
//          the blocks it receives.
//   test / wait, on slices: once every slot carries the call, the thread claims its own share
//          and runs it (every input read once, every output written once, split T ways); if the
//          call is not done after as long again, it claims every share nobody has claimed (a
//          thread that computes instead of waiting holds nobody back). The call is complete for
//          every thread once every share is done.
//   Whoever settles a slot (computes its output or runs its share) first compares the
//   fingerprints (the threads' own arguments, and that they make the same call), as the
//   blocking calls' begin step does; a call that fails writes nothing and records the error
//   for the slot's owner.
//   No closing step: a nonblocking call n reuses the slot of call n - depth; its start first
//   settles every slot of that call that nobody has (claiming it with one exchange, so that
//   exactly one thread settles each), since requests complete in any order and a thread may be
//   busy in another call: nobody waits for a thread to complete, only to start. A persistent
//   round rewrites a payload at round r + 2 only, whose start follows its own completion of
//   round r + 1, which needed every thread's start of r + 1, which follows each one's
//   completion of round r.
// Cost on lines: T stamps and T c bytes read per thread (allreduce: T - 1 combines of c bytes),
// one copy of c bytes at start. On slices: the blocking sliced algorithm's traffic, with its two
// rendezvous replaced by T start stamps and T done stamps read per thread and one claim per
// share. No lock, no allocation, no shared reference count; no thread waits for another's work
// (the general schedule's last arriver reduces for everyone, then the others read its result).
#include "algo/posted/lines.hpp"

#include <chrono>
#include <cstring>
#include <thread>
#include <vector>

#include "algo/algorithms.hpp"
#include "algo/posted/schedule.hpp"
#include "intra/lines.hpp"
#include "intra/sliced_reduce.hpp"
#include "select/collective_traits.hpp"
#include "select/planner.hpp"
#include "team/team_impl.hpp"

namespace tlc::detail::posted {

namespace {

// Whether a call of `bytes` per thread runs on lines rather than slices: as the blocking call
// with the same arguments does (its plan's flat algorithm, whose lines form carries up to
// lines_max_bytes; docs/design.md section 14). Past a line, flat (forced) runs on slices.
bool lines_by_plan(TeamImpl& team, int me, const Call& c, std::size_t count, std::size_t bytes) {
  if (bytes > lines_max_bytes) return false;
  const PlanQuery q{c.collective, count, c.type.size, c.commutative, c.in_place};
  return team.plan(me, q).plan.algorithm == Algorithm::flat;
}

// The kernel that folds whole lines, for a reduction whose block fits the inline form's.
LineFoldFn line_fold_of(const Call& c, std::size_t count) {
  if (!traits_of(c.collective).reduction || count * c.type.size > inline_capacity) return nullptr;
  return builtin_line_fold(c.op, c.type);
}

// The view of call n's descriptors in its slots, for the sliced algorithm's shares.
Rendezvous::CallView view_of(const LineRing& ring, std::uint64_t n) {
  return Rendezvous::CallView{nullptr, 0, &ring.slot(0, n).descriptor, LineRing::stride()};
}

// Settles thread t's slot of call n, once every thread has begun it; the claim is the caller's:
// thread t's output (on lines) or its share of the call's work (on slices). A call whose
// threads disagree (or one of which passed wrong arguments) writes nothing and records the
// error for t; one whose threads took the general schedule and the ring both aborts the team
// too, since the threads on the general schedule wait for the others there.
void finish_slot(TeamImpl& team, LineRing& ring, int t, std::uint64_t n) {
  const int T = ring.threads();
  const LineRing::Slot& zero = ring.slot(0, n);
  int differs = 0, invalid = -1, other_schedule = 0;
  bool general = false, on_ring = false;
  for (int u = 0; u < T; ++u) {
    const LineRing::Slot& s = ring.slot(u, n);
    if (s.fingerprint.invalid && invalid < 0) invalid = u;
    if (!differs && !same_fingerprint(s.fingerprint, zero.fingerprint)) differs = u;
    if (!other_schedule && s.schedule != zero.schedule) other_schedule = u;
    (s.schedule == RingSchedule::general ? general : on_ring) = true;
  }
  const auto what = [&] { return to_string(static_cast<Collective>(zero.fingerprint.collective)); };
  if (general && on_ring) {
    const auto first = [&](bool on_general) {
      int u = 0;
      while (u < T && (ring.slot(u, n).schedule == RingSchedule::general) != on_general) ++u;
      return u;
    };
    std::string message = "tlc " + std::string(what()) +
                          ": threads started different nonblocking calls at one place of their "
                          "order (";
    message += team.who(first(false)) + " a call on lines, " + team.who(first(true)) +
               " one on the general schedule";
    if (differs)
      message += ": " + fingerprint_difference(team.who(0), zero.fingerprint, team.who(differs),
                                               ring.slot(differs, n).fingerprint);
    message += ")";
    team.abort(message);
    ring.record_failure(t, n, Errc::mismatch, std::move(message));
    return;
  }
  if (invalid >= 0) {
    ring.record_failure(t, n, Errc::invalid_argument,
                        "tlc " + std::string(what()) + ": " + team.who(invalid) + ": " +
                            ring.slot(invalid, n).descriptor.invalid);
    return;
  }
  if (differs) {
    ring.record_failure(t, n, Errc::mismatch,
                        "tlc " + std::string(what()) + ": " +
                            fingerprint_difference(team.who(0), zero.fingerprint, team.who(differs),
                                                   ring.slot(differs, n).fingerprint));
    return;
  }
  if (other_schedule) {  // equal fingerprints, plans that differ (in-place on some threads only)
    ring.record_failure(t, n, Errc::mismatch,
                        "tlc " + std::string(what()) + ": " + team.who(0) + " and " +
                            team.who(other_schedule) +
                            " planned the call differently (one on lines, one on slices): pass "
                            "the same arguments, in place or not, on every thread");
    return;
  }
  const LineRing::Slot& mine = ring.slot(t, n);
  if (mine.schedule == RingSchedule::slices) {
    int gave_up = -1;
    for (int u = 0; u < T && gave_up < 0; ++u)
      if (ring.slot(u, n).abandoned.load(std::memory_order_seq_cst) >= n) gave_up = u;
    if (gave_up >= 0) {
      // This share does not run, so every output misses it: the call fails on every thread
      // but the one that gave up (which throws its own error).
      for (int u = 0; u < T; ++u)
        if (u != gave_up)
          ring.record_failure(u, n, Errc::aborted,
                              "tlc " + std::string(what()) + ": " + team.who(gave_up) +
                                  " gave up on this nonblocking call before its work ran (its "
                                  "wait ended with an error)");
      return;
    }
    try {
      run_sliced_share(view_of(ring, n), t, T, nullptr);
    } catch (const std::exception& e) {  // no user op here: a failure to allocate
      // Every output misses this share: the call fails on every thread.
      for (int u = 0; u < T; ++u)
        ring.record_failure(
            u, n, Errc::aborted,
            "tlc " + std::string(what()) + ": a share of its work failed: " + e.what());
    }
    return;
  }
  output_from_lines(mine.descriptor.call, mine.descriptor.count, T, t, zero.payload,
                    LineRing::stride(), line_fold_of(mine.descriptor.call, mine.descriptor.count));
}

// Waits until thread t's output of call n is done by the thread that claimed it, which computes
// it without waiting for anything (so this wait outlasts an abort). Polled: a thread that
// completes its own call does not notify (it is the common case, and nobody else sleeps on it).
void await_done(const LineRing::Slot& s, std::uint64_t n) {
  for (int round = 0; s.done.load(std::memory_order_acquire) < n; ++round) {
    if (round < 64)
      cpu_relax();
    else
      std::this_thread::yield();
  }
}

// Settles thread t's output of call n (every thread has begun it): computes it unless another
// thread claimed it first, then waits until it is done. Thread t may have run ahead meanwhile
// and taken the slot for its call n + depth (its start settled every thread's call n first, its
// own included): the claim holds a later call then, and n is settled. So the claim is taken only
// from a call before n, never from a later one, whose output the slot's new call describes.
// Claims slot s for call n: true when this thread won it. Only from a call before n, never from
// a later one.
bool claim(LineRing::Slot& s, std::uint64_t n) noexcept {
  std::uint64_t claimed = s.claimed.load(std::memory_order_acquire);
  // Sequentially consistent: on slices the claimer then reads the marks of threads that gave up
  // (abandon_on_ring), which store theirs and then read the claims.
  while (claimed < n)
    if (s.claimed.compare_exchange_weak(claimed, n, std::memory_order_seq_cst)) return true;
  return false;
}

// Settles thread t's slot of call n, claimed by the caller, and marks it done.
void settle_claimed(TeamImpl& team, LineRing& ring, int t, std::uint64_t n) {
  finish_slot(team, ring, t, n);
  ring.slot(t, n).done.store(n, std::memory_order_release);
  team.waiter().notify();  // a thread may sleep in its wait for the call
}

void settle(TeamImpl& team, LineRing& ring, int t, std::uint64_t n) {
  LineRing::Slot& s = ring.slot(t, n);
  if (claim(s, n)) return settle_claimed(team, ring, t, n);
  if (s.claimed.load(std::memory_order_acquire) == n) await_done(s, n);
}

// Whether every slot of call n is settled (on slices: the call is complete for every thread).
bool all_done(const LineRing& ring, std::uint64_t n) noexcept {
  for (int t = 0; t < ring.threads(); ++t)
    if (ring.slot(t, n).done.load(std::memory_order_acquire) < n) return false;
  return true;
}

// Whether some slot of call n is not claimed yet.
bool any_unclaimed(const LineRing& ring, std::uint64_t n) noexcept {
  for (int t = 0; t < ring.threads(); ++t)
    if (ring.slot(t, n).claimed.load(std::memory_order_relaxed) < n) return true;
  return false;
}

// After thread me found every thread's stamp of call n: what the stamps say of their completed
// calls.
void learn_completions(LineRing& ring, int me, std::uint64_t n) {
  for (int t = 0; t < ring.threads(); ++t) {
    std::uint64_t& known = ring.known_complete(me, t);
    const std::uint64_t said = ring.slot(t, n).complete_through;
    if (said > known) known = said;
  }
}

std::string not_started(const TeamImpl& team, const LineRing& ring, std::uint64_t n) {
  std::string missing;
  for (int t = 0; t < ring.threads(); ++t)
    if (ring.slot(t, n).started.load(std::memory_order_acquire) < n)
      missing += (missing.empty() ? "" : ", ") + team.who(t);
  return "threads that have not started nonblocking call " + std::to_string(n) +
         " on lines: " + missing;
}

// Before thread me's call n takes the slot of call n - depth: every thread's output of that
// call settled.
void make_room(TeamImpl& team, LineRing& ring, int me, std::uint64_t n) {
  if (n <= static_cast<std::uint64_t>(LineRing::depth)) return;
  const std::uint64_t old = n - LineRing::depth;
  for (int t = 0; t < ring.threads(); ++t) {
    if (ring.known_complete(me, t) >= old) continue;  // the common case: no other line read
    if (ring.slot(t, old).done.load(std::memory_order_acquire) >= old) continue;
    team.waiter().wait([&] { return ring.all_started(old); },
                       [&] { return not_started(team, ring, old); });
    settle(team, ring, t, old);
  }
}

[[noreturn]] void throw_failure(Errc code, std::string message) {
  if (code == Errc::aborted) throw TeamAborted(message);
  throw Error(code, message);
}

}  // namespace

std::size_t round_contribution_bytes(const PostedEntry& entry, int threads) {
  return line_contribution_bytes(entry.call, entry.count, threads);
}

std::size_t line_payload_bytes(TeamImpl& team, int me, const PostedEntry& entry) {
  const std::size_t bytes = round_contribution_bytes(entry, team.threads());
  if (bytes == 0) return 0;
  // Wrong arguments: the call fails at every round, and its rounds must run on lines or slices
  // (which read the failure) even when this thread opens it; no plan for arguments that fail.
  if (!entry.invalid.empty()) return bytes <= lines_max_bytes ? bytes : 0;
  return lines_by_plan(team, me, entry.call, entry.count, bytes) ? bytes : 0;
}

std::optional<RingSchedule> ring_schedule(TeamImpl& team, int me, const Call& c,
                                          std::size_t count) {
  if (c.collective == Collective::barrier) return RingSchedule::lines;
  const CollectiveTraits& traits = traits_of(c.collective);
  if (traits.v_variant) return std::nullopt;
  // User ops run the general schedule, which compares their op objects.
  if (traits.reduction && builtin_combine(c.op, c.type) == nullptr) return std::nullopt;
  const std::size_t bytes = line_contribution_bytes(c, count, team.threads());
  if (bytes == 0) return std::nullopt;
  return lines_by_plan(team, me, c, count, bytes) ? RingSchedule::lines : RingSchedule::slices;
}

void finish_from_lines(PostedCall& call, std::uint64_t round, int me) {
  const RoundLines& lines = *call.lines;
  const PostedEntry& mine = call.entries[static_cast<std::size_t>(me)];
  output_from_lines(mine.call, mine.count, call.team.threads(), me, lines.payload(0, round),
                    lines.stride(), lines.fold);
}

std::uint64_t start_on_ring(TeamImpl& team, int me, const Call& c, const CallDescriptor& d,
                            RingSchedule schedule) {
  LineRing& ring = *team.line_ring();
  const std::uint64_t n = ring.next(me);
  make_room(team, ring, me, n);
  // This thread's slots are settled in any order: how far they all are, for the others to read.
  std::uint64_t& through = ring.complete_through(me);
  while (through + 1 < n &&
         ring.slot(me, through + 1).done.load(std::memory_order_acquire) >= through + 1)
    ++through;
  LineRing::Slot& s = ring.slot(me, n);
  s.complete_through = through;
  const bool invalid = !d.invalid.empty();
  write_fingerprint(s.fingerprint, c, d.count, invalid);
  s.schedule = schedule;
  CallDescriptor& mine = s.descriptor;
  mine.call = c;
  mine.count = d.count;
  mine.contribution = d.contribution;
  mine.contribution_bytes = d.contribution_bytes;
  if (invalid || !mine.invalid.empty()) mine.invalid = d.invalid;
  if (schedule == RingSchedule::general || invalid) {
    // Nothing of this call will be computed here: its place is settled at once.
    s.claimed.store(n, std::memory_order_relaxed);
    s.done.store(n, std::memory_order_relaxed);
  } else if (schedule == RingSchedule::slices) {
    // Others write outputs while they read inputs: an in-place input whose output they write
    // is read from a copy (the slot's previous call is settled, so nobody reads the old one).
    if (c.in_place && traits_of(c.collective).in_place_output_races) {
      s.aside.resize(d.contribution_bytes);
      std::memcpy(s.aside.data(), d.contribution, d.contribution_bytes);
      mine.contribution = s.aside.data();
    }
  } else if (d.contribution_bytes <= inline_capacity) {
    copy_small(s.payload, d.contribution, d.contribution_bytes);
  } else {
    std::memcpy(s.payload, d.contribution, d.contribution_bytes);
  }
  s.started.store(n, std::memory_order_release);
  team.waiter().notify();
  return n;
}

namespace {

// The error recorded for thread me of call n, if any, thrown.
void throw_recorded(LineRing& ring, int me, std::uint64_t n) {
  Errc code{};
  std::string message;
  if (ring.take_failure(me, n, code, message)) throw_failure(code, std::move(message));
}

// The error recorded for thread me of call n, if any, dropped: the caller throws its own.
void drop_recorded(LineRing& ring, int me, std::uint64_t n) noexcept {
  Errc code{};
  std::string message;
  ring.take_failure(me, n, code, message);
}

// Thread me's test of call n on slices (the ring's slots of call n stay until every share is
// done, so every read here before that finds call n in them).
bool test_on_slices(TeamImpl& team, LineRing& ring, int me, std::uint64_t n) {
  LineRing::Slot& mine = ring.slot(me, n);
  // The first test finds its own share unclaimed (the common case: no look at the done marks
  // before it).
  const bool own_share_open = mine.claimed.load(std::memory_order_relaxed) < n;
  if (own_share_open || !all_done(ring, n)) {
    if (!ring.all_started(n)) {
      team.waiter().throw_if_aborted();
      return false;
    }
    if (own_share_open && claim(mine, n)) {
      learn_completions(ring, me, n);
      const auto began = std::chrono::steady_clock::now();
      settle_claimed(team, ring, me, n);
      const auto ended = std::chrono::steady_clock::now();
      mine.steal_after = ended + (ended - began);
    }
    if (!all_done(ring, n)) {
      // Another thread's share only after waiting as long as this thread's own took: a thread
      // that arrives a little later runs its own (two threads copying each other's share would
      // double the call's time), one that computes instead of waiting is not waited for.
      if (std::chrono::steady_clock::now() < mine.steal_after) return false;
      for (int t = 0; t < ring.threads(); ++t)
        if (t != me && claim(ring.slot(t, n), n)) settle_claimed(team, ring, t, n);
      if (!all_done(ring, n)) return false;
    }
  }
  throw_recorded(ring, me, n);
  return true;
}

}  // namespace

bool test_on_ring(TeamImpl& team, int me, std::uint64_t n) {
  LineRing& ring = *team.line_ring();
  LineRing::Slot& s = ring.slot(me, n);
  // Only this thread reuses its slot, so it still holds call n.
  if (s.schedule == RingSchedule::slices) return test_on_slices(team, ring, me, n);
  if (s.done.load(std::memory_order_acquire) < n) {
    if (!ring.all_started(n)) {
      team.waiter().throw_if_aborted();
      return false;
    }
    if (s.claimed.exchange(n, std::memory_order_acq_rel) != n) {
      // Holding the claim, so the slots of call n stay until this thread marks its output done
      // (a slot is reused only after every thread's output is done).
      learn_completions(ring, me, n);
      finish_slot(team, ring, me, n);
      s.done.store(n, std::memory_order_release);  // read by polls only (await_done)
    } else if (s.done.load(std::memory_order_acquire) < n) {
      return false;  // another thread is completing it for this one
    }
  }
  throw_recorded(ring, me, n);
  return true;
}

void wait_on_ring(TeamImpl& team, int me, std::uint64_t n) {
  LineRing& ring = *team.line_ring();
  LineRing::Slot& s = ring.slot(me, n);
  if (s.schedule == RingSchedule::slices) {
    while (!test_on_slices(team, ring, me, n)) {
      cpu_relax();  // in the grace before taking others' shares the waiter returns at once
      team.waiter().wait(
          [&] { return all_done(ring, n) || (ring.all_started(n) && any_unclaimed(ring, n)); },
          [&] { return not_started(team, ring, n) + ", or whose share of it is not done"; });
    }
    return;
  }
  while (!test_on_ring(team, me, n))
    team.waiter().wait(
        [&] { return s.done.load(std::memory_order_acquire) >= n || ring.all_started(n); },
        [&] { return not_started(team, ring, n); });
}

void abandon_on_ring(TeamImpl& team, int me, std::uint64_t n) noexcept {
  LineRing& ring = *team.line_ring();
  LineRing::Slot& s = ring.slot(me, n);
  if (s.schedule == RingSchedule::slices) {
    // No share that begins after this runs (finish_slot reads the mark after its claim; both
    // sequentially consistent, so one of the two sees the other): every other thread's call
    // fails instead of reading this thread's buffers or writing its output later. The shares
    // already claimed may be running: waited for.
    s.abandoned.store(n, std::memory_order_seq_cst);
    for (int t = 0; t < ring.threads(); ++t) {
      const LineRing::Slot& other = ring.slot(t, n);
      if (other.claimed.load(std::memory_order_seq_cst) >= n) await_done(other, n);
    }
    drop_recorded(ring, me, n);
    return;
  }
  if (s.done.load(std::memory_order_acquire) >= n) return;
  if (s.claimed.exchange(n, std::memory_order_acq_rel) != n) {
    // Claimed here and left unwritten: nobody writes this thread's output any more.
    s.done.store(n, std::memory_order_release);
    team.waiter().notify();
    return;
  }
  await_done(s, n);
  drop_recorded(ring, me, n);
}

}  // namespace tlc::detail::posted
