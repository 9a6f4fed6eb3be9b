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
// algorithm forced, where the collective has one), and the master-only pattern (barrier, the
// threads combine or copy through a shared buffer, thread 0 calls MPI, barrier). Ratios are medians
// of the ratios within one repetition.
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

enum class Impl { static_leaders, dynamic_leaders, master_only, mpi_everywhere };
constexpr int impl_count = 4;

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
  // comm: the processes of the teams (every T-th process of the world with --everywhere, whose
  // other processes only take part in MPI everywhere).
  SkewBench(const Options& o, tlc::Collective c, std::size_t count, MPI_Comm comm)
      : o_(o), c_(c), n_(count), comm_(comm) {}

  // MPI everywhere: every process of the world is one rank, with the teams' ranks (process p of
  // the teams is world rank p * T, and its thread t world rank p * T + t).
  void make_everywhere(int threads) {
    MPI_Comm_size(MPI_COMM_WORLD, &shape_.ranks);
    MPI_Comm_rank(MPI_COMM_WORLD, &world_rank_);
    shape_.threads = shape_.threads_of_last = threads;
    shape_.processes = shape_.ranks / threads;
    everywhere_ = true;
    round_count();
    everywhere_buffers_.send.assign(n_, 0.0);
    everywhere_buffers_.recv.assign(n_, 0.0);
  }

  void make_teams() {
    tlc::TeamOptions base;
    base.threads = o_.threads;
    base.pin = o_.pin;
    static_ = std::make_unique<tlc::Team>(comm_, base);
    tlc::TeamOptions dynamic = base;
    dynamic.algorithms[c_] = "dynamic";
    dynamic.fallback = "error";
    if (has_dynamic()) dynamic_ = std::make_unique<tlc::Team>(comm_, dynamic);
    shape_.processes = static_->processes();
    shape_.threads = static_->threads();
    shape_.ranks = static_->size();
    shape_.process = static_->process();
    int mine = shape_.threads;
    std::vector<int> counts(static_cast<std::size_t>(shape_.processes));
    MPI_Allgather(&mine, 1, MPI_INT, counts.data(), 1, MPI_INT, comm_);
    shape_.threads_of_last = counts.back();
    buffers_.resize(static_cast<std::size_t>(shape_.threads));
    const bool all_to_all = c_ == tlc::Collective::alltoall;
    round_count();
    shared_.assign(all_to_all ? n_ * static_cast<std::size_t>(shape_.threads) : n_, 0.0);
    if (all_to_all) received_.assign(shared_.size(), 0.0);
    sync_ = std::make_unique<std::barrier<>>(shape_.threads);
  }

  // alltoall: a whole block per rank.
  void round_count() {
    if (c_ != tlc::Collective::alltoall) return;
    const auto R = static_cast<std::size_t>(shape_.ranks);
    n_ = std::max(R, n_ / R * R);
  }

  bool has_dynamic() const {
    for (const auto& a : tlc::algorithms())
      if (a.collective == c_ && a.name == "dynamic") return true;
    return false;
  }
  const Shape& shape() const { return shape_; }

  // MPI everywhere: every process of the world calls the MPI collective with its own buffers,
  // after the same synchronisation and delays as the threads of the teams.
  Measure run_everywhere(Skew skew, int calls, int first_call) {
    Buffers& b = everywhere_buffers_;
    const int rank = world_rank_;
    std::vector<double> arrival(static_cast<std::size_t>(calls)),
        exit(static_cast<std::size_t>(calls));
    long wrong = 0;
    const int count = static_cast<int>(n_);
    for (int i = 0; i < calls; ++i) {
      const int call = first_call + i;
      fill(rank, b, call);
      MPI_Barrier(MPI_COMM_WORLD);
      const double delay = delay_seconds(skew, o_.delay_us, o_.seed, call, rank, shape_);
      if (delay > 0) std::this_thread::sleep_for(std::chrono::duration<double>(delay));
      const double a = now_seconds();
      switch (c_) {
        case tlc::Collective::reduce:
          MPI_Reduce(b.send.data(), b.recv.data(), count, MPI_DOUBLE, MPI_SUM, root,
                     MPI_COMM_WORLD);
          break;
        case tlc::Collective::bcast:
          MPI_Bcast(b.recv.data(), count, MPI_DOUBLE, root, MPI_COMM_WORLD);
          break;
        case tlc::Collective::alltoall:
          MPI_Alltoall(b.send.data(), static_cast<int>(block()), MPI_DOUBLE, b.recv.data(),
                       static_cast<int>(block()), MPI_DOUBLE, MPI_COMM_WORLD);
          break;
        default:
          MPI_Allreduce(b.send.data(), b.recv.data(), count, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
      }
      exit[static_cast<std::size_t>(i)] = now_seconds();
      arrival[static_cast<std::size_t>(i)] = a;
      wrong += check(rank, b, call);
    }
    std::vector<double> last = arrival;
    MPI_Allreduce(MPI_IN_PLACE, last.data(), calls, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    double sums[3] = {0, 0, static_cast<double>(wrong)};
    for (std::size_t i = 0; i < static_cast<std::size_t>(calls); ++i) {
      sums[0] += exit[i] - arrival[i];
      sums[1] += std::max(0.0, exit[i] - last[i]);
    }
    MPI_Allreduce(MPI_IN_PLACE, sums, 3, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    const double samples = static_cast<double>(calls) * shape_.ranks;
    return {sums[0] / samples, sums[1] / samples, static_cast<long>(sums[2])};
  }

  Measure run(Impl impl, Skew skew, int calls, int first_call) {
    if (impl == Impl::mpi_everywhere) return run_everywhere(skew, calls, first_call);
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
        fill(me.rank(), b, call);
        synchronise(me.local_index());
        const double delay = delay_seconds(skew, o_.delay_us, o_.seed, call, me.rank(), shape_);
        if (delay > 0) std::this_thread::sleep_for(std::chrono::duration<double>(delay));
        const double a = now_seconds();
        one_call(impl, me, b);
        const double e = now_seconds();
        arrival[static_cast<std::size_t>(i) * T + t] = a;
        exit[static_cast<std::size_t>(i) * T + t] = e;
        wrong[t] += check(me.rank(), b, call);
      }
    });
    // The latest arrival of each call over every process.
    std::vector<double> last(static_cast<std::size_t>(calls), 0.0);
    for (int i = 0; i < calls; ++i)
      for (std::size_t t = 0; t < T; ++t)
        last[static_cast<std::size_t>(i)] = std::max(last[static_cast<std::size_t>(i)],
                                                     arrival[static_cast<std::size_t>(i) * T + t]);
    MPI_Allreduce(MPI_IN_PLACE, last.data(), calls, MPI_DOUBLE, MPI_MAX, comm_);
    double sums[3] = {0, 0, 0};
    for (int i = 0; i < calls; ++i)
      for (std::size_t t = 0; t < T; ++t) {
        const std::size_t k = static_cast<std::size_t>(i) * T + t;
        sums[0] += exit[k] - arrival[k];
        sums[1] += std::max(0.0, exit[k] - last[static_cast<std::size_t>(i)]);
      }
    for (long w : wrong) sums[2] += static_cast<double>(w);
    MPI_Allreduce(MPI_IN_PLACE, sums, 3, MPI_DOUBLE, MPI_SUM, comm_);
    const double samples = static_cast<double>(calls) * shape_.ranks;
    return {sums[0] / samples, sums[1] / samples, static_cast<long>(sums[2])};
  }

 private:
  void synchronise(int local) {
    sync_->arrive_and_wait();
    if (local == 0) MPI_Barrier(comm_);
    sync_->arrive_and_wait();
  }

  static double value(int rank, int call, std::size_t i) {
    return input_value(rank, i) + static_cast<double>(call % 5);
  }
  static constexpr int root = 0;

  // alltoall: n_ elements per thread, a block of n_ / ranks for each rank.
  std::size_t block() const { return n_ / static_cast<std::size_t>(shape_.ranks); }

  void fill(int rank, Buffers& b, int call) {
    if (c_ == tlc::Collective::bcast) {
      for (std::size_t i = 0; i < n_; ++i) b.recv[i] = rank == root ? value(root, call, i) : 0;
    } else {
      for (std::size_t i = 0; i < n_; ++i) b.send[i] = value(rank, call, i);
      std::fill(b.recv.begin(), b.recv.end(), 0.0);
    }
  }

  long check(int rank, const Buffers& b, int call) const {
    const bool has_result = c_ != tlc::Collective::reduce || rank == root;
    if (!has_result) return 0;
    long wrong = 0;
    if (c_ == tlc::Collective::alltoall) {  // block j comes from rank j's block for this rank
      const std::size_t b_len = block(), mine = static_cast<std::size_t>(rank) * b_len;
      for (std::size_t j = 0; j < static_cast<std::size_t>(shape_.ranks); ++j)
        for (std::size_t i = 0; i<b_len; i += i> 64 && b_len > 4096 ? 64 : 1)
          if (b.recv[j * b_len + i] != value(static_cast<int>(j), call, mine + i)) ++wrong;
      return wrong;
    }
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
        case tlc::Collective::alltoall:
          return me.alltoall(send, recv);
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
      if (t == 0) MPI_Bcast(shared_.data(), static_cast<int>(n_), MPI_DOUBLE, 0, comm_);
      sync_->arrive_and_wait();
      if (me.rank() != root) std::memcpy(b.recv.data(), shared_.data(), n_ * sizeof(double));
      return;
    }
    if (c_ == tlc::Collective::alltoall) {
      // Staged by destination process, then sending thread, then receiving thread, so that
      // one MPI_Alltoall of T * T blocks per process pair moves everything (equal thread counts).
      const std::size_t b_len = block(), Tz = static_cast<std::size_t>(T);
      const std::size_t P = static_cast<std::size_t>(shape_.processes);
      const std::size_t tz = static_cast<std::size_t>(t);
      for (std::size_t q = 0; q < P; ++q)
        for (std::size_t u = 0; u < Tz; ++u)
          std::memcpy(&shared_[((q * Tz + tz) * Tz + u) * b_len], &b.send[(q * Tz + u) * b_len],
                      b_len * sizeof(double));
      sync_->arrive_and_wait();
      if (t == 0)
        MPI_Alltoall(shared_.data(), static_cast<int>(Tz * Tz * b_len), MPI_DOUBLE,
                     received_.data(), static_cast<int>(Tz * Tz * b_len), MPI_DOUBLE, comm_);
      sync_->arrive_and_wait();
      for (std::size_t q = 0; q < P; ++q)  // from process q: its threads' blocks for t
        for (std::size_t u = 0; u < Tz; ++u)
          std::memcpy(&b.recv[(q * Tz + u) * b_len], &received_[((q * Tz + u) * Tz + tz) * b_len],
                      b_len * sizeof(double));
      sync_->arrive_and_wait();  // nobody refills shared_ while others still read received_
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
                   MPI_SUM, 0, comm_);
      else
        MPI_Allreduce(MPI_IN_PLACE, shared_.data(), static_cast<int>(n_), MPI_DOUBLE, MPI_SUM,
                      comm_);
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
  std::vector<double> shared_, received_;
  std::unique_ptr<std::barrier<>> sync_;
  MPI_Comm comm_;
  bool everywhere_ = false;
  int world_rank_ = 0;
  Buffers everywhere_buffers_;
};

}  // namespace

int run_skew(const Options& o) {
  int process = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &process);
  std::vector<tlc::Collective> collectives;
  if (o.collective == "all" || o.collective.empty()) {
    collectives = {tlc::Collective::reduce, tlc::Collective::bcast, tlc::Collective::allreduce,
                   tlc::Collective::alltoall};
  } else if (o.collective == "reduce") {
    collectives = {tlc::Collective::reduce};
  } else if (o.collective == "bcast") {
    collectives = {tlc::Collective::bcast};
  } else if (o.collective == "allreduce") {
    collectives = {tlc::Collective::allreduce};
  } else if (o.collective == "alltoall") {
    collectives = {tlc::Collective::alltoall};
  } else {
    if (process == 0)
      std::fprintf(stderr,
                   "tlc-bench --skew: --collective takes reduce, bcast, allreduce, alltoall or "
                   "all\n");
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
  // --everywhere: the world's processes are MPI everywhere's ranks; every T-th of them runs a
  // team of T threads (the others wait without a core while the teams measure).
  int world = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &world);
  MPI_Comm team_comm = MPI_COMM_WORLD;
  bool in_team = true;
  if (o.everywhere) {
    if (o.threads < 1 || world % o.threads != 0) {
      if (process == 0)
        std::fprintf(stderr,
                     "tlc-bench --skew --everywhere: launch P * T processes for teams of "
                     "--threads T (got %d processes, --threads %d)\n",
                     world, o.threads);
      return 2;
    }
    in_team = process % o.threads == 0;
    MPI_Comm_split(MPI_COMM_WORLD, in_team ? 0 : MPI_UNDEFINED, process, &team_comm);
  }
  bool header = false;
  long total_wrong = 0;
  for (const tlc::Collective c : collectives)
    for (const std::size_t bytes : sizes) {
      const std::size_t count = std::max<std::size_t>(1, bytes / sizeof(double));
      SkewBench bench(o, c, count, team_comm);
      if (o.everywhere) bench.make_everywhere(o.threads);
      if (in_team) bench.make_teams();
      const Shape& shape = bench.shape();
      if (process == 0 && !header) {
        header = true;
        std::printf(
            "# tlc-bench --skew: %d process(es) x %d thread(s) (process 0), delay D = %.0f us, "
            "seed %u, %d calls x %d repetitions per case, root 0%s\n"
            "# skews: none; uniform [0, D]; exponential, mean D; late-leader: rank %d (thread 0 "
            "of the last process, a static leader) late by D; late-other: rank %d late by D\n"
            "# in: mean time in the collective (exit - own arrival); after: mean time after the "
            "last arrival of any thread (0 if it left before); us, median repetition\n"
            "# st: static leaders; dyn: led by arrival (forced dynamic); mst: the master-only "
            "pattern%s; x/st: medians of the ratios within one repetition (< 1: less time than "
            "static leaders)\n",
            shape.processes, shape.threads, o.delay_us, o.seed, calls, reps,
            o.everywhere ? "; MPI everywhere on as many processes as the teams have threads" : "",
            shape.late_leader(), shape.late_other(),
            o.everywhere ? "; mpi: MPI everywhere, one process per rank" : "");
        std::printf("%-9s %9s %-11s | %9s %9s | %9s %9s | %9s %9s |", "coll", "size", "skew",
                    "st in", "st after", "dyn in", "dyn aft", "mst in", "mst aft");
        if (o.everywhere) std::printf(" %9s %9s |", "mpi in", "mpi aft");
        std::printf(" %7s %7s | %7s %7s |", "dyn/st", "dyn/st", "mst/st", "mst/st");
        if (o.everywhere) std::printf(" %7s %7s |", "mpi/st", "mpi/st");
        std::printf(" %s\n%-9s %9s %-11s | %9s %9s | %9s %9s | %9s %9s |", "wrong", "", "", "", "",
                    "", "", "", "", "");
        if (o.everywhere) std::printf(" %9s %9s |", "", "");
        std::printf(" %7s %7s | %7s %7s |", "in", "after", "in", "after");
        if (o.everywhere) std::printf(" %7s %7s |", "in", "after");
        std::printf("\n");
      }
      for (const Skew skew : skews) {
        std::vector<double> in[impl_count], after[impl_count], in_ratio[impl_count],
            after_ratio[impl_count];
        long wrong = 0;
        for (int r = 0; r < reps; ++r) {
          Measure m[impl_count];
          bool measured[impl_count] = {};
          for (int i = 0; i < impl_count; ++i) {
            const auto impl = static_cast<Impl>(i);
            if (impl == Impl::dynamic_leaders && !bench.has_dynamic()) continue;
            if (impl == Impl::mpi_everywhere && !o.everywhere) continue;
            // The same calls (delays, inputs) for every implementation.
            if (impl == Impl::mpi_everywhere || in_team)
              m[i] = bench.run(impl, skew, calls, r * calls);
            if (impl != Impl::mpi_everywhere && o.everywhere) polite_barrier(MPI_COMM_WORLD);
            measured[i] = true;
            in[i].push_back(m[i].in);
            after[i].push_back(m[i].after);
            wrong += m[i].wrong;
          }
          const Measure& st = m[0];
          for (int i = 1; i < impl_count; ++i) {
            if (!measured[i]) continue;
            in_ratio[i].push_back(m[i].in / st.in);
            after_ratio[i].push_back(st.after > 0 ? m[i].after / st.after : std::nan(""));
          }
        }
        total_wrong += wrong;
        if (process != 0) continue;
        auto us = [](const std::vector<double>& v) { return v.empty() ? NAN : 1e6 * median(v); };
        auto mid = [](const std::vector<double>& v) { return v.empty() ? NAN : median(v); };
        std::printf("%-9s %9s %-11s | %9.1f %9.1f | %9.1f %9.1f | %9.1f %9.1f |", tlc::to_string(c),
                    size_text(bytes).c_str(), name_of(skew), us(in[0]), us(after[0]), us(in[1]),
                    us(after[1]), us(in[2]), us(after[2]));
        if (o.everywhere) std::printf(" %9.1f %9.1f |", us(in[3]), us(after[3]));
        std::printf(" %7.2f %7.2f | %7.2f %7.2f |", mid(in_ratio[1]), mid(after_ratio[1]),
                    mid(in_ratio[2]), mid(after_ratio[2]));
        if (o.everywhere) std::printf(" %7.2f %7.2f |", mid(in_ratio[3]), mid(after_ratio[3]));
        std::printf(" %ld\n", wrong);
        std::fflush(stdout);
      }
    }
  if (team_comm != MPI_COMM_WORLD && team_comm != MPI_COMM_NULL) MPI_Comm_free(&team_comm);
  return total_wrong == 0 ? 0 : 1;
}

}  // namespace tlc_bench
