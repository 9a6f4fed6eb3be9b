// The order and progress of posted calls (algo/posted/calls.hpp).
#include "algo/posted/calls.hpp"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <iterator>
#include <new>
#include <optional>
#include <string>
#include <utility>

#include <tlc/error.hpp>

#include "algo/algorithms.hpp"
#include "algo/posted/schedule.hpp"
#include "algo/posted/slices.hpp"
#include "inter/mpi_wait.hpp"
#include "select/collective_traits.hpp"
#include "team/team_impl.hpp"

namespace tlc::detail {

PostedCall::PostedCall(TeamImpl& team_, bool persistent_)
    : team(team_),
      persistent(persistent_),
      alive(team_.alive_token()),
      entries(static_cast<std::size_t>(team_.threads())),
      per_thread(std::make_unique<PerThread[]>(static_cast<std::size_t>(team_.threads()))) {
  if (persistent) network.set_repeated();
}

PostedCall::~PostedCall() = default;

void PostedCall::reset_for_reuse() noexcept {
  round = 0;
  posted.store(0, std::memory_order_relaxed);
  ready.store(0, std::memory_order_relaxed);
  failed.store(0, std::memory_order_relaxed);
  error = nullptr;
  packing.store(0, std::memory_order_relaxed);
  pack_tasks = 0;
  pack_sequence = 0;
  claimed_tasks.store(0, std::memory_order_relaxed);
  done_tasks.store(0, std::memory_order_relaxed);
  pack_failure = nullptr;
  pack_begun.store(0, std::memory_order_relaxed);
  pack_ended.store(0, std::memory_order_relaxed);
  abandoned.store(0, std::memory_order_relaxed);
  round_arrivals.store(0, std::memory_order_relaxed);
  for (std::size_t t = 0; t < entries.size(); ++t) {
    per_thread[t].round_sequence = 0;
    per_thread[t].task_round.store(0, std::memory_order_relaxed);
  }
  check_queued.store(0, std::memory_order_relaxed);
  step = Step::undecided;
  if (slices) kept_slices = std::move(slices);
  lanes = chunks = 0;
  step_parts.clear();
  part_failure = nullptr;
  // Staging is kept for the calls after it (the pool holds no more calls than were in flight at
  // once, so no more staging than those needed): memory handed back and taken again for every
  // call of a few MiB cost far more than the call (fresh pages, and an MPI library that
  // registers the buffers of its large messages registers them again), and the rounds made on it
  // (inter/p2p_rounds.hpp) serve the next call only on the same memory. Beyond this, a call is
  // rare enough to give its memory back.
  constexpr std::size_t kept_bytes = std::size_t{64} << 20;
  if (in.capacity() > kept_bytes) std::vector<std::byte>().swap(in);
  if (out.capacity() > kept_bytes) std::vector<std::byte>().swap(out);
}

PostedCalls::PostedCalls(TeamImpl& team)
    : threads_(static_cast<std::size_t>(team.threads())), limit_(team.max_requests()) {
  // Nothing to advance between processes with one.
  if (team.progress_thread() && team.processes() > 1) {
    progress_on_ = true;
    progress_team_ = &team;
    progress_thread_ = std::thread([this] { progress_loop(); });
  }
}

PostedCalls& posted_calls(TeamImpl& team) {
  return static_cast<PostedCalls&>(
      team.posted_engine([](TeamImpl& t) -> std::unique_ptr<PostedEngine> {
        return std::make_unique<PostedCalls>(t);
      }));
}

RoundLines::RoundLines(int threads, std::size_t payload_bytes)
    : threads_(threads), payload_bytes_(payload_bytes) {
  part_stride_ = (header + payload_bytes + cache_line_size - 1) / cache_line_size * cache_line_size;
  stride_ = 2 * part_stride_;
  const std::size_t bytes = stride_ * static_cast<std::size_t>(threads);
  memory_.reset(
      static_cast<std::byte*>(::operator new[](bytes, std::align_val_t{cache_line_size})));
  std::memset(memory_.get(), 0, bytes);
  for (int t = 0; t < threads; ++t)
    for (std::uint64_t parity = 0; parity < 2; ++parity)
      new (part(t, parity)) std::atomic<std::uint64_t>(0);
}

void RoundLines::Free::operator()(std::byte* p) const noexcept {
  ::operator delete[](p, std::align_val_t{cache_line_size});
}

std::shared_ptr<PostedCall> PostedCalls::start(TeamImpl& team, int me, PostedEntry entry,
                                               std::shared_ptr<PostedCall> persistent,
                                               std::uint64_t round) {
  if (persistent && round > 0) {
    start_round(team, me, *persistent, round);
    return persistent;
  }
  const auto i = static_cast<std::size_t>(me);
  const bool counts = round > 0 && entry.invalid.empty();
  // One process: a persistent call on lines (as the blocking plan decides; the first thread to
  // come decides for all) or slices, a nonblocking one here on slices.
  std::size_t line_payload = 0;
  if (team.processes() == 1) {
    if (round == 0) line_payload = posted::line_payload_bytes(team, me, entry);
    if (entry.invalid.empty())
      entry.aside.resize(posted::RoundSlices::aside_bytes(entry, team.threads(), line_payload > 0));
  }
  std::shared_ptr<PostedCall> call;
  std::uint64_t sequence = 0;
  bool last = false;
  {
    std::lock_guard<BriefLock> lock(order_lock_);
    if (counts && threads_[i].in_progress >= limit_)
      throw_too_many(team, me, threads_[i].in_progress);
    sequence = ++threads_[i].started;
    // Here: a nonblocking call, or a persistent init (round 0).
    const Kind kind = round == 0 ? Kind::init : Kind::nonblocking;
    bool mismatch = false;
    auto it = open_.find(sequence);
    if (it != open_.end()) {
      call = it->second.call;
      mismatch = it->second.kind != kind;
    } else {
      call = kind == Kind::init ? std::make_shared<PostedCall>(team, true) : recycled_call(team);
      if (kind == Kind::init && team.processes() == 1) {
        if (line_payload > 0) {
          call->lines = std::make_unique<RoundLines>(team.threads(), line_payload);
          if (entry.count * entry.call.type.size <= inline_capacity)
            call->lines->fold = builtin_line_fold(entry.call.op, entry.call.type);
        } else if (posted::RoundSlices::serves(entry, team.threads()))
          call->slices = std::make_unique<posted::RoundSlices>(team.threads());
      }
      // A one-process nonblocking call past the lines runs as one round on slices, as a
      // persistent call's rounds do: the slices (and their stamps, whose rounds only grow) stay
      // with the recycled call.
      call->nonblocking_round = 1;
      if (kind == Kind::nonblocking && team.processes() == 1 &&
          posted::RoundSlices::serves(entry, team.threads())) {
        call->slices = call->kept_slices ? std::move(call->kept_slices)
                                         : std::make_unique<posted::RoundSlices>(team.threads());
        call->nonblocking_round = ++call->slice_rounds;
      }
      if (spare_nodes_.empty()) {
        it = open_.emplace(sequence, Open{call, kind}).first;
      } else {
        auto node = std::move(spare_nodes_.back());
        spare_nodes_.pop_back();
        node.key() = sequence;
        node.mapped() = Open{call, kind};
        it = open_.insert(std::move(node)).position;
      }
    }
    if (mismatch) {
      // Threads started different calls here: the others' call can never complete.
      auto error = std::make_exception_ptr(
          Error(Errc::mismatch, "tlc: " + team.who(me) +
                                    " started a different call (nonblocking, persistent or a "
                                    "persistent init) than other threads at the same place of "
                                    "their order"));
      // The order of the team's posted calls is lost (the place stays open): abort.
      fail(*call, std::max<std::uint64_t>(round, 1), error);
      team.abort("threads started different nonblocking calls at the same place of their order");
      std::rethrow_exception(error);
    }
    PostedEntry& stored = call->entries[i];
    stored = std::move(entry);
    stored.call.layout = traits_of(stored.call.collective).v_variant ? &stored.layout : nullptr;
    if (counts) ++threads_[i].in_progress;
    if (++it->second.arrived == team.threads()) {
      constexpr std::size_t spare_limit = 64;
      if (spare_nodes_.size() < spare_limit) {
        spare_nodes_.push_back(open_.extract(it));
        spare_nodes_.back().mapped() = Open{};  // not holding the call
      } else {
        open_.erase(it);
      }
      last = true;
    }
  }
  if (round > 0 && call->slices) {  // a nonblocking call on slices
    const std::uint64_t r = call->nonblocking_round;
    // The last thread checks the call before it starts its share (the others' advance waits for
    // its stamp): the threads' agreement and arguments, else the call fails on every thread;
    // then the call's place in the order is done (nothing goes to MPI).
    if (last) {
      try {
        for (int t = 0; t < team.threads(); ++t)
          if (const std::string& why = call->entries[static_cast<std::size_t>(t)].invalid;
              !why.empty())
            throw Error(Errc::invalid_argument, "tlc: " + team.who(t) + ": " + why);
        posted::check_agreement(*call);
        call->slices->prepare(*call);
      } catch (...) {
        fail(*call, r, std::current_exception());
      }
      advance_order(team, sequence, {});
    }
    call->slices->start(*call, me, r);
    team.waiter().notify();
    return call;
  }
  if (last) pack_and_post(team, me, call, sequence, round);
  return call;
}

std::shared_ptr<PostedCall> PostedCalls::recycled_call(TeamImpl& team) {
  constexpr std::size_t pool_limit = 32;
  const std::size_t n = recycled_.size();
  for (std::size_t k = 0; k < n; ++k) {
    std::shared_ptr<PostedCall>& candidate = recycled_[(recycle_cursor_ + k) % n];
    // Held by the pool alone: nobody can reach it any more (every other holder got its
    // reference from one that still held one).
    if (candidate.use_count() != 1) continue;
    // Taking and dropping a reference is a read-modify-write of the count that every other
    // holder decremented when it let go (with release), so their accesses to the call happen
    // before its reuse. An acquire fence after the load would say the same to the compiler;
    // ThreadSanitizer understands only this.
    { const std::shared_ptr<PostedCall> acquire = candidate; }
    recycle_cursor_ = (recycle_cursor_ + k + 1) % n;
    // A call that failed may have left MPI operations behind on its staging: not reused.
    const bool completed = candidate->slices
                               ? candidate->slices->completed(candidate->nonblocking_round)
                               : candidate->ready.load(std::memory_order_relaxed) != 0;
    if (candidate->failed.load(std::memory_order_relaxed) != 0 || !completed)
      candidate = std::make_shared<PostedCall>(team, false);
    else
      candidate->reset_for_reuse();
    return candidate;
  }
  auto call = std::make_shared<PostedCall>(team, false);
  if (n < pool_limit) recycled_.push_back(call);
  return call;
}

void PostedCalls::abandon(PostedCall& call, std::uint64_t round) noexcept {
  if (call.slices) return call.slices->abandon(round);
  call.abandoned.store(round);
  if (call.pack_begun.load() < round) return;  // its pack will see `abandoned` and not run
  while (call.pack_ended.load(std::memory_order_acquire) < round) std::this_thread::yield();
}

void PostedCalls::start_round(TeamImpl& team, int me, PostedCall& call, std::uint64_t round) {
  // The call is known, so no lookup and no lock; only this thread touches its own counters.
  const auto i = static_cast<std::size_t>(me);
  if (threads_[i].in_progress >= limit_) throw_too_many(team, me, threads_[i].in_progress);
  ++threads_[i].in_progress;
  if (call.lines) {
    // One process: nothing goes to MPI, so these rounds take no place in the order of the
    // posted calls (every thread skips them alike); the thread's copy of its contribution and
    // its stamp are the whole start (algo/posted/lines.cpp).
    const PostedEntry& mine = call.entries[i];
    if (mine.invalid.empty() && mine.contribution_bytes <= call.lines->payload_bytes()) {
      if (mine.contribution_bytes <= inline_capacity)
        copy_small(call.lines->payload(me, round), mine.contribution, mine.contribution_bytes);
      else
        std::memcpy(call.lines->payload(me, round), mine.contribution, mine.contribution_bytes);
    }
    call.lines->stamp(me, round);
    team.waiter().notify();
    return;
  }
  if (call.slices) {  // the same, on slices (algo/posted/slices.hpp)
    call.slices->start(call, me, round);
    team.waiter().notify();
    return;
  }
  const std::uint64_t sequence = ++threads_[i].started;
  call.per_thread[i].round_sequence = sequence;
  if (call.round_arrivals.fetch_add(1, std::memory_order_acq_rel) + 1 == team.threads()) {
    call.round_arrivals.store(0, std::memory_order_relaxed);
    for (int t = 0; t < team.threads(); ++t)
      if (call.per_thread[static_cast<std::size_t>(t)].round_sequence != sequence) {
        fail(call, round,
             std::make_exception_ptr(
                 Error(Errc::mismatch,
                       "tlc: threads started a persistent call at different places "
                       "of their order (other calls between their starts differ)")));
        if (team.processes() > 1) team.abort("threads started nonblocking calls out of order");
        return;
      }
    pack_and_post(team, me, call.shared_from_this(), sequence, round);
  }
}

void PostedCalls::finished(int me) noexcept {
  --threads_[static_cast<std::size_t>(me)].in_progress;
}

void PostedCalls::throw_too_many(TeamImpl& team, int me, int in_progress) {
  throw Error(Errc::invalid_argument,
              "tlc: " + team.who(me) + " has " + std::to_string(in_progress) +
                  " nonblocking calls in progress, the limit (TeamOptions::max_requests, "
                  "TLC_MAX_REQUESTS); complete some before starting more");
}

void PostedCalls::fail(PostedCall& call, std::uint64_t round, std::exception_ptr error) {
  call.error = std::move(error);
  call.failed.store(round, std::memory_order_release);
  call.team.waiter().notify();
}

void PostedCalls::pack_and_post(TeamImpl& team, int me, const std::shared_ptr<PostedCall>& call,
                                std::uint64_t sequence, std::uint64_t round) {
  std::exception_ptr failure;
  int tasks = 0;
  try {
    if (round == 0) {  // an init: nothing to run; its bad arguments fail every round
      for (int t = 0; t < team.threads(); ++t)
        if (const std::string& why = call->entries[static_cast<std::size_t>(t)].invalid;
            !why.empty())
          fail(*call, ~std::uint64_t{0},
               std::make_exception_ptr(
                   Error(Errc::invalid_argument,
                         "tlc: " + team.who(t) + ": " + why + " (in the persistent call's init)")));
      // The rounds on lines and slices never meet in a pack, so the threads' agreement is
      // checked here.
      if ((call->lines || call->slices) && call->failed.load(std::memory_order_relaxed) == 0) {
        try {
          posted::check_agreement(*call);
          if (call->slices) call->slices->prepare(*call);
        } catch (...) {
          fail(*call, ~std::uint64_t{0}, std::current_exception());
        }
      }
      return advance_order(team, sequence, {});
    }
    call->round = round;
    call->pack_sequence = sequence;  // also what a long wait for this round is called
    call->pack_begun.store(round);
    for (int t = 0; t < team.threads(); ++t)
      if (const std::string& why = call->entries[static_cast<std::size_t>(t)].invalid; !why.empty())
        throw Error(Errc::invalid_argument, "tlc: " + team.who(t) + ": " + why);
    if (call->abandoned.load() >= round) {  // a thread gave up on the call: its input may be gone
      team.waiter().throw_if_aborted();     // the usual case, with the abort's reason
      throw TeamAborted(
          "tlc: another thread of this process gave up on this call before it was packed (its "
          "wait ended with an error)");
    }
    tasks = posted::prepare(*call);
  } catch (...) {
    failure = std::current_exception();
  }
  if (failure || tasks == 0) {
    call->pack_ended.store(round, std::memory_order_release);
    return advance_order(team, sequence, Packed{call, round, failure});
  }
  call->pack_tasks = tasks;
  call->pack_failure = nullptr;
  call->claimed_tasks.store(0, std::memory_order_relaxed);
  call->done_tasks.store(0, std::memory_order_relaxed);
  call->packing.store(round, std::memory_order_release);
  if (tasks > 1) team.waiter().notify();  // threads waiting for the call may help
  help_pack(*call, round, me);
}

void PostedCalls::help_pack(PostedCall& call, std::uint64_t round, int me) {
  int done = 0;
  auto claim = [&](int task) {
    if (call.per_thread[static_cast<std::size_t>(task)].task_round.exchange(
            round, std::memory_order_acq_rel) == round)
      return false;
    call.claimed_tasks.fetch_add(1, std::memory_order_acq_rel);
    return true;
  };
  auto run = [&](int task) {
    try {
      posted::pack_task(call, task);
    } catch (...) {
      std::lock_guard<std::mutex> lock(call.pack_failure_mutex);
      if (!call.pack_failure) call.pack_failure = std::current_exception();
    }
    ++done;
  };
  // Task t writes thread t's output (the movers) or the t-th slice (reductions): a thread takes
  // its own first, so that an output is written by the core that reads it next.
  if (me < call.pack_tasks && claim(me)) run(me);
  for (int task = 0; task < call.pack_tasks &&
                     call.claimed_tasks.load(std::memory_order_acquire) < call.pack_tasks;
       ++task)
    if (task != me && claim(task)) run(task);
  if (done > 0 &&
      call.done_tasks.fetch_add(done, std::memory_order_acq_rel) + done == call.pack_tasks) {
    call.pack_ended.store(round, std::memory_order_release);
    std::exception_ptr failure;
    {
      std::lock_guard<std::mutex> lock(call.pack_failure_mutex);
      failure = call.pack_failure;
    }
    advance_order(call.team, call.pack_sequence, Packed{call.shared_from_this(), round, failure});
  }
}

void PostedCalls::advance_order(TeamImpl& team, std::uint64_t sequence, Packed packed) {
  std::lock_guard<BriefLock> lock(order_lock_);
  // Post every packed call whose turn has come, in the order of the calls; the common case, a
  // call whose turn it is, without a detour through the map.
  std::optional<Packed> now;
  if (sequence == next_to_post_)
    now.emplace(std::move(packed));
  else
    packed_.emplace(sequence, std::move(packed));
  while (true) {
    if (!now) {
      auto it = packed_.find(next_to_post_);
      if (it == packed_.end()) break;
      now.emplace(std::move(it->second));
      packed_.erase(it);
    }
    Packed p = std::move(*now);
    now.reset();
    ++next_to_post_;
    if (!p.call) continue;  // a persistent init holds its place in the order only
    const bool compares = p.round == 1 && compared_across_processes(team, *p.call);
    if (!p.failure && (compares || !awaiting_check_.empty())) {
      // TLC_CHECK: the step waits for the comparison of its call (nonblocking calls and first
      // rounds), or behind an earlier call's, so that the steps keep their order.
      if (compares) {
        try {
          post_check(team, *p.call);
        } catch (...) {
          p.failure = std::current_exception();
        }
      }
      if (!p.failure) {
        p.call->check_queued.store(p.round, std::memory_order_release);
        awaiting_check_.push_back(std::move(p));
        awaiting_count_.fetch_add(1, std::memory_order_acq_rel);
        team.waiter().notify();
        continue;
      }
    }
    post_step(team, std::move(p));
  }
}

void PostedCalls::post_step(TeamImpl& team, Packed p) {
  if (!p.failure && team.processes() > 1) {
    try {
      posted::post(*p.call);
    } catch (...) {
      p.failure = std::current_exception();
    }
  }
  if (p.failure) {
    // The other processes post this call; here it never will be: end their waits too.
    if (team.processes() > 1) team.abort("a nonblocking call failed before its MPI step");
    fail(*p.call, p.round, p.failure);
    return;
  }
  if (team.processes() == 1) p.call->ready.store(p.round, std::memory_order_release);
  p.call->posted.store(p.round, std::memory_order_release);
  team.waiter().notify();
  if (p.call->step != PostedCall::Step::undecided &&
      p.call->step != PostedCall::Step::mpi_collective) {
    rounds_in_flight_.push_back(InFlight{p.call, p.round});
    rounds_count_.store(static_cast<int>(rounds_in_flight_.size()), std::memory_order_release);
  }
  if (progress_on_ && team.processes() > 1) {
    in_flight_.push_back(InFlight{p.call, p.round});
    std::lock_guard<std::mutex> wake(progress_mutex_);
    progress_wake_.notify_one();
  }
}

const Plan& PostedCalls::plan(const TeamImpl& team, const PlanQuery& q) {
  return plans_.get(team.planner(), q, 0, [](Collective, std::size_t) { return -1; }).plan;
}

bool PostedCalls::compared_across_processes(const TeamImpl& team, const PostedCall& call) {
  const PostedEntry& first = call.entries[0];
  return team.checks_call(first.count * first.call.type.size);
}

void PostedCalls::post_check(TeamImpl& team, PostedCall& call) {
  const auto P = static_cast<std::size_t>(team.processes());
  const std::size_t fields = call_signature_size();
  const PostedEntry& first = call.entries[0];
  call.signatures.assign(P * fields, 0);
  std::vector<const Call*> calls;
  calls.reserve(call.entries.size());
  for (const PostedEntry& e : call.entries) calls.push_back(&e.call);
  write_call_signature(calls, team.global_rank(0), team.size(), first.count,
                       call.signatures.data() + static_cast<std::size_t>(team.process()) * fields);
  call.signature_bytes.assign(P, static_cast<MPI_Count>(fields * sizeof(std::int64_t)));
  call.signature_displs.resize(P);
  for (std::size_t p = 0; p < P; ++p)
    call.signature_displs[p] = static_cast<MPI_Aint>(p * fields * sizeof(std::int64_t));
  team.posted_check_comm().post_allgatherv_in_place(call.check_op, call.signatures.data(),
                                                    call.signature_bytes, call.signature_displs);
}

void PostedCalls::pump_checks(TeamImpl& team) {
  if (!checks_pending()) return;
  std::lock_guard<BriefLock> lock(order_lock_);
  while (!awaiting_check_.empty()) {
    Packed& p = awaiting_check_.front();
    if (p.round == 1 && compared_across_processes(team, *p.call)) {
      bool compared = false;
      try {
        compared = team.posted_check_comm().test(p.call->check_op);
      } catch (...) {
        p.failure = std::current_exception();
        compared = true;
      }
      if (!compared) break;
      if (!p.failure) {
        const std::string verdict = compare_signatures(p.call->signatures, team.processes());
        if (!verdict.empty()) {
          // Every process found the same: the call fails everywhere and nobody posts its step.
          fail(*p.call, p.round,
               std::make_exception_ptr(
                   Error(Errc::mismatch, std::string("tlc ") +
                                             to_string(p.call->entries[0].call.collective) + ": " +
                                             verdict)));
          awaiting_check_.pop_front();
          awaiting_count_.fetch_sub(1, std::memory_order_acq_rel);
          continue;
        }
      }
    }
    Packed ready = std::move(p);
    awaiting_check_.pop_front();
    awaiting_count_.fetch_sub(1, std::memory_order_acq_rel);
    post_step(team, std::move(ready));
  }
}

void PostedCalls::stop_progress_thread() noexcept {
  if (!progress_thread_.joinable()) return;
  {
    std::lock_guard<std::mutex> wake(progress_mutex_);
    progress_stop_.store(true, std::memory_order_release);
  }
  progress_wake_.notify_one();
  progress_thread_.join();
}

// Tests every call in flight in turn; spins while tests find work, then yields and sleeps a
// little between rounds (pace_polite_wait), and sleeps on the condition variable while nothing
// is in flight. A failing test is recorded on the call (advance), whose waiters then throw.
void PostedCalls::progress_loop() {
  std::vector<InFlight> watched;
  for (int idle = 0; !progress_stop_.load(std::memory_order_acquire);) {
    {
      std::lock_guard<BriefLock> lock(order_lock_);
      watched.insert(watched.end(), in_flight_.begin(), in_flight_.end());
      in_flight_.clear();
    }
    pump_checks(*progress_team_);  // TLC_CHECK: steps waiting for a comparison
    if (watched.empty() && !checks_pending()) {
      std::unique_lock<std::mutex> wake(progress_mutex_);
      progress_wake_.wait_for(wake, std::chrono::milliseconds(10),
                              [&] { return progress_stop_.load(std::memory_order_acquire); });
      idle = 0;
      continue;
    }
    const std::size_t before = watched.size();
    std::erase_if(watched, [](const InFlight& f) { return advance(*f.call, f.round); });
    idle = watched.size() < before ? 0 : idle + 1;
    pace_polite_wait(idle);
  }
}

bool PostedCalls::advance(PostedCall& call, std::uint64_t round) {
  posted_calls(call.team).advance_rounds();
  return advance_call(call, round);
}

void PostedCalls::advance_rounds() {
  if (rounds_count_.load(std::memory_order_acquire) == 0) return;
  // Taken out of the shared list while tested, so that no lock is held across MPI calls; a
  // thread that finds the list empty meanwhile tests them next time round.
  thread_local std::vector<InFlight> mine;
  {
    std::lock_guard<BriefLock> lock(order_lock_);
    mine.swap(rounds_in_flight_);
  }
  std::erase_if(mine, [](const InFlight& f) { return advance_call(*f.call, f.round); });
  std::lock_guard<BriefLock> lock(order_lock_);
  rounds_in_flight_.insert(rounds_in_flight_.end(), std::make_move_iterator(mine.begin()),
                           std::make_move_iterator(mine.end()));
  mine.clear();
  rounds_count_.store(static_cast<int>(rounds_in_flight_.size()), std::memory_order_release);
}

bool PostedCalls::advance_call(PostedCall& call, std::uint64_t round) {
  if (call.failed.load(std::memory_order_acquire) >= round ||
      call.ready.load(std::memory_order_acquire) >= round)
    return true;
  if (call.posted.load(std::memory_order_acquire) < round) {
    if (call.check_queued.load(std::memory_order_acquire) < round) return false;
    posted_calls(call.team).pump_checks(call.team);
    if (call.posted.load(std::memory_order_acquire) < round)
      return call.failed.load(std::memory_order_acquire) >= round;
  }
  std::unique_lock<std::mutex> lock(call.progress, std::try_to_lock);
  if (!lock.owns_lock()) return false;
  if (call.ready.load(std::memory_order_acquire) >= round) return true;
  try {
    if (!posted::test_step(call)) return false;
  } catch (...) {
    fail(call, round, std::current_exception());
    return true;
  }
  call.ready.store(round, std::memory_order_release);
  call.team.waiter().notify();
  return true;
}

namespace {

// What a long wait of a posted call compares for a v-variant (ProcessFailures::PostedWait).
void calls_of(const void* call, std::vector<const Call*>& out) {
  for (const PostedEntry& e : static_cast<const PostedCall*>(call)->entries) out.push_back(&e.call);
}

// The call's error, thrown as this thread's own copy. Threads that rethrow one shared exception
// object release it in the C++ runtime, whose reference count ThreadSanitizer cannot see (it
// reports the last release as a race with another thread's reading), and a copy costs nothing
// next to a failed call. Other exceptions (a user op's) go as they are.
[[noreturn]] void throw_call_error(const std::exception_ptr& error) {
  try {
    std::rethrow_exception(error);
  } catch (const TeamAborted& e) {
    throw TeamAborted(std::string(e.what()));
  } catch (const Error& e) {
    throw Error(e.code(), std::string(e.what()));
  }
}

}  // namespace

bool PostedCalls::test(PostedCall& call, std::uint64_t round, int me) {
  if (call.lines) {
    if (call.failed.load(std::memory_order_acquire) >= round) throw_call_error(call.error);
    if (!call.lines->all_started(round)) return false;
    // A thread whose start came after a failure of the init stamped too: look again.
    if (call.failed.load(std::memory_order_acquire) >= round) throw_call_error(call.error);
    posted::finish_from_lines(call, round, me);
    return true;
  }
  if (call.slices) {
    if (!call.slices->advance(call, me, round)) return false;
    if (call.failed.load(std::memory_order_acquire) >= round) throw_call_error(call.error);
    if (std::exception_ptr failure = call.slices->failure_of(round)) throw_call_error(failure);
    return true;
  }
  if (!advance(call, round)) return false;
  if (call.failed.load(std::memory_order_acquire) >= round) throw_call_error(call.error);
  posted::unpack(call, me);
  return true;
}

void PostedCalls::wait(PostedCall& call, std::uint64_t round, int me) {
  TeamImpl& team = call.team;
  if (call.lines) {
    team.waiter().wait(
        [&] {
          return call.lines->all_started(round) ||
                 call.failed.load(std::memory_order_acquire) >= round;
        },
        [&] { return std::string("threads of this process that have not started the round yet"); });
    test(call, round, me);
    return;
  }
  if (call.slices) {
    while (!test(call, round, me)) {
      cpu_relax();  // in the grace before taking others' tasks the waiter returns at once
      team.waiter().wait(
          [&] {
            return call.slices->advanceable(round) ||
                   call.failed.load(std::memory_order_acquire) >= round;
          },
          [&] {
            return std::string(
                "threads of this process that have not started the round yet, or whose share "
                "of it is not done");
          });
    }
    return;
  }
  // What a long wait between processes says this process waits in: "nonblocking call n", with
  // the call's fingerprint and (v-variants) its count words, compared with the others' notes.
  // Made only on the way into such a wait: a call that is complete at once never needs it.
  const auto fingerprint = [&] {
    const PostedEntry& mine = call.entries[static_cast<std::size_t>(me)];
    return fingerprint_of(mine.call, mine.count, false);
  };
  while (!test(call, round, me)) {
    if (call.posted.load(std::memory_order_acquire) < round &&
        call.check_queued.load(std::memory_order_acquire) >= round) {
      // TLC_CHECK: its step waits for a comparison across processes; advance() pumps them. A
      // long wait is compared as the call's own: a process that compares a call the others do
      // not (their sizes differ) is found waiting in a call that differs.
      const CallFingerprint what = fingerprint();
      const ProcessFailures::PostedWait told(call.pack_sequence, &what, &call, &calls_of);
      team.posted_check_comm().wait_until([&] { return advance(call, round); },
                                          "the TLC_CHECK comparison of a nonblocking call");
      continue;
    }
    // One process: the call is ready when posted.
    if (team.processes() == 1 || call.posted.load(std::memory_order_acquire) < round) {
      // Threads of this process have not started the call yet (or an earlier call of the order
      // has not been posted): block politely.
      if (call.packing.load(std::memory_order_acquire) == round &&
          call.claimed_tasks.load(std::memory_order_relaxed) < call.pack_tasks) {
        posted_calls(team).help_pack(call, round, me);
        continue;
      }
      // One process: threads that put this call on lines never come here (they abort the team
      // once they find this thread's stamp; this thread aborts it if it finds theirs first).
      const std::uint64_t line_call =
          call.persistent ? 0 : call.entries[static_cast<std::size_t>(me)].line_call;
      bool disagree = false;
      team.waiter().wait(
          [&] {
            disagree = line_call != 0 && team.line_ring()->began_on_ring(line_call);
            return disagree || call.posted.load(std::memory_order_acquire) >= round ||
                   call.failed.load(std::memory_order_acquire) >= round ||
                   call.check_queued.load(std::memory_order_acquire) >= round ||
                   (call.packing.load(std::memory_order_acquire) == round &&
                    call.claimed_tasks.load(std::memory_order_relaxed) < call.pack_tasks);
          },
          [&] {
            return std::string("threads of process ") + std::to_string(team.process()) +
                   " that have not started this nonblocking call (or an earlier one) yet";
          });
      if (disagree) {
        const std::string why =
            "tlc: threads started different nonblocking calls at one place of their order (" +
            team.who(me) + " one on the general schedule, other threads a call on lines)";
        team.abort(why);
        throw Error(Errc::mismatch, why);
      }
      continue;
    }
    const CallFingerprint what = fingerprint();
    const ProcessFailures::PostedWait told(call.pack_sequence, &what, &call, &calls_of);
    team.posted_comm().wait_until([&] { return advance(call, round); }, "a nonblocking collective");
  }
}

}  // namespace tlc::detail
