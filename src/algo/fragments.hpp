// Opportunistic fragmentation for the alltoall led by arrival ([Parsons] section 3.7.3): which
// threads' blocks leave this process together when one more thread arrives. Every destination
// rank gets the same grouping: a thread's blocks for all destinations become available at once,
// when it arrives.
#pragma once

#include <cstddef>
#include <span>
#include <vector>

namespace tlc::detail {

enum class BlockState : unsigned char {
  absent,     // the thread has not arrived
  available,  // arrived, its blocks not sent yet
  taken,      // a thread has sent its blocks (or they will not be sent: the thread failed)
};

// Threads [first, end) of the process: one message per destination rank.
struct ThreadRun {
  int first = 0, end = 0;
  friend bool operator==(const ThreadRun&, const ThreadRun&) = default;
};

// Called when thread `me` has just arrived (state[me] is available); returns the runs to send now,
// marked taken in state. The thesis' preferences, with one candidate per arrival:
// - once every thread has arrived, every run of available blocks (none can grow any more; with
//   balanced arrivals that is the whole buffer, one message per destination);
// - otherwise the run of available blocks around me, when its blocks for one destination make
//   at least `minimum` bytes (length x block), or when it is closed in (its neighbours are taken,
//   or the buffer's edge) and so cannot grow. A run that could still grow and is smaller waits for
//   its neighbours, so that small blocks do not go as many small messages.
inline std::vector<ThreadRun> take_fragments(std::span<BlockState> state, int me, std::size_t block,
                                             std::size_t minimum) {
  const int threads = static_cast<int>(state.size());
  auto at = [&](int u) -> BlockState& { return state[static_cast<std::size_t>(u)]; };
  std::vector<ThreadRun> runs;
  bool everyone = true;
  for (int u = 0; u < threads && everyone; ++u) everyone = at(u) != BlockState::absent;
  if (everyone) {
    for (int u = 0; u < threads;) {
      if (at(u) != BlockState::available) {
        ++u;
        continue;
      }
      int end = u;
      while (end < threads && at(end) == BlockState::available) ++end;
      runs.push_back({u, end});
      u = end;
    }
  } else if (at(me) == BlockState::available) {
    int first = me, end = me + 1;
    while (first > 0 && at(first - 1) == BlockState::available) --first;
    while (end < threads && at(end) == BlockState::available) ++end;
    const bool closed_in = (first == 0 || at(first - 1) == BlockState::taken) &&
                           (end == threads || at(end) == BlockState::taken);
    if (static_cast<std::size_t>(end - first) * block >= minimum || closed_in)
      runs.push_back({first, end});
  }
  for (const ThreadRun& r : runs)
    for (int u = r.first; u < r.end; ++u) at(u) = BlockState::taken;
  return runs;
}

}  // namespace tlc::detail
