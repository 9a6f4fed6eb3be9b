// allreduce and reduce_scatter_block led by arrival: every rank reduces its own block of every
// input (the shared step in participation.hpp).
#include <algorithm>
#include <exception>
#include <optional>
#include <vector>

#include "algo/arrival/participation.hpp"
#include "inter/p2p.hpp"

namespace tlc::detail {

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
void reduce_by_blocks(TeamImpl& team, int me, CallDescriptor&& d) {
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
  const std::uint64_t due = team.arrival().expect_copies(me, reads * peers);
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
  const Rendezvous::CallView view{&team.rendezvous(), parity};
  auto* output = static_cast<std::byte*>(c.recv);
  const std::byte* input = static_cast<const std::byte*>(view[me].contribution);
  const std::size_t mine = blocks.bytes(my_rank);
  const int remote = team.size() - threads;
  // Received blocks of the other processes' inputs, in rank order without this process's.
  std::byte* stage = team.arrival().deposit(me).reserve(
      std::max<std::size_t>(mine * static_cast<std::size_t>(remote), 1));
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
      team.telemetry().mark_led(me);
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
        if (t != me) team.rendezvous().check_agreement(parity, me, t);
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

}  // namespace tlc::detail
