// The schedule of a posted (nonblocking or persistent) collective (team/posted_calls.hpp;
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
//           (none with one process).
//   unpack: by each thread when it finds the call complete: its own output out of staging.
// Cost, T threads here, n bytes per thread: pack reads T n bytes (one thread), the MPI step is
// MPI's nonblocking collective over processes, unpack writes each output once (every thread
// its own, in parallel). The blocking calls' algorithms split the local work among all threads
// instead; this schedule needs no thread to wait for another.
#pragma once

#include "team/posted_calls.hpp"

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
// a thread's line holds for this entry's call, 0 where the lines do not serve it (the same
// on every thread that passes the same call); and thread me's output of `round`, once every
// thread has started it.
std::size_t line_payload_bytes(const PostedEntry& entry, int threads);
// What a thread contributes to a round of a one-process persistent call on lines or slices
// (algo/posted/slices.hpp), 0 for the calls that take the general schedule.
std::size_t round_contribution_bytes(const PostedEntry& entry, int threads);
void finish_from_lines(PostedCall& call, std::uint64_t round, int me);
void pack_task(PostedCall& call, int task);
void post(PostedCall& call, ProcessComm& comm);
void unpack(PostedCall& call, int me);

// The families (algo/posted/reductions.cpp, algo/posted/movement.cpp).
int prepare_reduction(PostedCall& call);
void pack_reduction_task(PostedCall& call, int task);
void post_reduction(PostedCall& call, ProcessComm& comm);
void unpack_reduction(PostedCall& call, int me);
void pack_movement(PostedCall& call);
// With one process (alltoall: not in place, whose outputs are other threads' inputs) the movers
// copy straight from the inputs into the outputs in their pack, one task per output thread
// (gather: per input block), as the blocking single-process copies do; unpack has nothing left.
bool movement_direct(const PostedCall& call);
// Their tasks: one per output thread (bcast: slices of the root's buffer, at most one per thread).
int movement_direct_tasks(const PostedCall& call);
void pack_movement_direct_task(PostedCall& call, int task);
void post_movement(PostedCall& call, ProcessComm& comm);
void unpack_movement(PostedCall& call, int me);

}  // namespace tlc::detail::posted
