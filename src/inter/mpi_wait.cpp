// tlc's wait loop for MPI operations (inter/mpi_wait.hpp): the polite pace, the polite waits of
// team construction and small agreements, and the watched loop every team operation ends in.
#include "inter/mpi_wait.hpp"

#include <atomic>
#include <chrono>
#include <optional>
#include <string>
#include <thread>

#include <tlc/error.hpp>

#include "inter/mpi_check.hpp"
#include "inter/mpi_policy.hpp"

namespace tlc::detail {

void polite_barrier(MPI_Comm comm) {
  MPI_Request request = MPI_REQUEST_NULL;
  {
    auto lock = serialize_mpi();
    check_mpi(MPI_Ibarrier(comm, &request), "MPI_Ibarrier");
  }
  complete_politely(request, "MPI_Ibarrier");
}

void polite_allreduce(const void* send, void* recv, int count, MPI_Datatype type, MPI_Op op,
                      MPI_Comm comm) {
  MPI_Request request = MPI_REQUEST_NULL;
  {
    auto lock = serialize_mpi();
    check_mpi(MPI_Iallreduce(send, recv, count, type, op, comm, &request), "MPI_Iallreduce");
  }
  complete_politely(request, "MPI_Iallreduce");
}

// Between two MPI_Tests of a polite wait: nothing for the first tests (a punctual partner
// answers within them), then a yield (the awaited thread may be runnable here), then a short
// fixed sleep. Non-blocking collectives progress only inside MPI_Test, so every step of a
// multi-step schedule waits for the next test of each process in it: sleeps that grow with the
// wait made the whole MPICH test suite far slower (docs/mpi.md) and Open MPI's no faster.
void pace_polite_wait(int attempt) {
  if (attempt < 64) return;
  if (attempt < 256)
    std::this_thread::yield();
  else
    std::this_thread::sleep_for(std::chrono::microseconds(20));
}

// Completes one request of team construction or of a small agreement between processes without
// holding a core while other processes are late. MPI implementations busy-poll inside blocking
// calls; on a node with more threads than cores (tests, oversubscribed runs) a process spinning
// in MPI_Comm_dup or MPI_Allreduce takes the core the late process needs, and every team
// construction then costs whole scheduler time slices per collective. At construction tlc does
// not know yet whether the node is oversubscribed, so these waits are always polite
// (pace_polite_wait).
void complete_politely(MPI_Request& request, const char* what) {
  for (int attempt = 0;; ++attempt) {
    int done = 0;
    {
      auto lock = serialize_mpi();
      const WorldErrorsReturned returned;
      check_mpi(MPI_Test(&request, &done, MPI_STATUS_IGNORE), what);
    }
    if (done) return;
    pace_polite_wait(attempt);
  }
}

namespace {

std::atomic<bool> g_abandoned{false};

}  // namespace

bool mpi_operation_abandoned() noexcept { return g_abandoned.load(std::memory_order_acquire); }

template <class Test>
void MpiWait::poll(Test&& test, const char* what) {
  using Clock = std::chrono::steady_clock;
  // Read once the wait has lasted beyond its first tests: a call that completes at once (the
  // common small call) pays no clock read.
  Clock::time_point start{};
  const bool timed = watch_.timeout_seconds > 0;
  const auto limit = std::chrono::duration<double>(watch_.timeout_seconds);
  // Giving up leaves the operation pending inside MPI: this communicator is not freed, and
  // tlc::Environment ends the job instead of finalising.
  const auto give_up = [&] {
    abandoned_.store(true, std::memory_order_release);
    g_abandoned.store(true, std::memory_order_release);
  };
  const auto aborted = [&] {
    return TeamAborted(std::string("tlc: team aborted while waiting for ") + what +
                       " between processes" + (watch_.why ? ": " + watch_.why() : ""));
  };
  // Once the team has aborted, the operation gets a short grace before it is given up: where
  // the failure left MPI's steps complete on every process (a user op that threw inside MPI
  // skips its combinations and lets MPI finish the call), this one completes too, and MPI stays
  // usable for the program (a new team).
  constexpr auto grace = std::chrono::milliseconds(100);
  std::optional<Clock::time_point> abort_seen;
  // A long wait is told when it begins and when it ends (whichever way the loop is left), and
  // compared with the other processes' a hundred times a second at most (the comparison takes
  // the team's lock and builds its messages).
  const auto suspect = std::chrono::duration<double>(watch_.suspect_seconds);
  constexpr auto compare_every = std::chrono::milliseconds(10);
  Clock::time_point next_compare{};
  struct LongWait {
    LongWaits* waits = nullptr;
    ~LongWait() {
      if (waits) waits->ended();
    }
  } long_wait;
  for (int attempt = 0;; ++attempt) {
    int done = 0;
    test(done);
    if (done) {
      if (abort_seen) throw aborted();
      return;
    }
    if (attempt < 64) continue;
    if (attempt == 64) start = Clock::now();
    // Notes from other processes cost an MPI_Test each: every 16th round while spinning.
    if (watch_.listen && !abort_seen && (polite_ || attempt % 16 == 0)) {
      watch_.listen();
      if (watch_.long_waits && !(watch_.abandoned && watch_.abandoned())) {
        if (!long_wait.waits && Clock::now() - start > suspect) {
          watch_.long_waits->began();
          long_wait.waits = watch_.long_waits;
        }
        if (long_wait.waits && Clock::now() >= next_compare) {
          long_wait.waits->compare();
          next_compare = Clock::now() + compare_every;
        }
      }
    }
    if (!abort_seen && watch_.abandoned && watch_.abandoned()) abort_seen = Clock::now();
    if (abort_seen && Clock::now() - *abort_seen > grace) {
      give_up();
      throw aborted();
    }
    if (timed && Clock::now() - start > limit) {
      give_up();
      const std::string message =
          "tlc: waited " + std::to_string(watch_.timeout_seconds) + " s (TLC_TIMEOUT) for " + what +
          " between processes: another process did not reach this call, or failed";
      if (watch_.abort_job_on_timeout)
        abort_job(message + "; TLC_TIMEOUT_ACTION=abort ends the job");
      throw Error(Errc::timeout, message);
    }
    // Oversubscribed: the awaited process needs this core (and after an abort nothing is gained
    // by holding one).
    if (polite_ || abort_seen) pace_polite_wait(attempt);
  }
}

void MpiWait::complete(MPI_Request& request, const char* what) {
  const WorldErrorsReturned returned;  // once per wait, not per test
  poll(
      [&](int& done) {
        auto lock = serialize_mpi();
        check_mpi(MPI_Test(&request, &done, MPI_STATUS_IGNORE), what);
      },
      what);
}

void MpiWait::wait_all(std::span<MPI_Request> requests, const char* what) {
  if (requests.empty()) return;
  const int count = static_cast<int>(requests.size());
  const WorldErrorsReturned returned;  // once per wait, not per test
  auto test = [&](int& done) {
    auto lock = serialize_mpi();
    check_mpi(MPI_Testall(count, requests.data(), &done, MPI_STATUSES_IGNORE), what);
  };
  // Requests complete at the first test (an eager send, a message that has arrived) need
  // nothing of the loop's watch, whose setup a small call would pay on every call.
  int done = 0;
  test(done);
  if (!done) poll(test, what);
}

void MpiWait::wait_all_alongside(std::span<MPI_Request> requests,
                                 const std::function<bool()>& alongside, const char* what) {
  const int count = static_cast<int>(requests.size());
  bool requests_done = requests.empty(), local_done = false;
  const WorldErrorsReturned returned;  // once per wait, not per test
  poll(
      [&](int& done) {
        if (!requests_done) {
          int flag = 0;
          auto lock = serialize_mpi();
          check_mpi(MPI_Testall(count, requests.data(), &flag, MPI_STATUSES_IGNORE), what);
          requests_done = flag != 0;
        }
        if (!local_done) local_done = alongside();
        done = requests_done && local_done ? 1 : 0;
      },
      what);
}

void MpiWait::wait_until(const std::function<bool()>& done, const char* what) {
  poll([&](int& flag) { flag = done() ? 1 : 0; }, what);
}

}  // namespace tlc::detail
