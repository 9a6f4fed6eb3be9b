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

// The rank-packed layout of equal rank blocks of `block` bytes as one group per process (what
// one lane's PieceLayout::lane_groups gives for whole blocks): the sizes and offsets a direct
// form's MPI v-call or tlc's linear algorithm takes, computed without building a layout, since a
// small direct call pays for every step of its own.
template <class Size, class Offset>
void process_groups(const TeamImpl& team, std::size_t block, std::vector<Size>& sizes,
                    std::vector<Offset>& offsets) {
  const int P = team.processes();
  sizes.resize(static_cast<std::size_t>(P));
  offsets.resize(static_cast<std::size_t>(P));
  for (int p = 0; p < P; ++p) {
    const auto first = static_cast<std::size_t>(team.first_rank_of(p));
    const auto end = static_cast<std::size_t>(p + 1 < P ? team.first_rank_of(p + 1) : team.size());
    sizes[static_cast<std::size_t>(p)] = static_cast<Size>((end - first) * block);
    offsets[static_cast<std::size_t>(p)] = static_cast<Offset>(first * block);
  }
}

}  // namespace tlc::detail
