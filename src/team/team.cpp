// Team construction (the only place outside src/inter that touches MPI: to agree on the team's
// shape), run() on the worker pool (team/worker_pool.cpp), attach(). The synchronisation steps
// are in team/rendezvous.cpp, the configuration in team/config.cpp, the roster in roster.hpp.
#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <random>
#include <sstream>
#include <utility>

#include <tlc/error.hpp>
#include <tlc/team.hpp>

#include "select/tuning.hpp"
#include "team/config.hpp"
#include "team/team_impl.hpp"
#include "team/watchman.hpp"

namespace tlc::detail {

namespace {

WaitTuning wait_tuning(double timeout_seconds, bool abort_job_on_timeout, bool oversubscribed) {
  WaitTuning t;
  t.timeout_seconds = timeout_seconds;
  if (abort_job_on_timeout) t.timeout_action = &abort_job;
  // With more threads than processing units, a spinning waiter holds the core the awaited
  // thread needs: give it up almost at once.
  if (oversubscribed) {
    t.spins = 50;
    t.yields = 4;
  }
  return t;
}

}  // namespace

TeamImpl::TeamImpl(MPI_Comm comm, const TeamOptions& options)
    : topology_(options.topology ? *options.topology : Topology::detect()) {
  const bool serialized = check_thread_level();
  comm_ = std::make_unique<ProcessComm>(comm);

  // Everything that can fail locally is agreed on before the team's shape is exchanged, so a
  // bad option on one process is an error everywhere instead of a hang.
  // On the parent communicator, where the node split is cached across teams.
  NodeComm node_comm(comm);
  const NodeInfo node = node_comm.info(std::hash<std::string>{}(topology_.allowed_pus()));
  std::string error;
  int code = 0;
  Config config;
  try {
    config = Config::read(options);
    if (config.node_is_process == false && node.largest > 1)
      throw Error(Errc::topology,
                  "tlc: several MPI processes share a node, but TLC_NODE=node asks for one "
                  "process per node with a team of threads. Launch one process per node (e.g. "
                  "mpiexec -ppn 1), or set TLC_NODE=process (or leave it unset) to treat every "
                  "process as a node of its own");
    // Not told: several processes on a node (a laptop, a test, a launcher that packs ranks)
    // each become a node of their own, which is correct, only not the intended shape; say so
    // once, since threads of one process would share memory that these processes cannot.
    if (!config.node_is_process && node.largest > 1 && comm_->rank() == 0)
      std::fprintf(stderr,
                   "tlc: up to %d MPI processes share a node; each runs as a node of its own "
                   "(one process per node is the intended shape; TLC_NODE=process silences this "
                   "line)\n",
                   node.largest);
    // Processes that share a node and were all given the whole node (no launcher binding)
    // divide its cores, so their threads do not pile onto the same ones.
    if (node.size > 1 && node.same_cpusets) topology_ = topology_.share(node.rank, node.size);
    PlacementRequest request = config.placement;
    if (config.pin) {
      request.pin = *config.pin;  // asked for explicitly: a plan that cannot be pinned is an error
      placement_ = Placement::plan(topology_, request);
    } else {
      // Default: pin when every thread gets a PU of its own, otherwise run unpinned (more
      // threads than PUs is a legitimate choice, e.g. for tests); placement() says which.
      try {
        request.pin = true;
        placement_ = Placement::plan(topology_, request);
      } catch (const Error& e) {
        if (e.code() != Errc::topology) throw;
        request.pin = false;
        placement_ = Placement::plan(topology_, request);
      }
    }
    if (config.plan.costs.lane_parallelism == 0)
      config.plan.costs.lane_parallelism = mpi_lane_parallelism();
  } catch (const Error& e) {
    error = e.what();
    code = static_cast<int>(e.code());
  }
  comm_->agree_or_throw(error, code);

  const int threads = static_cast<int>(placement_.threads.size());
  if (config.region_threads && config.region_threads != threads)
    std::fprintf(stderr,
                 "tlc: process %d: the team has %d threads but the parallel regions that attach "
                 "have %d (TeamOptions::region_threads, from OpenMP); a region of another size "
                 "cannot attach, so ask for num_threads(team.threads()) (tlc::openmp::parallel "
                 "does) or leave TeamOptions::threads and TLC_THREADS unset\n",
                 comm_->rank(), threads, config.region_threads);
  // Oversubscription is a property of the machine, not of this process: with TLC_NODE=process
  // several processes share the cores.
  const int node_threads = node_comm.sum(threads);
  const int node_pus =
      std::max<int>(topology_.pus(), static_cast<int>(std::thread::hardware_concurrency()));
  const bool oversubscribed = threads > topology_.pus() || node_threads > node_pus;
  connect(config, oversubscribed, serialized);
}

// What a team and a sub-team (team/split.cpp) make alike once they have their process
// communicator (comm_), topology and placement: the roster, the agreements between processes,
// the communicators of lanes and of the other parts, and the parts themselves.
void TeamImpl::connect(Config config, bool oversubscribed, bool serialized) {
  config_ = config;
  oversubscribed_ = oversubscribed;
  serialized_ = serialized;
  threads_ = static_cast<int>(placement_.threads.size());
  std::vector<int> numa_of_thread;
  for (const auto& t : placement_.threads) numa_of_thread.push_back(t.numa);
  roster_ = Roster(comm_->allgather(threads_), comm_->rank(), numa_of_thread);

  rendezvous_.waiter().set_tuning(
      wait_tuning(config.timeout_seconds, config.timeout_aborts_job, oversubscribed));
  comm_->set_polite(oversubscribed);
  // What every process must agree on, in one MPI call: each value and its negation give the
  // largest and the smallest over the processes.
  const int chunk = static_cast<int>(config.pipeline_chunk_asked);  // at most 1 GiB
  const int check = static_cast<int>(config.check);
  // The cost model's parameters decide the plan, whose MPI calls must pair up.
  const int costs = cost_fingerprint(config.plan.costs, config.plan.measured);
  // Forced algorithms and leaders decide which MPI calls a collective makes.
  const int choices = choice_fingerprint(config.plan);
  // The team's notes between processes carry a number of the team's own: a note still in
  // flight when an earlier team was destroyed may reach this team's duplicate communicator
  // (MPI reuses the context ids of freed communicators), and must be told apart.
  const int nonce = static_cast<int>(std::random_device{}() & 0x7fffffff);
  int agreed[] = {lanes(), -lanes(), chunk,    -chunk, oversubscribed ? 1 : 0, check, -check, costs,
                  -costs,  choices,  -choices, nonce};
  comm_->allreduce_max(agreed);
  // Lanes are made once, one after another in the same order on every process (docs/design.md
  // section 6). Every process needs the same number: the lane collectives pair them up.
  const int lane_count = agreed[0];
  const int fewest = -agreed[1];
  if (lane_count != fewest)  // every process sees the same two numbers and throws alike
    throw Error(Errc::invalid_argument,
                "tlc: processes asked for different lane counts (from " + std::to_string(fewest) +
                    " to " + std::to_string(lane_count) +
                    "); set TeamOptions::lanes or TLC_LANES the same everywhere");
  // The chunks of a pipelined collective are MPI calls that pair up across processes.
  if (agreed[2] != -agreed[3])
    throw Error(Errc::invalid_argument,
                "tlc: processes asked for different pipeline chunk sizes; set "
                "TeamOptions::pipeline_chunk_bytes or TLC_PIPELINE_CHUNK the same everywhere");
  // With TLC_CHECK a call exchanges its signature: a process without it would not.
  if (agreed[5] != -agreed[6])
    throw Error(Errc::invalid_argument,
                "tlc: TLC_CHECK (TeamOptions::check) differs between processes (on, off, or "
                "unset in a build with assertions and one without); set it the same everywhere");
  if (agreed[9] != -agreed[10])
    throw Error(Errc::invalid_argument,
                "tlc: processes force different algorithms or leaders (TeamOptions::algorithms, "
                "TLC_ALGO_*, TeamOptions::leaders, TLC_LEADERS, TLC_FALLBACK), so their plans "
                "could differ; give every process the same");
  if (agreed[7] != -agreed[8])
    throw Error(Errc::invalid_argument,
                "tlc: processes have different cost model parameters (TeamOptions::tuning_file, "
                "TLC_TUNING, TLC_COST_*), so their plans could differ; give every process the "
                "same");
  if (processes() > 1 && config.check != CheckPolicy::none)
    check_from_bytes_ = config.check == CheckPolicy::every_call ? 0
                        : agreed[4] != 0                        ? check_from_bytes_oversubscribed
                                                                : check_from_bytes;
  if (config.pipeline_chunk_asked) config.plan.pipeline_chunk_bytes = config.pipeline_chunk_asked;
  // A pipelined bcast (or allgather, gather, scatter, alltoall, reduce_scatter_block) overlaps
  // the threads' copies of chunk i with the network step of chunk i+1, which needs cores to
  // spare; on an oversubscribed node it mostly adds a handoff per chunk (docs/benchmarks-inter.md,
  // "Pipelining"). By default these pipeline only where no node is oversubscribed.
  config.plan.pipeline_movers = config.pipeline_chunk_asked != 0 || agreed[4] == 0;
  for (int l = 0; l < lane_count; ++l) {
    lanes_.push_back(std::make_unique<ProcessComm>(comm_->get(), /*lane=*/true));
    lanes_.back()->set_polite(oversubscribed);
  }
  if (roster_.processes() > 1) {
    exchange_comm_ = std::make_unique<ProcessComm>(comm_->get(), /*lane=*/true);
    exchange_comm_->set_polite(oversubscribed);
    posted_comm_ = std::make_unique<ProcessComm>(comm_->get());
    posted_comm_->set_polite(oversubscribed);
    // Posted calls whose plan drives lanes: one more duplicate per lane after the first, which
    // posts on posted_comm_ (algo/posted/schedule.hpp, step_lanes).
    for (int l = 1; l < lane_count; ++l) {
      posted_lanes_.push_back(std::make_unique<ProcessComm>(comm_->get(), /*lane=*/true));
      posted_lanes_.back()->set_polite(oversubscribed);
    }
    if (checks_processes()) {
      check_comm_ = std::make_unique<ProcessComm>(comm_->get());
      check_comm_->set_polite(oversubscribed);
      posted_check_comm_ = std::make_unique<ProcessComm>(comm_->get());
      posted_check_comm_->set_polite(oversubscribed);
    }
    // TLC_LEADERS=auto with several threads in some process: the leader switch agrees here.
    if (config.plan.leaders == LeaderPolicy::by_plan && roster_.most_threads() > 1) {
      switch_comm_ = std::make_unique<ProcessComm>(comm_->get());
      switch_comm_->set_polite(oversubscribed);
    }
    failures_.connect(comm_->get(), agreed[11], process(), processes(), config.suspect_seconds,
                      config.silent_seconds, config.plan.verbose, rendezvous_);
  }
  // From here on a wait inside MPI ends when the team aborts, another process says it failed,
  // or TLC_TIMEOUT expires.
  MpiWatch watch;
  watch.timeout_seconds = config.timeout_seconds;
  watch.abandoned = [this] { return rendezvous_.waiter().aborted(); };
  watch.why = [this] { return rendezvous_.waiter().abort_reason(); };
  // Besides the notes of other processes: the posted calls whose rounds a wait must advance
  // (PostedCalls::advance_rounds), whatever this wait is for.
  watch.listen = [this, notes = failures_.connected()] {
    if (notes) failures_.listen();
    if (PostedEngine* engine = posted_engine_ptr_.load(std::memory_order_acquire))
      engine->advance_rounds();
  };
  watch.abort_job_on_timeout = config.timeout_aborts_job;
  if (switch_comm_) switch_comm_->set_watch(watch);
  // The waits of calls are also compared with the other processes' once they last (not those
  // of the leader switch's agreements), TLC_CHECK's comparisons included.
  if (failures_.connected() && config.suspect_seconds > 0) {
    watch.long_waits = &failures_;
    watch.suspect_seconds = config.suspect_seconds;
  }
  if (posted_comm_) posted_comm_->set_watch(watch);
  for (auto& lane : posted_lanes_) lane->set_watch(watch);
  comm_->set_watch(watch);
  if (check_comm_) check_comm_->set_watch(watch);
  if (posted_check_comm_) posted_check_comm_->set_watch(watch);
  for (auto& lane : lanes_) lane->set_watch(watch);
  if (exchange_comm_) exchange_comm_->set_watch(watch);
  leader_switch_.prepare(threads_, switch_comm_.get(), config.plan.verbose && comm_->rank() == 0);
  rendezvous_.prepare(roster_, failures_, arrival_);
  arrival_.prepare(threads_);
  planner_ = Planner(shape(), config.plan);
  telemetry_.prepare(threads_, config.stats);
  stats_report_ = config.stats_report;
  if (serialized && comm_->rank() == 0)
    std::fprintf(stderr,
                 "tlc: MPI provides MPI_THREAD_SERIALIZED only; tlc serialises its MPI calls\n");
  // Last: nothing after it may throw, since the destructor withdraws only a whole team.
  if (failures_.connected()) Watchman::enroll(failures_);
}

PostedEngine& TeamImpl::make_posted_engine(MakePostedEngine make) {
  std::lock_guard<std::mutex> lock(made_mutex_);
  if (!posted_engine_) {
    posted_engine_ = make(*this);
    posted_engine_ptr_.store(posted_engine_.get(), std::memory_order_release);
  }
  return *posted_engine_;
}

LineRing* TeamImpl::make_line_ring() {
  std::lock_guard<std::mutex> lock(made_mutex_);
  if (!line_ring_) {
    line_ring_ = std::make_unique<LineRing>(*this, threads_);
    line_ring_ptr_.store(line_ring_.get(), std::memory_order_release);
  }
  return line_ring_.get();
}

TeamImpl::~TeamImpl() {
  // The engine's progress thread tests MPI requests of the communicators freed below.
  if (posted_engine_) posted_engine_->stop_progress_thread();
  alive_->store(false, std::memory_order_release);
  line_ring_.reset();  // requests of calls on lines that outlive the team see it gone
  if (failures_.connected()) Watchman::withdraw(failures_);
  int finalized = 1;
  MPI_Finalized(&finalized);
  if (finalized) return;
  // TLC_STATS=1: every process's table on process 0. A collective over the processes, like the
  // communicators' release below it; skipped once the team has failed, when the others may not
  // be here to take part.
  if (stats_report_ && !aborted()) {
    try {
      report_stats();
    } catch (const std::exception& e) {
      std::fprintf(stderr, "tlc: the stats report failed: %s\n", e.what());
    }
  }
  // A process still waiting in a call this one never made learns that it never will.
  std::uint64_t calls = 0;
  for (int t = 0; t < threads_; ++t) calls = std::max(calls, slot(t).calls);
  failures_.leave(calls);
}

void TeamImpl::abort(const std::string& reason) { failures_.abort(reason); }

void TeamImpl::call_failed(int me, const Error& e) { failures_.call_failed(slot(me).calls, e); }

// ---------------------------------------------------------------------------------------------
// Staging

void TeamImpl::grow_staging(int me, std::size_t bytes) {
  // Every thread reads the same capacity here: the leader changes it only below, after all
  // threads have arrived, i.e. after all of them made this same decision.
  if (bytes <= staging_capacity_) return;
  const std::uint64_t s = rendezvous_.next_step(me);
  if (me == 0) {
    rendezvous_.arrive(me, s);
    rendezvous_.wait_all_arrived(s);
    const std::size_t capacity = std::max(bytes, 2 * staging_capacity_);
    staging_.reset(static_cast<std::byte*>(::operator new[](capacity, std::align_val_t{4096})));
    staging_capacity_ = capacity;
    rendezvous_.release(s);
  } else {
    rendezvous_.arrive(me, s);
    rendezvous_.wait_released(s);
  }
}

// ---------------------------------------------------------------------------------------------
// Telemetry

void TeamImpl::stats_exit(int me, Collective c) noexcept {
  const std::uint64_t k = slot(me).calls;
  const int parity = static_cast<int>(k & 1);
  bool all_arrived = true;
  for (int t = 0; t < threads_ && all_arrived; ++t)
    all_arrived = slot(t).begun[parity].call.load(std::memory_order_acquire) >= k;
  telemetry_.exit(me, c, k, all_arrived);
}

void TeamImpl::report_stats() {
  const std::vector<std::vector<double>> all = comm_->gather_to_root(Telemetry::flatten(stats()));
  if (comm_->rank() == 0) Telemetry::print(all);
}

// ---------------------------------------------------------------------------------------------
// Threads

namespace {

// What the threads woken by a thread's exception are told: what it threw, so that each of them
// names the original error and not only the thread.
std::string describe_exception(const std::exception_ptr& thrown) {
  try {
    std::rethrow_exception(thrown);
  } catch (const std::exception& e) {
    return std::string("an exception: ") + e.what();
  } catch (...) {
    return "an exception";
  }
}

}  // namespace

void TeamImpl::run(const std::function<void(Thread&)>& body) {
  rendezvous_.waiter().throw_if_aborted();
  int held = 0;
  for (int i = 0; i < threads_; ++i) {
    bool expected = false;
    if (!slot(i).held.compare_exchange_strong(expected, true)) break;
    ++held;
  }
  if (held != threads_) {
    for (int i = 0; i < held; ++i) slot(i).held.store(false);
    throw Error(Errc::invalid_argument, "tlc: Team::run while thread " + std::to_string(held) +
                                            " is attached or another run is in progress");
  }
  for (int i = 0; i < threads_; ++i) rendezvous_.rejoin(i);
  if (!pool_)
    pool_ = std::make_unique<WorkerPool>(threads_, [this](int index) {
      pin_current_thread(topology_, placement_.threads[static_cast<std::size_t>(index)]);
    });
  // A thread that throws aborts the team, so that the threads still waiting for it wake and
  // finish with TeamAborted; the pool reports the original exception.
  const std::exception_ptr error = pool_->run(
      [&](int index) {
        Thread me(this, index, false);
        body(me);
        rendezvous_.leave(index);  // a thread still calling gets an error, not a hang
      },
      [&](int index, const std::exception_ptr& thrown) {
        if (!aborted()) abort(who(index) + " threw " + describe_exception(thrown));
      });
  for (int i = 0; i < threads_; ++i) {
    rendezvous_.rejoin(i);  // threads attached later may call before the others attach
    slot(i).held.store(false);
  }
  if (error) std::rethrow_exception(error);
}

Thread TeamImpl::attach(int local_index) {
  if (local_index < 0 || local_index >= threads_)
    throw Error(Errc::invalid_argument, "tlc: attach(" + std::to_string(local_index) +
                                            "): the team has " + std::to_string(threads_) +
                                            " threads in this process");
  rendezvous_.waiter().throw_if_aborted();
  bool expected = false;
  if (!slot(local_index).held.compare_exchange_strong(expected, true))
    throw Error(Errc::invalid_argument, "tlc: attach(" + std::to_string(local_index) +
                                            "): that index is already held by another thread");
  return Thread(this, local_index, true);
}

Thread TeamImpl::attach(int local_index, int region_threads) {
  if (region_threads != threads_)
    throw Error(Errc::invalid_argument,
                "tlc: attach from a parallel region of " + std::to_string(region_threads) +
                    " threads, but the team has " + std::to_string(threads_) +
                    " threads in this process: its collectives would wait forever for the "
                    "missing participants. With OpenMP, a region smaller than asked for comes "
                    "from OMP_THREAD_LIMIT, OMP_DYNAMIC (omp_set_dynamic) or a nested region; "
                    "ask for num_threads(team.threads()) with dynamic adjustment off, or size "
                    "the team from OpenMP (tlc/openmp.hpp)");
  return attach(local_index);
}

void TeamImpl::detach(int local_index, bool unwinding) {
  if (unwinding && !aborted()) abort(who(local_index) + " left with an exception");
  // Not "left" (Rendezvous::leave): a thread of the next parallel region may attach this index
  // after the others have begun their next call there.
  slot(local_index).held.store(false);
}

}  // namespace tlc::detail

// ---------------------------------------------------------------------------------------------
// Public facade

namespace tlc {

Team::Team(MPI_Comm comm, TeamOptions options)
    : impl_(std::make_unique<detail::TeamImpl>(comm, options)) {}
Team::~Team() = default;
int Team::threads() const noexcept { return impl_->threads(); }
int Team::size() const noexcept { return impl_->size(); }
int Team::process() const noexcept { return impl_->process(); }
int Team::processes() const noexcept { return impl_->processes(); }
int Team::first_rank() const noexcept { return impl_->first_rank(); }
int Team::lanes() const noexcept { return impl_->lanes(); }
const Placement& Team::placement() const noexcept { return impl_->placement(); }
const Topology& Team::topology() const noexcept { return impl_->topology(); }
bool Team::aborted() const noexcept { return impl_->aborted(); }
TeamStats Team::stats() const { return impl_->stats(); }
void Team::run(const std::function<void(Thread&)>& body) { impl_->run(body); }
Thread Team::attach(int local_index) { return impl_->attach(local_index); }
Thread Team::attach(int local_index, int region_threads) {
  return impl_->attach(local_index, region_threads);
}
Selection Team::select_algorithm(const CallQuery& call) const {
  const detail::Planner& planner = impl_->planner();
  const std::size_t e = std::max<std::size_t>(1, call.element_size);
  const detail::PlanQuery q{call.collective, call.bytes / e, e, call.commutative, call.in_place};
  std::string reason;
  // As the call runs it: a single-process call small enough for a begin line takes the inline
  // form before any plan is made.
  const detail::Plan plan = planner.as_run(q, planner.plan(q, &reason));
  return planner.describe(q, plan, std::move(reason));
}

}  // namespace tlc
