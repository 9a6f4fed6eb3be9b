// The implementations every collective is measured with, on the same data (collectives.cpp):
// - tlc: every thread of a team calls the collective on its own buffers;
// - MPI: one process per rank calls the matching MPI collective ("MPI everywhere" when the
//   processes are as many as the team's threads; "raw MPI", the inter-process part alone, when
//   there is one per team process);
// - master-only: the OpenMP pattern tlc replaces. The threads combine their inputs into shared
//   arrays, thread 0 calls MPI, barriers order the steps, the threads copy the result out;
// - bound: the memory-bandwidth bound of the team's threads, each copying a private buffer as
//   large as its share of the bytes the collective must move (barrier: a bare spin barrier).
#include <omp.h>

#include <time.h>
#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

#include <atomic>
#include <barrier>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include <mpi.h>

#include "bench.hpp"
#include "omp_parallel.hpp"

namespace tlc_bench {

Timing summarise(const std::vector<PaddedDouble>& per_participant) {
  Timing t;
  if (per_participant.empty()) return t;
  t.min = per_participant.front().value;
  double sum = 0;
  for (const PaddedDouble& v : per_participant) {
    t.max = std::max(t.max, v.value);
    t.min = std::min(t.min, v.value);
    sum += v.value;
  }
  t.avg = sum / static_cast<double>(per_participant.size());
  return t;
}

Timing global_timing(const Timing& local, int participants_here, MPI_Comm comm) {
  double extremes[2] = {local.max, -local.min};
  double sums[2] = {local.avg * participants_here, static_cast<double>(participants_here)};
  MPI_Allreduce(MPI_IN_PLACE, extremes, 2, MPI_DOUBLE, MPI_MAX, comm);
  MPI_Allreduce(MPI_IN_PLACE, sums, 2, MPI_DOUBLE, MPI_SUM, comm);
  return {extremes[0], sums[1] > 0 ? sums[0] / sums[1] : 0, -extremes[1]};
}

Timing arrival_timing(const std::vector<ArrivalRecord>& here, MPI_Comm comm) {
  const std::size_t calls = here.empty() ? 0 : here.front().arrival.size();
  // The latest arrival of each call, over every participant of every process.
  std::vector<double> last(calls, 0.0);
  for (const ArrivalRecord& p : here)
    for (std::size_t i = 0; i < calls; ++i) last[i] = std::max(last[i], p.arrival[i]);
  MPI_Allreduce(MPI_IN_PLACE, last.data(), static_cast<int>(calls), MPI_DOUBLE, MPI_MAX, comm);
  std::vector<PaddedDouble> in(here.size());
  double after = 0;
  std::size_t wrong = 0;
  for (std::size_t t = 0; t < here.size(); ++t) {
    const ArrivalRecord& p = here[t];
    for (std::size_t i = 0; i < calls; ++i) {
      in[t].value += (p.exit[i] - p.arrival[i]) / static_cast<double>(calls);
      after += std::max(0.0, p.exit[i] - last[i]);
    }
    wrong += p.wrong;
    if (!p.first.empty()) {
      std::fprintf(stderr, "tlc-bench: WRONG RESULT under skew: %s\n", p.first.c_str());
      std::fflush(stderr);
    }
  }
  Timing t = global_timing(summarise(in), static_cast<int>(here.size()), comm);
  double sums[3] = {after, static_cast<double>(calls * here.size()), static_cast<double>(wrong)};
  MPI_Allreduce(MPI_IN_PLACE, sums, 3, MPI_DOUBLE, MPI_SUM, comm);
  t.after = sums[1] > 0 ? sums[0] / sums[1] : 0;
  t.wrong = static_cast<std::size_t>(sums[2]);
  return t;
}

namespace {

// The bound's spin barrier relaxes with the instruction tlc's own waits spin with.
#if defined(__x86_64__) || defined(__i386__)
inline void cpu_relax() noexcept { _mm_pause(); }
#elif defined(__aarch64__)
inline void cpu_relax() noexcept { asm volatile("yield" ::: "memory"); }
#else
inline void cpu_relax() noexcept {}
#endif

std::size_t block_of(std::size_t n, int ranks) { return n / static_cast<std::size_t>(ranks); }

// The wrong elements of every thread's check, the first description kept.
std::size_t total_wrong(const std::vector<std::size_t>& wrong, const std::vector<std::string>& what,
                        std::string& first) {
  std::size_t total = 0;
  for (std::size_t t = 0; t < wrong.size(); ++t) {
    total += wrong[t];
    if (first.empty() && !what[t].empty()) first = what[t];
  }
  return total;
}

// ---------------------------------------------------------------------------------------------
// tlc

class TlcCase : public Case {
 public:
  TlcCase(const CollectiveDef& def, tlc::Team& team, bool in_place, MPI_Comm comm)
      : def_(def),
        team_(team),
        in_place_(in_place),
        comm_(comm),
        send_(static_cast<std::size_t>(team.threads())),
        recv_(static_cast<std::size_t>(team.threads())),
        layouts_(static_cast<std::size_t>(team.threads())) {}

  int ranks() const override { return team_.size(); }

  void prepare(std::size_t n) override {
    n_ = n;
    team_.run([&](tlc::Thread& me) {
      const auto t = static_cast<std::size_t>(me.local_index());
      const Layout l = layout(def_.kind, n, me.size(), me.rank(), in_place_);
      layouts_[t] = l;
      send_[t].reset();
      recv_[t].reset();
      if (n == 0) return;
      if (def_.kind == Kind::bcast) {
        recv_[t] = untouched_buffer(l.output);
        if (me.rank() == def_.root)
          fill_input(def_.kind, recv_[t].get(), n, me.size(), me.rank(), false);
        else
          std::fill(recv_[t].get(), recv_[t].get() + l.output, 0.0);
        return;
      }
      send_[t] = untouched_buffer(l.send);
      fill_input(def_.kind, send_[t].get(), n, me.size(), me.rank(), in_place_);
      if (!in_place_) {
        recv_[t] = untouched_buffer(l.output);
        std::fill(recv_[t].get(), recv_[t].get() + l.output, 0.0);
      }
    });
  }

  std::size_t check(std::string& first) override {
    std::vector<std::size_t> wrong(send_.size(), 0);
    std::vector<std::string> what(send_.size());
    const Reference ref(def_.kind, n_, team_.size());
    team_.run([&](tlc::Thread& me) {
      const auto t = static_cast<std::size_t>(me.local_index());
      reset(me);
      call(me);
      wrong[t] = verify(me, ref, what[t]);
      // Restore the input the timed calls start from.
      if (in_place_) reset(me);
    });
    return total_wrong(wrong, what, first);
  }

  Timing time(const Loop& loop) override {
    if (loop.arrivals) {
      std::vector<ArrivalRecord> records(send_.size());
      const Reference ref(def_.kind, n_, team_.size());
      std::barrier<> local(team_.threads());
      team_.run([&](tlc::Thread& me) {
        // Independent of tlc: a std::barrier, MPI_Barrier by thread 0 between the processes.
        auto sync = [&] {
          local.arrive_and_wait();
          if (me.local_index() == 0 && team_.processes() > 1) MPI_Barrier(comm_);
          local.arrive_and_wait();
        };
        records[static_cast<std::size_t>(me.local_index())] = arrival_loop(
            loop, me.rank(), me.size(), [&] { reset(me); }, [&] { call(me); },
            [&](std::string& what) {
              return verify(
                  me, ref, what,
                  timed_check_step(layouts_[static_cast<std::size_t>(me.local_index())].output));
            },
            sync);
      });
      return arrival_timing(records, team_.processes() > 1 ? comm_ : MPI_COMM_SELF);
    }
    std::vector<PaddedDouble> seconds(send_.size());
    team_.run([&](tlc::Thread& me) {
      const int t = me.local_index();
      seconds[static_cast<std::size_t>(t)].value = timed_loop(
          loop, t, me.threads(), [&] { call(me); }, [&] { me.barrier(); }, [&] { refresh(me); });
    });
    const Timing local = summarise(seconds);
    return team_.processes() > 1 ? global_timing(local, team_.threads(), comm_) : local;
  }

  std::string algorithm(std::size_t n) const override { return plan_of(n).name; }
  std::string plan(std::size_t n) const override {
    const tlc::Selection p = plan_of(n);
    return p.name + ":" + p.form + ":" + std::to_string(p.chunk_bytes) + ":" +
           std::to_string(p.lanes) + ":" + p.leader;
  }
  double predicted(std::size_t n) const override {
    return plan_of(n).plan_seconds.value_or(std::nan(""));
  }

 private:
  // The plan the team makes for the call, forced choices included (a rank block of alltoall
  // and reduce_scatter_block is the buffer cut into one per rank).
  tlc::Selection plan_of(std::size_t n) const {
    std::size_t count = n;
    if (def_.kind == Kind::alltoall || def_.kind == Kind::reduce_scatter_block)
      count = block_of(n, team_.size());
    return team_.select_algorithm(
        {def_.collective, count * sizeof(double), sizeof(double), true, in_place_});
  }

  // --fresh-inputs: the thread writes its input again (in place: restores it), as an application
  // computes its contribution before each call.
  void refresh(tlc::Thread& me) {
    const auto t = static_cast<std::size_t>(me.local_index());
    refill_input(def_.kind, def_.root, send_[t].get(), recv_[t].get(), n_, me.size(), me.rank(),
                 in_place_);
  }

  // Before a checked call: an output that only the call can make right (poisoned; in place:
  // the input again, with allgather's other blocks poisoned).
  void reset(tlc::Thread& me) {
    const auto t = static_cast<std::size_t>(me.local_index());
    const Layout& l = layouts_[t];
    if (def_.kind == Kind::bcast) {
      if (me.rank() != def_.root) poison(recv_[t].get(), l.output);
    } else if (in_place_) {
      double* out = send_[t].get();
      fill_input(def_.kind, out, n_, me.size(), me.rank(), true);
      if (def_.kind == Kind::allgather) {
        poison(out, static_cast<std::size_t>(me.rank()) * n_);
        poison(out + (static_cast<std::size_t>(me.rank()) + 1) * n_,
               l.send - (static_cast<std::size_t>(me.rank()) + 1) * n_);
      }
    } else if (recv_[t]) {
      poison(recv_[t].get(), l.output);
    }
  }

  // After it: the wrong elements of the output (every step-th), the first described in `what`.
  std::size_t verify(tlc::Thread& me, const Reference& ref, std::string& what,
                     std::size_t step = 1) const {
    if (def_.kind == Kind::barrier) return 0;
    const auto t = static_cast<std::size_t>(me.local_index());
    const Layout& l = layouts_[t];
    const double* out = def_.kind != Kind::bcast && in_place_ ? send_[t].get() : recv_[t].get();
    return count_wrong(ref, out, l.output, me.rank(),
                       std::string("tlc ") + def_.name + (in_place_ ? " in place" : "") +
                           ", rank " + std::to_string(me.rank()),
                       what, step);
  }

  void call(tlc::Thread& me) {
    const auto t = static_cast<std::size_t>(me.local_index());
    const Layout& l = layouts_[t];
    double* send = send_[t].get();
    double* recv = recv_[t].get();
    const std::span<const double> in(send, l.send);
    const std::span<double> buf(send, l.send);
    const std::span<double> out(recv, in_place_ ? 0 : l.output);
    switch (def_.kind) {
      case Kind::barrier:
        me.barrier();
        break;
      case Kind::bcast:
        me.bcast(std::span<double>(recv, l.output), def_.root);
        break;
      case Kind::reduce:
        if (in_place_)
          me.reduce(buf, def_.root, std::plus<>{});
        else
          me.reduce(in, out, def_.root, std::plus<>{});
        break;
      case Kind::allreduce:
        if (in_place_)
          me.allreduce(buf, std::plus<>{});
        else
          me.allreduce(in, out, std::plus<>{});
        break;
      case Kind::allgather:
        if (in_place_)
          me.allgather(buf);
        else
          me.allgather(in, out);
        break;
      case Kind::alltoall:
        if (in_place_)
          me.alltoall(buf);
        else
          me.alltoall(in, out);
        break;
      case Kind::reduce_scatter_block:
        if (in_place_)
          me.reduce_scatter_block(buf, std::plus<>{});
        else
          me.reduce_scatter_block(in, out, std::plus<>{});
        break;
      case Kind::scan:
        if (in_place_)
          me.scan(buf, std::plus<>{});
        else
          me.scan(in, out, std::plus<>{});
        break;
      case Kind::exscan:
        if (in_place_)
          me.exscan(buf, std::plus<>{});
        else
          me.exscan(in, out, std::plus<>{});
        break;
      case Kind::gather:
        me.gather(in, out, def_.root);
        break;
      case Kind::scatter:
        me.scatter(in, out, def_.root);
        break;
    }
  }

  const CollectiveDef& def_;
  tlc::Team& team_;
  bool in_place_;
  MPI_Comm comm_;  // the team's processes
  std::size_t n_ = 0;
  std::vector<Buffer> send_;  // out of place: the send buffer; in place: the one buffer
  std::vector<Buffer> recv_;  // out of place: the receive buffer; bcast: its one buffer
  std::vector<Layout> layouts_;
};

// ---------------------------------------------------------------------------------------------
// MPI, one buffer per process

class MpiCase : public Case {
 public:
  MpiCase(const CollectiveDef& def, MPI_Comm comm) : def_(def), comm_(comm) {
    MPI_Comm_rank(comm, &rank_);
    MPI_Comm_size(comm, &size_);
  }

  int ranks() const override { return size_; }

  void prepare(std::size_t n) override {
    n_ = n;
    l_ = layout(def_.kind, n, size_, rank_, false);
    send_.reset();
    recv_.reset();
    if (n == 0) return;
    recv_ = untouched_buffer(l_.output);
    std::fill(recv_.get(), recv_.get() + l_.output, 0.0);
    if (def_.kind == Kind::bcast) {
      if (rank_ == def_.root) fill_input(def_.kind, recv_.get(), n, size_, rank_, false);
      return;
    }
    send_ = untouched_buffer(l_.send);
    fill_input(def_.kind, send_.get(), n, size_, rank_, false);
  }

  std::size_t check(std::string& first) override {
    if (def_.kind == Kind::barrier) {
      call();
      return 0;
    }
    if (def_.kind != Kind::bcast || rank_ != def_.root) poison(recv_.get(), l_.output);
    call();
    return count_wrong(Reference(def_.kind, n_, size_), recv_.get(), l_.output, rank_,
                       std::string("MPI ") + def_.name + ", process " + std::to_string(rank_),
                       first);
  }

  Timing time(const Loop& loop) override {
    if (loop.arrivals) {
      const Reference ref(def_.kind, n_, size_);
      std::vector<ArrivalRecord> one(1);
      one[0] = arrival_loop(
          loop, rank_, size_,
          [&] {
            if (def_.kind != Kind::bcast || rank_ != def_.root) poison(recv_.get(), l_.output);
          },
          [&] { call(); },
          [&](std::string& what) -> std::size_t {
            if (def_.kind == Kind::barrier) return 0;
            return count_wrong(
                ref, recv_.get(), l_.output, rank_,
                std::string("MPI ") + def_.name + ", process " + std::to_string(rank_), what,
                timed_check_step(l_.output));
          },
          [&] { MPI_Barrier(comm_); });
      return arrival_timing(one, comm_);
    }
    std::vector<PaddedDouble> one(1);
    one[0].value = timed_loop(
        loop, rank_, size_, [&] { call(); }, [&] { MPI_Barrier(comm_); },
        [&] {
          refill_input(def_.kind, def_.root, send_.get(), recv_.get(), n_, size_, rank_, false);
        });
    return global_timing(summarise(one), 1, comm_);
  }

 private:
  void call() {
    const int n = mpi_count(n_);
    double* send = l_.send ? send_.get() : nullptr;
    double* recv = l_.output ? recv_.get() : nullptr;
    const int root = def_.root;
    switch (def_.kind) {
      case Kind::barrier:
        MPI_Barrier(comm_);
        break;
      case Kind::bcast:
        MPI_Bcast(recv, n, MPI_DOUBLE, root, comm_);
        break;
      case Kind::reduce:
        MPI_Reduce(send, recv, n, MPI_DOUBLE, MPI_SUM, root, comm_);
        break;
      case Kind::allreduce:
        MPI_Allreduce(send, recv, n, MPI_DOUBLE, MPI_SUM, comm_);
        break;
      case Kind::allgather:
        MPI_Allgather(send, n, MPI_DOUBLE, recv, n, MPI_DOUBLE, comm_);
        break;
      case Kind::alltoall: {
        const int block = n / size_;
        MPI_Alltoall(send, block, MPI_DOUBLE, recv, block, MPI_DOUBLE, comm_);
        break;
      }
      case Kind::reduce_scatter_block:
        MPI_Reduce_scatter_block(send, recv, n / size_, MPI_DOUBLE, MPI_SUM, comm_);
        break;
      case Kind::scan:
        MPI_Scan(send, recv, n, MPI_DOUBLE, MPI_SUM, comm_);
        break;
      case Kind::exscan:
        MPI_Exscan(send, recv, n, MPI_DOUBLE, MPI_SUM, comm_);
        break;
      case Kind::gather:
        MPI_Gather(send, n, MPI_DOUBLE, recv, n, MPI_DOUBLE, root, comm_);
        break;
      case Kind::scatter:
        MPI_Scatter(send, n, MPI_DOUBLE, recv, n, MPI_DOUBLE, root, comm_);
        break;
    }
  }

  const CollectiveDef& def_;
  MPI_Comm comm_;
  int rank_ = 0;
  int size_ = 1;
  std::size_t n_ = 0;
  Layout l_;
  Buffer send_;
  Buffer recv_;
};

// ---------------------------------------------------------------------------------------------
// Master-only OpenMP

}  // namespace

// libgomp's idle threads spin for a while after a parallel region (OMP_WAIT_POLICY and
// GOMP_SPINCOUNT decide how long) before they block. Spinning then, they would take a core from
// whatever is measured next; so after its own measurement the master-only baseline waits until
// this process uses no more CPU than a sleeping one (or 100 ms have passed). The baseline keeps
// its default waiting inside its own measurement.
void settle_openmp() {
  auto cpu_ms = [] {
    timespec t{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return static_cast<double>(t.tv_sec) * 1e3 + static_cast<double>(t.tv_nsec) / 1e6;
  };
  constexpr auto kInterval = std::chrono::milliseconds(2);
  for (int i = 0; i < 50; ++i) {
    const double before = cpu_ms();
    std::this_thread::sleep_for(kInterval);
    if (cpu_ms() - before < 0.25) return;
  }
}

namespace {

class MasterCase : public Case {
 public:
  MasterCase(const CollectiveDef& def, int threads, MPI_Comm comm)
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
    for (int p = 0; p < 2; ++p) {
      shared_[p].reset();
      stage_[p].reset();
    }
    const std::size_t t_count = static_cast<std::size_t>(threads_);
    const std::size_t r_count = static_cast<std::size_t>(ranks());
    // Shared arrays: the combined inputs (or the staged blocks) and, for alltoall and scan, a
    // second one the MPI call writes.
    switch (def_.kind) {
      case Kind::reduce:
      case Kind::allreduce:
      case Kind::reduce_scatter_block:
        shared_size_ = n;
        break;
      case Kind::allgather:
      case Kind::gather:
        shared_size_ = r_count * n;
        break;
      case Kind::scatter:
        shared_size_ = t_count * n;
        break;
      case Kind::alltoall:
        shared_size_ = stage_size_ = t_count * n;
        break;
      case Kind::scan:
      case Kind::exscan:
        shared_size_ = t_count * n;
        stage_size_ = n;
        break;
      case Kind::barrier:
      case Kind::bcast:
        shared_size_ = 0;
        break;
    }
    if (def_.kind != Kind::alltoall && def_.kind != Kind::scan && def_.kind != Kind::exscan)
      stage_size_ = 0;
    for (int p = 0; p < 2; ++p) {
      if (n == 0) break;
      if (shared_size_) shared_[p] = untouched_buffer(shared_size_);
      if (stage_size_) stage_[p] = untouched_buffer(stage_size_);
    }
    omp_parallel(threads_, [&](int thread) {
      const auto t = static_cast<std::size_t>(thread);
      const int rank = process_ * threads_ + thread;
      send_[t].reset();
      recv_[t].reset();
      if (n == 0) return;
      const Layout l = layout(def_.kind, n, ranks(), rank, false);
      layouts_[t] = l;
      if (def_.kind == Kind::bcast) {
        recv_[t] = untouched_buffer(l.output);
        if (rank == def_.root)
          fill_input(def_.kind, recv_[t].get(), n, ranks(), rank, false);
        else
          std::fill(recv_[t].get(), recv_[t].get() + l.output, 0.0);
      } else if (def_.kind != Kind::barrier) {
        send_[t] = untouched_buffer(l.send);
        fill_input(def_.kind, send_[t].get(), n, ranks(), rank, false);
        recv_[t] = untouched_buffer(l.output);
        std::fill(recv_[t].get(), recv_[t].get() + l.output, 0.0);
      }
      // The static schedule the combining loops use, so each thread first-touches its part.
      for (int p = 0; p < 2; ++p) {
        double* shared = shared_[p].get();
        double* stage = stage_[p].get();
#pragma omp for schedule(static)
        for (std::size_t i = 0; i < shared_size_; ++i) shared[i] = 0;
#pragma omp for schedule(static)
        for (std::size_t i = 0; i < stage_size_; ++i) stage[i] = 0;
      }
    });
  }

  std::size_t check(std::string& first) override {
    std::vector<std::size_t> wrong(static_cast<std::size_t>(threads_), 0);
    std::vector<std::string> what(static_cast<std::size_t>(threads_));
    const Reference ref(def_.kind, n_, ranks());
    omp_parallel(threads_, [&](int thread) {
      const auto t = static_cast<std::size_t>(thread);
      const int rank = process_ * threads_ + thread;
      const Layout& l = layouts_[t];
      if (def_.kind != Kind::bcast || rank != def_.root) poison(recv_[t].get(), l.output);
#pragma omp barrier
      call(thread, 0);
#pragma omp barrier
      if (def_.kind != Kind::barrier)
        wrong[t] = count_wrong(
            ref, recv_[t].get(), l.output, rank,
            std::string("master-only ") + def_.name + ", rank " + std::to_string(rank), what[t]);
    });
    settle_openmp();
    return total_wrong(wrong, what, first);
  }

  Timing time(const Loop& loop) override {
    if (loop.arrivals) {
      std::vector<ArrivalRecord> records(static_cast<std::size_t>(threads_));
      const Reference ref(def_.kind, n_, ranks());
      omp_parallel(threads_, [&](int thread) {
        const auto t = static_cast<std::size_t>(thread);
        const int rank = process_ * threads_ + thread;
        const Layout& l = layouts_[t];
        int parity = 0;
        records[t] = arrival_loop(
            loop, rank, ranks(),
            [&] {
        // Threads copy from thread 0's buffer after the call's last barrier.
#pragma omp barrier
              if (def_.kind != Kind::bcast || rank != def_.root) poison(recv_[t].get(), l.output);
            },
            [&] {
              call(thread, parity);
              parity ^= 1;
            },
            [&](std::string& what) -> std::size_t {
              if (def_.kind == Kind::barrier) return 0;
              return count_wrong(
                  ref, recv_[t].get(), l.output, rank,
                  std::string("master-only ") + def_.name + ", rank " + std::to_string(rank), what,
                  timed_check_step(l.output));
            },
            [&] {
#pragma omp barrier
              if (thread == 0 && processes_ > 1) MPI_Barrier(comm_);
#pragma omp barrier
            });
      });
      settle_openmp();
      return arrival_timing(records, processes_ > 1 ? comm_ : MPI_COMM_SELF);
    }
    std::vector<PaddedDouble> seconds(static_cast<std::size_t>(threads_));
    omp_parallel(threads_, [&](int t) {
      int parity = 0;
      seconds[static_cast<std::size_t>(t)].value = timed_loop(
          loop, t, threads_,
          [&] {
            call(t, parity);
            parity ^= 1;
          },
          [&] {
#pragma omp barrier
            if (t == 0) MPI_Barrier(comm_);
#pragma omp barrier
          },
          [&] {
      // Other threads may still read this input in the last call (master-only's shared
      // combine reads every thread's): everybody is out of it first.
#pragma omp barrier
            const auto mine = static_cast<std::size_t>(t);
            refill_input(def_.kind, def_.root, send_[mine].get(), recv_[mine].get(), n_, ranks(),
                         process_ * threads_ + t, false);
          });
    });
    settle_openmp();
    const Timing local = summarise(seconds);
    return processes_ > 1 ? global_timing(local, threads_, comm_) : local;
  }

 private:
  // One call, by every thread of the parallel region. Consecutive calls alternate between two
  // sets of shared arrays: a thread may start combining call k+1 while a slower one still copies
  // out call k, and the barrier inside call k+1 keeps call k+2 (same arrays as k) from starting
  // before every copy of k is done. This saves the trailing barrier one set would need, so the
  // baseline is the best honest version of the pattern.
  void call(int thread, int parity) {
    const auto t = static_cast<std::size_t>(thread);
    const std::size_t n = n_;
    const int threads = threads_;
    const auto T = static_cast<std::size_t>(threads);
    const auto R = static_cast<std::size_t>(ranks());
    const auto p = static_cast<std::size_t>(process_);
    double* shared = shared_[parity].get();
    double* stage = stage_[parity].get();
    double* recv = recv_[t].get();
    const double* send = send_[t].get();
    auto combine = [&](std::size_t count) {
    // In thread order, like a rank-ordered reduction.
#pragma omp for schedule(static) nowait
      for (std::size_t i = 0; i < count; ++i) {
        double sum = send_[0][i];
        for (int u = 1; u < threads; ++u) sum += send_[static_cast<std::size_t>(u)][i];
        shared[i] = sum;
      }
    };
    switch (def_.kind) {
      case Kind::barrier: {
#pragma omp barrier
        if (thread == 0) MPI_Barrier(comm_);
#pragma omp barrier
        break;
      }
      case Kind::bcast: {
        // The root's data is thread 0's buffer; the first barrier keeps it from being
        // overwritten while a slower thread still copies the previous call's.
#pragma omp barrier
        if (thread == 0) MPI_Bcast(recv_[0].get(), mpi_count(n), MPI_DOUBLE, 0, comm_);
#pragma omp barrier
        if (thread != 0) std::memcpy(recv, recv_[0].get(), n * sizeof(double));
        break;
      }
      case Kind::reduce:
        combine(n);
#pragma omp barrier
        if (thread == 0) {
          if (process_ == 0) {
            MPI_Reduce(MPI_IN_PLACE, shared, mpi_count(n), MPI_DOUBLE, MPI_SUM, 0, comm_);
            std::memcpy(recv, shared, n * sizeof(double));
          } else {
            MPI_Reduce(shared, nullptr, mpi_count(n), MPI_DOUBLE, MPI_SUM, 0, comm_);
          }
        }
        break;
      case Kind::allreduce:
        combine(n);
#pragma omp barrier
        if (thread == 0)
          MPI_Allreduce(MPI_IN_PLACE, shared, mpi_count(n), MPI_DOUBLE, MPI_SUM, comm_);
#pragma omp barrier
        std::memcpy(recv, shared, n * sizeof(double));
        break;
      case Kind::allgather:
        std::memcpy(shared + (p * T + t) * n, send, n * sizeof(double));
#pragma omp barrier
        if (thread == 0)
          MPI_Allgather(MPI_IN_PLACE, 0, MPI_DOUBLE, shared, mpi_count(T * n), MPI_DOUBLE, comm_);
#pragma omp barrier
        std::memcpy(recv, shared, R * n * sizeof(double));
        break;
      case Kind::gather:
        std::memcpy(shared + (p * T + t) * n, send, n * sizeof(double));
#pragma omp barrier
        if (thread == 0) {
          if (process_ == 0) {
            MPI_Gather(MPI_IN_PLACE, 0, MPI_DOUBLE, shared, mpi_count(T * n), MPI_DOUBLE, 0, comm_);
            std::memcpy(recv, shared, R * n * sizeof(double));
          } else {
            MPI_Gather(shared + p * T * n, mpi_count(T * n), MPI_DOUBLE, nullptr, 0, MPI_DOUBLE, 0,
                       comm_);
          }
        }
        break;
      case Kind::scatter: {
        if (thread == 0) {
          if (process_ == 0)
            MPI_Scatter(send_[0].get(), mpi_count(T * n), MPI_DOUBLE, MPI_IN_PLACE, 0, MPI_DOUBLE,
                        0, comm_);
          else
            MPI_Scatter(nullptr, 0, MPI_DOUBLE, shared, mpi_count(T * n), MPI_DOUBLE, 0, comm_);
        }
#pragma omp barrier
        const double* from = process_ == 0 ? send_[0].get() + t * n : shared + t * n;
        std::memcpy(recv, from, n * sizeof(double));
        break;
      }
      case Kind::alltoall: {
        // Staged by destination process, then source thread, then destination thread, so that
        // one MPI_Alltoall of T*T blocks per process pair moves everything.
        const std::size_t b = block_of(n, ranks());
        for (std::size_t d = 0; d < R; ++d)
          std::memcpy(shared + ((d / T * T + t) * T + d % T) * b, send + d * b, b * sizeof(double));
#pragma omp barrier
        if (thread == 0)
          MPI_Alltoall(shared, mpi_count(T * T * b), MPI_DOUBLE, stage, mpi_count(T * T * b),
                       MPI_DOUBLE, comm_);
#pragma omp barrier
        for (std::size_t s = 0; s < R; ++s)
          std::memcpy(recv + s * b, stage + ((s / T * T + s % T) * T + t) * b, b * sizeof(double));
        break;
      }
      case Kind::reduce_scatter_block: {
        const std::size_t b = block_of(n, ranks());
        combine(n);
#pragma omp barrier
        if (thread == 0)
          MPI_Reduce_scatter_block(MPI_IN_PLACE, shared, mpi_count(T * b), MPI_DOUBLE, MPI_SUM,
                                   comm_);
#pragma omp barrier
        std::memcpy(recv, shared + t * b, b * sizeof(double));
        break;
      }
      case Kind::scan:
      case Kind::exscan: {
        // Row u of the shared array: the prefix over threads 0..u of this process.
#pragma omp for schedule(static) nowait
        for (std::size_t i = 0; i < n; ++i) {
          double run = 0;
          for (std::size_t u = 0; u < T; ++u) {
            run += send_[u][i];
            shared[u * n + i] = run;
          }
        }
#pragma omp barrier
        if (thread == 0)
          MPI_Exscan(shared + (T - 1) * n, stage, mpi_count(n), MPI_DOUBLE, MPI_SUM, comm_);
#pragma omp barrier
        // exscan: the row of the thread below, and thread 0 the prefix of the processes below
        // alone (nothing on process 0: MPI leaves rank 0's output undefined).
        if (def_.kind == Kind::exscan && t == 0) {
          if (process_ != 0) std::memcpy(recv, stage, n * sizeof(double));
          break;
        }
        const double* row = shared + (def_.kind == Kind::exscan ? t - 1 : t) * n;
        if (process_ == 0)
          std::memcpy(recv, row, n * sizeof(double));
        else
          for (std::size_t i = 0; i < n; ++i) recv[i] = stage[i] + row[i];
        break;
      }
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
  std::size_t stage_size_ = 0;
};

// ---------------------------------------------------------------------------------------------
// The memory-bandwidth bound

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

class BoundCase : public Case {
 public:
  BoundCase(const CollectiveDef& def, tlc::Team& team)
      : def_(def),
        team_(team),
        src_(static_cast<std::size_t>(team.threads())),
        dst_(static_cast<std::size_t>(team.threads())) {}

  int ranks() const override { return team_.threads(); }

  // Each thread copies moved / (2 T) bytes, so that the copies move and touch as many bytes as
  // the collective (copy bandwidth counts bytes read and written).
  void prepare(std::size_t n) override {
    const double per_thread = moved_bytes(def_.kind, team_.threads(), n) / (2.0 * team_.threads());
    count_ = n == 0 ? 0
                    : std::max<std::size_t>(
                          static_cast<std::size_t>(std::ceil(per_thread / sizeof(double))), 1);
    team_.run([&](tlc::Thread& me) {
      const auto t = static_cast<std::size_t>(me.local_index());
      src_[t].reset();
      dst_[t].reset();
      if (count_ == 0) return;
      src_[t] = untouched_buffer(count_);
      dst_[t] = untouched_buffer(count_);
      for (std::size_t i = 0; i < count_; ++i) {
        src_[t][i] = input_value(me.rank(), i);
        dst_[t][i] = 0;
      }
    });
  }

  std::size_t check(std::string& first) override {
    if (def_.kind == Kind::barrier) return 0;
    std::vector<std::size_t> wrong(src_.size(), 0);
    team_.run([&](tlc::Thread& me) {
      const auto t = static_cast<std::size_t>(me.local_index());
      poison(dst_[t].get(), count_);
      std::memcpy(dst_[t].get(), src_[t].get(), count_ * sizeof(double));
      if (std::memcmp(dst_[t].get(), src_[t].get(), count_ * sizeof(double)) != 0) wrong[t] = 1;
    });
    std::size_t total = 0;
    for (std::size_t w : wrong) total += w;
    if (total && first.empty()) first = "bound: a copy differs from its source";
    return total;
  }

  Timing time(const Loop& loop) override {
    std::vector<PaddedDouble> seconds(src_.size());
    const Loop plain{loop.warmup, loop.iters, 0};  // arrival skew means nothing to a copy
    const int threads = team_.threads();
    SpinBarrier spin(threads);
    team_.run([&](tlc::Thread& me) {
      const auto t = static_cast<std::size_t>(me.local_index());
      if (def_.kind == Kind::barrier) {
        bool sense = false;
        auto wait = [&] { spin.wait(sense); };
        seconds[t].value = timed_loop(plain, me.local_index(), threads, wait, wait);
        return;
      }
      const double* src = src_[t].get();
      double* dst = dst_[t].get();
      const std::size_t bytes = count_ * sizeof(double);
      seconds[t].value = timed_loop(
          plain, me.local_index(), threads,
          [&] {
            std::memcpy(dst, src, bytes);
            // The copy is observable: the compiler may neither drop nor merge it.
            asm volatile("" : : "r"(dst) : "memory");
          },
          [&] { me.barrier(); });
    });
    return summarise(seconds);
  }

  // The bytes each thread copies per call (for the header of a row).
  std::size_t copy_bytes() const { return count_ * sizeof(double); }

 private:
  const CollectiveDef& def_;
  tlc::Team& team_;
  std::vector<Buffer> src_;
  std::vector<Buffer> dst_;
  std::size_t count_ = 0;
};

}  // namespace

std::unique_ptr<Case> make_tlc_case(const CollectiveDef& def, tlc::Team& team, bool in_place,
                                    MPI_Comm comm) {
  return std::make_unique<TlcCase>(def, team, in_place, comm);
}
std::unique_ptr<Case> make_mpi_case(const CollectiveDef& def, MPI_Comm comm) {
  return std::make_unique<MpiCase>(def, comm);
}
std::unique_ptr<Case> make_master_case(const CollectiveDef& def, int threads, MPI_Comm comm) {
  return std::make_unique<MasterCase>(def, threads, comm);
}
std::unique_ptr<Case> make_bound_case(const CollectiveDef& def, tlc::Team& team) {
  return std::make_unique<BoundCase>(def, team);
}

}  // namespace tlc_bench
