// What the team asks of the engine of its nonblocking and persistent calls, which it owns but
// does not run (algo/posted/calls.hpp, PostedCalls): the engine is made at the team's first such
// call; every wait of the team inside MPI advances what the engine says must be advanced (as
// MPI advances all of its operations in any wait); and before the team frees its communicators
// the engine stops testing operations on them.
#pragma once

namespace tlc::detail {

class PostedEngine {
 public:
  virtual ~PostedEngine() = default;
  // From the watch of every MPI wait of the team, whatever the wait is for.
  virtual void advance_rounds() = 0;
  // Before the team's communicators are freed (its progress thread tests operations on them).
  virtual void stop_progress_thread() noexcept = 0;
};

}  // namespace tlc::detail
