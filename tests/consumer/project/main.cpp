// Consumer of the installed tlc package: a two-thread team per process runs an allreduce over a
// few ints and checks it against the closed form. Rank 0 prints "consumer ok" only after every
// process agreed that all of its threads saw the right values. Built both by CMake (CMakeLists.txt)
// and by a plain Makefile with pkg-config (Makefile).
#include <tlc/tlc.hpp>

// The installed, generated tlc/version.hpp, used the way an application checks a version.
#if !defined(TLC_VERSION) || TLC_VERSION < TLC_VERSION_NUMBER(0, 1, 0)
#error "tlc/version.hpp: TLC_VERSION missing or older than 0.1.0"
#endif

#include <mpi.h>

#include <array>
#include <atomic>
#include <cstdio>
#include <exception>
#include <span>

int main(int argc, char** argv) {
  tlc::Environment env(argc, argv);
  int world_rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);

  int wrong = 0;
  // An error thrown inside the library and caught here by its type: with a shared libtlc this
  // needs tlc::Error's type information exported (catching it as std::exception would not tell).
  try {
    (void)tlc::Topology::synthetic("not a topology");
    std::fprintf(stderr, "consumer: an invalid synthetic topology was accepted\n");
    wrong = 1;
  } catch (const tlc::Error& e) {
    if (e.code() != tlc::Errc::topology) {
      std::fprintf(stderr, "consumer: expected a topology error, got %s\n",
                   tlc::to_string(e.code()));
      wrong = 1;
    }
  }

  try {
    tlc::TeamOptions opts;
    opts.threads = 2;
    opts.timeout_seconds = 120;  // a hang becomes an error instead of a ctest timeout
    tlc::Team team(MPI_COMM_WORLD, opts);
    if (team.threads() != 2 || team.size() != 2 * team.processes()) {
      std::fprintf(stderr, "consumer: unexpected team shape: %d threads here, %d in all\n",
                   team.threads(), team.size());
      wrong = 1;
    }

    std::atomic<int> wrong_values{0};
    team.run([&](tlc::Thread& me) {
      constexpr int n = 7;
      std::array<int, n> send{};
      std::array<int, n> recv{};
      for (int i = 0; i < n; ++i) send[i] = (me.rank() + 1) * (i + 1);
      me.allreduce(std::span<const int>(send), std::span<int>(recv));
      // sum over r = 0..S-1 of (r + 1) * (i + 1) = (i + 1) * S * (S + 1) / 2
      const int s = me.size();
      for (int i = 0; i < n; ++i) {
        const int expected = (i + 1) * s * (s + 1) / 2;
        if (recv[i] != expected) {
          std::fprintf(stderr, "consumer: rank %d element %d: got %d, expected %d\n", me.rank(), i,
                       recv[i], expected);
          wrong_values.fetch_add(1, std::memory_order_relaxed);
        }
      }
    });
    if (wrong_values.load() != 0) wrong = 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "consumer: process %d failed: %s\n", world_rank, e.what());
    std::fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }

  MPI_Allreduce(MPI_IN_PLACE, &wrong, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (wrong != 0) return 1;
  if (world_rank == 0) {
    std::printf("consumer ok\n");
    std::fflush(stdout);
  }
  return 0;
}
