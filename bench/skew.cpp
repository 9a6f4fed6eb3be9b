// tlc-bench --skew: what arrival imbalance costs, and how much of it leaders elected by arrival
// recover (Parsons [Parsons] ch. 3.3 and 3.7; docs/imbalance.md).
//
// Per collective, size and delay distribution, every call of every implementation is:
//   1. a synchronisation of all threads of all processes (std::barrier per process, MPI_Barrier
//      by thread 0, std::barrier), so that each call starts from aligned threads;
//   2. each thread sleeps its delay (sleeping, not spinning: a spinning thread would take the
//      core the others need), drawn from a fixed seed per call and global rank, so every
//      implementation sees the same delays;
//   3. arrival stamp, the collective, exit stamp; the result is checked afterwards, every call.
// Measures, over all threads of all calls: mean time in the collective (exit - own arrival) and
// mean time after the last arrival (exit - the latest arrival of any thread of any process, 0
// for a thread that left before it; the processes' steady clocks are compared, so they must
// share a machine, as with TLC_NODE=process).
// Implementations, measured in turn (one call loop each per repetition, --reps repetitions): tlc
// with static leaders (the plan's choice), tlc with leaders elected by arrival (the dynamic
// algorithm forced; bcast and reduce have it), and the master-only pattern (barrier, the threads
// combine or copy through a shared buffer, thread 0 calls MPI, barrier). Ratios are medians of
// the ratios within one repetition.
#include <algorithm>
#include <barrier>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <mpi.h>

#include "bench.hpp"

namespace tlc_bench {

namespace {

enum class Skew { none, uniform, exponential, late_leader, late_other };
constexpr Skew all_skews[] = {Skew::none, Skew::uniform, Skew::exponential, Skew::late_leader,
                              Skew::late_other};

const char* name_of(Skew s) {
  switch (s) {
    case Skew::none:
      return "none";
    case Skew::uniform:
      return "uniform";
    case Skew::exponential:
      return "exponential";
    case Skew::late_leader:
      return "late-leader";
    case Skew::late_other:
      return "late-other";
  }
  return "?";
}

enum class Impl { static_leaders, dynamic_leaders, master_only };
constexpr int impl_count = 3;

struct Shape {
  int processes = 1, threads = 1, ranks = 1, first_rank = 0, process = 0;
  // The late thread of late-leader: thread 0 (a static leader) of the last process; of
  // late-other: the last thread of the last process (no static leader when it has two threads).
  int late_leader() const { return ranks - threads_of_last; }
  int late_other() const { return ranks - 1; }
  int threads_of_last = 1;
};

// The delay of global rank r before call i: the same for every implementation.
double delay_seconds(Skew s, double mean_us, unsigned seed, int call, int rank,
                     const Shape& shape) {
  std::mt19937_64 random(seed * 1000003ull + static_cast<unsigned>(call) * 7919ull +
                         static_cast<unsigned>(rank));
  const double d = mean_us * 1e-6;
  switch (s) {
    case Skew::none:
      return 0;
    case Skew::uniform:
      return std::uniform_real_distribution<double>(0, d)(random);
    case Skew::exponential:
      return std::exponential_distribution<double>(1 / d)(random);
    case Skew::late_leader:
      return rank == shape.late_leader() ? d : 0;
    case Skew::late_other:
      return rank == shape.late_other() ? d : 0;
  }
  return 0;
}

double now_seconds() {
  return std::chrono::duration<double>(Clock::now().time_since_epoch()).count();
}

// The buffers of one thread and what the calls need to share.
struct Buffers {
  std::vector<double> send, recv;
};

struct Measure {
  double in = 0, after = 0;  // mean seconds per thread and call
  long wrong = 0;
};

class SkewBench {
 public:
  SkewBench(const Options& o, tlc::Collective c, std::size_t count) : o_(o), c_(c), n_(count) {}

  void make_teams() {
    tlc::TeamOptions base;
    base.threads = o_.threads;
    base.pin = o_.pin;
    static_ = std::make_unique<tlc::Team>(MPI_COMM_WORLD, base);
    tlc::TeamOptions dynamic = base;
    dynamic.algorithms[c_] = "dynamic";
    dynamic.fallback = "error";
    if (has_dynamic()) dynamic_ = std::make_unique<tlc::Team>(MPI_COMM_WORLD, dynamic);
    shape_.processes = static_->processes();
    shape_.threads = static_->threads();
    shape_.ranks = static_->size();
    shape_.process = static_->process();
    int mine = shape_.threads;
    std::vector<int> counts(static_cast<std::size_t>(shape_.processes));
    MPI_Allgather(&mine, 1, MPI_INT, counts.data(), 1, MPI_INT, MPI_COMM_WORLD);
    shape_.threads_of_last = counts.back();
    buffers_.resize(static_cast<std::size_t>(shape_.threads));
    shared_.assign(n_, 0.0);
    sync_ = std::make_unique<std::barrier<>>(shape_.threads);
  }

  bool has_dynamic() const { return c_ == tlc::Collective::reduce || c_ == tlc::Collective::bcast; }
  const Shape& shape() const { return shape_; }

  Measure run(Impl impl, Skew skew, int calls, int first_call) {
    tlc::Team& team = impl == Impl::dynamic_leaders ? *dynamic_ : *static_;
    const auto T = static_cast<std::size_t>(shape_.threads);
    std::vector<double> arrival(T * static_cast<std::size_t>(calls)),
        exit(T * static_cast<std::size_t>(calls));
    std::vector<long> wrong(T, 0);
    team.run([&](tlc::Thread& me) {
      const auto t = static_cast<std::size_t>(me.local_index());
      Buffers& b = buffers_[t];
      if (b.send.size() != n_) {  // first touch by the thread that uses them
        b.send.assign(n_, 0.0);
        b.recv.assign(n_, 0.0);
      }
      for (int i = 0; i < calls; ++i) {
        const int call = first_call + i;
        fill(me, b, call);
        synchronise(me.local_index());
        const double delay = delay_seconds(skew, o_.delay_us, o_.seed, call, me.rank(), shape_);
        if (delay > 0) std::this_thread::sleep_for(std::chrono::duration<double>(delay));
        const double a = now_seconds();
        one_call(impl, me, b);
        const double e = now_seconds();
        arrival[static_cast<std::size_t>(i) * T + t] = a;
        exit[static_cast<std::size_t>(i) * T + t] = e;
        wrong[t] += check(me, b, call);
      }
    });
    // The latest arrival of each call over every process.
    std::vector<double> last(static_cast<std::size_t>(calls), 0.0);
    for (int i = 0; i < calls; ++i)
      for (std::size_t t = 0; t < T; ++t)
        last[static_cast<std::size_t>(i)] = std::max(last[static_cast<std::size_t>(i)],
                                                     arrival[static_cast<std::size_t>(i) * T + t]);
    MPI_Allreduce(MPI_IN_PLACE, last.data(), calls, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    double sums[3] = {0, 0, 0};
    for (int i = 0; i < calls; ++i)
      for (std::size_t t = 0; t < T; ++t) {
        const std::size_t k = static_cast<std::size_t>(i) * T + t;
        sums[0] += exit[k] - arrival[k];
        sums[1] += std::max(0.0, exit[k] - last[static_cast<std::size_t>(i)]);
      }
    for (long w : wrong) sums[2] += static_cast<double>(w);
    MPI_Allreduce(MPI_IN_PLACE, sums, 3, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    const double samples = static_cast<double>(calls) * shape_.ranks;
    return {sums[0] / samples, sums[1] / samples, static_cast<long>(sums[2])};
  }

 private:
  void synchronise(int local) {
    sync_->arrive_and_wait();
    if (local == 0) MPI_Barrier(MPI_COMM_WORLD);
    sync_->arrive_and_wait();
  }

  static double value(int rank, int call, std::size_t i) {
    return input_value(rank, i) + static_cast<double>(call % 5);
  }
  static constexpr int root = 0;

  void fill(tlc::Thread& me, Buffers& b, int call) {
    if (c_ == tlc::Collective::bcast) {
      for (std::size_t i = 0; i < n_; ++i) b.recv[i] = me.rank() == root ? value(root, call, i) : 0;
    } else {
      for (std::size_t i = 0; i < n_; ++i) b.send[i] = value(me.rank(), call, i);
      std::fill(b.recv.begin(), b.recv.end(), 0.0);
    }
  }

  long check(tlc::Thread& me, const Buffers& b, int call) const {
    const bool has_result = c_ != tlc::Collective::reduce || me.rank() == root;
    if (!has_result) return 0;
    long wrong = 0;
    for (std::size_t i = 0; i < n_; ++i) {
      double want = 0;
      if (c_ == tlc::Collective::bcast) {
        want = value(root, call, i);
      } else {
        for (int r = 0; r < shape_.ranks; ++r) want += value(r, call, i);
      }
      if (b.recv[i] != want) ++wrong;
      if (i > 64 && n_ > 4096) i += 63;  // large buffers: every 64th element past the first
    }
    return wrong;
  }

  void one_call(Impl impl, tlc::Thread& me, Buffers& b) {
    const std::span<const double> send(b.send);
    const std::span<double> recv(b.recv);
    if (impl != Impl::master_only) {
      switch (c_) {
        case tlc::Collective::reduce:
          return me.reduce(send, recv, root);
        case tlc::Collective::bcast:
          return me.bcast(recv, root);
        default:
          return me.allreduce(send, recv);
      }
    }
    master_only(me, b);
  }

  // The OpenMP master-only pattern on the same threads: barrier, the threads combine their
  // buffers (or the root publishes its data) through a shared buffer, thread 0 runs the MPI
  // call, barrier, the threads that need the result copy it out.
  void master_only(tlc::Thread& me, Buffers& b) {
    const int t = me.local_index(), T = shape_.threads;
    const bool root_process = shape_.process == 0;
    const std::size_t begin = n_ * static_cast<std::size_t>(t) / static_cast<std::size_t>(T),
                      end = n_ * static_cast<std::size_t>(t + 1) / static_cast<std::size_t>(T);
    if (c_ == tlc::Collective::bcast) {
      if (me.rank() == root) std::memcpy(shared_.data(), b.recv.data(), n_ * sizeof(double));
      sync_->arrive_and_wait();
      if (t == 0) MPI_Bcast(shared_.data(), static_cast<int>(n_), MPI_DOUBLE, 0, MPI_COMM_WORLD);
      sync_->arrive_and_wait();
      if (me.rank() != root) std::memcpy(b.recv.data(), shared_.data(), n_ * sizeof(double));
      return;
    }
    sync_->arrive_and_wait();
    for (std::size_t i = begin; i < end; ++i) {
      double s = 0;
      for (int u = 0; u < T; ++u) s += buffers_[static_cast<std::size_t>(u)].send[i];
      shared_[i] = s;
    }
    sync_->arrive_and_wait();
    if (t == 0) {
      if (c_ == tlc::Collective::reduce)
        MPI_Reduce(root_process ? MPI_IN_PLACE : shared_.data(),
                   root_process ? shared_.data() : nullptr, static_cast<int>(n_), MPI_DOUBLE,
                   MPI_SUM, 0, MPI_COMM_WORLD);
      else
        MPI_Allreduce(MPI_IN_PLACE, shared_.data(), static_cast<int>(n_), MPI_DOUBLE, MPI_SUM,
                      MPI_COMM_WORLD);
    }
    sync_->arrive_and_wait();
    if (c_ != tlc::Collective::reduce || me.rank() == root)
      std::memcpy(b.recv.data(), shared_.data(), n_ * sizeof(double));
  }

  const Options& o_;
  tlc::Collective c_;
  std::size_t n_;
  Shape shape_;
  std::unique_ptr<tlc::Team> static_, dynamic_;
  std::vector<Buffers> buffers_;
  std::vector<double> shared_;
  std::unique_ptr<std::barrier<>> sync_;
};

}  // namespace

int run_skew(const Options& o) {
  int process = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &process);
  std::vector<tlc::Collective> collectives;
  if (o.collective == "all" || o.collective.empty()) {
    collectives = {tlc::Collective::reduce, tlc::Collective::bcast, tlc::Collective::allreduce};
  } else if (o.collective == "reduce") {
    collectives = {tlc::Collective::reduce};
  } else if (o.collective == "bcast") {
    collectives = {tlc::Collective::bcast};
  } else if (o.collective == "allreduce") {
    collectives = {tlc::Collective::allreduce};
  } else {
    if (process == 0)
      std::fprintf(stderr,
                   "tlc-bench --skew: --collective takes reduce, bcast, allreduce or all\n");
    return 2;
  }
  const std::vector<std::size_t> sizes =
      o.skew_sizes.empty()
          ? std::vector<std::size_t>{64, std::size_t{64} << 10, std::size_t{4} << 20}
          : o.skew_sizes;
  std::vector<Skew> skews;
  for (const std::string& name : o.skews) {
    bool known = false;
    for (const Skew s : all_skews)
      if (name == name_of(s)) {
        skews.push_back(s);
        known = true;
      }
    if (!known) {
      if (process == 0)
        std::fprintf(stderr,
                     "tlc-bench --skew: unknown skew '%s' (none, uniform, exponential, "
                     "late-leader, late-other)\n",
                     name.c_str());
      return 2;
    }
  }
  if (skews.empty()) skews.assign(std::begin(all_skews), std::end(all_skews));
  const int calls = o.iters.value_or(20);
  const int reps = std::max(1, o.reps);
  bool header = false;
  long total_wrong = 0;
  for (const tlc::Collective c : collectives)
    for (const std::size_t bytes : sizes) {
      const std::size_t count = std::max<std::size_t>(1, bytes / sizeof(double));
      SkewBench bench(o, c, count);
      bench.make_teams();
      const Shape& shape = bench.shape();
      if (process == 0 && !header) {
        header = true;
        std::printf(
            "# tlc-bench --skew: %d process(es) x %d thread(s) (process 0), delay D = %.0f us, "
            "seed %u, %d calls x %d repetitions per case, root 0\n"
            "# skews: none; uniform [0, D]; exponential, mean D; late-leader: rank %d (thread 0 "
            "of the last process, a static leader) late by D; late-other: rank %d late by D\n"
            "# in: mean time in the collective (exit - own arrival); after: mean time after the "
            "last arrival of any thread (0 if it left before); us, median repetition\n"
            "# dyn/st, master/st: medians of the ratios within one repetition (< 1: less time "
            "than static leaders)\n",
            shape.processes, shape.threads, o.delay_us, o.seed, calls, reps, shape.late_leader(),
            shape.late_other());
        std::printf("%-9s %9s %-11s | %9s %9s | %9s %9s | %9s %9s | %7s %7s | %7s %7s | %s\n",
                    "coll", "size", "skew", "st in", "st after", "dyn in", "dyn aft", "mst in",
                    "mst aft", "dyn/st", "dyn/st", "mst/st", "mst/st", "wrong");
        std::printf("%-9s %9s %-11s | %9s %9s | %9s %9s | %9s %9s | %7s %7s | %7s %7s |\n", "", "",
                    "", "", "", "", "", "", "", "in", "after", "in", "after");
      }
      for (const Skew skew : skews) {
        std::vector<double> in[impl_count], after[impl_count], dyn_in, dyn_after, mst_in, mst_after;
        long wrong = 0;
        for (int r = 0; r < reps; ++r) {
          Measure m[impl_count];
          for (int i = 0; i < impl_count; ++i) {
            const auto impl = static_cast<Impl>(i);
            if (impl == Impl::dynamic_leaders && !bench.has_dynamic()) continue;
            // The same calls (delays, inputs) for every implementation.
            m[i] = bench.run(impl, skew, calls, r * calls);
            in[i].push_back(m[i].in);
            after[i].push_back(m[i].after);
            wrong += m[i].wrong;
          }
          const Measure& st = m[0];
          if (bench.has_dynamic()) {
            dyn_in.push_back(m[1].in / st.in);
            dyn_after.push_back(st.after > 0 ? m[1].after / st.after : std::nan(""));
          }
          mst_in.push_back(m[2].in / st.in);
          mst_after.push_back(st.after > 0 ? m[2].after / st.after : std::nan(""));
        }
        total_wrong += wrong;
        if (process != 0) continue;
        auto us = [](const std::vector<double>& v) { return v.empty() ? NAN : 1e6 * median(v); };
        std::printf(
            "%-9s %9s %-11s | %9.1f %9.1f | %9.1f %9.1f | %9.1f %9.1f | %7.2f %7.2f | %7.2f "
            "%7.2f | %ld\n",
            tlc::to_string(c), size_text(bytes).c_str(), name_of(skew), us(in[0]), us(after[0]),
            us(in[1]), us(after[1]), us(in[2]), us(after[2]), dyn_in.empty() ? NAN : median(dyn_in),
            dyn_after.empty() ? NAN : median(dyn_after), median(mst_in), median(mst_after), wrong);
        std::fflush(stdout);
      }
    }
  return total_wrong == 0 ? 0 : 1;
}

}  // namespace tlc_bench
