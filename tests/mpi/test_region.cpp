// Parallel regions of the application's own threads: attach from a region of the wrong size
// fails at once, and tlc::Region brings errors out of a region without leaving anyone waiting.
// std::threads stand in for OpenMP here (tests/mpi/test_openmp.cpp has the OpenMP helper).
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "mpi/test_common.hpp"

namespace {

using namespace tlc_test;

// Runs body(index) on `count` std::threads at once, as a parallel region of that size would.
template <class Body>
void region_of(int count, Body body) {
  std::vector<std::thread> threads;
  for (int i = 0; i < count; ++i) threads.emplace_back([&body, i] { body(i); });
  for (auto& t : threads) t.join();
}

// A region smaller than the team (as OMP_THREAD_LIMIT or OMP_DYNAMIC make one) used to attach
// and then wait forever in its first collective; a larger one to fail on some threads only.
TEST(Region, AttachFromARegionOfTheWrongSizeFailsAtOnceOnEveryThread) {
  tlc::Team team(MPI_COMM_WORLD, test_options(3));
  for (int region_threads : {2, 4}) {
    std::vector<std::string> errors(static_cast<std::size_t>(region_threads));
    region_of(region_threads, [&](int i) {
      try {
        tlc::Thread me = team.attach(i, region_threads);
        me.barrier();
      } catch (const tlc::Error& e) {
        errors[static_cast<std::size_t>(i)] =
            e.code() == tlc::Errc::invalid_argument ? e.what() : "wrong code";
      }
    });
    for (const std::string& e : errors) {
      EXPECT_NE(e.find("parallel region of " + std::to_string(region_threads) + " threads"),
                std::string::npos)
          << e;
      EXPECT_NE(e.find("OMP_THREAD_LIMIT"), std::string::npos) << e;
    }
  }
  EXPECT_FALSE(team.aborted()) << "a refused attach touches nothing";
  // The right size still works afterwards.
  std::vector<double> sums(3);
  region_of(3, [&](int i) {
    tlc::Thread me = team.attach(i, 3);
    sums[static_cast<std::size_t>(i)] = me.allreduce(1.0);
  });
  for (double s : sums) EXPECT_EQ(s, 3.0 * world_size());
}

// One thread throws while the others wait for it in a collective: their waits end, finish()
// rethrows the original error (not the TeamAborted of the others), the team is aborted. A team
// of one process (MPI_COMM_SELF): across processes a failed thread ends the job (the fault
// tests, tests/mpi/fault_program.cpp).
TEST(Region, FinishRethrowsTheOriginalErrorAndTheOthersWake) {
  tlc::Team team(MPI_COMM_SELF, test_options(3));
  tlc::Region region(team);
  std::vector<int> woke(3, 0);
  region_of(3, [&](int i) {
    region.enter(i, 3, [&](tlc::Thread& me) {
      try {
        me.barrier();
        if (me.rank() == 1) throw std::runtime_error("rank 1 gives up");
        me.barrier();  // waits for rank 1, which never comes
      } catch (const tlc::TeamAborted&) {
        // Here, or already in the first barrier, whose last steps may still wait for rank 1.
        woke[static_cast<std::size_t>(i)] = 1;
        throw;
      }
    });
  });
  EXPECT_TRUE(region.failed());
  try {
    region.finish();
    ADD_FAILURE() << "finish did not rethrow";
  } catch (const tlc::TeamAborted& e) {
    ADD_FAILURE() << "the consequence came out, not the cause: " << e.what();
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()), "rank 1 gives up");
  }
  EXPECT_FALSE(region.failed()) << "finish forgets the error";
  EXPECT_NO_THROW(region.finish());
  EXPECT_TRUE(team.aborted());
  EXPECT_EQ(woke, (std::vector<int>{1, 0, 1}));
}

// A thread that fails before it is attached (here: it asks for an index another thread holds)
// has no Thread whose unwinding would abort the team; the Region aborts it, so the thread that
// did attach does not wait for the missing participant forever.
TEST(Region, FailureBeforeAttachingEndsTheOthersWaits) {
  tlc::Team team(MPI_COMM_SELF, test_options(2));
  tlc::Region region(team);
  std::vector<std::string> outcome(2);
  region_of(2, [&](int i) {
    // Both ask for index 0: one gets it and waits in a collective for index 1, which never
    // comes; the other is refused.
    region.enter(0, 2, [&](tlc::Thread& me) {
      try {
        me.barrier();
        outcome[static_cast<std::size_t>(i)] = "returned";
      } catch (const tlc::TeamAborted&) {
        outcome[static_cast<std::size_t>(i)] = "woke";
        throw;
      }
    });
  });
  int woke = 0;
  for (const std::string& o : outcome) woke += o == "woke";
  EXPECT_EQ(woke, 1);
  try {
    region.finish();
    ADD_FAILURE() << "finish did not rethrow";
  } catch (const tlc::TeamAborted& e) {
    ADD_FAILURE() << "the consequence came out, not the cause: " << e.what();
  } catch (const tlc::Error& e) {
    EXPECT_NE(std::string(e.what()).find("already held"), std::string::npos) << e.what();
  }
}

}  // namespace
