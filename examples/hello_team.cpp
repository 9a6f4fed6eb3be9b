// hello_team: the smallest tlc program. No std::thread anywhere: tlc::Team starts (and pins,
// unless TLC_PIN=0) its own threads, and team.run calls the lambda once on each of them. Every
// thread is a participant with a global rank, like an MPI rank.
//
//   mpiexec -n 2 ./hello_team             # one process per node (the intended shape)
//   TLC_NODE=process mpiexec -n 2 ./hello_team   # several processes on one machine
//   TLC_THREADS=3 ...                     # threads per process (default: one per core)
#include <tlc/tlc.hpp>

#include <mpi.h>

#include <cstdio>
#include <exception>
#include <span>
#include <stdexcept>
#include <string>

int main(int argc, char** argv) {
  tlc::Environment env(argc, argv);  // MPI_Init_thread(MPI_THREAD_MULTIPLE) ... MPI_Finalize
  try {
    tlc::Team team(MPI_COMM_WORLD);  // collective over the communicator, one call per process

    team.run([](tlc::Thread& me) {
      me.barrier();  // everyone is up
      // One printf per line: lines from different threads do not tear.
      std::printf("hello from rank %d of %d (local index %d of %d, process %d of %d)\n", me.rank(),
                  me.size(), me.local_index(), me.threads(), me.process(), me.processes());

      // Every thread contributes its rank: the sum is 0 + 1 + ... + (size - 1).
      int sum = me.rank();
      me.allreduce(std::span<int>(&sum, 1));  // in place, std::plus<> by default
      const int expected = me.size() * (me.size() - 1) / 2;
      if (sum != expected) {
        // Thrown on a team thread: the team aborts and team.run rethrows it below.
        throw std::runtime_error("rank " + std::to_string(me.rank()) + ": allreduce gave " +
                                 std::to_string(sum) + ", expected " + std::to_string(expected));
      }
      if (me.rank() == 0) std::printf("allreduce of ranks: %d (expected %d) ok\n", sum, expected);
    });
  } catch (const std::exception& e) {
    std::fprintf(stderr, "hello_team failed: %s\n", e.what());
    std::fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, 1);  // don't leave the other processes waiting
  }
  return 0;
}
