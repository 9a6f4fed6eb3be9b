// The watch thread of a process (team/watchman.hpp).
#include "team/watchman.hpp"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

#include <mpi.h>

#include "inter/mpi_policy.hpp"
#include "team/process_failures.hpp"

namespace tlc::detail {

namespace {

// Often enough that an answer comes well within any sensible silence limit, rarely enough to
// cost nothing (one MPI_Test per team per round).
constexpr auto watch_period = std::chrono::milliseconds(100);

struct Watch {
  std::mutex lifecycle;  // enroll and withdraw, one at a time (start and join the thread)
  std::mutex mutex;      // the two below; held by the thread while it tends the teams
  std::vector<ProcessFailures*> teams;
  bool stop = false;
  std::condition_variable wake;
  std::thread thread;
  bool finalizing = false;  // MPI_Finalize has begun: the thread is not started again
  bool hooked = false;      // the attribute that stops the thread at MPI_Finalize is set
};

// Never destroyed: a static's destructor at exit would meet a thread still joinable.
Watch& watch() {
  static Watch* w = new Watch;
  return *w;
}

void keep_watch() {
  Watch& w = watch();
  std::unique_lock<std::mutex> lock(w.mutex);
  while (!w.stop) {
    w.wake.wait_for(lock, watch_period);
    if (w.stop) break;
    for (ProcessFailures* team : w.teams) {
      try {
        team->tend();
      } catch (const std::exception& e) {
        std::fprintf(stderr, "tlc: the watch thread could not read a team's notes: %s\n", e.what());
      }
    }
  }
}

// Stops and joins the thread (with the lifecycle lock held).
void stop_watch(Watch& w) {
  {
    std::lock_guard<std::mutex> lock(w.mutex);
    w.stop = true;
  }
  w.wake.notify_all();
  if (w.thread.joinable()) w.thread.join();
}

// MPI_Finalize deletes MPI_COMM_SELF's attributes first, while MPI still works: the thread
// must make no MPI call after that, also in a program that finalizes with a team alive.
int stop_at_finalize(MPI_Comm, int, void*, void*) {
  Watch& w = watch();
  std::lock_guard<std::mutex> serial(w.lifecycle);
  w.finalizing = true;
  stop_watch(w);
  return MPI_SUCCESS;
}

}  // namespace

void Watchman::enroll(ProcessFailures& team) {
  Watch& w = watch();
  std::lock_guard<std::mutex> serial(w.lifecycle);
  {
    std::lock_guard<std::mutex> lock(w.mutex);
    w.teams.push_back(&team);
    if (w.thread.joinable() || w.finalizing) return;
    w.stop = false;
  }
  if (!w.hooked) {
    int keyval = MPI_KEYVAL_INVALID;
    auto lock = serialize_mpi();
    MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, stop_at_finalize, &keyval, nullptr);
    MPI_Comm_set_attr(MPI_COMM_SELF, keyval, nullptr);
    w.hooked = true;
  }
  w.thread = std::thread(keep_watch);
}

void Watchman::withdraw(ProcessFailures& team) {
  Watch& w = watch();
  std::lock_guard<std::mutex> serial(w.lifecycle);
  {
    std::lock_guard<std::mutex> lock(w.mutex);  // the thread is not tending it from here on
    std::erase(w.teams, &team);
    if (!w.teams.empty()) return;
  }
  stop_watch(w);
}

}  // namespace tlc::detail
