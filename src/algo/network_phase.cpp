// See network_phase.hpp. Costs (n bytes per process, P processes, L lanes, alpha/beta of one
// lane, MPICH's algorithm for each MPI collective, [Thakur]):
//   hierarchical: one MPI collective of n bytes: e.g. allreduce 2 log P alpha + 2 n beta.
//   full_lane:    L concurrent MPI collectives of n/L bytes: e.g. allreduce
//                 2 log P alpha + 2 (n/L) beta where lanes progress in parallel (per-VCI MPICH),
//                 L times that where MPI serialises them (Debian's global-lock build).
//   multi_sender: as full_lane with tlc's point-to-point algorithm in place of MPI's
//                 (costs in src/inter/p2p.hpp); collectives without one (barrier, reduce,
//                 exscan, gather, scatter) run their full_lane form.
#include "algo/network_phase.hpp"

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "inter/p2p.hpp"
#include "intra/sliced_reduce.hpp"

namespace tlc::detail {

namespace {

// Part l of L of a byte range (64-byte granules), as [begin, end) offsets.
Slice byte_part(std::size_t bytes, int l, int L) { return slice_of(bytes, 1, l, L); }

// Part l of every process block of a layout.
void part_of(const Layout& whole, int l, int L, std::vector<MPI_Count>& bytes,
             std::vector<MPI_Aint>& displs) {
  const std::size_t P = whole.bytes.size();
  bytes.resize(P);
  displs.resize(P);
  for (std::size_t p = 0; p < P; ++p) {
    const Slice s = byte_part(static_cast<std::size_t>(whole.bytes[p]), l, L);
    bytes[p] = static_cast<MPI_Count>(s.size());
    displs[p] = whole.displs[p] + static_cast<MPI_Aint>(s.begin);
  }
}

// A layout part as the byte counts and displacements of the point-to-point algorithms.
void as_sizes(std::span<const MPI_Count> bytes, std::span<const MPI_Aint> displs,
              std::vector<std::size_t>& out_bytes, std::vector<std::size_t>& out_displs) {
  out_bytes.assign(bytes.begin(), bytes.end());
  out_displs.assign(displs.begin(), displs.end());
}

// Bcast segments of the pipelined binomial tree: small enough that the first hop of segment
// i+1 overlaps the second hop of segment i, large enough to stay in MPI's rendezvous protocol.
constexpr std::size_t bcast_segment_bytes = 256 * 1024;

// Bruck's allgather on part l of every process block. The planner gives bruck only to teams
// whose processes hold equal, packed blocks. The parts are strided in the staging buffer, so
// this lane packs them into its own buffer, runs Bruck there and unpacks: two local copies of
// the lane's share buy ceil(log2 P) rounds instead of P-1.
void bruck_allgather_part(ProcessComm& comm, std::byte* buf, const Layout& layout, int l, int L) {
  const std::size_t P = layout.bytes.size();
  const auto block = static_cast<std::size_t>(layout.bytes[0]);
  const Slice s = byte_part(block, l, L);
  const std::size_t part = s.size();
  thread_local std::vector<std::byte> packed;
  packed.resize(P * part);
  const std::size_t mine = static_cast<std::size_t>(comm.rank());
  if (part) std::memcpy(packed.data() + mine * part, buf + mine * block + s.begin, part);
  p2p::bruck_allgather(comm, packed.data(), part);
  for (std::size_t p = 0; p < P; ++p)
    if (p != mine && part) std::memcpy(buf + p * block + s.begin, packed.data() + p * part, part);
}

}  // namespace

template <class Part>
void NetworkPhase::step(const char* what, Part&& part) {
  TeamImpl& team = team_;
  const std::uint64_t s = team.next_step(me_);
  team.arrive(me_, s);
  auto run = [&](ProcessComm& comm, int l, int L) {
    try {
      part(comm, l, L);
    } catch (...) {
      team.abort(std::string("an inter-process ") + what + " failed");
      throw;
    }
  };
  if (!lanes()) {
    if (me_ != 0) {
      team.wait_released(s);
      return;
    }
    team.wait_all_arrived(s);
    run(team.comm(), 0, 1);
    team.release(s);
    return;
  }
  const int L = team.lanes();
  bool waited = false;
  for (int l = 0; l < L; ++l) {
    if (team.lane_thread(l) != me_) continue;
    if (!waited) team.wait_all_arrived(s);
    waited = true;
    run(team.lane(l), l, L);
  }
  team.sync(me_);
}

void NetworkPhase::barrier() {
  step("MPI_Barrier", [&](ProcessComm& comm, int, int) { comm.barrier(); });
}

void NetworkPhase::bcast(std::byte* buf, std::size_t bytes, int root) {
  step("MPI_Bcast", [&](ProcessComm& comm, int l, int L) {
    const Slice s = byte_part(bytes, l, L);
    if (algorithm_ == Algorithm::binomial)
      p2p::binomial_bcast(comm, buf + s.begin, s.size(), root, bcast_segment_bytes);
    else
      comm.bcast(buf + s.begin, s.size(), root);
  });
}

void NetworkPhase::allreduce(std::byte* buf, std::size_t count, const Call& call) {
  const std::size_t e = call.type.size;
  step("MPI_Allreduce", [&](ProcessComm& comm, int l, int L) {
    const Slice s = slice_of(count, e, l, L);
    if (algorithm_ == Algorithm::recursive_doubling)
      p2p::recursive_doubling_allreduce(comm, buf + s.begin * e, s.size(), call);
    else if (algorithm_ == Algorithm::rabenseifner)
      p2p::rabenseifner_allreduce(comm, buf + s.begin * e, s.size(), call);
    else
      comm.allreduce_in_place(buf + s.begin * e, s.size(), call);
  });
}

void NetworkPhase::reduce(std::byte* buf, std::size_t count, const Call& call, int root) {
  const std::size_t e = call.type.size;
  step("MPI_Reduce", [&](ProcessComm& comm, int l, int L) {
    const Slice s = slice_of(count, e, l, L);
    comm.reduce_in_place(buf + s.begin * e, s.size(), call, root);
  });
}

void NetworkPhase::exscan(std::byte* buf, std::size_t count, const Call& call) {
  const std::size_t e = call.type.size;
  step("MPI_Exscan", [&](ProcessComm& comm, int l, int L) {
    const Slice s = slice_of(count, e, l, L);
    comm.exscan_in_place(buf + s.begin * e, s.size(), call);
  });
}

void NetworkPhase::allgatherv(std::byte* buf, const Layout& layout) {
  step("MPI_Allgatherv", [&](ProcessComm& comm, int l, int L) {
    thread_local std::vector<MPI_Count> bytes;
    thread_local std::vector<MPI_Aint> displs;
    part_of(layout, l, L, bytes, displs);
    if (algorithm_ == Algorithm::bruck) return bruck_allgather_part(comm, buf, layout, l, L);
    if (algorithm_ == Algorithm::ring) {
      thread_local std::vector<std::size_t> sizes, offsets;
      as_sizes(bytes, displs, sizes, offsets);
      p2p::ring_allgatherv(comm, buf, sizes, offsets);
      return;
    }
    comm.allgatherv_in_place(buf, bytes, displs);
  });
}

void NetworkPhase::gatherv(const std::byte* send, std::size_t send_bytes, std::byte* recv,
                           const Layout& layout, int root) {
  const bool at_root = team_.process() == root;
  step("MPI_Gatherv", [&](ProcessComm& comm, int l, int L) {
    thread_local std::vector<MPI_Count> bytes;
    thread_local std::vector<MPI_Aint> displs;
    if (at_root) {
      part_of(layout, l, L, bytes, displs);
      comm.gatherv(nullptr, 0, recv, bytes, displs, root);
    } else {
      const Slice s = byte_part(send_bytes, l, L);
      comm.gatherv(send + s.begin, s.size(), nullptr, {}, {}, root);
    }
  });
}

void NetworkPhase::scatterv(const std::byte* send, const Layout& layout, std::byte* recv,
                            std::size_t recv_bytes, int root) {
  const bool at_root = team_.process() == root;
  step("MPI_Scatterv", [&](ProcessComm& comm, int l, int L) {
    thread_local std::vector<MPI_Count> bytes;
    thread_local std::vector<MPI_Aint> displs;
    if (at_root) {
      part_of(layout, l, L, bytes, displs);
      comm.scatterv(send, bytes, displs, nullptr, 0, root);
    } else {
      const Slice s = byte_part(recv_bytes, l, L);
      comm.scatterv(nullptr, {}, {}, recv + s.begin, s.size(), root);
    }
  });
}

void NetworkPhase::alltoallv(const std::byte* send, const Layout& send_layout, std::byte* recv,
                             const Layout& recv_layout) {
  step("MPI_Alltoallv", [&](ProcessComm& comm, int l, int L) {
    thread_local std::vector<MPI_Count> sbytes, rbytes;
    thread_local std::vector<MPI_Aint> sdispls, rdispls;
    part_of(send_layout, l, L, sbytes, sdispls);
    part_of(recv_layout, l, L, rbytes, rdispls);
    if (algorithm_ == Algorithm::pairwise || algorithm_ == Algorithm::isend) {
      thread_local std::vector<std::size_t> sb, sd, rb, rd;
      as_sizes(sbytes, sdispls, sb, sd);
      as_sizes(rbytes, rdispls, rb, rd);
      (algorithm_ == Algorithm::pairwise ? p2p::pairwise_alltoallv : p2p::isend_alltoallv)(
          comm, send, sb, sd, recv, rb, rd);
      return;
    }
    comm.alltoallv(send, sbytes, sdispls, recv, rbytes, rdispls);
  });
}

void NetworkPhase::reduce_scatter(const std::byte* send, std::byte* recv,
                                  std::span<const MPI_Count> counts, const Call& call) {
  const std::size_t e = call.type.size;
  const int process = team_.process();
  step("MPI_Reduce_scatter", [&](ProcessComm& comm, int l, int L) {
    const bool pairwise = algorithm_ == Algorithm::pairwise;
    if (L == 1 && !pairwise) {
      comm.reduce_scatter(send, recv, counts, call);
      return;
    }
    // Lane l reduces part l of every process block. Those parts are not contiguous in send,
    // so this lane gathers them into its own buffer first (the permuted decomposition of
    // Traff & Hunold's reduce_scatter_block_lane); every lane thread permutes its own parts.
    // The pairwise exchange reduces in place, so it always works on that private copy.
    thread_local std::vector<std::byte> permuted, result;
    thread_local std::vector<MPI_Count> part_counts;
    const std::size_t P = counts.size();
    part_counts.resize(P);
    std::size_t total = 0, block = 0, mine_offset = 0;
    for (std::size_t p = 0; p < P; ++p)
      total += slice_of(static_cast<std::size_t>(counts[p]), e, l, L).size();
    permuted.resize(total * e);
    std::size_t at = 0;
    for (std::size_t p = 0; p < P; ++p) {
      const Slice s = slice_of(static_cast<std::size_t>(counts[p]), e, l, L);
      if (s.size())  // empty parts may come with null buffers (0-element calls)
        std::memcpy(permuted.data() + at * e, send + (block + s.begin) * e, s.size() * e);
      part_counts[p] = static_cast<MPI_Count>(s.size());
      if (static_cast<int>(p) == process) mine_offset = s.begin;
      at += s.size();
      block += static_cast<std::size_t>(counts[p]);
    }
    const std::size_t mine =
        static_cast<std::size_t>(part_counts[static_cast<std::size_t>(process)]);
    if (pairwise) {
      thread_local std::vector<std::size_t> sizes;
      sizes.assign(part_counts.begin(), part_counts.end());
      p2p::pairwise_reduce_scatter(comm, permuted.data(), sizes, call);
      std::size_t before = 0;
      for (int p = 0; p < process; ++p) before += sizes[static_cast<std::size_t>(p)];
      if (mine) std::memcpy(recv + mine_offset * e, permuted.data() + before * e, mine * e);
      return;
    }
    result.resize(mine * e);
    comm.reduce_scatter(permuted.data(), result.data(), part_counts, call);
    if (mine) std::memcpy(recv + mine_offset * e, result.data(), mine * e);
  });
}

}  // namespace tlc::detail
