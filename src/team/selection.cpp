// tlc::select_algorithm(): what the planner would choose for a team shape, with the
// configuration a team made now would read (TLC_* and the tuning file). In the team layer
// because the configuration is the team's (team/config.hpp); the planner is select/'s.
#include <algorithm>
#include <cstddef>
#include <string>
#include <utility>

#include <tlc/algorithms.hpp>
#include <tlc/options.hpp>

#include "inter/mpi_policy.hpp"
#include "select/planner.hpp"
#include "team/config.hpp"

namespace tlc {

Selection select_algorithm(const SelectionQuery& q) {
  detail::Config config = detail::Config::read(TeamOptions{});
  detail::PlanSettings& s = config.plan;
  if (s.costs.lane_parallelism == 0) s.costs.lane_parallelism = detail::mpi_lane_parallelism();
  const std::size_t asked =
      q.pipeline_chunk_bytes ? q.pipeline_chunk_bytes : config.pipeline_chunk_asked;
  if (asked) s.pipeline_chunk_bytes = asked;
  s.pipeline_movers = asked != 0 || !q.oversubscribed;
  const detail::TeamShape shape{
      q.processes, q.threads, q.lanes, q.numa_domains, q.processes * q.threads, true};
  const detail::Planner planner(shape, s);
  const std::size_t e = std::max<std::size_t>(1, q.element_size);
  const detail::PlanQuery query{q.collective, q.bytes / e, e, q.commutative, false};
  std::string reason;
  detail::Plan plan = planner.plan(query, &reason);
  // Single-process calls that fit a begin line take the inline form before any plan is made.
  detail::Call probe;
  probe.collective = q.collective;
  probe.type = {detail::TypeClass::floating, static_cast<std::uint32_t>(e),
                static_cast<std::uint32_t>(e)};
  probe.op = q.commutative ? detail::BuiltinOp::sum : detail::BuiltinOp::none;
  if (q.processes == 1 &&
      (planner.serves_inline(probe, q.bytes / e) || planner.serves_lines(probe, q.bytes / e))) {
    plan.algorithm = detail::Algorithm::flat;
    plan.form = detail::Form::inline_line;
  }
  return planner.describe(query, plan, std::move(reason));
}

int mpi_lane_parallelism() { return detail::mpi_lane_parallelism(); }

}  // namespace tlc
