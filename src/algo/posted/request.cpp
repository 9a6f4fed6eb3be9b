// tlc::Request and tlc::Persistent (include/tlc/request.hpp), and the nonblocking and
// persistent starts of tlc::Thread: the public face of the posted calls (algo/posted/calls.hpp).
#include <exception>
#include <optional>
#include <string>
#include <thread>
#include <utility>

#include <tlc/error.hpp>
#include <tlc/request.hpp>
#include <tlc/thread.hpp>

#include "algo/algorithms.hpp"
#include "algo/posted/calls.hpp"
#include "algo/posted/lines.hpp"
#include "intra/sliced_reduce.hpp"
#include "select/collective_traits.hpp"
#include "team/move_assign.hpp"
#include "team/team_impl.hpp"

namespace tlc {

namespace detail {

struct PostedAccess {
  static Request request(std::shared_ptr<PostedCall> call, std::uint64_t round, int me,
                         std::int64_t started_ns) {
    Request r;
    r.started_ns_ = started_ns;
    r.call_ = std::move(call);
    r.round_ = round;
    r.me_ = me;
    return r;
  }
  static Request on_lines(const std::shared_ptr<LineSeat>& seat, std::uint64_t n, int me,
                          std::int64_t started_ns) {
    Request r;
    r.started_ns_ = started_ns;
    r.seat_ = seat;
    r.round_ = n;
    r.me_ = me;
    return r;
  }
  static Persistent persistent(std::shared_ptr<PostedCall> call, int me) {
    Persistent p;
    p.call_ = std::move(call);
    p.me_ = me;
    return p;
  }
};

namespace {

// The error of a request or persistent call that outlived its team.
[[noreturn]] void throw_team_gone() {
  throw Error(Errc::invalid_argument,
              "tlc: a request or persistent call used after its team was destroyed (complete "
              "every request before destroying the team)");
}
// The team of a call, or that error.
TeamImpl& team_of(const PostedCall& call) {
  if (!call.alive->load(std::memory_order_acquire)) throw_team_gone();
  return call.team;
}

// Thread me's entry for a call: its arguments checked as for a blocking call, the built-in
// kernel of a built-in op, and what it contributes.
PostedEntry entry_of(TeamImpl& team, int me, const Call& call, const VariantLayout& layout,
                     std::shared_ptr<const void> held_op) {
  PostedEntry entry;
  entry.call = call;
  entry.layout = layout;
  entry.held_op = std::move(held_op);
  if (CombineFn kernel = builtin_combine(entry.call.op, entry.call.type))
    entry.call.combine = kernel;
  entry.call.layout = &entry.layout;
  CallDescriptor d;
  entry.invalid = check_own_arguments(entry.call, team.global_rank(me), team.size(), d);
  entry.count = d.count;
  entry.contribution = d.contribution;
  entry.contribution_bytes = d.contribution_bytes;
  return entry;
}

// What a call on the general schedule leaves in its place on the ring: its count, and why its
// arguments are wrong.
CallDescriptor general_place(const PostedEntry& entry) {
  CallDescriptor d;
  d.count = entry.count;
  d.invalid = entry.invalid;
  return d;
}

// After a thread with wrong arguments has joined (so that the other threads' calls fail rather
// than wait for it): its own error.
[[noreturn]] void throw_invalid(const std::string& why) {
  throw Error(Errc::invalid_argument, "tlc: " + why);
}

// A nonblocking call of a one-process team that runs on the team's ring (lines or slices,
// algo/posted/lines.hpp), started; nothing when it takes the general schedule.
std::optional<Request> start_nonblocking_on_ring(TeamImpl& team, int me, const Call& user_call) {
  Call call = user_call;
  if (CombineFn kernel = builtin_combine(call.op, call.type)) call.combine = kernel;
  CallDescriptor d;
  d.invalid = check_own_arguments(call, team.global_rank(me), team.size(), d);
  const std::optional<RingSchedule> schedule = posted::ring_schedule(team, me, call, d.count);
  if (!schedule) return std::nullopt;
  posted_calls(team).count_start(team, me);
  const std::int64_t started = team.telemetry().enabled() ? Telemetry::now() : 0;
  std::uint64_t n = 0;
  try {
    n = posted::start_on_ring(team, me, call, d, *schedule);
  } catch (...) {
    posted_calls(team).finished(me);
    throw;
  }
  if (!d.invalid.empty()) {
    posted_calls(team).finished(me);
    throw_invalid(d.invalid);
  }
  return PostedAccess::on_lines(team.line_ring()->seat(me), n, me, started);
}

}  // namespace
}  // namespace detail

Request Thread::start_posted(const detail::Call& call, const detail::VariantLayout& layout,
                             std::shared_ptr<const void> held_op) {
  if (!team_ || !alive_->load(std::memory_order_relaxed)) [[unlikely]]
    throw_unusable();
  detail::TeamImpl& team = *team_;
  if (team.line_ring() && !detail::traits_of(call.collective).v_variant) {
    if (std::optional<Request> r = detail::start_nonblocking_on_ring(team, local_, call))
      return std::move(*r);
  }
  detail::PostedEntry entry = detail::entry_of(team, local_, call, layout, std::move(held_op));
  const std::string invalid = entry.invalid;
  const std::int64_t started = team.telemetry().enabled() ? detail::Telemetry::now() : 0;
  if (team.line_ring())  // its place on the lines, so that threads that disagree find out
    entry.line_call = detail::posted::start_on_ring(
        team, local_, entry.call, detail::general_place(entry), detail::RingSchedule::general);
  auto shared = posted_calls(team).start(team, local_, std::move(entry), nullptr, 1);
  if (!invalid.empty()) detail::throw_invalid(invalid);
  const std::uint64_t round = shared->nonblocking_round;  // 1, or its round on slices
  return detail::PostedAccess::request(std::move(shared), round, local_, started);
}

Persistent Thread::init_persistent(const detail::Call& call, const detail::VariantLayout& layout,
                                   std::shared_ptr<const void> held_op) {
  if (!team_ || !alive_->load(std::memory_order_relaxed)) [[unlikely]]
    throw_unusable();
  detail::TeamImpl& team = *team_;
  detail::PostedEntry entry = detail::entry_of(team, local_, call, layout, std::move(held_op));
  const std::string invalid = entry.invalid;
  if (team.line_ring())  // as a nonblocking call on the general schedule (start_posted)
    entry.line_call = detail::posted::start_on_ring(
        team, local_, entry.call, detail::general_place(entry), detail::RingSchedule::general);
  auto shared = posted_calls(team).start(team, local_, std::move(entry), nullptr, 0);
  if (!invalid.empty()) detail::throw_invalid(invalid);
  return detail::PostedAccess::persistent(std::move(shared), local_);
}

// ---- Request ----

namespace detail {
namespace {

// One test (block false) or a wait of thread me's part of a call, advance(block): true once
// complete, after the thread's bookkeeping (its count of calls in progress, telemetry). On an
// error, abandon() (the thread's buffers may go once it returns), the same bookkeeping, and the
// error.
template <class Advance, class Abandon>
bool complete_counted(TeamImpl& team, int me, Collective collective, bool block,
                      std::int64_t started_ns, std::int64_t& waited_ns, Advance&& advance,
                      Abandon&& abandon) {
  Telemetry& telemetry = team.telemetry();
  const std::int64_t entered = telemetry.enabled() ? Telemetry::now() : 0;
  bool done = false;
  try {
    done = advance(block);
  } catch (...) {
    abandon();
    posted_calls(team).finished(me);
    throw;
  }
  if (telemetry.enabled()) {
    const std::int64_t left = Telemetry::now();
    waited_ns += left - entered;
    if (done) telemetry.posted_done(me, collective, left - started_ns, waited_ns);
  }
  if (done) posted_calls(team).finished(me);
  return done;
}

// A round of a call on the posted engine (Request::call_, Persistent::call_).
bool complete(PostedCall& call, std::uint64_t round, int me, bool block, std::int64_t started_ns,
              std::int64_t& waited_ns) {
  return complete_counted(
      team_of(call), me, call.entries[static_cast<std::size_t>(me)].call.collective, block,
      started_ns, waited_ns,
      [&](bool wait) {
        if (!wait) return PostedCalls::test(call, round, me);
        PostedCalls::wait(call, round, me);
        return true;
      },
      [&] { PostedCalls::abandon(call, round); });
}

// A call on the team's ring (Request::seat_).
bool complete_on_lines(const LineSeat& seat, std::uint64_t n, bool block, std::int64_t started_ns,
                       std::int64_t& waited_ns) {
  if (!seat.alive.load(std::memory_order_acquire)) throw_team_gone();
  TeamImpl& team = *seat.team;
  const int me = seat.me;
  return complete_counted(
      team, me, team.line_ring()->slot(me, n).descriptor.call.collective, block, started_ns,
      waited_ns,
      [&](bool wait) {
        if (!wait) return posted::test_on_ring(team, me, n);
        posted::wait_on_ring(team, me, n);
        return true;
      },
      [&] { posted::abandon_on_ring(team, me, n); });
}

std::int64_t start_stamp(const PostedCall& call) {
  return call.team.telemetry().enabled() ? Telemetry::now() : 0;
}

}  // namespace
}  // namespace detail

Request::Request(Request&& other) noexcept
    : call_(std::move(other.call_)),
      seat_(std::move(other.seat_)),
      round_(other.round_),
      me_(other.me_),
      started_ns_(other.started_ns_),
      waited_ns_(other.waited_ns_) {}

Request& Request::operator=(Request&& other) noexcept {
  return detail::move_assign_by_rebuilding(*this, std::move(other));
}

Request::~Request() {
  if (seat_) {
    if (!seat_->alive.load(std::memory_order_acquire)) return;
  } else if (!call_ || !call_->alive->load(std::memory_order_acquire)) {
    return;
  }
  try {
    wait();
  } catch (...) {  // the error is lost: the caller did not ask for it (see the header)
  }
}

bool Request::test() {
  if (!active()) return true;
  bool done = true;
  try {
    done = seat_ ? detail::complete_on_lines(*seat_, round_, false, started_ns_, waited_ns_)
                 : detail::complete(*call_, round_, me_, false, started_ns_, waited_ns_);
  } catch (...) {
    call_.reset();
    seat_.reset();
    throw;
  }
  if (done) {
    call_.reset();
    seat_.reset();
  }
  return done;
}

void Request::wait() {
  if (seat_) {
    auto seat = std::move(seat_);
    detail::complete_on_lines(*seat, round_, true, started_ns_, waited_ns_);
    return;
  }
  if (!call_) return;
  auto call = std::move(call_);
  detail::complete(*call, round_, me_, true, started_ns_, waited_ns_);
}

void wait_all(std::span<Request> requests) {
  std::exception_ptr first;
  for (Request& r : requests) {
    try {
      r.wait();
    } catch (...) {
      if (!first) first = std::current_exception();
    }
  }
  if (first) std::rethrow_exception(first);
}

std::size_t wait_any(std::span<Request> requests) {
  bool any = false;
  for (const Request& r : requests) any = any || r.active();
  if (!any) return requests.size();
  // Tests in turn; the polite pace of a long wait comes from the team's wait policy only
  // through wait(), so after a few rounds the first active request is waited for.
  for (int round = 0; round < 1000; ++round)
    for (std::size_t i = 0; i < requests.size(); ++i)
      if (requests[i].active() && requests[i].test()) return i;
  for (std::size_t i = 0;; i = (i + 1) % requests.size()) {
    if (requests[i].active() && requests[i].test()) return i;
    std::this_thread::yield();
  }
}

// ---- Persistent ----

Persistent::Persistent(Persistent&& other) noexcept
    : call_(std::move(other.call_)),
      round_(other.round_),
      me_(other.me_),
      active_(std::exchange(other.active_, false)),
      started_ns_(other.started_ns_),
      waited_ns_(other.waited_ns_) {}

Persistent& Persistent::operator=(Persistent&& other) noexcept {
  return detail::move_assign_by_rebuilding(*this, std::move(other));
}

Persistent::~Persistent() {
  if (!active_ || !call_ || !call_->alive->load(std::memory_order_acquire)) return;
  try {
    wait();
  } catch (...) {
  }
}

void Persistent::start() {
  if (!call_)
    throw Error(Errc::invalid_argument, "tlc: Persistent::start on an empty persistent call");
  if (active_)
    throw Error(Errc::invalid_argument,
                "tlc: Persistent::start on a call whose round is still active (wait first)");
  detail::TeamImpl& team = detail::team_of(*call_);
  started_ns_ = detail::start_stamp(*call_);
  waited_ns_ = 0;
  posted_calls(team).start_round(team, me_, *call_, round_ + 1);
  ++round_;
  active_ = true;
}

bool Persistent::test() {
  if (!active_) return true;
  bool done = true;
  try {
    done = detail::complete(*call_, round_, me_, false, started_ns_, waited_ns_);
  } catch (...) {
    active_ = false;
    throw;
  }
  if (done) active_ = false;
  return done;
}

void Persistent::wait() {
  if (!active_) return;
  active_ = false;
  detail::complete(*call_, round_, me_, true, started_ns_, waited_ns_);
}

void start_all(std::span<Persistent> calls) {
  for (Persistent& p : calls) p.start();
}

}  // namespace tlc
