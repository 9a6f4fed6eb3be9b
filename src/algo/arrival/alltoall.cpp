// alltoall led by arrival, block by block or in fragments ([Parsons] ch. 3.7.3; the shared step
// in participation.hpp).
//
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
#include <exception>
#include <optional>
#include <vector>

#include "algo/arrival/participation.hpp"
#include "algo/fragments.hpp"
#include "inter/p2p.hpp"

namespace tlc::detail {

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
    const Rendezvous::CallView view{&team_.rendezvous(), parity_};
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
    auto* recv =
        static_cast<std::byte*>(Rendezvous::CallView{&team_.rendezvous(), parity_}[me_].call.recv);
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

void alltoall_by_arrival(TeamImpl& team, int me, CallDescriptor&& d) {
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
  const Rendezvous::CallView view{&team.rendezvous(), parity};
  const Roster& roster = team.roster();
  const int my_rank = team.global_rank(me);
  const std::uint64_t copies_due =
      team.arrival().expect_copies(me, 2 * static_cast<std::uint64_t>(threads - 1));
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
  auto check_against = [&](int u) {
    or_fail(team, [&] { team.rendezvous().check_agreement(parity, me, u); });
  };
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
    team.telemetry().mark_led(me);
    fragments.emplace(team, me, m, parity, block, team.planner().alltoall_fragment_bytes());
    or_fail(team, [&] { fragments->arrive(check_against); });
  } else if (across) {
    ProcessComm& comm = team.exchange_comm();
    const int most = team.shape().most_threads;
    requests.resize(2 * static_cast<std::size_t>(team.size() - threads), MPI_REQUEST_NULL);
    std::size_t r = 0;
    team.telemetry().mark_led(me);
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

}  // namespace tlc::detail
