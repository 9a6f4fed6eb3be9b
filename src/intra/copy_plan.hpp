// Data movement inside a process as a list of copies (docs/design.md section 5): every data-moving
// collective (bcast, gather, scatter, allgather, alltoall and their v-variants, and the pack /
// unpack steps around the inter-process phase) is a set of source segments, each written to one
// or more targets. The same plan serves both intra-process algorithms:
//   - flat: a thread builds only the segments that land in its own output and runs them all;
//   - sliced: every thread builds the whole plan and runs an equal share of its source bytes,
//     so all threads share the copying (a bcast is not one thread copying while others wait).
// A segment with several targets is copied in L1-sized chunks, each chunk to every target in
// turn, so its source is read from memory once however many targets it has.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

namespace tlc::detail {

// memcpy that tolerates the empty and the in-place copy (the same address), which the
// collectives' copies meet at their edges (a block of 0 elements, an output that is its input).
inline void copy_bytes(void* to, const void* from, std::size_t bytes) {
  if (bytes && to != from) std::memcpy(to, from, bytes);
}

class CopyPlan {
 public:
  void clear() noexcept {
    segments_.clear();
    targets_.clear();
    total_ = 0;
  }
  // Copies of source[0, bytes) to each target; targets equal to source are skipped (in-place).
  void add(const void* source, std::size_t bytes, void* target) { add(source, bytes, &target, 1); }
  void add(const void* source, std::size_t bytes, void* const* targets, std::size_t count);

  std::size_t bytes() const noexcept { return total_; }

  // Runs share `share` of `shares` of the source bytes (cut on 64-byte boundaries of the
  // concatenated sources). Shares 0..shares-1 together run every copy exactly once.
  void run_share(int share, int shares) const;
  void run_all() const { run_share(0, 1); }

 private:
  struct Segment {
    const std::byte* source;
    std::size_t bytes;
    std::size_t offset;  // of this segment in the concatenated sources
    std::size_t first_target;
    std::size_t targets;
  };
  std::vector<Segment> segments_;
  std::vector<std::byte*> targets_;
  std::size_t total_ = 0;
};

}  // namespace tlc::detail
