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
//   network: MPI_Reduce on the process communicator, by the root thread in the root process (it
//            waits for the result anyway) and by the last arriver elsewhere.
// bcast (root thread r in the root process):
//   root:    copies its data into its deposit (n bytes), publishes it and returns; if it is the
//            last of its process to arrive, the others copy from its buffer instead and it
//            returns when they are done (one thread per process: MPI_Bcast on its buffer);
//   network: MPI_Bcast, in the root process by the root if it arrives first there (else by the
//            first other thread to see the data: nobody waits for a late thread to send),
//            elsewhere by the first thread to arrive, into its deposit;
//   copy:    every other thread copies the data out as soon as it is there (n bytes each).
// Cost next to the static algorithms: one extra copy of n bytes per thread that leaves early or
// of the root's data, and the combine after the last arrival is done by one or two threads
// instead of T; in exchange a thread waits only for the data it needs. With balanced arrivals
// the static algorithms are faster, so the plan uses these only when asked (forced, or
// TLC_LEADERS=dynamic).
//
// Errors: a thread checks its own arguments before anything moves; whether the threads agree
// can only be seen by a thread that sees them all (reduce: the last arriver, before combining;
// bcast: each thread against the data's sender, before copying out). Threads that returned
// early cannot be told, so a failed call aborts the team: every thread still in the call, and
// every later call, throws.
#include <exception>

#include "algo/across.hpp"
#include "algo/algorithms.hpp"

namespace tlc::detail {

namespace {

// Aborts the team with e's message (so that no thread of this call is left waiting) and
// rethrows e.
[[noreturn]] void fail_call(TeamImpl& team, std::exception_ptr e) {
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
    first = position == 0;
    last = position == T - 1;
    if (!invalid.empty()) {
      team.leave_arrival_call();  // the destructor does not run when the constructor throws
      fail_call(team, std::make_exception_ptr(Error(Errc::invalid_argument,
                                                    std::string("tlc ") + to_string(collective) +
                                                        ": " + team.who(me) + ": " + invalid)));
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
  int root_process = 0;
  int root = -1;  // the root's local index, -1 when it is in another process

 private:
  TeamImpl& team_;
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
    or_fail(team, [&] { team.comm().reduce_in_place(target, n, c, root_process); });
  }
}

void bcast_by_arrival(TeamImpl& team, int me, CallDescriptor d) {
  const Call c = d.call;
  const std::size_t bytes = d.count * c.type.size;
  auto* buffer = static_cast<std::byte*>(c.recv);
  const Participation arrival(team, me, std::move(d));
  const std::uint64_t m = arrival.m;
  const int parity = arrival.parity, root = arrival.root, root_process = arrival.root_process;
  const bool root_here = root >= 0;
  ArrivalState& a = team.arrival();
  const int threads = team.threads();
  const bool across = team.processes() > 1;
  auto network = [&](void* data) {
    team.mark_led(me);
    or_fail(team, [&] { team.comm().bcast(data, bytes, root_process); });
  };
  auto publish = [&](const std::byte* data) {
    a.source = data;
    a.source_thread = me;
    a.ready.store(m, std::memory_order_release);
    team.waiter().notify();
  };

  if (threads == 1) {  // nobody to share with: MPI on the caller's buffer
    if (across) network(buffer);
  } else if (me == root && arrival.last) {
    // Everybody else is waiting already: they copy (and send) straight from the root's buffer,
    // and the root returns when they are done, as with a static leader.
    publish(buffer);
    wait_for(
        team,
        [&] {
          return a.departures.load(std::memory_order_acquire) >=
                 m * static_cast<std::uint64_t>(threads) - 1;
        },
        "the threads of a bcast led by arrival to copy from the root",
        Waiter::OnAbort::keep_waiting);
  } else if (me == root) {
    // Copy aside, publish, return; if it is the first of its process to arrive, nobody is
    // there to send for it, so it sends itself rather than wait for a late thread.
    std::byte* copy = team.deposit(me).reserve(std::max<std::size_t>(bytes, 1));
    if (bytes) std::memcpy(copy, buffer, bytes);
    const bool sends =
        across && arrival.first && a.claimed.exchange(m, std::memory_order_acq_rel) < m;
    publish(copy);
    if (sends) network(copy);
  } else if (!root_here && a.claimed.exchange(m, std::memory_order_acq_rel) < m) {
    // The first thread of a process without the root receives, publishes, copies out.
    std::byte* copy = team.deposit(me).reserve(std::max<std::size_t>(bytes, 1));
    network(copy);
    publish(copy);
    if (bytes) std::memcpy(buffer, copy, bytes);
  } else {
    wait_for(
        team, [&] { return a.ready.load(std::memory_order_acquire) >= m || team.aborted(); },
        "the data of a bcast led by arrival");
    or_fail(team, [&] { team.check_agreement(parity, me, a.source_thread); });
    if (root_here && across && a.claimed.exchange(m, std::memory_order_acq_rel) < m)
      network(const_cast<std::byte*>(a.source));  // MPI_Bcast only reads at the root
    if (bytes) copy_bytes(buffer, a.source, bytes);
  }
}

}  // namespace

void run_led_by_arrival(TeamImpl& team, int me, CallDescriptor d) {
  if (d.call.collective == Collective::bcast) return bcast_by_arrival(team, me, std::move(d));
  reduce_by_arrival(team, me, std::move(d));
}

}  // namespace tlc::detail
