// Persistent calls of one-process teams on the threads' lines (team/posted_calls.hpp,
// RoundLines; docs/design.md section 14): bcast, reduce, allreduce, scan, exscan, allgather,
// gather, scatter, alltoall and reduce_scatter_block whose contribution fits a line.
//
// Phases (T threads of one process, c bytes contributed per thread, c <= round_line_max_bytes):
//   start: each thread copies its contribution into its own line's payload of the round's parity
//          and stamps the round there with one release store; it returns at once.
//   wait:  each thread waits until every line carries the round, then computes its own output
//          from the lines: a fold in rank order with the call's combine kernel (the arithmetic
//          and order of the blocking forms, so bitwise their results), or copies of the blocks it
//          receives.
//   No closing step: nobody reads a caller's buffer after its start, and a thread rewrites a
//   payload at round r + 2 only, whose start follows its own completion of round r + 1, which
//   needed every thread's start of r + 1, which follows each one's completion of round r.
// Cost: T stamps and T c bytes read per thread (allreduce: T - 1 combines of c bytes), one copy
// of c bytes at start; no lock, no atomic read-modify-write, no thread waits for another's work
// (the general schedule's last arriver reduces for everyone, then the others read its result).
#include <cstring>

#include "algo/posted/schedule.hpp"
#include "team/team_impl.hpp"

namespace tlc::detail::posted {

namespace {

// Beyond this each thread's copy at start and its reads of every line cost more than the slices'
// claims and stamps (algo/posted/slices.hpp; docs/benchmarking.md, "Overlap").
constexpr std::size_t round_line_max_bytes = 512;

}  // namespace

std::size_t round_contribution_bytes(const PostedEntry& entry, int threads) {
  const Call& c = entry.call;
  const std::size_t block = entry.count * c.type.size;
  const auto T = static_cast<std::size_t>(threads);
  std::size_t bytes = 0;
  switch (c.collective) {
    case Collective::bcast:
    case Collective::reduce:
    case Collective::allreduce:
    case Collective::scan:
    case Collective::exscan:
    case Collective::allgather:
    case Collective::gather:
      bytes = block;
      break;
    case Collective::scatter:
    case Collective::alltoall:
    case Collective::reduce_scatter_block:
      bytes = T * block;
      break;
    default:  // barrier (nothing to carry: the general schedule is as cheap), the v-variants
      return 0;
  }
  return bytes;
}

std::size_t line_payload_bytes(const PostedEntry& entry, int threads) {
  const std::size_t bytes = round_contribution_bytes(entry, threads);
  return bytes <= round_line_max_bytes ? bytes : 0;
}

void finish_from_lines(PostedCall& call, std::uint64_t round, int me) {
  const RoundLines& lines = *call.lines;
  const PostedEntry& mine = call.entries[static_cast<std::size_t>(me)];
  const Call& c = mine.call;
  const int T = call.team.threads();
  const std::size_t e = c.type.size, n = mine.count, block = n * e;
  auto* recv = static_cast<std::byte*>(c.recv);
  const std::size_t stride = lines.stride();
  const std::byte* first = lines.payload(0, round);
  auto line = [&](int t) { return first + static_cast<std::size_t>(t) * stride; };
  // out = lines [0, last) folded in rank order, each read from `offset`.
  auto fold = [&](int last, std::size_t offset, std::byte* out) {
    if (last <= 0 || block == 0) return;
    if (lines.fold) return lines.fold(line(0) + offset, stride, last, n, out);
    std::memcpy(out, line(0) + offset, block);
    for (int t = 1; t < last; ++t) c.combine(c.op_object, out, line(t) + offset, n, false);
  };
  const bool root = c.root == me;  // one process: ranks are the local threads
  switch (c.collective) {
    case Collective::bcast:
      if (!root) std::memcpy(recv, line(c.root), block);
      return;
    case Collective::reduce:
      if (root) fold(T, 0, recv);
      return;
    case Collective::allreduce:
      fold(T, 0, recv);
      return;
    case Collective::scan:
      fold(me + 1, 0, recv);
      return;
    case Collective::exscan:
      fold(me, 0, recv);  // rank 0's output stays untouched
      return;
    case Collective::reduce_scatter_block:
      fold(T, static_cast<std::size_t>(me) * block, recv);
      return;
    case Collective::gather:
      if (!root) return;
      [[fallthrough]];
    case Collective::allgather:
      for (int r = 0; r < T; ++r)
        std::memcpy(recv + static_cast<std::size_t>(r) * block, line(r), block);
      return;
    case Collective::scatter:
      if (recv) std::memcpy(recv, line(c.root) + static_cast<std::size_t>(me) * block, block);
      return;
    case Collective::alltoall:
      for (int r = 0; r < T; ++r)
        std::memcpy(recv + static_cast<std::size_t>(r) * block,
                    line(r) + static_cast<std::size_t>(me) * block, block);
      return;
    default:
      return;
  }
}

}  // namespace tlc::detail::posted
