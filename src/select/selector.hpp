// Algorithm choice (DESIGN section 3): algorithms never choose themselves. The selector maps
// (collective, bytes, team shape) to an algorithm, honouring overrides from TeamOptions and
// TLC_ALGO_<COLLECTIVE>. Every thread of every process computes the same choice from the same
// inputs, so no agreement step is needed; a thread whose arguments differ is caught by the
// call's own validation, which every algorithm performs first.
#pragma once

#include <array>
#include <cstddef>
#include <map>
#include <optional>
#include <span>
#include <string>

#include <tlc/options.hpp>

namespace tlc::detail {

enum class Algorithm {
  barrier_hierarchical,
  allreduce_hierarchical,
};

struct AlgorithmInfo {
  Collective collective;
  const char* name;  // as accepted by TLC_ALGO_<COLLECTIVE> and TeamOptions::algorithms
  Algorithm id;
  const char* summary;
};

std::span<const AlgorithmInfo> algorithm_registry() noexcept;

struct TeamShape {
  int processes = 1;
  int threads = 1;  // threads of this process
  int lanes = 1;
};

class Selector {
 public:
  // Throws Error(invalid_argument) naming the valid choices for an unknown algorithm name.
  Selector() = default;  // defaults everywhere, nothing forced
  explicit Selector(const std::map<Collective, std::string>& forced);
  Algorithm choose(Collective collective, std::size_t bytes, const TeamShape& shape) const;
  std::optional<Algorithm> forced(Collective collective) const;

 private:
  static constexpr std::size_t collective_count = static_cast<std::size_t>(Collective::exscan) + 1;
  std::array<std::optional<Algorithm>, collective_count> forced_{};
};

}  // namespace tlc::detail
