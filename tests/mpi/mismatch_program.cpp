// Processes whose calls disagree, with no TLC_CHECK and no TLC_TIMEOUT (issue: mismatched calls
// across processes). tests/mpi/run_fault_test.cmake runs each scenario under mpiexec with a hard
// time limit. Usage: tlc_mismatch_program SCENARIO THREADS (threads per process). The last
// process is the odd one:
//   allreduce-vs-barrier   the others allreduce one double, it calls barrier
//   allreduce-vs-bcast     the others allreduce one double, it bcasts one double from rank 0
//   allreduce-counts       the others allreduce 1 Mi doubles, it 1 Mi + 1024
//   allreduce-counts-large the others allreduce 2 Mi doubles (16 MiB), it 2 Mi + 1024
//   compared-by-some       the others allreduce 2 Mi doubles, it one: by default (TLC_CHECK
//                          unset) calls of 16 MiB blocks are compared across processes (1 MiB
//                          where no node is oversubscribed), so the others wait in that
//                          comparison while it waits in its allreduce
//   icompared-by-some      the same with iallreduce, then wait
//   reduce-roots           the others reduce to rank 0, it to its own last rank
//   extra-call             it makes a bcast the others do not make, then the allreduce all make
//   extra-call-then-leave  the others make an allreduce it never makes: it destroys its team
//                          and waits in MPI_Barrier of MPI_COMM_WORLD
//   nonblocking            it starts an ibcast the others do not start, then the iallreduce
//                          all start; each waits for its requests
// Small calls that disagree in one argument (wrong data without an error before tags carried the
// call, 4bbc35f; a thread with an output that returns normally has not found the mismatch):
//   allreduce-count-small  the others allreduce 1 double, it 2
//   allgather-counts       the others allgather 1 double per rank, it 2
//   allreduce-ops          the others allreduce 1 double with sum, it with max
//   allreduce-types        the others allreduce 1 double, it 1 int64
//   reduce-roots-small     the others reduce 1 double to rank 0, it to its own last rank
//   alltoallv-fewer        its ranks send 1 double to every other process's rank, which
//                          expects 2 (the others agree among themselves)
//   gatherv-fewer          to root 0: its ranks send 1 double, the root expects 2
//   scatterv-fewer         from root 0: the root sends 1 double to each of its ranks, which
//                          expect 2
//   iallreduce-ops         allreduce-ops nonblocking (iallreduce, then wait): MPI's
//                          nonblocking collective carries it, which cannot tell (not found
//                          without TLC_CHECK; docs/reliability.md)
//   late                   no mismatch: it sleeps 10 s before the allreduce all make, which
//                          must complete with the right sum (the job then succeeds)
// v-variants whose counts disagree between processes (every process makes the same call, so only
// the counts can tell; each thread's counts agree with those of the threads of its process):
//   alltoallv-zero         every process: each rank sends 64 elements to the ranks of its own
//                          process and none to the others', but expects 64 from every rank
//   ialltoallv-zero        the same, nonblocking (ialltoallv, then wait)
//   alltoallv-init-zero    the same, persistent (alltoallv_init, one start, then wait)
//   alltoallv-big          every process: each rank sends 256 Ki elements to the ranks of the
//                          other processes but expects none from them
//   alltoallv-odd          the same between it and the others only (the others agree)
//   allgatherv-zero        its ranks contribute no element; the others expect 64 from each
//   allgatherv-big         its ranks contribute 256 Ki elements; the others expect none
//   allgatherv-cross       that, and the others' ranks contribute 256 Ki elements, which it
//                          expects none of
//   gatherv-zero           to root 0: its ranks send no element; the root expects 64 from each
//   gatherv-big            to root 0: its ranks send 256 Ki elements; the root expects none
//   alltoallv-late         no mismatch: it sleeps 10 s before an alltoallv of uneven counts,
//                          which must complete with the right data (the job then succeeds)
// A mismatch must end with an error on every thread of every process (each prints "process P
// thread T: <what>"), within seconds of TLC_SUSPECT_MS, and the job must end.
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <tlc/tlc.hpp>

namespace {

// The v-variant scenarios. Rank r sends (r + 1) * 8 + s elements to rank s when their counts
// agree; `across` is what the ranks of different processes send each other (as the sender and
// the receiver see it).
std::size_t agreed_count(int from, int to) { return static_cast<std::size_t>((from + 1) * 8 + to); }
std::vector<std::size_t> displacements(const std::vector<std::size_t>& counts) {
  std::vector<std::size_t> displs(counts.size());
  for (std::size_t r = 1; r < counts.size(); ++r) displs[r] = displs[r - 1] + counts[r - 1];
  return displs;
}
std::size_t total(const std::vector<std::size_t>& counts) {
  std::size_t n = 0;
  for (const std::size_t c : counts) n += c;
  return n;
}

// alltoallv between ranks of different processes: `sends` elements each way as the sender sees
// it, `expects` as the receiver does; with odd_only, only between the last process and the others
// (the others agree among themselves). Within a process the counts agree.
// form: 'b' blocking, 'n' nonblocking (ialltoallv), 'p' persistent (alltoallv_init, one start).
void alltoallv(tlc::Thread& me, std::size_t sends, std::size_t expects, bool odd_only, bool odd,
               bool check, char form = 'b') {
  const int N = me.size(), first = me.rank() - me.local_index();
  const int first_odd = N - me.threads();  // every shape here has equal threads per process
  const auto agreed = [&](int r) {
    return (r >= first && r < first + me.threads()) || (odd_only && !odd && r < first_odd);
  };
  std::vector<std::size_t> send_counts(N), recv_counts(N);
  for (int r = 0; r < N; ++r) {
    send_counts[r] = agreed(r) ? agreed_count(me.rank(), r) : sends;
    recv_counts[r] = agreed(r) ? agreed_count(r, me.rank()) : expects;
  }
  std::vector<double> send(total(send_counts)), recv(total(recv_counts), -1.0);
  const std::vector<std::size_t> send_displs = displacements(send_counts),
                                 recv_displs = displacements(recv_counts);
  for (int r = 0; r < N; ++r)
    for (std::size_t i = 0; i < send_counts[r]; ++i)
      send[send_displs[r] + i] = me.rank() * 1000.0 + r;
  const std::span<const double> from(send);
  const std::span<double> to(recv);
  if (form == 'n') {
    me.ialltoallv(from, send_counts, send_displs, to, recv_counts, recv_displs).wait();
  } else if (form == 'p') {
    tlc::Persistent p =
        me.alltoallv_init(from, send_counts, send_displs, to, recv_counts, recv_displs);
    p.start();
    p.wait();
  } else {
    me.alltoallv(from, send_counts, send_displs, to, recv_counts, recv_displs);
  }
  if (!check) return;
  for (int r = 0; r < N; ++r)
    for (std::size_t i = 0; i < recv_counts[r]; ++i)
      if (recv[recv_displs[r] + i] != r * 1000.0 + me.rank())
        throw std::runtime_error("alltoallv: wrong element " + std::to_string(i) + " from rank " +
                                 std::to_string(r));
}

// allgatherv / gatherv to root 0: each rank of the last process contributes `given` elements,
// which the other processes (the root) think are `seen`; the other ranks contribute 8 each. With
// cross, also the other way round: the ranks of the other processes contribute `given`, which
// the last process thinks are `seen`.
void gathers(tlc::Thread& me, bool all, std::size_t given, std::size_t seen, bool cross, bool odd) {
  const int N = me.size();
  const int first_odd = N - me.threads();  // every shape here has equal threads per process
  std::vector<std::size_t> counts(N, 8);
  for (int r = 0; r < N; ++r)
    if (r >= first_odd)
      counts[r] = odd ? given : seen;
    else if (cross)
      counts[r] = odd ? seen : given;
  const std::vector<std::size_t> displs = displacements(counts);
  std::vector<double> send(counts[me.rank()], me.rank()), recv(total(counts));
  if (all)
    me.allgatherv(std::span<const double>(send), std::span<double>(recv), counts, displs);
  else
    me.gatherv(std::span<const double>(send),
               std::span<double>(recv.data(), me.rank() == 0 ? recv.size() : 0), counts, displs, 0);
}

void report(const tlc::Thread& me, const std::string& what) {
  std::printf("process %d thread %d: %s\n", me.process(), me.local_index(), what.c_str());
  std::fflush(stdout);
}

int run(const std::string& scenario, int threads) {
  int process = 0, processes = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &process);
  MPI_Comm_size(MPI_COMM_WORLD, &processes);
  const bool odd = process == processes - 1;
  const std::size_t big = std::size_t{1} << 18;  // elements: sent by rendezvous, not eagerly
  tlc::TeamOptions o;
  o.threads = threads;
  o.pin = false;
  int status = 0;
  {
    tlc::Team team(MPI_COMM_WORLD, o);
    try {
      team.run([&](tlc::Thread& me) {
        try {
          std::vector<double> one{1.0}, sum(1);
          if (scenario == "allreduce-vs-barrier") {
            if (odd)
              me.barrier();
            else
              me.allreduce(std::span<const double>(one), std::span<double>(sum));
          } else if (scenario == "allreduce-vs-bcast") {
            if (odd)
              me.bcast(std::span<double>(one), 0);
            else
              me.allreduce(std::span<const double>(one), std::span<double>(sum));
          } else if (scenario == "compared-by-some" || scenario == "icompared-by-some") {
            const std::size_t n = odd ? 1 : std::size_t{1} << 21;
            std::vector<double> send(n, 1.0), recv(n);
            if (scenario == "compared-by-some") {
              me.allreduce(std::span<const double>(send), std::span<double>(recv));
            } else {
              tlc::Request r =
                  me.iallreduce(std::span<const double>(send), std::span<double>(recv));
              r.wait();
            }
          } else if (scenario == "allreduce-counts" || scenario == "allreduce-counts-large") {
            const int shift = scenario == "allreduce-counts" ? 20 : 21;
            const std::size_t n = (std::size_t{1} << shift) + (odd ? 1024 : 0);
            std::vector<double> send(n, 1.0), recv(n);
            me.allreduce(std::span<const double>(send), std::span<double>(recv));
          } else if (scenario == "reduce-roots") {
            std::vector<double> send(1024, 1.0), recv(1024);
            me.reduce(std::span<const double>(send), std::span<double>(recv),
                      odd ? me.size() - 1 : 0);
          } else if (scenario == "allreduce-count-small") {
            std::vector<double> send(odd ? 2 : 1, 1.0), recv(send.size());
            me.allreduce(std::span<const double>(send), std::span<double>(recv));
          } else if (scenario == "allgather-counts") {
            const std::size_t n = odd ? 2 : 1;
            std::vector<double> send(n, 1.0), recv(n * static_cast<std::size_t>(me.size()));
            me.allgather(std::span<const double>(send), std::span<double>(recv));
          } else if (scenario == "allreduce-ops") {
            if (odd)
              me.allreduce(std::span<const double>(one), std::span<double>(sum), tlc::max{});
            else
              me.allreduce(std::span<const double>(one), std::span<double>(sum));
          } else if (scenario == "iallreduce-ops") {
            tlc::Request r =
                odd ? me.iallreduce(std::span<const double>(one), std::span<double>(sum),
                                    tlc::max{})
                    : me.iallreduce(std::span<const double>(one), std::span<double>(sum));
            r.wait();
          } else if (scenario == "allreduce-types") {
            if (odd) {
              std::vector<std::int64_t> a{1}, b(1);
              me.allreduce(std::span<const std::int64_t>(a), std::span<std::int64_t>(b));
            } else {
              me.allreduce(std::span<const double>(one), std::span<double>(sum));
            }
          } else if (scenario == "reduce-roots-small") {
            me.reduce(std::span<const double>(one), std::span<double>(sum),
                      odd ? me.size() - 1 : 0);
          } else if (scenario == "alltoallv-fewer") {
            alltoallv(me, odd ? 1 : 2, 2, true, odd, false);
          } else if (scenario == "gatherv-fewer") {
            gathers(me, false, 1, 2, false, odd);
          } else if (scenario == "scatterv-fewer") {
            const int N = me.size(), first_odd = N - me.threads();
            std::vector<std::size_t> counts(N, 2);
            if (me.rank() == 0)
              for (int r = first_odd; r < N; ++r) counts[r] = 1;
            const std::vector<std::size_t> displs = displacements(counts);
            std::vector<double> send(me.rank() == 0 ? total(counts) : 0, 1.0),
                recv(counts[me.rank()]);
            me.scatterv(std::span<const double>(send), counts, displs, std::span<double>(recv), 0);
          } else if (scenario == "extra-call") {
            if (odd) me.bcast(std::span<double>(one), 0);
            me.allreduce(std::span<const double>(one), std::span<double>(sum));
          } else if (scenario == "extra-call-then-leave") {
            if (!odd) me.allreduce(std::span<const double>(one), std::span<double>(sum));
          } else if (scenario == "nonblocking") {
            std::vector<double> data(1024, 1.0);
            if (odd) {
              tlc::Request extra = me.ibcast(std::span<double>(data), 0);
              extra.wait();
            }
            tlc::Request r = me.iallreduce(std::span<const double>(one), std::span<double>(sum));
            r.wait();
          } else if (scenario == "late") {
            if (odd && me.local_index() == 0) std::this_thread::sleep_for(std::chrono::seconds(10));
            me.allreduce(std::span<const double>(one), std::span<double>(sum));
            if (sum[0] != me.size())
              throw std::runtime_error("wrong sum " + std::to_string(sum[0]) + ", expected " +
                                       std::to_string(me.size()));
          } else if (scenario == "alltoallv-zero") {
            alltoallv(me, 0, 64, false, odd, false);
          } else if (scenario == "ialltoallv-zero") {
            alltoallv(me, 0, 64, false, odd, false, 'n');
          } else if (scenario == "alltoallv-init-zero") {
            alltoallv(me, 0, 64, false, odd, false, 'p');
          } else if (scenario == "alltoallv-big") {
            alltoallv(me, big, 0, false, odd, false);
          } else if (scenario == "alltoallv-odd") {
            alltoallv(me, big, 0, true, odd, false);
          } else if (scenario == "allgatherv-zero") {
            gathers(me, true, 0, 64, false, odd);
          } else if (scenario == "allgatherv-big") {
            gathers(me, true, big, 0, false, odd);
          } else if (scenario == "allgatherv-cross") {
            gathers(me, true, big, 0, true, odd);
          } else if (scenario == "gatherv-zero") {
            gathers(me, false, 0, 64, false, odd);
          } else if (scenario == "gatherv-big") {
            gathers(me, false, big, 0, false, odd);
          } else if (scenario == "alltoallv-late") {
            if (odd && me.local_index() == 0) std::this_thread::sleep_for(std::chrono::seconds(10));
            alltoallv(me, 24, 24, false, odd, true);
          } else {
            throw std::invalid_argument("unknown scenario " + scenario);
          }
          report(me, "returned normally");
        } catch (const std::exception& e) {
          report(me, e.what());
          throw;
        }
      });
    } catch (const std::exception& e) {
      std::printf("process %d: run threw: %s\n", process, e.what());
      std::fflush(stdout);
      status = 1;
    }
  }
  if (scenario == "extra-call-then-leave" && odd) {
    std::printf("process %d: left its team\n", process);
    std::fflush(stdout);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  return status;
}

}  // namespace

int main(int argc, char** argv) {
  tlc::Environment env(argc, argv);
  if (argc != 3) {
    std::fprintf(
        stderr,
        "usage: %s "
        "allreduce-vs-barrier|allreduce-vs-bcast|allreduce-counts[-large]|[i]compared-by-some|"
        "allreduce-count-small|allgather-counts|allreduce-ops|allreduce-types|reduce-roots-small|"
        "alltoallv-fewer|gatherv-fewer|scatterv-fewer|iallreduce-ops|"
        "reduce-roots|extra-call|extra-call-then-leave|nonblocking|late|"
        "[i]alltoallv-zero|alltoallv-init-zero|alltoallv-big|alltoallv-odd|"
        "allgatherv-zero|allgatherv-big|allgatherv-cross|gatherv-zero|gatherv-big|"
        "alltoallv-late THREADS\n",
        argv[0]);
    return 2;
  }
  return run(argv[1], std::atoi(argv[2]));
}
