// A thread's output of a small collective from the threads' lines (intra/lines.hpp).
#include "intra/lines.hpp"

#include <cstring>

namespace tlc::detail {

std::size_t line_contribution_bytes(const Call& c, std::size_t count, int threads) noexcept {
  const std::size_t block = count * c.type.size;
  switch (c.collective) {
    case Collective::bcast:
    case Collective::reduce:
    case Collective::allreduce:
    case Collective::scan:
    case Collective::exscan:
    case Collective::allgather:
    case Collective::gather:
      return block;
    case Collective::scatter:
    case Collective::alltoall:
    case Collective::reduce_scatter_block:
      return static_cast<std::size_t>(threads) * block;
    default:  // barrier (nothing to carry), the v-variants
      return 0;
  }
}

void output_from_lines(const Call& c, std::size_t count, int threads, int me,
                       const std::byte* first, std::size_t stride, LineFoldFn fold_lines) {
  const std::size_t block = count * c.type.size;
  auto* recv = static_cast<std::byte*>(c.recv);
  auto line = [&](int t) { return first + static_cast<std::size_t>(t) * stride; };
  // out = lines [0, last) folded in rank order, each read from `offset`.
  auto fold = [&](int last, std::size_t offset, std::byte* out) {
    if (last <= 0 || block == 0) return;
    if (fold_lines) return fold_lines(line(0) + offset, stride, last, count, out);
    std::memcpy(out, line(0) + offset, block);
    for (int t = 1; t < last; ++t) c.combine(c.op_object, out, line(t) + offset, count, false);
  };
  const bool root = c.root == me;
  switch (c.collective) {
    case Collective::bcast:
      if (!root) std::memcpy(recv, line(c.root), block);
      return;
    case Collective::reduce:
      if (root) fold(threads, 0, recv);
      return;
    case Collective::allreduce:
      fold(threads, 0, recv);
      return;
    case Collective::scan:
      fold(me + 1, 0, recv);
      return;
    case Collective::exscan:
      fold(me, 0, recv);  // rank 0's output stays untouched
      return;
    case Collective::reduce_scatter_block:
      fold(threads, static_cast<std::size_t>(me) * block, recv);
      return;
    case Collective::gather:
      if (!root) return;
      [[fallthrough]];
    case Collective::allgather:
      for (int r = 0; r < threads; ++r)
        std::memcpy(recv + static_cast<std::size_t>(r) * block, line(r), block);
      return;
    case Collective::scatter:
      if (recv) std::memcpy(recv, line(c.root) + static_cast<std::size_t>(me) * block, block);
      return;
    case Collective::alltoall:
      for (int r = 0; r < threads; ++r)
        std::memcpy(recv + static_cast<std::size_t>(r) * block,
                    line(r) + static_cast<std::size_t>(me) * block, block);
      return;
    default:  // barrier: nothing to compute
      return;
  }
}

}  // namespace tlc::detail
