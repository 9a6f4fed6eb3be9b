// barrier across processes (hierarchical, dissemination).
//   Phase 1: gather of the process's threads (begin_call).
//   Phase 2 (P > 1): thread 0 runs the barrier between processes on the process communicator:
//            MPI_Barrier (hierarchical) or tlc's dissemination barrier (dissemination), then
//            releases the others.
// Cost: intra gather + release, plus ceil(log2 P) alpha (MPICH's MPI_Barrier and tlc's
// dissemination alike; MPI's, run as MPI_Ibarrier and polled, adds its schedule's start-up).
// Follows Parsons ([Parsons], ch. 2.3) with Jain et al.'s flags ([Jain], sec. II); the
// dissemination barrier is [Hensgen]'s.
#include "algo/algorithms.hpp"
#include "inter/p2p.hpp"

namespace tlc::detail {

void barrier_across(TeamImpl& team, int me, CallDescriptor&& call, const Plan& plan) {
  begin_validated(team, me, std::move(call));
  if (team.processes() == 1) return;
  const std::uint64_t s = team.rendezvous().next_step(me);
  if (me == 0) {
    team.telemetry().mark_led(me);
    if (plan.algorithm == Algorithm::dissemination)
      p2p::dissemination_barrier(team.comm());
    else
      team.comm().barrier();
    team.rendezvous().release(s);
  } else {
    team.rendezvous().wait_released(s);
  }
}

}  // namespace tlc::detail
