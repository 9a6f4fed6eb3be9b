// How the receiving side of a one-way message costs between two processes, in a stream of
// back-to-back messages (process 0 sends each with MPI_Isend completed by MPI_Test, as tlc's
// bcast tree does; the receiver falls behind, so the messages arrive before their receive is
// posted) and in a ping-pong (each message arrives while its receive waits). Receivers: the
// blocking MPI_Recv (what MPI's own bcast runs), MPI_Irecv completed by MPI_Testall or MPI_Test
// (what tlc runs, so that a failure elsewhere can end the wait), MPI_Iprobe then MPI_Recv,
// MPI_Improbe then MPI_Mrecv, a hybrid: one MPI_Improbe, then MPI_Imrecv of the message if it
// was there, else MPI_Irecv, completed by MPI_Test, and "peek": the same with the blocking
// MPI_Mrecv for a message that was there (what tlc's p2p::receive does under MPICH). No tlc
// code: it shows where tlc's small bcast at 2 x 1 lost to MPI_Bcast in tlc-bench's back-to-back
// loop (docs/reliability.md, "Small calls with the watch on").
//
//   mpicxx.mpich -O2 -o /tmp/one_way_receive bench/probes/one_way_receive.cpp
//   mpiexec.mpich -n 2 /tmp/one_way_receive
#include <mpi.h>

#include <cstdio>
#include <vector>

namespace {

constexpr long calls = 400000;
constexpr int tag = 7;

void test_loop(MPI_Request& r) {
  int done = 0;
  while (!done) MPI_Test(&r, &done, MPI_STATUS_IGNORE);
}

void send(char* buf, int n, int to) {
  MPI_Request r;
  MPI_Isend(buf, n, MPI_BYTE, to, tag, MPI_COMM_WORLD, &r);
  test_loop(r);
}

void receive(int how, char* buf, int n, int from) {
  MPI_Request r;
  int found = 0;
  switch (how) {
    case 0:
      MPI_Recv(buf, n, MPI_BYTE, from, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      break;
    case 1:
      MPI_Irecv(buf, n, MPI_BYTE, from, tag, MPI_COMM_WORLD, &r);
      while (!found) MPI_Testall(1, &r, &found, MPI_STATUSES_IGNORE);
      break;
    case 2:
      MPI_Irecv(buf, n, MPI_BYTE, from, tag, MPI_COMM_WORLD, &r);
      test_loop(r);
      break;
    case 3:
      while (!found) MPI_Iprobe(from, tag, MPI_COMM_WORLD, &found, MPI_STATUS_IGNORE);
      MPI_Recv(buf, n, MPI_BYTE, from, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      break;
    case 4: {
      MPI_Message message;
      while (!found) MPI_Improbe(from, tag, MPI_COMM_WORLD, &found, &message, MPI_STATUS_IGNORE);
      MPI_Mrecv(buf, n, MPI_BYTE, &message, MPI_STATUS_IGNORE);
    } break;
    case 6: {
      MPI_Message message;
      MPI_Improbe(from, tag, MPI_COMM_WORLD, &found, &message, MPI_STATUS_IGNORE);
      if (found) {
        MPI_Mrecv(buf, n, MPI_BYTE, &message, MPI_STATUS_IGNORE);
      } else {
        MPI_Irecv(buf, n, MPI_BYTE, from, tag, MPI_COMM_WORLD, &r);
        test_loop(r);
      }
    } break;
    default: {
      MPI_Message message;
      MPI_Improbe(from, tag, MPI_COMM_WORLD, &found, &message, MPI_STATUS_IGNORE);
      if (found)
        MPI_Imrecv(buf, n, MPI_BYTE, &message, &r);
      else
        MPI_Irecv(buf, n, MPI_BYTE, from, tag, MPI_COMM_WORLD, &r);
      test_loop(r);
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  int provided = 0, rank = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const char* names[] = {"Recv",          "Irecv+Testall", "Irecv+Test", "Iprobe+Recv",
                         "Improbe+Mrecv", "hybrid",        "peek"};
  std::vector<char> buf(65536);
  for (const bool stream : {true, false}) {
    if (rank == 0)
      std::printf("%s, us per message:\n", stream ? "stream" : "ping-pong (half a round trip)");
    for (const int n : {8, 512, 2048, 4096, 8192}) {
      double t[7];
      for (int how = 0; how < 7; ++how) {
        MPI_Barrier(MPI_COMM_WORLD);
        const double start = MPI_Wtime();
        for (long i = 0; i < (stream ? calls : calls / 4); ++i) {
          if (stream) {
            if (rank == 0)
              send(buf.data(), n, 1);
            else
              receive(how, buf.data(), n, 0);
          } else if (rank == 0) {
            send(buf.data(), n, 1);
            receive(how, buf.data(), n, 1);
          } else {
            receive(how, buf.data(), n, 0);
            send(buf.data(), n, 0);
          }
        }
        const double mine = MPI_Wtime() - start;
        double slowest = 0;
        MPI_Reduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
        t[how] = slowest / static_cast<double>(stream ? calls : calls / 2) * 1e6;
      }
      if (rank == 0) {
        std::printf("%6d B:", n);
        for (int how = 0; how < 7; ++how) std::printf("  %s %.3f", names[how], t[how]);
        std::printf("\n");
      }
    }
  }
  MPI_Finalize();
}
