// The nonblocking and persistent collectives of a team's threads (tlc/request.hpp; docs/design.md
// section 14): their shared state and the order in which they start.
//
// Who advances what: a thread that starts a call leaves its arguments in the call's shared state
// (PostedCall) and returns. The last thread of the process to start it runs the call's first
// step (the schedule's pack, algo/posted/schedule.hpp: the process's contributions combined or
// gathered into the call's staging memory, after which no thread's input is read again) and
// posts the step between processes, one MPI nonblocking collective on the team's posted
// communicator. Any thread testing or waiting for the call tests that MPI operation; each thread
// takes its own output out of the staging memory when it finds the call complete (unpack), so
// results reach every output without a barrier.
//
// Order: every thread's nonblocking calls and persistent starts are numbered in the order it
// makes them; the n-th of every thread is one call. MPI needs the posts of one communicator in
// the same order on every process, so a call whose pack finished before an earlier call's waits
// for that one's post (whoever posts the earlier one posts it too).
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <exception>
#include <map>
#include <memory>
#include <mutex>
#include <new>
#include <string>
#include <thread>
#include <vector>

#include <mpi.h>

#include <tlc/detail/call.hpp>

#include "inter/posted_op.hpp"
#include "intra/sliced_reduce.hpp"
#include "select/planner.hpp"
#include "team/flags.hpp"
#include "team/posted_engine.hpp"
#include "team/wait_policy.hpp"

namespace tlc::detail {

class TeamImpl;
class ProcessComm;
namespace posted {
class RoundSlices;
}

// The lock of the posted calls' order: held for a map lookup or two, by threads that start
// calls at nearly the same moment. A std::mutex that loses the race puts the thread to sleep in
// the kernel, and waking it costs far more than the critical section; this one spins briefly,
// then yields the core (an oversubscribed node may have descheduled the holder).
class BriefLock {
 public:
  void lock() noexcept {
    for (int attempt = 0; locked_.exchange(true, std::memory_order_acquire); ++attempt) {
      while (locked_.load(std::memory_order_relaxed)) {
        if (++attempt < 128) {
          cpu_relax();
        } else {
          std::this_thread::yield();
        }
      }
    }
  }
  void unlock() noexcept { locked_.store(false, std::memory_order_release); }

 private:
  std::atomic<bool> locked_{false};
};

// The lines of a persistent call of a one-process team whose contributions are small
// (algo/posted/lines.cpp): per thread and round parity, the round it last started of that
// parity and, after it, a copy of its contribution to that round, on lines of their own (one
// line for contributions of up to 48 bytes: a reader pulls one line per thread, and a thread
// writing the next round's never disturbs a reader of this one's). Written by their thread only;
// read by every thread of the call.
class RoundLines {
 public:
  RoundLines(int threads, std::size_t payload_bytes);
  // Thread t's payload for `round`.
  std::byte* payload(int t, std::uint64_t round) noexcept { return part(t, round) + header; }
  const std::byte* payload(int t, std::uint64_t round) const noexcept {
    return part(t, round) + header;
  }
  std::size_t payload_bytes() const noexcept { return payload_bytes_; }
  // A reduction with a built-in op whose payload fits the blocking calls' inline form: that
  // form's kernel, which folds the lines in one call (else nullptr: the call's combine per line).
  LineFoldFn fold = nullptr;
  // Bytes from one thread's payload to the next's of the same round.
  std::size_t stride() const noexcept { return stride_; }
  // Thread t has started `round` (its payload written before).
  void stamp(int t, std::uint64_t round) noexcept {
    stamp_of(t, round).store(round, std::memory_order_release);
  }
  // Whether every thread has started `round`.
  bool all_started(std::uint64_t round) const noexcept {
    for (int t = 0; t < threads_; ++t)
      if (stamp_of(t, round).load(std::memory_order_acquire) < round) return false;
    return true;
  }

 private:
  // The stamp, then the payload at an offset that suits every element type's alignment.
  static constexpr std::size_t header = 16;
  std::byte* part(int t, std::uint64_t round) const noexcept {
    return memory_.get() + static_cast<std::size_t>(t) * stride_ + (round & 1) * part_stride_;
  }
  std::atomic<std::uint64_t>& stamp_of(int t, std::uint64_t round) const noexcept {
    return *std::launder(reinterpret_cast<std::atomic<std::uint64_t>*>(part(t, round)));
  }
  struct Free {
    void operator()(std::byte* p) const noexcept;
  };
  int threads_;
  std::size_t payload_bytes_, part_stride_ = 0, stride_ = 0;
  std::unique_ptr<std::byte[], Free> memory_;
};

// One thread's arguments to a posted call.
struct PostedEntry {
  Call call;
  VariantLayout layout;                 // v-variants: the caller's arrays (alive until done)
  std::shared_ptr<const void> held_op;  // the copy of a user op object, if it has state
  std::size_t count = 0;                // elements per rank block (0 for v-variants)
  const void* contribution = nullptr;   // what this thread gives (send, or recv in place)
  std::size_t contribution_bytes = 0;
  std::string invalid;  // non-empty: this thread's own arguments are wrong, and why
  // One process: the number of the place this nonblocking call stamped on the team's lines
  // (team/line_ring.hpp), so that threads that put one call on different schedules find out.
  std::uint64_t line_call = 0;
  // A persistent in-place call on slices whose output others' reads race with: the copy of the
  // input each start makes (algo/posted/slices.hpp).
  std::vector<std::byte> aside;
};

// The shared state of one posted call of the threads of this process. A nonblocking call has
// one round; a persistent call one per start.
class PostedCall : public std::enable_shared_from_this<PostedCall> {
 public:
  PostedCall(TeamImpl& team, bool persistent);
  ~PostedCall();
  PostedCall(const PostedCall&) = delete;
  PostedCall& operator=(const PostedCall&) = delete;
  // A nonblocking call that completed and that nobody holds any more, made ready to serve the
  // next one (PostedCalls::recycled_call): its progress back to the start, its memory kept.
  void reset_for_reuse() noexcept;

  TeamImpl& team;
  const bool persistent;
  // False once the team is destroyed (a request that outlives its team gets an error).
  std::shared_ptr<const std::atomic<bool>> alive;
  std::vector<PostedEntry> entries;  // by local thread
  std::uint64_t round = 0;           // the round being run (written by its last arriver)

  // The progress of rounds: a round r is posted (its step between processes is in MPI, or it
  // has none), ready (the process's result is in staging) or failed once the value reaches r.
  std::atomic<std::uint64_t> posted{0}, ready{0}, failed{0};
  std::exception_ptr error;  // of the failed round (written before `failed`)

  // The pack of the current round, in tasks that threads waiting for the call take too.
  std::atomic<std::uint64_t> packing{0};  // the round whose tasks are handed out
  int pack_tasks = 0;
  std::uint64_t pack_sequence = 0;  // the round's place in the process's order of posted calls
  std::atomic<int> claimed_tasks{0}, done_tasks{0};
  std::mutex pack_failure_mutex;
  std::exception_ptr pack_failure;

  // Whether the inputs of a round may still be read (PostedCalls::abandon): the round whose
  // pack has begun, whose pack has finished reading the inputs, and the last round a thread
  // gave up waiting for (after which its buffers may be freed). Sequentially consistent: the
  // last arriver stores pack_begun then loads abandoned, a thread that gives up stores abandoned
  // then loads pack_begun, so at least one sees the other's.
  std::atomic<std::uint64_t> pack_begun{0}, pack_ended{0}, abandoned{0};

  // Persistent rounds: the threads that started the current one.
  std::atomic<int> round_arrivals{0};
  // Per thread (one allocation with the entries': a call is made per nonblocking start):
  // the place of its order at which it started the current persistent round (the threads must
  // agree), and the round in which a thread claimed pack task number t (at most one per thread).
  struct PerThread {
    std::uint64_t round_sequence = 0;
    std::atomic<std::uint64_t> task_round{0};
  };
  std::unique_ptr<PerThread[]> per_thread;
  // One process: the rounds run on lines (small contributions) or on slices (larger ones)
  // instead, made at the init.
  std::unique_ptr<RoundLines> lines;
  std::unique_ptr<posted::RoundSlices> slices;
  // A nonblocking call of a one-process team past the lines runs as one round on slices: its
  // round (the slices' stamps only grow, so each use of a recycled call takes the next), the
  // rounds taken so far, and the slices of an earlier use kept while the call serves another.
  std::uint64_t nonblocking_round = 1, slice_rounds = 0;
  std::unique_ptr<posted::RoundSlices> kept_slices;

  // TLC_CHECK, several processes: the comparison of the call with the other processes' (every
  // process's signature, gathered in process order on the team's check communicator) that
  // precedes its step between processes, in a nonblocking call and the first round of a
  // persistent one; check_queued: the round waiting behind a comparison (its own or an
  // earlier call's) for its step to be posted.
  PostedOp check_op;
  std::vector<std::int64_t> signatures;
  std::vector<MPI_Count> signature_bytes;
  std::vector<MPI_Aint> signature_displs;
  std::atomic<std::uint64_t> check_queued{0};

  // What the schedule keeps between its steps (algo/posted/schedule.hpp).
  std::mutex progress;  // one thread at a time tests the MPI operation
  PostedOp network;
  // The step in parts (posted::step_parts): part i = k L + l is lane l's share of chunk k of
  // every process's block, one MPI operation on the team's posted lane communicator l, with its
  // own counts and displacements (bytes; they must outlive the operation). Decided at the
  // first round; with one part the step is `network`.
  struct StepPart {
    PostedOp op;
    bool complete = false;  // in the round in flight
    std::vector<MPI_Count> counts, recv_counts;
    std::vector<MPI_Aint> displs, recv_displs;
  };
  int lanes = 0, chunks = 0;  // 0: undecided
  int parts() const noexcept { return lanes * chunks; }
  std::vector<std::unique_ptr<StepPart>> step_parts;
  std::exception_ptr part_failure;  // of a part whose operation completed before the others'
  // Allreduce, bcast and alltoall between processes: whether the step between processes runs as
  // MPI's collective or as tlc's own algorithm on point-to-point requests (inter/p2p_rounds.hpp;
  // persistent requests for a persistent call), decided alike on every process at the first
  // round (the calls whose step runs as rounds are advanced by every wait of the team).
  enum class Step : std::uint8_t {
    undecided,
    mpi_collective,
    recursive_doubling,
    rabenseifner,
    binomial,
    all_at_once,
  };
  Step step = Step::undecided;
  std::vector<std::byte> in, out;  // staging: the process's contribution, and its result
  std::vector<MPI_Count> counts, recv_counts;
  std::vector<MPI_Aint> displs, recv_displs;
  std::vector<std::size_t> offsets;  // per-schedule layout in the staging memory
};

// The team's part that numbers and starts posted calls.
// The engine of a team's posted calls, owned by the team (team/posted_engine.hpp) and made at
// its first posted call (posted_calls()).
class PostedCalls final : public PostedEngine {
 public:
  // The team's limit of calls each thread may have started and not completed, and, with
  // TeamOptions::progress, the progress thread: it tests the calls in flight between processes
  // until they complete, so that they advance while every thread of the team computes.
  explicit PostedCalls(TeamImpl& team);
  void stop_progress_thread() noexcept override;
  ~PostedCalls() override { stop_progress_thread(); }
  int limit() const noexcept { return limit_; }

  // Thread me starts the next call of its order: entry joins the call numbered so (opened by
  // the first thread to come), or, for a round of the persistent call `persistent`, the threads
  // count their starts on that call and the last checks that all started it at one place. A
  // persistent round and a nonblocking call at the same place of two threads' orders are not
  // told apart: both wait (TLC_TIMEOUT ends it). Returns the call's state and the round. The last
  // thread to come packs and posts. Throws Error(invalid_argument) past the limit of calls in
  // progress, and Error(mismatch) when threads start different calls at one place of their order.
  // round: 1 for a nonblocking call, the round of a persistent start, 0 for a persistent init
  // (which joins the threads' entries and runs nothing).
  std::shared_ptr<PostedCall> start(TeamImpl& team, int me, PostedEntry entry,
                                    std::shared_ptr<PostedCall> persistent, std::uint64_t round);
  // Thread me starts `round` (1, 2, ...) of the persistent call `call` (start's rules).
  void start_round(TeamImpl& team, int me, PostedCall& call, std::uint64_t round);
  // A call of thread me completed or failed for it.
  void finished(int me) noexcept;
  // A nonblocking call of thread me that does not go through start() (on lines) counts against
  // the limit too: Error(invalid_argument) past it.
  void count_start(TeamImpl& team, int me) {
    Counters& mine = threads_[static_cast<std::size_t>(me)];
    if (mine.in_progress >= limit_) throw_too_many(team, me, mine.in_progress);
    ++mine.in_progress;
  }
  // Thread me's wait or test of round of call ended with an error (the team aborted, the call
  // failed, TLC_TIMEOUT): once it returns the program may free the thread's buffers, so it
  // returns only when no thread of this process will read them for this round: it waits for a
  // pack that has begun to finish (the pack waits for nothing), and a pack that has not begun
  // will not run (the last arriver fails the call instead).
  static void abandon(PostedCall& call, std::uint64_t round) noexcept;
  // Advances (round of) call for thread me: true once its output is written. Throws the
  // call's error.
  static bool test(PostedCall& call, std::uint64_t round, int me);
  static void wait(PostedCall& call, std::uint64_t round, int me);
  // Whether round of call has completed or failed, after one test of its MPI operation (and
  // of every call whose rounds are in flight, advance_rounds).
  static bool advance(PostedCall& call, std::uint64_t round);
  // The same for this call alone.
  static bool advance_call(PostedCall& call, std::uint64_t round);
  // Tests every call in flight whose step runs as rounds of point-to-point requests
  // (PostedCall::Step): a round starts only when a thread of this process finds the one before
  // complete, so, as MPI advances all of its operations in any wait, every wait of the team
  // advances them all (team/team.cpp adds this to the watch of the team's MPI waits). Without
  // that, processes that wait for different calls, or one in a blocking call, would each wait
  // for the other's next round.
  void advance_rounds() override;
  // TLC_CHECK: posts, in order, the steps whose comparison across processes has completed (a
  // call whose processes disagree fails on every process alike, and its step is never posted);
  // tests the oldest comparison in flight. Whether any call waits for one.
  void pump_checks(TeamImpl& team);
  bool checks_pending() const noexcept {
    return awaiting_count_.load(std::memory_order_acquire) > 0;
  }
  // Takes pack tasks of round of call while there are any; the thread that finishes the last
  // one posts the call.
  void help_pack(PostedCall& call, std::uint64_t round, int me);
  // The plan of the blocking call with these arguments, which decides how a posted call's step
  // between processes runs (its parts, its algorithm): looked up as the blocking calls look
  // theirs up, so that a call made again and again plans once. Under order_lock_ (posts run
  // there).
  const Plan& plan(const TeamImpl& team, const PlanQuery& q);

 private:
  // The last arriver's step: pack, then post in the order of the calls.
  void pack_and_post(TeamImpl& team, int me, const std::shared_ptr<PostedCall>& call,
                     std::uint64_t sequence, std::uint64_t round);
  static void fail(PostedCall& call, std::uint64_t round, std::exception_ptr error);
  [[noreturn]] static void throw_too_many(TeamImpl& team, int me, int in_progress);
  struct Packed {
    std::shared_ptr<PostedCall> call;  // null: a persistent init, which posts nothing
    std::uint64_t round = 0;
    std::exception_ptr failure;  // the pack threw
  };
  // Records that the call at `sequence` is ready to post and posts, in order, every call whose
  // turn has come.
  void advance_order(TeamImpl& team, std::uint64_t sequence, Packed packed);
  // Under order_lock_: posts the step between processes of a packed call whose turn it is.
  void post_step(TeamImpl& team, Packed p);
  // Under order_lock_, TLC_CHECK: posts the comparison of p's call with the other processes'.
  static void post_check(TeamImpl& team, PostedCall& call);
  // Whether the call's first round compares itself with the other processes' (TLC_CHECK).
  static bool compared_across_processes(const TeamImpl& team, const PostedCall& call);
  // TLC_CHECK: packed calls whose step waits for a comparison (under order_lock_), in order.
  std::deque<Packed> awaiting_check_;
  std::atomic<int> awaiting_count_{0};
  TeamImpl* progress_team_ = nullptr;

  BriefLock order_lock_;
  PlanCache plans_;  // under order_lock_
  // Per thread, written by that thread only (a cache line each).
  struct alignas(64) Counters {
    std::uint64_t started = 0;  // its calls started so far: the place of the next in its order
    int in_progress = 0;
  };
  std::vector<Counters> threads_;
  // What a place of the threads' order holds in the lookup: a nonblocking call or a persistent
  // init (rounds of a persistent call find their call without it); threads that disagree about
  // it fail the call.
  enum class Kind { nonblocking, init };
  struct Open {
    std::shared_ptr<PostedCall> call;
    Kind kind;
    int arrived = 0;
  };
  std::map<std::uint64_t, Open> open_;  // not every thread came yet
  // Nonblocking calls: a call and the map node of its place are made by the thread that comes
  // first and freed by the one that drops it last; with the C library's allocator that crossing
  // put threads to sleep on its arena lock for longer than a call inside a process takes. So
  // completed calls nobody holds serve later ones, and nodes are kept for the next places (both
  // under order_lock_).
  std::shared_ptr<PostedCall> recycled_call(TeamImpl& team);
  std::vector<std::shared_ptr<PostedCall>> recycled_;
  std::size_t recycle_cursor_ = 0;
  std::vector<std::map<std::uint64_t, Open>::node_type> spare_nodes_;
  std::map<std::uint64_t, Packed> packed_;

  // The progress thread and the calls it watches (under order_lock_).
  struct InFlight {
    std::shared_ptr<PostedCall> call;
    std::uint64_t round = 0;
  };
  std::vector<InFlight> in_flight_;
  // Calls whose rounds are in flight (under order_lock_; the count read without it).
  std::vector<InFlight> rounds_in_flight_;
  std::atomic<int> rounds_count_{0};
  std::thread progress_thread_;
  std::atomic<bool> progress_stop_{false};
  std::mutex progress_mutex_;  // with progress_wake_: the thread sleeps while nothing is in flight
  std::condition_variable progress_wake_;
  bool progress_on_ = false;
  void progress_loop();  // waiting for earlier calls' posts
  std::uint64_t next_to_post_ = 1;
  int limit_ = 0;
};

// The team's engine of posted calls, made at its first posted call.
PostedCalls& posted_calls(TeamImpl& team);

}  // namespace tlc::detail
