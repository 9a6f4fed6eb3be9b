// Config::read (team/config.hpp): TeamOptions, with every TLC_* variable filling in what the
// program left unset. The one place that reads the environment (docs/design.md section 10).
#include "team/config.hpp"

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <string>

#include <tlc/error.hpp>

#include "inter/mpi_policy.hpp"
#include "select/tuning.hpp"

namespace tlc::detail {

namespace {

// A build with assertions (CMAKE_BUILD_TYPE=Debug) is for finding mistakes: it compares every
// call across processes unless told not to.
#ifdef NDEBUG
constexpr CheckPolicy default_check_policy = CheckPolicy::large_calls;
#else
constexpr CheckPolicy default_check_policy = CheckPolicy::every_call;
#endif

const char* variable(const char* name) {
  const char* text = std::getenv(name);
  return text && *text ? text : nullptr;
}

std::optional<long> env_integer(const char* name) {
  const char* text = variable(name);
  if (!text) return std::nullopt;
  char* end = nullptr;
  errno = 0;
  long value = std::strtol(text, &end, 10);
  if (errno || *end || value < 0)
    throw Error(Errc::invalid_argument,
                std::string("tlc: ") + name + "='" + text + "' is not a non-negative integer");
  return value;
}

std::optional<double> env_seconds(const char* name) {
  const char* text = variable(name);
  if (!text) return std::nullopt;
  char* end = nullptr;
  double value = std::strtod(text, &end);
  if (*end || !(value >= 0))
    throw Error(Errc::invalid_argument,
                std::string("tlc: ") + name + "='" + text + "' is not a number of seconds");
  return value;
}

std::optional<bool> env_switch(const char* name) {
  const char* text = variable(name);
  if (!text) return std::nullopt;
  const std::string v = text;
  if (v == "1" || v == "on" || v == "yes" || v == "true") return true;
  if (v == "0" || v == "off" || v == "no" || v == "false") return false;
  throw Error(Errc::invalid_argument,
              std::string("tlc: ") + name + "='" + v + "' is not 0/1/on/off");
}

std::optional<bool> node_is_process_variable() {
  const char* text = variable("TLC_NODE");
  if (!text) return std::nullopt;
  if (std::string(text) == "node") return false;
  if (std::string(text) == "process") return true;
  throw Error(Errc::invalid_argument,
              std::string("tlc: TLC_NODE='") + text + "' (expected 'node' or 'process')");
}

// The pipeline chunk asked for (option, else TLC_PIPELINE_CHUNK), 0 when neither says.
std::size_t pipeline_chunk(const TeamOptions& o) {
  constexpr std::size_t fewest = std::size_t{4} << 10, most = std::size_t{1} << 30;
  const std::size_t bytes =
      o.pipeline_chunk_bytes
          ? o.pipeline_chunk_bytes
          : static_cast<std::size_t>(env_integer("TLC_PIPELINE_CHUNK").value_or(0));
  if (bytes == 0) return 0;
  if (bytes < fewest || bytes > most)
    throw Error(Errc::invalid_argument,
                "tlc: pipeline chunk of " + std::to_string(bytes) +
                    " bytes (TeamOptions::pipeline_chunk_bytes or TLC_PIPELINE_CHUNK) is outside "
                    "4096 .. 1073741824");
  return bytes;
}

std::string algo_variable(Collective c) {
  std::string name = "TLC_ALGO_";
  for (const char* p = to_string(c); *p; ++p)
    name += static_cast<char>(std::toupper(static_cast<unsigned char>(*p)));
  return name;
}

// A setting with two values, from TeamOptions (`option`, with its name for errors) or else the
// environment variable; true for `second`, false for `first` or when neither says.
bool either(const std::string& option, const char* option_name, const char* variable_name,
            const char* first, const char* second) {
  std::string origin = option_name;
  std::string value = option;
  if (value.empty()) {
    const char* text = variable(variable_name);
    if (!text) return false;
    value = text;
    origin = variable_name;
  }
  if (value == first) return false;
  if (value == second) return true;
  throw Error(Errc::invalid_argument,
              "tlc: " + origin + "='" + value + "' (expected '" + first + "' or '" + second + "')");
}

// TeamOptions::leaders, else TLC_LEADERS, else "auto".
LeaderPolicy leader_policy(const std::string& option) {
  std::string origin = "TeamOptions::leaders";
  std::string value = option;
  if (value.empty()) {
    const char* text = variable("TLC_LEADERS");
    if (!text) return LeaderPolicy::by_plan;
    value = text;
    origin = "TLC_LEADERS";
  }
  if (value == "auto") return LeaderPolicy::by_plan;
  if (value == "static") return LeaderPolicy::fixed;
  if (value == "dynamic") return LeaderPolicy::by_arrival;
  throw Error(Errc::invalid_argument,
              "tlc: " + origin + "='" + value + "' (expected 'auto', 'static' or 'dynamic')");
}

// The built-in defaults, then the tuning file (the option, else TLC_TUNING), then single
// TLC_COST_<KEY> variables over both. The file's measured times go to *measured.
CostParameters cost_parameters(const TeamOptions& o, MeasuredTimes* measured) {
  CostParameters p;
  p.eager_bytes = mpi_default_eager_bytes();
  if (!o.tuning_file.empty())
    read_tuning_file(o.tuning_file, "TeamOptions::tuning_file", p, measured);
  else if (const char* path = variable("TLC_TUNING"))
    read_tuning_file(path, "TLC_TUNING", p, measured);
  for (const CostKey& key : cost_keys()) {
    const std::string name = cost_variable(key);
    if (const char* text = variable(name.c_str())) set_cost_value(p, key, text, name);
  }
  return p;
}

}  // namespace

Config Config::read(const TeamOptions& o) {
  Config c;
  if (o.region_threads < 0)
    throw Error(Errc::invalid_argument, "tlc: TeamOptions::region_threads = " +
                                            std::to_string(o.region_threads) + " is negative");
  c.region_threads = o.region_threads;
  c.placement.threads =
      o.threads ? o.threads : static_cast<int>(env_integer("TLC_THREADS").value_or(0));
  if (c.placement.threads == 0) c.placement.threads = o.region_threads;
  c.placement.threads_per_numa = o.threads_per_numa;
  c.placement.lanes = o.lanes ? o.lanes : static_cast<int>(env_integer("TLC_LANES").value_or(0));
  c.placement.threads_per_rail = o.threads_per_rail;
  c.pin = o.pin ? o.pin : env_switch("TLC_PIN");
  c.node_is_process = node_is_process_variable();
  c.timeout_seconds =
      o.timeout_seconds > 0 ? o.timeout_seconds : env_seconds("TLC_TIMEOUT").value_or(0);
  const long suspect_ms =
      o.suspect_ms ? *o.suspect_ms
                   : env_integer("TLC_SUSPECT_MS").value_or(std::lround(c.suspect_seconds * 1000));
  if (suspect_ms < 0 || suspect_ms > 3'600'000)
    throw Error(Errc::invalid_argument,
                "tlc: TeamOptions::suspect_ms / TLC_SUSPECT_MS = " + std::to_string(suspect_ms) +
                    " is outside 0 (off) to 3600000 milliseconds");
  c.suspect_seconds = static_cast<double>(suspect_ms) / 1000;
  c.silent_seconds =
      o.silent_seconds ? *o.silent_seconds : env_seconds("TLC_SILENT").value_or(c.silent_seconds);
  if (!(c.silent_seconds >= 0))
    throw Error(Errc::invalid_argument,
                "tlc: TeamOptions::silent_seconds = " + std::to_string(c.silent_seconds) +
                    " is negative (0 turns silence off)");
  c.timeout_aborts_job = either(o.timeout_action, "TeamOptions::timeout_action",
                                "TLC_TIMEOUT_ACTION", "error", "abort");
  c.pipeline_chunk_asked = pipeline_chunk(o);
  if (const std::optional<bool> every = o.check ? o.check : env_switch("TLC_CHECK"))
    c.check = *every ? CheckPolicy::every_call : CheckPolicy::none;
  else
    c.check = default_check_policy;
  const std::optional<bool> stats_variable = env_switch("TLC_STATS");
  c.stats = o.stats.value_or(stats_variable.value_or(false));
  c.stats_report = c.stats && stats_variable.value_or(false);
  const long max_requests =
      o.max_requests ? o.max_requests : env_integer("TLC_MAX_REQUESTS").value_or(c.max_requests);
  if (max_requests < 1 || max_requests > 1'000'000)
    throw Error(Errc::invalid_argument, "tlc: TeamOptions::max_requests / TLC_MAX_REQUESTS = " +
                                            std::to_string(max_requests) +
                                            " is outside 1 to 1000000");
  c.max_requests = static_cast<int>(max_requests);
  c.progress_thread = either(o.progress, "TeamOptions::progress", "TLC_PROGRESS", "none", "thread");
  for (std::size_t i = 0; i < collective_count; ++i) {
    const auto collective = static_cast<Collective>(i);
    const std::string name = algo_variable(collective);
    if (const char* text = variable(name.c_str()))
      c.plan.forced[i] = parse_override(collective, text, name);
  }
  // The program's own choice wins over the environment.
  for (const auto& [collective, name] : o.algorithms)
    c.plan.forced[static_cast<std::size_t>(collective)] = parse_override(
        collective, name, std::string("TeamOptions::algorithms[") + to_string(collective) + "]");
  c.plan.fallback_error =
      either(o.fallback, "TeamOptions::fallback", "TLC_FALLBACK", "plan", "error");
  c.plan.verbose = env_switch("TLC_VERBOSE").value_or(false);
  c.plan.leaders = leader_policy(o.leaders);
  c.plan.costs = cost_parameters(o, &c.plan.measured);
  return c;
}

}  // namespace tlc::detail
