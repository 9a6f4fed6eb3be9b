// The out-of-line parts of the Waiter (team/wait_policy.hpp): marking the team aborted and waking
// every sleeper, and the errors a wait ends with (TeamAborted, timeout).
#include "team/wait_policy.hpp"

namespace tlc::detail {

void Waiter::abort(const std::string& reason) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!aborted_.load(std::memory_order_relaxed)) abort_reason_ = reason;
    aborted_.store(true, std::memory_order_release);
  }
  cv_.notify_all();
}

void Waiter::throw_aborted() const {
  // abort_reason_ is written once, before aborted_ is set with release order.
  throw TeamAborted("tlc: team aborted: " + abort_reason_);
}

void Waiter::throw_timeout(double seconds, const std::string& missing) const {
  const std::string message =
      "tlc: waited " + std::to_string(seconds) + " s (TLC_TIMEOUT) for " + missing;
  if (tuning_.timeout_action)
    tuning_.timeout_action(message + "; TLC_TIMEOUT_ACTION=abort ends the job");
  throw Error(Errc::timeout, message);
}

}  // namespace tlc::detail
