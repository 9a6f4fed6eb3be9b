// What the threads of the calls led by arrival (algo/arrival/) share: one of the parts a TeamImpl
// owns. The begin step of such a call is the rendezvous's (team/rendezvous.cpp); everything
// after it that the threads of the call exchange is here.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <new>
#include <string>

#include "team/flags.hpp"

namespace tlc::detail {

// A thread's private copy of what it contributes to a call it leaves before the others arrive
// (algo/arrival/): grown by its owner only, read by others until the call is complete.
class DepositBuffer {
 public:
  std::byte* reserve(std::size_t bytes) {
    if (bytes > capacity_) {
      data_.reset(static_cast<std::byte*>(::operator new[](bytes, std::align_val_t{64})));
      capacity_ = bytes;
    }
    return data_.get();
  }
  std::byte* data() const noexcept { return data_.get(); }

 private:
  struct Free {
    void operator()(std::byte* p) const noexcept { ::operator delete[](p, std::align_val_t{64}); }
  };
  std::unique_ptr<std::byte[], Free> data_;
  std::size_t capacity_ = 0;
};

// What the threads of one call led by arrival share (algo/arrival/). At most one such call
// is in progress at a time: a thread entering any call first waits until the previous call, if
// it was led by arrival, is complete (Rendezvous::wait_arrival_call_complete), so every value is
// per call without double buffering. Counters only grow: call m (the m-th such call of the team)
// owns tickets and departures [(m-1)T, mT), and the flags hold the number m of the call they
// speak for.
struct ArrivalState {
  alignas(cache_line_size) std::atomic<std::uint64_t> tickets{0};     // arrivals, in arrival order
  alignas(cache_line_size) std::atomic<std::uint64_t> departures{0};  // threads done with a call
  alignas(cache_line_size) std::atomic<std::uint64_t> claimed{0};  // network step taken by a thread
  alignas(cache_line_size) std::atomic<std::uint64_t> ready{0};    // data / go-ahead published
  const std::byte* source = nullptr;  // bcast: where the process's copy of the data is
  int source_thread = -1;             // the thread whose arguments the data was sent with
  alignas(cache_line_size) std::atomic<std::uint64_t> part_done[2]{};  // reduction parts finished
  std::atomic<std::uint64_t> part_failed{0};  // a part's user op threw (call number)
  // TLC_CHECK: the call m whose comparison with the other processes is in `verdict` ("" when
  // they agree), made by the first thread to arrive.
  alignas(cache_line_size) std::atomic<std::uint64_t> checked{0};
  std::string verdict;
  // alltoall: the arrival order of the current call (entry i: (m << 20) | the thread with ticket
  // i, so that a stale entry of an earlier call is never taken for this one); per thread, the
  // block copies into or out of its buffers over the team's lifetime, and the call m in which
  // its block for the last arriver was claimed by a copier.
  std::unique_ptr<std::atomic<std::uint64_t>[]> order;
  std::unique_ptr<Flag[]> copies;
  std::unique_ptr<Flag[]> claims;
  // allreduce: the call m whose result block the thread has in its receive buffer.
  std::unique_ptr<Flag[]> results;
  // alltoall: per thread, the block copies into or out of its buffers under way, and the last
  // call m in which it left (its buffers closed to copiers).
  std::unique_ptr<Flag[]> busy;
  std::unique_ptr<Flag[]> closed;
  // alltoall in fragments: per thread, under fragment_mutex, the call m in which its blocks
  // became available to the network and the call m in which a thread took them into a fragment
  // (or closed them: the thread is leaving after a failure); without the lock, the call m in
  // which the fragment's sends completed or were given up (the thread may leave then).
  std::mutex fragment_mutex;
  std::unique_ptr<std::uint64_t[]> fragment_available;
  std::unique_ptr<std::uint64_t[]> fragment_taken;
  std::unique_ptr<Flag[]> fragment_sent;
  // Per thread, what its calls led by arrival leave for the others: the number of the last such
  // call whose contribution it has copied into its deposit, and the copy; and the block copies
  // into or out of its buffers that the calls it entered expect of the others, in all (alltoall,
  // reduce_scatter_block, allreduce).
  struct alignas(cache_line_size) Deposit {
    Flag deposited;
    DepositBuffer buffer;
    std::uint64_t copies_due = 0;  // the owner's only
  };
  std::unique_ptr<Deposit[]> deposits;
  DepositBuffer& deposit(int t) noexcept { return deposits[static_cast<std::size_t>(t)].buffer; }
  void post_deposited(int me, std::uint64_t m) noexcept {
    deposits[static_cast<std::size_t>(me)].deposited.value.store(m, std::memory_order_release);
  }
  bool has_deposited(int t, std::uint64_t m) const noexcept {
    return deposits[static_cast<std::size_t>(t)].deposited.value.load(std::memory_order_acquire) >=
           m;
  }
  // Thread me enters a call in which the others make `count` block copies into or out of its
  // buffers: returns the copies due over the team's lifetime (compared with `copies`).
  std::uint64_t expect_copies(int me, std::uint64_t count) noexcept {
    return deposits[static_cast<std::size_t>(me)].copies_due += count;
  }

  void prepare(int threads) {
    const auto n = static_cast<std::size_t>(threads);
    deposits = std::make_unique<Deposit[]>(n);
    order = std::make_unique<std::atomic<std::uint64_t>[]>(n);
    copies = std::make_unique<Flag[]>(n);
    claims = std::make_unique<Flag[]>(n);
    results = std::make_unique<Flag[]>(n);
    busy = std::make_unique<Flag[]>(n);
    closed = std::make_unique<Flag[]>(n);
    fragment_available = std::make_unique<std::uint64_t[]>(n);
    fragment_taken = std::make_unique<std::uint64_t[]>(n);
    fragment_sent = std::make_unique<Flag[]>(n);
  }
};

}  // namespace tlc::detail
