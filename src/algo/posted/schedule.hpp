// The schedule of a posted (nonblocking or persistent) collective (algo/posted/calls.hpp;
// docs/design.md section 14), one per collective, in three steps:
//   pack:   started by the last thread of the process to start the call: checks that the
//           threads agree (prepare), then combines (reductions) or gathers (movers) every
//           thread's contribution into the call's staging memory, in the layout MPI's collective
//           over processes takes. The reductions' pack is cut into element slices (tasks) that
//           threads waiting for the call take too. After it no input is read again. With one
//           process, reduce, allreduce, scan and exscan write the outputs themselves (as the
//           blocking sliced algorithm does), and so do the movers (a task per output), and
//           unpack has nothing left to do.
//   post:   the step between processes, one MPI nonblocking collective on the staging memory
//           (none with one process); where the plan of the blocking call drives lanes (full_lane,
//           the multi-sender algorithms) or pipelines, one per lane and chunk, on the team's
//           posted lane communicators (step_parts).
//   unpack: by each thread when it finds the call complete: its own output out of staging.
// Cost, T threads here, n bytes per thread: pack reads T n bytes (one thread), the MPI step is
// MPI's nonblocking collective over processes (in L lanes and K chunks, L K of them on n / (L K)
// bytes each, which the MPI library progresses at once), unpack writes each output once (every
// thread its own, in parallel). The blocking calls' algorithms split the local work among all
// threads instead; this schedule needs no thread to wait for another.
#pragma once

#include <span>

#include "algo/posted/calls.hpp"

namespace tlc::detail {
class ProcessComm;
}

namespace tlc::detail::posted {

// Pack tasks that cut `bytes` into slices: at least 16 KiB each (smaller ones cost more to hand
// out than they save), at most one per thread, at least one.
int slice_tasks(std::size_t bytes, int threads);

// The serial part of pack; returns how many pack tasks remain (0: packed).
int prepare(PostedCall& call);
// Throws Error(mismatch) unless every thread's entry is the same call as thread 0's.
void check_agreement(const PostedCall& call);

// Persistent calls of one-process teams on lines (algo/posted/lines.cpp): the payload bytes
// a thread's line holds for thread me's entry's call, 0 where the lines do not serve it (as the
// blocking call's plan decides; the same on every thread that passes the same call); and thread
// me's output of `round`, once every thread has started it.
std::size_t line_payload_bytes(TeamImpl& team, int me, const PostedEntry& entry);
// What a thread contributes to a round of a one-process persistent call on lines or slices
// (algo/posted/slices.hpp), 0 for the calls that take the general schedule.
std::size_t round_contribution_bytes(const PostedEntry& entry, int threads);
void finish_from_lines(PostedCall& call, std::uint64_t round, int me);
void pack_task(PostedCall& call, int task);
// The step between processes, on the team's posted communicator(s).
void post(PostedCall& call);
// One test of every MPI operation of the step still in flight: true once all completed (then
// the first error of any, rethrown).
bool test_step(PostedCall& call);
void unpack(PostedCall& call, int me);

// The parts of the step between processes, as the plan of the blocking call of the same
// arguments cuts its network step: its lanes where it drives lanes, its chunks where it
// pipelines (calls with a count per rank), else one; barrier and reduce_scatter_block (whose MPI
// call takes each process's block whole) always one. Decided from what every process knows
// alike (the plan prices the team's shared shape), so the parts' operations pair up. Sets
// call.lanes and call.chunks.
void step_parts(PostedCall& call);
// Part i's share of a block of `bytes` bytes of e-byte elements (chunk k of the block cut in
// call.chunks, then lane l's slice of that chunk): its offset and length.
struct PartBytes {
  std::size_t offset = 0, length = 0;
};
PartBytes part_bytes(const PostedCall& call, int i, std::size_t bytes, std::size_t e) noexcept;
// Part i's counts and displacements of a layout of blocks (bytes): the layout itself with one
// part, else part i's share of each block, written into its StepPart (the receive side's arrays
// when `receive`).
struct PartLayout {
  std::span<const MPI_Count> counts;
  std::span<const MPI_Aint> displs;
};
PartLayout part_layout(PostedCall& call, int i, std::span<const MPI_Count> counts,
                       std::span<const MPI_Aint> displs, bool receive);

// The families (algo/posted/reductions.cpp, algo/posted/movement.cpp); their post_* post part i
// of the step on op through comm.
int prepare_reduction(PostedCall& call);
void pack_reduction_task(PostedCall& call, int task);
void post_reduction(PostedCall& call, PostedOp& op, ProcessComm& comm, int i);
void unpack_reduction(PostedCall& call, int me);
void pack_movement(PostedCall& call);
// With one process (alltoall: not in place, whose outputs are other threads' inputs) the movers
// copy straight from the inputs into the outputs in their pack, one task per output thread
// (gather: per input block), as the blocking single-process copies do; unpack has nothing left.
bool movement_direct(const PostedCall& call);
// Their tasks: one per output thread (bcast: slices of the root's buffer, at most one per thread).
int movement_direct_tasks(const PostedCall& call);
void pack_movement_direct_task(PostedCall& call, int task);
void post_movement(PostedCall& call, PostedOp& op, ProcessComm& comm, int i);
void unpack_movement(PostedCall& call, int me);

}  // namespace tlc::detail::posted
