#include <exception>

#include <tlc/thread.hpp>

#include "team/team_impl.hpp"

namespace tlc {

Thread::Thread(detail::TeamImpl* team, int local_index, bool attached)
    : team_(team),
      local_(local_index),
      rank_(team->global_rank(local_index)),
      size_(team->size()),
      threads_(team->threads()),
      process_(team->process()),
      processes_(team->processes()),
      attached_(attached),
      uncaught_at_attach_(std::uncaught_exceptions()) {}

Thread::Thread(Thread&& other) noexcept
    : team_(other.team_),
      local_(other.local_),
      rank_(other.rank_),
      size_(other.size_),
      threads_(other.threads_),
      process_(other.process_),
      processes_(other.processes_),
      attached_(other.attached_),
      uncaught_at_attach_(other.uncaught_at_attach_) {
  other.attached_ = false;
}

Thread& Thread::operator=(Thread&& other) noexcept {
  if (this != &other) {
    if (attached_) team_->detach(local_, std::uncaught_exceptions() > uncaught_at_attach_);
    team_ = other.team_;
    local_ = other.local_;
    rank_ = other.rank_;
    size_ = other.size_;
    threads_ = other.threads_;
    process_ = other.process_;
    processes_ = other.processes_;
    attached_ = other.attached_;
    uncaught_at_attach_ = other.uncaught_at_attach_;
    other.attached_ = false;
  }
  return *this;
}

Thread::~Thread() {
  if (attached_) team_->detach(local_, std::uncaught_exceptions() > uncaught_at_attach_);
}

}  // namespace tlc
