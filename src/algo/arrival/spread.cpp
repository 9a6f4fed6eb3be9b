// bcast and scatter led by arrival ([Parsons] ch. 3.4-3.6; the shared step in
// participation.hpp).
//
// bcast (root thread r in the root process):
//   root:    copies its data into its deposit (n bytes), publishes it and returns; if it is the
//            last of its process to arrive, or everybody there arrived while it sent, the others
//            copy from its buffer instead and it returns when they are done (one thread per
//            process: MPI_Bcast on its buffer);
//   network: MPI_Bcast, in the root process by the root if it arrives first or last there, from
//            its own buffer (first: before its copy; last: while the others copy from it), else by
//            the first other thread to see the data (nobody waits for a late thread to send);
//            elsewhere by the first thread to arrive, into its deposit;
//   copy:    every other thread copies the data out as soon as it is there (n bytes each).
// scatter: as bcast, with the root's send buffer as the data (T blocks reach a process without
//   the root, by MPI_Scatterv), and each thread copying its own block out.
#include <algorithm>
#include <cstring>
#include <exception>
#include <vector>

#include "algo/arrival/participation.hpp"

namespace tlc::detail {

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
void spread_by_arrival(TeamImpl& team, int me, CallDescriptor&& d) {
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
    team.telemetry().mark_led(me);
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

  // Everybody else here has arrived: they copy straight from the root's data, while the root
  // sends it (if it `sends`: nobody has yet), and the root returns when they are done, as with a
  // static leader. The MPI step only reads at the root, so they read the buffer together.
  auto others_copy_from_root = [&](bool sends) {
    root_takes_its_part();
    publish(root_data);
    std::exception_ptr failed;  // the others may be reading the buffer: wait for them first
    if (sends) {
      try {
        network(const_cast<std::byte*>(root_data));
      } catch (...) {
        failed = std::current_exception();
      }
    }
    wait_for(
        team,
        [&] {
          return a.departures.load(std::memory_order_acquire) >=
                 m * static_cast<std::uint64_t>(threads) - 1;
        },
        "the threads of a call led by arrival to copy from the root",
        Waiter::OnAbort::keep_waiting);
    if (failed) std::rethrow_exception(failed);
  };
  auto everybody_arrived = [&] {
    return a.tickets.load(std::memory_order_acquire) >= m * static_cast<std::uint64_t>(threads);
  };

  if (threads == 1) {  // nobody to share with: MPI on the caller's buffers
    if (me == root) {
      if (across) network(const_cast<std::byte*>(root_data));
      root_takes_its_part();
    } else if (across) {
      network(output);
    }
  } else if (me == root && arrival.last) {
    // The others wait for the data only: the root sends it itself while they copy.
    others_copy_from_root(across && a.claimed.exchange(m, std::memory_order_acq_rel) < m);
  } else if (me == root) {
    // Copy aside, publish, return. If it is the first of its process to arrive, nobody is there
    // to send for it, so it sends itself rather than wait for a late thread, and it sends first,
    // from its own buffer, so that the other processes do not wait for its copy. If everybody
    // here has arrived by the time its send is done, they are all waiting for it: the copy
    // aside would only delay them, so it lets them copy from its buffer instead.
    std::byte* copy = team.arrival().deposit(me).reserve(std::max<std::size_t>(data_bytes, 1));
    const bool sends =
        across && arrival.first && a.claimed.exchange(m, std::memory_order_acq_rel) < m;
    if (sends) network(const_cast<std::byte*>(root_data));  // the MPI step only reads at the root
    if (sends && everybody_arrived()) return others_copy_from_root(false);
    if (data_bytes) std::memcpy(copy, root_data, data_bytes);
    publish(copy);
    root_takes_its_part();
  } else if (!root_here && a.claimed.exchange(m, std::memory_order_acq_rel) < m) {
    // The first thread of a process without the root receives, publishes, copies out.
    std::byte* copy =
        team.arrival().deposit(me).reserve(std::max<std::size_t>(spread.received_bytes(), 1));
    network(copy);
    publish(copy);
    copy_bytes(output, spread.part_in_received(copy, me), part);
  } else {
    wait_for(
        team, [&] { return a.ready.load(std::memory_order_acquire) >= m || team.aborted(); },
        "the data of a call led by arrival");
    or_fail(team, [&] { team.rendezvous().check_agreement(parity, me, a.source_thread); });
    if (root_here && across && a.claimed.exchange(m, std::memory_order_acq_rel) < m)
      network(const_cast<std::byte*>(a.source));  // the MPI step only reads at the root
    copy_bytes(
        output,
        root_here ? spread.part_in_root_data(a.source, me) : spread.part_in_received(a.source, me),
        part);
  }
}

}  // namespace tlc::detail
