// Calls of one-process teams on the threads' lines: bcast, reduce, allreduce, scan, exscan,
// allgather, gather, scatter, alltoall and reduce_scatter_block whose contribution fits a line,
// and barrier. Nonblocking calls run on the team's ring of slots (team/line_ring.hpp),
// persistent rounds on the lines of their call (RoundLines, algo/posted/calls.hpp); both compute
// an output with output_from_lines (intra/lines.hpp), as the blocking calls' lines form does.
//
// Phases (T threads of one process, c bytes contributed per thread, c <= round_line_max_bytes):
//   start: each thread copies its contribution into its own line (a nonblocking call: its slot
//          of the call, with its fingerprint and arguments) and stamps the call there with one
//          release store; it returns at once.
//   wait:  each thread waits until every line carries the call, then computes its own output
//          from the lines: a fold in rank order with the call's combine kernel (the arithmetic
//          and order of the blocking forms, so bitwise their results), or copies of the blocks it
//          receives. A nonblocking call first compares the fingerprints (the threads' own
//          arguments, and that they make the same call), as the blocking calls' begin step does.
//   No closing step: nobody reads a caller's buffer after its start. A persistent round
//   rewrites a payload at round r + 2 only, whose start follows its own completion of round
//   r + 1, which needed every thread's start of r + 1, which follows each one's completion of
//   round r. A nonblocking call n reuses the slot of call n - depth; its start first completes
//   that call's output for every thread that has not (claiming it with one exchange, so that
//   exactly one thread writes each output), since requests complete in any order and a thread
//   may be busy in another call: nobody waits for a thread to complete, only to start.
// Cost: T stamps and T c bytes read per thread (allreduce: T - 1 combines of c bytes), one copy
// of c bytes at start; no lock (a nonblocking call: one exchange on the thread's own slot); no
// thread waits for another's work (the general schedule's last arriver reduces for everyone,
// then the others read its result).
#include "algo/posted/lines.hpp"

#include <cstring>
#include <thread>

#include "algo/posted/schedule.hpp"
#include "intra/lines.hpp"
#include "intra/sliced_reduce.hpp"
#include "select/collective_traits.hpp"
#include "team/team_impl.hpp"

namespace tlc::detail::posted {

namespace {

// Beyond this each thread's copy at start and its reads of every line cost more than the slices'
// claims and stamps (algo/posted/slices.hpp; docs/benchmarking.md, "Overlap").
constexpr std::size_t round_line_max_bytes = 512;
static_assert(round_line_max_bytes <= LineRing::payload_capacity);

// The kernel that folds whole lines, for a reduction whose block fits the inline form's.
LineFoldFn line_fold_of(const Call& c, std::size_t count) {
  if (!traits_of(c.collective).reduction || count * c.type.size > inline_capacity) return nullptr;
  return builtin_line_fold(c.op, c.type);
}

// Thread t's output of call n, once every thread has begun it; the claim is the caller's. A call
// whose threads disagree (or one of which passed wrong arguments) writes no output and records
// the error every thread gets; one whose threads took different schedules aborts the team too,
// since the threads on the general schedule wait for the others there.
void finish_slot(TeamImpl& team, LineRing& ring, int t, std::uint64_t n) {
  const int T = ring.threads();
  const LineRing::Slot& zero = ring.slot(0, n);
  int differs = 0, invalid = -1;
  bool general = false, on_lines = false;
  for (int u = 0; u < T; ++u) {
    const LineRing::Slot& s = ring.slot(u, n);
    if (s.fingerprint.invalid && invalid < 0) invalid = u;
    if (!differs && !same_fingerprint(s.fingerprint, zero.fingerprint)) differs = u;
    (s.general ? general : on_lines) = true;
  }
  const auto what = [&] { return to_string(static_cast<Collective>(zero.fingerprint.collective)); };
  if (general && on_lines) {
    int g = 0;
    while (g < T && !ring.slot(g, n).general) ++g;
    int l = 0;
    while (l < T && ring.slot(l, n).general) ++l;
    std::string message = "tlc " + std::string(what()) +
                          ": threads started different nonblocking calls at one place of their "
                          "order (";
    message += team.who(l) + " a call on lines, " + team.who(g) + " one on the general schedule";
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
                            ring.slot(invalid, n).invalid);
    return;
  }
  if (differs) {
    ring.record_failure(t, n, Errc::mismatch,
                        "tlc " + std::string(what()) + ": " +
                            fingerprint_difference(team.who(0), zero.fingerprint, team.who(differs),
                                                   ring.slot(differs, n).fingerprint));
    return;
  }
  const LineRing::Slot& mine = ring.slot(t, n);
  output_from_lines(mine.call, mine.count, T, t, zero.payload, LineRing::stride(),
                    line_fold_of(mine.call, mine.count));
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
void settle(TeamImpl& team, LineRing& ring, int t, std::uint64_t n) {
  LineRing::Slot& s = ring.slot(t, n);
  std::uint64_t claimed = s.claimed.load(std::memory_order_acquire);
  while (claimed < n) {
    if (s.claimed.compare_exchange_weak(claimed, n, std::memory_order_acq_rel)) {
      finish_slot(team, ring, t, n);
      s.done.store(n, std::memory_order_release);
      team.waiter().notify();  // t may sleep in its wait for the call
      return;
    }
  }
  if (claimed == n) await_done(s, n);
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

std::size_t line_payload_bytes(const PostedEntry& entry, int threads) {
  const std::size_t bytes = round_contribution_bytes(entry, threads);
  return bytes <= round_line_max_bytes ? bytes : 0;
}

bool runs_on_lines(const Call& c, std::size_t count, int threads) {
  if (c.collective == Collective::barrier) return true;
  const CollectiveTraits& traits = traits_of(c.collective);
  if (traits.v_variant) return false;
  // User ops run the general schedule, which compares their op objects.
  if (traits.reduction && builtin_combine(c.op, c.type) == nullptr) return false;
  const std::size_t bytes = line_contribution_bytes(c, count, threads);
  return bytes > 0 && bytes <= round_line_max_bytes;
}

void finish_from_lines(PostedCall& call, std::uint64_t round, int me) {
  const RoundLines& lines = *call.lines;
  const PostedEntry& mine = call.entries[static_cast<std::size_t>(me)];
  output_from_lines(mine.call, mine.count, call.team.threads(), me, lines.payload(0, round),
                    lines.stride(), lines.fold);
}

std::uint64_t start_on_lines(TeamImpl& team, int me, const Call& c, std::size_t count,
                             const void* contribution, std::size_t contribution_bytes,
                             const std::string& invalid, bool general) {
  LineRing& ring = *team.line_ring();
  const std::uint64_t n = ring.next(me);
  make_room(team, ring, me, n);
  // This thread's calls complete in any order: how far they all are, for the others to read.
  std::uint64_t& through = ring.complete_through(me);
  while (through + 1 < n &&
         ring.slot(me, through + 1).done.load(std::memory_order_acquire) >= through + 1)
    ++through;
  LineRing::Slot& s = ring.slot(me, n);
  s.complete_through = through;
  write_fingerprint(s.fingerprint, c, count, !invalid.empty());
  s.general = general;
  s.call = c;
  s.count = count;
  if (!invalid.empty() || !s.invalid.empty()) s.invalid = invalid;
  if (general || !invalid.empty()) {
    // Nothing of this call will be computed here: its place is settled at once.
    s.claimed.store(n, std::memory_order_relaxed);
    s.done.store(n, std::memory_order_relaxed);
  } else if (contribution_bytes <= inline_capacity) {
    copy_small(s.payload, contribution, contribution_bytes);
  } else {
    std::memcpy(s.payload, contribution, contribution_bytes);
  }
  s.started.store(n, std::memory_order_release);
  team.waiter().notify();
  return n;
}

bool test_on_lines(TeamImpl& team, int me, std::uint64_t n) {
  LineRing& ring = *team.line_ring();
  LineRing::Slot& s = ring.slot(me, n);
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
  Errc code{};
  std::string message;
  if (ring.take_failure(me, n, code, message)) throw_failure(code, std::move(message));
  return true;
}

void wait_on_lines(TeamImpl& team, int me, std::uint64_t n) {
  LineRing& ring = *team.line_ring();
  LineRing::Slot& s = ring.slot(me, n);
  while (!test_on_lines(team, me, n))
    team.waiter().wait(
        [&] { return s.done.load(std::memory_order_acquire) >= n || ring.all_started(n); },
        [&] { return not_started(team, ring, n); });
}

void abandon_on_lines(TeamImpl& team, int me, std::uint64_t n) noexcept {
  LineRing& ring = *team.line_ring();
  LineRing::Slot& s = ring.slot(me, n);
  if (s.done.load(std::memory_order_acquire) >= n) return;
  if (s.claimed.exchange(n, std::memory_order_acq_rel) != n) {
    // Claimed here and left unwritten: nobody writes this thread's output any more.
    s.done.store(n, std::memory_order_release);
    team.waiter().notify();
    return;
  }
  await_done(s, n);
  Errc code{};
  std::string message;
  ring.take_failure(me, n, code, message);  // the caller throws its own error
}

}  // namespace tlc::detail::posted
