// Entry point behind every tlc::Thread collective: check this thread's own arguments (the
// verdict travels in the descriptor, so every thread of the process reports it, before any data
// moves), work out what other threads will read from this one (its contribution), ask the
// planner (src/select/) for the call's plan, and run what the plan says.
#include <cstring>
#include <string>
#include <vector>

#include "algo/algorithms.hpp"
#include "intra/sliced_reduce.hpp"
#include "select/collective_traits.hpp"

namespace tlc::detail {

// In-place outputs that single-process algorithms write while other threads may still read
// the same buffer as input: publish a private copy of the input instead (what MPI
// implementations do for MPI_IN_PLACE alltoall too).
void publish_private_copy(CallDescriptor& d) {
  thread_local std::vector<std::byte> copy;
  if (copy.size() < d.contribution_bytes) copy.resize(d.contribution_bytes);
  if (d.contribution_bytes) std::memcpy(copy.data(), d.contribution, d.contribution_bytes);
  d.contribution = copy.data();
}

namespace {

// Whether this single-process call's output overwrites input other threads still read.
bool in_place_output_races(const CallDescriptor& d, Form form) {
  const CollectiveTraits& t = traits_of(d.call.collective);
  if (form == Form::carried)  // small contributions are carried: nobody reads the buffers
    return (t.in_place_output_races || t.in_place_output_races_in_flat) &&
           d.contribution_bytes > carry_capacity;
  return t.in_place_output_races;
}

void run_planned(TeamImpl& team, int me, CallDescriptor&& d, const Plan& plan);
void run_switchable(TeamImpl& team, int me, CallDescriptor&& d, const PlanCache::Entry& planned);

// Everything but the inline form. Out of line so that calls taking the inline form do not pay
// for this one's frame (a descriptor with a std::string) on the way in and out.
[[gnu::noinline]] void run_general(TeamImpl& team, int me, const Call& user_call) {
  CallDescriptor d;
  d.call = user_call;
  // Built-in ops on built-in types use the kernels compiled into the library.
  if (CombineFn kernel = builtin_combine(d.call.op, d.call.type)) d.call.combine = kernel;
  d.invalid = check_own_arguments(d.call, team.global_rank(me), team.size(), d);
  // One process, small contributions: the lines form of flat, before any plan is made (the
  // decision depends only on what the fingerprint holds, as the inline form's).
  if (team.processes() == 1 && team.planner().serves_lines(d.call, d.count))
    return run_flat_lines(team, me, d);

  const Collective c = d.call.collective;
  const PlanQuery query{c, d.count, d.call.type.size, d.call.commutative, d.call.in_place};
  const PlanCache::Entry& planned = team.plan(me, query);
  if (planned.switch_class >= 0) [[unlikely]]
    return run_switchable(team, me, std::move(d), planned);
  const Plan& plan = planned.plan;
  if (plan.fell_back && team.planner().fallback_error() && d.invalid.empty())
    team.planner().plan(query, &d.invalid);  // the message, made only when it is needed
  if (d.invalid.empty() && d.call.in_place && team.processes() == 1 &&
      in_place_output_races(d, plan.form))
    publish_private_copy(d);
  run_planned(team, me, std::move(d), plan);
}

// A large call whose static plan the leader switch may replace by the one led by arrival
// (team/leader_switch.hpp): the switch says which runs, and measures it.
[[gnu::noinline]] void run_switchable(TeamImpl& team, int me, CallDescriptor&& d,
                                      const PlanCache::Entry& planned) {
  LeaderSwitch& sw = team.leader_switch();
  const int cls = planned.switch_class;
  const std::uint64_t call = team.next_call(me);
  const bool by_arrival = sw.led_by_arrival(cls, call);
  const Plan plan = by_arrival ? planned.alternative : planned.plan;
  sw.arrive(me, call);
  run_planned(team, me, std::move(d), plan);
  sw.exit(me, cls, by_arrival);
  if (me == 0) sw.after_call(cls, call, by_arrival);
}

void run_planned(TeamImpl& team, int me, CallDescriptor&& d, const Plan& plan) {
  const Collective c = d.call.collective;
  if (c == Collective::barrier) return barrier_across(team, me, std::move(d), plan);
  if (plan.leader() == Leader::arrival) return run_led_by_arrival(team, me, std::move(d));
  switch (plan.form) {
    case Form::inline_line:  // calls that fit a begin line took the inline form already
    case Form::carried:
      return run_flat(team, me, std::move(d));
    case Form::sliced:
      return run_sliced(team, me, std::move(d));
    case Form::two_level:
      return run_two_level(team, me, std::move(d));
    case Form::staged:
    case Form::direct:
    case Form::pipelined:
      return run_across_processes(team, me, std::move(d), plan);
  }
}

// Elements of the contribution the inline form would carry.
std::size_t inline_count(const Call& c) noexcept {
  return c.collective == Collective::bcast ? c.recv_count : c.send_count;
}

void run_uncounted(TeamImpl& team, int me, const Call& call) {
  const std::size_t count = inline_count(call);
  if (const Planner::InlineForm f = team.planner().inline_form(call, count); f.serves)
    return run_flat_inline(team, me, call, count, f.fold);
  run_general(team, me, call);
}

// A call with telemetry (TLC_STATS): its arrival and exit bracket everything the call does.
// Calls that throw are not counted.
[[gnu::noinline]] void run_counted(TeamImpl& team, int me, const Call& call) {
  team.stats_arrive(me);
  run_uncounted(team, me, call);
  team.stats_exit(me, call.collective);
}

// A team spanning processes: a call that fails here must not leave the other processes waiting
// for this one (TeamImpl::call_failed).
[[gnu::noinline]] void run_across(TeamImpl& team, int me, const Call& call) {
  try {
    if (team.telemetry().enabled()) [[unlikely]]
      return run_counted(team, me, call);
    run_uncounted(team, me, call);
  } catch (const TeamAborted&) {
    throw;
  } catch (const Error& e) {
    team.call_failed(me, e);
    throw;
  }
}

}  // namespace

void run_collective(TeamImpl& team, int me, const Call& call) {
  if (team.processes() > 1) return run_across(team, me, call);
  if (team.telemetry().enabled()) [[unlikely]]
    return run_counted(team, me, call);
  run_uncounted(team, me, call);
}

}  // namespace tlc::detail
