// What scan, exscan, gather, scatter and reduce cost between processes in MPI's blocking form,
// in the non-blocking form completed by MPI_Wait, and in the non-blocking form completed by a loop
// of MPI_Test (what tlc does so that a failure elsewhere can end the wait, docs/reliability.md),
// each in place and not, plus the same collective written on MPI_Isend / MPI_Irecv completed by a
// loop of MPI_Testall (what tlc's direct forms run). Separates what a non-blocking collective
// costs under a given MPI: its non-blocking algorithm (blocking vs nonblocking+Wait), the polling
// (Wait vs Test), the in-place form (in place vs not). No tlc code.
//
//   mpicxx.openmpi -O2 -o /tmp/rooted_scan_cost bench/probes/rooted_scan_cost.cpp
//   mpiexec.openmpi -n 2 /tmp/rooted_scan_cost          # also: mpicxx.mpich / mpiexec.mpich
//
// Prints, per collective and size, microseconds per call (the median of 5 repetitions of a timed
// loop) and each form's ratio to the blocking call that is not in place.
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

namespace {

int rank_ = 0, size_ = 1;
MPI_Comm comm_ = MPI_COMM_NULL;

void poll(MPI_Request& r) {
  int done = 0;
  while (!done) MPI_Test(&r, &done, MPI_STATUS_IGNORE);
}
void poll_all(std::vector<MPI_Request>& r) {
  int done = 0;
  while (!done) MPI_Testall(static_cast<int>(r.size()), r.data(), &done, MPI_STATUSES_IGNORE);
}

// Microseconds per call: the median of 5 loops, each started after a barrier; every process
// takes the largest time of the loop (the collective ends when its last process leaves).
double time_it(std::size_t bytes, const std::function<void()>& call) {
  const int iters = bytes <= 4096 ? 2000 : bytes <= 65536 ? 400 : 40;
  for (int i = 0; i < iters / 10 + 1; ++i) call();
  std::vector<double> t;
  for (int rep = 0; rep < 5; ++rep) {
    MPI_Barrier(comm_);
    const double start = MPI_Wtime();
    for (int i = 0; i < iters; ++i) call();
    double mine = (MPI_Wtime() - start) / iters * 1e6, most = 0;
    MPI_Allreduce(&mine, &most, 1, MPI_DOUBLE, MPI_MAX, comm_);
    t.push_back(most);
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

struct Buffers {
  std::vector<double> send, recv;
};

// The point-to-point versions: linear gather / scatter (one message per non-root process),
// recursive-doubling scan / exscan ([Thakur]), binomial reduce towards root 0.
void p2p_gather(Buffers& b, std::size_t count) {
  if (rank_ != 0) {
    MPI_Request r;
    MPI_Isend(b.send.data(), static_cast<int>(count), MPI_DOUBLE, 0, 1, comm_, &r);
    poll(r);
    return;
  }
  std::vector<MPI_Request> r;
  for (int p = 1; p < size_; ++p) {
    r.emplace_back();
    MPI_Irecv(b.recv.data() + p * count, static_cast<int>(count), MPI_DOUBLE, p, 1, comm_,
              &r.back());
  }
  std::memcpy(b.recv.data(), b.send.data(), count * sizeof(double));
  poll_all(r);
}
void p2p_scatter(Buffers& b, std::size_t count) {
  if (rank_ != 0) {
    MPI_Request r;
    MPI_Irecv(b.recv.data(), static_cast<int>(count), MPI_DOUBLE, 0, 1, comm_, &r);
    poll(r);
    return;
  }
  std::vector<MPI_Request> r;
  for (int p = 1; p < size_; ++p) {
    r.emplace_back();
    MPI_Isend(b.send.data() + p * count, static_cast<int>(count), MPI_DOUBLE, p, 1, comm_,
              &r.back());
  }
  std::memcpy(b.recv.data(), b.send.data(), count * sizeof(double));
  poll_all(r);
}
void p2p_scan(Buffers& b, std::size_t count, bool exclusive) {
  std::vector<double> partial(b.send.begin(), b.send.begin() + count), incoming(count);
  bool have = !exclusive;
  if (!exclusive) std::memcpy(b.recv.data(), b.send.data(), count * sizeof(double));
  for (int mask = 1; mask < size_; mask <<= 1) {
    const int partner = rank_ ^ mask;
    if (partner >= size_) continue;
    std::vector<MPI_Request> r(2);
    MPI_Irecv(incoming.data(), static_cast<int>(count), MPI_DOUBLE, partner, 2, comm_, &r[0]);
    MPI_Isend(partial.data(), static_cast<int>(count), MPI_DOUBLE, partner, 2, comm_, &r[1]);
    poll_all(r);
    for (std::size_t i = 0; i < count; ++i) partial[i] += incoming[i];
    if (partner < rank_) {
      for (std::size_t i = 0; i < count; ++i)
        b.recv[i] = have ? incoming[i] + b.recv[i] : incoming[i];
      have = true;
    }
  }
}
void p2p_reduce(Buffers& b, std::size_t count) {
  std::vector<double> acc(b.send.begin(), b.send.begin() + count), incoming(count);
  for (int mask = 1; mask < size_; mask <<= 1) {
    MPI_Request r;
    if (rank_ & mask) {
      MPI_Isend(acc.data(), static_cast<int>(count), MPI_DOUBLE, rank_ - mask, 3, comm_, &r);
      poll(r);
      return;
    }
    if (rank_ + mask < size_) {
      MPI_Irecv(incoming.data(), static_cast<int>(count), MPI_DOUBLE, rank_ + mask, 3, comm_, &r);
      poll(r);
      for (std::size_t i = 0; i < count; ++i) acc[i] += incoming[i];
    }
  }
  std::memcpy(b.recv.data(), acc.data(), count * sizeof(double));
}

}  // namespace

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);  // as tlc runs it
  MPI_Comm_dup(MPI_COMM_WORLD, &comm_);
  MPI_Comm_rank(comm_, &rank_);
  MPI_Comm_size(comm_, &size_);
  if (rank_ == 0)
    std::printf("%-8s %8s | %9s | %8s %7s %7s | %7s %7s | %7s\n", "coll", "bytes", "block us",
                "block/ip", "wait", "test", "wait/ip", "test/ip", "p2p");
  for (const std::string coll : {"scan", "exscan", "gather", "scatter", "reduce"}) {
    for (const std::size_t bytes : {std::size_t{8}, std::size_t{4096}, std::size_t{1} << 20}) {
      const std::size_t count = bytes / sizeof(double);
      const bool rooted = coll == "gather" || coll == "scatter";
      Buffers b;
      b.send.assign(rooted && coll == "scatter" ? count * size_ : count, 1.0 + rank_);
      b.recv.assign(rooted && coll == "gather" ? count * size_ : count, 0.0);
      const int n = static_cast<int>(count);
      // form 0 blocking, 1 Ixxx + Wait, 2 Ixxx + Test loop; in place or not.
      auto run = [&](int form, bool in_place) {
        MPI_Request r = MPI_REQUEST_NULL;
        MPI_Request* req = form == 0 ? nullptr : &r;
        double* s = b.send.data();
        double* v = b.recv.data();
        const void* sip = in_place ? MPI_IN_PLACE : s;
        if (coll == "scan") {
          req ? MPI_Iscan(sip, v, n, MPI_DOUBLE, MPI_SUM, comm_, req)
              : MPI_Scan(sip, v, n, MPI_DOUBLE, MPI_SUM, comm_);
        } else if (coll == "exscan") {
          req ? MPI_Iexscan(sip, v, n, MPI_DOUBLE, MPI_SUM, comm_, req)
              : MPI_Exscan(sip, v, n, MPI_DOUBLE, MPI_SUM, comm_);
        } else if (coll == "reduce") {
          const void* rs = in_place && rank_ == 0 ? MPI_IN_PLACE : s;
          req ? MPI_Ireduce(rs, v, n, MPI_DOUBLE, MPI_SUM, 0, comm_, req)
              : MPI_Reduce(rs, v, n, MPI_DOUBLE, MPI_SUM, 0, comm_);
        } else if (coll == "gather") {
          const void* gs = in_place && rank_ == 0 ? MPI_IN_PLACE : s;
          req ? MPI_Igather(gs, n, MPI_DOUBLE, v, n, MPI_DOUBLE, 0, comm_, req)
              : MPI_Gather(gs, n, MPI_DOUBLE, v, n, MPI_DOUBLE, 0, comm_);
        } else {
          void* rv = in_place && rank_ == 0 ? MPI_IN_PLACE : v;
          req ? MPI_Iscatter(s, n, MPI_DOUBLE, rv, n, MPI_DOUBLE, 0, comm_, req)
              : MPI_Scatter(s, n, MPI_DOUBLE, rv, n, MPI_DOUBLE, 0, comm_);
        }
        if (form == 1) MPI_Wait(&r, MPI_STATUS_IGNORE);
        if (form == 2) poll(r);
      };
      const double block = time_it(bytes, [&] { run(0, false); });
      const double block_ip = time_it(bytes, [&] { run(0, true); });
      const double wait = time_it(bytes, [&] { run(1, false); });
      const double test = time_it(bytes, [&] { run(2, false); });
      const double wait_ip = time_it(bytes, [&] { run(1, true); });
      const double test_ip = time_it(bytes, [&] { run(2, true); });
      const double p2p = time_it(bytes, [&] {
        if (coll == "gather")
          p2p_gather(b, count);
        else if (coll == "scatter")
          p2p_scatter(b, count);
        else if (coll == "reduce")
          p2p_reduce(b, count);
        else
          p2p_scan(b, count, coll == "exscan");
      });
      if (rank_ == 0)
        std::printf("%-8s %8zu | %9.2f | %8.2f %7.2f %7.2f | %7.2f %7.2f | %7.2f\n", coll.c_str(),
                    bytes, block, block_ip / block, wait / block, test / block, wait_ip / block,
                    test_ip / block, p2p / block);
    }
  }
  MPI_Comm_free(&comm_);
  MPI_Finalize();
}
