/// @file
/// tlc::Request and tlc::Persistent: the nonblocking and persistent forms of the collectives
/// (`me.iallreduce(...)`, `me.allreduce_init(...)`; docs/design.md section 14).
///
/// MPI's rules hold: the buffers (and count arrays) of a call are tlc's until its request
/// completes; every thread of the team starts the same collectives in the same order
/// (nonblocking calls and persistent starts form one order, separate from the blocking calls);
/// requests may be completed in any order. Without a thread inside tlc nothing advances: the
/// last thread of a process to start a call combines the process's contributions and posts the
/// step between processes, and any thread testing or waiting for the call advances it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>

#include <tlc/detail/export.hpp>

namespace tlc {
namespace detail {
class PostedCall;
struct LineSeat;
struct PostedAccess;
}  // namespace detail

/// A nonblocking collective call of one thread, as MPI_Request. Move-only. A default-constructed
/// or completed request is inactive: test() returns true and wait() returns at once.
class TLC_API Request {
 public:
  Request() noexcept = default;
  /// Takes other's call; other becomes inactive.
  Request(Request&& other) noexcept;
  /// Waits for the request held before (as the destructor does), then takes other's.
  Request& operator=(Request&& other) noexcept;
  Request(const Request&) = delete;
  Request& operator=(const Request&) = delete;
  /// Waits for an active request: its buffers are never left in use. An error found by that
  /// wait is lost (call wait() to see it); while an exception unwinds the stack, the wait ends
  /// at once if the team aborts.
  ~Request();

  /// Whether the call is still in progress for this thread.
  bool active() const noexcept { return call_ != nullptr || seat_ != nullptr; }
  /// Advances the call; true once this thread's part is complete (its output written), after
  /// which the request is inactive. Throws what the call failed with (tlc::Error,
  /// tlc::TeamAborted), once.
  bool test();
  /// Returns once this thread's part is complete. Throws as test(); TLC_TIMEOUT bounds it.
  void wait();

 private:
  friend struct detail::PostedAccess;
  std::shared_ptr<detail::PostedCall> call_;
  // A call of a one-process team on its threads' lines: the thread's seat, round_ the number of
  // the call.
  std::shared_ptr<detail::LineSeat> seat_;
  std::uint64_t round_ = 0;
  int me_ = 0;
  std::int64_t started_ns_ = 0;  // telemetry (TLC_STATS) only
  std::int64_t waited_ns_ = 0;
};

/// Waits for every request (any order inside). If some fail, every one is still waited for,
/// and the first error is thrown.
TLC_API void wait_all(std::span<Request> requests);
/// Waits until one active request completes and returns its index; requests.size() when none
/// is active.
TLC_API std::size_t wait_any(std::span<Request> requests);

/// A persistent collective call, as MPI_Allreduce_init: made once with `me.allreduce_init(...)`
/// (a collective over the team's threads in the same order as the nonblocking calls), then
/// started any number of times. What can be decided once is decided at init (the checks of the
/// arguments, the staging memory); buffers and arguments are those given at init. Move-only.
class TLC_API Persistent {
 public:
  Persistent() noexcept = default;
  /// Takes other's call; other becomes empty.
  Persistent(Persistent&& other) noexcept;
  /// Waits for an active round of the call held before, then takes other's.
  Persistent& operator=(Persistent&& other) noexcept;
  Persistent(const Persistent&) = delete;
  Persistent& operator=(const Persistent&) = delete;
  /// Waits for an active round (as Request's destructor).
  ~Persistent();

  /// Starts a round: the buffers are tlc's until it completes. Every thread of the team starts
  /// its call in the same order as its other nonblocking calls. Starting an active call throws
  /// tlc::Error (invalid_argument).
  void start();
  /// Whether a round is in progress for this thread.
  bool active() const noexcept { return active_; }
  /// As Request::test for the current round (true when no round is active).
  bool test();
  /// As Request::wait for the current round.
  void wait();

 private:
  friend struct detail::PostedAccess;
  std::shared_ptr<detail::PostedCall> call_;
  std::uint64_t round_ = 0;
  int me_ = 0;
  bool active_ = false;
  std::int64_t started_ns_ = 0;  // telemetry (TLC_STATS) only
  std::int64_t waited_ns_ = 0;
};

/// Starts every persistent call, in order.
TLC_API void start_all(std::span<Persistent> calls);

}  // namespace tlc
