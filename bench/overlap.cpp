// --overlap: how much of a nonblocking collective a program can hide behind its own computation,
// measured with the protocol of OSU's osu_iallreduce, and what a persistent call saves against
// the blocking one. Per collective (allreduce, bcast, alltoall), size and implementation:
//   1. t_comm: start and wait with nothing between (pure communication, per call);
//   2. a busy loop calibrated to that implementation's t_comm, run on every thread;
//   3. t_total: start, the loop, wait, per call; t_compute is the loop's own time, measured
//      inside that loop;
//   4. overlap % = 100 * (t_comm + t_compute - t_total) / t_comm, at least 0 (OSU clamps it so).
// Implementations, in the same run on the same data:
//   tlc     every thread of a team calls me.i<name>, computes, waits;
//   mpi     MPI everywhere: one process per thread of the team (P*T processes), MPI_I<name> on
//           MPI_COMM_WORLD, as --intra and --skew --everywhere measure it;
//   master  the master-only pattern: the threads combine (or stage) their buffers in shared
//           arrays, thread 0 starts MPI_I<name> on the teams' processes, every thread computes,
//           thread 0 waits, a barrier, the threads copy the result out (cases.cpp's MasterCase
//           with the MPI call split around the computation);
// and tlc's persistent form (<name>_init once, start() + wait() per call) against its blocking
// call (me.<name>), with nothing between, as a ratio per size.
// Times are the mean over every participant (thread or process) of its mean per call, as OSU
// reports them. Each phase of each implementation is checked: two calls into poisoned outputs
// compared element by element with the sequential reference before anything is timed, and the
// output of the last call of every timed loop after it (poisoned before the loop).
// Teams of T threads run on every T-th process; the other processes wait in a polling barrier
// (no core taken) while the teams and the master-only threads are measured.
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <span>
#include <string>
#include <vector>

#include <mpi.h>

#include "bench.hpp"
#include "omp_parallel.hpp"

namespace tlc_bench {

namespace {

// ---------------------------------------------------------------------------------------------
// The computation: a dependent chain of multiply-adds, which no compiler may shorten (no fast
// math) and which touches no memory, so that it competes with the collective for cores only.

double busy(std::uint64_t units, double x) {
  for (std::uint64_t i = 0; i < units; ++i) x = x * 0.999999 + 1e-7;
  return x;
}

// Where the computation's results go, so that it cannot be dropped.
volatile double g_sink = 0;

// Units per second of busy() on this process's calling thread, measured over at least 20 ms.
double busy_rate() {
  std::uint64_t units = 1 << 14;
  double sink = 1;
  for (;;) {
    const Clock::time_point start = Clock::now();
    sink = busy(units, sink);
    const double s = seconds_since(start);
    if (s >= 0.02 || units > (std::uint64_t{1} << 40)) {
      g_sink = sink;
      return static_cast<double>(units) / s;
    }
    units *= 2;
  }
}

// ---------------------------------------------------------------------------------------------
// Phases and their results

enum class Phase {
  comm,        // start + wait, nothing between
  overlap,     // start, compute, wait
  blocking,    // tlc's blocking call
  persistent,  // tlc's persistent call: init once, start + wait per call
};

// One participant's phase: its mean seconds per call, the mean seconds of its computation per
// call, and what the check of the last call found.
struct Participant {
  double total = 0;
  double compute = 0;
  std::size_t wrong = 0;
  std::string first;
};

// A phase over every participant of every process of comm: means over the participants.
struct PhaseResult {
  double total = std::nan("");
  double compute = std::nan("");
  std::size_t wrong = 0;
};

PhaseResult combine(const std::vector<Participant>& here, MPI_Comm comm, const char* who) {
  double sums[4] = {0, 0, static_cast<double>(here.size()), 0};
  for (const Participant& p : here) {
    sums[0] += p.total;
    sums[1] += p.compute;
    sums[3] += static_cast<double>(p.wrong);
    if (!p.first.empty()) {
      std::fprintf(stderr, "tlc-bench --overlap: WRONG RESULT in %s: %s\n", who, p.first.c_str());
      std::fflush(stderr);
    }
  }
  MPI_Allreduce(MPI_IN_PLACE, sums, 4, MPI_DOUBLE, MPI_SUM, comm);
  PhaseResult r;
  if (sums[2] > 0) {
    r.total = sums[0] / sums[2];
    r.compute = sums[1] / sums[2];
  }
  r.wrong = static_cast<std::size_t>(sums[3]);
  return r;
}

// One participant's loop: `warmup` calls, reset() (poison the output), sync() (everybody), then
// `iters` timed calls of start(), the computation (Phase::overlap), finish(); the whole loop is
// timed (OSU style) and the computation on its own.
template <class Start, class Finish, class Reset, class Sync>
Participant timed_phase(Phase phase, int warmup, int iters, std::uint64_t units, Start&& start,
                        Finish&& finish, Reset&& reset, Sync&& sync) {
  double sink = 1;
  for (int i = 0; i < warmup; ++i) {
    start();
    if (phase == Phase::overlap) sink = busy(units, sink);
    finish();
  }
  reset();
  sync();
  double compute = 0;
  const Clock::time_point begin = Clock::now();
  for (int i = 0; i < iters; ++i) {
    start();
    if (phase == Phase::overlap) {
      const Clock::time_point c = Clock::now();
      sink = busy(units, sink);
      compute += seconds_since(c);
    }
    finish();
  }
  Participant p;
  p.total = seconds_since(begin) / iters;
  p.compute = compute / iters;
  g_sink = sink;
  return p;
}

// ---------------------------------------------------------------------------------------------
// Implementations

class OverlapCase {
 public:
  virtual ~OverlapCase() = default;
  // Buffers of n elements per rank, allocated and filled by the threads that use them; 0 frees.
  virtual void prepare(std::size_t n) = 0;
  // One phase on every participant here; the means over every process of the case's comm.
  virtual PhaseResult run(Phase phase, int warmup, int iters, std::uint64_t units) = 0;
  virtual bool has(Phase phase) const { return phase == Phase::comm || phase == Phase::overlap; }
  virtual int ranks() const = 0;
  // Two calls of every phase it has, each into a poisoned output, each checked.
  std::size_t check() {
    std::size_t wrong = 0;
    for (const Phase p : {Phase::comm, Phase::overlap, Phase::blocking, Phase::persistent})
      if (has(p))
        for (int i = 0; i < 2; ++i) wrong += run(p, 0, 1, 1000).wrong;
    return wrong;
  }
};

// tlc: every thread of the team calls the nonblocking (blocking, persistent) form.
class TlcOverlap : public OverlapCase {
 public:
  TlcOverlap(const CollectiveDef& def, tlc::Team& team, MPI_Comm comm)
      : def_(def),
        team_(team),
        comm_(comm),
        send_(static_cast<std::size_t>(team.threads())),
        recv_(static_cast<std::size_t>(team.threads())),
        layouts_(static_cast<std::size_t>(team.threads())) {}

  int ranks() const override { return team_.size(); }
  bool has(Phase) const override { return true; }

  void prepare(std::size_t n) override {
    n_ = n;
    team_.run([&](tlc::Thread& me) {
      const auto t = static_cast<std::size_t>(me.local_index());
      send_[t].reset();
      recv_[t].reset();
      if (n == 0) return;
      const Layout l = layout(def_.kind, n, me.size(), me.rank(), false);
      layouts_[t] = l;
      recv_[t] = untouched_buffer(l.output);
      std::fill(recv_[t].get(), recv_[t].get() + l.output, 0.0);
      if (def_.kind == Kind::bcast) {
        if (me.rank() == def_.root) fill_input(def_.kind, recv_[t].get(), n, me.size(), 0, false);
        return;
      }
      send_[t] = untouched_buffer(l.send);
      fill_input(def_.kind, send_[t].get(), n, me.size(), me.rank(), false);
    });
  }

  PhaseResult run(Phase phase, int warmup, int iters, std::uint64_t units) override {
    std::vector<Participant> here(send_.size());
    const Reference ref(def_.kind, n_, team_.size());
    team_.run([&](tlc::Thread& me) {
      const auto t = static_cast<std::size_t>(me.local_index());
      const Layout& l = layouts_[t];
      double* out = recv_[t].get();
      const std::span<const double> in(send_[t].get(), l.send);
      const std::span<double> buf(out, l.output);
      tlc::Request request;
      tlc::Persistent persistent;
      if (phase == Phase::persistent) {
        switch (def_.kind) {
          case Kind::bcast:
            persistent = me.bcast_init(buf, def_.root);
            break;
          case Kind::alltoall:
            persistent = me.alltoall_init(in, buf);
            break;
          default:
            persistent = me.allreduce_init(in, buf, std::plus<>{});
            break;
        }
      }
      auto start = [&] {
        switch (phase) {
          case Phase::blocking:
            if (def_.kind == Kind::bcast)
              me.bcast(buf, def_.root);
            else if (def_.kind == Kind::alltoall)
              me.alltoall(in, buf);
            else
              me.allreduce(in, buf, std::plus<>{});
            break;
          case Phase::persistent:
            persistent.start();
            break;
          default:
            if (def_.kind == Kind::bcast)
              request = me.ibcast(buf, def_.root);
            else if (def_.kind == Kind::alltoall)
              request = me.ialltoall(in, buf);
            else
              request = me.iallreduce(in, buf, std::plus<>{});
            break;
        }
      };
      auto finish = [&] {
        if (phase == Phase::persistent)
          persistent.wait();
        else if (phase != Phase::blocking)
          request.wait();
      };
      const bool root = def_.kind == Kind::bcast && me.rank() == def_.root;
      here[t] = timed_phase(
          phase, warmup, iters, units, start, finish,
          [&] {
            if (!root) poison(out, l.output);
          },
          [&] { me.barrier(); });
      here[t].wrong = count_wrong(ref, out, l.output, me.rank(),
                                  std::string("tlc ") + phase_name(phase) + " " + def_.name +
                                      ", rank " + std::to_string(me.rank()),
                                  here[t].first);
    });
    return combine(here, team_.processes() > 1 ? comm_ : MPI_COMM_SELF, def_.name);
  }

  static const char* phase_name(Phase p) {
    switch (p) {
      case Phase::comm:
        return "nonblocking";
      case Phase::overlap:
        return "nonblocking overlapped";
      case Phase::blocking:
        return "blocking";
      case Phase::persistent:
        return "persistent";
    }
    return "?";
  }

 private:
  const CollectiveDef& def_;
  tlc::Team& team_;
  MPI_Comm comm_;
  std::size_t n_ = 0;
  std::vector<Buffer> send_;
  std::vector<Buffer> recv_;  // bcast: its one buffer
  std::vector<Layout> layouts_;
};

// MPI everywhere: one buffer per process, MPI_I<name> and MPI_Wait.
class MpiOverlap : public OverlapCase {
 public:
  MpiOverlap(const CollectiveDef& def, MPI_Comm comm) : def_(def), comm_(comm) {
    MPI_Comm_rank(comm, &rank_);
    MPI_Comm_size(comm, &size_);
  }

  int ranks() const override { return size_; }

  void prepare(std::size_t n) override {
    n_ = n;
    send_.reset();
    recv_.reset();
    if (n == 0) return;
    l_ = layout(def_.kind, n, size_, rank_, false);
    recv_ = untouched_buffer(l_.output);
    std::fill(recv_.get(), recv_.get() + l_.output, 0.0);
    if (def_.kind == Kind::bcast) {
      if (rank_ == def_.root) fill_input(def_.kind, recv_.get(), n, size_, 0, false);
      return;
    }
    send_ = untouched_buffer(l_.send);
    fill_input(def_.kind, send_.get(), n, size_, rank_, false);
  }

  PhaseResult run(Phase phase, int warmup, int iters, std::uint64_t units) override {
    MPI_Request request = MPI_REQUEST_NULL;
    const int n = mpi_count(n_);
    auto start = [&] {
      switch (def_.kind) {
        case Kind::bcast:
          MPI_Ibcast(recv_.get(), n, MPI_DOUBLE, def_.root, comm_, &request);
          break;
        case Kind::alltoall:
          MPI_Ialltoall(send_.get(), n / size_, MPI_DOUBLE, recv_.get(), n / size_, MPI_DOUBLE,
                        comm_, &request);
          break;
        default:
          MPI_Iallreduce(send_.get(), recv_.get(), n, MPI_DOUBLE, MPI_SUM, comm_, &request);
          break;
      }
    };
    auto finish = [&] { MPI_Wait(&request, MPI_STATUS_IGNORE); };
    const bool root = def_.kind == Kind::bcast && rank_ == def_.root;
    std::vector<Participant> one(1);
    one[0] = timed_phase(
        phase, warmup, iters, units, start, finish,
        [&] {
          if (!root) poison(recv_.get(), l_.output);
        },
        [&] { MPI_Barrier(comm_); });
    one[0].wrong = count_wrong(
        Reference(def_.kind, n_, size_), recv_.get(), l_.output, rank_,
        std::string("MPI everywhere ") + def_.name + ", process " + std::to_string(rank_),
        one[0].first);
    return combine(one, comm_, def_.name);
  }

 private:
  const CollectiveDef& def_;
  MPI_Comm comm_;
  int rank_ = 0;
  int size_ = 1;
  std::size_t n_ = 0;
  Layout l_;
  Buffer send_;
  Buffer recv_;
};

// The master-only pattern with MPI's nonblocking call on thread 0. As cases.cpp's MasterCase,
// consecutive calls alternate between two sets of shared arrays, so no trailing barrier is
// needed: the barrier inside call k+1 keeps call k+2 from reusing call k's arrays before every
// thread has copied out of them.
class MasterOverlap : public OverlapCase {
 public:
  MasterOverlap(const CollectiveDef& def, int threads, MPI_Comm comm)
      : def_(def),
        comm_(comm),
        threads_(threads),
        send_(static_cast<std::size_t>(threads)),
        recv_(static_cast<std::size_t>(threads)),
        layouts_(static_cast<std::size_t>(threads)) {
    MPI_Comm_rank(comm, &process_);
    MPI_Comm_size(comm, &processes_);
  }

  int ranks() const override { return processes_ * threads_; }

  void prepare(std::size_t n) override {
    n_ = n;
    const auto T = static_cast<std::size_t>(threads_);
    shared_size_ = def_.kind == Kind::allreduce ? n : def_.kind == Kind::alltoall ? T * n : 0;
    for (int p = 0; p < 2; ++p) {
      shared_[p].reset();
      stage_[p].reset();
      if (n == 0 || shared_size_ == 0) continue;
      shared_[p] = untouched_buffer(shared_size_);
      if (def_.kind == Kind::alltoall) stage_[p] = untouched_buffer(shared_size_);
    }
    omp_parallel(threads_, [&](int thread) {
      const auto t = static_cast<std::size_t>(thread);
      const int rank = process_ * threads_ + thread;
      send_[t].reset();
      recv_[t].reset();
      if (n == 0) return;
      const Layout l = layout(def_.kind, n, ranks(), rank, false);
      layouts_[t] = l;
      recv_[t] = untouched_buffer(l.output);
      std::fill(recv_[t].get(), recv_[t].get() + l.output, 0.0);
      if (def_.kind == Kind::bcast) {
        if (rank == def_.root) fill_input(def_.kind, recv_[t].get(), n, ranks(), 0, false);
      } else {
        send_[t] = untouched_buffer(l.send);
        fill_input(def_.kind, send_[t].get(), n, ranks(), rank, false);
      }
      // The static schedule the combining loop uses, so each thread first-touches its part.
      for (int p = 0; p < 2; ++p) {
        double* shared = shared_[p].get();
        double* stage = stage_[p].get();
#pragma omp for schedule(static)
        for (std::size_t i = 0; i < shared_size_; ++i) shared[i] = 0;
        if (stage) {
#pragma omp for schedule(static)
          for (std::size_t i = 0; i < shared_size_; ++i) stage[i] = 0;
        }
      }
    });
  }

  PhaseResult run(Phase phase, int warmup, int iters, std::uint64_t units) override {
    std::vector<Participant> here(static_cast<std::size_t>(threads_));
    const Reference ref(def_.kind, n_, ranks());
    MPI_Request request = MPI_REQUEST_NULL;  // thread 0's
    omp_parallel(threads_, [&](int thread) {
      const auto t = static_cast<std::size_t>(thread);
      const int rank = process_ * threads_ + thread;
      const Layout& l = layouts_[t];
      int parity = 0;
      auto start = [&] { begin(thread, parity, request); };
      auto finish = [&] {
        end(thread, parity, request);
        parity ^= 1;
      };
      const bool root = def_.kind == Kind::bcast && rank == def_.root;
      here[t] = timed_phase(
          phase, warmup, iters, units, start, finish,
          [&] {
      // Thread 0's buffer is read by the others after a bcast's last barrier.
#pragma omp barrier
            if (!root) poison(recv_[t].get(), l.output);
          },
          [&] {
#pragma omp barrier
            if (thread == 0 && processes_ > 1) MPI_Barrier(comm_);
#pragma omp barrier
          });
      // The last copies out of thread 0's bcast buffer are done before it is read here.
#pragma omp barrier
      here[t].wrong =
          count_wrong(ref, recv_[t].get(), l.output, rank,
                      std::string("master-only ") + def_.name + ", rank " + std::to_string(rank),
                      here[t].first);
    });
    settle_openmp();
    return combine(here, processes_ > 1 ? comm_ : MPI_COMM_SELF, def_.name);
  }

 private:
  // Up to the start of MPI's call: the threads combine (stage) their inputs, thread 0 starts.
  void begin(int thread, int parity, MPI_Request& request) {
    const auto t = static_cast<std::size_t>(thread);
    const std::size_t n = n_;
    const auto T = static_cast<std::size_t>(threads_);
    const auto R = static_cast<std::size_t>(ranks());
    double* shared = shared_[parity].get();
    double* stage = stage_[parity].get();
    switch (def_.kind) {
      case Kind::bcast: {
        // Thread 0's buffer is the process's; the barrier keeps it from being overwritten while
        // a slower thread still copies the previous call's.
#pragma omp barrier
        if (thread == 0) MPI_Ibcast(recv_[0].get(), mpi_count(n), MPI_DOUBLE, 0, comm_, &request);
        break;
      }
      case Kind::alltoall: {
        // Staged by destination process, source thread, destination thread (as MasterCase).
        const std::size_t b = n / R;
        const double* send = send_[t].get();
        for (std::size_t d = 0; d < R; ++d)
          std::memcpy(shared + ((d / T * T + t) * T + d % T) * b, send + d * b, b * sizeof(double));
#pragma omp barrier
        if (thread == 0)
          MPI_Ialltoall(shared, mpi_count(T * T * b), MPI_DOUBLE, stage, mpi_count(T * T * b),
                        MPI_DOUBLE, comm_, &request);
        break;
      }
      default: {
        // In thread order, like a rank-ordered reduction.
#pragma omp for schedule(static) nowait
        for (std::size_t i = 0; i < n; ++i) {
          double sum = send_[0][i];
          for (int u = 1; u < threads_; ++u) sum += send_[static_cast<std::size_t>(u)][i];
          shared[i] = sum;
        }
#pragma omp barrier
        if (thread == 0)
          MPI_Iallreduce(MPI_IN_PLACE, shared, mpi_count(n), MPI_DOUBLE, MPI_SUM, comm_, &request);
        break;
      }
    }
  }

  // From the end of MPI's call: thread 0 waits, a barrier, every thread copies its result out.
  void end(int thread, int parity, MPI_Request& request) {
    const auto t = static_cast<std::size_t>(thread);
    const std::size_t n = n_;
    const auto T = static_cast<std::size_t>(threads_);
    const auto R = static_cast<std::size_t>(ranks());
    if (thread == 0) MPI_Wait(&request, MPI_STATUS_IGNORE);
#pragma omp barrier
    double* recv = recv_[t].get();
    switch (def_.kind) {
      case Kind::bcast:
        if (thread != 0) std::memcpy(recv, recv_[0].get(), n * sizeof(double));
        break;
      case Kind::alltoall: {
        const std::size_t b = n / R;
        const double* stage = stage_[parity].get();
        for (std::size_t s = 0; s < R; ++s)
          std::memcpy(recv + s * b, stage + ((s / T * T + s % T) * T + t) * b, b * sizeof(double));
        break;
      }
      default:
        std::memcpy(recv, shared_[parity].get(), n * sizeof(double));
        break;
    }
  }

  const CollectiveDef& def_;
  MPI_Comm comm_;
  int threads_;
  int process_ = 0;
  int processes_ = 1;
  std::size_t n_ = 0;
  std::vector<Buffer> send_;
  std::vector<Buffer> recv_;  // bcast: its one buffer
  std::vector<Layout> layouts_;
  Buffer shared_[2];
  Buffer stage_[2];
  std::size_t shared_size_ = 0;
};

// ---------------------------------------------------------------------------------------------
// The sweep and its reports

// One implementation's figures at one size: medians over the repetitions.
struct Figures {
  double comm = std::nan("");     // t_comm, seconds per call
  double compute = std::nan("");  // t_compute, inside the overlapped loop
  double total = std::nan("");    // t_total
  double overlap = std::nan("");  // percent, OSU's
  int iters = 0;                  // timed calls per phase, over all repetitions
  bool measured = false;
};

struct OverlapRow {
  std::size_t bytes = 0;
  std::string algorithm;  // tlc's plan for the call
  Figures tlc, mpi, master;
  double mpi_over_tlc = std::nan("");       // t_comm ratios, median within a repetition
  double master_over_tlc = std::nan("");    // (> 1: tlc's start + wait faster)
  double blocking = std::nan("");           // tlc's blocking call, seconds
  double persistent = std::nan("");         // tlc's persistent start + wait, seconds
  double persistent_ratio = std::nan("");   // persistent / blocking (median within a rep)
  double nonblocking_ratio = std::nan("");  // tlc's start + wait / blocking
  std::size_t wrong = 0;
  double others = std::nan(""), steal = std::nan("");
};

double osu_overlap(double comm, double compute, double total) {
  if (!(comm > 0)) return std::nan("");
  return std::max(0.0, 100.0 * (comm + compute - total) / comm);
}

std::string us(double seconds) { return number("%.2f", seconds * 1e6); }

constexpr std::size_t kBytesPerMeasurement = std::size_t{1} << 30;
constexpr double kSecondsPerMeasurement = 0.2;
constexpr int kMinIters = 4;
constexpr int kMaxIters = 20000;

struct OverlapColumn {
  std::string key;
  std::string label;
  bool team = true;  // on the teams' processes; false: on every process
  std::unique_ptr<OverlapCase> impl;
  std::string note;
};

}  // namespace

int run_overlap(const Options& o, const tlc::Environment& env) {
  int process = 0, world = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &process);
  MPI_Comm_size(MPI_COMM_WORLD, &world);
  auto usage_error = [&](const std::string& what) {
    if (process == 0) std::cerr << "tlc-bench --overlap: " << what << " (see --help)\n";
    return 2;
  };

  // Collectives.
  std::vector<const CollectiveDef*> defs;
  {
    const std::string names = o.collective.empty()    ? "allreduce"
                              : o.collective == "all" ? "allreduce,bcast,alltoall"
                                                      : o.collective;
    const std::string list = names + ",";
    std::size_t from = 0;
    for (std::size_t comma; (comma = list.find(',', from)) != std::string::npos; from = comma + 1) {
      if (comma == from) continue;
      const std::string name = list.substr(from, comma - from);
      const CollectiveDef* def = find_collective(name);
      if (!def ||
          (def->kind != Kind::allreduce && def->kind != Kind::bcast && def->kind != Kind::alltoall))
        return usage_error("'" + name + "' is not one of allreduce, bcast, alltoall, all");
      defs.push_back(def);
    }
    if (defs.empty()) return usage_error("no collective given");
  }

  // The shape: teams of T threads on every T-th process, MPI everywhere on all of them.
  int threads = o.threads;
  if (threads <= 0)
    if (const char* env_threads = std::getenv("TLC_THREADS")) threads = std::atoi(env_threads);
  if (threads <= 0) threads = world;
  const bool everywhere = world % threads == 0;
  const int stride = everywhere ? threads : 1;
  const bool in_team = process % stride == 0;
  MPI_Comm team_comm = MPI_COMM_NULL;
  MPI_Comm_split(MPI_COMM_WORLD, in_team ? 0 : MPI_UNDEFINED, process, &team_comm);
  std::unique_ptr<tlc::Team> team;
  std::string error;
  if (in_team) {
    tlc::TeamOptions options;
    options.threads = threads;
    options.lanes = o.lanes;
    options.pin = o.pin;
    try {
      team = std::make_unique<tlc::Team>(team_comm, options);
      if (team->threads() != threads)
        error = "the team has " + std::to_string(team->threads()) + " threads, not " +
                std::to_string(threads);
    } catch (const std::exception& e) {
      error = e.what();
    }
  }
  int failed = error.empty() ? 0 : 1;
  MPI_Allreduce(MPI_IN_PLACE, &failed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (failed) {
    if (!error.empty())
      std::cerr << "tlc-bench --overlap: process " << process
                << ": cannot build the team: " << error << "\n";
    team.reset();
    if (team_comm != MPI_COMM_NULL) MPI_Comm_free(&team_comm);
    return 1;
  }
  const int processes = world / stride;

  // Sizes.
  std::vector<std::size_t> sizes = o.skew_sizes;
  if (sizes.empty()) {
    Options range = o;
    if (!o.max_size_set) range.max_size = std::max<std::size_t>(o.min_size, std::size_t{16} << 20);
    for (const std::size_t count : element_counts(range, o.step ? o.step : 8, 1))
      sizes.push_back(count * sizeof(double));
  }

  RunHeader h = make_header("--overlap", env);
  h.processes = processes;
  h.threads = threads;
  h.lanes = in_team ? team->lanes() : 0;
  h.pinned = in_team && team->placement().pinned;
  if (process == 0) h.placement = placement_text(*team);
  h.node_threads = h.node_threads / stride * threads;
  h.description =
      "OSU's overlap protocol (osu_iallreduce): t_comm = start + wait, a busy loop calibrated "
      "to t_comm on every thread, t_total = start + loop + wait, overlap % = 100 * (t_comm + "
      "t_compute - t_total) / t_comm (>= 0), for tlc (every thread me.i<name>, computes, "
      "waits; teams of " +
      std::to_string(threads) + " threads on " + std::to_string(processes) +
      " process(es)), MPI everywhere (" +
      (everywhere ? std::to_string(world) + " processes, MPI_I<name> on MPI_COMM_WORLD)"
                  : std::string("not measured: launch P*T processes)")) +
      " and master-only (threads combine, thread 0 starts MPI_I<name>, all compute, thread 0 "
      "waits, copy out); and tlc's persistent call (init once, start + wait) against its "
      "blocking call; in the same run on the same data, every phase checked";
  const std::string iters_text =
      o.iters ? "fixed " + std::to_string(*o.iters)
              : std::string(
                    "adaptive per implementation, min(1 GiB / size, 0.2 s / warm-up "
                    "time per call) in [4, 20000]");
  h.iters_policy = iters_text + " per phase, split into " + std::to_string(std::max(o.reps, 1)) +
                   " repetitions taken in turn with the other implementations, medians reported";

  // Outputs: the table (and the summary) on stdout, or --out PREFIX.txt and .csv.
  std::ofstream table_file, csv_file;
  std::ostream* table = &std::cout;
  std::ostream* csv = nullptr;
  if (process == 0 && !o.out.empty()) {
    table_file.open(o.out + ".txt");
    csv_file.open(o.out + ".csv");
    if (!table_file || !csv_file) {
      std::cerr << "tlc-bench --overlap: cannot write " << o.out << ".txt / .csv\n";
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
    table = &table_file;
    csv = &csv_file;
    std::cout << "# writing " << o.out << ".txt " << o.out << ".csv" << std::endl;
  } else if (o.format == Format::csv) {
    csv = &std::cout;
    table = nullptr;
  }
  const double rate = busy_rate();
  double rates[2] = {rate, -rate};
  MPI_Allreduce(MPI_IN_PLACE, rates, 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  if (process == 0) {
    auto header = [&](std::ostream& out) {
      for (const auto& [key, value] : header_fields(h)) out << "# " << key << ": " << value << "\n";
      out << "# compute: a dependent multiply-add chain, " << number("%.0f", -rates[1] / 1e6) << "-"
          << number("%.0f", rates[0] / 1e6)
          << " M steps/s on the processes' main threads; per implementation and size calibrated "
             "to its t_comm\n";
    };
    if (table) {
      header(*table);
      *table << "# columns: per implementation X (tlc, mpi = MPI everywhere, master = "
                "master-only): X_comm, X_comp, X_total = t_comm, t_compute, t_total in us (mean "
                "over the participants, median repetition), X_ovl% = overlap; mpi/tlc, "
                "master/tlc = t_comm over tlc's in the same repetition (median; > 1: tlc's start "
                "+ wait faster); block_us = tlc's blocking call, pers_us = tlc's persistent "
                "start + wait, pers/blk and nb/blk = persistent and nonblocking start + wait over "
                "blocking (median of the ratios within a repetition; < 1: faster than blocking); "
                "#wrong = wrong elements in every checked call; others%, steal% = CPU taken by "
                "other processes and the hypervisor meanwhile\n";
    }
    if (csv) {
      header(*csv);
      *csv << "collective,bytes,impl,comm_us,compute_us,total_us,overlap_pct,ratio,wrong,iters,"
              "others_pct,steal_pct\n";
    }
  }

  const Clock::time_point run_start = Clock::now();
  std::size_t wrong_total = 0;
  std::map<std::string, std::vector<OverlapRow>> summary;
  const int reps = std::max(o.reps, 1);

  for (const CollectiveDef* def : defs) {
    std::vector<OverlapColumn> columns;
    {
      OverlapColumn c{"tlc",
                      std::string("every thread ") + def->tlc_what + " in its nonblocking form",
                      true,
                      nullptr,
                      {}};
      if (in_team) c.impl = std::make_unique<TlcOverlap>(*def, *team, team_comm);
      columns.push_back(std::move(c));
      OverlapColumn m{"mpi",
                      std::string("MPI everywhere: every process ") + def->mpi_what +
                          "'s nonblocking form on MPI_COMM_WORLD",
                      false,
                      nullptr,
                      {}};
      if (everywhere)
        m.impl = std::make_unique<MpiOverlap>(*def, MPI_COMM_WORLD);
      else
        m.note = "launch P*T processes for MPI everywhere";
      columns.push_back(std::move(m));
      const std::string before_start =
          def->kind == Kind::bcast      ? "a barrier, thread 0 starts "
          : def->kind == Kind::alltoall ? "threads stage their blocks in a shared array, thread 0 "
                                          "starts "
                                        : "threads combine in a shared array, thread 0 starts ";
      OverlapColumn s{
          "master",
          "master-only: " + before_start + std::string(def->mpi_what) +
              "'s nonblocking form, all compute, thread 0 waits, a barrier, the threads "
              "copy the result out",
          true,
          nullptr,
          {}};
      if (in_team) s.impl = std::make_unique<MasterOverlap>(*def, threads, team_comm);
      columns.push_back(std::move(s));
    }
    const std::size_t multiple =
        def->kind == Kind::alltoall ? static_cast<std::size_t>(processes * threads) : 1;
    // Runs f where the column is measured; the processes outside wait without a core.
    auto on = [&](const OverlapColumn& c, auto&& f) {
      if (!c.team || in_team) f();
      if (c.team && stride > 1) polite_barrier();
    };
    auto present = [&](const OverlapColumn& c) { return c.team || everywhere; };

    if (process == 0 && table) {
      *table << "\n# " << def->name << ": tlc: every thread " << def->tlc_what << " as i"
             << def->name << " + wait; MPI: " << def->mpi_what << " as its I-form\n";
      for (const OverlapColumn& c : columns)
        *table << "#   " << c.key << ": " << c.label
               << (present(c) ? "" : " [not measured: " + c.note + "]") << "\n";
      char line[512];
      std::snprintf(line, sizeof line,
                    "%10s %-12s %9s %9s %9s %6s %9s %9s %9s %6s %9s %9s %9s %6s %8s %10s %9s "
                    "%9s %8s %8s %6s %7s %6s",
                    "size", "algorithm", "tlc_comm", "tlc_comp", "tlc_total", "ovl%", "mpi_comm",
                    "mpi_comp", "mpi_total", "ovl%", "mst_comm", "mst_comp", "mst_total", "ovl%",
                    "mpi/tlc", "master/tlc", "block_us", "pers_us", "pers/blk", "nb/blk", "#wrong",
                    "others%", "steal%");
      *table << line << std::endl;
    }

    for (const std::size_t bytes_asked : sizes) {
      std::size_t count = std::max<std::size_t>(1, bytes_asked / sizeof(double));
      count = (count + multiple - 1) / multiple * multiple;
      OverlapRow row;
      row.bytes = count * sizeof(double);
      if (process == 0)
        row.algorithm =
            team->select_algorithm(
                    {def->collective,
                     (def->kind == Kind::alltoall ? count / multiple : count) * sizeof(double),
                     sizeof(double), true, false})
                .name;
      const CpuSample before = cpu_sample();

      // Prepare and check every implementation; then each phase's warm-up and iteration count.
      std::size_t wrong = 0;
      std::vector<std::map<Phase, int>> iters(columns.size());
      for (std::size_t k = 0; k < columns.size(); ++k) {
        OverlapColumn& c = columns[k];
        if (!present(c)) continue;
        on(c, [&] {
          c.impl->prepare(count);
          wrong += c.impl->check();
          for (const Phase p : {Phase::comm, Phase::blocking, Phase::persistent}) {
            if (!c.impl->has(p)) continue;
            const std::size_t by_bytes = kBytesPerMeasurement / std::max<std::size_t>(row.bytes, 1);
            int n = o.iters.value_or(static_cast<int>(
                std::clamp<std::size_t>(by_bytes, kMinIters, static_cast<std::size_t>(kMaxIters))));
            const int warmup = o.warmup.value_or(std::clamp(n / 10, 1, 100));
            const PhaseResult estimate = c.impl->run(p, 1, std::max(warmup, 1), 0);
            wrong += estimate.wrong;
            const double per_call = estimate.total;
            if (!o.iters && per_call > 0)
              n = static_cast<int>(
                  std::clamp(std::min(kSecondsPerMeasurement / per_call, static_cast<double>(n)),
                             static_cast<double>(kMinIters), static_cast<double>(kMaxIters)));
            iters[k][p] = n;
          }
          iters[k][Phase::overlap] = iters[k][Phase::comm];
        });
      }
      // Everybody learns the counts of the team columns (process 0 is in every one).
      for (std::size_t k = 0; k < columns.size(); ++k)
        for (const Phase p : {Phase::comm, Phase::overlap, Phase::blocking, Phase::persistent}) {
          int n = iters[k].count(p) ? iters[k][p] : 0;
          MPI_Bcast(&n, 1, MPI_INT, 0, MPI_COMM_WORLD);
          iters[k][p] = n;
        }
      const int warm = o.warmup.value_or(1);

      // Pass 1: t_comm of every implementation, tlc's blocking and persistent calls; the
      // columns (and tlc's three forms) taken in turn, the order rotating per repetition.
      struct Slot {
        std::size_t column;
        Phase phase;
      };
      std::vector<Slot> first_pass = {{0, Phase::comm},
                                      {1, Phase::comm},
                                      {2, Phase::comm},
                                      {0, Phase::blocking},
                                      {0, Phase::persistent}};
      std::map<std::pair<std::size_t, Phase>, std::vector<PhaseResult>> results;
      auto measure = [&](const Slot& s, int r, std::uint64_t units) {
        OverlapColumn& c = columns[s.column];
        if (!present(c)) return;
        const int n = calls_in(iters[s.column][s.phase], reps, r);
        PhaseResult res;
        on(c, [&] { res = c.impl->run(s.phase, warm, n, units); });
        wrong += res.wrong;
        results[{s.column, s.phase}].push_back(res);
      };
      for (int r = 0; r < reps; ++r)
        for (std::size_t step = 0; step < first_pass.size(); ++step)
          measure(first_pass[(step + static_cast<std::size_t>(r)) % first_pass.size()], r, 0);
      auto median_of = [&](std::size_t k, Phase p, double PhaseResult::*field) {
        std::vector<double> v;
        for (const PhaseResult& res : results[{k, p}]) v.push_back(res.*field);
        return median(v);
      };
      // The computation of each implementation: calibrated to its t_comm (known on process 0,
      // which is in every column; told to everybody).
      std::vector<double> units(columns.size(), 0);
      for (std::size_t k = 0; k < columns.size(); ++k) {
        double t = present(columns[k]) ? median_of(k, Phase::comm, &PhaseResult::total) : 0;
        MPI_Bcast(&t, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
        units[k] = std::isnan(t) ? 0 : std::floor(t * rate);
      }
      // Pass 2: start, compute, wait.
      for (int r = 0; r < reps; ++r)
        for (std::size_t step = 0; step < columns.size(); ++step) {
          const std::size_t k = (step + static_cast<std::size_t>(r)) % columns.size();
          measure({k, Phase::overlap}, r, static_cast<std::uint64_t>(units[k]));
        }
      for (std::size_t k = 0; k < columns.size(); ++k)
        if (present(columns[k])) on(columns[k], [&] { columns[k].impl->prepare(0); });
      const CpuSample after = cpu_sample();

      if (process == 0) {
        std::tie(row.others, row.steal) = interference(before, after);
        // A phase's count is the sum over its processes, and process 0 takes part in every
        // phase: its sum is the row's (checked calls and timed loops).
        row.wrong = wrong;
        Figures* figures[3] = {&row.tlc, &row.mpi, &row.master};
        for (std::size_t k = 0; k < columns.size(); ++k) {
          if (!present(columns[k])) continue;
          Figures& f = *figures[k];
          f.measured = true;
          f.comm = median_of(k, Phase::comm, &PhaseResult::total);
          f.total = median_of(k, Phase::overlap, &PhaseResult::total);
          f.compute = median_of(k, Phase::overlap, &PhaseResult::compute);
          f.overlap = osu_overlap(f.comm, f.compute, f.total);
          f.iters = iters[k][Phase::comm];
        }
        auto ratio = [&](std::size_t k, Phase p, std::size_t base_k, Phase base_p) {
          const auto& a = results[{k, p}];
          const auto& b = results[{base_k, base_p}];
          std::vector<double> v;
          for (std::size_t r = 0; r < std::min(a.size(), b.size()); ++r)
            if (b[r].total > 0) v.push_back(a[r].total / b[r].total);
          return median(v);
        };
        row.mpi_over_tlc = ratio(1, Phase::comm, 0, Phase::comm);
        row.master_over_tlc = ratio(2, Phase::comm, 0, Phase::comm);
        row.blocking = median_of(0, Phase::blocking, &PhaseResult::total);
        row.persistent = median_of(0, Phase::persistent, &PhaseResult::total);
        row.persistent_ratio = ratio(0, Phase::persistent, 0, Phase::blocking);
        row.nonblocking_ratio = ratio(0, Phase::comm, 0, Phase::blocking);
        wrong_total += row.wrong;
        summary[def->name].push_back(row);
        if (table) {
          char line[512];
          auto f = [](const Figures& x, double v) { return x.measured ? us(v) : std::string("-"); };
          std::snprintf(
              line, sizeof line,
              "%10zu %-12s %9s %9s %9s %6s %9s %9s %9s %6s %9s %9s %9s %6s %8s %10s %9s %9s "
              "%8s %8s %6zu %7s %6s",
              row.bytes, row.algorithm.c_str(), f(row.tlc, row.tlc.comm).c_str(),
              f(row.tlc, row.tlc.compute).c_str(), f(row.tlc, row.tlc.total).c_str(),
              number("%.1f", row.tlc.overlap).c_str(), f(row.mpi, row.mpi.comm).c_str(),
              f(row.mpi, row.mpi.compute).c_str(), f(row.mpi, row.mpi.total).c_str(),
              number("%.1f", row.mpi.overlap).c_str(), f(row.master, row.master.comm).c_str(),
              f(row.master, row.master.compute).c_str(), f(row.master, row.master.total).c_str(),
              number("%.1f", row.master.overlap).c_str(), number("%.2f", row.mpi_over_tlc).c_str(),
              number("%.2f", row.master_over_tlc).c_str(), us(row.blocking).c_str(),
              us(row.persistent).c_str(), number("%.2f", row.persistent_ratio).c_str(),
              number("%.2f", row.nonblocking_ratio).c_str(), row.wrong,
              number("%.0f", row.others).c_str(), number("%.0f", row.steal).c_str());
          *table << line << std::endl;
        }
        if (csv) {
          auto line = [&](const char* impl, double comm, double compute, double total,
                          double overlap, double ratio_value, int n) {
            *csv << def->name << ',' << row.bytes << ',' << impl << ','
                 << number("%.4f", comm * 1e6) << ',' << number("%.4f", compute * 1e6) << ','
                 << number("%.4f", total * 1e6) << ',' << number("%.2f", overlap) << ','
                 << number("%.4f", ratio_value) << ',' << row.wrong << ',' << n << ','
                 << number("%.1f", row.others) << ',' << number("%.1f", row.steal) << '\n';
          };
          const char* keys[3] = {"tlc", "mpi", "master"};
          const double ratios[3] = {1, row.mpi_over_tlc, row.master_over_tlc};
          for (std::size_t k = 0; k < 3; ++k)
            if (figures[k]->measured)
              line(keys[k], figures[k]->comm, figures[k]->compute, figures[k]->total,
                   figures[k]->overlap, ratios[k], figures[k]->iters);
          const double nan = std::nan("");
          line("blocking", row.blocking, nan, nan, nan, 1, iters[0][Phase::blocking]);
          line("persistent", row.persistent, nan, nan, nan, row.persistent_ratio,
               iters[0][Phase::persistent]);
          line("nonblocking", row.tlc.comm, nan, nan, nan, row.nonblocking_ratio,
               iters[0][Phase::comm]);
          csv->flush();
        }
      }
    }
  }

  if (process == 0) {
    const double seconds = seconds_since(run_start);
    if (table && table != &std::cout) *table << "# run took " << number("%.1f", seconds) << " s\n";
    if (csv) *csv << "# run took " << number("%.1f", seconds) << " s" << std::endl;
    if (o.format == Format::table || !o.out.empty()) {
      std::ostream& out = std::cout;
      out << "\n# Summary (tlc-bench --overlap, " << processes << " x " << threads
          << "): overlap % = 100 * (t_comm + t_compute - t_total) / t_comm, >= 0 (OSU's); "
             "mpi/tlc, master/tlc = their t_comm (start + wait) over tlc's (> 1: tlc faster); "
             "pers/blk, nb/blk = tlc's persistent and nonblocking start + wait over its "
             "blocking call (< 1: faster than blocking)\n";
      char line[256];
      std::snprintf(line, sizeof line, "%-10s %8s | %8s %8s %8s | %8s %10s | %8s %8s", "collective",
                    "size", "tlc ovl%", "mpi ovl%", "mst ovl%", "mpi/tlc", "master/tlc", "pers/blk",
                    "nb/blk");
      out << line << "\n";
      for (const CollectiveDef* def : defs)
        for (const OverlapRow& r : summary[def->name]) {
          std::snprintf(
              line, sizeof line, "%-10s %8s | %8s %8s %8s | %8s %10s | %8s %8s", def->name,
              size_text(r.bytes).c_str(), number("%.1f", r.tlc.overlap).c_str(),
              number("%.1f", r.mpi.overlap).c_str(), number("%.1f", r.master.overlap).c_str(),
              number("%.2f", r.mpi_over_tlc).c_str(), number("%.2f", r.master_over_tlc).c_str(),
              number("%.2f", r.persistent_ratio).c_str(),
              number("%.2f", r.nonblocking_ratio).c_str());
          out << line << "\n";
        }
      out << "# every result checked against a sequential reference: "
          << (wrong_total ? std::to_string(wrong_total) + " WRONG elements (see stderr)"
                          : "all correct")
          << "; run took " << number("%.0f", seconds) << " s" << std::endl;
    }
  }
  unsigned long wrong = wrong_total;
  MPI_Bcast(&wrong, 1, MPI_UNSIGNED_LONG, 0, MPI_COMM_WORLD);
  team.reset();
  if (team_comm != MPI_COMM_NULL) MPI_Comm_free(&team_comm);
  return wrong ? 3 : 0;
}

}  // namespace tlc_bench
