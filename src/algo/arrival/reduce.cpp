// reduce led by arrival ([Parsons] ch. 3.4-3.6; the shared step in participation.hpp).
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
#include <algorithm>
#include <cstring>
#include <exception>

#include "algo/arrival/participation.hpp"
#include "inter/p2p.hpp"

namespace tlc::detail {

void reduce_by_arrival(TeamImpl& team, int me, CallDescriptor&& d) {
  const Call c = d.call;
  const std::size_t e = c.type.size, n = d.count, bytes = n * e;
  const auto* own = static_cast<const std::byte*>(d.contribution);
  const Participation arrival(team, me, std::move(d));
  const std::uint64_t m = arrival.m;
  const int parity = arrival.parity, root = arrival.root, root_process = arrival.root_process;
  ArrivalState& a = team.arrival();
  const int threads = team.threads();

  if (!arrival.last && me != root) {  // deposit and return
    if (bytes) std::memcpy(team.arrival().deposit(me).reserve(bytes), own, bytes);
    team.rendezvous().post_deposited(me, m);
    return;
  }
  const Rendezvous::CallView view{&team.rendezvous(), parity};
  if (arrival.last) {
    // Everybody has published: check them all before anything is combined.
    or_fail(team, [&] {
      team.rendezvous().check_all_agree(parity);
      if (const std::string problem = disagreement(view); !problem.empty())
        throw Error(Errc::mismatch, "tlc reduce: " + problem);
    });
    wait_for(
        team,
        [&] {
          for (int t = 0; t < threads; ++t)
            if (t != me && t != root && !team.arrival().has_deposited(t, m)) return team.aborted();
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
        t == last || t == root ? view[t].contribution : team.arrival().deposit(t).data();
  void* target =
      root >= 0
          ? view[root].call.recv
          : static_cast<void*>(team.arrival().deposit(me).reserve(std::max<std::size_t>(bytes, 1)));
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
    team.telemetry().mark_led(me);
    or_fail(team, [&] {
      p2p::binomial_reduce(team.comm(), static_cast<std::byte*>(target), n, c, root_process,
                           p2p::binomial_reduce_segment_bytes);
    });
  }
}

}  // namespace tlc::detail
