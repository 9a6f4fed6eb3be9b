#include <exception>
#include <string>

#include <tlc/error.hpp>
#include <tlc/thread.hpp>

#include "team/team_impl.hpp"

namespace tlc {

namespace {
thread_local Thread* current = nullptr;
}  // namespace

Thread* current_thread() noexcept { return current; }

Thread::Thread(detail::TeamImpl* team, int local_index, bool attached)
    : team_(team),
      alive_(team->alive_token()),
      local_(local_index),
      rank_(team->global_rank(local_index)),
      size_(team->size()),
      threads_(team->threads()),
      process_(team->process()),
      processes_(team->processes()),
      attached_(attached),
      uncaught_at_attach_(std::uncaught_exceptions()) {
  current = this;
}

Thread::Thread(Thread&& other) noexcept
    : team_(other.team_),
      alive_(std::move(other.alive_)),
      local_(other.local_),
      rank_(other.rank_),
      size_(other.size_),
      threads_(other.threads_),
      process_(other.process_),
      processes_(other.processes_),
      attached_(other.attached_),
      uncaught_at_attach_(other.uncaught_at_attach_) {
  other.team_ = nullptr;
  other.attached_ = false;
  if (current == &other) current = this;
}

Thread& Thread::operator=(Thread&& other) noexcept {
  if (this != &other) {
    release();
    team_ = other.team_;
    alive_ = std::move(other.alive_);
    local_ = other.local_;
    rank_ = other.rank_;
    size_ = other.size_;
    threads_ = other.threads_;
    process_ = other.process_;
    processes_ = other.processes_;
    attached_ = other.attached_;
    uncaught_at_attach_ = other.uncaught_at_attach_;
    other.team_ = nullptr;
    other.attached_ = false;
    if (current == &other) current = this;
  }
  return *this;
}

Thread::~Thread() {
  release();
  if (current == this) current = nullptr;
}

// Gives an attached slot back, unless the team is already gone (then there is nothing to give
// back to).
void Thread::release() noexcept {
  if (attached_ && team_ && alive_->load(std::memory_order_acquire))
    team_->detach(local_, std::uncaught_exceptions() > uncaught_at_attach_);
  attached_ = false;
}

void Thread::throw_unusable() const {
  if (!team_)
    throw Error(Errc::invalid_argument,
                "tlc: a collective on a moved-from tlc::Thread (use the Thread it was moved to)");
  throw Error(Errc::invalid_argument,
              "tlc: a collective on participant " + std::to_string(local_) +
                  " of a team that has been destroyed (a tlc::Thread must not outlive its "
                  "tlc::Team)");
}

}  // namespace tlc
