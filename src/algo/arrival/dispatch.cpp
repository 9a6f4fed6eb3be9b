// The one entry of the calls led by arrival: which family runs a collective whose plan is led
// by arrival (algo/entry.cpp calls it). The families, each in its own file here: reduce.cpp,
// spread.cpp (bcast, scatter), alltoall.cpp, by_blocks.cpp (allreduce, reduce_scatter_block),
// scan.cpp (scan, exscan); the step they share in participation.hpp.
#include "algo/arrival/participation.hpp"

namespace tlc::detail {

void run_led_by_arrival(TeamImpl& team, int me, CallDescriptor&& d) {
  if (team.telemetry().enabled()) team.telemetry().mark_by_arrival(me);
  switch (d.call.collective) {
    case Collective::bcast:
    case Collective::scatter:
      return spread_by_arrival(team, me, std::move(d));
    case Collective::alltoall:
      return alltoall_by_arrival(team, me, std::move(d));
    case Collective::reduce_scatter_block:
    case Collective::allreduce:
      return reduce_by_blocks(team, me, std::move(d));
    case Collective::scan:
    case Collective::exscan:
      return scan_by_arrival(team, me, std::move(d));
    default:
      return reduce_by_arrival(team, me, std::move(d));
  }
}

}  // namespace tlc::detail