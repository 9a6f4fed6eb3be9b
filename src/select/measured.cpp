// The tuning file's measured times (select/measured.hpp): stored by collective, algorithm and team
// shape, looked up, merged, written back as text, and digested for the comparison of processes.
#include "select/measured.hpp"

#include <bit>
#include <cstdio>

namespace tlc::detail {

bool MeasuredTimes::add(Collective c, Algorithm a, const MeasuredShape& shape,
                        MeasuredPoint point) {
  auto series = std::find_if(series_.begin(), series_.end(), [&](const Series& s) {
    return s.collective == c && s.algorithm == a && s.shape == shape;
  });
  if (series == series_.end()) {
    series_.push_back({c, a, shape, {}});
    series = series_.end() - 1;
  }
  std::vector<MeasuredPoint>& points = series->points;
  const auto at =
      std::lower_bound(points.begin(), points.end(), point.bytes,
                       [](const MeasuredPoint& p, std::size_t bytes) { return p.bytes < bytes; });
  if (at != points.end() && at->bytes == point.bytes) return false;
  points.insert(at, point);
  return true;
}

std::span<const MeasuredPoint> MeasuredTimes::points(Collective c, Algorithm a,
                                                     const MeasuredShape& shape) const noexcept {
  for (const Series& s : series_)
    if (s.collective == c && s.algorithm == a && s.shape == shape) return s.points;
  return {};
}

bool MeasuredTimes::covers(Collective c, const MeasuredShape& shape) const noexcept {
  return std::any_of(series_.begin(), series_.end(),
                     [&](const Series& s) { return s.collective == c && s.shape == shape; });
}

void MeasuredTimes::erase(const MeasuredShape& shape) {
  std::erase_if(series_, [&](const Series& s) { return s.shape == shape; });
}

void MeasuredTimes::merge(const MeasuredTimes& other) {
  for (const Series& s : other.series_)
    for (const MeasuredPoint& p : s.points) add(s.collective, s.algorithm, s.shape, p);
}

std::string MeasuredTimes::text() const {
  std::string out;
  char line[160];
  for (const Series& s : series_)
    for (const MeasuredPoint& p : s.points) {
      std::snprintf(line, sizeof line, "measured %s %s %dx%dx%d %zu = %.6g\n",
                    to_string(s.collective), to_string(s.algorithm), s.shape.processes,
                    s.shape.threads, s.shape.lanes, p.bytes, p.seconds * 1e6);
      out += line;
    }
  return out;
}

std::uint64_t MeasuredTimes::digest() const noexcept {
  std::uint64_t h = 1469598103934665603ull;  // FNV-1a over every field
  auto mix = [&h](std::uint64_t bits) {
    for (int b = 0; b < 8; ++b) {
      h ^= (bits >> (8 * b)) & 0xffu;
      h *= 1099511628211ull;
    }
  };
  for (const Series& s : series_) {
    mix(static_cast<std::uint64_t>(s.collective) << 8 | static_cast<std::uint64_t>(s.algorithm));
    mix(static_cast<std::uint64_t>(s.shape.processes) << 40 ^
        static_cast<std::uint64_t>(s.shape.threads) << 20 ^
        static_cast<std::uint64_t>(s.shape.lanes));
    for (const MeasuredPoint& p : s.points) {
      mix(p.bytes);
      mix(std::bit_cast<std::uint64_t>(p.seconds));
    }
  }
  return h;
}

}  // namespace tlc::detail
