// allreduce, hierarchical (Parsons' universal hierarchical algorithm,
// shared/seeds/000_71278c9285ec9e6c.txt ch. 2.3; Traff & Hunold's Allreduce_hier,
// shared/seeds/003_153763b6ba621384.txt sec. 3), with publish-and-slice inside the process
// (DESIGN section 4).
//
// One process (P = 1):
//   1. begin_call: every thread publishes its buffers; rendezvous; validation.
//   2. Thread t reduces slice t of all T inputs (rank order) and writes it into all T outputs.
//   3. Rendezvous, so no thread returns while others still read its input or write its output.
// Several processes (P > 1):
//   1. begin_call as above (and, once per size increase, growing the staging buffer).
//   2. Thread t reduces slice t of all T inputs into the team's staging buffer.
//   3. Gather to thread 0, which runs MPI_Allreduce in place on the staging buffer, then releases.
//   4. Every thread copies the staging buffer into its own output. The next call's begin_call
//      guarantees all copies are done before the staging buffer is written again.
// Cost for n bytes, T threads: intra reads T*n and writes T*n bytes (the minimum), split over T
// threads, gamma*(T-1)*n/T of reduction work per thread; plus MPI_Allreduce(n) over P processes
// (MPICH: recursive doubling or Rabenseifner, see shared/seeds/001_e878f958388ea521.txt).
#include <vector>

#include "algo/algorithms.hpp"
#include "intra/sliced_reduce.hpp"

namespace tlc::detail {

void allreduce_hierarchical(TeamImpl& team, int me, const ReduceCall& call, CallDescriptor d) {
  const auto view = team.begin_call(me, std::move(d));
  if (call.count == 0) return;
  const int threads = team.threads();
  const std::size_t element = call.type.size;
  const Slice mine = slice_of(call.count, element, me, threads);

  thread_local std::vector<const void*> inputs;
  thread_local std::vector<void*> outputs;
  inputs.resize(static_cast<std::size_t>(threads));
  for (int t = 0; t < threads; ++t) inputs[static_cast<std::size_t>(t)] = view[t].send;

  if (team.processes() == 1) {
    outputs.resize(static_cast<std::size_t>(threads));
    for (int t = 0; t < threads; ++t) outputs[static_cast<std::size_t>(t)] = view[t].recv;
    reduce_slice_to_all(inputs, outputs, element, mine, call.combine, call.op_object);
    const std::uint64_t done = team.next_step(me);
    team.arrive(me, done);
    team.wait_all_arrived(done);
    return;
  }

  team.grow_staging(me, call.count * element);
  void* staging = team.staging();
  reduce_slice_to_all(inputs, std::span<void* const>(&staging, 1), element, mine, call.combine,
                      call.op_object);
  const std::uint64_t reduced = team.next_step(me);
  team.arrive(me, reduced);
  if (me == 0) {
    team.wait_all_arrived(reduced);
    try {
      team.comm().allreduce_in_place(staging, call);
    } catch (...) {
      team.abort("the leader's MPI_Allreduce failed");
      throw;
    }
    team.release(reduced);
  } else {
    team.wait_released(reduced);
  }
  copy_slice_to_all(staging, std::span<void* const>(&view[me].recv, 1), element,
                    Slice{0, call.count});
}

}  // namespace tlc::detail
