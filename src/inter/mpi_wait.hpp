// How tlc waits for its MPI operations. Every MPI operation of a team is the non-blocking variant
// completed by tlc's own loop of MPI_Test, which spins briefly, then on oversubscribed nodes
// yields and sleeps between tests, and watches for reasons to give up (the team's abort, notes
// from other processes, TLC_TIMEOUT): a blocking MPI call could not be ended when another
// process fails. Also the polite waits of team construction and small agreements.
#pragma once

#include <atomic>
#include <functional>
#include <span>
#include <string>
#include <utility>

#include <mpi.h>

namespace tlc::detail {

// What a wait that has lasted suspiciously long (TLC_SUSPECT_MS) tells, so that processes whose
// calls disagree find out while they wait instead of hanging (team/process_failures.hpp compares
// the processes' long waits on the team's notes). began() when a wait passes the threshold,
// compare() while it goes on (may abort the team, which ends the wait), ended() when it ends.
class LongWaits {
 public:
  virtual void began() = 0;
  virtual void compare() = 0;
  virtual void ended() noexcept = 0;

 protected:
  ~LongWaits() = default;
};

// What a wait for an MPI operation watches besides the operation, so that a failure elsewhere
// ends the wait instead of hanging it: the team's abort, notes from other processes
// (inter/alarm.hpp), waits that last long (LongWaits) and TLC_TIMEOUT.
struct MpiWatch {
  double timeout_seconds = 0;         // 0: as long as it takes
  std::function<bool()> abandoned;    // true: the team has aborted, stop waiting (cheap)
  std::function<std::string()> why;   // the abort's reason, for the error
  std::function<void()> listen;       // reads other processes' notes (an MPI_Test); may abort
  bool abort_job_on_timeout = false;  // TLC_TIMEOUT_ACTION=abort: MPI_Abort instead of throwing
  // The waits of a team's blocking calls only: after suspect_seconds a wait is a long wait.
  LongWaits* long_waits = nullptr;
  double suspect_seconds = 0;
};

// Between two tests of a polite wait (attempt counts from 0): nothing at first, then a yield,
// then a short fixed sleep.
void pace_polite_wait(int attempt);
// Completes request with the polite pace, whatever the node (waits of team construction and of
// small agreements between processes).
void complete_politely(MPI_Request& request, const char* what);
// Every process of comm has arrived, waited for politely. Precedes the collectives that have no
// non-blocking form (communicator creation), so that their blocking wait inside MPI is short.
void polite_barrier(MPI_Comm comm);
// MPI_Allreduce of a few values, waited for politely.
void polite_allreduce(const void* send, void* recv, int count, MPI_Datatype type, MPI_Op op,
                      MPI_Comm comm);

// Whether a wait gave up on an MPI operation that may still complete (after an abort or a
// time-out): MPI_Finalize could then wait for it forever, so tlc::Environment aborts the job.
bool mpi_operation_abandoned() noexcept;

// The wait loop of one communicator's operations, with its pace (polite or not) and its watch.
class MpiWait {
 public:
  // Polite mode is for oversubscribed nodes: MPI implementations busy-poll inside blocking
  // calls, which steals the core from the very threads (of this or another process) the call
  // waits for, so the loop yields and sleeps between tests (pace_polite_wait); otherwise it
  // spins.
  void set_polite(bool polite) noexcept { polite_ = polite; }
  bool polite() const noexcept { return polite_; }
  void set_watch(MpiWatch watch) { watch_ = std::move(watch); }
  // Whether a wait here gave up on an operation, which may then still be pending inside MPI.
  bool gave_up() const noexcept { return abandoned_.load(std::memory_order_acquire); }

  // Each completes its requests in the loop, giving up (TeamAborted, or Error(timeout)) when
  // the watch says so.
  void complete(MPI_Request& request, const char* what);
  // Completes requests with MPI_Testall. Every request is MPI_REQUEST_NULL on return.
  void wait_all(std::span<MPI_Request> requests, const char* what);
  // Completes requests while the caller does local work between the tests: alongside() runs
  // after each test (outside MPI) and returns true once the caller's local part is done; returns
  // when both are. Always polls (MPI makes progress only inside MPI calls, and the local work
  // must not wait behind a blocking MPI_Waitall).
  void wait_all_alongside(std::span<MPI_Request> requests, const std::function<bool()>& alongside,
                          const char* what);
  // Polls done() (which makes its own MPI calls) in the loop until it returns true.
  void wait_until(const std::function<bool()>& done, const char* what);

 private:
  bool polite_ = false;
  MpiWatch watch_;
  // A wait on this communicator gave up on an operation (several threads may wait on it).
  std::atomic<bool> abandoned_{false};
  // Calls test() (one MPI_Test or MPI_Testall under the serialising lock, setting done) until
  // done: spinning, then in polite mode yielding and sleeping; checks the watch as it goes.
  template <class Test>
  void poll(Test&& test, const char* what);
};

}  // namespace tlc::detail
