// The algorithms, one file each. Each starts with TeamImpl::begin_call (publish, rendezvous,
// validate), so threads that disagree fail together before the algorithms could diverge.
#pragma once

#include "team/team_impl.hpp"

namespace tlc::detail {

void barrier_hierarchical(TeamImpl& team, int me, CallDescriptor call);
void allreduce_hierarchical(TeamImpl& team, int me, const ReduceCall& call, CallDescriptor d);

}  // namespace tlc::detail
