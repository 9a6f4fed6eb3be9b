// The schedule of a posted (nonblocking or persistent) collective (team/posted_calls.hpp;
// docs/design.md section 14), one per collective, in three steps:
//   pack:   by the last thread of the process to start the call: checks that the threads agree,
//           then combines (reductions) or gathers (movers) every thread's contribution into the
//           call's staging memory, in the layout MPI's collective over processes takes. After
//           it no input is read again.
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

void pack(PostedCall& call);
void post(PostedCall& call, ProcessComm& comm);
void unpack(PostedCall& call, int me);

// The families (algo/posted/reductions.cpp, algo/posted/movement.cpp).
void pack_reduction(PostedCall& call);
void post_reduction(PostedCall& call, ProcessComm& comm);
void unpack_reduction(PostedCall& call, int me);
void pack_movement(PostedCall& call);
void post_movement(PostedCall& call, ProcessComm& comm);
void unpack_movement(PostedCall& call, int me);

}  // namespace tlc::detail::posted
