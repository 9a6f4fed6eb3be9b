// A one-way stream of broadcasts between two processes around MPI's eager limit: MPI_Bcast
// against the same bytes as one message (MPI_Isend / MPI_Irecv completed by a loop of
// MPI_Testall, what tlc's binomial bcast between two processes runs) and as segments of 8 KiB
// (MPICH's eager limit), 4 KiB and 4032 bytes (Open MPI's: 4 KiB with the header). Shows whether
// what tlc adds to a bcast of 16-32 KiB is the rendezvous receive or tlc's own work
// (docs/reliability.md, "At 09b2186"), and what eager segments would give. No tlc code.
//
//   mpicxx.mpich -O2 -o /tmp/bcast_segments bench/probes/bcast_segments.cpp
//   mpiexec.mpich -n 2 /tmp/bcast_segments          # also: mpicxx.openmpi / mpiexec.openmpi
//
// Prints per size the median of 7 timed loops of 2000 calls, us per call.
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <vector>

namespace {

int rank_ = 0;

void test_all(std::vector<MPI_Request>& requests) {
  int done = 0;
  while (!done)
    MPI_Testall(static_cast<int>(requests.size()), requests.data(), &done, MPI_STATUSES_IGNORE);
}

// Process 0 sends n bytes of buf to process 1 in messages of at most `segment` bytes.
void segmented(char* buf, std::size_t n, std::size_t segment) {
  const std::size_t count = (n + segment - 1) / segment;
  std::vector<MPI_Request> requests(count);
  for (std::size_t i = 0; i < count; ++i) {
    const int bytes = static_cast<int>(std::min(segment, n - i * segment));
    if (rank_ == 0)
      MPI_Isend(buf + i * segment, bytes, MPI_BYTE, 1, 7, MPI_COMM_WORLD, &requests[i]);
    else
      MPI_Irecv(buf + i * segment, bytes, MPI_BYTE, 0, 7, MPI_COMM_WORLD, &requests[i]);
  }
  test_all(requests);
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
  std::vector<char> buf(1 << 20);
  constexpr int loops = 7, calls = 2000;
  // 0: MPI_Bcast; then the segment size (0: one message).
  const std::size_t forms[] = {~std::size_t{0}, 0, 8192, 4096, 4032};
  if (rank_ == 0)
    std::printf("%8s %10s %10s %10s %10s %10s\n", "bytes", "MPI_Bcast", "one_msg", "seg_8K",
                "seg_4K", "seg_4032");
  for (std::size_t n : {4096ul, 6144ul, 8192ul, 12288ul, 16384ul, 24576ul, 32768ul, 65536ul}) {
    double median[5] = {};
    for (int f = 0; f < 5; ++f) {
      std::vector<double> us;
      for (int loop = 0; loop < loops; ++loop) {
        MPI_Barrier(MPI_COMM_WORLD);
        const double start = MPI_Wtime();
        for (int i = 0; i < calls; ++i) {
          if (f == 0)
            MPI_Bcast(buf.data(), static_cast<int>(n), MPI_BYTE, 0, MPI_COMM_WORLD);
          else
            segmented(buf.data(), n, forms[f] == 0 ? n : forms[f]);
        }
        double mine = (MPI_Wtime() - start) / calls * 1e6, most = 0;
        MPI_Allreduce(&mine, &most, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        us.push_back(most);
      }
      std::sort(us.begin(), us.end());
      median[f] = us[us.size() / 2];
    }
    if (rank_ == 0)
      std::printf("%8zu %10.2f %10.2f %10.2f %10.2f %10.2f\n", n, median[0], median[1], median[2],
                  median[3], median[4]);
  }
  MPI_Finalize();
}
