// The worker pool of Team::run (team/worker_pool.hpp): one thread per participant, each running
// every body and the first exception kept (an original one ahead of a TeamAborted it caused).
#include "team/worker_pool.hpp"

#include <tlc/error.hpp>

namespace tlc::detail {

WorkerPool::WorkerPool(int workers, std::function<void(int)> on_start)
    : on_start_(std::move(on_start)) {
  for (int i = 0; i < workers; ++i) threads_.emplace_back([this, i] { main(i); });
}

WorkerPool::~WorkerPool() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  start_.notify_all();
  for (auto& t : threads_) t.join();
}

void WorkerPool::main(int index) {
  std::uint64_t seen = 0;
  bool started = false;
  for (;;) {
    const std::function<void(int)>* body = nullptr;
    const OnFailure* on_failure = nullptr;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      start_.wait(lock, [&] { return stopping_ || generation_ != seen; });
      if (stopping_) return;
      seen = generation_;
      body = body_;
      on_failure = on_failure_;
    }
    std::exception_ptr failure;
    try {
      if (!started) {
        on_start_(index);
        started = true;
      }
      (*body)(index);
    } catch (const TeamAborted&) {
      // A consequence of another thread's failure: reported only if nothing else is.
      failure = std::current_exception();
      std::lock_guard<std::mutex> lock(mutex_);
      if (!first_error_) {
        first_error_ = std::current_exception();
        first_is_consequence_ = true;
      }
    } catch (...) {
      failure = std::current_exception();
      std::lock_guard<std::mutex> lock(mutex_);
      if (!first_error_ || first_is_consequence_) {
        first_error_ = std::current_exception();
        first_is_consequence_ = false;
      }
    }
    // Recorded before the others are woken, so the original exception is the one returned.
    if (failure) (*on_failure)(index, failure);
    {
      std::lock_guard<std::mutex> lock(mutex_);
      --running_;
    }
    done_.notify_all();
  }
}

std::exception_ptr WorkerPool::run(const std::function<void(int)>& body,
                                   const OnFailure& on_failure) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    first_error_ = nullptr;
    first_is_consequence_ = false;
    body_ = &body;
    on_failure_ = &on_failure;
    running_ = static_cast<int>(threads_.size());
    ++generation_;
  }
  start_.notify_all();
  std::unique_lock<std::mutex> lock(mutex_);
  done_.wait(lock, [&] { return running_ == 0; });
  body_ = nullptr;
  on_failure_ = nullptr;
  return first_error_;
}

}  // namespace tlc::detail
