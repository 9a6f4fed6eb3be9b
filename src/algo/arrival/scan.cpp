// scan and exscan led by arrival: a thread waits for the ranks below it only (the shared step
// in participation.hpp).
#include <algorithm>
#include <cstring>
#include <vector>

#include "algo/arrival/participation.hpp"
#include "inter/p2p.hpp"

namespace tlc::detail {

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

void scan_by_arrival(TeamImpl& team, int me, CallDescriptor&& d) {
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
  std::byte* deposit = team.arrival().deposit(me).reserve(std::max<std::size_t>(blocks * bytes, 1));
  auto block = [&](std::size_t i) { return deposit + i * bytes; };
  if (bytes) std::memcpy(deposit, own, bytes);
  team.rendezvous().post_deposited(me, m);
  const Slice whole = slice_of(n, e, 0, 1);
  auto fold = [&](std::span<const void* const> inputs, void* target) {
    if (inputs.size() == 1)
      copy_bytes(static_cast<std::byte*>(target), static_cast<const std::byte*>(inputs[0]), bytes);
    else
      reduce_slice_to_all(inputs, std::span<void* const>(&target, 1), e, whole, c.combine,
                          c.op_object);
  };

  std::vector<MPI_Request> from_below, to_above;
  if (receives || sends) team.telemetry().mark_led(me);
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
    or_fail(team, [&] { team.rendezvous().check_all_agree(parity); });
    wait_for(
        team,
        [&] {
          for (int t = 0; t < threads; ++t)
            if (!team.arrival().has_deposited(t, m)) return team.aborted();
          return true;
        },
        "threads of a scan led by arrival to copy their contributions");
    auto inputs = input_pointers(static_cast<std::size_t>(threads));
    for (int t = 0; t < threads; ++t)
      inputs[static_cast<std::size_t>(t)] = team.arrival().deposit(t).data();
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
          if (!team.arrival().has_deposited(u, m)) return team.aborted();
        return !prefixed || a.ready.load(std::memory_order_acquire) >= m || team.aborted();
      },
      "the threads below of a scan led by arrival");
  or_fail(team, [&] {
    for (int u = 0; u < below; ++u)
      if (u != me) team.rendezvous().check_agreement(parity, me, u);
    if (prefixed && a.source_thread != me)
      team.rendezvous().check_agreement(parity, me, a.source_thread);
  });
  auto inputs = input_pointers(static_cast<std::size_t>(below + (prefixed ? 1 : 0)));
  std::size_t k = 0;
  if (prefixed) inputs[k++] = a.source;
  for (int u = 0; u < below; ++u) inputs[k++] = team.arrival().deposit(u).data();
  if (!inputs.empty()) or_fail(team, [&] { fold(inputs, output); });
  if (sends) or_fail(team, [&] { team.exchange_comm().wait_all(to_above, "the sends of a scan"); });
}

}  // namespace tlc::detail
