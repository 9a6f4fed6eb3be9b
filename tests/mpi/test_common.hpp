// Shared helpers of the MPI tests: team shapes (threads per process, uneven too) and a per-thread
// result record, so that checks run on the main thread after Team::run (a failed ASSERT inside
// a team thread would leave the other threads waiting).
#pragma once

#include <gtest/gtest.h>
#include <mpi.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <tlc/tlc.hpp>

namespace tlc_test {

inline int world_rank() {
  int r = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}

inline int world_size() {
  int s = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &s);
  return s;
}

struct Shape {
  const char* name;
  int (*threads_of)(int process);
};

// Threads per process: uniform 1..4 and two uneven patterns. With 4 processes of 4 threads on
// this 2-core machine the tests run 8x oversubscribed.
inline const std::vector<Shape>& shapes() {
  static const std::vector<Shape> all = {
      {"uniform1", [](int) { return 1; }},
      {"uniform2", [](int) { return 2; }},
      {"uniform3", [](int) { return 3; }},
      {"uniform4", [](int) { return 4; }},
      {"uneven_123", [](int p) { return p % 3 + 1; }},
      {"uneven_4321", [](int p) { return 4 - p % 4; }},
  };
  return all;
}

inline tlc::TeamOptions test_options(int threads) {
  tlc::TeamOptions o;
  o.threads = threads;
  o.pin = false;            // more threads than cores
  o.timeout_seconds = 120;  // a hang becomes an error naming who is missing
  return o;
}

// The same with static leaders: what the tests of the static plans' error guarantees need (every
// thread of every process gets the same error and the team stays usable). A call led by arrival
// cannot give those: threads that left early are not told, and a failed call aborts the team
// (docs/reliability.md).
inline tlc::TeamOptions static_options(int threads) {
  tlc::TeamOptions o = test_options(threads);
  o.leaders = "static";
  return o;
}

// Global rank of thread `local` of process `p` for a shape (process-major).
inline int global_rank(const Shape& shape, int p, int local) {
  int r = 0;
  for (int q = 0; q < p; ++q) r += shape.threads_of(q);
  return r + local;
}

inline int team_size(const Shape& shape, int processes) { return global_rank(shape, processes, 0); }

// What one thread saw; examined on the main thread.
struct Outcome {
  std::size_t mismatches = 0;
  std::string first_mismatch;
  std::string error;
};

inline void expect_clean(const std::vector<Outcome>& outcomes, const std::string& context) {
  for (std::size_t t = 0; t < outcomes.size(); ++t) {
    EXPECT_EQ(outcomes[t].mismatches, 0u)
        << context << ", thread " << t << ": first mismatch " << outcomes[t].first_mismatch;
    EXPECT_TRUE(outcomes[t].error.empty())
        << context << ", thread " << t << ": " << outcomes[t].error;
  }
}

// What body() writes to this process's stderr (file descriptor 2, so the library's fprintf too),
// with the environment variable `name` set to `value` meanwhile.
template <class Body>
std::string stderr_of(const char* name, const char* value, Body&& body) {
  char path[] = "/tmp/tlc_stderr_XXXXXX";
  const int fd = mkstemp(path);
  if (fd < 0) throw std::runtime_error("mkstemp failed");
  std::fflush(stderr);
  const int saved = dup(STDERR_FILENO);
  dup2(fd, STDERR_FILENO);
  setenv(name, value, 1);
  body();
  unsetenv(name);
  std::fflush(stderr);
  dup2(saved, STDERR_FILENO);
  close(saved);
  close(fd);
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  std::remove(path);
  return text.str();
}

}  // namespace tlc_test
