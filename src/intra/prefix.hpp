// Prefix reductions over the threads of a process, sliced (docs/design.md section 5): thread j owns
// element slice j and walks the ranks in order, carrying an L1-resident accumulator, so every
// input is read once and every output written once, and in-place buffers are safe (each slice
// of an input is read before the same thread overwrites it).
#pragma once

#include <cstddef>
#include <span>

#include <tlc/ops.hpp>

#include "intra/sliced_reduce.hpp"

namespace tlc::detail {

// Inclusive: outputs[k][slice] = initial op inputs[0] op ... op inputs[k].
// Exclusive: outputs[k][slice] = initial op inputs[0] op ... op inputs[k-1]; without an initial
// value outputs[0] is left untouched. initial may be null (no prefix from lower processes).
void prefix_slice(std::span<const void* const> inputs, std::span<void* const> outputs,
                  std::size_t element_size, Slice slice, CombineFn combine, const void* op_object,
                  bool exclusive, const void* initial);

}  // namespace tlc::detail
