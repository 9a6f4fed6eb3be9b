// The dispatch of the posted schedules (algo/posted/schedule.hpp) and the agreement check that
// opens every pack: the threads of a process must have started the same call.
#include "algo/posted/schedule.hpp"

#include <algorithm>
#include <string>

#include <tlc/error.hpp>

#include "select/collective_traits.hpp"
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

void post(PostedCall& call, ProcessComm& comm) {
  if (is_reduction(call.entries[0].call.collective))
    post_reduction(call, comm);
  else
    post_movement(call, comm);
}

void unpack(PostedCall& call, int me) {
  if (is_reduction(call.entries[0].call.collective))
    unpack_reduction(call, me);
  else
    unpack_movement(call, me);
}

}  // namespace tlc::detail::posted
