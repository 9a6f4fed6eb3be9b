// The collectives across processes, each written once as produce / network / consume steps run
// by the engine of algo/pipeline.hpp: in chunks when the plan pipelines, as one chunk otherwise.
// The plan's algorithm picks the network step's variant (one leader with MPI's collective,
// full_lane, or a multi-sender point-to-point algorithm per lane); its form `direct` runs the
// MPI call on the one thread's own buffers instead.
#pragma once

#include <cstddef>
#include <cstring>
#include <vector>

#include "algo/algorithms.hpp"
#include "algo/pipeline.hpp"

namespace tlc::detail {

void bcast_across(TeamImpl& team, int me, const CallView& view, const Plan& plan);
// reduce, allreduce, scan, exscan (algo/reductions.cpp)
void reduction_across(TeamImpl& team, int me, const CallView& view, const Plan& plan);
// allgather(v), gather(v) (algo/gathers.cpp)
void gather_across(TeamImpl& team, int me, const CallView& view, const Plan& plan);
// scatter(v) (algo/scatter.cpp)
void scatter_across(TeamImpl& team, int me, const CallView& view, const Plan& plan);
// alltoall(v) (algo/alltoall.cpp)
void alltoall_across(TeamImpl& team, int me, const CallView& view, const Plan& plan);
void reduce_scatter_block_across(TeamImpl& team, int me, const CallView& view, const Plan& plan);

inline void copy_bytes(void* to, const void* from, std::size_t bytes) {
  if (bytes && to != from) std::memcpy(to, from, bytes);
}

// First global rank of every process and the team size after them (P + 1 entries): the piece
// groups of a rank-packed region.
inline const std::vector<std::size_t>& rank_starts(const TeamImpl& team) {
  thread_local std::vector<std::size_t> starts;
  const int P = team.processes();
  starts.resize(static_cast<std::size_t>(P) + 1);
  for (int p = 0; p < P; ++p)
    starts[static_cast<std::size_t>(p)] = static_cast<std::size_t>(team.first_rank_of(p));
  starts[static_cast<std::size_t>(P)] = static_cast<std::size_t>(team.size());
  return starts;
}

}  // namespace tlc::detail
