// Entry points behind tlc::Thread: check this thread's own arguments (the verdict travels in
// the descriptor, so every thread of the process reports it), ask the selector, run the
// algorithm.
#include <string>

#include "algo/algorithms.hpp"
#include "intra/sliced_reduce.hpp"

namespace tlc::detail {

namespace {

bool overlap_partially(const void* a, std::size_t a_bytes, const void* b, std::size_t b_bytes) {
  if (a == b || a_bytes == 0 || b_bytes == 0) return false;
  auto pa = reinterpret_cast<std::uintptr_t>(a), pb = reinterpret_cast<std::uintptr_t>(b);
  return pa < pb + b_bytes && pb < pa + a_bytes;
}

std::string check_reduce_arguments(const ReduceCall& c) {
  const std::size_t bytes = c.count * c.type.size;
  if (c.count > 0 && !c.send)
    return "send buffer is null but holds " + std::to_string(c.count) + " elements";
  if (c.recv_count > 0 && !c.recv)
    return "receive buffer is null but holds " + std::to_string(c.recv_count) + " elements";
  if (c.recv_count != c.count)
    return "receive buffer holds " + std::to_string(c.recv_count) + " elements, send buffer " +
           std::to_string(c.count) + " (they must be equal)";
  if (overlap_partially(c.send, bytes, c.recv, bytes))
    return "send and receive buffers overlap partially (pass one buffer for in-place)";
  return {};
}

}  // namespace

void barrier(TeamImpl& team, int me) {
  CallDescriptor d;
  d.collective = Collective::barrier;
  switch (team.selector().choose(Collective::barrier, 0, team.shape())) {
    case Algorithm::barrier_hierarchical:
      return barrier_hierarchical(team, me, std::move(d));
    default:
      break;
  }
}

void allreduce(TeamImpl& team, int me, const ReduceCall& user_call) {
  ReduceCall call = user_call;
  // Built-in ops on built-in types use the kernels compiled into the library.
  if (CombineFn kernel = builtin_combine(call.op, call.type)) call.combine = kernel;
  CallDescriptor d;
  d.collective = Collective::allreduce;
  d.count = call.count;
  d.type = call.type;
  d.op = call.op;
  d.combine = call.combine;
  d.send = call.send;
  d.recv = call.recv;
  d.op_object = call.op_object;
  d.invalid = check_reduce_arguments(call);
  switch (
      team.selector().choose(Collective::allreduce, call.count * call.type.size, team.shape())) {
    case Algorithm::allreduce_hierarchical:
      return allreduce_hierarchical(team, me, call, std::move(d));
    default:
      break;
  }
}

}  // namespace tlc::detail
