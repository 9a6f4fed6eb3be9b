#include "select/selector.hpp"

#include <cctype>
#include <cstdlib>

#include <tlc/error.hpp>

namespace tlc::detail {

namespace {

constexpr AlgorithmInfo registry[] = {
    {Collective::barrier, "hierarchical", Algorithm::barrier_hierarchical,
     "rendezvous of the process's threads; thread 0 runs MPI_Barrier between processes"},
    {Collective::allreduce, "hierarchical", Algorithm::allreduce_hierarchical,
     "publish-and-slice reduce inside the process; thread 0 runs MPI_Allreduce on a staging "
     "buffer between processes"},
};

std::string env_name(Collective c) {
  std::string name = "TLC_ALGO_";
  for (const char* p = to_string(c); *p; ++p)
    name += static_cast<char>(std::toupper(static_cast<unsigned char>(*p)));
  return name;
}

Algorithm lookup(Collective c, const std::string& name, const std::string& origin) {
  std::string known;
  for (const auto& info : registry) {
    if (info.collective != c) continue;
    if (name == info.name) return info.id;
    known += known.empty() ? "" : ", ";
    known += info.name;
  }
  throw Error(Errc::invalid_argument,
              "tlc: " + origin + " names unknown algorithm '" + name + "' for " + to_string(c) +
                  (known.empty() ? std::string(" (no algorithms are implemented for it yet)")
                                 : " (known: " + known + ")"));
}

}  // namespace

std::span<const AlgorithmInfo> algorithm_registry() noexcept { return registry; }

Selector::Selector(const std::map<Collective, std::string>& forced) {
  for (std::size_t i = 0; i < collective_count; ++i) {
    const auto c = static_cast<Collective>(i);
    const std::string variable = env_name(c);
    if (const char* value = std::getenv(variable.c_str()); value && *value)
      forced_[i] = lookup(c, value, variable);
  }
  // The program's own choice wins over the environment.
  for (const auto& [c, name] : forced)
    forced_[static_cast<std::size_t>(c)] =
        lookup(c, name, std::string("TeamOptions::algorithms[") + to_string(c) + "]");
}

std::optional<Algorithm> Selector::forced(Collective collective) const {
  return forced_[static_cast<std::size_t>(collective)];
}

Algorithm Selector::choose(Collective collective, std::size_t, const TeamShape&) const {
  if (auto f = forced(collective)) return *f;
  for (const auto& info : registry)
    if (info.collective == collective) return info.id;
  throw Error(Errc::unsupported,
              std::string("tlc: no algorithm implements ") + to_string(collective) + " yet");
}

}  // namespace tlc::detail
