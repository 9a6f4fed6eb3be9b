// Flat, inline form: barrier, bcast, reduce, allreduce, scan and exscan of single-process teams
// whose contribution fits in the rest of a thread's begin line (inline_capacity = 32 bytes), the
// extreme case of Jain et al. (shared/seeds/002_56062f46934e0b06.txt, sec. III-A: "data carried
// in the flag's cache line"; sec. II-A/B: one writer per line, monotonic counters).
//
// Phases (T threads of one process, n <= 32 bytes each):
//   1. Each thread writes its argument fingerprint and its n bytes into its own begin line and
//      announces the call there with one release store: one cache line leaves each core.
//   2. It waits until every line announces the call, compares the fingerprints (bad or
//      disagreeing arguments throw here, on every thread, before any output is written) and
//      computes its own output from the lines: a fold in rank order with the same kernel and
//      order as flat (bitwise the same results), or a copy of the root's line (bcast).
//   No closing rendezvous: readers never touch the callers' buffers, and a line is rewritten only
//   at its owner's call k+2, which needs every reader's call k+1 announcement first.
// Cost: one rendezvous of T cache lines (alpha_sync) + T*n bytes read from other cores; no
// descriptor, no selector, no allocation. The general path costs several times that for the
// same bytes (it publishes a ~200-byte descriptor per thread and checks them all), which is the
// whole of an 8-byte allreduce's time.
//
// Every thread takes this form or none of them does: the decision depends only on what the
// fingerprint holds (collective, element type, op, count) and on the team. A thread whose
// fingerprint differs (wrong count, say) may take the general path; both paths compare the same
// fingerprints at the same begin step and throw the same error.
#include <cstring>
#include <string>

#include "algo/algorithms.hpp"
#include "intra/sliced_reduce.hpp"

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
void fold(const TeamImpl& team, int parity, int last, CombineFn combine, const Call& c,
          std::size_t count, void* out) {
  const std::size_t bytes = count * c.type.size;
  if (last <= 0 || bytes == 0) return;
  alignas(16) std::byte acc[inline_capacity];
  copy_small(acc, team.inline_payload(0, parity), bytes);
  for (int t = 1; t < last; ++t)
    combine(c.op_object, acc, team.inline_payload(t, parity), count, false);
  copy_small(out, acc, bytes);
}

}  // namespace

bool run_flat_inline(TeamImpl& team, int me, const Call& c) {
  std::size_t count = 0;
  switch (c.collective) {
    case Collective::barrier:
      break;
    case Collective::bcast:
      count = c.recv_count;
      break;
    case Collective::reduce:
    case Collective::allreduce:
    case Collective::scan:
    case Collective::exscan:
      count = c.send_count;
      break;
    default:
      return false;
  }
  if (count > inline_capacity || count * c.type.size > inline_capacity) return false;
  const bool reduction = c.collective != Collective::barrier && c.collective != Collective::bcast;
  const CombineFn combine = reduction ? builtin_combine(c.op, c.type) : nullptr;
  if (reduction && !combine) return false;

  const int rank = team.global_rank(me);
  std::string why;
  if (!plainly_valid(c, rank, team.size())) why = check_arguments(c, rank, team.size());
  const CallFingerprint f = fingerprint_of(c, count, !why.empty());
  const bool root = c.root == rank;
  const std::size_t bytes = count * c.type.size;
  // bcast: only the root's line carries data (its buffer); reductions carry the send buffer
  // (the receive buffer in place, where the two are the same).
  const void* data = c.collective == Collective::bcast ? c.recv : c.send;
  const bool carries = !f.invalid && (c.collective != Collective::bcast || root);
  const int parity = team.begin_inline(me, f, data, carries ? bytes : 0, &why);

  switch (c.collective) {
    case Collective::bcast:
      if (!root) copy_small(c.recv, team.inline_payload(c.root - team.first_rank(), parity), bytes);
      break;
    case Collective::reduce:
      if (root) fold(team, parity, team.threads(), combine, c, count, c.recv);
      break;
    case Collective::allreduce:
      fold(team, parity, team.threads(), combine, c, count, c.recv);
      break;
    case Collective::scan:
      fold(team, parity, me + 1, combine, c, count, c.recv);
      break;
    case Collective::exscan:
      fold(team, parity, me, combine, c, count, c.recv);
      break;
    default:
      break;
  }
  return true;
}

}  // namespace tlc::detail
