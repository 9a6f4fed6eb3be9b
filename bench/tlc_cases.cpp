// The tlc side of each benchmarked collective: every thread of the team calls the collective on
// its own buffers, exactly as an application would.
#include <cmath>
#include <functional>
#include <limits>
#include <span>

#include "bench.hpp"

namespace tlc_bench {

namespace {

class TlcAllreduce : public Case {
 public:
  explicit TlcAllreduce(const Context& ctx)
      : team_(ctx.team),
        send_(static_cast<std::size_t>(ctx.threads)),
        recv_(static_cast<std::size_t>(ctx.threads)),
        expected_(ctx.team.size()) {}

  void prepare(std::size_t count) override {
    count_ = count;
    team_.run([&](tlc::Thread& me) {
      const auto t = static_cast<std::size_t>(me.local_index());
      // Free the previous size first so that peak memory stays at one size.
      send_[t].reset();
      recv_[t].reset();
      send_[t] = untouched_buffer(count);
      recv_[t] = untouched_buffer(count);
      for (std::size_t i = 0; i < count; ++i) {
        send_[t][i] = input_value(me.rank(), i);
        recv_[t][i] = 0;
      }
    });
  }

  double time(const Loop& loop) override {
    std::vector<PaddedDouble> seconds(send_.size());
    team_.run([&](tlc::Thread& me) {
      const int t = me.local_index();
      std::span<const double> send(send_[static_cast<std::size_t>(t)].get(), count_);
      std::span<double> recv(recv_[static_cast<std::size_t>(t)].get(), count_);
      seconds[static_cast<std::size_t>(t)].value = timed_loop(
          loop, t, me.threads(), [&] { me.allreduce(send, recv, std::plus<>{}); },
          [&] { me.barrier(); });
    });
    return global_max(max_of(seconds));
  }

  std::string verify() override {
    std::vector<std::string> errors(send_.size());
    team_.run([&](tlc::Thread& me) {
      const auto t = static_cast<std::size_t>(me.local_index());
      double* recv = recv_[t].get();
      std::fill(recv, recv + count_, std::numeric_limits<double>::quiet_NaN());
      me.allreduce(std::span<const double>(send_[t].get(), count_), std::span<double>(recv, count_),
                   std::plus<>{});
      errors[t] =
          check_sum(recv, count_, expected_,
                    "tlc allreduce, rank " + std::to_string(me.rank()) + " (thread " +
                        std::to_string(t) + " of process " + std::to_string(me.process()) + ")");
    });
    for (const std::string& e : errors)
      if (!e.empty()) return e;
    return {};
  }

 private:
  tlc::Team& team_;
  std::vector<Buffer> send_;
  std::vector<Buffer> recv_;
  std::size_t count_ = 0;
  Expected expected_;
};

class TlcBarrier : public Case {
 public:
  explicit TlcBarrier(const Context& ctx) : team_(ctx.team) {}

  void prepare(std::size_t) override {}

  double time(const Loop& loop) override {
    std::vector<PaddedDouble> seconds(static_cast<std::size_t>(team_.threads()));
    team_.run([&](tlc::Thread& me) {
      auto barrier = [&] { me.barrier(); };
      seconds[static_cast<std::size_t>(me.local_index())].value =
          timed_loop(loop, me.local_index(), me.threads(), barrier, barrier);
    });
    return global_max(max_of(seconds));
  }

 private:
  tlc::Team& team_;
};

}  // namespace

std::unique_ptr<Case> make_tlc_allreduce(const Context& ctx) {
  return std::make_unique<TlcAllreduce>(ctx);
}

std::unique_ptr<Case> make_tlc_barrier(const Context& ctx) {
  return std::make_unique<TlcBarrier>(ctx);
}

}  // namespace tlc_bench
