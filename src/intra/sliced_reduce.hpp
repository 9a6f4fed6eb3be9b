// Intra-process data phases on buffers that threads publish to each other (docs/design.md
// section 5).
//
// Publish-and-slice: the element range is cut into cache-line-aligned slices, one per thread.
// Thread t reduces slice t across all inputs, in rank order, into a small accumulator that stays
// in L1, and writes each finished chunk straight into every output. Every input byte is read
// once and every output byte written once: the memory-traffic minimum. In-place works because
// a slice of an output is only ever written by the thread that owns that slice, after it has
// read that slice of every input.
#pragma once

#include <cstddef>
#include <span>

#include <tlc/ops.hpp>
#include <tlc/types.hpp>

namespace tlc::detail {

struct Slice {
  std::size_t begin = 0;  // element index
  std::size_t end = 0;
  std::size_t size() const noexcept { return end - begin; }
};

// Slice `part` of `parts` of count elements; boundaries fall on 64-byte multiples of the
// element range (relative to its start) so that no two threads write the same cache line of an
// aligned buffer. Slices cover [0, count) exactly once; trailing parts may be empty.
Slice slice_of(std::size_t count, std::size_t element_size, int part, int parts) noexcept;

// The combine kernel tlc compiled itself for a built-in op on a built-in type (vectorised with
// the library's flags), or nullptr when there is none and the caller's template must serve.
CombineFn builtin_combine(BuiltinOp op, TypeInfo type) noexcept;

// out[0, n) = line 0 op line 1 op ... op line (lines - 1), element by element in that order,
// where line t holds n elements at first + t * stride bytes: the fold of the inline form of flat
// over the threads' begin lines. The same arithmetic in the same order as builtin_combine's
// kernel applied line after line, so results are bitwise those of the other forms; a single
// call instead of one per line, which matters when the whole collective takes a few dozen
// nanoseconds. n * element size is at most 32 bytes.
using LineFoldFn = void (*)(const std::byte* first, std::size_t stride, int lines, std::size_t n,
                            void* out);
// The line fold for a built-in op on a built-in type, or nullptr (as builtin_combine).
LineFoldFn builtin_line_fold(BuiltinOp op, TypeInfo type) noexcept;

// outputs[k][slice] = inputs[0][slice] op inputs[1][slice] op ... (rank order), for every k.
void reduce_slice_to_all(std::span<const void* const> inputs, std::span<void* const> outputs,
                         std::size_t element_size, Slice slice, CombineFn combine,
                         const void* op_object);

// outputs[k][slice] = source[slice] for every k.
void copy_slice_to_all(const void* source, std::span<void* const> outputs, std::size_t element_size,
                       Slice slice);

}  // namespace tlc::detail
