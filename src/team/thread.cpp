// tlc::Thread (include/tlc/thread.hpp): a participant's identity, moves, release of an attached
// slot, and tlc::current_thread() through a thread_local cell that follows the Thread's moves.
#include <exception>
#include <string>

#include <tlc/error.hpp>
#include <tlc/thread.hpp>

#include "team/move_assign.hpp"
#include "team/team_impl.hpp"

namespace tlc {

namespace {
// The Thread this OS thread attached or runs as, through its self_ cell.
thread_local std::shared_ptr<std::atomic<Thread*>> current;
}  // namespace

Thread* current_thread() noexcept {
  return current ? current->load(std::memory_order_acquire) : nullptr;
}

Thread::Thread(detail::TeamImpl* team, int local_index, bool attached)
    : team_(team),
      alive_(team->alive_token()),
      self_(std::make_shared<std::atomic<Thread*>>(this)),
      local_(local_index),
      rank_(team->global_rank(local_index)),
      size_(team->size()),
      threads_(team->threads()),
      process_(team->process()),
      processes_(team->processes()),
      attached_(attached),
      uncaught_at_attach_(std::uncaught_exceptions()) {
  current = self_;
}

Thread::Thread(std::shared_ptr<detail::TeamImpl> sub_team, int local_index)
    : team_(sub_team.get()),
      alive_(sub_team->alive_token()),
      self_(std::make_shared<std::atomic<Thread*>>(this)),
      local_(local_index),
      rank_(sub_team->global_rank(local_index)),
      size_(sub_team->size()),
      threads_(sub_team->threads()),
      process_(sub_team->process()),
      processes_(sub_team->processes()),
      uncaught_at_attach_(std::uncaught_exceptions()),
      sub_team_(std::move(sub_team)) {
  // Not made current: current_thread() stays the participant of Team::run or Team::attach.
}

Thread::Thread(Thread&& other) noexcept
    : team_(other.team_),
      alive_(std::move(other.alive_)),
      self_(std::move(other.self_)),
      local_(other.local_),
      rank_(other.rank_),
      size_(other.size_),
      threads_(other.threads_),
      process_(other.process_),
      processes_(other.processes_),
      attached_(other.attached_),
      uncaught_at_attach_(other.uncaught_at_attach_),
      sub_team_(std::move(other.sub_team_)) {
  other.team_ = nullptr;
  other.attached_ = false;
  if (self_) self_->store(this, std::memory_order_release);
}

Thread& Thread::operator=(Thread&& other) noexcept {
  return detail::move_assign_by_rebuilding(*this, std::move(other));
}

Thread::~Thread() {
  release();
  if (self_) self_->store(nullptr, std::memory_order_release);
}

// Gives an attached slot back, unless the team is already gone (then there is nothing to give
// back to).
void Thread::release() noexcept {
  if (attached_ && team_ && alive_->load(std::memory_order_acquire))
    team_->detach(local_, std::uncaught_exceptions() > uncaught_at_attach_);
  attached_ = false;
  // A sub-team's participant leaves it; the last one here frees it (its destructor is the
  // team's, collective over its processes like a Team's).
  if (sub_team_) {
    sub_team_->leave_sub_team(local_, std::uncaught_exceptions() > uncaught_at_attach_);
    sub_team_.reset();
    team_ = nullptr;
  }
}

TeamStats Thread::stats() const {
  if (!team_ || !alive_->load(std::memory_order_acquire)) throw_unusable();
  return team_->stats();
}

void Thread::throw_unusable() const {
  if (!team_)
    throw Error(Errc::invalid_argument,
                "tlc: a collective on a tlc::Thread that is no participant: moved-from (use the "
                "Thread it was moved to), default-constructed, or returned by "
                "split(tlc::undefined, ...) (test it with `if (sub)` first)");
  throw Error(Errc::invalid_argument,
              "tlc: a collective on participant " + std::to_string(local_) +
                  " of a team that has been destroyed (a tlc::Thread must not outlive its "
                  "tlc::Team)");
}

}  // namespace tlc
