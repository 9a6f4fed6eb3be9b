// tlc-bench --intra: the threads of one process, measured against what the memory of the same
// machine allows and against MPI everywhere, in the same run on the same data.
//
// Per collective and size:
//   A. tlc: process 0 alone runs a team of T threads (tlc::Team on MPI_COMM_SELF); every thread
//      calls the collective on its own buffers. The other processes must not steal a core
//      meanwhile: they wait in MPI_Ibarrier + MPI_Test + 1 ms sleeps, not in a spinning
//      MPI_Barrier.
//   B. roofline: the same T threads (the team's own, pinned the same way) each memcpy a private
//      buffer, first-touched by that thread. The T source and destination buffers together
//      are as large as the collective's buffers, so that neither side runs from a cache the
//      other does not fit in. Copy bandwidth = (bytes read + bytes written) / time; the bound is
//      (bytes the collective must move) / copy bandwidth.
//   C. MPI everywhere: all T processes call the matching MPI collective on MPI_COMM_WORLD, one
//      buffer per process of the same size as a thread's.
// Once, for allreduce: D. bare barriers of the same T threads (a sense-reversing spin barrier on
// std::atomic, std::barrier, tlc's me.barrier()) next to an 8-byte me.allreduce and to the
// same 8-byte sum done the way tlc does it with nothing else (LineAllreduce).
//
// Every tlc and MPI result is checked once per size, into poisoned buffers, against the
// sequential reference before anything is timed. Timing follows the sweep (warm-up and
// iteration counts per implementation, the timed calls split into repetitions, the median
// repetition reported, a repetition's time being the maximum over the threads or processes of
// the per-thread mean), with one change: the repetitions of A, B and C are taken in turn, and
// the ratios are medians of the ratios within one repetition. On a shared machine (a VM, say)
// memory bandwidth drifts by 2x within seconds; pairing keeps the drift out of the ratios.
#include <algorithm>
#include <atomic>
#include <barrier>
#include <chrono>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <iostream>
#include <limits>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <sys/resource.h>
#include <unistd.h>

#include <mpi.h>

#include "bench.hpp"

namespace tlc_bench {

namespace {

// ---------------------------------------------------------------------------------------------
// The collectives and what they must move

enum class Kind { allreduce, reduce, bcast, allgather, alltoall };

struct IntraSpec {
  const char* name;
  Kind kind;
  tlc::Collective collective;
  const char* tlc_what;
  const char* mpi_what;
  const char* moved_formula;  // bytes that must move; T threads, n bytes per thread buffer
};

const IntraSpec kSpecs[] = {
    {"allreduce", Kind::allreduce, tlc::Collective::allreduce,
     "me.allreduce(send, recv, std::plus<>)", "MPI_Allreduce(SUM)",
     "2*T*n (every input read once, every output written once)"},
    {"reduce", Kind::reduce, tlc::Collective::reduce,
     "me.reduce(send, recv, 0, std::plus<>), recv empty off the root", "MPI_Reduce(SUM, root 0)",
     "T*n + n (every input read once, the root's output written once)"},
    {"bcast", Kind::bcast, tlc::Collective::bcast, "me.bcast(buf, 0)", "MPI_Bcast(root 0)",
     "T*n (the root's buffer read once, T-1 buffers written)"},
    {"allgather", Kind::allgather, tlc::Collective::allgather, "me.allgather(send, recv)",
     "MPI_Allgather", "T*n + T*T*n (every input read once, T outputs of T*n written)"},
    {"alltoall", Kind::alltoall, tlc::Collective::alltoall, "me.alltoall(send, recv)",
     "MPI_Alltoall", "2*T*n, n = send buffer (every input read once, every output written once)"},
};

// Receive elements of rank `rank` of `size` for `n` elements per send buffer. bcast works in
// place on its one buffer, so it has none.
std::size_t recv_elements(Kind kind, std::size_t n, int size, int rank) {
  switch (kind) {
    case Kind::allreduce:
    case Kind::alltoall:
      return n;
    case Kind::reduce:
      return rank == 0 ? n : 0;
    case Kind::bcast:
      return 0;
    case Kind::allgather:
      return static_cast<std::size_t>(size) * n;
  }
  return 0;
}

// Bytes that must move for T participants with n elements per send buffer. For every
// collective here this is also the total size of all buffers, so the copy kernel that moves
// as many bytes touches as much memory.
double moved_bytes(Kind kind, int threads, std::size_t n) {
  const double t = threads;
  const double bytes = static_cast<double>(n * sizeof(double));
  switch (kind) {
    case Kind::allreduce:
    case Kind::alltoall:
      return 2 * t * bytes;
    case Kind::reduce:
      return t * bytes + bytes;
    case Kind::bcast:
      return t * bytes;
    case Kind::allgather:
      return t * bytes + t * t * bytes;
  }
  return 0;
}

// What element i of the output of rank `rank` (of `size`) must be; the output is the receive
// buffer, or for bcast the one buffer.
double expected_at(Kind kind, std::size_t n, int rank, int size, const Expected& sums,
                   std::size_t i) {
  switch (kind) {
    case Kind::allreduce:
    case Kind::reduce:
      return sums.at(i);
    case Kind::bcast:
      return input_value(0, i);
    case Kind::allgather:
      return input_value(static_cast<int>(i / n), i % n);
    case Kind::alltoall: {
      // Block `rank` of sender q's buffer lands in block q.
      const std::size_t block = n / static_cast<std::size_t>(size);
      return input_value(static_cast<int>(i / block),
                         static_cast<std::size_t>(rank) * block + i % block);
    }
  }
  return 0;
}

std::string check_output(Kind kind, const double* out, std::size_t out_count, std::size_t n,
                         int rank, int size, const Expected& sums, const std::string& who) {
  return first_mismatch(
      out, out_count, [&](std::size_t i) { return expected_at(kind, n, rank, size, sums, i); },
      who);
}

inline void cpu_relax() noexcept {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield" ::: "memory");
#endif
}

// ---------------------------------------------------------------------------------------------
// Phase A: the tlc collective on the threads of process 0. time() is local to process 0.

class TlcIntra : public Case {
 public:
  TlcIntra(tlc::Team& team, Kind kind)
      : team_(team),
        kind_(kind),
        send_(static_cast<std::size_t>(team.threads())),
        recv_(static_cast<std::size_t>(team.threads())),
        sums_(team.size()) {}

  void prepare(std::size_t count) override {
    count_ = count;
    team_.run([&](tlc::Thread& me) {
      const auto t = static_cast<std::size_t>(me.local_index());
      const std::size_t r = recv_elements(kind_, count, me.size(), me.rank());
      send_[t].reset();
      recv_[t].reset();
      send_[t] = untouched_buffer(count);
      recv_[t] = untouched_buffer(r);
      for (std::size_t i = 0; i < count; ++i) send_[t][i] = input_value(me.rank(), i);
      for (std::size_t i = 0; i < r; ++i) recv_[t][i] = 0;
    });
  }

  double time(const Loop& loop) override {
    std::vector<PaddedDouble> seconds(send_.size());
    team_.run([&](tlc::Thread& me) {
      const int t = me.local_index();
      seconds[static_cast<std::size_t>(t)].value = timed_loop(
          loop, t, me.threads(), [&] { call(me); }, [&] { me.barrier(); });
    });
    return max_of(seconds);
  }

  std::string verify() override {
    std::vector<std::string> errors(send_.size());
    team_.run([&](tlc::Thread& me) {
      const auto t = static_cast<std::size_t>(me.local_index());
      const bool bcast = kind_ == Kind::bcast;
      double* out = bcast ? send_[t].get() : recv_[t].get();
      const std::size_t out_count =
          bcast ? count_ : recv_elements(kind_, count_, me.size(), me.rank());
      if (!bcast || me.rank() != 0) poison(out, out_count);  // the root's bcast input stays
      call(me);
      errors[t] = check_output(kind_, out, out_count, count_, me.rank(), me.size(), sums_,
                               "tlc " + std::string(name()) + ", thread " + std::to_string(t));
    });
    for (const std::string& e : errors)
      if (!e.empty()) return e;
    return {};
  }

 private:
  const char* name() const {
    for (const IntraSpec& s : kSpecs)
      if (s.kind == kind_) return s.name;
    return "?";
  }

  void call(tlc::Thread& me) {
    const auto t = static_cast<std::size_t>(me.local_index());
    double* send = send_[t].get();
    std::span<double> recv(recv_[t].get(), recv_elements(kind_, count_, me.size(), me.rank()));
    std::span<const double> in(send, count_);
    switch (kind_) {
      case Kind::allreduce:
        me.allreduce(in, recv, std::plus<>{});
        break;
      case Kind::reduce:
        me.reduce(in, recv, 0, std::plus<>{});
        break;
      case Kind::bcast:
        me.bcast(std::span<double>(send, count_), 0);
        break;
      case Kind::allgather:
        me.allgather(in, recv);
        break;
      case Kind::alltoall:
        me.alltoall(in, recv);
        break;
    }
  }

  tlc::Team& team_;
  Kind kind_;
  std::vector<Buffer> send_;
  std::vector<Buffer> recv_;
  std::size_t count_ = 0;
  Expected sums_;
};

// ---------------------------------------------------------------------------------------------
// Phase B: the copy kernel on the same threads. prepare(count): `count` elements per thread.

class CopyKernel : public Case {
 public:
  explicit CopyKernel(tlc::Team& team)
      : team_(team),
        src_(static_cast<std::size_t>(team.threads())),
        dst_(static_cast<std::size_t>(team.threads())) {}

  void prepare(std::size_t count) override {
    count_ = count;
    team_.run([&](tlc::Thread& me) {
      const auto t = static_cast<std::size_t>(me.local_index());
      src_[t].reset();
      dst_[t].reset();
      src_[t] = untouched_buffer(count);
      dst_[t] = untouched_buffer(count);
      for (std::size_t i = 0; i < count; ++i) {
        src_[t][i] = input_value(me.rank(), i);
        dst_[t][i] = 0;
      }
    });
  }

  double time(const Loop& loop) override {
    std::vector<PaddedDouble> seconds(src_.size());
    const Loop plain{loop.warmup, loop.iters, 0};  // arrival skew means nothing to a copy
    team_.run([&](tlc::Thread& me) {
      const auto t = static_cast<std::size_t>(me.local_index());
      const double* src = src_[t].get();
      double* dst = dst_[t].get();
      const std::size_t bytes = count_ * sizeof(double);
      seconds[t].value = timed_loop(
          plain, me.local_index(), me.threads(),
          [&] {
            std::memcpy(dst, src, bytes);
            // The copy is observable: the compiler may neither drop nor merge it.
            asm volatile("" : : "r"(dst) : "memory");
          },
          [&] { me.barrier(); });
    });
    return max_of(seconds);
  }

  std::string verify() override {
    std::vector<std::string> errors(src_.size());
    team_.run([&](tlc::Thread& me) {
      const auto t = static_cast<std::size_t>(me.local_index());
      poison(dst_[t].get(), count_);
      std::memcpy(dst_[t].get(), src_[t].get(), count_ * sizeof(double));
      if (std::memcmp(dst_[t].get(), src_[t].get(), count_ * sizeof(double)) != 0)
        errors[t] = "copy kernel, thread " + std::to_string(t) + ": copy differs";
    });
    for (const std::string& e : errors)
      if (!e.empty()) return e;
    return {};
  }

 private:
  tlc::Team& team_;
  std::vector<Buffer> src_;
  std::vector<Buffer> dst_;
  std::size_t count_ = 0;
};

// ---------------------------------------------------------------------------------------------
// Phase C: MPI everywhere, one buffer per process, on every process.

class MpiIntra : public Case {
 public:
  MpiIntra(Kind kind, int process, int processes)
      : kind_(kind), process_(process), processes_(processes), sums_(processes) {}

  void prepare(std::size_t count) override {
    count_ = count;
    send_.clear();
    recv_.clear();
    send_.shrink_to_fit();
    recv_.shrink_to_fit();
    send_.resize(count);
    recv_.assign(recv_elements(kind_, count, processes_, process_), 0.0);
    for (std::size_t i = 0; i < count; ++i) send_[i] = input_value(process_, i);
  }

  double time(const Loop& loop) override {
    return global_max(timed_loop(
        loop, process_, processes_, [&] { call(); }, [] { MPI_Barrier(MPI_COMM_WORLD); }));
  }

  std::string verify() override {
    const bool bcast = kind_ == Kind::bcast;
    double* out = bcast ? send_.data() : recv_.data();
    const std::size_t out_count = bcast ? send_.size() : recv_.size();
    if (!bcast || process_ != 0) poison(out, out_count);
    call();
    return check_output(kind_, out, out_count, count_, process_, processes_, sums_,
                        "MPI baseline, process " + std::to_string(process_));
  }

 private:
  void call() {
    const int n = mpi_count(count_);
    double* send = send_.data();
    double* recv = recv_.empty() ? nullptr : recv_.data();
    switch (kind_) {
      case Kind::allreduce:
        MPI_Allreduce(send, recv, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        break;
      case Kind::reduce:
        MPI_Reduce(send, recv, n, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
        break;
      case Kind::bcast:
        MPI_Bcast(send, n, MPI_DOUBLE, 0, MPI_COMM_WORLD);
        break;
      case Kind::allgather:
        MPI_Allgather(send, n, MPI_DOUBLE, recv, n, MPI_DOUBLE, MPI_COMM_WORLD);
        break;
      case Kind::alltoall: {
        const int block = n / processes_;
        MPI_Alltoall(send, block, MPI_DOUBLE, recv, block, MPI_DOUBLE, MPI_COMM_WORLD);
        break;
      }
    }
  }

  Kind kind_;
  int process_;
  int processes_;
  std::size_t count_ = 0;
  std::vector<double> send_;
  std::vector<double> recv_;
  Expected sums_;
};

// ---------------------------------------------------------------------------------------------
// Phase D: bare barriers of the team's threads.

// The textbook centralised sense-reversing barrier: one counter and one flag on one cache line,
// waiters spin on the flag with a pause instruction. Nothing else (no yielding, no blocking).
class SpinBarrier {
 public:
  explicit SpinBarrier(int threads) : threads_(threads), count_(threads) {}

  // `sense` is the caller's own, false before its first wait.
  void wait(bool& sense) {
    sense = !sense;
    if (count_.fetch_sub(1, std::memory_order_acq_rel) == 1) {
      count_.store(threads_, std::memory_order_relaxed);
      flag_.store(sense, std::memory_order_release);
    } else {
      while (flag_.load(std::memory_order_acquire) != sense) cpu_relax();
    }
  }

 private:
  const int threads_;
  alignas(64) std::atomic<int> count_;
  std::atomic<bool> flag_{false};
};

// The design of tlc's small-message path with nothing else: an 8-byte sum over the threads
// where each thread owns one cache line (single writer), carries its double in it next to a
// monotonic call number, and reads every thread's line in rank order (Jain et al.,
// [Jain] sec. II-III, docs/references.md). Two sets of lines used in turn, so a
// line is rewritten only when every reader has announced the next call. What tlc's inline
// allreduce adds to this is its call path (argument checks, fingerprint, kernel dispatch).
class LineAllreduce {
 public:
  explicit LineAllreduce(int threads) : threads_(threads), lines_(2 * threads) {}

  // `call` is the caller's own call number, 0 before its first call.
  double sum(int me, std::uint64_t& call, double value) {
    ++call;
    Line* set = &lines_[(call & 1) * threads_];
    set[me].value = value;
    set[me].call.store(call, std::memory_order_release);
    double total = 0;
    for (int t = 0; t < threads_; ++t) {
      while (set[t].call.load(std::memory_order_acquire) < call) cpu_relax();
      total += set[t].value;
    }
    return total;
  }

 private:
  struct alignas(64) Line {
    std::atomic<std::uint64_t> call{0};
    double value = 0;
  };
  const int threads_;
  std::vector<Line> lines_;
};

enum class BarrierKind { spin, std_barrier, tlc_barrier, line_allreduce };

class BarrierCase : public Case {
 public:
  BarrierCase(tlc::Team& team, BarrierKind kind) : team_(team), kind_(kind) {}

  void prepare(std::size_t) override {}

  double time(const Loop& loop) override {
    const int threads = team_.threads();
    std::vector<PaddedDouble> seconds(static_cast<std::size_t>(threads));
    const Loop plain{loop.warmup, loop.iters, 0};
    SpinBarrier spin(threads);
    std::barrier<> standard(threads);
    LineAllreduce lines(threads);
    std::atomic<int> wrong{0};
    team_.run([&](tlc::Thread& me) {
      const int t = me.local_index();
      double& out = seconds[static_cast<std::size_t>(t)].value;
      switch (kind_) {
        case BarrierKind::spin: {
          bool sense = false;
          auto wait = [&] { spin.wait(sense); };
          out = timed_loop(plain, t, threads, wait, wait);
          break;
        }
        case BarrierKind::std_barrier: {
          auto wait = [&] { standard.arrive_and_wait(); };
          out = timed_loop(plain, t, threads, wait, wait);
          break;
        }
        case BarrierKind::tlc_barrier: {
          auto wait = [&] { me.barrier(); };
          out = timed_loop(plain, t, threads, wait, wait);
          break;
        }
        case BarrierKind::line_allreduce: {
          std::uint64_t call = 0;
          auto reduce = [&] {
            if (lines.sum(t, call, t + 1.0) != threads * (threads + 1) / 2.0) wrong.store(1);
          };
          out = timed_loop(plain, t, threads, reduce, reduce);
          break;
        }
      }
    });
    if (wrong.load()) throw std::runtime_error("the bare line allreduce summed wrong");
    return max_of(seconds);
  }

 private:
  tlc::Team& team_;
  BarrierKind kind_;
};

// ---------------------------------------------------------------------------------------------
// Waiting without a core

// Every process calls it; it returns when all have. MPICH's blocking calls poll without end,
// which on a machine with one core per thread would take the core a measured thread needs.
void polite_barrier() {
  MPI_Request request = MPI_REQUEST_NULL;
  MPI_Ibarrier(MPI_COMM_WORLD, &request);
  for (;;) {
    int done = 0;
    MPI_Test(&request, &done, MPI_STATUS_IGNORE);
    if (done) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

// ---------------------------------------------------------------------------------------------
// Is anybody else using the machine? On a shared machine (a developer's, CI's) a compiler on
// one of two cores halves what both sides can do and turns every figure into noise; each row
// therefore says how much of the machine others took while it was measured:
// - others%: user time of other processes (compilers, tests run in user space). User time only:
//   the kernel time of our own wake-ups (timer and futex interrupts) is not attributed to any
//   process and would read as somebody else's.
// - steal%: time the hypervisor ran something else while a virtual CPU of ours wanted to run
//   (other guests; also our own spin loops, which KVM's pause-loop exiting hands back to it).

struct CpuSample {
  double user_s = -1;  // user and nice time of all CPUs, from /proc/stat; -1: unknown
  double steal_s = 0;  // steal time of all CPUs, from /proc/stat
  double own_s = 0;    // user time of all processes of this run (on process 0)
  Clock::time_point wall{};
};

void read_proc_stat(CpuSample& s) {
  std::FILE* f = std::fopen("/proc/stat", "r");
  if (!f) return;
  unsigned long long v[8] = {};  // user nice system idle iowait irq softirq steal
  const int got = std::fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2],
                              &v[3], &v[4], &v[5], &v[6], &v[7]);
  std::fclose(f);
  const long hz = sysconf(_SC_CLK_TCK);
  if (got < 2 || hz <= 0) return;
  s.user_s = static_cast<double>(v[0] + v[1]) / static_cast<double>(hz);
  s.steal_s = got >= 8 ? static_cast<double>(v[7]) / static_cast<double>(hz) : 0;
}

// Collective over MPI_COMM_WORLD; meaningful on process 0.
CpuSample cpu_sample() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  const double mine = static_cast<double>(usage.ru_utime.tv_sec) +
                      1e-6 * static_cast<double>(usage.ru_utime.tv_usec);
  CpuSample s;
  MPI_Reduce(&mine, &s.own_s, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
  read_proc_stat(s);
  s.wall = Clock::now();
  return s;
}

// Percent of the machine's CPU capacity; NaN when unknown. /proc/stat counts in clock ticks
// (10 ms), so over a row of a few tenths of a second a few percent are rounding.
struct Interference {
  double others = std::nan("");
  double steal = std::nan("");
};

Interference interference(const CpuSample& a, const CpuSample& b, int cpus) {
  Interference i;
  const double capacity = std::chrono::duration<double>(b.wall - a.wall).count() * cpus;
  if (a.user_s < 0 || b.user_s < 0 || capacity <= 0) return i;
  i.others = std::max(0.0, 100.0 * ((b.user_s - a.user_s) - (b.own_s - a.own_s)) / capacity);
  i.steal = std::max(0.0, 100.0 * (b.steal_s - a.steal_s) / capacity);
  return i;
}

// ---------------------------------------------------------------------------------------------
// Reporting

struct IntraInfo {
  int threads = 0;
  int processes = 0;
  bool pinned = false;
  int hardware_threads = 0;
  std::string node_env;
  std::string mpi_version;
  std::string thread_level;
  std::string algorithm;
  std::string iters_policy;
  std::string barrier_iters;
  double skew_us = 0;
};

struct IntraRow {
  std::size_t bytes = 0;  // per thread buffer (alltoall: per send buffer)
  int threads = 0;
  int iters = 0;               // tlc's timed calls, over all repetitions
  double moved = 0;            // bytes that must move
  std::size_t copy_bytes = 0;  // copied by each thread per copy call
  // Medians over the repetitions, seconds per call.
  double tlc_s = 0;
  double copy_s = 0;
  double mpi_s = 0;
  // Medians over the repetitions of the ratios within one repetition.
  double bound_over_tlc = 0;
  double mpi_over_tlc = 0;
  Interference load;      // what other processes and the hypervisor took meanwhile
  std::string algorithm;  // tlc's: forced, or what its selector picks for this size

  double copy_bw() const { return copy_s > 0 ? 2.0 * copy_bytes * threads / copy_s : 0; }
  double bound_s() const { return moved / copy_bw(); }
};

struct BarrierRow {
  std::string key;  // for CSV and JSON
  std::string what;
  int iters = 0;         // timed calls over all rounds
  double seconds = 0;    // median over the rounds
  double best = 0;       // fastest round
  double over_bare = 0;  // median over the rounds of seconds / the bare barrier's in that round
};

class IntraReporter {
 public:
  explicit IntraReporter(Format format, std::ostream& out) : format_(format), out_(out) {}

  void begin(const IntraInfo& info) {
    info_ = info;
    if (format_ == Format::table) {
      out_ << "# tlc-bench --intra: " << info.threads
           << " threads of one process against the memory-bandwidth bound of the same threads "
              "and against MPI everywhere ("
           << info.processes << " processes)\n"
           << "# tlc: process 0 alone, tlc::Team(MPI_COMM_SELF) of " << info.threads
           << " threads, pinned: " << (info.pinned ? "yes" : "no") << ", algorithm: "
           << (info.algorithm.empty() ? "selector's choice"
                                      : info.algorithm + " where the collective has it")
           << "; the other processes sleep (MPI_Ibarrier + MPI_Test + 1 ms sleeps)\n"
           << "# MPI everywhere: " << info.processes
           << " processes, one buffer each of the size of a thread's, on MPI_COMM_WORLD\n"
           << "# MPI: " << mpi_summary(info.mpi_version) << " (" << info.thread_level << ")"
           << (info.node_env.empty() ? "" : ", TLC_NODE=" + info.node_env) << "\n"
           << "# iterations: " << info.iters_policy
           << "; the repetitions of tlc, copy and MPI are taken in turn, each after one untimed "
              "call\n"
           << "# times: median repetition of the max over threads (processes) of the mean per "
              "call; bound/tlc and mpi/tlc: median over the repetitions of the ratio within one\n"
           << "# bound_us = bytes that must move / copy bandwidth. copy: the same " << info.threads
           << " threads each memcpy a private buffer\n"
           << "#   (first-touched by that thread) of copy_bytes = moved / (2*T), so the copy "
              "moves and touches as many bytes as the collective;\n"
           << "#   copy bandwidth copy_GB/s = (bytes read + bytes written) / time. bound/tlc: "
              "fraction of the bound reached (1 = at the bound)\n"
           << "# bytes that must move (T threads, n bytes per thread buffer): allreduce 2*T*n, "
              "reduce T*n + n, bcast T*n, allgather T*n + T*T*n, alltoall 2*T*n (n = send "
              "buffer)\n"
           << "# mpi/tlc: MPI-everywhere time / tlc time (> 1: tlc faster)\n"
           << "# others%, steal%: CPU capacity of the machine that other processes took (user "
              "time: compilers, tests) and that the hypervisor withheld (steal) while the row was "
              "measured;\n"
           << "#   figures of rows with others% well above 0 are not to be trusted\n";
      if (info.skew_us > 0)
        out_ << "# arrival skew: thread (process) t of T arrives t*" << info.skew_us
             << "/T us late in tlc and MPI; times are exit - arrival\n";
      if (info.hardware_threads > 0 && info.threads > info.hardware_threads)
        out_ << "# warning: " << info.threads << " threads on " << info.hardware_threads
             << " hardware threads: oversubscribed, the bound is not a bound\n";
      out_.flush();
    } else if (format_ == Format::csv) {
      out_ << "collective,threads,processes,bytes,iters,algorithm,tlc_us,moved_bytes,copy_bytes,"
              "copy_GBps,"
              "bound_us,bound/tlc,mpi_us,mpi/tlc,over_bare_barrier,others_pct,steal_pct"
           << std::endl;
    } else {
      out_ << "{\n"
           << "  \"benchmark\": \"tlc-bench --intra\",\n"
           << "  \"threads\": " << info.threads << ",\n"
           << "  \"processes\": " << info.processes << ",\n"
           << "  \"pinned\": " << (info.pinned ? "true" : "false") << ",\n"
           << "  \"tlc_node\": " << json_string(info.node_env) << ",\n"
           << "  \"algorithm\": " << json_string(info.algorithm) << ",\n"
           << "  \"iterations\": " << json_string(info.iters_policy) << ",\n"
           << "  \"barrier_iterations\": " << json_string(info.barrier_iters) << ",\n"
           << "  \"skew_us\": " << json_number("%g", info.skew_us) << ",\n"
           << "  \"mpi_library\": " << json_string(info.mpi_version) << ",\n"
           << "  \"mpi_thread_level\": " << json_string(info.thread_level) << ",\n"
           << "  \"hardware_threads\": " << info.hardware_threads << ",\n"
           << "  \"moved_bytes\": {\"allreduce\": \"2*T*n\", \"reduce\": \"T*n + n\", "
              "\"bcast\": \"T*n\", \"allgather\": \"T*n + T*T*n\", \"alltoall\": \"2*T*n\"},\n"
           << "  \"collectives\": [";
      out_.flush();
    }
  }

  void begin_collective(const IntraSpec& spec) {
    spec_ = &spec;
    if (format_ == Format::table) {
      out_ << "\n# " << spec.name << ": tlc: every thread " << spec.tlc_what
           << "; MPI: every process " << spec.mpi_what << "\n"
           << "#   bytes that must move: " << spec.moved_formula << "\n";
      char line[256];
      std::snprintf(line, sizeof line, "%10s %6s %-9s %11s %9s %10s %11s %9s %11s %8s %7s %6s",
                    "bytes", "iters", "algorithm", "tlc_us", "copy_GB/s", "copy_bytes", "bound_us",
                    "bound/tlc", "mpi_us", "mpi/tlc", "others%", "steal%");
      out_ << line << std::endl;
    } else if (format_ == Format::json) {
      out_ << (collectives_ ? ",\n" : "\n") << "    {\"name\": " << json_string(spec.name)
           << ", \"tlc\": " << json_string(spec.tlc_what)
           << ", \"mpi\": " << json_string(spec.mpi_what)
           << ", \"moved_bytes\": " << json_string(spec.moved_formula) << ", \"rows\": [";
      ++collectives_;
      rows_ = 0;
    }
  }

  void row(const IntraRow& r) {
    const double tlc_us = r.tlc_s * 1e6;
    const double bound_us = r.bound_s() * 1e6;
    const double mpi_us = r.mpi_s * 1e6;
    const double gbps = r.copy_bw() / 1e9;
    const double reached = r.bound_over_tlc;
    const double speedup = r.mpi_over_tlc;
    if (format_ == Format::table) {
      char line[256];
      std::snprintf(line, sizeof line, "%10zu %6d %-9s %11s %9s %10zu %11s %9s %11s %8s %7s %6s",
                    r.bytes, r.iters, r.algorithm.c_str(), number("%.2f", tlc_us).c_str(),
                    number("%.2f", gbps).c_str(), r.copy_bytes, number("%.2f", bound_us).c_str(),
                    number("%.3f", reached).c_str(), number("%.2f", mpi_us).c_str(),
                    number("%.2f", speedup).c_str(), number("%.0f", r.load.others).c_str(),
                    number("%.0f", r.load.steal).c_str());
      out_ << line << std::endl;
    } else if (format_ == Format::csv) {
      out_ << spec_->name << ',' << info_.threads << ',' << info_.processes << ',' << r.bytes << ','
           << r.iters << ',' << r.algorithm << ',' << number("%.4f", tlc_us) << ','
           << number("%.0f", r.moved) << ',' << r.copy_bytes << ',' << number("%.4f", gbps) << ','
           << number("%.4f", bound_us) << ',' << number("%.4f", reached) << ','
           << number("%.4f", mpi_us) << ',' << number("%.4f", speedup) << ",,"
           << number("%.1f", r.load.others) << ',' << number("%.1f", r.load.steal) << std::endl;
    } else {
      out_ << (rows_ ? ",\n" : "\n") << "      {\"bytes\": " << r.bytes
           << ", \"iters\": " << r.iters << ", \"algorithm\": " << json_string(r.algorithm)
           << ", \"tlc_us\": " << json_number("%.4f", tlc_us)
           << ", \"moved_bytes\": " << json_number("%.0f", r.moved)
           << ", \"copy_bytes\": " << r.copy_bytes
           << ", \"copy_GBps\": " << json_number("%.4f", gbps)
           << ", \"bound_us\": " << json_number("%.4f", bound_us)
           << ", \"bound/tlc\": " << json_number("%.4f", reached)
           << ", \"mpi_us\": " << json_number("%.4f", mpi_us)
           << ", \"mpi/tlc\": " << json_number("%.4f", speedup)
           << ", \"others_percent\": " << json_number("%.1f", r.load.others)
           << ", \"steal_percent\": " << json_number("%.1f", r.load.steal) << "}";
      out_.flush();
      ++rows_;
    }
  }

  void end_collective() {
    if (format_ == Format::json) {
      out_ << "\n    ]}";
      out_.flush();
    }
  }

  void barriers(const std::vector<BarrierRow>& rows, const Interference& load) {
    if (format_ == Format::table) {
      out_ << "\n# barriers of the same " << info_.threads
           << " threads against an 8-byte allreduce, back-to-back calls; " << info_.barrier_iters
           << "\n"
           << "#   bare: sense-reversing spin barrier on std::atomic (counter and flag on one "
              "cache line, pause while spinning)\n"
           << "#   bare line allreduce: an 8-byte sum as tlc's inline form makes it, with nothing "
              "else: one line per thread (single writer) carrying a call number and the double, "
              "every line read in rank order\n"
           << "#   us: median over the rounds, best_us: fastest round, /bare: median over the "
              "rounds of the time over the bare barrier's in the same round\n"
           << "#   others%: " << number("%.0f", load.others)
           << ", steal%: " << number("%.0f", load.steal) << "\n";
      char line[256];
      std::snprintf(line, sizeof line, "%-36s %8s %10s %10s %8s", "what", "iters", "us", "best_us",
                    "/bare");
      out_ << line << std::endl;
      for (const BarrierRow& r : rows) {
        std::snprintf(line, sizeof line, "%-36s %8d %10s %10s %8s", r.what.c_str(), r.iters,
                      number("%.3f", r.seconds * 1e6).c_str(), number("%.3f", r.best * 1e6).c_str(),
                      number("%.2f", r.over_bare).c_str());
        out_ << line << std::endl;
      }
    } else if (format_ == Format::csv) {
      for (const BarrierRow& r : rows)
        out_ << r.key << ',' << info_.threads << ',' << info_.processes << ','
             << (r.key.find("allreduce") != std::string::npos ? "8" : "0") << ',' << r.iters << ",,"
             << number("%.4f", r.seconds * 1e6) << ",,,,,,,," << number("%.4f", r.over_bare) << ','
             << number("%.1f", load.others) << ',' << number("%.1f", load.steal) << std::endl;
    } else {
      out_ << "\n  ],\n  \"barriers\": [";
      for (std::size_t i = 0; i < rows.size(); ++i)
        out_ << (i ? ",\n" : "\n") << "    {\"key\": " << json_string(rows[i].key)
             << ", \"what\": " << json_string(rows[i].what) << ", \"iters\": " << rows[i].iters
             << ", \"us\": " << json_number("%.4f", rows[i].seconds * 1e6)
             << ", \"best_us\": " << json_number("%.4f", rows[i].best * 1e6)
             << ", \"over_bare\": " << json_number("%.4f", rows[i].over_bare)
             << ", \"others_percent\": " << json_number("%.1f", load.others)
             << ", \"steal_percent\": " << json_number("%.1f", load.steal) << "}";
      barriers_done_ = true;
      out_.flush();
    }
  }

  void end(double seconds, const Interference& load) {
    if (format_ == Format::table) {
      out_ << "\n# run took " << number("%.1f", seconds)
           << " s; over the whole run others%: " << number("%.1f", load.others)
           << ", steal%: " << number("%.1f", load.steal) << std::endl;
    } else if (format_ == Format::json) {
      out_ << (barriers_done_ ? "\n  ]" : "\n  ],\n  \"barriers\": []")
           << ",\n  \"seconds\": " << json_number("%.1f", seconds)
           << ",\n  \"others_percent\": " << json_number("%.1f", load.others)
           << ",\n  \"steal_percent\": " << json_number("%.1f", load.steal) << "\n}" << std::endl;
    }
  }

 private:
  Format format_;
  std::ostream& out_;
  IntraInfo info_;
  const IntraSpec* spec_ = nullptr;
  int collectives_ = 0;
  int rows_ = 0;
  bool barriers_done_ = false;
};

// ---------------------------------------------------------------------------------------------
// The run

[[noreturn]] void fail(const char* collective, std::size_t bytes, const std::string& what) {
  std::fprintf(stderr, "tlc-bench --intra: WRONG RESULT in %s with %zu bytes per thread: %s\n",
               collective, bytes, what.c_str());
  std::fflush(stderr);
  MPI_Abort(MPI_COMM_WORLD, 3);
  std::abort();
}

void verify_or_fail(Case& c, const char* collective, std::size_t bytes) {
  if (std::string what = c.verify(); !what.empty()) fail(collective, bytes, what);
}

// Element counts of one collective: alltoall needs a whole number of elements per block.
std::vector<std::size_t> counts_for(Kind kind, const Options& o, int threads) {
  std::vector<std::size_t> counts;
  const auto t = static_cast<std::size_t>(threads);
  for (std::size_t count : element_counts(o)) {
    if (kind == Kind::alltoall) count = (count + t - 1) / t * t;
    if (counts.empty() || counts.back() != count) counts.push_back(count);
  }
  return counts;
}

// The algorithm tlc runs for one call of `bytes` per thread buffer: the forced one, else the
// selector's choice (which honours TLC_ALGO_<COLLECTIVE>).
bool has_algorithm(tlc::Collective collective, const std::string& name) {
  for (const tlc::AlgorithmDescription& a : tlc::algorithms())
    if (a.collective == collective && a.name == name) return true;
  return false;
}

std::string algorithm_for(const IntraSpec& spec, std::size_t bytes, const tlc::Team& team,
                          const Options& o) {
  if (!o.algorithm.empty() && has_algorithm(spec.collective, o.algorithm)) return o.algorithm;
  std::vector<int> domains;
  for (const tlc::ThreadPlacement& t : team.placement().threads)
    if (std::find(domains.begin(), domains.end(), t.numa) == domains.end())
      domains.push_back(t.numa);
  tlc::SelectionQuery query;
  query.collective = spec.collective;
  query.bytes = bytes;
  query.processes = 1;
  query.threads = team.threads();
  query.numa_domains = std::max<int>(1, static_cast<int>(domains.size()));
  return tlc::select_algorithm(query).name;
}

// More calls than the sweep makes. Small messages take well under a microsecond: its cap of 1000
// calls would be a fraction of a millisecond per measurement, and one hiccup of the machine
// would decide it. Large ones are bandwidth-bound, and memory bandwidth on a shared machine
// wanders: its 256 MiB would be 16 calls of 16 MiB. The time budget per measurement (0.2 s)
// still bounds every count.
constexpr IterationLimits kIntraLimits{std::size_t{1} << 30, 20000};

std::string intra_iteration_policy(const Options& o) {
  const std::string iters =
      o.iters ? "fixed " + std::to_string(*o.iters)
              : "adaptive per implementation, min(1 GiB / size, 0.2 s / warm-up time per call) "
                "in [4, " +
                    std::to_string(kIntraLimits.max_iters) + "] (iters column: tlc's)";
  const std::string warmup = o.warmup ? std::to_string(*o.warmup) : "adaptive";
  return iters + ", median of " + std::to_string(o.reps) + " repetitions, warm-up " + warmup;
}

// Phase D: rounds of back-to-back calls, every case once per round, so that the ratios compare
// calls made moments apart (on a shared machine the speed of a spin wait drifts by 2x within
// seconds).
constexpr int kBarrierCalls = 100000;    // timed calls per case over all rounds
constexpr int kBarrierRoundsPerRep = 5;  // rounds = this * --reps
constexpr int kBarrierWarmup = 200;      // untimed calls before each round's timed ones

std::string barrier_policy(const Options& o) {
  const int rounds = kBarrierRoundsPerRep * o.reps;
  return std::to_string(o.iters.value_or(kBarrierCalls)) + " timed calls per case in " +
         std::to_string(rounds) + " interleaved rounds, each after " +
         std::to_string(o.warmup.value_or(kBarrierWarmup)) + " untimed calls";
}

std::vector<BarrierRow> measure_barriers(tlc::Team& team, const Options& o) {
  BarrierCase bare(team, BarrierKind::spin);
  BarrierCase standard(team, BarrierKind::std_barrier);
  BarrierCase own(team, BarrierKind::tlc_barrier);
  BarrierCase lines(team, BarrierKind::line_allreduce);
  TlcIntra allreduce(team, Kind::allreduce);
  allreduce.prepare(1);
  verify_or_fail(allreduce, "allreduce", sizeof(double));
  struct Entry {
    const char* key;
    const char* what;
    Case* c;
  };
  const Entry entries[] = {{"bare_barrier", "bare spin barrier (std::atomic)", &bare},
                           {"std_barrier", "std::barrier", &standard},
                           {"tlc_barrier", "tlc me.barrier()", &own},
                           {"line_allreduce_8B", "bare line allreduce, 8 B", &lines},
                           {"allreduce_8B", "tlc me.allreduce, 8 B (1 double)", &allreduce}};
  constexpr std::size_t kEntries = std::size(entries);
  const int rounds = kBarrierRoundsPerRep * o.reps;
  const int iters = o.iters.value_or(kBarrierCalls);
  const int warmup = o.warmup.value_or(kBarrierWarmup);
  std::vector<double> seconds[kEntries];
  std::vector<double> ratios[kEntries];
  int calls[kEntries] = {};
  for (int r = 0; r < rounds; ++r) {
    double round[kEntries];
    for (std::size_t e = 0; e < kEntries; ++e) {
      const int n = calls_in(iters, rounds, r);
      round[e] = entries[e].c->time({warmup, n, 0});
      seconds[e].push_back(round[e]);
      calls[e] += n;
    }
    for (std::size_t e = 0; e < kEntries; ++e) ratios[e].push_back(round[e] / round[0]);
  }
  std::vector<BarrierRow> rows;
  for (std::size_t e = 0; e < kEntries; ++e)
    rows.push_back({entries[e].key, entries[e].what, calls[e], median(seconds[e]),
                    *std::min_element(seconds[e].begin(), seconds[e].end()), median(ratios[e])});
  return rows;
}

void run(const Options& o, const std::vector<const IntraSpec*>& specs, bool barriers,
         tlc::Team* team, const tlc::Environment& env, int process, int processes, int threads) {
  IntraReporter reporter(o.format, std::cout);
  if (process == 0) {
    IntraInfo info;
    info.threads = threads;
    info.processes = processes;
    info.pinned = team->placement().pinned;
    info.hardware_threads = static_cast<int>(std::thread::hardware_concurrency());
    if (const char* node = std::getenv("TLC_NODE")) info.node_env = node;
    info.mpi_version = tlc::Environment::mpi_library_version();
    info.thread_level = tlc::Environment::thread_level_name(env.thread_level());
    info.algorithm = o.algorithm;
    info.iters_policy = intra_iteration_policy(o);
    info.barrier_iters = barrier_policy(o);
    info.skew_us = o.skew_us;
    reporter.begin(info);
  }
  const Clock::time_point start = Clock::now();
  const CpuSample run_start = cpu_sample();
  const int reps = o.reps;
  const int cpus = static_cast<int>(std::thread::hardware_concurrency());

  for (const IntraSpec* spec : specs) {
    std::unique_ptr<TlcIntra> tlc;
    std::unique_ptr<CopyKernel> copy;
    if (process == 0) {
      tlc = std::make_unique<TlcIntra>(*team, spec->kind);
      copy = std::make_unique<CopyKernel>(*team);
      reporter.begin_collective(*spec);
    }
    MpiIntra mpi(spec->kind, process, processes);
    for (const std::size_t count : counts_for(spec->kind, o, threads)) {
      const std::size_t bytes = count * sizeof(double);
      IntraRow row;
      row.bytes = bytes;
      row.threads = threads;
      row.moved = moved_bytes(spec->kind, threads, count);
      if (process == 0) row.algorithm = algorithm_for(*spec, bytes, *team, o);
      // The copy kernel moves and touches as many bytes as the collective.
      const double per_thread = row.moved / (2.0 * threads);
      const auto copy_count = std::max<std::size_t>(
          static_cast<std::size_t>(std::ceil(per_thread / sizeof(double))), 1);
      row.copy_bytes = copy_count * sizeof(double);

      const CpuSample before = cpu_sample();
      // Buffers, one verified call each, warm-up and iteration counts.
      int tlc_iters = 0;
      int copy_iters = 0;
      if (process == 0) {
        tlc->prepare(count);
        verify_or_fail(*tlc, spec->name, bytes);
        copy->prepare(copy_count);
        verify_or_fail(*copy, spec->name, bytes);
        tlc_iters = calibrate(*tlc, bytes, o, kIntraLimits);
        copy_iters = calibrate(*copy, row.copy_bytes, o, kIntraLimits);
      }
      polite_barrier();
      mpi.prepare(count);
      verify_or_fail(mpi, spec->name, bytes);
      const int mpi_iters = calibrate(mpi, bytes, o, kIntraLimits);

      // Repetitions in turn: tlc and the copy kernel on process 0 while the others sleep, then
      // MPI everywhere. Each ratio compares times taken moments apart.
      std::vector<double> tlc_s, copy_s, mpi_s, reached, speedup;
      for (int r = 0; r < reps; ++r) {
        if (process == 0) {
          tlc_s.push_back(tlc->time({1, calls_in(tlc_iters, reps, r), o.skew_us}));
          copy_s.push_back(copy->time({1, calls_in(copy_iters, reps, r), 0}));
          row.iters += calls_in(tlc_iters, reps, r);
        }
        polite_barrier();
        mpi_s.push_back(mpi.time({1, calls_in(mpi_iters, reps, r), o.skew_us}));
        if (process == 0) {
          IntraRow one = row;
          one.copy_s = copy_s.back();
          reached.push_back(one.bound_s() / tlc_s.back());
          speedup.push_back(mpi_s.back() / tlc_s.back());
        }
      }
      mpi.prepare(0);
      const CpuSample after = cpu_sample();
      if (process == 0) {
        row.load = interference(before, after, cpus);
        tlc->prepare(0);  // frees the large buffers before the next size
        copy->prepare(0);
        row.tlc_s = median(tlc_s);
        row.copy_s = median(copy_s);
        row.mpi_s = median(mpi_s);
        row.bound_over_tlc = median(reached);
        row.mpi_over_tlc = median(speedup);
        reporter.row(row);
      }
    }
    if (process == 0) reporter.end_collective();
  }

  if (barriers) {
    const CpuSample before = cpu_sample();
    std::vector<BarrierRow> rows;
    if (process == 0) rows = measure_barriers(*team, o);
    polite_barrier();
    const CpuSample after = cpu_sample();
    if (process == 0) reporter.barriers(rows, interference(before, after, cpus));
  }
  const CpuSample run_end = cpu_sample();
  if (process == 0) reporter.end(seconds_since(start), interference(run_start, run_end, cpus));
  std::fflush(stdout);
}

}  // namespace

int run_intra(const Options& o, const tlc::Environment& env) {
  int process = 0;
  int processes = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &process);
  MPI_Comm_size(MPI_COMM_WORLD, &processes);
  const int threads = o.threads > 0 ? o.threads : processes;
  // Argument errors are the same on every process: report once and leave cleanly.
  if (threads != processes) {
    if (process == 0)
      std::cerr << "tlc-bench --intra: MPI everywhere runs one process per tlc thread, so launch "
                   "as many processes as --threads: mpiexec -n "
                << threads << " (got -n " << processes << " with --threads " << threads << ")\n";
    return 2;
  }
  std::vector<const IntraSpec*> specs;
  bool barriers = false;
  if (o.collective == "all") {
    for (const IntraSpec& s : kSpecs) specs.push_back(&s);
    barriers = true;
  } else if (o.collective == "barrier") {
    barriers = true;
  } else {
    for (const IntraSpec& s : kSpecs)
      if (o.collective == s.name) specs.push_back(&s);
    if (specs.empty()) {
      if (process == 0)
        std::cerr << "tlc-bench --intra: unknown collective '" << o.collective
                  << "' (available: allreduce, reduce, bcast, allgather, alltoall, barrier, "
                     "all)\n";
      return 2;
    }
    barriers = specs.front()->kind == Kind::allreduce;
  }

  // Process 0 alone builds its team; everybody learns whether that worked.
  std::unique_ptr<tlc::Team> team;
  std::string error;
  if (process == 0) {
    tlc::TeamOptions options;
    options.threads = threads;
    options.pin = o.pin;
    // --algorithm applies to the measured collectives that have it (two_level: the reductions);
    // the others keep the selector's choice, and the algorithm column says which ran.
    bool known = o.algorithm.empty() || specs.empty();
    for (const IntraSpec* s : specs)
      if (!o.algorithm.empty() && has_algorithm(s->collective, o.algorithm)) {
        options.algorithms[s->collective] = o.algorithm;
        known = true;
      }
    try {
      if (!known)
        throw std::invalid_argument("no measured collective has an algorithm '" + o.algorithm +
                                    "' (tlc-info --algorithms lists them)");
      team = std::make_unique<tlc::Team>(MPI_COMM_SELF, options);
      if (team->threads() != threads)
        error = "the team has " + std::to_string(team->threads()) + " threads, not " +
                std::to_string(threads);
    } catch (const std::exception& e) {
      error = e.what();
    }
  }
  int failed = error.empty() ? 0 : 1;
  MPI_Bcast(&failed, 1, MPI_INT, 0, MPI_COMM_WORLD);
  if (failed) {
    if (process == 0) std::cerr << "tlc-bench --intra: cannot build the team: " << error << "\n";
    return 1;
  }

  // Later failures may hit one process while the others wait.
  try {
    run(o, specs, barriers, team.get(), env, process, processes, threads);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tlc-bench --intra: process %d: %s\n", process, e.what());
    std::fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  return 0;
}

}  // namespace tlc_bench
