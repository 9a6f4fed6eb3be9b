// tbb_attach: a oneTBB program that uses tlc for its collectives.
//
// Why the team's threads, and not TBB tasks, are the participants:
// a tlc collective returns only when every participant of the team has arrived, so the
// participants must run concurrently. TBB never promises that: tasks of a parallel_for,
// task_group or task_arena::enqueue may run one after another on the same worker (the worker
// pool is capped by the hardware concurrency and shared by all arenas, and global_control can
// only lower that cap). Attaching TBB tasks with team.attach(i) can therefore wait forever for a
// participant that is queued behind the waiting one. OpenMP parallel regions do guarantee
// concurrency, which is why attach() is the tool for OpenMP (see openmp_master_only_migrated).
//
// The correct split for TBB: team.run provides the participants (tlc's own threads, guaranteed
// concurrent); inside each participant TBB parallelises the local compute in a task_arena that
// belongs to that participant. arena.execute() makes the calling team thread itself work in the
// arena, so the local compute finishes even if no TBB worker ever joins, and the collective is
// called outside TBB, by the team thread.
//
// Binding: a new thread inherits its creator's CPU binding, and TBB starts workers from threads
// that ask for them. Were the first TBB user a pinned team thread, workers could end up confined
// to that thread's core, so the program warms TBB up from the main thread before the team (and
// its pinning) exists. With TLC_PIN=0 (as in the tests) this does not matter.

#include <tlc/tlc.hpp>

#include <mpi.h>
#include <oneapi/tbb/blocked_range.h>
#include <oneapi/tbb/info.h>
#include <oneapi/tbb/parallel_for.h>
#include <oneapi/tbb/parallel_reduce.h>
#include <oneapi/tbb/task_arena.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <functional>
#include <span>
#include <stdexcept>
#include <string>

namespace {

constexpr std::int64_t kChunk = 1 << 16;  // elements per participant
constexpr int kBins = 16;                 // kChunk is a multiple of kBins

// Participant `rank` owns the global index range [rank * kChunk, (rank + 1) * kChunk) and, with
// TBB, computes the sum of its indices and a histogram of index % kBins.
struct Partial {
  std::int64_t sum = 0;
  std::array<std::int64_t, kBins> bins{};
};

Partial compute(tbb::task_arena& arena, int rank) {
  const std::int64_t begin = static_cast<std::int64_t>(rank) * kChunk;
  const std::int64_t end = begin + kChunk;
  Partial p;
  arena.execute([&] {
    p.sum = tbb::parallel_reduce(
        tbb::blocked_range<std::int64_t>(begin, end), std::int64_t{0},
        [](const tbb::blocked_range<std::int64_t>& r, std::int64_t s) {
          for (std::int64_t i = r.begin(); i != r.end(); ++i) s += i;
          return s;
        },
        std::plus<>{});
    // Each bin is counted by one task: no shared counters.
    tbb::parallel_for(0, kBins, [&](int bin) {
      std::int64_t n = 0;
      for (std::int64_t i = begin; i != end; ++i) n += (i % kBins == bin) ? 1 : 0;
      p.bins[static_cast<std::size_t>(bin)] = n;
    });
  });
  return p;
}

}  // namespace

int main(int argc, char** argv) {
  tlc::Environment env(argc, argv);
  int world_rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
  try {
    // Warm TBB up from the main thread (see "Binding" above).
    tbb::parallel_for(0, 1024, [](int) {});

    tlc::TeamOptions opts;
    opts.threads = 2;
    tlc::Team team(MPI_COMM_WORLD, opts);

    // Share the machine's TBB concurrency between the participants of this process.
    const int per_thread = std::max(1, tbb::info::default_concurrency() / team.threads());
    std::atomic<int> wrong{0};

    team.run([&](tlc::Thread& me) {
      tbb::task_arena arena(per_thread);  // this participant's own arena
      Partial p = compute(arena, me.rank());

      // The collectives: called by the team thread, outside TBB.
      me.allreduce(std::span<std::int64_t>(&p.sum, 1));
      me.allreduce(std::span<std::int64_t>(p.bins));

      const std::int64_t total =
          static_cast<std::int64_t>(me.size()) * kChunk;  // indices 0..total-1
      bool ok = p.sum == total * (total - 1) / 2;
      for (int b = 0; b < kBins; ++b)
        ok = ok && p.bins[static_cast<std::size_t>(b)] == total / kBins;
      if (!ok) {
        std::fprintf(stderr, "rank %d: sum %lld, expected %lld\n", me.rank(),
                     static_cast<long long>(p.sum),
                     static_cast<long long>(total * (total - 1) / 2));
        wrong.fetch_add(1);
      }
      if (me.rank() == 0 && ok) {
        std::printf("tbb_attach: %d participants, TBB arenas of %d, sum of 0..%lld = %lld ok\n",
                    me.size(), per_thread, static_cast<long long>(total - 1),
                    static_cast<long long>(p.sum));
      }
    });

    int any_wrong = wrong.load();
    MPI_Allreduce(MPI_IN_PLACE, &any_wrong, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (any_wrong != 0) return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tbb_attach failed on process %d: %s\n", world_rank, e.what());
    std::fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  return 0;
}
