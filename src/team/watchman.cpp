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
    int finalized = 1;
    MPI_Finalized(&finalized);
    if (finalized) break;  // a team left alive past MPI_Finalize has nothing left to answer
    for (ProcessFailures* team : w.teams) {
      try {
        team->tend();
      } catch (const std::exception& e) {
        std::fprintf(stderr, "tlc: the watch thread could not read a team's notes: %s\n", e.what());
      }
    }
  }
}

}  // namespace

void Watchman::enroll(ProcessFailures& team) {
  Watch& w = watch();
  std::lock_guard<std::mutex> serial(w.lifecycle);
  {
    std::lock_guard<std::mutex> lock(w.mutex);
    w.teams.push_back(&team);
    if (w.thread.joinable()) return;
    w.stop = false;
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
    w.stop = true;
  }
  w.wake.notify_all();
  if (w.thread.joinable()) w.thread.join();
}

}  // namespace tlc::detail
