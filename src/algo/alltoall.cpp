// alltoall and alltoallv across processes (Parsons [Parsons] ch. 2.3 and 2.3.2; Traff & Hunold
// [TraffHunold] sec. 3; docs/references.md).
//
// Regions (algo/pieces.hpp), lane part after lane part:
//   send:    a piece from every local sender s to every rank t, ordered [process q of t][s][t],
//            so each destination process's pieces of one lane are contiguous;
//   receive: a piece from every rank s to every local receiver t, ordered [s][t].
// Steps (T threads here, N ranks, P processes, n bytes per block, L lanes):
//   produce: the workers copy every local thread's N blocks into the send region (T N n bytes);
//   network: the exchange between processes, per lane: MPI_Alltoallv (hierarchical,
//            full_lane), or tlc's pairwise exchange (pairwise) or all-at-once isends (isend);
//   consume: every thread copies the N blocks addressed to it out (N n bytes).
// direct (one thread here): MPI_Alltoallv on the caller's buffers (one thread everywhere:
// MPI_Alltoall, or tlc's pairwise or isend exchange; in place after copying the input aside).
// Cost: 2 T N n bytes copied + network of T_p T n bytes per process pair; pairwise
// (P-1) (alpha + m beta), isend (P-1) alpha + (P-1) m beta ([Thakur] sec. 4.3), per lane m / L.
#include "algo/across.hpp"
#include "algo/pieces.hpp"
#include "inter/p2p.hpp"

namespace tlc::detail {

void alltoall_across(TeamImpl& team, int me, const CallView& view, const Plan& plan) {
  const Call& c = view[me].call;
  const std::size_t e = c.type.size, n = view[me].count;
  const bool v = c.collective == Collective::alltoallv;
  const int P = team.processes();
  const auto N = static_cast<std::size_t>(team.size());
  const auto T = static_cast<std::size_t>(team.threads());
  auto* out = static_cast<std::byte*>(c.recv);
  auto recv_displ = [&](std::size_t s) { return v ? c.recv_displs()[s] : s * n; };

  if (plan.form == Form::direct) {
    if (plan.one_thread_everywhere && is_multi_sender(plan.algorithm)) {
      // tlc's exchange between the caller's buffers; in place, the input is first set aside
      // (a block received may otherwise overwrite one still to be sent).
      const std::byte* send = static_cast<const std::byte*>(c.send);
      if (c.in_place) {
        thread_local std::vector<std::byte> aside;
        if (aside.size() < N * n * e) aside.resize(N * n * e);
        copy_bytes(aside.data(), out, N * n * e);
        send = aside.data();
      }
      (plan.algorithm == Algorithm::pairwise ? p2p::pairwise_alltoall : p2p::isend_alltoall)(
          team.comm(), send, out, n * e);
      return;
    }
    if (plan.one_thread_everywhere) {
      team.comm().alltoall(c.send, c.recv, n * e);
      return;
    }
    // The caller's buffers are the rank-packed regions of one lane, both sides.
    thread_local std::vector<MPI_Count> sbytes, rbytes;
    thread_local std::vector<MPI_Aint> sdispls, rdispls;
    process_groups(team, n * e, sbytes, sdispls);
    rbytes = sbytes;  // separate arrays: MPI takes identical arguments for aliased buffers
    rdispls = sdispls;
    team.comm().alltoallv(c.send, sbytes, sdispls, c.recv, rbytes, rdispls);
    return;
  }

  // Elements local sender s sends to rank t, and rank s sends to local receiver t.
  auto sent = [&](std::size_t s, std::size_t t) {
    return v ? view[static_cast<int>(s)].call.send_counts()[t] : n;
  };
  auto send_displ = [&](std::size_t s, std::size_t t) {
    return v ? view[static_cast<int>(s)].call.send_displs()[t] : t * n;
  };
  auto received = [&](std::size_t s, std::size_t t) {
    return v ? view[static_cast<int>(t)].call.recv_counts()[s] : n;
  };
  // Send piece j -> (sender s, rank t), and the first piece of every process on both sides.
  thread_local std::vector<std::size_t> send_sender, send_rank, send_starts, recv_starts;
  send_sender.resize(T * N);
  send_rank.resize(T * N);
  send_starts.resize(static_cast<std::size_t>(P) + 1);
  recv_starts.resize(static_cast<std::size_t>(P) + 1);
  for (int q = 0; q < P; ++q) {
    const auto first_q = static_cast<std::size_t>(team.first_rank_of(q));
    const auto threads_q = static_cast<std::size_t>(team.threads_of(q));
    send_starts[static_cast<std::size_t>(q)] = T * first_q;
    recv_starts[static_cast<std::size_t>(q)] = first_q * T;
    for (std::size_t s = 0; s < T; ++s)
      for (std::size_t t = 0; t < threads_q; ++t) {
        send_sender[T * first_q + s * threads_q + t] = s;
        send_rank[T * first_q + s * threads_q + t] = first_q + t;
      }
  }
  send_starts[static_cast<std::size_t>(P)] = T * N;
  recv_starts[static_cast<std::size_t>(P)] = N * T;

  Pipeline pipe(team, me, e, n, plan, N);
  // Chunk 0's layouts are built before anything moves, while every thread is still in the call:
  // the counts of alltoallv live in the callers' memory.
  thread_local PieceLayout send_layout, recv_layout;
  std::size_t built = ~std::size_t{0};
  auto layouts_of = [&](std::size_t i) {
    if (built != i) {
      send_layout.build(T * N, pipe.lanes(), e, [&](std::size_t j) {
        return pipe.piece(i, sent(send_sender[j], send_rank[j]));
      });
      recv_layout.build(N * T, pipe.lanes(), e,
                        [&](std::size_t j) { return pipe.piece(i, received(j / T, j % T)); });
      built = i;
    }
  };
  layouts_of(0);
  const std::size_t send_bytes = send_layout.total(),
                    region_bytes = send_bytes + recv_layout.total();
  pipe.use_staging(region_bytes);
  auto sends = [&](std::size_t i) { return pipe.region(i); };
  auto receives = [&](std::size_t i) { return sends(i) + send_bytes; };

  auto produce = [&](std::size_t i) {
    layouts_of(i);
    thread_local CopyPlan copies;
    copies.clear();
    for (std::size_t j = 0; j < T * N; ++j) {
      const std::size_t s = send_sender[j], t = send_rank[j];
      const std::byte* source = contribution_of(view, static_cast<int>(s));
      for (int l = 0; l < pipe.lanes(); ++l) {
        const Slice part = send_layout.part(l, j);
        copies.add(source + (send_displ(s, t) + pipe.first(i) + part.begin) * e, part.size() * e,
                   sends(i) + send_layout.offset(l, j));
      }
    }
    copies.run_share(pipe.worker(), pipe.workers());
  };
  auto network = [&](std::size_t i, ProcessComm& comm, int l) {
    layouts_of(i);
    thread_local std::vector<MPI_Count> sbytes, rbytes;
    thread_local std::vector<MPI_Aint> sdispls, rdispls;
    send_layout.lane_groups(l, send_starts, sbytes, sdispls);
    recv_layout.lane_groups(l, recv_starts, rbytes, rdispls);
    const std::byte* from = sends(i) + send_layout.offset(l, 0);
    std::byte* to = receives(i) + recv_layout.offset(l, 0);
    if (plan.algorithm == Algorithm::pairwise || plan.algorithm == Algorithm::isend) {
      thread_local std::vector<std::size_t> sb, sd, rb, rd;
      as_sizes(sbytes, sdispls, sb, sd);
      as_sizes(rbytes, rdispls, rb, rd);
      (plan.algorithm == Algorithm::pairwise ? p2p::pairwise_alltoallv : p2p::isend_alltoallv)(
          comm, from, sb, sd, to, rb, rd);
      return;
    }
    comm.alltoallv(from, sbytes, sdispls, to, rbytes, rdispls);
  };
  auto consume = [&](std::size_t i) {
    layouts_of(i);
    const auto t = static_cast<std::size_t>(me);
    for (std::size_t s = 0; s < N; ++s)
      for (int l = 0; l < pipe.lanes(); ++l) {
        const Slice part = recv_layout.part(l, s * T + t);
        copy_bytes(out + (recv_displ(s) + pipe.first(i) + part.begin) * e,
                   receives(i) + recv_layout.offset(l, s * T + t), part.size() * e);
      }
  };
  pipe.run(produce, network, consume, false);
}

}  // namespace tlc::detail
