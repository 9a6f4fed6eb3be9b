// Processes whose calls disagree, with no TLC_CHECK and no TLC_TIMEOUT (issue: mismatched calls
// across processes). tests/mpi/run_fault_test.cmake runs each scenario under mpiexec with a hard
// time limit. Usage: tlc_mismatch_program SCENARIO THREADS (threads per process). The last
// process is the odd one:
//   allreduce-vs-barrier   the others allreduce one double, it calls barrier
//   allreduce-vs-bcast     the others allreduce one double, it bcasts one double from rank 0
//   allreduce-counts       the others allreduce 1 Mi doubles, it 1 Mi + 1024
//   reduce-roots           the others reduce to rank 0, it to its own last rank
//   extra-call             it makes a bcast the others do not make, then the allreduce all make
//   extra-call-then-leave  the others make an allreduce it never makes: it destroys its team
//                          and waits in MPI_Barrier of MPI_COMM_WORLD
//   nonblocking            it starts an ibcast the others do not start, then the iallreduce
//                          all start; each waits for its requests
//   late                   no mismatch: it sleeps 10 s before the allreduce all make, which
//                          must complete with the right sum (the job then succeeds)
// A mismatch must end with an error on every thread of every process (each prints "process P
// thread T: <what>"), within seconds of TLC_SUSPECT_MS, and the job must end.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <tlc/tlc.hpp>

namespace {

void report(const tlc::Thread& me, const std::string& what) {
  std::printf("process %d thread %d: %s\n", me.process(), me.local_index(), what.c_str());
  std::fflush(stdout);
}

int run(const std::string& scenario, int threads) {
  int process = 0, processes = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &process);
  MPI_Comm_size(MPI_COMM_WORLD, &processes);
  const bool odd = process == processes - 1;
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
          } else if (scenario == "allreduce-counts") {
            const std::size_t n = (std::size_t{1} << 20) + (odd ? 1024 : 0);
            std::vector<double> send(n, 1.0), recv(n);
            me.allreduce(std::span<const double>(send), std::span<double>(recv));
          } else if (scenario == "reduce-roots") {
            std::vector<double> send(1024, 1.0), recv(1024);
            me.reduce(std::span<const double>(send), std::span<double>(recv),
                      odd ? me.size() - 1 : 0);
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
    std::fprintf(stderr,
                 "usage: %s allreduce-vs-barrier|allreduce-vs-bcast|allreduce-counts|"
                 "reduce-roots|extra-call|extra-call-then-leave|nonblocking|late THREADS\n",
                 argv[0]);
    return 2;
  }
  return run(argv[1], std::atoi(argv[2]));
}
