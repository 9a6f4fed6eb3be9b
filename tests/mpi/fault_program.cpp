// Programs that fail on purpose across processes. tests/mpi/run_fault_test.cmake runs each
// under mpiexec with a hard time limit and checks that the job ends, with an error and the
// expected message, instead of hanging. Scenario (argv[1]), 2 processes:
//   peer-throws    2 threads each. Process 1's thread 0 throws before an allreduce that every
//                  other thread calls. With TLC_TIMEOUT, process 0's thread in MPI gives up its
//                  wait with Error(timeout); the job then ends with MPI_Abort instead of blocking
//                  in MPI_Finalize.
//   peer-absent    1 thread each. Process 1 never calls; process 0's allreduce (the direct MPI
//                  call on its own buffers) times out. With TLC_TIMEOUT_ACTION=abort the time-out
//                  itself ends the job.
//   local-throw    2 threads each, no time-out. Reduce led by arrival, root on process 0:
//                  process 1 never calls, so process 0's root waits inside MPI; process 0's other
//                  thread, which left the reduce early, throws. The team aborts, the root's MPI
//                  wait notices and ends, and the job ends.
//   peer-exits     2 threads each. Process 1's thread 1 enters an allreduce, then its thread 0
//                  ends the process with _exit(0) (no MPI_Finalize, no error status) instead of
//                  calling it. Process 0's leader waits inside MPI for a process that is gone;
//                  with TLC_TIMEOUT it gives up at the deadline and the job ends.
//   peer-killed    2 threads each. Process 1 raises SIGKILL on itself inside the allreduce (in
//                  its user op, while its threads combine). The launcher sees the signal and ends
//                  the job; with TLC_TIMEOUT process 0 would also end by itself.
//   peer-stopped   2 threads each. Process 1 stops itself (SIGSTOP) inside the allreduce, in
//                  its user op: a process that is still there but never answers (swapped out,
//                  stuck in a driver, stopped by a debugger), which the launcher does not notice.
//                  With TLC_TIMEOUT process 0's thread in MPI gives up at the deadline and the job
//                  ends with MPI_Abort, which also ends the stopped process.
//   peer-stopped-untimed   as peer-stopped with no time-out: process 0's long wait finds
//                  process 1 silent (its watch thread, stopped too, does not answer) after
//                  TLC_SILENT seconds.
//   peer-bad-argument   2 threads each, no time-out. Process 1's thread 1 passes a receive
//                  buffer of the wrong size to an allreduce. Process 1's threads get the error
//                  before any data moves and tell process 0, whose leader waits inside MPI: it
//                  ends its wait, and both of process 0's threads get TeamAborted naming process
//                  1's error. The job then ends with MPI_Abort (process 0 gave up an operation).
//   peer-disagrees 2 threads each, no time-out. Process 1's threads pass different roots to a
//                  bcast; the rest as peer-bad-argument.
//   peer-bad-argument-dynamic   as peer-bad-argument, in an alltoall led by arrival.
//   peer-disagrees-fragments    process 1's thread 1 passes a shorter alltoall (its own buffers
//                        agree, the other threads' do not) led by arrival in fragments: the
//                        thread that takes its blocks into a fragment finds the disagreement.
//   lower-bad-argument-scan   2 threads each, no time-out. In a scan led by arrival, process
//                  0's thread 1 passes a receive buffer of the wrong size. Process 1's threads
//                  wait for process 0's total, which is never sent (the last thread of process
//                  0 to arrive checks every thread before it sends): process 0 tells them, and
//                  they get TeamAborted naming process 0's error. Process 0's thread 0 needs
//                  nothing from the others and returns normally.
//   peer-throws-untimed   as peer-throws without TLC_TIMEOUT: process 1's team aborts and
//                  tells process 0.
//   root-went-ahead   1 thread each, no time-out. Process 1 passes a bad root to a bcast whose
//                  root is process 0, which may complete its part without process 1 (its message
//                  waits inside MPI). Then both call an allreduce: process 1 first waits to hear
//                  how the failed bcast ended on process 0, which, once it waits for process 1,
//                  hears of the failure and says the team is gone. Nobody may return data.
//   threads-disagree-plans   2 threads each, no time-out, the default leaders. Process 1's
//                  thread 1 passes 8 MiB to a reduce the others pass 1 KiB to: the plan leads
//                  the small call by arrival and the large one not, so the threads run
//                  different protocols. The static one meets the others in the begin step,
//                  aborts the team and throws. The program catches the error and calls a
//                  barrier: every thread gets TeamAborted there (the threads that left the
//                  reduce early would otherwise wait for the failed call's departures).
//   subteam-peer-throws   2 threads each, no time-out. The threads split by local index into two
//                  sub-teams that span both processes; process 1's thread 0 throws while process
//                  0's thread 0 waits for it in its sub-team's allreduce: the sub-team aborts as
//                  its participant unwinds, and process 0's thread 0 gets TeamAborted naming it.
// The other scenarios keep static leaders (their subject is the static plans) unless they force
// an algorithm led by arrival.
// Every thread prints what it caught: "process P thread T: <what>".
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
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

int run(const std::string& scenario) {
  int process = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &process);
  tlc::TeamOptions o;
  o.threads = scenario == "peer-absent" || scenario == "root-went-ahead" ? 1 : 2;
  o.pin = false;
  if (scenario != "threads-disagree-plans") o.leaders = "static";
  if (scenario == "local-throw") o.algorithms[tlc::Collective::reduce] = "dynamic";
  if (scenario == "peer-bad-argument-dynamic") o.algorithms[tlc::Collective::alltoall] = "dynamic";
  if (scenario == "peer-disagrees-fragments") {
    o.algorithms[tlc::Collective::alltoall] = "dynamic";
    ::setenv("TLC_COST_FRAGMENT_KIB", "1024", 1);  // every block waits for the last arrival
  }
  if (scenario == "lower-bad-argument-scan") o.algorithms[tlc::Collective::scan] = "dynamic";
  tlc::Team team(MPI_COMM_WORLD, o);
  try {
    team.run([&](tlc::Thread& me) {
      std::vector<double> send(8192, 1.0), recv(send.size());
      try {
        const bool odd_one = me.process() == 1 && me.local_index() == 1;
        if (scenario == "threads-disagree-plans") {
          // 8 MiB: a static reduce; 1 KiB: led by arrival, where the other threads of process 1
          // deposit and leave, and the root waits for a last arriver that never comes.
          const std::size_t n = odd_one ? std::size_t{1} << 20 : 128;
          std::vector<double> big_send(n, 1.0), big_recv(n);
          try {
            me.reduce(std::span<const double>(big_send), std::span<double>(big_recv), 0);
          } catch (const tlc::Error& e) {
            report(me, std::string("reduce: ") + e.what());  // and carry on, as a program may
          }
          // Threads that left the reduce early learn of its failure in their next call; nobody
          // may wait there for a thread of the failed call.
          me.barrier();
        } else if (scenario == "nonblocking-peer-bad-argument") {
          // Requests outstanding on process 0 when process 1's call fails in its pack: every
          // waiting thread must end with an error instead of waiting for MPI forever.
          std::vector<double> first(16, 1.0);
          tlc::Request earlier = me.iallreduce(std::span<double>(first));
          tlc::Request r = me.iallreduce(
              std::span<const double>(send),
              std::span<double>(recv.data(), odd_one ? recv.size() - 1 : recv.size()));
          earlier.wait();
          r.wait();
        } else if (scenario == "nonblocking-peer-throws") {
          // Process 1 fails (a user exception) before its thread 0 starts the call, while process
          // 0 and process 1's thread 1 wait for their requests.
          if (me.process() == 1 && me.local_index() == 0)
            throw std::runtime_error("a user error on process 1 before its iallreduce");
          tlc::Request r = me.iallreduce(std::span<const double>(send), std::span<double>(recv));
          r.wait();
        } else if (scenario == "peer-bad-argument") {
          me.allreduce(std::span<const double>(send),
                       std::span<double>(recv.data(), odd_one ? recv.size() - 1 : recv.size()));
        } else if (scenario == "peer-disagrees") {
          me.bcast(std::span<double>(recv), odd_one ? 1 : 0);
        } else if (scenario == "peer-bad-argument-dynamic") {
          me.alltoall(std::span<const double>(send),
                      std::span<double>(recv.data(), odd_one ? recv.size() - 4 : recv.size()));
        } else if (scenario == "peer-disagrees-fragments") {
          const std::size_t n = odd_one ? send.size() - 4 : send.size();
          me.alltoall(std::span<const double>(send.data(), n), std::span<double>(recv.data(), n));
        } else if (scenario == "lower-bad-argument-scan") {
          const bool bad = me.process() == 0 && me.local_index() == 1;
          me.scan(std::span<const double>(send),
                  std::span<double>(recv.data(), bad ? recv.size() - 1 : recv.size()));
        } else if (scenario == "peer-throws-untimed") {
          if (me.process() == 1 && me.local_index() == 0)
            throw std::runtime_error("a user error on process 1 before the allreduce");
          me.allreduce(std::span<const double>(send), std::span<double>(recv));
        } else if (scenario == "root-went-ahead") {
          try {
            me.bcast(std::span<double>(recv), me.process() == 1 ? 7 : 0);
            report(me, "bcast returned");
          } catch (const tlc::Error& e) {
            report(me, std::string("bcast: ") + e.what());
          }
          me.allreduce(std::span<const double>(send), std::span<double>(recv));
        } else if (scenario == "peer-throws") {
          if (me.process() == 1 && me.local_index() == 0)
            throw std::runtime_error("a user error on process 1 before the allreduce");
          me.allreduce(std::span<const double>(send), std::span<double>(recv));
        } else if (scenario == "peer-absent") {
          if (me.process() == 1) {
            std::this_thread::sleep_for(std::chrono::seconds(60));
            return;
          }
          me.allreduce(std::span<const double>(send), std::span<double>(recv));
        } else if (scenario == "peer-exits") {
          if (me.process() == 1 && me.local_index() == 0) {
            // Thread 1 is inside the allreduce by now (it waits for this thread).
            std::this_thread::sleep_for(std::chrono::milliseconds(300));
            std::printf("process 1 exits in the middle of an allreduce\n");
            std::fflush(stdout);
            _exit(0);
          }
          me.allreduce(std::span<const double>(send), std::span<double>(recv));
        } else if (scenario == "peer-killed" || scenario == "peer-stopped" ||
                   scenario == "peer-stopped-untimed") {
          const int mine = me.process();
          const bool kill = scenario == "peer-killed";
          me.allreduce(std::span<const double>(send), std::span<double>(recv),
                       [mine, kill](const double& a, const double& b) {
                         if (mine == 1) {
                           std::printf("process 1 %s itself inside an allreduce\n",
                                       kill ? "kills" : "stops");
                           std::fflush(stdout);
                           raise(kill ? SIGKILL : SIGSTOP);
                         }
                         return a + b;
                       });
        } else if (scenario == "subteam-peer-throws") {
          tlc::Thread sub = me.split(me.local_index(), me.rank());
          if (me.process() == 1 && me.local_index() == 0) {
            std::this_thread::sleep_for(std::chrono::milliseconds(200));
            throw std::runtime_error("a user error in a sub-team");
          }
          sub.allreduce(std::span<const double>(send), std::span<double>(recv));
        } else if (scenario == "local-throw") {
          if (me.process() == 1) {
            std::this_thread::sleep_for(std::chrono::seconds(60));
            return;
          }
          me.reduce(std::span<const double>(send), std::span<double>(recv), 0);
          if (me.rank() != 0) {  // left early; the root waits inside MPI (the reduce's tree)
            std::this_thread::sleep_for(std::chrono::milliseconds(200));
            throw std::runtime_error("a user error on process 0 after its reduce");
          }
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
    return 1;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  tlc::Environment env(argc, argv);
  if (argc != 2) {
    std::fprintf(
        stderr,
        "usage: %s peer-throws|peer-absent|local-throw|peer-exits|peer-killed|peer-stopped|"
        "peer-bad-argument|peer-disagrees|peer-bad-argument-dynamic|peer-disagrees-fragments|"
        "lower-bad-argument-scan|threads-disagree-plans|"
        "peer-throws-untimed|peer-stopped-untimed|"
        "root-went-ahead|nonblocking-peer-bad-argument|nonblocking-peer-throws|"
        "subteam-peer-throws\n",
        argv[0]);
    return 2;
  }
  return run(argv[1]);
}
