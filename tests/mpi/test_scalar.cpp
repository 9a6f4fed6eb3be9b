// The scalar forms of the reductions (one value in, one out) and tlc::current_thread(), checked
// against sequential references on uneven teams (threads per process 1, 2, 3, ...).
#include <optional>
#include <thread>

#include "mpi/test_common.hpp"

namespace {

using namespace tlc_test;

// Non-commutative and associative: composition of the affine maps x -> m x + c, lower rank first.
struct Map {
  double m, c;
  friend bool operator==(const Map&, const Map&) = default;
};
struct Compose {
  Map operator()(const Map& a, const Map& b) const { return {a.m * b.m, a.c * b.m + b.c}; }
};
Map map_of(int rank) { return {1.0 + rank % 3, static_cast<double>(rank) - 2.5}; }

// What a library routine deep in an application does: no context argument, the team reached
// through the calling thread.
double global_dot(double local) { return tlc::current_thread()->allreduce(local); }

TEST(Scalar, EveryReductionOfOneValue) {
  const int threads = world_rank() % 3 + 1;
  tlc::Team team(MPI_COMM_WORLD, test_options(threads));
  std::vector<Outcome> outcomes(static_cast<std::size_t>(threads));
  team.run([&](tlc::Thread& me) {
    Outcome& out = outcomes[static_cast<std::size_t>(me.local_index())];
    auto expect = [&](bool ok, const std::string& what) {
      if (!ok && out.mismatches++ == 0) out.first_mismatch = what;
    };
    const int r = me.rank(), N = me.size();
    const double sum_below = r * (r - 1) / 2.0;  // ranks 0 .. r-1
    expect(me.allreduce(static_cast<double>(r)) == N * (N - 1) / 2.0, "allreduce sum");
    expect(me.allreduce(r, tlc::max{}) == N - 1, "allreduce max");
    expect(
        me.allreduce(std::int64_t{1} << r % 40, std::bit_or<>{}) ==
            [&] {
              std::int64_t all = 0;
              for (int q = 0; q < N; ++q) all |= std::int64_t{1} << q % 40;
              return all;
            }(),
        "allreduce bit_or");
    for (int root : {0, N - 1}) {
      const double got = me.reduce(static_cast<double>(r + 1), root);
      expect(got == (r == root ? N * (N + 1) / 2.0 : r + 1.0),
             "reduce root " + std::to_string(root));
    }
    expect(me.scan(static_cast<double>(r)) == sum_below + r, "scan");
    expect(me.exscan(static_cast<double>(r)) == (r == 0 ? 0.0 : sum_below), "exscan");
    // Rank order kept for a non-commutative user op.
    Map all = map_of(0), below = map_of(0);
    for (int q = 1; q < N; ++q) all = Compose{}(all, map_of(q));
    for (int q = 1; q <= r; ++q) below = Compose{}(below, map_of(q));
    expect(me.allreduce(map_of(r), Compose{}) == all, "allreduce of a non-commutative op");
    expect(me.scan(map_of(r), Compose{}) == below, "scan of a non-commutative op");
    // Deep in the application.
    expect(tlc::current_thread() == &me, "current_thread inside run");
    expect(&tlc::this_thread() == &me, "this_thread inside run");
    expect(global_dot(1.0) == N, "allreduce through current_thread");
  });
  expect_clean(outcomes, "scalar forms");
  EXPECT_EQ(tlc::current_thread(), nullptr) << "the main thread runs as no participant";
}

// Outside any team, the checked accessor throws (where dereferencing current_thread() would
// crash), with the code and a message that says where it may be called.
TEST(Scalar, ThisThreadOutsideATeamThrows) {
  try {
    (void)tlc::this_thread();
    ADD_FAILURE() << "tlc::this_thread() returned on a thread that is no participant";
  } catch (const tlc::Error& e) {
    EXPECT_EQ(e.code(), tlc::Errc::invalid_argument);
    EXPECT_NE(std::string(e.what()).find("no participant"), std::string::npos) << e.what();
  }
}

TEST(Scalar, CurrentThreadFollowsAttachAndEndsWithIt) {
  tlc::Team team(MPI_COMM_WORLD, test_options(2));
  std::vector<int> seen(2, -1);
  std::vector<std::thread> threads;
  for (int i = 0; i < 2; ++i)
    threads.emplace_back([&, i] {
      {
        tlc::Thread me = team.attach(i);
        tlc::Thread* current = tlc::current_thread();
        seen[static_cast<std::size_t>(i)] = current == &me ? current->local_index() : -2;
        me.barrier();
      }
      if (tlc::current_thread() != nullptr) seen[static_cast<std::size_t>(i)] = -3;
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(seen, (std::vector<int>{0, 1}));
  EXPECT_EQ(tlc::current_thread(), nullptr);
}

// The current participant is the Thread wherever it has been moved (into an optional, say), and
// none once that Thread is destroyed, also when it was destroyed on another OS thread.
TEST(Scalar, CurrentThreadFollowsMovesAndEndsWithTheThread) {
  tlc::Team team(MPI_COMM_WORLD, test_options(1));
  {
    std::optional<tlc::Thread> me;
    me.emplace(team.attach(0));
    EXPECT_EQ(tlc::current_thread(), &*me);
    tlc::Thread moved = std::move(*me);
    EXPECT_EQ(tlc::current_thread(), &moved);
  }
  EXPECT_EQ(tlc::current_thread(), nullptr);
  tlc::Thread first = team.attach(0);
  std::thread other([me = std::move(first)]() mutable { me.barrier(); });
  other.join();
  EXPECT_EQ(tlc::current_thread(), nullptr);
}

}  // namespace
