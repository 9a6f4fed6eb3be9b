// A one-way stream of small broadcasts between two processes, four ways: MPI_Bcast; one message
// sent with MPI_Isend and received with MPI_Irecv, each completed by a loop of MPI_Test (what
// tlc's binomial bcast between two processes runs, polled so that its watch can act); MPI_Send
// against MPI_Irecv and the test loop; MPI_Send against MPI_Recv. Shows what MPI's own part of a
// small tlc call costs against the blocking collective, so that what is left of tlc's time is
// its own work (docs/mpi.md, "How far the one-way calls can go"). No tlc code.
//
//   mpicxx.openmpi -O2 -o /tmp/one_way_messages bench/probes/one_way_messages.cpp
//   mpiexec.openmpi -n 2 /tmp/one_way_messages          # also: mpicxx.mpich / mpiexec.mpich
//
// Prints per size the median of 9 rounds of 20000 calls, the four ways taken in turn within
// each round, us per call (the larger of the two processes' times).
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <vector>

namespace {

int rank_ = 0;

void test_loop(MPI_Request& request) {
  int done = 0;
  while (!done) MPI_Test(&request, &done, MPI_STATUS_IGNORE);
}

void bcast(char* buf, int n) { MPI_Bcast(buf, n, MPI_BYTE, 0, MPI_COMM_WORLD); }

void isend_irecv(char* buf, int n) {
  MPI_Request request;
  if (rank_ == 0)
    MPI_Isend(buf, n, MPI_BYTE, 1, 7, MPI_COMM_WORLD, &request);
  else
    MPI_Irecv(buf, n, MPI_BYTE, 0, 7, MPI_COMM_WORLD, &request);
  test_loop(request);
}

void send_irecv(char* buf, int n) {
  if (rank_ == 0) {
    MPI_Send(buf, n, MPI_BYTE, 1, 7, MPI_COMM_WORLD);
    return;
  }
  MPI_Request request;
  MPI_Irecv(buf, n, MPI_BYTE, 0, 7, MPI_COMM_WORLD, &request);
  test_loop(request);
}

void send_recv(char* buf, int n) {
  if (rank_ == 0)
    MPI_Send(buf, n, MPI_BYTE, 1, 7, MPI_COMM_WORLD);
  else
    MPI_Recv(buf, n, MPI_BYTE, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
}

}  // namespace

int main(int argc, char** argv) {
  int provided = 0, size = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size != 2) {
    if (rank_ == 0) std::fprintf(stderr, "run on two processes\n");
    MPI_Finalize();
    return 1;
  }
  constexpr int ways = 4, rounds = 9, calls = 20000;
  void (*const way[ways])(char*, int) = {bcast, isend_irecv, send_irecv, send_recv};
  const char* const name[ways] = {"MPI_Bcast", "isend/irecv", "send/irecv", "send/recv"};
  std::vector<char> buf(4096);
  if (rank_ == 0) {
    std::printf("%6s", "bytes");
    for (const char* w : name) std::printf(" %12s", w);
    std::printf("\n");
  }
  for (int n : {8, 64, 512}) {
    std::vector<double> us[ways];
    for (int round = 0; round < rounds; ++round)
      for (int w = 0; w < ways; ++w) {
        MPI_Barrier(MPI_COMM_WORLD);
        const double start = MPI_Wtime();
        for (int i = 0; i < calls; ++i) way[w](buf.data(), n);
        const double mine = (MPI_Wtime() - start) / calls * 1e6;
        double most = 0;
        MPI_Allreduce(&mine, &most, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        us[w].push_back(most);
      }
    if (rank_ == 0) {
      std::printf("%6d", n);
      for (auto& u : us) {
        std::sort(u.begin(), u.end());
        std::printf(" %12.3f", u[u.size() / 2]);
      }
      std::printf("\n");
    }
  }
  MPI_Finalize();
}
