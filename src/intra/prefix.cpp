// The sliced prefix walk of scan and exscan inside a process (intra/prefix.hpp): one slice of
// every rank's input folded in rank order through an accumulator that stays in L1.
#include "intra/prefix.hpp"

#include <algorithm>
#include <cstring>
#include <vector>

namespace tlc::detail {

namespace {
// The running prefix's chunk: stays in L1 beside the streaming inputs (as sliced_reduce.cpp's).
constexpr std::size_t prefix_chunk_bytes = 8192;
}  // namespace

void prefix_slice(std::span<const void* const> inputs, std::span<void* const> outputs,
                  std::size_t element_size, Slice slice, CombineFn combine, const void* op_object,
                  bool exclusive, const void* initial) {
  if (slice.size() == 0 || inputs.empty()) return;
  thread_local std::vector<std::byte> buffers;
  const std::size_t chunk = std::max<std::size_t>(1, prefix_chunk_bytes / element_size);
  if (buffers.size() < 2 * chunk * element_size) buffers.resize(2 * chunk * element_size);
  std::byte* acc = buffers.data();
  std::byte* previous = acc + chunk * element_size;
  for (std::size_t at = slice.begin; at < slice.end; at += chunk) {
    const std::size_t n = std::min(chunk, slice.end - at);
    const std::size_t offset = at * element_size, bytes = n * element_size;
    auto input = [&](std::size_t k) { return static_cast<const std::byte*>(inputs[k]) + offset; };
    auto output = [&](std::size_t k) { return static_cast<std::byte*>(outputs[k]) + offset; };
    bool have = initial != nullptr;
    if (have) std::memcpy(acc, static_cast<const std::byte*>(initial) + offset, bytes);
    for (std::size_t k = 0; k < inputs.size(); ++k) {
      if (exclusive) {
        // The input may be the output (in place): keep the prefix aside before reading it.
        if (have) std::memcpy(previous, acc, bytes);
        if (have) {
          combine(op_object, acc, input(k), n, false);
        } else {
          std::memcpy(acc, input(k), bytes);
        }
        if (have) std::memcpy(output(k), previous, bytes);
      } else {
        if (have) {
          combine(op_object, acc, input(k), n, false);
        } else {
          std::memcpy(acc, input(k), bytes);
        }
        std::memcpy(output(k), acc, bytes);
      }
      have = true;
    }
  }
}

}  // namespace tlc::detail
