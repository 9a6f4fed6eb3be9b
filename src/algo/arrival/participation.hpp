// The step every call led by arrival starts with, shared by the arrival-led family
// (src/algo/arrival/*.cpp, one file per collective family; the dispatcher in dispatch.cpp):
// a thread publishes its arguments, takes a ticket that says where it arrived (first, last)
// and leaves the call however the call ends; plus how a failed call ends for everybody.
//
// Collectives led by arrival ("dynamic"; Parsons [Parsons] ch. 3.4-3.6, docs/imbalance.md): the
// threads of a process do not wait for each other; whoever arrives at the right moment does the
// work, so a late thread delays only what depends on its data. One process per node makes the
// MPI destination the process, not a thread, so none of the thesis' control messages are needed:
// the elected thread calls MPI on the process communicator.
//
// Cost next to the static algorithms: one extra copy of n bytes per thread that leaves early or
// of the root's data, and the combine after the last arrival is done by one or two threads
// instead of T; in exchange a thread waits only for the data it needs. The plan takes them by
// default across processes where they were measured no slower with balanced arrivals
// (Planner::led_by_arrival), and wherever they are asked for (forced, or TLC_LEADERS=dynamic).
//
// Errors: a thread checks its own arguments before anything moves; whether the threads agree
// can only be seen by a thread that sees them all (reduce: the last arriver, before combining;
// bcast: each thread against the data's sender, before copying out). Threads that returned
// early cannot be told, so a failed call aborts the team: every thread still in the call, and
// every later call, throws.
#pragma once

#include <exception>
#include <string>
#include <utility>

#include "algo/across.hpp"
#include "algo/algorithms.hpp"

namespace tlc::detail {

// Aborts the team with e's message (so that no thread of this call is left waiting) and
// rethrows e.
[[noreturn]] inline void fail_call(TeamImpl& team, std::exception_ptr e) {
  // Every thread of every process throws it before anything moved (TLC_CHECK): no abort.
  if (ProcessFailures::failure_agreed()) std::rethrow_exception(e);
  try {
    std::rethrow_exception(e);
  } catch (const std::exception& x) {
    if (!team.aborted()) team.abort(x.what());
  } catch (...) {
    if (!team.aborted()) team.abort("a collective led by arrival failed");
  }
  std::rethrow_exception(e);
}

template <class Step>
void or_fail(TeamImpl& team, Step&& step) {
  try {
    step();
  } catch (...) {
    fail_call(team, std::current_exception());
  }
}

// One thread's part in a call led by arrival. On construction it publishes its arguments and
// takes a ticket (its arrival order: first, last), and fails the call if its own arguments are
// wrong; on destruction it leaves the call, however the call ends: a root waiting for the others
// to be done with its buffer counts departures, and a thread that throws must count too.
class Participation {
 public:
  Participation(TeamImpl& team, int me, CallDescriptor&& d) : team_(team) {
    const std::string invalid = d.invalid;
    const Collective collective = d.call.collective;
    const bool compared = team.checks_call(d.count * d.call.type.size);
    const int root_rank = d.call.root;
    parity = team.rendezvous().begin_arrival_call(me, std::move(d));
    const auto T = static_cast<std::uint64_t>(team.threads());
    m = team.rendezvous().arrival_calls(me);
    const std::uint64_t position =
        team.arrival().tickets.fetch_add(1, std::memory_order_acq_rel) - (m - 1) * T;
    ticket = static_cast<int>(position);
    first = position == 0;
    last = position == T - 1;
    if (!invalid.empty()) {
      team.rendezvous()
          .leave_arrival_call();  // the destructor does not run when the constructor throws
      fail_call(team, std::make_exception_ptr(Error(Errc::invalid_argument,
                                                    std::string("tlc ") + to_string(collective) +
                                                        ": " + team.who(me) + ": " + invalid)));
    }
    if (compared) {
      try {
        check_processes(collective, me);
      } catch (...) {
        team.rendezvous().leave_arrival_call();
        throw;
      }
    }
    root_process = team.process_of(root_rank);
    root = root_process == team.process() ? root_rank - team.first_rank() : -1;
  }
  ~Participation() { team_.rendezvous().leave_arrival_call(); }
  Participation(const Participation&) = delete;
  Participation& operator=(const Participation&) = delete;

  int parity = 0;
  std::uint64_t m = 0;  // the number of this call among the team's calls led by arrival
  bool first = false, last = false;
  int ticket = 0;  // this thread's place in the arrival order (0: first)
  int root_process = 0;
  int root = -1;  // the root's local index, -1 when it is in another process

 private:
  TeamImpl& team_;

  // TLC_CHECK: the process's first thread to arrive compares the call with the other processes'
  // (with its own arguments: threads here that disagree are found later, as without the check)
  // and every thread here waits for the verdict before anything moves, so that on a
  // disagreement every thread of every process throws the same error and the team stays usable.
  void check_processes(Collective collective, int me) {
    ArrivalState& a = team_.arrival();
    if (first) {
      or_fail(team_, [&] {
        a.verdict = compare_processes(team_, Rendezvous::CallView{&team_.rendezvous(), parity}[me]);
      });
      a.checked.store(m, std::memory_order_release);
      team_.waiter().notify();
    } else {
      team_.waiter().wait(
          [&] { return a.checked.load(std::memory_order_acquire) >= m || team_.aborted(); },
          [] { return std::string("the first thread of the call to compare it (TLC_CHECK)"); });
      team_.waiter().throw_if_aborted();
    }
    if (a.verdict.empty()) return;
    // The message before leaving: the next call's first thread rewrites the verdict once every
    // thread has left this one.
    Error error(Errc::mismatch, std::string("tlc ") + to_string(collective) + ": " + a.verdict);
    ProcessFailures::failure_agreed_across_processes();
    throw error;
  }
};

template <class Ready>
void wait_for(TeamImpl& team, Ready&& ready, const char* what,
              Waiter::OnAbort on_abort = Waiter::OnAbort::throw_aborted) {
  team.waiter().wait(
      ready, [&] { return std::string(what); }, on_abort);
  if (on_abort == Waiter::OnAbort::throw_aborted) team.waiter().throw_if_aborted();
}

// The entry of each family (src/algo/arrival/<family>.cpp).
void reduce_by_arrival(TeamImpl& team, int me, CallDescriptor&& d);    // reduce.cpp
void spread_by_arrival(TeamImpl& team, int me, CallDescriptor&& d);    // spread.cpp
void alltoall_by_arrival(TeamImpl& team, int me, CallDescriptor&& d);  // alltoall.cpp
void reduce_by_blocks(TeamImpl& team, int me, CallDescriptor&& d);     // by_blocks.cpp
void scan_by_arrival(TeamImpl& team, int me, CallDescriptor&& d);      // scan.cpp

}  // namespace tlc::detail
