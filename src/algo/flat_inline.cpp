// Flat, inline form: barrier, bcast, reduce, allreduce, scan and exscan of single-process teams
// whose contribution fits in the rest of a thread's begin line (inline_capacity = 32 bytes), the
// extreme case of Jain et al.'s data inlining ([Jain] sec. III-D: small data carried in the
// flag's cache line; sec. II-A/B: one writer per line, monotonic counters; docs/references.md).
//
// Phases (T threads of one process, n <= 32 bytes each):
//   1. Each thread writes its argument fingerprint and its n bytes into its own begin line and
//      announces the call there with one release store: one cache line leaves each core.
//   2. It waits until every line announces the call, compares the fingerprints (bad or
//      disagreeing arguments throw here, on every thread, before any output is written) and
//      computes its own output from the lines: a fold in rank order, one call of
//      builtin_line_fold's kernel over all lines (the same arithmetic and order as flat's
//      combine kernel, so bitwise the same results), or a copy of the root's line (bcast).
//   No closing rendezvous: readers never touch the callers' buffers, and a line is rewritten only
//   at its owner's call k+2, which needs every reader's call k+1 announcement first.
// Cost: one rendezvous of T cache lines (alpha_sync) + T*n bytes read from other cores; no
// descriptor, no selector, no allocation. The general path costs several times that for the
// same bytes (it publishes a ~200-byte descriptor per thread and checks them all), which is the
// whole of an 8-byte allreduce's time. Every instruction here is on the critical path of
// back-to-back calls, so the begin step is inlined (team_impl.hpp) and nothing on the path of
// valid calls builds a string or looks a kernel up more than once per thread and (op, type).
//
// The lines form (run_flat_lines): the same steps for every non-v collective whose contribution
// per thread is at most lines_max_bytes (4 KiB) and whose op is built in, where the plan is flat:
// past 32 bytes the data goes into the slot's carry buffer of the call's parity (the begin line
// then carries the fingerprint only), and each thread computes its output with
// output_from_lines (intra/lines.hpp), the body the nonblocking and persistent calls on lines
// run too. It is flat's carried form without the descriptors: no plan lookup, no descriptor
// published or compared (the thread's own arguments are checked before the begin step, and
// what the fingerprint cannot hold, a user op's object, does not come this way).
//
// Every thread takes this form or none of them does: the planner's decision
// (Planner::serves_inline) depends only on what the fingerprint holds (collective, element type,
// op, count) and on the team. A thread whose
// fingerprint differs (wrong count, say) may take the general path; both paths compare the same
// fingerprints at the same begin step and throw the same error.
#include <cstring>
#include <string>

#include "algo/algorithms.hpp"
#include "intra/lines.hpp"
#include "intra/sliced_reduce.hpp"
#include "select/collective_traits.hpp"

namespace tlc::detail {

namespace {

// The checks of check_arguments() for these collectives, without building a message: true means
// check_arguments() finds nothing either.
bool plainly_valid(const Call& c, int rank, int size) {
  const std::size_t e = c.type.size;
  if ((c.send_count && !c.send) || (c.recv_count && !c.recv)) return false;
  if (c.collective == Collective::barrier) return true;
  if (c.collective == Collective::bcast || c.collective == Collective::reduce)
    if (c.root < 0 || c.root >= size) return false;
  if (c.collective == Collective::bcast) return true;
  if (!c.combine) return false;
  if (c.collective == Collective::reduce) {
    if (c.root != rank || c.in_place) return true;
    return c.recv_count == c.send_count &&
           !overlap(c.send, c.send_count * e, c.recv, c.recv_count * e);
  }
  return c.recv_count == c.send_count &&
         (c.in_place || !overlap(c.send, c.send_count * e, c.recv, c.recv_count * e));
}

// out = payloads of threads [0, last) folded in rank order.
void fold(const TeamImpl& team, int parity, int last, LineFoldFn fold_lines, std::size_t count,
          void* out) {
  if (last <= 0 || count == 0) return;
  fold_lines(team.rendezvous().inline_payload(0, parity), Rendezvous::inline_payload_stride, last,
             count, out);
}

}  // namespace

void run_flat_inline(TeamImpl& team, int me, const Call& c, std::size_t count,
                     LineFoldFn fold_lines) {
  // The planner has checked that the data fits the line and found the line kernel.

  const int rank = team.global_rank(me);
  const bool root = c.root == rank;
  const std::size_t bytes = count * c.type.size;
  if (!plainly_valid(c, rank, team.size())) {
    // Rare: build the message only here, off the path of valid calls.
    if (std::string why = check_arguments(c, rank, team.size()); !why.empty())
      team.rendezvous().fail_inline(me, fingerprint_of(c, count, true), why);
  }
  // bcast: only the root's line carries data (its buffer); reductions carry the send buffer
  // (the receive buffer in place, where the two are the same).
  const bool bcast = c.collective == Collective::bcast;
  const int parity = team.rendezvous().begin_inline(
      me, fingerprint_of(c, count, false), bcast ? c.recv : c.send, !bcast || root ? bytes : 0);

  switch (c.collective) {
    case Collective::bcast:
      if (!root)
        copy_small(c.recv, team.rendezvous().inline_payload(c.root - team.first_rank(), parity),
                   bytes);
      break;
    case Collective::reduce:
      if (root) fold(team, parity, team.threads(), fold_lines, count, c.recv);
      break;
    case Collective::allreduce:
      fold(team, parity, team.threads(), fold_lines, count, c.recv);
      break;
    case Collective::scan:
      fold(team, parity, me + 1, fold_lines, count, c.recv);
      break;
    case Collective::exscan:
      fold(team, parity, me, fold_lines, count, c.recv);
      break;
    default:
      break;
  }
}

static_assert(lines_max_bytes <= carry_capacity, "the lines form carries a contribution in the carry");

void run_flat_lines(TeamImpl& team, int me, const CallDescriptor& d) {
  const Call& c = d.call;
  if (!d.invalid.empty())
    team.rendezvous().fail_inline(me, fingerprint_of(c, d.count, true), d.invalid);
  const int T = team.threads();
  // Where the data travels depends on the call, not on this thread's part of it (a bcast's
  // non-roots carry nothing), so that every thread reads where the others wrote.
  const std::size_t call_bytes = line_contribution_bytes(c, d.count, T);
  const bool in_carry = call_bytes > inline_capacity;
  const int parity = team.rendezvous().begin_inline(me, fingerprint_of(c, d.count, false),
                                                    d.contribution, d.contribution_bytes, in_carry);
  const LineFoldFn fold = in_carry ? nullptr : team.planner().inline_form(c, d.count).fold;
  output_from_lines(c, d.count, T, me, team.rendezvous().line_payload(0, parity, in_carry),
                    Rendezvous::inline_payload_stride, fold);
}

}  // namespace tlc::detail
