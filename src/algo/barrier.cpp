// barrier, hierarchical.
//   Phase 1: gather of the process's threads (begin_call).
//   Phase 2 (P > 1): thread 0 runs MPI_Barrier on the process communicator, then releases.
// Cost: intra gather + release, plus one MPI_Barrier (MPICH: dissemination, ceil(log2 P) alpha).
// Follows Parsons ([Parsons], ch. 2.3) with Jain et al.'s flags
// ([Jain], sec. II).
#include "algo/algorithms.hpp"

namespace tlc::detail {

void barrier_hierarchical(TeamImpl& team, int me, CallDescriptor call) {
  begin_validated(team, me, std::move(call));
  if (team.processes() == 1) return;
  const std::uint64_t s = team.next_step(me);
  if (me == 0) {
    team.mark_led(me);
    team.comm().barrier();
    team.release(s);
  } else {
    team.wait_released(s);
  }
}

}  // namespace tlc::detail
