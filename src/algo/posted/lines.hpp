// Nonblocking calls of one-process teams with a built-in op, on the team's ring of slots
// (team/line_ring.hpp; algo/posted/lines.cpp opens with the steps and their cost).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include <tlc/detail/call.hpp>

#include "team/line_ring.hpp"

namespace tlc::detail {
class TeamImpl;
}

namespace tlc::detail::posted {

// How thread me's nonblocking call of a one-process team runs on the team's ring: on lines
// (barrier, and the non-v collectives with a built-in op, for reductions, where the blocking
// call's plan is flat and the contribution per thread fits a slot), on slices (the others), or
// nothing: on the general schedule (v-variants, user ops, nothing to carry). Threads that pass
// the same call decide alike.
std::optional<RingSchedule> ring_schedule(TeamImpl& team, int me, const Call& c, std::size_t count);

// Thread me begins its next call on the ring: its fingerprint and arguments (d: its count and
// contribution, and why its own arguments are wrong, if they are: the others' calls then fail
// with that error) into its slot, on lines with a copy of its contribution, stamped; first,
// when the slot's previous call is not settled for every thread, settles it for them. On the
// general schedule (algo/posted/calls.hpp) the call only stamps its place, so that threads that
// took different schedules for one call find out. Returns the call's number. Throws
// TeamAborted and Error(timeout) as any wait.
std::uint64_t start_on_ring(TeamImpl& team, int me, const Call& c, const CallDescriptor& d,
                            RingSchedule schedule);
// Thread me's call n: true once its output is written (then throws the call's error, if it
// failed); wait returns only then.
bool test_on_ring(TeamImpl& team, int me, std::uint64_t n);
void wait_on_ring(TeamImpl& team, int me, std::uint64_t n);
// Thread me gives up on call n (its wait ended with an error): once this returns, nobody
// reads its buffers or writes its output for that call.
void abandon_on_ring(TeamImpl& team, int me, std::uint64_t n) noexcept;

}  // namespace tlc::detail::posted
