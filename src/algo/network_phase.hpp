// The inter-process phase of the compositions in algo/hierarchical.cpp, in three forms:
//   - hierarchical: thread 0 runs the MPI collective on the whole staging buffer;
//   - full_lane: the staging buffer is cut into L parts; the thread driving lane l runs the
//     same MPI collective on part l on lane l, all lanes at once (Traff & Hunold,
//     [TraffHunold] sec. 3, "_lane");
//   - multi_sender: as full_lane, but each lane runs tlc's own point-to-point algorithm
//     (src/inter/p2p.hpp) on its part (Parsons, [Parsons]
//     ch. 2.3.2).
// Every thread of the process calls each method (it is a synchronisation step); it returns
// when the inter-process part is complete on every lane of this process. Parts are cut on
// 64-byte boundaries, so counts that do not divide by L work; a process block is cut the same
// way on every process, so the parts of sender and receiver match.
#pragma once

#include <cstddef>
#include <span>
#include <vector>

#include <mpi.h>

#include "select/planner.hpp"
#include "team/team_impl.hpp"

namespace tlc::detail {

struct Layout {
  std::vector<MPI_Count> bytes;  // per process
  std::vector<MPI_Aint> displs;  // per process
  std::size_t total = 0;
};

class NetworkPhase {
 public:
  NetworkPhase(TeamImpl& team, int me, const Plan& plan)
      : team_(team), me_(me), plan_(plan), algorithm_(plan.algorithm) {}

  const Plan& plan() const noexcept { return plan_; }
  // The plan's direct form: this process's one thread calls MPI on its own buffers.
  bool direct() const noexcept { return plan_.form == Form::direct; }

  void barrier();
  void bcast(std::byte* buf, std::size_t bytes, int root);
  void allreduce(std::byte* buf, std::size_t count, const Call& call);
  // In place at the root process; buf is only read elsewhere.
  void reduce(std::byte* buf, std::size_t count, const Call& call, int root);
  // In place; undefined on process 0.
  void exscan(std::byte* buf, std::size_t count, const Call& call);
  void allgatherv(std::byte* buf, const Layout& layout);
  // layout is read at the root only; the root's own block is already in place.
  void gatherv(const std::byte* send, std::size_t send_bytes, std::byte* recv, const Layout& layout,
               int root);
  // layout is read at the root only; the root keeps its own block in place.
  void scatterv(const std::byte* send, const Layout& layout, std::byte* recv,
                std::size_t recv_bytes, int root);
  void alltoallv(const std::byte* send, const Layout& send_layout, std::byte* recv,
                 const Layout& recv_layout);
  // send holds the process blocks (counts in elements) in order; this process's block of the
  // reduction lands in recv.
  void reduce_scatter(const std::byte* send, std::byte* recv, std::span<const MPI_Count> counts,
                      const Call& call);

 private:
  // Runs part(comm, l, L) for every lane l this thread drives (or, hierarchical, thread 0 runs
  // part(process comm, 0, 1)), between two rendezvous of the process.
  template <class Part>
  void step(const char* what, Part&& part);
  bool lanes() const noexcept { return uses_lanes(algorithm_); }

  TeamImpl& team_;
  int me_;
  const Plan& plan_;
  Algorithm algorithm_;
};

}  // namespace tlc::detail
