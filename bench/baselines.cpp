// The baselines tlc is measured against, on the same input values:
// - raw MPI: one MPI call per process from the main thread on one buffer of the same size. It
//   is the inter-process part alone, the floor any hierarchical scheme builds on.
// - master-only: the OpenMP pattern tlc replaces. Threads combine their inputs into a shared
//   array, one thread calls MPI, everybody waits at a barrier and copies the result out.
#include <omp.h>

#include <climits>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <string>

#include <mpi.h>

#include "bench.hpp"

namespace tlc_bench {

namespace {

int mpi_count(std::size_t count) {
  if (count > static_cast<std::size_t>(INT_MAX))
    throw std::invalid_argument(
        "buffers above INT_MAX elements are not supported by the baselines");
  return static_cast<int>(count);
}

// ---------------------------------------------------------------------------------------------
// Raw MPI

class MpiAllreduce : public Case {
 public:
  explicit MpiAllreduce(const Context& ctx) : process_(ctx.process), expected_(ctx.processes) {}

  void prepare(std::size_t count) override {
    count_ = mpi_count(count);
    send_.assign(count, 0.0);
    recv_.assign(count, 0.0);
    for (std::size_t i = 0; i < count; ++i) send_[i] = input_value(process_, i);
  }

  double time(const Loop& loop) override {
    return global_max(timed_loop(
        loop, 0, 1, [&] { call(); }, [] { MPI_Barrier(MPI_COMM_WORLD); }));
  }

  std::string verify() override {
    std::fill(recv_.begin(), recv_.end(), std::numeric_limits<double>::quiet_NaN());
    call();
    return check_sum(recv_.data(), recv_.size(), expected_,
                     "MPI_Allreduce baseline, process " + std::to_string(process_));
  }

 private:
  void call() {
    MPI_Allreduce(send_.data(), recv_.data(), count_, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  }

  int process_;
  int count_ = 0;
  std::vector<double> send_;
  std::vector<double> recv_;
  Expected expected_;
};

class MpiBarrier : public Case {
 public:
  void prepare(std::size_t) override {}
  double time(const Loop& loop) override {
    auto barrier = [] { MPI_Barrier(MPI_COMM_WORLD); };
    return global_max(timed_loop(loop, 0, 1, barrier, barrier));
  }
};

// ---------------------------------------------------------------------------------------------
// Master-only OpenMP

// Synchronises the threads of all processes before timing.
void master_only_sync() {
#pragma omp barrier
  if (omp_get_thread_num() == 0) MPI_Barrier(MPI_COMM_WORLD);
#pragma omp barrier
}

class MasterAllreduce : public Case {
 public:
  explicit MasterAllreduce(const Context& ctx)
      : threads_(ctx.threads),
        process_(ctx.process),
        send_(static_cast<std::size_t>(ctx.threads)),
        recv_(static_cast<std::size_t>(ctx.threads)),
        sends_(static_cast<std::size_t>(ctx.threads)),
        expected_(ctx.processes * ctx.threads) {}

  void prepare(std::size_t count) override {
    count_ = mpi_count(count);
    for (Buffer& b : shared_) b.reset();
    for (Buffer& b : shared_) b = untouched_buffer(count);
    // Exceptions must not leave a parallel region: the region reports, the caller throws.
    int got = threads_;
#pragma omp parallel num_threads(threads_)
    {
      if (omp_get_num_threads() != threads_) {
        if (omp_get_thread_num() == 0) got = omp_get_num_threads();
      } else {
        const auto t = static_cast<std::size_t>(omp_get_thread_num());
        const int rank = process_ * threads_ + static_cast<int>(t);
        send_[t].reset();
        recv_[t].reset();
        send_[t] = untouched_buffer(count);
        recv_[t] = untouched_buffer(count);
        for (std::size_t i = 0; i < count; ++i) {
          send_[t][i] = input_value(rank, i);
          recv_[t][i] = 0;
        }
        sends_[t] = send_[t].get();
        // Same static schedule as the reduction loop, so each thread first-touches the part of
        // the shared arrays it will write.
#pragma omp for schedule(static)
        for (std::size_t i = 0; i < count; ++i) shared_[0][i] = shared_[1][i] = 0;
      }
    }
    if (got != threads_)
      throw std::runtime_error("OpenMP provided " + std::to_string(got) + " threads instead of " +
                               std::to_string(threads_) + " (OMP_THREAD_LIMIT? OMP_DYNAMIC?)");
  }

  double time(const Loop& loop) override {
    std::vector<PaddedDouble> seconds(static_cast<std::size_t>(threads_));
#pragma omp parallel num_threads(threads_)
    {
      const int t = omp_get_thread_num();
      int parity = 0;
      seconds[static_cast<std::size_t>(t)].value = timed_loop(
          loop, t, threads_,
          [&] {
            call(t, parity);
            parity ^= 1;
          },
          master_only_sync);
    }
    return global_max(max_of(seconds));
  }

  std::string verify() override {
    std::vector<std::string> errors(static_cast<std::size_t>(threads_));
#pragma omp parallel num_threads(threads_)
    {
      const int t = omp_get_thread_num();
      double* recv = recv_[static_cast<std::size_t>(t)].get();
      std::fill(recv, recv + count_, std::numeric_limits<double>::quiet_NaN());
      call(t, 0);
      errors[static_cast<std::size_t>(t)] =
          check_sum(recv, static_cast<std::size_t>(count_), expected_,
                    "master-only baseline, thread " + std::to_string(t) + " of process " +
                        std::to_string(process_));
    }
    for (const std::string& e : errors)
      if (!e.empty()) return e;
    return {};
  }

 private:
  // One allreduce, called by every thread of the parallel region. Consecutive calls alternate
  // between two shared arrays: a thread may start reducing call k+1 while a slower one still
  // copies out call k, and the barrier inside call k+1 keeps call k+2 (same array as k) from
  // starting before every copy of k is done. This saves the trailing barrier a single array
  // would need, so the baseline is the best honest version of the pattern.
  void call(int t, int parity) {
    double* shared = shared_[parity].get();
    const double* const* sends = sends_.data();
    const int n = count_;
    const int threads = threads_;
#pragma omp for schedule(static) nowait
    for (int i = 0; i < n; ++i) {
      double sum = sends[0][i];  // in thread order, like a rank-ordered reduction
      for (int u = 1; u < threads; ++u) sum += sends[u][i];
      shared[i] = sum;
    }
#pragma omp barrier
    if (t == 0) MPI_Allreduce(MPI_IN_PLACE, shared, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
#pragma omp barrier
    std::memcpy(recv_[static_cast<std::size_t>(t)].get(), shared,
                static_cast<std::size_t>(n) * sizeof(double));
  }

  int threads_;
  int process_;
  int count_ = 0;
  std::vector<Buffer> send_;
  std::vector<Buffer> recv_;
  std::vector<const double*> sends_;  // send_[t].get(), read by every thread
  Buffer shared_[2];
  Expected expected_;
};

class MasterBarrier : public Case {
 public:
  explicit MasterBarrier(const Context& ctx) : threads_(ctx.threads) {}

  void prepare(std::size_t) override {}

  double time(const Loop& loop) override {
    std::vector<PaddedDouble> seconds(static_cast<std::size_t>(threads_));
#pragma omp parallel num_threads(threads_)
    {
      const int t = omp_get_thread_num();
      seconds[static_cast<std::size_t>(t)].value =
          timed_loop(loop, t, threads_, master_only_sync, master_only_sync);
    }
    return global_max(max_of(seconds));
  }

 private:
  int threads_;
};

}  // namespace

std::unique_ptr<Case> make_mpi_allreduce(const Context& ctx) {
  return std::make_unique<MpiAllreduce>(ctx);
}
std::unique_ptr<Case> make_mpi_barrier(const Context&) { return std::make_unique<MpiBarrier>(); }
std::unique_ptr<Case> make_master_allreduce(const Context& ctx) {
  return std::make_unique<MasterAllreduce>(ctx);
}
std::unique_ptr<Case> make_master_barrier(const Context& ctx) {
  return std::make_unique<MasterBarrier>(ctx);
}

}  // namespace tlc_bench
