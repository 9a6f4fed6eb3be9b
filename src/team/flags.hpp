// The flags threads of a team signal each other with: one writer each, a cache line apart so
// that a writer never invalidates another's line (Jain et al. [Jain], sections II-A/B).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace tlc::detail {

inline constexpr std::size_t cache_line_size = 64;

struct alignas(cache_line_size) Flag {
  std::atomic<std::uint64_t> value{0};
};

}  // namespace tlc::detail
