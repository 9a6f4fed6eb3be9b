// The dispatch of the posted schedules (algo/posted/schedule.hpp) and the agreement check that
// opens every pack: the threads of a process must have started the same call.
#include "algo/posted/schedule.hpp"

#include <algorithm>
#include <string>
#include <utility>

#include <tlc/error.hpp>

#include "algo/pipeline.hpp"
#include "inter/process_comm.hpp"
#include "select/collective_traits.hpp"
#include "select/planner.hpp"
#include "team/team_impl.hpp"

namespace tlc::detail::posted {

namespace {

bool is_reduction(Collective c) {
  return c == Collective::reduce || c == Collective::allreduce ||
         c == Collective::reduce_scatter_block || c == Collective::scan || c == Collective::exscan;
}

// What differs between thread 0's call and another's, "" when they are the same call.
std::string differs(const PostedEntry& a, const PostedEntry& b) {
  const Call &x = a.call, &y = b.call;
  if (x.collective != y.collective)
    return std::string("collective ") + to_string(x.collective) + " vs " + to_string(y.collective);
  if (x.type.size != y.type.size || x.type.type_class != y.type.type_class) return "element type";
  if (x.root != y.root) return "root " + std::to_string(x.root) + " vs " + std::to_string(y.root);
  if (x.op != y.op || (x.op == BuiltinOp::none && x.combine != y.combine)) return "op";
  if (a.count != b.count)
    return "elements per rank " + std::to_string(a.count) + " vs " + std::to_string(b.count);
  return {};
}

}  // namespace

int slice_tasks(std::size_t bytes, int threads) {
  constexpr std::size_t slice_bytes = 16 * 1024;
  return static_cast<int>(std::min<std::size_t>(static_cast<std::size_t>(threads),
                                                std::max<std::size_t>(1, bytes / slice_bytes)));
}

void check_agreement(const PostedCall& call) {
  TeamImpl& team = call.team;
  for (int t = 1; t < team.threads(); ++t) {
    const std::string why = differs(call.entries[0], call.entries[static_cast<std::size_t>(t)]);
    if (!why.empty())
      throw Error(Errc::mismatch, "tlc: threads " + team.who(0) + " and " + team.who(t) +
                                      " started different nonblocking calls at the same place "
                                      "of their order (" +
                                      why + ")");
  }
}

int prepare(PostedCall& call) {
  check_agreement(call);
  if (is_reduction(call.entries[0].call.collective)) return prepare_reduction(call);
  if (movement_direct(call)) return movement_direct_tasks(call);
  pack_movement(call);
  return 0;
}

void pack_task(PostedCall& call, int task) {
  if (is_reduction(call.entries[0].call.collective))
    pack_reduction_task(call, task);
  else
    pack_movement_direct_task(call, task);
}

void step_parts(PostedCall& call) {
  TeamImpl& team = call.team;
  const Call& c = call.entries[0].call;
  call.lanes = call.chunks = 1;
  if (team.processes() == 1 || c.collective == Collective::barrier ||
      c.collective == Collective::reduce_scatter_block)
    return;
  const std::size_t n = call.entries[0].count;
  const PlanQuery q{c.collective, n, c.type.size, c.commutative, c.in_place};
  const Plan& plan = posted_calls(team).plan(team, q);
  if (plan.leader() == Leader::lane_threads) call.lanes = std::clamp(plan.lanes, 1, team.lanes());
  if (plan.form == Form::pipelined && n > 0) {
    const bool one_block = is_reduction(c.collective) || c.collective == Collective::bcast;
    const std::size_t chunk = Pipeline::chunk_elements(
        plan, c.type.size, one_block ? 1 : static_cast<std::size_t>(team.size()));
    call.chunks = static_cast<int>((n + chunk - 1) / chunk);
  }
}

PartBytes part_bytes(const PostedCall& call, int i, std::size_t bytes, std::size_t e) noexcept {
  if (call.parts() == 1) return {0, bytes};
  const Slice chunk = slice_of(bytes / e, e, i / call.lanes, call.chunks);
  const Slice lane = slice_of(chunk.size(), e, i % call.lanes, call.lanes);
  return {(chunk.begin + lane.begin) * e, lane.size() * e};
}

PartLayout part_layout(PostedCall& call, int i, std::span<const MPI_Count> counts,
                       std::span<const MPI_Aint> displs, bool receive) {
  if (call.parts() == 1) return {counts, displs};
  PostedCall::StepPart& part = *call.step_parts[static_cast<std::size_t>(i)];
  std::vector<MPI_Count>& part_counts = receive ? part.recv_counts : part.counts;
  std::vector<MPI_Aint>& part_displs = receive ? part.recv_displs : part.displs;
  const std::size_t e = call.entries[0].call.type.size;
  part_counts.resize(counts.size());
  part_displs.resize(displs.size());
  for (std::size_t p = 0; p < counts.size(); ++p) {
    const PartBytes b = part_bytes(call, i, static_cast<std::size_t>(counts[p]), e);
    part_counts[p] = static_cast<MPI_Count>(b.length);
    if (p < displs.size()) part_displs[p] = displs[p] + static_cast<MPI_Aint>(b.offset);
  }
  return {part_counts, part_displs};
}

void post(PostedCall& call) {
  TeamImpl& team = call.team;
  if (call.lanes == 0) {
    step_parts(call);
    if (call.parts() > 1)
      for (int i = 0; i < call.parts(); ++i) {
        call.step_parts.push_back(std::make_unique<PostedCall::StepPart>());
        if (call.persistent) call.step_parts.back()->op.set_repeated();
      }
  }
  const bool reduction = is_reduction(call.entries[0].call.collective);
  for (int i = 0; i < call.parts(); ++i) {
    PostedOp& op =
        call.parts() == 1 ? call.network : call.step_parts[static_cast<std::size_t>(i)]->op;
    if (call.parts() > 1) call.step_parts[static_cast<std::size_t>(i)]->complete = false;
    op.begin();
    ProcessComm& comm = team.posted_comm(i % call.lanes);
    if (reduction)
      post_reduction(call, op, comm, i);
    else
      post_movement(call, op, comm, i);
  }
}

bool test_step(PostedCall& call) {
  if (call.parts() <= 1) return call.team.posted_comm().test(call.network);
  bool all = true;
  for (int i = 0; i < call.parts(); ++i) {
    PostedCall::StepPart& part = *call.step_parts[static_cast<std::size_t>(i)];
    if (part.complete) continue;
    // An error of one part waits for the others: their MPI operations still use the staging.
    try {
      part.complete = call.team.posted_comm(i % call.lanes).test(part.op);
    } catch (...) {
      part.complete = true;
      if (!call.part_failure) call.part_failure = std::current_exception();
    }
    all = all && part.complete;
  }
  if (all && call.part_failure) std::rethrow_exception(std::exchange(call.part_failure, nullptr));
  return all;
}

void unpack(PostedCall& call, int me) {
  if (is_reduction(call.entries[0].call.collective))
    unpack_reduction(call, me);
  else
    unpack_movement(call, me);
}

}  // namespace tlc::detail::posted
