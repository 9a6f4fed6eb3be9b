// Collectives led by arrival ("dynamic"; Parsons [Parsons] ch. 3.4-3.6, docs/imbalance.md): the
// threads of a process do not wait for each other; whoever arrives at the right moment does the
// work, so a late thread delays only what depends on its data. One process per node makes the
// MPI destination the process, not a thread, so none of the thesis' control messages are needed:
// the elected thread calls MPI on the process communicator.
//
// reduce (T threads here, n bytes per rank, root thread r in the root process):
//   arrive:  every thread publishes its arguments and takes a ticket (arrival order);
//   deposit: a thread that is neither the last to arrive nor the root copies its contribution
//            into its own deposit buffer (n bytes) and returns: its send buffer is free again;
//   combine: the last thread to arrive checks everybody's arguments, then combines the T
//            contributions in rank order (deposits, its own and the root's buffers) into the
//            root's output (root process) or its own deposit (elsewhere): n bytes read T times,
//            written once; a root that is already waiting takes half of the slices;
//   network: a binomial tree of point-to-point messages on the process communicator, folded
//            in rank order (p2p::binomial_reduce), by the root thread in the root process (it
//            waits for the result anyway) and by the last arriver elsewhere. Not MPI_Reduce:
//            one send and one fold per tree edge is the least a reduce can move, and MPICH's
//            long-message reduce (reduce-scatter + gather) was measured well above it
//            (docs/imbalance.md).
// bcast (root thread r in the root process):
//   root:    copies its data into its deposit (n bytes), publishes it and returns; if it is the
//            last of its process to arrive, the others copy from its buffer instead and it
//            returns when they are done (one thread per process: MPI_Bcast on its buffer);
//   network: MPI_Bcast, in the root process by the root if it arrives first there, from its own
//            buffer before its copy (else by the first other thread to see the data: nobody
//            waits for a late thread to send), elsewhere by the first thread to arrive, into its
//            deposit;
//   copy:    every other thread copies the data out as soon as it is there (n bytes each).
// scatter: as bcast, with the root's send buffer as the data (T blocks reach a process without
//   the root, by MPI_Scatterv), and each thread copying its own block out.
// allreduce and reduce_scatter_block: each rank reduces its own block of every input (phases
//   and cost at reduce_by_blocks below).
// scan and exscan (process p of P, T threads here, n bytes per rank): a thread waits for the
//   ranks below it only (phases and cost at scan_by_arrival below).
// alltoall (T threads here, R ranks in all, blocks of b bytes; [Parsons] ch. 3.7.3: blocks go to
// the network as soon as their owners have arrived, not after a rendezvous):
//   arrive:  publish, take a ticket and note it in the arrival order; copy the own block;
//   network: post the receives of the blocks from every other process's threads and the sends of
//            the own blocks for them, all at once, on the team's exchange communicator (tag:
//            sending thread * most threads per process + receiving thread), so they travel
//            while other threads are still late: (R - T) messages of b bytes each way;
//   local:   the two blocks between threads u and v of this process (u's for v, v's for u) are
//            copied by the second of them to arrive, except the last arriver's: it pulls the
//            blocks for it while the waiting threads wake up, each of them copies its block
//            from it and pushes its block for it if the last arriver has not pulled it yet;
//   leave:   once every pair with it is done (nobody reads its buffers any more) and its own
//            sends and receives are complete.
// After the last arrival only the late threads' blocks are still to move. Next to hierarchical:
// R - T messages per thread instead of P - 1 per process, so small blocks pay many more
// start-ups; the plan takes it only when asked. With a fragment minimum (fragment_kib) blocks
// smaller than it travel in fragments instead (AlltoallFragments below): consecutive threads'
// blocks for one destination in one message, at least the minimum while threads are late.
//
// Cost next to the static algorithms: one extra copy of n bytes per thread that leaves early or
// of the root's data, and the combine after the last arrival is done by one or two threads
// instead of T; in exchange a thread waits only for the data it needs. The plan takes them by
// default across processes where they were measured no slower with balanced arrivals
// (Planner::led_by_arrival), and wherever they are asked for (forced, or TLC_LEADERS=dynamic).
//
// Errors: a thread checks its own arguments before anything moves; whether the threads agree
// can only be seen by a thread that sees them all (reduce: the last arriver, before combining;
// bcast: each thread against the data's sender, before copying out). Threads that returned
// early cannot be told, so a failed call aborts the team: every thread still in the call, and
// every later call, throws.
#include <algorithm>
#include <cstring>
#include <exception>
#include <optional>
#include <thread>
#include <vector>

#include "algo/across.hpp"
#include "algo/algorithms.hpp"
#include "algo/fragments.hpp"
#include "inter/p2p.hpp"

namespace tlc::detail {

namespace {

// Aborts the team with e's message (so that no thread of this call is left waiting) and
// rethrows e.
[[noreturn]] void fail_call(TeamImpl& team, std::exception_ptr e) {
  // Every thread of every process throws it before anything moved (TLC_CHECK): no abort.
  if (TeamImpl::failure_agreed()) std::rethrow_exception(e);
  try {
    std::rethrow_exception(e);
  } catch (const std::exception& x) {
    if (!team.aborted()) team.abort(x.what());
  } catch (...) {
    if (!team.aborted()) team.abort("a collective led by arrival failed");
  }
  std::rethrow_exception(e);
}

template <class Step>
void or_fail(TeamImpl& team, Step&& step) {
  try {
    step();
  } catch (...) {
    fail_call(team, std::current_exception());
  }
}

// One thread's part in a call led by arrival. On construction it publishes its arguments and
// takes a ticket (its arrival order: first, last), and fails the call if its own arguments are
// wrong; on destruction it leaves the call, however the call ends: a root waiting for the others
// to be done with its buffer counts departures, and a thread that throws must count too.
class Participation {
 public:
  Participation(TeamImpl& team, int me, CallDescriptor d) : team_(team) {
    const std::string invalid = d.invalid;
    const Collective collective = d.call.collective;
    const int root_rank = d.call.root;
    parity = team.begin_arrival_call(me, std::move(d));
    const auto T = static_cast<std::uint64_t>(team.threads());
    m = team.arrival_calls(me);
    const std::uint64_t position =
        team.arrival().tickets.fetch_add(1, std::memory_order_acq_rel) - (m - 1) * T;
    ticket = static_cast<int>(position);
    first = position == 0;
    last = position == T - 1;
    if (!invalid.empty()) {
      team.leave_arrival_call();  // the destructor does not run when the constructor throws
      fail_call(team, std::make_exception_ptr(Error(Errc::invalid_argument,
                                                    std::string("tlc ") + to_string(collective) +
                                                        ": " + team.who(me) + ": " + invalid)));
    }
    if (team.checks_processes()) {
      try {
        check_processes(collective, me);
      } catch (...) {
        team.leave_arrival_call();
        throw;
      }
    }
    root_process = team.process_of(root_rank);
    root = root_process == team.process() ? root_rank - team.first_rank() : -1;
  }
  ~Participation() { team_.leave_arrival_call(); }
  Participation(const Participation&) = delete;
  Participation& operator=(const Participation&) = delete;

  int parity = 0;
  std::uint64_t m = 0;  // the number of this call among the team's calls led by arrival
  bool first = false, last = false;
  int ticket = 0;  // this thread's place in the arrival order (0: first)
  int root_process = 0;
  int root = -1;  // the root's local index, -1 when it is in another process

 private:
  TeamImpl& team_;

  // TLC_CHECK: the process's first thread to arrive compares the call with the other processes'
  // (with its own arguments: threads here that disagree are found later, as without the check)
  // and every thread here waits for the verdict before anything moves, so that on a
  // disagreement every thread of every process throws the same error and the team stays usable.
  void check_processes(Collective collective, int me) {
    ArrivalState& a = team_.arrival();
    if (first) {
      or_fail(team_, [&] {
        a.verdict = compare_processes(team_, TeamImpl::CallView{&team_, parity}[me]);
      });
      a.checked.store(m, std::memory_order_release);
      team_.waiter().notify();
    } else {
      team_.waiter().wait(
          [&] { return a.checked.load(std::memory_order_acquire) >= m || team_.aborted(); },
          [] { return std::string("the first thread of the call to compare it (TLC_CHECK)"); });
      team_.waiter().throw_if_aborted();
    }
    if (a.verdict.empty()) return;
    // The message before leaving: the next call's first thread rewrites the verdict once every
    // thread has left this one.
    Error error(Errc::mismatch, std::string("tlc ") + to_string(collective) + ": " + a.verdict);
    TeamImpl::failure_agreed_across_processes();
    throw error;
  }
};

template <class Ready>
void wait_for(TeamImpl& team, Ready&& ready, const char* what,
              Waiter::OnAbort on_abort = Waiter::OnAbort::throw_aborted) {
  team.waiter().wait(
      ready, [&] { return std::string(what); }, on_abort);
  if (on_abort == Waiter::OnAbort::throw_aborted) team.waiter().throw_if_aborted();
}

void reduce_by_arrival(TeamImpl& team, int me, CallDescriptor d) {
  const Call c = d.call;
  const std::size_t e = c.type.size, n = d.count, bytes = n * e;
  const auto* own = static_cast<const std::byte*>(d.contribution);
  const Participation arrival(team, me, std::move(d));
  const std::uint64_t m = arrival.m;
  const int parity = arrival.parity, root = arrival.root, root_process = arrival.root_process;
  ArrivalState& a = team.arrival();
  const int threads = team.threads();

  if (!arrival.last && me != root) {  // deposit and return
    if (bytes) std::memcpy(team.deposit(me).reserve(bytes), own, bytes);
    team.post_deposited(me, m);
    return;
  }
  const TeamImpl::CallView view{&team, parity};
  if (arrival.last) {
    // Everybody has published: check them all before anything is combined.
    or_fail(team, [&] {
      team.check_all_agree(parity);
      if (const std::string problem = disagreement(view); !problem.empty())
        throw Error(Errc::mismatch, "tlc reduce: " + problem);
    });
    wait_for(
        team,
        [&] {
          for (int t = 0; t < threads; ++t)
            if (t != me && t != root && !team.has_deposited(t, m)) return team.aborted();
          return true;
        },
        "threads of a reduce led by arrival to copy their contributions");
    a.source_thread = me;                         // whose contribution is in its own buffer
    a.ready.store(m, std::memory_order_release);  // the go-ahead for a waiting root
    team.waiter().notify();
  } else {  // the root, waiting for the last arriver's go-ahead
    wait_for(
        team, [&] { return a.ready.load(std::memory_order_acquire) >= m || team.aborted(); },
        "the last thread of a reduce led by arrival");
  }

  // The combine, in rank order, split between the last arriver and a root that waits: every
  // contribution is in its deposit but the last arriver's and the root's.
  const int last = a.source_thread;
  auto inputs = input_pointers(static_cast<std::size_t>(threads));
  for (int t = 0; t < threads; ++t)
    inputs[static_cast<std::size_t>(t)] =
        t == last || t == root ? view[t].contribution : team.deposit(t).data();
  void* target =
      root >= 0 ? view[root].call.recv
                : static_cast<void*>(team.deposit(me).reserve(std::max<std::size_t>(bytes, 1)));
  const int parts = root >= 0 && !(arrival.last && me == root) ? 2 : 1;
  const int part = arrival.last ? 0 : 1;
  std::exception_ptr failed;
  try {
    reduce_slice_to_all(inputs, std::span<void* const>(&target, 1), e, slice_of(n, e, part, parts),
                        c.combine, c.op_object);
  } catch (...) {
    failed = std::current_exception();
    a.part_failed.store(m, std::memory_order_release);
  }
  if (parts == 2) {
    // Each reads the other's buffers: neither returns (or unwinds) before both parts are done.
    a.part_done[part].store(m, std::memory_order_release);
    team.waiter().notify();
    wait_for(
        team, [&] { return a.part_done[1 - part].load(std::memory_order_acquire) >= m; },
        "the other half of a reduce led by arrival", Waiter::OnAbort::keep_waiting);
  }
  if (failed) fail_call(team, failed);
  if (a.part_failed.load(std::memory_order_acquire) >= m)
    fail_call(team, std::make_exception_ptr(
                        TeamAborted("tlc: team aborted: a user op threw inside a reduce")));
  const bool network = team.processes() > 1 && (parts == 1 || me == root);
  if (network) {
    team.mark_led(me);
    or_fail(team, [&] {
      p2p::binomial_reduce(team.comm(), static_cast<std::byte*>(target), n, c, root_process,
                           p2p::binomial_reduce_segment_bytes);
    });
  }
}

// bcast and scatter: the root's data spreads from whoever has it to whoever needs it. What
// differs is what a thread takes (the whole data, or its rank's block) and the MPI step.
class Spread {
 public:
  Spread(TeamImpl& team, const Call& c, std::size_t count, int root_process)
      : team_(team), scatter_(c.collective == Collective::scatter), root_process_(root_process) {
    part_ = count * c.type.size;
    if (!scatter_) return;
    const Roster& roster = team.roster();
    for (int q = 0; q < roster.processes(); ++q) {
      counts_.push_back(static_cast<MPI_Count>(part_) * roster.threads_of(q));
      displs_.push_back(static_cast<MPI_Aint>(part_) * roster.first_rank_of(q));
    }
  }
  // Bytes of the root's data, and of what a process without the root receives of it.
  std::size_t data_bytes() const { return scatter_ ? part_ * team_.size() : part_; }
  std::size_t received_bytes() const { return scatter_ ? part_ * team_.threads() : part_; }
  std::size_t part_bytes() const { return part_; }
  // Where thread t's part is in the root's data, or in what its process received.
  const std::byte* part_in_root_data(const std::byte* data, int t) const {
    return scatter_ ? data + part_ * static_cast<std::size_t>(team_.global_rank(t)) : data;
  }
  const std::byte* part_in_received(const std::byte* data, int t) const {
    return scatter_ ? data + part_ * static_cast<std::size_t>(t) : data;
  }
  // The MPI step: the root's data (at the root process) or the place to receive (elsewhere).
  void network(void* data) {
    if (!scatter_) return team_.comm().bcast(data, part_, root_process_);
    const bool at_root = team_.process() == root_process_;
    team_.comm().scatterv(data, counts_, displs_, at_root ? nullptr : data,
                          at_root ? 0 : received_bytes(), root_process_);
  }

 private:
  TeamImpl& team_;
  bool scatter_;
  int root_process_;
  std::size_t part_ = 0;
  std::vector<MPI_Count> counts_;
  std::vector<MPI_Aint> displs_;
};

// bcast: the data is the root's buffer, and every thread takes all of it; scatter: the data is
// the root's send buffer, and every thread takes its rank's block into its receive buffer (the
// root too, unless in place).
void spread_by_arrival(TeamImpl& team, int me, CallDescriptor d) {
  const Call c = d.call;
  const bool scatter = c.collective == Collective::scatter;
  const std::size_t count = d.count;
  auto* output = static_cast<std::byte*>(c.recv);
  const Participation arrival(team, me, std::move(d));
  const std::uint64_t m = arrival.m;
  const int parity = arrival.parity, root = arrival.root, root_process = arrival.root_process;
  const bool root_here = root >= 0;
  ArrivalState& a = team.arrival();
  const int threads = team.threads();
  const bool across = team.processes() > 1;
  Spread spread(team, c, count, root_process);
  const std::size_t data_bytes = spread.data_bytes(), part = spread.part_bytes();
  // The root's data: a bcast's buffer, a scatter's send buffer.
  const auto* root_data = static_cast<const std::byte*>(scatter ? c.send : c.recv);
  auto network = [&](void* data) {
    team.mark_led(me);
    or_fail(team, [&] { spread.network(data); });
  };
  auto publish = [&](const std::byte* data) {
    a.source = data;
    a.source_thread = me;
    a.ready.store(m, std::memory_order_release);
    team.waiter().notify();
  };
  // The root's own part (a scatter root in place keeps its block where it is).
  auto root_takes_its_part = [&] {
    if (scatter && !c.in_place) copy_bytes(output, spread.part_in_root_data(root_data, me), part);
  };

  if (threads == 1) {  // nobody to share with: MPI on the caller's buffers
    if (me == root) {
      if (across) network(const_cast<std::byte*>(root_data));
      root_takes_its_part();
    } else if (across) {
      network(output);
    }
  } else if (me == root && arrival.last) {
    // Everybody else is waiting already: they copy (and send) straight from the root's data,
    // and the root returns when they are done, as with a static leader.
    root_takes_its_part();
    publish(root_data);
    wait_for(
        team,
        [&] {
          return a.departures.load(std::memory_order_acquire) >=
                 m * static_cast<std::uint64_t>(threads) - 1;
        },
        "the threads of a call led by arrival to copy from the root",
        Waiter::OnAbort::keep_waiting);
  } else if (me == root) {
    // Copy aside, publish, return. If it is the first of its process to arrive, nobody is there
    // to send for it, so it sends itself rather than wait for a late thread, and it sends first,
    // from its own buffer, so that the other processes do not wait for its copy (the threads
    // here that arrive meanwhile wait for both).
    std::byte* copy = team.deposit(me).reserve(std::max<std::size_t>(data_bytes, 1));
    const bool sends =
        across && arrival.first && a.claimed.exchange(m, std::memory_order_acq_rel) < m;
    if (sends) network(const_cast<std::byte*>(root_data));  // the MPI step only reads at the root
    if (data_bytes) std::memcpy(copy, root_data, data_bytes);
    publish(copy);
    root_takes_its_part();
  } else if (!root_here && a.claimed.exchange(m, std::memory_order_acq_rel) < m) {
    // The first thread of a process without the root receives, publishes, copies out.
    std::byte* copy = team.deposit(me).reserve(std::max<std::size_t>(spread.received_bytes(), 1));
    network(copy);
    publish(copy);
    copy_bytes(output, spread.part_in_received(copy, me), part);
  } else {
    wait_for(
        team, [&] { return a.ready.load(std::memory_order_acquire) >= m || team.aborted(); },
        "the data of a call led by arrival");
    or_fail(team, [&] { team.check_agreement(parity, me, a.source_thread); });
    if (root_here && across && a.claimed.exchange(m, std::memory_order_acq_rel) < m)
      network(const_cast<std::byte*>(a.source));  // the MPI step only reads at the root
    copy_bytes(
        output,
        root_here ? spread.part_in_root_data(a.source, me) : spread.part_in_received(a.source, me),
        part);
  }
}

// The network part of an alltoall led by arrival when blocks are smaller than the fragment
// minimum ([Parsons] section 3.7.3, opportunistic fragmentation; fragment_kib, off by default):
// the blocks of consecutive threads of this process for one destination rank travel in one
// message, gathered from the threads' buffers by a derived datatype (p2p::GatheredBlocks).
//   send:    a thread's blocks become available when it arrives; the runs its arrival completes
//            (take_fragments, algo/fragments.hpp: at least the minimum, or unable to grow, or
//            everything left once all have arrived) it sends to every rank of the other
//            processes, tagged first thread of the run * most threads + receiving thread;
//   receive: a receiver does not know how the sender grouped the blocks: per process it probes
//            for the fragment that starts where its received blocks end and receives it in place
//            (every later fragment starts where an earlier one ends, so nothing else is probed).
//            Matching stays in call order: a process sends call k+1's fragments only after its
//            threads have left call k, and a fragment of call k with the same tag went first;
//   leave:   once its receives and the sends it posted are complete and the fragment holding its
//            own blocks has been sent (its send buffer is free).
// Cost: with balanced arrivals one message per destination rank and process instead of T; in
// exchange a derived datatype per run, a probe per poll, receives that find their message
// unexpected (one more copy inside MPI) or, past the eager limit, a handshake that starts only
// when the receiver has probed, and blocks held back until the minimum fills.
class AlltoallFragments {
 public:
  AlltoallFragments(TeamImpl& team, int me, std::uint64_t m, int parity, std::size_t block,
                    std::size_t minimum)
      : team_(team),
        a_(team.arrival()),
        comm_(team.exchange_comm()),
        me_(me),
        m_(m),
        parity_(parity),
        block_(block),
        minimum_(minimum),
        most_(team.shape().most_threads),
        got_(static_cast<std::size_t>(team.size()), 0) {}
  AlltoallFragments(const AlltoallFragments&) = delete;
  AlltoallFragments& operator=(const AlltoallFragments&) = delete;

  // However the thread leaves: the sends it posted are over (completed, or given up after a
  // failure) and the threads whose blocks they carry are told; its own blocks were sent, or are
  // closed so that no thread takes them now; its receives no longer write into its buffer.
  ~AlltoallFragments() {
    const bool unfinished =
        std::any_of(runs_.begin(), runs_.end(), [](const Run& r) { return !r.done; });
    if (unfinished) {
      try {
        comm_.wait_all(sends_, "the fragments of a failed alltoall");
      } catch (...) {
      }
      for (Run& r : runs_) mark_sent(r);
    }
    if (!receives_done_) {
      try {
        comm_.wait_all(receives_, "the fragments of a failed alltoall");
      } catch (...) {
      }
    }
    auto& sent = a_.fragment_sent[static_cast<std::size_t>(me_)].value;
    if (sent.load(std::memory_order_acquire) >= m_) return;
    {
      const std::lock_guard lock(a_.fragment_mutex);
      if (a_.fragment_taken[static_cast<std::size_t>(me_)] < m_) {
        a_.fragment_taken[static_cast<std::size_t>(me_)] = m_;
        sent.store(m_, std::memory_order_release);
      }
    }
    while (sent.load(std::memory_order_acquire) < m_) std::this_thread::yield();
  }

  // Makes this thread's blocks available and sends the runs its arrival completes.
  // check_against(u) fails the call if thread u's arguments disagree with this thread's.
  template <class Check>
  void arrive(Check&& check_against) {
    take_runs();
    const TeamImpl::CallView view{&team_, parity_};
    std::vector<const std::byte*> sources;
    for (Run& r : runs_) {
      sources.clear();
      for (int u = r.first; u < r.end; ++u) {
        if (u != me_) check_against(u);
        sources.push_back(static_cast<const std::byte*>(view[u].contribution));
      }
      r.request = sends_.size();
      p2p::GatheredBlocks blocks(comm_, sources, block_);
      for (int step = 1; step < team_.processes(); ++step) {
        const int q = (team_.process() + step) % team_.processes();
        for (int v = 0; v < team_.threads_of(q); ++v) {
          const int rank = team_.first_rank_of(q) + v;
          sends_.push_back(MPI_REQUEST_NULL);
          blocks.isend(static_cast<std::size_t>(rank) * block_, q, r.first * most_ + v,
                       sends_.back());
        }
      }
      r.requests = sends_.size() - r.request;
    }
  }

  // One round of progress without waiting: tests the sends, receives the fragments that have
  // arrived. True once this thread's sends and receives are complete and its own blocks' fragment
  // has been sent (nobody reads its send buffer any more).
  bool progress() {
    for (Run& r : runs_)
      if (!r.done && p2p::test_all(comm_, std::span(sends_).subspan(r.request, r.requests),
                                   "the fragments of an alltoall led by arrival"))
        mark_sent(r);
    receive_arrived();
    if (!receives_done_ && received_ == team_.size() - team_.threads())
      receives_done_ =
          p2p::test_all(comm_, receives_, "the fragments of an alltoall led by arrival");
    return receives_done_ &&
           a_.fragment_sent[static_cast<std::size_t>(me_)].value.load(std::memory_order_acquire) >=
               m_ &&
           std::all_of(runs_.begin(), runs_.end(), [](const Run& r) { return r.done; });
  }

 private:
  struct Run {
    int first, end;  // threads [first, end)
    std::size_t request = 0, requests = 0;
    bool done = false;
  };

  void take_runs() {
    const int threads = team_.threads();
    const std::lock_guard lock(a_.fragment_mutex);
    a_.fragment_available[static_cast<std::size_t>(me_)] = m_;
    std::vector<BlockState> state(static_cast<std::size_t>(threads));
    for (int u = 0; u < threads; ++u) {
      const auto i = static_cast<std::size_t>(u);
      state[i] = a_.fragment_taken[i] == m_       ? BlockState::taken
                 : a_.fragment_available[i] == m_ ? BlockState::available
                                                  : BlockState::absent;
    }
    for (const ThreadRun& r : take_fragments(state, me_, block_, minimum_)) {
      runs_.push_back({r.first, r.end});
      for (int u = r.first; u < r.end; ++u) a_.fragment_taken[static_cast<std::size_t>(u)] = m_;
    }
  }

  void mark_sent(Run& r) {
    r.done = true;
    for (int u = r.first; u < r.end; ++u)
      a_.fragment_sent[static_cast<std::size_t>(u)].value.store(m_, std::memory_order_release);
    team_.waiter().notify();
  }

  // Receives every fragment that has arrived and starts where this thread's received blocks of
  // its process end (a sender's fragments cover its process's threads without overlap).
  void receive_arrived() {
    auto* recv = static_cast<std::byte*>(TeamImpl::CallView{&team_, parity_}[me_].call.recv);
    for (int step = 1; step < team_.processes(); ++step) {
      const int q = (team_.process() + step) % team_.processes();
      const int first_rank = team_.first_rank_of(q), threads = team_.threads_of(q);
      const auto got = [&](int u) { return got_[static_cast<std::size_t>(first_rank + u)] != 0; };
      for (int u = 0; u < threads;) {
        if (got(u)) {
          ++u;
          continue;
        }
        int end = u;
        while (end < threads && !got(end)) ++end;
        MPI_Request request = MPI_REQUEST_NULL;
        const std::size_t bytes = p2p::irecv_arrived(
            comm_, recv + static_cast<std::size_t>(first_rank + u) * block_,
            static_cast<std::size_t>(end - u) * block_, block_, q, u * most_ + me_, request);
        if (bytes == 0) {  // the fragment starting at u is still on its way
          u = end;
          continue;
        }
        receives_.push_back(request);
        const int blocks = static_cast<int>(bytes / block_);
        for (int i = u; i < u + blocks; ++i) got_[static_cast<std::size_t>(first_rank + i)] = 1;
        received_ += blocks;
        u += blocks;
      }
    }
  }

  TeamImpl& team_;
  ArrivalState& a_;
  ProcessComm& comm_;
  const int me_;
  const std::uint64_t m_;
  const int parity_;
  const std::size_t block_, minimum_;
  const int most_;
  std::vector<Run> runs_;
  std::vector<MPI_Request> sends_, receives_;
  std::vector<char> got_;  // per rank: its block for this thread has been received (or posted)
  int received_ = 0;
  bool receives_done_ = false;
};

void alltoall_by_arrival(TeamImpl& team, int me, CallDescriptor d) {
  const std::size_t block = d.count * d.call.type.size;
  // In place across processes: other threads (and MPI) read this thread's blocks while its
  // buffer fills, so they read a private copy. The copy is safe until this thread leaves, and it
  // leaves only after every reader is done. (In one process the entry made the copy already.)
  if (d.call.in_place && d.contribution == d.call.recv && d.invalid.empty())
    publish_private_copy(d);
  const Participation arrival(team, me, std::move(d));
  const std::uint64_t m = arrival.m;
  const int parity = arrival.parity, threads = team.threads();
  ArrivalState& a = team.arrival();
  const TeamImpl::CallView view{&team, parity};
  const Roster& roster = team.roster();
  const int my_rank = team.global_rank(me);
  const std::uint64_t copies_due =
      team.expect_copies(me, 2 * static_cast<std::uint64_t>(threads - 1));
  a.order[static_cast<std::size_t>(arrival.ticket)].store((m << 20) | static_cast<unsigned>(me),
                                                          std::memory_order_release);
  team.waiter().notify();

  const auto* send = static_cast<const std::byte*>(view[me].contribution);
  auto* recv = static_cast<std::byte*>(view[me].call.recv);
  auto at = [block](auto* base, int rank) { return base + static_cast<std::size_t>(rank) * block; };
  copy_bytes(at(recv, my_rank), at(send, my_rank), block);

  // The thread with ticket i in this call, or -1 while it has not noted it.
  auto thread_with_ticket = [&](int i) {
    const std::uint64_t v = a.order[static_cast<std::size_t>(i)].load(std::memory_order_acquire);
    return (v >> 20) == m ? static_cast<int>(v & 0xFFFFF) : -1;
  };
  // One block from thread `from`'s send buffer into thread `to`'s receive buffer. Each copy
  // counts for both: a thread may leave after 2 (T - 1) copies involving it (its blocks are all
  // in, and nobody reads its send buffer any more). After a failure threads leave without those
  // copies: a copy announces itself (busy) before it looks whether both threads are still
  // there (closed), and a leaving thread closes before it waits for the copies announced, so
  // that no copy touches buffers that are unwinding (all sequentially consistent: each side
  // stores, then loads what the other stores).
  auto copy_block = [&](int from, int to) {
    auto& busy_from = a.busy[static_cast<std::size_t>(from)].value;
    auto& busy_to = a.busy[static_cast<std::size_t>(to)].value;
    busy_from.fetch_add(1);
    busy_to.fetch_add(1);
    if (a.closed[static_cast<std::size_t>(from)].value.load() < m &&
        a.closed[static_cast<std::size_t>(to)].value.load() < m) {
      copy_bytes(at(static_cast<std::byte*>(view[to].call.recv), team.global_rank(from)),
                 at(static_cast<const std::byte*>(view[from].contribution), team.global_rank(to)),
                 block);
      a.copies[static_cast<std::size_t>(from)].value.fetch_add(1, std::memory_order_acq_rel);
      a.copies[static_cast<std::size_t>(to)].value.fetch_add(1, std::memory_order_acq_rel);
    }
    busy_from.fetch_sub(1);
    busy_to.fetch_sub(1);
    team.waiter().notify();
  };
  // However this thread leaves the call (a failure unwinds its buffers next).
  struct Closing {
    ArrivalState& a;
    int me;
    std::uint64_t m;
    ~Closing() {
      a.closed[static_cast<std::size_t>(me)].value.store(m);
      while (a.busy[static_cast<std::size_t>(me)].value.load() != 0) std::this_thread::yield();
    }
  } closing{a, me, m};
  auto check_against = [&](int u) { or_fail(team, [&] { team.check_agreement(parity, me, u); }); };
  auto exchange_with = [&](int u) {
    check_against(u);
    copy_block(u, me);
    copy_block(me, u);
  };
  // Early thread u's block for the last arriver is copied by whichever of the two claims it
  // first: the last arriver pulls it at once, or u pushes it if it gets there first.
  auto claim = [&](int u) {
    return a.claims[static_cast<std::size_t>(u)].value.exchange(m, std::memory_order_acq_rel) < m;
  };
  auto with_ticket = [&](int i) {  // waits (briefly: it has its ticket) for ticket i's note
    int u = thread_with_ticket(i);
    if (u < 0)
      wait_for(
          team, [&] { return (u = thread_with_ticket(i)) >= 0 || team.aborted(); },
          "an earlier thread of an alltoall led by arrival");
    return u;
  };

  std::vector<MPI_Request> requests;
  const bool across = team.processes() > 1;
  std::optional<AlltoallFragments> fragments;
  if (across && block > 0 && block < team.planner().alltoall_fragment_bytes()) {
    team.mark_led(me);
    fragments.emplace(team, me, m, parity, block, team.planner().alltoall_fragment_bytes());
    or_fail(team, [&] { fragments->arrive(check_against); });
  } else if (across) {
    ProcessComm& comm = team.exchange_comm();
    const int most = team.shape().most_threads;
    requests.resize(2 * static_cast<std::size_t>(team.size() - threads), MPI_REQUEST_NULL);
    std::size_t r = 0;
    team.mark_led(me);
    or_fail(team, [&] {
      // Receives first, so that the partners' sends find them posted; processes in turn from
      // the next one, so that not every process starts with process 0.
      for (int pass = 0; pass < 2; ++pass)
        for (int step = 1; step < team.processes(); ++step) {
          const int q = (team.process() + step) % team.processes();
          for (int u = 0; u < roster.threads_of(q); ++u) {
            const int rank = roster.first_rank_of(q) + u;
            if (pass == 0)
              p2p::util::irecv(comm, at(recv, rank), block, q, u * most + me, requests[r++]);
            else
              p2p::util::isend(comm, at(send, rank), block, q, me * most + u, requests[r++]);
          }
        }
    });
  }

  // Pairs with the threads that arrived earlier; the last arriver instead pulls the blocks for
  // it that nobody has pushed yet, while the waiting threads copy theirs.
  const bool last = arrival.ticket == threads - 1;
  for (int i = 0; i < arrival.ticket; ++i) {
    const int u = with_ticket(i);
    if (!last) {
      exchange_with(u);
    } else {
      check_against(u);
      if (claim(u)) copy_block(u, me);
    }
  }
  bool paired_with_last = last;
  auto pair_with_last = [&](int u) {
    check_against(u);
    copy_block(u, me);
    if (claim(me)) copy_block(me, u);
    paired_with_last = true;
  };
  auto copies_done = [&] {
    return a.copies[static_cast<std::size_t>(me)].value.load(std::memory_order_acquire) >=
           copies_due;
  };
  auto local_part_done = [&] {
    if (team.aborted()) return true;
    if (!paired_with_last) {
      const int u = thread_with_ticket(threads - 1);
      if (u < 0) return false;
      pair_with_last(u);
    }
    return copies_done();
  };
  if (!across) {  // nothing to poll: block in the team's waiter, whose readiness
                  // checks must not do the copies (they notify the waiter)
    if (!last) {
      int u = -1;
      wait_for(
          team, [&] { return (u = thread_with_ticket(threads - 1)) >= 0 || team.aborted(); },
          "the last thread of an alltoall led by arrival");
      pair_with_last(u);
    }
    wait_for(
        team, [&] { return copies_done() || team.aborted(); },
        "the threads of an alltoall led by arrival");
    return;
  }
  try {
    bool local_done = false, network_done = !fragments;
    team.exchange_comm().wait_all_alongside(
        requests,
        [&] {
          if (!local_done) local_done = local_part_done();
          if (!network_done) network_done = fragments->progress();
          return local_done && network_done;
        },
        "the blocks of an alltoall led by arrival");
    team.waiter().throw_if_aborted();
  } catch (...) {
    // The sends and receives still pending use this thread's buffers: end them (after the
    // abort, a wait gives up at once and marks MPI as unusable) before the buffers unwind.
    const std::exception_ptr failed = std::current_exception();
    try {
      fail_call(team, failed);
    } catch (...) {
    }
    try {
      team.exchange_comm().wait_all(requests, "the blocks of a failed alltoall");
    } catch (...) {
    }
    std::rethrow_exception(failed);
  }
}

// reduce_scatter_block and allreduce: every rank reduces one block of the vector (rank order, so
// bitwise the static result), fetching that block of every other rank's input itself.
class BlockReduction {
 public:
  BlockReduction(TeamImpl& team, int me, const Call& c, std::size_t count)
      : team_(team),
        me_(me),
        count_(count),
        e_(c.type.size),
        all_(c.collective == Collective::allreduce) {}

  // Rank r's block: elements [begin, end) of the input, and its place in the output.
  Slice block(int r) const {
    if (all_) return slice_of(count_, e_, r, team_.size());
    const auto b = static_cast<std::size_t>(r) * count_;
    return {b, b + count_};
  }
  std::size_t bytes(int r) const { return block(r).size() * e_; }
  const std::byte* input_block(const void* input, int r) const {
    return static_cast<const std::byte*>(input) + block(r).begin * e_;
  }
  // Where this thread's reduced block goes: its block of an allreduce's output, a
  // reduce_scatter_block's output (in place: the buffer's first block).
  std::byte* result(void* output) const {
    return static_cast<std::byte*>(output) + (all_ ? block(team_.global_rank(me_)).begin * e_ : 0);
  }
  bool allreduce() const { return all_; }

 private:
  TeamImpl& team_;
  int me_;
  std::size_t count_, e_;
  bool all_;
};

// Phases (T threads here, R ranks, n bytes per rank; rank r owns block r, n / R bytes):
//   arrive:  publish, take a ticket; post the receives of block r of every other process's
//            threads' inputs and the sends of this thread's blocks for them (exchange
//            communicator), so they travel while others are late;
//   reduce:  once every thread here has arrived and the blocks are in: block r of the T local
//            inputs (read in place) and the R - T received, combined in rank order (n bytes
//            read, n / R written);
//   spread:  allreduce only: the reduced block goes to every other process's threads (sends,
//            and receives of theirs), and the threads here copy each other's reduced blocks as
//            each is ready (n (R - 1) / R bytes in, by every thread);
//   leave:   when the others are done reading this thread's input (and reduced block) and its
//            sends and receives are complete.
// Next to hierarchical: every thread moves its own blocks, T times the bytes between processes
// and R - T messages per thread instead of P - 1 per process, but no staging copy and no
// rendezvous before the network; the plan takes it only when asked.
void reduce_by_blocks(TeamImpl& team, int me, CallDescriptor d) {
  // In place, a reduce_scatter_block's result lands in the buffer's first block, which another
  // thread may still be reading: the others read a private copy (alive until this thread leaves,
  // which is after every reader). An allreduce writes only its own block before the others are
  // done with it.
  if (d.call.in_place && d.call.collective == Collective::reduce_scatter_block &&
      d.contribution == d.call.recv && d.invalid.empty())
    publish_private_copy(d);
  const Call c = d.call;
  const BlockReduction blocks(team, me, c, d.count);
  const int threads = team.threads(), my_rank = team.global_rank(me), first = team.first_rank();
  const auto peers = static_cast<std::uint64_t>(threads - 1);
  ArrivalState& a = team.arrival();
  // Every other thread here reads this thread's input block once, and its reduced block once
  // (allreduce); this thread owes each of them as much. What it owes is paid however it leaves,
  // before it waits for its own dues, so that no two threads wait for each other.
  const std::uint64_t reads = blocks.allreduce() ? 2 : 1;
  const std::uint64_t due = team.expect_copies(me, reads * peers);
  std::vector<std::uint64_t> owed(static_cast<std::size_t>(threads), reads);
  owed[static_cast<std::size_t>(me)] = 0;
  auto pay = [&](int t, std::uint64_t n) {
    auto& left = owed[static_cast<std::size_t>(t)];
    n = std::min(n, left);
    left -= n;
    if (n) a.copies[static_cast<std::size_t>(t)].value.fetch_add(n, std::memory_order_acq_rel);
  };
  auto pay_all = [&] {
    for (int t = 0; t < threads; ++t) pay(t, reads);
    team.waiter().notify();
  };
  auto readers_done = [&] {
    return a.copies[static_cast<std::size_t>(me)].value.load(std::memory_order_acquire) >= due;
  };
  std::vector<MPI_Request> requests;
  std::uint64_t everybody = 0;  // tickets once every thread here has arrived (0: not published)
  auto finish_failed = [&](std::exception_ptr failed) {
    pay_all();
    try {
      fail_call(team, failed);
    } catch (...) {
    }
    if (!requests.empty()) try {
        team.exchange_comm().wait_all(requests, "the blocks of a failed reduction");
      } catch (...) {
      }
    // Others read this thread's buffers only after every thread here has arrived (and never
    // once the call has failed before that): then they all pay when they stop reading, and
    // they are never cut short. A thread that never arrives reads nothing and pays nothing.
    if (everybody && a.tickets.load(std::memory_order_seq_cst) >= everybody)
      wait_for(team, readers_done, "the threads reading this thread's blocks",
               Waiter::OnAbort::keep_waiting);
    std::rethrow_exception(failed);
  };
  std::optional<Participation> arrival;
  try {
    arrival.emplace(team, me, std::move(d));
  } catch (...) {
    finish_failed(std::current_exception());
  }
  const std::uint64_t m = arrival->m;
  everybody = m * static_cast<std::uint64_t>(threads);
  team.waiter().notify();  // the others may be waiting for this arrival
  const int parity = arrival->parity;
  const TeamImpl::CallView view{&team, parity};
  auto* output = static_cast<std::byte*>(c.recv);
  const std::byte* input = static_cast<const std::byte*>(view[me].contribution);
  const std::size_t mine = blocks.bytes(my_rank);
  const int remote = team.size() - threads;
  // Received blocks of the other processes' inputs, in rank order without this process's.
  std::byte* stage =
      team.deposit(me).reserve(std::max<std::size_t>(mine * static_cast<std::size_t>(remote), 1));
  auto staged = [&](int rank) {
    return stage + mine * static_cast<std::size_t>(rank < first ? rank : rank - threads);
  };
  const Roster& roster = team.roster();
  const int most = team.shape().most_threads;
  auto for_remote_ranks = [&](auto&& f) {
    for (int step = 1; step < team.processes(); ++step) {
      const int q = (team.process() + step) % team.processes();
      for (int u = 0; u < roster.threads_of(q); ++u) f(q, u, roster.first_rank_of(q) + u);
    }
  };
  try {
    if (remote > 0) {
      team.mark_led(me);
      ProcessComm& comm = team.exchange_comm();
      requests.assign(2 * static_cast<std::size_t>(remote), MPI_REQUEST_NULL);
      std::size_t r = 0;
      for_remote_ranks([&](int q, int u, int rank) {
        p2p::util::irecv(comm, staged(rank), mine, q, u * most + me, requests[r++]);
      });
      for_remote_ranks([&](int q, int u, int rank) {
        p2p::util::isend(comm, blocks.input_block(input, rank), blocks.bytes(rank), q,
                         me * most + u, requests[r++]);
      });
    }
    auto all_arrived = [&] {
      return a.tickets.load(std::memory_order_acquire) >= everybody || team.aborted();
    };
    if (requests.empty())
      wait_for(team, all_arrived, "the threads of a reduction led by arrival");
    else
      team.exchange_comm().wait_all_alongside(requests, all_arrived,
                                              "the blocks of a reduction led by arrival");
    team.waiter().throw_if_aborted();
    // Everybody here has published: check them all before reading anybody's blocks.
    or_fail(team, [&] {
      for (int t = 0; t < threads; ++t)
        if (t != me) team.check_agreement(parity, me, t);
    });

    auto inputs = input_pointers(static_cast<std::size_t>(team.size()));
    for (int rank = 0; rank < team.size(); ++rank) {
      const int t = rank - first;
      inputs[static_cast<std::size_t>(rank)] =
          t >= 0 && t < threads ? blocks.input_block(view[t].contribution, my_rank) : staged(rank);
    }
    void* target = blocks.result(output);
    reduce_slice_to_all(inputs, std::span<void* const>(&target, 1), c.type.size,
                        Slice{0, mine / c.type.size}, c.combine, c.op_object);
    for (int t = 0; t < threads; ++t) pay(t, 1);  // done reading the inputs
    team.waiter().notify();

    if (blocks.allreduce()) {
      a.results[static_cast<std::size_t>(me)].value.store(m, std::memory_order_release);
      team.waiter().notify();
      if (remote > 0) {
        ProcessComm& comm = team.exchange_comm();
        requests.assign(2 * static_cast<std::size_t>(remote), MPI_REQUEST_NULL);
        std::size_t r = 0;
        for_remote_ranks([&](int q, int u, int rank) {
          p2p::util::irecv(comm, output + blocks.block(rank).begin * c.type.size,
                           blocks.bytes(rank), q, u * most + me, requests[r++]);
        });
        for_remote_ranks([&](int q, int u, int) {
          p2p::util::isend(comm, target, mine, q, me * most + u, requests[r++]);
        });
      }
      // The reduced blocks of the threads here, each copied as soon as it is ready.
      int copied = 0;
      std::vector<char> have(static_cast<std::size_t>(threads), 0);
      have[static_cast<std::size_t>(me)] = 1;
      auto copy_ready_results = [&] {
        if (team.aborted()) return true;
        for (int t = 0; t < threads; ++t) {
          if (have[static_cast<std::size_t>(t)] ||
              a.results[static_cast<std::size_t>(t)].value.load(std::memory_order_acquire) < m)
            continue;
          const int rank = first + t;
          const std::size_t at = blocks.block(rank).begin * c.type.size;
          copy_bytes(output + at, static_cast<const std::byte*>(view[t].call.recv) + at,
                     blocks.bytes(rank));
          have[static_cast<std::size_t>(t)] = 1;
          ++copied;
          pay(t, 1);
          team.waiter().notify();
        }
        return copied == threads - 1;
      };
      if (requests.empty()) {
        while (!copy_ready_results())
          wait_for(
              team,
              [&] {
                for (int t = 0; t < threads; ++t)
                  if (!have[static_cast<std::size_t>(t)] &&
                      a.results[static_cast<std::size_t>(t)].value.load(
                          std::memory_order_acquire) >= m)
                    return true;
                return team.aborted();
              },
              "the reduced blocks of an allreduce led by arrival");
      } else {
        team.exchange_comm().wait_all_alongside(
            requests, copy_ready_results, "the reduced blocks of an allreduce led by arrival");
      }
      team.waiter().throw_if_aborted();
    }
  } catch (...) {
    finish_failed(std::current_exception());
  }
  // Every thread here has arrived, so each pays once it stops reading (or fails): waiting
  // cannot outlast them, and must not be cut short by an abort while one still reads.
  wait_for(team, readers_done, "the threads reading this thread's blocks",
           Waiter::OnAbort::keep_waiting);
}

// scan and exscan (process p of P, T threads here, n bytes per rank, local thread t):
//   deposit: every thread copies its contribution into its deposit on arrival (n bytes), so
//            that it may leave before the threads above it have read it;
//   network: (P > 1) the first thread to arrive in a process p > 0 receives the totals of the
//            processes below (p messages of n bytes, on the exchange communicator) and folds
//            them in process order into the process's prefix; the last thread to arrive in a
//            process p < P - 1 folds the T deposits into the process's total and sends it to
//            every process above (P - 1 - p messages of n bytes);
//   output:  thread t waits for the deposits of threads 0..t (exscan: 0..t-1) and the prefix,
//            not for the threads above it, and folds them in rank order into its output (t + 2
//            inputs of n bytes read, n written).
// A thread waits only for the ranks below it; a process waits for the last arrival in each
// process below. The outputs' folds read T (T + 3) / 2 n bytes per process (T n more for a
// total) against the sliced static prefix's about 2 T n, so past a few threads this costs more
// with balanced arrivals.
constexpr int scan_total_tag = 32767;  // above every alltoall tag (at most 181 x 181 - 1)

void scan_by_arrival(TeamImpl& team, int me, CallDescriptor d) {
  const Call c = d.call;
  const bool exclusive = c.collective == Collective::exscan;
  const std::size_t e = c.type.size, n = d.count, bytes = n * e;
  const auto* own = static_cast<const std::byte*>(d.contribution);
  auto* output = static_cast<std::byte*>(c.recv);
  const Participation arrival(team, me, std::move(d));
  const std::uint64_t m = arrival.m;
  const int parity = arrival.parity, threads = team.threads();
  const int processes = team.processes(), process = team.process();
  ArrivalState& a = team.arrival();
  const bool receives = processes > 1 && process > 0 && arrival.first;
  const bool sends = processes > 1 && process < processes - 1 && arrival.last;

  // The deposit: the contribution; a receiver's p received totals and the prefix after them; a
  // sender's total.
  const auto received = receives ? static_cast<std::size_t>(process) : 0;
  const std::size_t blocks = 1 + (receives ? received + 1 : 0) + (sends ? 1 : 0);
  std::byte* deposit = team.deposit(me).reserve(std::max<std::size_t>(blocks * bytes, 1));
  auto block = [&](std::size_t i) { return deposit + i * bytes; };
  if (bytes) std::memcpy(deposit, own, bytes);
  team.post_deposited(me, m);
  const Slice whole = slice_of(n, e, 0, 1);
  auto fold = [&](std::span<const void* const> inputs, void* target) {
    if (inputs.size() == 1)
      copy_bytes(static_cast<std::byte*>(target), static_cast<const std::byte*>(inputs[0]), bytes);
    else
      reduce_slice_to_all(inputs, std::span<void* const>(&target, 1), e, whole, c.combine,
                          c.op_object);
  };

  std::vector<MPI_Request> from_below, to_above;
  if (receives || sends) team.mark_led(me);
  if (receives) {
    from_below.resize(received, MPI_REQUEST_NULL);
    or_fail(team, [&] {
      for (std::size_t q = 0; q < received; ++q)
        p2p::util::irecv(team.exchange_comm(), block(1 + q), bytes, static_cast<int>(q),
                         scan_total_tag, from_below[q]);
    });
  }
  if (sends) {
    // Everybody has published: check them all before their deposits are combined.
    or_fail(team, [&] { team.check_all_agree(parity); });
    wait_for(
        team,
        [&] {
          for (int t = 0; t < threads; ++t)
            if (!team.has_deposited(t, m)) return team.aborted();
          return true;
        },
        "threads of a scan led by arrival to copy their contributions");
    auto inputs = input_pointers(static_cast<std::size_t>(threads));
    for (int t = 0; t < threads; ++t) inputs[static_cast<std::size_t>(t)] = team.deposit(t).data();
    std::byte* total = block(blocks - 1);
    or_fail(team, [&] {
      fold(inputs, total);
      to_above.resize(static_cast<std::size_t>(processes - 1 - process), MPI_REQUEST_NULL);
      for (int q = process + 1; q < processes; ++q)
        p2p::util::isend(team.exchange_comm(), total, bytes, q, scan_total_tag,
                         to_above[static_cast<std::size_t>(q - process - 1)]);
    });
  }
  if (receives) {
    std::byte* prefix = block(1 + received);
    or_fail(team, [&] {
      team.exchange_comm().wait_all(from_below, "the totals of the processes below (scan)");
      auto totals = input_pointers(received);
      for (std::size_t q = 0; q < received; ++q) totals[q] = block(1 + q);
      fold(totals, prefix);
    });
    a.source = prefix;
    a.source_thread = me;
    a.ready.store(m, std::memory_order_release);
    team.waiter().notify();
  }

  // This thread's output: the prefix of the processes below, then the ranks below it here.
  const int below = exclusive ? me : me + 1;
  const bool prefixed = processes > 1 && process > 0;
  wait_for(
      team,
      [&] {
        for (int u = 0; u < below; ++u)
          if (!team.has_deposited(u, m)) return team.aborted();
        return !prefixed || a.ready.load(std::memory_order_acquire) >= m || team.aborted();
      },
      "the threads below of a scan led by arrival");
  or_fail(team, [&] {
    for (int u = 0; u < below; ++u)
      if (u != me) team.check_agreement(parity, me, u);
    if (prefixed && a.source_thread != me) team.check_agreement(parity, me, a.source_thread);
  });
  auto inputs = input_pointers(static_cast<std::size_t>(below + (prefixed ? 1 : 0)));
  std::size_t k = 0;
  if (prefixed) inputs[k++] = a.source;
  for (int u = 0; u < below; ++u) inputs[k++] = team.deposit(u).data();
  if (!inputs.empty()) or_fail(team, [&] { fold(inputs, output); });
  if (sends) or_fail(team, [&] { team.exchange_comm().wait_all(to_above, "the sends of a scan"); });
}

}  // namespace

void run_led_by_arrival(TeamImpl& team, int me, CallDescriptor d) {
  switch (d.call.collective) {
    case Collective::bcast:
    case Collective::scatter:
      return spread_by_arrival(team, me, std::move(d));
    case Collective::alltoall:
      return alltoall_by_arrival(team, me, std::move(d));
    case Collective::reduce_scatter_block:
    case Collective::allreduce:
      return reduce_by_blocks(team, me, std::move(d));
    case Collective::scan:
    case Collective::exscan:
      return scan_by_arrival(team, me, std::move(d));
    default:
      return reduce_by_arrival(team, me, std::move(d));
  }
}

}  // namespace tlc::detail
