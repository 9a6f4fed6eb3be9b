// bcast across processes (Parsons [Parsons] ch. 2.3; Traff & Hunold [TraffHunold] sec. 3,
// "_hier" and "_lane"; docs/references.md).
//
// Steps (T threads here, P processes, n bytes, L lanes, K chunks of C bytes per lane):
//   produce: nothing: the data travels in the root's buffer in the root process and, elsewhere,
//            in thread 0's output, so no staging copy is made;
//   network: chunk i from the root process to every process: MPI_Bcast by thread 0
//            (hierarchical), or by each lane's thread on its part (full_lane), or tlc's pipelined
//            binomial tree per lane (binomial);
//   consume: every other thread copies chunk i into its own output; all wait for the last copy
//            before returning (the others read the holder's output).
// direct (one thread here; binomial: one thread everywhere): the network step on the caller's
// buffer, with no pipeline.
// Cost: network(n) + n/bandwidth of the copies, in chunks (K + 1) max(network(C), copy(C));
// MPICH's bcast is binomial below 12 KiB, scatter + allgather above ([Thakur] sec. 4.2).
#include "algo/across.hpp"
#include "inter/p2p.hpp"

namespace tlc::detail {

namespace {

// Segments of the pipelined binomial tree: small enough that the first hop of segment i+1
// overlaps the second hop of segment i, large enough to stay in MPI's rendezvous protocol.
constexpr std::size_t binomial_segment_bytes = 256 * 1024;

}  // namespace

void bcast_across(TeamImpl& team, int me, const CallView& view, const Plan& plan) {
  const Call& c = view[me].call;
  const std::size_t e = c.type.size;
  const int root_process = team.process_of(c.root);
  if (plan.form == Form::direct) {
    const std::size_t bytes = view[me].count * e;
    if (plan.algorithm == Algorithm::binomial)
      p2p::binomial_bcast(team.comm(), static_cast<std::byte*>(c.recv), bytes, root_process,
                          binomial_segment_bytes);
    else
      team.comm().bcast(c.recv, bytes, root_process);
    return;
  }
  Pipeline pipe(team, me, e, view[me].count, plan);
  std::byte* holder =
      root_process == team.process() ? recv_of(view, c.root - team.first_rank()) : recv_of(view, 0);
  pipe.set_reuses_regions(false);
  auto* out = static_cast<std::byte*>(c.recv);
  pipe.run([](std::size_t) {},
           [&](std::size_t i, ProcessComm& comm, int l) {
             const Slice part = pipe.lane_part(i, l);
             std::byte* at = holder + pipe.offset(i) + part.begin * e;
             if (plan.algorithm == Algorithm::binomial)
               p2p::binomial_bcast(comm, at, part.size() * e, root_process, binomial_segment_bytes);
             else
               comm.bcast(at, part.size() * e, root_process);
           },
           [&](std::size_t i) {
             copy_bytes(out + pipe.offset(i), holder + pipe.offset(i), pipe.count(i) * e);
           },
           team.threads() > 1);
}

}  // namespace tlc::detail
