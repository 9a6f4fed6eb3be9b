// Times of whole calls measured on this machine, per collective, algorithm and team shape: what
// `tlc-calibrate` measured for its table, carried by the tuning file (`measured` lines,
// docs/model.md) into the plan.
//
// The fitted alpha-beta model ranks algorithms well where they differ by their terms, but not
// where they differ by what it has no term for (a change of algorithm inside MPI past the cache,
// the cache-line traffic of small calls inside a process). Where the team has a shape that was
// measured, the planner therefore scales the model's price of an algorithm by measured / model at
// the measured sizes around the call's size (geometric interpolation, the end ratio beyond the
// measured range): the plan follows the measurements where there are some and the model's shape
// between them. Other shapes (other process or thread counts, other lanes) are priced by the
// model alone. This is how MPICH's and Open MPI's tuning files work too: measurements of the
// machine decide, a model fills in.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "select/registry.hpp"

namespace tlc::detail {

struct MeasuredShape {
  int processes = 1;
  int threads = 1;  // of each process
  int lanes = 1;
  friend bool operator==(const MeasuredShape&, const MeasuredShape&) = default;
};

struct MeasuredPoint {
  std::size_t bytes = 0;  // of one rank block
  double seconds = 0;     // per call, the slowest thread's
};

class MeasuredTimes {
 public:
  // Adds one measurement; false when (c, a, shape, bytes) already has one.
  bool add(Collective c, Algorithm a, const MeasuredShape& shape, MeasuredPoint point);
  // The measurements of (c, a) at shape by increasing size; empty when there are none.
  std::span<const MeasuredPoint> points(Collective c, Algorithm a,
                                        const MeasuredShape& shape) const noexcept;
  // Whether some algorithm of c was measured at shape.
  bool covers(Collective c, const MeasuredShape& shape) const noexcept;
  bool empty() const noexcept { return series_.empty(); }
  // Removes the measurements of one shape (a new calibration of it replaces them).
  void erase(const MeasuredShape& shape);
  // Adds every measurement of other that this has not (this one's win).
  void merge(const MeasuredTimes& other);
  // Every measurement as tuning-file lines (`measured <collective> <algorithm> PxTxL <bytes> =
  // <microseconds>`), series by series.
  std::string text() const;
  // Mixed into the team's digest of its parameters: processes must plan alike.
  std::uint64_t digest() const noexcept;

 private:
  struct Series {
    Collective collective;
    Algorithm algorithm;
    MeasuredShape shape;
    std::vector<MeasuredPoint> points;  // by increasing bytes
  };
  std::vector<Series> series_;
};

// The factor by which the model's price of a call of `bytes` is scaled: measured / model at the
// measured sizes around it, interpolated geometrically in log(bytes); the nearest end's ratio
// outside the measured range. `model_at(bytes)` is the model's price at a measured size; a size
// the model cannot price is skipped. 1 when nothing applies.
template <class ModelAt>
double measured_factor(std::span<const MeasuredPoint> points, std::size_t bytes, ModelAt model_at) {
  // The nearest measured sizes on either side of bytes whose model price exists.
  auto log_ratio = [&](const MeasuredPoint& p) -> std::optional<std::pair<double, double>> {
    const std::optional<double> model = model_at(p.bytes);
    if (!model || !(*model > 0) || !(p.seconds > 0)) return std::nullopt;
    return std::pair{std::log(static_cast<double>(std::max<std::size_t>(1, p.bytes))),
                     std::log(p.seconds / *model)};
  };
  const auto first_above =
      std::upper_bound(points.begin(), points.end(), bytes,
                       [](std::size_t b, const MeasuredPoint& p) { return b < p.bytes; });
  std::optional<std::pair<double, double>> below, above;  // (log bytes, log ratio)
  for (auto it = first_above; it != points.begin() && !below;) below = log_ratio(*--it);
  for (auto it = first_above; it != points.end() && !above; ++it) above = log_ratio(*it);
  if (!below && !above) return 1;
  if (!above) return std::exp(below->second);
  if (!below) return std::exp(above->second);
  const double x = std::log(static_cast<double>(std::max<std::size_t>(1, bytes)));
  const double w = (x - below->first) / (above->first - below->first);
  return std::exp(below->second + w * (above->second - below->second));
}

}  // namespace tlc::detail
