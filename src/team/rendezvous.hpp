// The rendezvous of a team's threads in one process: the flags and steps every algorithm builds
// on, and the begin step of every call. One of the parts a TeamImpl owns (team/team_impl.hpp).
//
// Flags follow Jain et al. ([Jain], sections II-A/B and IV):
// every flag has a single writer and a cache line of its own, values only grow (a step counter
// that is never reset), stores are release and loads acquire. A thread's `arrived` flag is its
// gather flag; the leader's `released` flag is the release flag all threads read ("read from
// parent flag", section III-B).
//
// Every collective starts with a begin step: the thread writes a fingerprint of its arguments
// into its begin line (one cache line, double-buffered by call parity, since a fast thread may
// already begin call k+1 while a slow one still reads call k's), announces call k there, waits
// until every thread of the process has, and compares the fingerprints. begin_call() also
// publishes a full descriptor first (algo/validation.cpp then checks what fingerprints cannot
// see, such as user op objects and v-variant counts); the inline form of flat
// (algo/flat_inline.cpp) carries its data in the rest of the line and needs nothing else.
// Both forms read the same fingerprints in every thread and so throw the same error in every
// thread, before any data has moved, even when threads that disagree took different forms.
// Steps inside a call (sync, release, pipelines) use the separate `arrived` flag.
#pragma once

#include <array>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <cstring>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <new>
#include <optional>
#include <span>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include <tlc/options.hpp>
#include <tlc/stats.hpp>
#include <tlc/thread.hpp>
#include <tlc/topology.hpp>

#include "inter/alarm.hpp"
#include "inter/process_comm.hpp"
#include "intra/sliced_reduce.hpp"
#include "select/planner.hpp"
#include "team/arrival_calls.hpp"
#include "team/flags.hpp"
#include "team/process_failures.hpp"
#include "team/roster.hpp"
#include "team/telemetry.hpp"
#include "team/wait_policy.hpp"
#include "team/worker_pool.hpp"

namespace tlc::detail {

// Small contributions travel in the caller's own slot, next to its flag ([Jain] sec. III-D):
// readers then never touch the caller's buffers, so the caller may return as soon as everybody
// has arrived, and one rendezvous is the whole collective. (The planner's size rule knows it as
// flat_carried_max_bytes.)
inline constexpr std::size_t carry_capacity = flat_carried_max_bytes;

struct CallDescriptor {
  Call call;              // this thread's arguments
  std::size_t count = 0;  // elements per rank block; equal on all threads (0 for v-variants)
  const void* contribution = nullptr;  // what other threads read from this one (user memory, or
                                       // this slot's carry buffer when carried)
  std::size_t contribution_bytes = 0;
  bool carried = false;
  std::string invalid;  // non-empty: this thread's own arguments are wrong, and why
};

// The gather flag of the steps inside a call, with what the others read right after it:
// the step of work_then_sync at which the owner's work threw (written before the arrival,
// release; in the same line, so that checking it costs no extra cache miss).
struct alignas(cache_line_size) ArrivalFlag {
  std::atomic<std::uint64_t> value{0};
  std::uint64_t failed_step = 0;
};

// What threads must agree on to make the same call; equal fingerprints mean every thread takes
// the same algorithm and form. The op object of a user op is not in it (algo/validation.cpp
// compares the descriptors' ops).
struct CallFingerprint {
  std::uint8_t collective = 0;
  std::uint8_t op = 0;          // BuiltinOp
  std::uint8_t type_class = 0;  // TypeClass
  std::uint8_t invalid = 0;     // this thread's own arguments are wrong (its descriptor says why)
  std::int32_t root = -1;
  std::uint32_t type_size = 0;
  std::uint16_t type_alignment = 0;
  // Begun by the protocol of the calls led by arrival (algo/arrival/): a thread whose plan is
  // static and that meets it in a call (the threads disagree about the call, and the plan
  // depends on what they disagree about) aborts the team, since the other thread does not wait
  // for its verdict.
  std::uint8_t led_by_arrival = 0;
  std::uint8_t unused = 0;
  std::uint64_t count = 0;  // elements per rank block, as CallDescriptor::count
  friend bool operator==(const CallFingerprint&, const CallFingerprint&) = default;
};

// Byte-wise: the fields leave no padding, so equal bytes are equal fingerprints, compared in
// three loads instead of eight branches.
static_assert(std::has_unique_object_representations_v<CallFingerprint>);
inline bool same_fingerprint(const CallFingerprint& a, const CallFingerprint& b) noexcept {
  return std::memcmp(&a, &b, sizeof(CallFingerprint)) == 0;
}

// The one definition of what both forms announce, so that agreeing threads announce alike.
// Written field by field where it lives: a fingerprint built aside and copied in is read back
// as one wide load from narrow stores, which stalls store forwarding on every call.
inline void write_fingerprint(CallFingerprint& f, const Call& c, std::size_t count,
                              bool invalid) noexcept {
  f.collective = static_cast<std::uint8_t>(c.collective);
  f.op = static_cast<std::uint8_t>(c.op);
  f.type_class = static_cast<std::uint8_t>(c.type.type_class);
  f.invalid = invalid ? 1 : 0;
  f.root = c.root;
  f.type_size = c.type.size;
  f.type_alignment = static_cast<std::uint16_t>(c.type.alignment);
  f.led_by_arrival = 0;
  f.unused = 0;
  f.count = count;
}

// What differs between thread a's fingerprint and thread b's, in words (a_who, b_who: who they
// are), for the error of a call whose threads disagree.
std::string fingerprint_difference(const std::string& a_who, const CallFingerprint& a,
                                   const std::string& b_who, const CallFingerprint& b);

inline CallFingerprint fingerprint_of(const Call& c, std::size_t count, bool invalid) noexcept {
  CallFingerprint f;
  write_fingerprint(f, c, count, invalid);
  return f;
}

// memcpy of at most 32 bytes without a library call: the copy of an inline contribution is on
// the path whose whole cost is a few dozen nanoseconds.
inline void copy_small(void* to, const void* from, std::size_t n) noexcept {
  auto* d = static_cast<std::byte*>(to);
  const auto* s = static_cast<const std::byte*>(from);
  if (n >= 16) {
    std::memcpy(d, s, 16);
    std::memcpy(d + n - 16, s + n - 16, 16);
  } else if (n >= 8) {
    std::memcpy(d, s, 8);
    std::memcpy(d + n - 8, s + n - 8, 8);
  } else if (n >= 4) {
    std::memcpy(d, s, 4);
    std::memcpy(d + n - 4, s + n - 4, 4);
  } else {
    for (std::size_t i = 0; i < n; ++i) d[i] = s[i];
  }
}

// The begin flag of call k, its fingerprint and, for the inline form of flat, the caller's data.
struct alignas(cache_line_size) BeginLine {
  std::atomic<std::uint64_t> call{0};  // written by the owning thread only, release
  CallFingerprint fingerprint;
  alignas(8) std::byte payload[cache_line_size - 8 - sizeof(CallFingerprint)];
};
static_assert(sizeof(BeginLine) == cache_line_size);
inline constexpr std::size_t inline_capacity = sizeof(BeginLine::payload);

struct alignas(cache_line_size) ThreadSlot {
  BeginLine begun[2];           // by call parity
  ArrivalFlag arrived;          // gather flag of the steps inside a call, owning thread only
  CallDescriptor published[2];  // by call parity
  alignas(cache_line_size) std::byte carry[2][carry_capacity];  // by call parity
  // Progress flags of pipelined algorithms (chunks produced / sent / consumed), each written by
  // the owning thread only and counting chunks over the team's lifetime.
  Flag posted[3];
  // Private to the thread currently holding the slot:
  std::uint64_t step = 0;    // synchronisation steps inside calls taken
  std::uint64_t chunks = 0;  // chunks of pipelined calls (the base of the posted values)
  std::uint64_t calls = 0;   // collectives entered (begin steps taken)
  // Calls led by arrival: how many this thread has entered, and the number (in `calls`) of the
  // last one; the next call of any kind first waits until that one is complete.
  std::uint64_t arrival_calls = 0;
  std::uint64_t last_arrival_call = 0;
  PlanCache plans;                // the plans this thread asked for
  std::atomic<bool> held{false};  // a thread (run worker or attached) owns this index
  // Its thread's body in Team::run has returned (until the run ends): a call it did not make
  // can never complete. (A detached index is not left: another thread may attach it.)
  std::atomic<bool> left{false};
};

class Rendezvous {
 public:
  // Before the first call: the team's threads here (`roster`), where failures go (`failures`)
  // and the state of the calls led by arrival (`arrival`), each owned by the team.
  void prepare(const Roster& roster, ProcessFailures& failures, ArrivalState& arrival);
  Waiter& waiter() noexcept { return waiter_; }
  bool aborted() const noexcept { return waiter_.aborted(); }
  const Roster& roster() const noexcept { return *roster_; }
  // Thread i's slot: its flags, and the team's bookkeeping of it (plans, whether it is held).
  ThreadSlot& slot(int i) noexcept { return slots_[static_cast<std::size_t>(i)]; }
  // Thread me's body in Team::run returned: waits for its calls end with an error.
  void leave(int me) {
    slot(me).left.store(true, std::memory_order_release);
    std::atomic_thread_fence(std::memory_order_seq_cst);  // pairs with the fence of a sleeper
    abort_if_left_behind();
    waiter_.notify();
  }
  // A thread that has left has begun fewer calls than another thread: that thread's call can
  // never complete (whatever protocol it runs), so the team aborts naming the one that left.
  // Run where it costs nothing: when a thread leaves, and before a wait goes to sleep.
  void abort_if_left_behind();
  // Thread me's run has ended (or a new one begins).
  void rejoin(int me) noexcept { slot(me).left.store(false, std::memory_order_relaxed); }

  // --- Synchronisation steps (see file comment) ---
  // Publishes d, waits for every thread of the process, validates; returns the descriptors of
  // this call, indexed by local thread index.
  struct CallView {
    const Rendezvous* rendezvous;
    int parity;
    // Or descriptors kept elsewhere, one per local thread: a persistent call's, whose rounds run
    // the sliced algorithm's shares without a rendezvous (algo/posted/slices.cpp).
    const CallDescriptor* descriptors = nullptr;
    // Bytes from one thread's descriptor to the next's: a nonblocking call on the team's ring
    // keeps each in its thread's slot (team/line_ring.hpp).
    std::size_t descriptor_stride = sizeof(CallDescriptor);
    const CallDescriptor& operator[](int local_index) const {
      if (descriptors)
        return *reinterpret_cast<const CallDescriptor*>(
            reinterpret_cast<const std::byte*>(descriptors) +
            static_cast<std::size_t>(local_index) * descriptor_stride);
      return rendezvous->slots_[static_cast<std::size_t>(local_index)].published[parity];
    }
  };
  // With carry, a contribution of at most carry_capacity bytes is copied into the caller's slot
  // first and published in its place. Algorithms call begin_validated() (algo/algorithms.hpp),
  // which adds the checks of the descriptors.
  CallView begin_call(int me, CallDescriptor&& d, bool carry = false);

  // The inline begin step (algo/flat_inline.cpp): writes fingerprint f and `bytes` (at most
  // inline_capacity) of `data` into the caller's begin line, announces the call, waits for every
  // thread of the process and compares the fingerprints. Returns the call parity; the lines stay
  // readable until the caller's next begin step. Defined here so that it inlines into its one
  // caller: this step is most of an 8-byte allreduce, and every instruction on it is on the
  // critical path of back-to-back calls (the slow parts, waiting and reporting, stay out of line).
  // in_carry: the lines form of flat for contributions past inline_capacity (at most
  // carry_capacity bytes; algo/flat_inline.cpp): the data goes into the slot's carry buffer of
  // the call's parity instead, and the begin line carries the fingerprint only.
  int begin_inline(int me, const CallFingerprint& f, const void* data, std::size_t bytes,
                   bool in_carry = false) {
    // Single-process calls only: no notes from other processes to attend to.
    waiter_.throw_if_aborted();
    ThreadSlot& s = slot(me);
    await_arrival_call(s);
    const std::uint64_t k = ++s.calls;
    const int parity = static_cast<int>(k & 1);
    BeginLine& line = s.begun[parity];
    line.fingerprint = f;
    if (!in_carry)
      copy_small(line.payload, data, bytes);
    else if (bytes)
      std::memcpy(s.carry[parity], data, bytes);
    line.call.store(k, std::memory_order_release);
    waiter_.notify();
    for (int i = 0; i < threads_; ++i)
      if (slot(i).begun[parity].call.load(std::memory_order_acquire) < k) {
        wait_all_begun(k);
        break;
      }
    // All equal to a valid f: nothing to report (check_fingerprints would find nothing).
    for (int i = 0; i < threads_; ++i)
      if (!same_fingerprint(slot(i).begun[parity].fingerprint, f)) check_fingerprints(parity);
    return parity;
  }
  // The inline begin step of a thread whose own arguments are wrong (f.invalid): publishes `why`
  // for the others to report, then takes the step and throws the error every thread throws.
  [[noreturn]] void fail_inline(int me, const CallFingerprint& f, const std::string& why);
  const std::byte* inline_payload(int t, int parity) const noexcept {
    return slots_[static_cast<std::size_t>(t)].begun[parity].payload;
  }
  // Where begin_inline put thread t's data (in_carry as it was given).
  const std::byte* line_payload(int t, int parity, bool in_carry) const noexcept {
    const ThreadSlot& s = slots_[static_cast<std::size_t>(t)];
    return in_carry ? s.carry[parity] : s.begun[parity].payload;
  }
  // Bytes from one thread's inline payload (or carry buffer) to the next thread's.
  static constexpr std::size_t inline_payload_stride = sizeof(ThreadSlot);
  // Every thread of the process arrives and waits for all others: after it, no thread reads
  // or writes another's buffers of this call any more.
  void sync(int me) {
    const std::uint64_t s = next_step(me);
    arrive(me, s);
    wait_all_arrived(s);
  }

  // Work on other threads' buffers (reading their inputs, writing their outputs), then the
  // closing rendezvous that keeps every buffer alive until all of it is done. An exception from
  // the work (a user op) must not unwind this thread's buffers while the others still use them:
  // the thread stops its share, still arrives, and waits for every other thread even if the team
  // is aborted meanwhile; then it aborts the team and rethrows, and the other threads, which see
  // the failure at the same rendezvous, throw TeamAborted instead of returning half-made outputs.
  template <class Work>
  void work_then_sync(int me, Work&& work) {
    std::exception_ptr failed;
    try {
      work();
    } catch (...) {
      failed = std::current_exception();
    }
    const std::uint64_t s = next_step(me);
    if (failed) slot(me).arrived.failed_step = s;
    arrive(me, s);
    wait_all_arrived(s, Waiter::OnAbort::keep_waiting);
    if (failed) {
      if (!aborted()) failures_->abort(roster_->who(me) + " threw inside a collective (a user op)");
      std::rethrow_exception(failed);
    }
    for (int t = 0; t < threads_; ++t)
      if (slot(t).arrived.failed_step == s) {
        if (!aborted())
          failures_->abort(roster_->who(t) + " threw inside a collective (a user op)");
        waiter_.throw_if_aborted();
      }
    waiter_.throw_if_aborted();
  }

  // --- Calls led by arrival (algo/arrival/) ---
  // How many calls led by arrival thread me has entered (the current one included).
  std::uint64_t arrival_calls(int me) const noexcept {
    return slots_[static_cast<std::size_t>(me)].arrival_calls;
  }
  // Starts call k of thread me as its m-th call led by arrival: publishes d (readable by every
  // thread until the call is complete) and its fingerprint, without waiting for anybody.
  // Returns the call's parity.
  int begin_arrival_call(int me, CallDescriptor&& d);
  // The caller is done with the current call led by arrival (its buffers and deposit may be
  // read until the call is complete, which is when every thread has left it).
  void leave_arrival_call() noexcept {
    arrival_->departures.fetch_add(1, std::memory_order_acq_rel);
    waiter_.notify();
  }
  // The disagreement, if any, between thread t's arguments and thread ref's in the call of this
  // parity, as Error; nothing when they agree.
  void check_agreement(int parity, int t, int ref) const;
  // Every thread's arguments against thread 0's (the static begin step's check), for the thread
  // that sees all of them.
  void check_all_agree(int parity) const { check_fingerprints(parity); }
  const CallFingerprint& fingerprint(int t, int parity) const noexcept {
    return slots_[static_cast<std::size_t>(t)].begun[parity].fingerprint;
  }
  void post_deposited(int me, std::uint64_t m) noexcept {
    arrival_->post_deposited(me, m);
    waiter_.notify();
  }

  // Advances the caller's step counter and returns the new step.
  std::uint64_t next_step(int me) noexcept { return ++slot(me).step; }
  // Gather: the caller's arrival at step s.
  void arrive(int me, std::uint64_t s) noexcept;
  // Waits until every thread of the process has arrived at step s or later (throws TeamAborted
  // on abort, unless told to keep waiting).
  void wait_all_arrived(std::uint64_t s, Waiter::OnAbort on_abort = Waiter::OnAbort::throw_aborted);
  // Release: the leader's signal that step s is done / non-leaders wait for it.
  void release(std::uint64_t s) noexcept;
  void wait_released(std::uint64_t s);

  // Pipelines: post(me, f, v) publishes that the caller reached v on progress flag f;
  // wait_posted(f, v, include) waits until every thread t with include(t) has.
  enum Progress { produced = 0, sent = 1, consumed = 2 };
  void post(int me, Progress f, std::uint64_t v) noexcept {
    slot(me).posted[f].value.store(v, std::memory_order_release);
    waiter_.notify();
  }
  template <class Include>
  void wait_posted(Progress f, std::uint64_t v, Include&& include) {
    waiter_.wait(
        [&] {
          for (int t = 0; t < threads_; ++t)
            if (include(t) && slot(t).posted[f].value.load(std::memory_order_acquire) < v)
              return aborted();
          return true;
        },
        [&] { return std::string("threads of a pipelined collective"); });
    waiter_.throw_if_aborted();
  }
  std::uint64_t& pipeline_chunks(int me) noexcept { return slot(me).chunks; }

 private:
  // Thread me's next call opens (every form): the team still usable, an earlier call led by
  // arrival over, the call counted (its number is the slot's calls) and told to the failure
  // watch.
  ThreadSlot& open_call(int me);
  // The begin step shared by both forms: announce call k, wait for all, compare fingerprints.
  void begin_step(ThreadSlot& s, std::uint64_t k);
  // A thread's next call, of any kind, starts here when its previous call was led by arrival:
  // it waits until every thread has left that one (the shared state and the deposits are then
  // free again, and its MPI steps are over, so calls reach MPI in order).
  void await_arrival_call(ThreadSlot& s) {
    if (s.last_arrival_call == s.calls && s.calls != 0) [[unlikely]]
      wait_arrival_call_complete(s.arrival_calls);
  }
  void wait_arrival_call_complete(std::uint64_t m);
  void wait_all_begun(std::uint64_t k);

  void check_fingerprints(int parity) const;

  Waiter waiter_;
  const Roster* roster_ = nullptr;
  ProcessFailures* failures_ = nullptr;
  ArrivalState* arrival_ = nullptr;
  int threads_ = 1;  // roster_->threads(), kept here for the loops
  std::unique_ptr<ThreadSlot[]> slots_;
  Flag released_;  // written by the leader (thread 0) only
};

}  // namespace tlc::detail
