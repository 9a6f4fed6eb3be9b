// The lines of a one-process team's nonblocking calls (team/line_ring.hpp).
#include "team/line_ring.hpp"

namespace tlc::detail {

LineRing::LineRing(TeamImpl& team, int threads)
    : threads_(threads),
      slots_(std::make_unique<Slot[]>(static_cast<std::size_t>(threads) * depth)),
      counters_(std::make_unique<Counter[]>(static_cast<std::size_t>(threads))),
      seats_(std::make_unique<std::shared_ptr<LineSeat>[]>(static_cast<std::size_t>(threads))),
      failures_(std::make_unique<Failures[]>(static_cast<std::size_t>(threads))),
      known_stride_((static_cast<std::size_t>(threads) + KnownLine::words - 1) / KnownLine::words *
                    KnownLine::words),
      known_(std::make_unique<KnownLine[]>(static_cast<std::size_t>(threads) * known_stride_ /
                                           KnownLine::words)) {
  for (int t = 0; t < threads; ++t) {
    auto seat = std::make_shared<LineSeat>();
    seat->team = &team;
    seat->me = t;
    seats_[static_cast<std::size_t>(t)] = std::move(seat);
  }
}

LineRing::~LineRing() {
  for (int t = 0; t < threads_; ++t)
    seats_[static_cast<std::size_t>(t)]->alive.store(false, std::memory_order_release);
}

void LineRing::record_failure(int t, std::uint64_t n, Errc code, std::string message) {
  Failures& f = failures_[static_cast<std::size_t>(t)];
  std::lock_guard<std::mutex> lock(f.mutex);
  // The first failure of a call stays (on slices, every share's claimer may find one).
  if (f.by_call.try_emplace(n, code, std::move(message)).second)
    f.pending.fetch_add(1, std::memory_order_release);
}

bool LineRing::take_failure(int me, std::uint64_t n, Errc& code, std::string& message) {
  Failures& f = failures_[static_cast<std::size_t>(me)];
  if (f.pending.load(std::memory_order_acquire) == 0) return false;
  std::lock_guard<std::mutex> lock(f.mutex);
  const auto it = f.by_call.find(n);
  if (it == f.by_call.end()) return false;
  code = it->second.first;
  message = std::move(it->second.second);
  f.by_call.erase(it);
  f.pending.fetch_sub(1, std::memory_order_relaxed);
  return true;
}

}  // namespace tlc::detail
