// The threads Team::run runs on: one worker per participant, started on first use (so programs
// that only attach their own threads have no idle ones), reused by every later run, joined when
// the team goes.
#pragma once

#include <condition_variable>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace tlc::detail {

class WorkerPool {
 public:
  // on_start(index) runs once on worker `index`'s own thread before its first body (pinning).
  WorkerPool(int workers, std::function<void(int)> on_start);
  ~WorkerPool();
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  // Runs body(index) on every worker and waits for all of them. A body that throws has its
  // exception recorded (the first one is returned, preferring any exception to a TeamAborted,
  // which is only ever a consequence of another failure) and then on_failure(index, its
  // exception) called, so that the others can be woken while the original exception is the one
  // reported.
  using OnFailure = std::function<void(int, const std::exception_ptr&)>;
  std::exception_ptr run(const std::function<void(int)>& body, const OnFailure& on_failure);

 private:
  void main(int index);

  std::function<void(int)> on_start_;
  std::vector<std::thread> threads_;
  std::mutex mutex_;
  std::condition_variable start_, done_;
  std::uint64_t generation_ = 0;
  int running_ = 0;
  bool stopping_ = false;
  const std::function<void(int)>* body_ = nullptr;
  const OnFailure* on_failure_ = nullptr;
  std::exception_ptr first_error_;
  bool first_is_consequence_ = false;  // first_error_ is a TeamAborted
};

}  // namespace tlc::detail
