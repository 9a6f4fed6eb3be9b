// A call across processes: the begin step, then the collective's composition (algo/across.hpp),
// as the plan says. barrier has its own (algo/barrier.cpp).
#include "algo/across.hpp"

namespace tlc::detail {

void run_across_processes(TeamImpl& team, int me, CallDescriptor&& d, const Plan& plan) {
  const auto view = begin_validated(team, me, std::move(d));
  if (plan.form == Form::direct) team.telemetry().mark_led(me);  // the one thread calls MPI itself
  switch (view[me].call.collective) {
    case Collective::barrier:
      return;  // algo/barrier.cpp
    case Collective::bcast:
      return bcast_across(team, me, view, plan);
    case Collective::reduce:
    case Collective::allreduce:
    case Collective::scan:
    case Collective::exscan:
      return reduction_across(team, me, view, plan);
    case Collective::allgather:
    case Collective::allgatherv:
    case Collective::gather:
    case Collective::gatherv:
      return gather_across(team, me, view, plan);
    case Collective::scatter:
    case Collective::scatterv:
      return scatter_across(team, me, view, plan);
    case Collective::alltoall:
    case Collective::alltoallv:
      return alltoall_across(team, me, view, plan);
    case Collective::reduce_scatter_block:
      return reduce_scatter_block_across(team, me, view, plan);
  }
}

}  // namespace tlc::detail
