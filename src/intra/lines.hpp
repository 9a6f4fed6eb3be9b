// A thread's output of a small collective from the threads' lines (Jain et al. [Jain] sec.
// III-D, data inlined with the flag): every thread of one process has copied its contribution
// into a line of its own and stamped it; each thread then computes its own output from all the
// lines, reading nobody's buffers. One body for every form that carries contributions so: the
// lines form of the blocking calls (algo/flat_inline.cpp), nonblocking calls on the team's ring
// and persistent rounds on lines (algo/posted/lines.cpp).
#pragma once

#include <cstddef>

#include <tlc/detail/call.hpp>

#include "intra/sliced_reduce.hpp"

namespace tlc::detail {

// Bytes a thread contributes to such a call of T threads with `count` elements per rank block
// (its line's payload): the block for bcast (the root's), reduce, allreduce, scan, exscan,
// allgather and gather; T blocks for scatter (the root's), alltoall and reduce_scatter_block; 0
// for barrier and the v-variants, which carry nothing this way.
std::size_t line_contribution_bytes(const Call& c, std::size_t count, int threads) noexcept;

// Thread me's output of call c (count elements per rank block, T threads, ranks are the local
// threads): `first` is thread 0's payload, `stride` the bytes from one thread's payload to the
// next's. Reductions fold in rank order with fold_lines where given (whole lines in one call),
// else with c.combine line after line: the arithmetic and order of the other forms, so bitwise
// their results. The movers copy the blocks me receives. A thread writes only its own output.
void output_from_lines(const Call& c, std::size_t count, int threads, int me,
                       const std::byte* first, std::size_t stride, LineFoldFn fold_lines);

}  // namespace tlc::detail
