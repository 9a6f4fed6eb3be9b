// The state a team shares among its threads: what it is made of (roster, placement, plan,
// communicators) and the parts it owns, each doing one job: the rendezvous of its threads
// (team/rendezvous.hpp), the state of the calls led by arrival (team/arrival_calls.hpp), the
// failures across processes (team/process_failures.hpp) and the telemetry (team/telemetry.hpp).
// Algorithms (src/algo/) take the parts they need from it.
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
#include "team/config.hpp"
#include "team/flags.hpp"
#include "team/leader_switch.hpp"
#include "team/line_ring.hpp"
#include "team/posted_engine.hpp"
#include "team/process_failures.hpp"
#include "team/rendezvous.hpp"
#include "team/roster.hpp"
#include "team/telemetry.hpp"
#include "team/wait_policy.hpp"
#include "team/worker_pool.hpp"

namespace tlc::detail {

struct SplitLayout;  // team/split.cpp

class TeamImpl {
 public:
  TeamImpl(MPI_Comm comm, const TeamOptions& options);
  ~TeamImpl();

  // Identity (team/roster.hpp).
  const Roster& roster() const noexcept { return roster_; }
  int threads() const noexcept { return roster_.threads(); }
  int size() const noexcept { return roster_.size(); }
  int process() const noexcept { return roster_.process(); }
  int processes() const noexcept { return roster_.processes(); }
  int first_rank() const noexcept { return roster_.first_rank(); }
  int lanes() const noexcept { return static_cast<int>(placement_.lanes.size()); }
  int global_rank(int local_index) const noexcept { return roster_.global_rank(local_index); }
  int threads_of(int process) const noexcept { return roster_.threads_of(process); }
  int first_rank_of(int process) const noexcept { return roster_.first_rank_of(process); }
  int process_of(int rank) const noexcept { return roster_.process_of(rank); }
  const std::vector<int>& numa_group_starts() const noexcept { return roster_.numa_group_starts(); }
  std::string who(int local_index) const { return roster_.who(local_index); }
  const Placement& placement() const noexcept { return placement_; }
  const Topology& topology() const noexcept { return topology_; }
  // What runs for each call: tables filled at construction, one lookup per call.
  const Planner& planner() const noexcept { return planner_; }
  // The plan of a call of local thread me: planner().plan(q), remembered per thread, with the
  // plan led by arrival the leader switch may put in its place.
  const PlanCache::Entry& plan(int me, const PlanQuery& q) {
    return slot(me).plans.get(planner_, q, leader_switch_.enabled() ? LeaderSwitch::min_bytes : 0,
                              LeaderSwitch::class_of);
  }
  // TLC_LEADERS=auto: switches large static calls to leaders by arrival while that is measured
  // faster (team/leader_switch.hpp).
  LeaderSwitch& leader_switch() noexcept { return leader_switch_; }
  // The number the next call of local thread me will have (its begin step's).
  std::uint64_t next_call(int me) noexcept { return slot(me).calls + 1; }
  TeamShape shape() const noexcept {
    return {processes(),
            threads(),
            lanes(),
            static_cast<int>(numa_group_starts().size()),
            size(),
            roster_.equal_processes(),
            roster_.most_threads()};
  }
  ProcessComm& comm() noexcept { return *comm_; }
  // A duplicate of the process communicator on which threads exchange blocks with other
  // processes' threads themselves (alltoall led by arrival); several threads at once.
  ProcessComm& exchange_comm() noexcept { return *exchange_comm_; }
  // Lane l: a duplicate of the process communicator, driven only by lane_thread(l).
  ProcessComm& lane(int l) noexcept { return *lanes_[static_cast<std::size_t>(l)]; }
  int lane_thread(int l) const noexcept {
    return placement_.lanes[static_cast<std::size_t>(l)].thread;
  }
  // The rendezvous of the threads here: every step of a call inside the process.
  Rendezvous& rendezvous() noexcept { return rendezvous_; }
  const Rendezvous& rendezvous() const noexcept { return rendezvous_; }
  using CallView = Rendezvous::CallView;
  Waiter& waiter() noexcept { return rendezvous_.waiter(); }
  bool aborted() const noexcept { return rendezvous_.aborted(); }
  // Marks the team aborted (every waiting thread wakes with TeamAborted) and, in a team spanning
  // processes, tells the other processes, whose waits then end too (inter/alarm.hpp).
  void abort(const std::string& reason);

  // --- Failures across processes (team/process_failures.hpp, docs/reliability.md) ---
  // A call of thread me failed with e in this process.
  void call_failed(int me, const Error& e);

  // --- TLC_CHECK (algo/validation.cpp) ---
  // Whether some calls of the team compare themselves across processes (TLC_CHECK, or by
  // default its large calls), and whether the call whose blocks hold `block_bytes` does: the
  // processes decide alike, from what they all pass (config.hpp, CheckPolicy).
  bool checks_processes() const noexcept { return check_from_bytes_ != no_check; }
  bool checks_call(std::size_t block_bytes) const noexcept {
    return block_bytes >= check_from_bytes_;
  }
  // The duplicate of the process communicator on which blocking calls compare (a process that
  // compares a call the others do not, since their sizes differ, must not meet their steps).
  ProcessComm& check_comm() noexcept { return *check_comm_; }
  // The verdict of the current call's comparison across processes: written by thread 0 before
  // it releases the others, read by them after (until the next call's begin step).
  std::string& process_verdict() noexcept { return process_verdict_; }

  // --- Nonblocking and persistent calls (their engine: algo/posted/calls.hpp) ---
  // The engine, made by `make` at the first call that needs it (any thread, once).
  using MakePostedEngine = std::unique_ptr<PostedEngine> (*)(TeamImpl& team);
  PostedEngine& posted_engine(MakePostedEngine make) {
    if (PostedEngine* engine = posted_engine_ptr_.load(std::memory_order_acquire)) [[likely]]
      return *engine;
    return make_posted_engine(make);
  }
  // The engine's limit of calls in progress per thread and whether it runs a progress thread
  // (TeamOptions::max_requests, TeamOptions::progress).
  int max_requests() const noexcept { return config_.max_requests; }
  bool progress_thread() const noexcept { return config_.progress_thread; }
  // One process: the lines of the nonblocking calls whose contributions are small
  // (team/line_ring.hpp), made at the first call that asks (any thread, once); null with several
  // processes.
  LineRing* line_ring() {
    if (processes() > 1) return nullptr;
    if (LineRing* ring = line_ring_ptr_.load(std::memory_order_acquire)) [[likely]]
      return ring;
    return make_line_ring();
  }
  // A duplicate of the process communicator for their steps between processes, so that their
  // MPI collectives never interleave with those of the blocking calls.
  ProcessComm& posted_comm() noexcept { return *posted_comm_; }
  // Lane l's (0 <= l < lanes()) for the posted calls whose step between processes runs on lanes;
  // lane 0's is posted_comm().
  ProcessComm& posted_comm(int lane) noexcept {
    return lane == 0 ? *posted_comm_ : *posted_lanes_[static_cast<std::size_t>(lane - 1)];
  }
  // TLC_CHECK with several processes: another duplicate, on which posted calls compare their
  // signatures before their step on posted_comm().
  ProcessComm& posted_check_comm() noexcept { return *posted_check_comm_; }

  // --- Calls led by arrival (algo/arrival/) ---
  ArrivalState& arrival() noexcept { return arrival_; }

  // Team-owned staging buffer of the inter-process phase. grow_staging is itself a step: all
  // threads call it with the same byte count right after begin_call.
  void grow_staging(int me, std::size_t bytes);
  std::byte* staging() noexcept { return staging_.get(); }

  // --- Telemetry (team/telemetry.hpp) ---
  // TLC_STATS=1 or TeamOptions::stats: run_collective then brackets every call with
  // stats_arrive and stats_exit; off, it costs one predictable branch per call.
  Telemetry& telemetry() noexcept { return telemetry_; }
  void stats_arrive(int me) noexcept { telemetry_.arrive(me, next_call(me)); }
  void stats_exit(int me, Collective c) noexcept;
  TeamStats stats() const { return telemetry_.stats(process()); }

  // Shared with every Thread of this team; false once the team is destroyed.
  std::shared_ptr<const std::atomic<bool>> alive_token() const { return alive_; }

  // --- Sub-teams (team/split.cpp) ---
  // A sub-team of parent: its members in this process (parent local indices, in the sub-team's
  // local order) on group_comm, the communicator of the sub-team's processes (duplicated here;
  // the caller frees it), with `lanes` lanes (agreed by every process of the sub-team).
  TeamImpl(const TeamImpl& parent, MPI_Comm group_comm, const std::vector<int>& members, int lanes);
  // Thread::split: collective over the team; me is the caller's participant of this team.
  // kind 0 is split(color, key), 1 + SplitType the shapes.
  static Thread split(Thread& me, int kind, int color, int key);
  // The colour and key of split(type) for local thread me.
  std::pair<int, int> shape_colour(int me, SplitType type) const;
  // A sub-team participant's Thread is destroyed: as a run body that returns (a call it did not
  // make fails the others at once), and an abort if it unwinds.
  void leave_sub_team(int local_index, bool unwinding) noexcept;

  // --- Threads ---
  void run(const std::function<void(Thread&)>& body);
  Thread attach(int local_index);
  Thread attach(int local_index, int region_threads);
  void detach(int local_index, bool unwinding);

 private:
  ThreadSlot& slot(int i) noexcept { return rendezvous_.slot(i); }
  // The first calls' slow paths of posted_engine() and line_ring(), under made_mutex_.
  PostedEngine& make_posted_engine(MakePostedEngine make);
  LineRing* make_line_ring();
  std::mutex made_mutex_;
  void connect(Config config, bool oversubscribed, bool serialized);
  // Makes the sub-teams this process hosts (split.cpp), on local thread 0.
  void build_sub_teams(const SplitLayout& layout);

  // What connect() was given, for the sub-teams of this team.
  Config config_;
  bool oversubscribed_ = false;
  bool serialized_ = false;
  // The sub-teams the last split made here, one per local thread (null: tlc::undefined), and
  // each thread's local index in it; or why making them failed.
  std::vector<std::shared_ptr<TeamImpl>> split_teams_;
  std::vector<int> split_index_;
  std::string split_error_;
  int split_error_code_ = 0;

  Roster roster_;
  int threads_ = 1;  // roster_.threads()
  Topology topology_;
  Placement placement_;
  std::unique_ptr<ProcessComm> comm_;
  std::vector<std::unique_ptr<ProcessComm>> lanes_;
  std::unique_ptr<ProcessComm> exchange_comm_;
  std::unique_ptr<ProcessComm> posted_comm_;
  std::vector<std::unique_ptr<ProcessComm>> posted_lanes_;
  std::unique_ptr<ProcessComm> posted_check_comm_;
  std::unique_ptr<ProcessComm> check_comm_;
  std::unique_ptr<ProcessComm> switch_comm_;  // the leader switch's agreements
  LeaderSwitch leader_switch_;
  Planner planner_;
  Rendezvous rendezvous_;
  ProcessFailures failures_{rendezvous_.waiter()};  // after rendezvous_, whose waiter it uses
  ArrivalState arrival_;
  std::unique_ptr<PostedEngine> posted_engine_;
  std::atomic<PostedEngine*> posted_engine_ptr_{nullptr};  // posted_engine_, once made
  std::shared_ptr<std::atomic<bool>> alive_ = std::make_shared<std::atomic<bool>>(true);
  Telemetry telemetry_;
  bool stats_report_ = false;
  static constexpr std::size_t no_check = ~std::size_t{0};
  std::size_t check_from_bytes_ = no_check;  // the smallest block compared (TLC_CHECK)
  std::string process_verdict_;
  // TLC_STATS=1: the table of every process's stats on process 0's stderr (team destruction).
  void report_stats();

  struct AlignedFree {
    void operator()(std::byte* p) const noexcept { ::operator delete[](p, std::align_val_t{4096}); }
  };
  std::unique_ptr<std::byte[], AlignedFree> staging_;
  std::size_t staging_capacity_ = 0;

  // The threads of run(): started on first use, so attach-only programs have no idle threads.
  std::unique_ptr<WorkerPool> pool_;
  // One process: the lines of the nonblocking calls, once made (the last members: the others
  // keep their places).
  std::unique_ptr<LineRing> line_ring_;
  std::atomic<LineRing*> line_ring_ptr_{nullptr};
};

}  // namespace tlc::detail
