// The state a team shares among its threads, and the synchronisation steps algorithms build on.
//
// Flags follow Jain et al. (shared/seeds/002_56062f46934e0b06.txt, sections II-A/B and IV):
// every flag has a single writer and a cache line of its own, values only grow (a step counter
// that is never reset), stores are release and loads acquire. A thread's `arrived` flag is its
// gather flag; the leader's `released` flag is the release flag all threads read ("read from
// parent flag", section III-B).
//
// Every collective starts with begin_call(): the thread publishes a descriptor of its arguments
// (double-buffered by call parity, since a fast thread may already publish call k+1 while a slow
// one still reads call k's), arrives, waits for all threads of the process, and validates all
// descriptors. Validation reads the same descriptors in every thread and so throws the same
// error in every thread, before any data has moved.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <new>
#include <optional>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include <tlc/options.hpp>
#include <tlc/thread.hpp>
#include <tlc/topology.hpp>

#include "inter/process_comm.hpp"
#include "select/selector.hpp"
#include "team/wait_policy.hpp"

namespace tlc::detail {

inline constexpr std::size_t cache_line_size = 64;

// Small contributions travel in the caller's own slot, next to its flag (Jain et al., sec. III-A):
// readers then never touch the caller's buffers, so the caller may return as soon as everybody
// has arrived, and one rendezvous is the whole collective.
inline constexpr std::size_t carry_capacity = 4096;

struct CallDescriptor {
  Call call;              // this thread's arguments
  std::size_t count = 0;  // elements per rank block; equal on all threads (0 for v-variants)
  const void* contribution = nullptr;  // what other threads read from this one (user memory, or
                                       // this slot's carry buffer when carried)
  std::size_t contribution_bytes = 0;
  bool carried = false;
  std::string invalid;  // non-empty: this thread's own arguments are wrong, and why
};

struct alignas(cache_line_size) Flag {
  std::atomic<std::uint64_t> value{0};
};

struct alignas(cache_line_size) ThreadSlot {
  Flag arrived;                 // gather flag, written by the owning thread only
  CallDescriptor published[2];  // by call parity
  alignas(cache_line_size) std::byte carry[2][carry_capacity];  // by call parity
  // Progress flags of pipelined algorithms (chunks reduced / sent / copied out), each written by
  // the owning thread only and counting chunks over the team's lifetime.
  Flag posted[3];
  // Private to the thread currently holding the slot:
  std::uint64_t step = 0;         // synchronisation steps taken
  std::uint64_t chunks = 0;       // chunks of pipelined calls (the base of the posted values)
  std::uint64_t calls = 0;        // collectives entered
  std::atomic<bool> held{false};  // a thread (run worker or attached) owns this index
};

class TeamImpl {
 public:
  TeamImpl(MPI_Comm comm, const TeamOptions& options);
  ~TeamImpl();

  // Identity.
  int threads() const noexcept { return threads_; }
  int size() const noexcept { return size_; }
  int process() const noexcept { return comm_->rank(); }
  int processes() const noexcept { return comm_->size(); }
  int first_rank() const noexcept { return first_rank_; }
  int lanes() const noexcept { return static_cast<int>(placement_.lanes.size()); }
  int global_rank(int local_index) const noexcept { return first_rank_ + local_index; }
  // Threads and first global rank of every process, and the process owning a global rank.
  int threads_of(int process) const noexcept {
    return process_threads_[static_cast<std::size_t>(process)];
  }
  int first_rank_of(int process) const noexcept {
    return process_first_rank_[static_cast<std::size_t>(process)];
  }
  int process_of(int rank) const noexcept;
  // Local indices grouped by NUMA domain: maximal runs of consecutive threads placed in the same
  // domain, so each group is a contiguous range of ranks (rank order survives grouping).
  const std::vector<int>& numa_group_starts() const noexcept { return numa_group_starts_; }
  std::string who(int local_index) const;  // "rank 5 (thread 1 of process 2)"
  const Placement& placement() const noexcept { return placement_; }
  const Topology& topology() const noexcept { return topology_; }
  const Selector& selector() const noexcept { return selector_; }
  TeamShape shape() const noexcept {
    return {processes(), threads_,        lanes(), static_cast<int>(numa_group_starts_.size()),
            size_,       equal_processes_};
  }
  ProcessComm& comm() noexcept { return *comm_; }
  // Lane l: a duplicate of the process communicator, driven only by lane_thread(l).
  ProcessComm& lane(int l) noexcept { return *lanes_[static_cast<std::size_t>(l)]; }
  int lane_thread(int l) const noexcept {
    return placement_.lanes[static_cast<std::size_t>(l)].thread;
  }
  Waiter& waiter() noexcept { return waiter_; }
  bool aborted() const noexcept { return waiter_.aborted(); }
  void abort(const std::string& reason) { waiter_.abort(reason); }

  // --- Synchronisation steps (see file comment) ---
  // Publishes d, waits for every thread of the process, validates; returns the descriptors of
  // this call, indexed by local thread index.
  struct CallView {
    const TeamImpl* team;
    int parity;
    const CallDescriptor& operator[](int local_index) const {
      return team->slots_[static_cast<std::size_t>(local_index)].published[parity];
    }
  };
  // With carry, a contribution of at most carry_capacity bytes is copied into the caller's slot
  // first and published in its place.
  CallView begin_call(int me, CallDescriptor d, bool carry = false);

  // Every thread of the process arrives and waits for all others: after it, no thread reads
  // or writes another's buffers of this call any more.
  void sync(int me) {
    const std::uint64_t s = next_step(me);
    arrive(me, s);
    wait_all_arrived(s);
  }

  // Advances the caller's step counter and returns the new step.
  std::uint64_t next_step(int me) noexcept { return ++slot(me).step; }
  // Gather: the caller's arrival at step s.
  void arrive(int me, std::uint64_t s) noexcept;
  // Waits until every thread of the process has arrived at step s or later.
  void wait_all_arrived(std::uint64_t s);
  // Release: the leader's signal that step s is done / non-leaders wait for it.
  void release(std::uint64_t s) noexcept;
  void wait_released(std::uint64_t s);

  // Pipelines: post(me, f, v) publishes that the caller reached v on progress flag f;
  // wait_posted(f, v, include) waits until every thread t with include(t) has.
  enum Progress { reduced = 0, sent = 1, copied = 2 };
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

  // Team-owned staging buffer of the inter-process phase. grow_staging is itself a step: all
  // threads call it with the same byte count right after begin_call.
  void grow_staging(int me, std::size_t bytes);
  std::byte* staging() noexcept { return staging_.get(); }

  // --- Threads ---
  void run(const std::function<void(Thread&)>& body);
  Thread attach(int local_index);
  void detach(int local_index, bool unwinding);

 private:
  ThreadSlot& slot(int i) noexcept { return slots_[static_cast<std::size_t>(i)]; }
  void validate(int parity) const;
  void worker_main(int index);

  int threads_ = 1;
  int size_ = 1;
  int first_rank_ = 0;
  std::vector<int> process_threads_, process_first_rank_;
  bool equal_processes_ = true;
  std::vector<int> numa_group_starts_;
  Topology topology_;
  Placement placement_;
  std::unique_ptr<ProcessComm> comm_;
  std::vector<std::unique_ptr<ProcessComm>> lanes_;
  Selector selector_;
  Waiter waiter_;
  std::unique_ptr<ThreadSlot[]> slots_;
  Flag released_;  // written by the leader (thread 0) only

  struct AlignedFree {
    void operator()(std::byte* p) const noexcept { ::operator delete[](p, std::align_val_t{4096}); }
  };
  std::unique_ptr<std::byte[], AlignedFree> staging_;
  std::size_t staging_capacity_ = 0;

  // Worker pool for run(): started on first use, so attach-only programs have no idle threads.
  std::vector<std::thread> workers_;
  std::mutex pool_mutex_;
  std::condition_variable pool_start_, pool_done_;
  std::uint64_t generation_ = 0;
  int running_ = 0;
  bool stopping_ = false;
  const std::function<void(Thread&)>* body_ = nullptr;
  std::exception_ptr first_error_;
};

// Argument checks across the threads of a process that per-thread checks cannot make (v-variant
// counts against the sizes the ranks pass); "" when consistent. Defined with the entry points.
std::string cross_check(const TeamImpl::CallView& view);

}  // namespace tlc::detail
