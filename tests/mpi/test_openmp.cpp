// tlc/openmp.hpp: a team sized from OpenMP, regions of the wrong size refused at once (a region
// limited by the thread limit, a nested region), errors out of a region, and library code that
// reaches the attached participant through tlc::current_thread().
#include <omp.h>

#include <stdexcept>
#include <string>
#include <vector>

#include <tlc/openmp.hpp>

#include "mpi/test_common.hpp"

namespace {

using namespace tlc_test;

tlc::TeamOptions openmp_test_options() {
  tlc::TeamOptions o = tlc::openmp::team_options();
  o.pin = false;
  o.timeout_seconds = 120;  // a hang becomes an error
  return o;
}

// A dot product as a numerical library has it: no team argument.
double global_dot(const std::vector<double>& x, const std::vector<double>& y) {
  // Each thread sums its share of the loop; the team sums the threads' shares.
  double mine = 0;
#pragma omp for schedule(static) nowait
  for (std::size_t i = 0; i < x.size(); ++i) mine += x[i] * y[i];
  return tlc::current_thread()->allreduce(mine);
}

TEST(OpenMP, TeamTakesItsSizeFromOpenMP) {
  const int saved = omp_get_max_threads();
  omp_set_num_threads(3);
  {
    tlc::Team team(MPI_COMM_WORLD, openmp_test_options());
    EXPECT_EQ(team.threads(), 3);
  }
  omp_set_num_threads(saved);
}

TEST(OpenMP, TeamOfAnotherSizeSaysSo) {
  tlc::TeamOptions o = openmp_test_options();
  o.region_threads = 3;
  o.threads = 2;
  testing::internal::CaptureStderr();
  { tlc::Team team(MPI_COMM_WORLD, o); }
  const std::string said = testing::internal::GetCapturedStderr();
  EXPECT_NE(said.find("the team has 2 threads but the parallel regions that attach have 3"),
            std::string::npos)
      << said;
}

TEST(OpenMP, ParallelAttachesEveryThreadForTheRegion) {
  tlc::TeamOptions o = openmp_test_options();
  o.threads = 2;
  tlc::Team team(MPI_COMM_WORLD, o);
  const std::size_t n = 1000;
  std::vector<double> x(n, 1.0), y(n);
  for (std::size_t i = 0; i < n; ++i) y[i] = static_cast<double>(i);
  std::vector<double> dots(2, -1);
  tlc::openmp::parallel(team, [&](tlc::Thread& me) {
    dots[static_cast<std::size_t>(me.local_index())] = global_dot(x, y);
  });
  const double want = world_size() * (n * (n - 1) / 2.0);
  EXPECT_EQ(dots, (std::vector<double>{want, want}));
  EXPECT_EQ(tlc::current_thread(), nullptr);
}

// The thread limit (OMP_THREAD_LIMIT) or OMP_DYNAMIC give a region fewer threads than asked for;
// num_threads(1) stands in for them here.
TEST(OpenMP, AttachFromASmallerRegionFailsAtOnce) {
  tlc::TeamOptions o = openmp_test_options();
  o.threads = 2;
  tlc::Team team(MPI_COMM_WORLD, o);
  std::string error;
#pragma omp parallel num_threads(1)
  {
    try {
      tlc::Thread me = tlc::openmp::attach(team);
      me.barrier();
    } catch (const tlc::Error& e) {
      error = e.what();
    }
  }
  EXPECT_NE(error.find("parallel region of 1 threads, but the team has 2"), std::string::npos)
      << error;
}

// A nested region without nested parallelism runs on one thread.
TEST(OpenMP, ParallelInsideAnotherRegionFailsAtOnce) {
  tlc::TeamOptions o = openmp_test_options();
  o.threads = 2;
  tlc::Team team(MPI_COMM_WORLD, o);
  const int levels = omp_get_max_active_levels();
  omp_set_max_active_levels(1);
  std::string error;
  bool ran = false;
#pragma omp parallel num_threads(2)
  {
#pragma omp master
    {
      try {
        tlc::openmp::parallel(team, [&](tlc::Thread&) { ran = true; });
      } catch (const tlc::Error& e) {
        error = e.what();
      }
    }
  }
  omp_set_max_active_levels(levels);
  EXPECT_FALSE(ran);
  EXPECT_NE(error.find("parallel region of 1 threads"), std::string::npos) << error;
}

// An exception inside the region comes out on the calling thread; the other threads, waiting in
// a collective for the one that threw, wake. One process (MPI_COMM_SELF): across processes a
// failed thread ends the job.
TEST(OpenMP, ParallelRethrowsTheFirstErrorOnTheCallingThread) {
  tlc::TeamOptions o = openmp_test_options();
  o.threads = 2;
  tlc::Team team(MPI_COMM_SELF, o);
  try {
    tlc::openmp::parallel(team, [&](tlc::Thread& me) {
      if (me.local_index() == 1) throw std::runtime_error("thread 1 fails");
      me.barrier();
    });
    ADD_FAILURE() << "no error came out of the region";
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()), "thread 1 fails");
  }
  EXPECT_TRUE(team.aborted());
}

}  // namespace
