/// @file
/// tlc::Region: one parallel region of the application's own threads (OpenMP, std::thread)
/// attached to a team, with errors brought out of it. An exception must not leave an OpenMP
/// region (std::terminate), and a thread that fails while the others wait in a collective for it
/// would leave them waiting forever. A Region runs each thread's body as an attached participant,
/// keeps the first error, aborts the team so that every waiting participant wakes with
/// tlc::TeamAborted, and rethrows the error on the thread that made the Region once the region is
/// over:
///
///   tlc::Region region(team);
///   \#pragma omp parallel num_threads(team.threads())
///   region.enter(omp_get_thread_num(), omp_get_num_threads(), [&](tlc::Thread& me) { ... });
///   region.finish();  // rethrows the first error of any thread
///
/// tlc/openmp.hpp wraps exactly this as tlc::openmp::parallel(team, body). Inside the body,
/// synchronise with me.barrier() rather than `#pragma omp barrier`: an OpenMP barrier does not
/// know about the abort and would wait for a thread that has left.
#pragma once

#include <exception>
#include <mutex>
#include <utility>

#include <tlc/detail/export.hpp>
#include <tlc/team.hpp>
#include <tlc/thread.hpp>

namespace tlc {

/// Runs each thread of an OpenMP (or any) region as an attached participant and brings the first
/// error out of the region (the file's description says how).
class TLC_API Region {
 public:
  /// A region of this team's threads.
  explicit Region(Team& team) noexcept : team_(&team) {}
  Region(const Region&) = delete;
  Region& operator=(const Region&) = delete;

  /// On each thread of the region: attaches the calling thread as participant local_index of a
  /// region of region_threads threads (Team::attach; a region of the wrong size fails at once on
  /// every thread), runs body(me) and detaches. Never throws: an exception is kept for finish().
  template <class Body>
  void enter(int local_index, int region_threads, Body&& body) noexcept {
    try {
      Thread me = team_->attach(local_index, region_threads);
      std::forward<Body>(body)(me);
    } catch (...) {
      keep(local_index, std::current_exception());
    }
  }

  /// After the region, on the thread that created the Region: rethrows the first error of any of
  /// its threads (the original one, not a tlc::TeamAborted it caused elsewhere), and forgets it.
  void finish();

  /// Whether a thread of the region has failed so far.
  bool failed() const;

 private:
  /// Keeps the error (an original ahead of a TeamAborted consequence) and aborts the team, so that
  /// no participant is left waiting for this thread (also when it failed before attaching).
  void keep(int local_index, std::exception_ptr error) noexcept;

  Team* team_;
  mutable std::mutex mutex_;
  std::exception_ptr first_;
  bool first_is_consequence_ = false;
};

}  // namespace tlc
