// tlc::Region (include/tlc/region.hpp): errors out of an application's parallel region.
#include <tlc/error.hpp>
#include <tlc/region.hpp>

#include <string>
#include <utility>

#include "team/team_access.hpp"

namespace tlc {

void Region::keep(int local_index, std::exception_ptr error) noexcept {
  bool consequence = false;
  try {
    std::rethrow_exception(error);
  } catch (const TeamAborted&) {
    consequence = true;
  } catch (...) {
  }
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!first_ || (first_is_consequence_ && !consequence)) {
      first_ = error;
      first_is_consequence_ = consequence;
    }
  }
  // A thread that failed after attaching has aborted the team already (its Thread was destroyed
  // by the unwinding); one that failed before attaching (a held index, a user error ahead of
  // attach) has not, and the others would wait for it forever.
  detail::TeamImpl& team = detail::TeamAccess::impl(*team_);
  if (team.aborted()) return;
  try {
    const bool known = local_index >= 0 && local_index < team.threads();
    team.abort((known ? team.who(local_index) : "thread " + std::to_string(local_index)) +
               " failed in a parallel region");
  } catch (...) {
    // Building the reason can only fail for want of memory; the error itself is kept.
  }
}

void Region::finish() {
  std::exception_ptr error;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    error = std::exchange(first_, nullptr);
    first_is_consequence_ = false;
  }
  if (error) std::rethrow_exception(error);
}

bool Region::failed() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return first_ != nullptr;
}

}  // namespace tlc
