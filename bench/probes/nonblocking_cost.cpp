// What an 8-byte collective costs between two processes in MPI's blocking form, in its
// non-blocking form completed by a loop of MPI_Test (what tlc must do so that a failure on
// another process can end the wait, docs/reliability.md), and as tlc's own point-to-point
// exchange (MPI_Isend / MPI_Irecv completed by MPI_Testall, what tlc's direct forms run). No tlc
// code: it shows what the model's mpi_start_us stands for (docs/model.md).
//
//   mpicxx.mpich -O2 -o /tmp/nonblocking_cost bench/probes/nonblocking_cost.cpp
//   mpiexec.mpich -n 2 /tmp/nonblocking_cost
#include <mpi.h>

#include <cstdio>

namespace {

constexpr int calls = 20000;

void poll(MPI_Request& r) {
  int done = 0;
  while (!done) MPI_Test(&r, &done, MPI_STATUS_IGNORE);
}

template <class Call>
void time_it(const char* name, MPI_Comm comm, int rank, Call call) {
  for (int i = 0; i < calls / 20; ++i) call();
  MPI_Barrier(comm);
  const double start = MPI_Wtime();
  for (int i = 0; i < calls; ++i) call();
  const double us = (MPI_Wtime() - start) / calls * 1e6;
  if (rank == 0) std::printf("%-34s %8.3f us\n", name, us);
}

}  // namespace

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);  // as tlc runs it
  MPI_Comm comm;
  MPI_Comm_dup(MPI_COMM_WORLD, &comm);
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  double x = 1, y = 0, all[64];
  MPI_Request r;
  for (int round = 0; round < 2; ++round) {
    if (rank == 0) std::printf("round %d (%d processes)\n", round + 1, size);
    time_it("MPI_Allreduce", comm, rank,
            [&] { MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, comm); });
    time_it("MPI_Iallreduce + MPI_Test", comm, rank, [&] {
      MPI_Iallreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, comm, &r);
      poll(r);
    });
    if (size == 2)
      time_it("exchange: MPI_Isend/Irecv + Testall", comm, rank, [&] {
        MPI_Request two[2];
        double theirs = 0;
        MPI_Irecv(&theirs, 1, MPI_DOUBLE, 1 - rank, 7, comm, &two[0]);
        MPI_Isend(&x, 1, MPI_DOUBLE, 1 - rank, 7, comm, &two[1]);
        int done = 0;
        while (!done) MPI_Testall(2, two, &done, MPI_STATUSES_IGNORE);
        y = x + theirs;
      });
    time_it("MPI_Reduce", comm, rank, [&] { MPI_Reduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, 0, comm); });
    time_it("MPI_Ireduce + MPI_Test", comm, rank, [&] {
      MPI_Ireduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, 0, comm, &r);
      poll(r);
    });
    time_it("MPI_Bcast", comm, rank, [&] { MPI_Bcast(&x, 1, MPI_DOUBLE, 0, comm); });
    time_it("MPI_Ibcast + MPI_Test", comm, rank, [&] {
      MPI_Ibcast(&x, 1, MPI_DOUBLE, 0, comm, &r);
      poll(r);
    });
    time_it("MPI_Barrier", comm, rank, [&] { MPI_Barrier(comm); });
    time_it("MPI_Ibarrier + MPI_Test", comm, rank, [&] {
      MPI_Ibarrier(comm, &r);
      poll(r);
    });
    if (size <= 64) {
      time_it("MPI_Allgather", comm, rank,
              [&] { MPI_Allgather(&x, 1, MPI_DOUBLE, all, 1, MPI_DOUBLE, comm); });
      time_it("MPI_Iallgather + MPI_Test", comm, rank, [&] {
        MPI_Iallgather(&x, 1, MPI_DOUBLE, all, 1, MPI_DOUBLE, comm, &r);
        poll(r);
      });
    }
  }
  MPI_Comm_free(&comm);
  MPI_Finalize();
  return 0;
}
