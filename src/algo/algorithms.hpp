// The algorithms, one file per family. Each starts with begin_validated (publish, rendezvous,
// validate), so threads that disagree fail together before any data moves. The descriptor
// carries the checked call; the planner (src/select/) has already decided what runs.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "intra/copy_plan.hpp"
#include "select/call_signature.hpp"
#include "team/team_impl.hpp"

namespace tlc::detail {

void barrier_across(TeamImpl& team, int me, CallDescriptor&& d, const Plan& plan);
void run_flat(TeamImpl& team, int me, CallDescriptor&& d);  // algo/flat.cpp
// The inline form of flat for the calls Planner::inline_form() gives it: count elements of at
// most inline_capacity bytes, folded with `fold` for reductions (algo/flat_inline.cpp).
void run_flat_inline(TeamImpl& team, int me, const Call& call, std::size_t count, LineFoldFn fold);
// Its lines form for the calls Planner::serves_lines() gives it: each thread's contribution in
// its slot's carry buffer, every non-v collective (algo/flat_inline.cpp). d: checked, with the
// built-in kernel of its op.
void run_flat_lines(TeamImpl& team, int me, const CallDescriptor& d);
void run_sliced(TeamImpl& team, int me, CallDescriptor&& d);     // algo/sliced.cpp
void run_two_level(TeamImpl& team, int me, CallDescriptor&& d);  // algo/two_level.cpp
// Several processes: the collective's composition (algo/across.hpp), staged, direct or
// pipelined as the plan says, with the plan's network step (hierarchical, full_lane or a
// multi-sender algorithm).
void run_across_processes(TeamImpl& team, int me, CallDescriptor&& d, const Plan& plan);
// Calls led by arrival (Algorithm::dynamic: bcast, scatter, reduce, allreduce,
// reduce_scatter_block, scan, exscan, alltoall), one process or several (algo/arrival/).
void run_led_by_arrival(TeamImpl& team, int me, CallDescriptor&& d);
// Points d's contribution at a copy private to the calling thread (algo/entry.cpp), for in-place
// calls whose output is written while other threads still read the input. The copy lives until
// the thread's next call that needs one.
void publish_private_copy(CallDescriptor& d);

// Whether two byte ranges share a byte (empty ranges share none).
inline bool overlap(const void* a, std::size_t a_bytes, const void* b, std::size_t b_bytes) {
  if (a_bytes == 0 || b_bytes == 0) return false;
  auto pa = reinterpret_cast<std::uintptr_t>(a), pb = reinterpret_cast<std::uintptr_t>(b);
  return pa < pb + b_bytes && pb < pa + a_bytes;
}

// What is wrong with one thread's own arguments, "" when nothing (algo/validation.cpp).
std::string check_arguments(const Call& call, int rank, int size);
// The same for a call about to run: also fills d.count, d.contribution and d.contribution_bytes.
std::string check_own_arguments(const Call& call, int rank, int size, CallDescriptor& d);
// Rendezvous::begin_call, then the checks of all threads' descriptors that fingerprints cannot
// make (user op objects, v-variant counts): the same Error on every thread, before any data
// moves. Every algorithm begins with this.
Rendezvous::CallView begin_validated(TeamImpl& team, int me, CallDescriptor&& d,
                                     bool carry = false);
// TLC_CHECK: this process's call (d) against every other process's, by one MPI_Allgather of a
// small signature on the process communicator; "" when all agree, else which process differs
// from process 0 in what.
// With the descriptors of all threads here (view): v-variants' counts are compared too.
std::string compare_processes(TeamImpl& team, const Rendezvous::CallView& view);
// With one thread's (a call led by arrival, compared by its first thread; never a v-variant).
std::string compare_processes(TeamImpl& team, const CallDescriptor& d);
// What the descriptors of all threads of the process show that their fingerprints cannot (user
// op functions, v-variant counts against the sizes the ranks pass); "" when they agree. For a
// thread that sees every descriptor of the call.
std::string disagreement(const Rendezvous::CallView& view);

// --- Helpers shared by the single-process algorithms (algo/local_plan.cpp) ---
using CallView = Rendezvous::CallView;

inline const std::byte* contribution_of(const CallView& view, int t) {
  return static_cast<const std::byte*>(view[t].contribution);
}
inline std::byte* recv_of(const CallView& view, int t) {
  return static_cast<std::byte*>(view[t].call.recv);
}
bool all_carried(const CallView& view, int threads);

// The copies of a data-moving collective (bcast, gather(v), scatter(v), allgather(v),
// alltoall(v)) inside a single-process team; with target >= 0 only those into that thread's
// output.
void build_local_plan(CopyPlan& plan, const CallView& view, int threads, int target);

// Share `share` of `threads` of the sliced algorithm's work on the call in `view` (its phase 2,
// algo/sliced.cpp): the shares together compute every output once. A data-moving collective
// runs its copy plan: `plan` when given (built once for view's buffers), else one built here.
void run_sliced_share(const CallView& view, int share, int threads, const CopyPlan* plan);

// Per-thread scratch vectors of pointers, reused across calls.
std::span<const void*> input_pointers(std::size_t n);
std::span<void*> output_pointers(std::size_t n);

}  // namespace tlc::detail
