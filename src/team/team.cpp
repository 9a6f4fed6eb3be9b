// Team construction (the only place outside src/inter that touches MPI: to agree on the team's
// shape), the run() worker pool, attach(), and the synchronisation steps of team_impl.hpp.
#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <sstream>

#include <tlc/error.hpp>
#include <tlc/team.hpp>

#include "team/config.hpp"
#include "team/team_impl.hpp"

namespace tlc::detail {

namespace {

WaitTuning wait_tuning(double timeout_seconds, bool oversubscribed) {
  WaitTuning t;
  t.timeout_seconds = timeout_seconds;
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
  NodeComm node_comm(comm_->get());
  const NodeInfo node = node_comm.info(std::hash<std::string>{}(topology_.allowed_pus()));
  std::string error;
  int code = 0;
  Config config;
  try {
    config = Config::read(options);
    if (!config.node_is_process && node.largest > 1)
      throw Error(Errc::topology,
                  "tlc: several MPI processes share a node, but tlc runs one process per node "
                  "with a team of threads. Launch one process per node (e.g. mpiexec -ppn 1), or "
                  "set TLC_NODE=process to treat every process as a node of its own (tests, "
                  "laptops)");
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

  threads_ = static_cast<int>(placement_.threads.size());
  process_threads_ = comm_->allgather(threads_);
  size_ = 0;
  for (int c : process_threads_) {
    process_first_rank_.push_back(size_);
    size_ += c;
  }
  first_rank_ = process_first_rank_[static_cast<std::size_t>(comm_->rank())];
  equal_processes_ = std::all_of(process_threads_.begin(), process_threads_.end(),
                                 [&](int t) { return t == process_threads_.front(); });
  for (int t = 0; t < threads_; ++t)
    if (t == 0 || placement_.threads[static_cast<std::size_t>(t)].numa !=
                      placement_.threads[static_cast<std::size_t>(t) - 1].numa)
      numa_group_starts_.push_back(t);

  // Oversubscription is a property of the machine, not of this process: with TLC_NODE=process
  // several processes share the cores.
  const int node_threads = node_comm.sum(threads_);
  const int node_pus =
      std::max<int>(topology_.pus(), static_cast<int>(std::thread::hardware_concurrency()));
  const bool oversubscribed = threads_ > topology_.pus() || node_threads > node_pus;
  waiter_.set_tuning(wait_tuning(config.timeout_seconds, oversubscribed));
  comm_->set_polite(oversubscribed);
  // What every process must agree on, in one MPI call: each value and its negation give the
  // largest and the smallest over the processes.
  const int chunk = static_cast<int>(config.pipeline_chunk_asked);  // at most 1 GiB
  int agreed[] = {lanes(), -lanes(), chunk, -chunk, oversubscribed ? 1 : 0};
  comm_->allreduce_max(agreed);
  // Lanes are made once, one after another in the same order on every process (DESIGN
  // section 5). Every process needs the same number: the lane collectives pair them up.
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
  slots_ = std::make_unique<ThreadSlot[]>(static_cast<std::size_t>(threads_));
  planner_ = Planner(shape(), config.plan);
  if (serialized && comm_->rank() == 0)
    std::fprintf(stderr,
                 "tlc: MPI provides MPI_THREAD_SERIALIZED only; tlc serialises its MPI calls\n");
}

TeamImpl::~TeamImpl() {
  {
    std::lock_guard<std::mutex> lock(pool_mutex_);
    stopping_ = true;
  }
  pool_start_.notify_all();
  for (auto& w : workers_) w.join();
}

std::string TeamImpl::who(int local_index) const {
  return "rank " + std::to_string(global_rank(local_index)) + " (thread " +
         std::to_string(local_index) + " of process " + std::to_string(process()) + ")";
}

// ---------------------------------------------------------------------------------------------
// Synchronisation steps

void TeamImpl::arrive(int me, std::uint64_t s) noexcept {
  slot(me).arrived.value.store(s, std::memory_order_release);
  waiter_.notify();
}

void TeamImpl::wait_all_arrived(std::uint64_t s) {
  int next = 0;  // threads before `next` are known to have arrived
  waiter_.wait(
      [&] {
        while (next < threads_ && slot(next).arrived.value.load(std::memory_order_acquire) >= s)
          ++next;
        return next == threads_ || aborted();
      },
      [&] {
        std::string missing;
        for (int i = 0; i < threads_; ++i)
          if (slot(i).arrived.value.load(std::memory_order_acquire) < s)
            missing += (missing.empty() ? "" : ", ") + who(i);
        return "threads that never arrived: " + missing;
      });
  waiter_.throw_if_aborted();
}

void TeamImpl::release(std::uint64_t s) noexcept {
  released_.value.store(s, std::memory_order_release);
  waiter_.notify();
}

void TeamImpl::wait_released(std::uint64_t s) {
  waiter_.wait([&] { return released_.value.load(std::memory_order_acquire) >= s || aborted(); },
               [&] { return "the leader, " + who(0) + ", to finish the inter-process step"; });
  waiter_.throw_if_aborted();
}

void TeamImpl::begin_step(ThreadSlot& s, std::uint64_t k) {
  s.begun[k & 1].call.store(k, std::memory_order_release);
  waiter_.notify();
  wait_all_begun(k);
  check_fingerprints(static_cast<int>(k & 1));
}

void TeamImpl::wait_all_begun(std::uint64_t k) {
  const int parity = static_cast<int>(k & 1);
  int next = 0;  // threads before `next` are known to have begun call k
  waiter_.wait(
      [&] {
        while (next < threads_ &&
               slot(next).begun[parity].call.load(std::memory_order_acquire) >= k)
          ++next;
        return next == threads_ || aborted();
      },
      [&] {
        std::string missing;
        for (int i = 0; i < threads_; ++i)
          if (slot(i).begun[parity].call.load(std::memory_order_acquire) < k)
            missing += (missing.empty() ? "" : ", ") + who(i);
        return "threads that never arrived: " + missing;
      });
  waiter_.throw_if_aborted();
}

TeamImpl::CallView TeamImpl::begin_call(int me, CallDescriptor d, bool carry) {
  waiter_.throw_if_aborted();
  ThreadSlot& s = slot(me);
  const std::uint64_t k = ++s.calls;
  const int parity = static_cast<int>(k & 1);
  // The slot of this parity was last read during call k-2, and every reader finished that
  // before beginning call k-1, which this thread has waited for.
  if (carry && d.invalid.empty() && d.contribution_bytes <= carry_capacity) {
    if (d.contribution_bytes) std::memcpy(s.carry[parity], d.contribution, d.contribution_bytes);
    d.contribution = s.carry[parity];
    d.carried = true;
  }
  s.begun[parity].fingerprint = fingerprint_of(d.call, d.count, !d.invalid.empty());
  s.published[parity] = std::move(d);
  begin_step(s, k);
  return {this, parity};
}

void TeamImpl::fail_inline(int me, const CallFingerprint& f, const std::string& why) {
  waiter_.throw_if_aborted();
  ThreadSlot& s = slot(me);
  const std::uint64_t k = ++s.calls;
  const int parity = static_cast<int>(k & 1);
  s.begun[parity].fingerprint = f;
  s.published[parity].invalid = why;
  begin_step(s, k);  // throws: this thread's fingerprint is invalid
  throw Error(Errc::invalid_argument,
              std::string("tlc ") + to_string(static_cast<Collective>(f.collective)) + ": " + why);
}

// Wrong arguments first (the lowest such thread's own verdict), then disagreement: the same
// order as the descriptor checks of algo/validation.cpp, so both forms throw the same error.
void TeamImpl::check_fingerprints(int parity) const {
  auto at = [&](int i) -> const CallFingerprint& {
    return slots_[static_cast<std::size_t>(i)].begun[parity].fingerprint;
  };
  const CallFingerprint& first = at(0);
  int differs = 0;
  for (int i = 0; i < threads_; ++i) {
    if (at(i).invalid) {
      const CallDescriptor& d = slots_[static_cast<std::size_t>(i)].published[parity];
      throw Error(Errc::invalid_argument, std::string("tlc ") +
                                              to_string(static_cast<Collective>(at(i).collective)) +
                                              ": " + who(i) + ": " + d.invalid);
    }
    if (!differs && !(at(i) == first)) differs = i;
  }
  if (!differs) return;
  const CallFingerprint& f = at(differs);
  const auto collective = [](const CallFingerprint& x) {
    return to_string(static_cast<Collective>(x.collective));
  };
  std::ostringstream what;
  if (f.collective != first.collective) {
    what << who(0) << " called " << collective(first) << " but " << who(differs) << " called "
         << collective(f);
  } else if (f.count != first.count) {
    what << who(0) << " passed " << first.count << " elements per rank but " << who(differs)
         << " passed " << f.count;
  } else if (f.type_class != first.type_class || f.type_size != first.type_size ||
             f.type_alignment != first.type_alignment) {
    what << who(0) << " passed " << first.type_size << "-byte "
         << to_string(static_cast<TypeClass>(first.type_class)) << " elements but " << who(differs)
         << " passed " << f.type_size << "-byte "
         << to_string(static_cast<TypeClass>(f.type_class));
  } else if (f.op != first.op) {
    what << who(0) << " passed op " << to_string(static_cast<BuiltinOp>(first.op)) << " but "
         << who(differs) << " passed a different op (" << to_string(static_cast<BuiltinOp>(f.op))
         << ")";
  } else {
    what << who(0) << " passed root " << first.root << " but " << who(differs) << " passed root "
         << f.root;
  }
  throw Error(Errc::mismatch, std::string("tlc ") + collective(first) + ": " + what.str());
}

int TeamImpl::process_of(int rank) const noexcept {
  const auto it = std::upper_bound(process_first_rank_.begin(), process_first_rank_.end(), rank);
  return static_cast<int>(it - process_first_rank_.begin()) - 1;
}

void TeamImpl::grow_staging(int me, std::size_t bytes) {
  // Every thread reads the same capacity here: the leader changes it only below, after all
  // threads have arrived, i.e. after all of them made this same decision.
  if (bytes <= staging_capacity_) return;
  const std::uint64_t s = next_step(me);
  if (me == 0) {
    arrive(me, s);
    wait_all_arrived(s);
    const std::size_t capacity = std::max(bytes, 2 * staging_capacity_);
    staging_.reset(static_cast<std::byte*>(::operator new[](capacity, std::align_val_t{4096})));
    staging_capacity_ = capacity;
    release(s);
  } else {
    arrive(me, s);
    wait_released(s);
  }
}

// ---------------------------------------------------------------------------------------------
// Threads

void TeamImpl::worker_main(int index) {
  std::uint64_t seen = 0;
  bool pinned = false;
  for (;;) {
    const std::function<void(Thread&)>* body = nullptr;
    {
      std::unique_lock<std::mutex> lock(pool_mutex_);
      pool_start_.wait(lock, [&] { return stopping_ || generation_ != seen; });
      if (stopping_) return;
      seen = generation_;
      body = body_;
    }
    bool failed = false;
    try {
      if (!pinned) {
        pin_current_thread(topology_, placement_.threads[static_cast<std::size_t>(index)]);
        pinned = true;
      }
      Thread me(this, index, false);
      (*body)(me);
    } catch (...) {
      failed = true;
      std::lock_guard<std::mutex> lock(pool_mutex_);
      if (!first_error_) first_error_ = std::current_exception();
    }
    // Recorded before aborting, so the original exception is the one run() rethrows; the
    // threads still waiting for this one wake and finish with TeamAborted.
    if (failed && !aborted()) abort(who(index) + " threw an exception");
    {
      std::lock_guard<std::mutex> lock(pool_mutex_);
      --running_;
    }
    pool_done_.notify_all();
  }
}

void TeamImpl::run(const std::function<void(Thread&)>& body) {
  waiter_.throw_if_aborted();
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
  {
    std::unique_lock<std::mutex> lock(pool_mutex_);
    if (workers_.empty())
      for (int i = 0; i < threads_; ++i) workers_.emplace_back([this, i] { worker_main(i); });
    first_error_ = nullptr;
    body_ = &body;
    running_ = threads_;
    ++generation_;
  }
  pool_start_.notify_all();
  std::exception_ptr error;
  {
    std::unique_lock<std::mutex> lock(pool_mutex_);
    pool_done_.wait(lock, [&] { return running_ == 0; });
    error = first_error_;
    body_ = nullptr;
  }
  for (int i = 0; i < threads_; ++i) slot(i).held.store(false);
  if (error) std::rethrow_exception(error);
}

Thread TeamImpl::attach(int local_index) {
  if (local_index < 0 || local_index >= threads_)
    throw Error(Errc::invalid_argument, "tlc: attach(" + std::to_string(local_index) +
                                            "): the team has " + std::to_string(threads_) +
                                            " threads in this process");
  waiter_.throw_if_aborted();
  bool expected = false;
  if (!slot(local_index).held.compare_exchange_strong(expected, true))
    throw Error(Errc::invalid_argument, "tlc: attach(" + std::to_string(local_index) +
                                            "): that index is already held by another thread");
  return Thread(this, local_index, true);
}

void TeamImpl::detach(int local_index, bool unwinding) {
  if (unwinding && !aborted()) abort(who(local_index) + " left with an exception");
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
void Team::run(const std::function<void(Thread&)>& body) { impl_->run(body); }
Thread Team::attach(int local_index) { return impl_->attach(local_index); }

}  // namespace tlc
