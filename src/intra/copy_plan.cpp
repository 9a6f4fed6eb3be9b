// Building and running a CopyPlan (intra/copy_plan.hpp): source segments and their targets, and
// one thread's equal share of the source bytes, each chunk written to every target while in L1.
#include "intra/copy_plan.hpp"

#include <algorithm>
#include <cstring>

namespace tlc::detail {

namespace {
constexpr std::size_t granule = 64;
constexpr std::size_t fan_out_chunk =
    16384;  // source chunk kept in L1 while written to all targets
}  // namespace

void CopyPlan::add(const void* source, std::size_t bytes, void* const* targets, std::size_t count) {
  if (bytes == 0) return;
  const std::size_t first = targets_.size();
  for (std::size_t k = 0; k < count; ++k)
    if (targets[k] != source) targets_.push_back(static_cast<std::byte*>(targets[k]));
  if (targets_.size() == first) return;
  segments_.push_back(
      {static_cast<const std::byte*>(source), bytes, total_, first, targets_.size() - first});
  total_ += bytes;
}

void CopyPlan::run_share(int share, int shares) const {
  if (total_ == 0) return;
  const std::size_t granules = (total_ + granule - 1) / granule;
  const auto s = static_cast<std::size_t>(share), n = static_cast<std::size_t>(shares);
  const std::size_t lo = std::min(total_, (granules * s / n) * granule);
  const std::size_t hi = std::min(total_, (granules * (s + 1) / n) * granule);
  if (lo >= hi) return;
  // First segment that ends after lo.
  auto it =
      std::upper_bound(segments_.begin(), segments_.end(), lo,
                       [](std::size_t at, const Segment& g) { return at < g.offset + g.bytes; });
  for (; it != segments_.end() && it->offset < hi; ++it) {
    const std::size_t begin = std::max(lo, it->offset) - it->offset;
    const std::size_t end = std::min(hi, it->offset + it->bytes) - it->offset;
    std::byte* const* targets = targets_.data() + it->first_target;
    if (it->targets == 1) {
      std::memcpy(targets[0] + begin, it->source + begin, end - begin);
      continue;
    }
    for (std::size_t at = begin; at < end; at += fan_out_chunk) {
      const std::size_t len = std::min(fan_out_chunk, end - at);
      for (std::size_t k = 0; k < it->targets; ++k)
        std::memcpy(targets[k] + at, it->source + at, len);
    }
  }
}

}  // namespace tlc::detail
