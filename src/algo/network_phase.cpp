// See network_phase.hpp. Costs (n bytes per process, P processes, L lanes, alpha/beta of one
// lane, MPICH's algorithm for each MPI collective, shared/seeds/001_e878f958388ea521.txt):
//   hierarchical: one MPI collective of n bytes: e.g. allreduce 2 log P alpha + 2 n beta.
//   full_lane:    L concurrent MPI collectives of n/L bytes: e.g. allreduce
//                 2 log P alpha + 2 (n/L) beta where lanes progress in parallel (per-VCI MPICH),
//                 L times that where MPI serialises them (Debian's global-lock build).
#include "algo/network_phase.hpp"

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

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
    comm.bcast(buf + s.begin, s.size(), root);
  });
}

void NetworkPhase::allreduce(std::byte* buf, std::size_t count, const Call& call) {
  const std::size_t e = call.type.size;
  step("MPI_Allreduce", [&](ProcessComm& comm, int l, int L) {
    const Slice s = slice_of(count, e, l, L);
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
    comm.alltoallv(send, sbytes, sdispls, recv, rbytes, rdispls);
  });
}

void NetworkPhase::reduce_scatter(const std::byte* send, std::byte* recv,
                                  std::span<const MPI_Count> counts, const Call& call) {
  const std::size_t e = call.type.size;
  const int process = team_.process();
  step("MPI_Reduce_scatter", [&](ProcessComm& comm, int l, int L) {
    if (L == 1) {
      comm.reduce_scatter(send, recv, counts, call);
      return;
    }
    // Lane l reduces part l of every process block. Those parts are not contiguous in send,
    // so this lane gathers them into its own buffer first (the permuted decomposition of
    // Traff & Hunold's reduce_scatter_block_lane); every lane thread permutes its own parts.
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
      std::memcpy(permuted.data() + at * e, send + (block + s.begin) * e, s.size() * e);
      part_counts[p] = static_cast<MPI_Count>(s.size());
      if (static_cast<int>(p) == process) mine_offset = s.begin;
      at += s.size();
      block += static_cast<std::size_t>(counts[p]);
    }
    const std::size_t mine =
        static_cast<std::size_t>(part_counts[static_cast<std::size_t>(process)]);
    result.resize(mine * e);
    comm.reduce_scatter(permuted.data(), result.data(), part_counts, call);
    if (mine) std::memcpy(recv + mine_offset * e, result.data(), mine * e);
  });
}

}  // namespace tlc::detail
