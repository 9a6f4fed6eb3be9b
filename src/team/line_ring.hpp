// The slots of the nonblocking calls of a one-process team (algo/posted/lines.cpp runs them;
// docs/design.md section 14, "Nonblocking calls on lines" and "on slices"): per thread, `depth`
// slots that its calls use in turn. A slot holds what the call's other threads read (the call's
// fingerprint, the thread's descriptor and, on lines, a copy of its contribution, stamped with
// the call's number), then who settled the slot (on lines: computed the owner's output; on
// slices: ran the owner's share of the work) and how it ended.
//
// Single writers (Jain et al. [Jain] sec. II): the owner writes its slot's call and stamps it;
// the thread that claims the slot (one atomic exchange: the owner, another thread of the call,
// or one that needs the slot's place for a later call) settles it and marks it done. Stamps and
// done marks only grow; nothing is reset.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include <tlc/detail/call.hpp>
#include <tlc/error.hpp>

#include "team/flags.hpp"
#include "team/rendezvous.hpp"

namespace tlc::detail {

class TeamImpl;

// What a tlc::Request of a call on lines holds: the thread and, while its team lives, the team.
// One per thread, each on lines of its own, so that requests of different threads never share a
// reference count.
struct alignas(cache_line_size) LineSeat {
  std::atomic<bool> alive{true};
  TeamImpl* team = nullptr;
  int me = 0;
};

// How a thread's call on the ring runs: on lines (its contribution copied into its slot, each
// thread computes its own output from every slot), on slices (the blocking sliced algorithm's
// shares, one per slot, claimed by whoever tests first), or on the general schedule
// (algo/posted/calls.hpp; the slot only marks its place, nothing to read).
enum class RingSchedule : std::uint8_t { lines, slices, general };

class LineRing {
 public:
  // Calls of one thread whose slots are in use at once before a start makes room (it then
  // completes the oldest call for the threads that have not, so it never waits for a thread that
  // is busy elsewhere).
  static constexpr int depth = 8;
  // The largest contribution a slot carries: the blocking lines form's (algo/flat_inline.cpp).
  static constexpr std::size_t payload_capacity = lines_max_bytes;

  struct Slot {
    // Read by every thread of the call: stamp, fingerprint and the payload's first bytes share
    // a line, so that a small call costs one line per thread.
    alignas(cache_line_size) std::atomic<std::uint64_t> started{0};  // the call begun here
    CallFingerprint fingerprint;
    // Every call of the owner up to this one was complete for it when it began this one: a
    // reader of the stamp learns it without reading the done marks of other lines (make_room).
    std::uint64_t complete_through = 0;
    RingSchedule schedule = RingSchedule::lines;
    alignas(16) std::byte payload[payload_capacity];
    // The owner's arguments, count and contribution (where its output goes, what the others
    // read on slices), and why they are wrong.
    alignas(cache_line_size) CallDescriptor descriptor;
    // On slices, an in-place call whose output others' reads race with: the copy of the input
    // its start makes (as the blocking sliced form does), kept for the slot's later calls.
    std::vector<std::byte> aside;
    // What the slot's claim settles, once: on lines the owner's output, on slices the owner's
    // share of the call's work (algo/posted/lines.cpp). Claimed by the thread that computes it,
    // done once written or failed (release; a failure is recorded first, record_failure).
    alignas(cache_line_size) std::atomic<std::uint64_t> claimed{0};
    std::atomic<std::uint64_t> done{0};
    // On slices, the call the owner gave up on (its wait ended with an error): no share of it
    // runs after this (algo/posted/lines.cpp, abandon_on_ring).
    std::atomic<std::uint64_t> abandoned{0};
    // On slices, the owner's own: when it may take others' shares of the call (as long after
    // its own share as that share took).
    std::chrono::steady_clock::time_point steal_after{};
  };

  LineRing(TeamImpl& team, int threads);
  ~LineRing();  // marks every seat dead
  LineRing(const LineRing&) = delete;
  LineRing& operator=(const LineRing&) = delete;

  int threads() const noexcept { return threads_; }
  // Thread t's slot of call n (n >= 1).
  Slot& slot(int t, std::uint64_t n) noexcept {
    return slots_[static_cast<std::size_t>(t) * depth + static_cast<std::size_t>(n % depth)];
  }
  const Slot& slot(int t, std::uint64_t n) const noexcept {
    return slots_[static_cast<std::size_t>(t) * depth + static_cast<std::size_t>(n % depth)];
  }
  // Bytes from thread t's slot of a call to thread t + 1's slot of the same call.
  static constexpr std::size_t stride() noexcept { return sizeof(Slot) * depth; }
  // The number of thread me's next call on the ring (written by that thread only).
  std::uint64_t next(int me) noexcept { return ++counters_[static_cast<std::size_t>(me)].calls; }
  const std::shared_ptr<LineSeat>& seat(int me) const noexcept {
    return seats_[static_cast<std::size_t>(me)];
  }
  // Whether every thread has begun call n.
  bool all_started(std::uint64_t n) const noexcept {
    for (int t = 0; t < threads_; ++t)
      if (slot(t, n).started.load(std::memory_order_acquire) < n) return false;
    return true;
  }
  // What thread me knows of thread t: every call of t up to this number is complete for t
  // (written by me only, from the stamps it reads).
  std::uint64_t& known_complete(int me, int t) noexcept {
    const std::size_t i =
        static_cast<std::size_t>(me) * known_stride_ + static_cast<std::size_t>(t);
    return known_[i / KnownLine::words].word[i % KnownLine::words];
  }
  // Thread me's own: every call of it up to this number is complete for it.
  std::uint64_t& complete_through(int me) noexcept {
    return counters_[static_cast<std::size_t>(me)].complete_through;
  }

  // Whether some thread began call n on the ring itself (seen by a thread that began it on the
  // general schedule: the threads disagree about the call).
  bool began_on_ring(std::uint64_t n) const noexcept {
    for (int t = 0; t < threads_; ++t) {
      const Slot& s = slot(t, n);
      if (s.started.load(std::memory_order_acquire) == n && s.schedule != RingSchedule::general)
        return true;
    }
    return false;
  }
  // Thread t's call n failed: kept until t's test or wait of it takes it (its slot may serve a
  // later call before the program asks).
  void record_failure(int t, std::uint64_t n, Errc code, std::string message);
  // Thread me's failure of call n, taken out: false when it did not fail.
  bool take_failure(int me, std::uint64_t n, Errc& code, std::string& message);

 private:
  struct alignas(cache_line_size) Counter {
    std::uint64_t calls = 0;
    std::uint64_t complete_through = 0;
  };
  struct alignas(cache_line_size) Failures {
    std::atomic<int> pending{0};  // read without the lock: a call that did not fail pays a load
    std::mutex mutex;
    std::map<std::uint64_t, std::pair<Errc, std::string>> by_call;
  };
  int threads_;
  std::unique_ptr<Slot[]> slots_;
  std::unique_ptr<Counter[]> counters_;
  std::unique_ptr<std::shared_ptr<LineSeat>[]> seats_;
  std::unique_ptr<Failures[]> failures_;
  // threads x threads, row me written by me, rows on lines of their own.
  struct alignas(cache_line_size) KnownLine {
    static constexpr std::size_t words = cache_line_size / sizeof(std::uint64_t);
    std::uint64_t word[words] = {};
  };
  std::size_t known_stride_ = 0;  // words per row, whole lines
  std::unique_ptr<KnownLine[]> known_;
};

}  // namespace tlc::detail
