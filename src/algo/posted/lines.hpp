// Nonblocking calls of one-process teams whose contributions are small, on the threads' lines
// (team/line_ring.hpp; algo/posted/lines.cpp opens with the steps and their cost).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include <tlc/detail/call.hpp>

namespace tlc::detail {
class TeamImpl;
}

namespace tlc::detail::posted {

// Whether a nonblocking call of a one-process team of `threads` runs on lines: barrier, and the
// non-v collectives with a built-in op (reductions) whose contribution per thread fits a slot.
// Threads that pass the same call decide alike.
bool runs_on_lines(const Call& c, std::size_t count, int threads);

// Thread me begins its next call on the lines: its fingerprint, arguments and a copy of its
// contribution into its slot, stamped; first, when the slot's previous call is not complete
// for every thread, completes it for them. `general`: the call takes the general schedule
// (algo/posted/calls.hpp) and only stamps its place, so that threads that took different
// schedules for one call find out. invalid: this thread's own arguments are wrong (the others'
// calls then fail with that error). Returns the call's number. Throws TeamAborted and
// Error(timeout) as any wait.
std::uint64_t start_on_lines(TeamImpl& team, int me, const Call& c, std::size_t count,
                             const void* contribution, std::size_t contribution_bytes,
                             const std::string& invalid, bool general);
// Thread me's call n: true once its output is written (then throws the call's error, if it
// failed); wait returns only then.
bool test_on_lines(TeamImpl& team, int me, std::uint64_t n);
void wait_on_lines(TeamImpl& team, int me, std::uint64_t n);
// Thread me gives up on call n (its wait ended with an error): once this returns, nobody
// writes its output for that call.
void abandon_on_lines(TeamImpl& team, int me, std::uint64_t n) noexcept;

}  // namespace tlc::detail::posted
