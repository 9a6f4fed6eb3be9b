// tlc-info: shows the machine as tlc sees it (NUMA domains, cores, rails), the placement plan a
// team would get for the given options, and the MPI library tlc was built against; --predict
// evaluates the cost model for any team shape (docs/model.md). Runs without MPI_Init and without
// a launcher, so it can be used on a login node or with --xml.
#include <mpi.h>

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <functional>
#include <iomanip>
#include <iostream>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include <tlc/algorithms.hpp>
#include <tlc/environment.hpp>
#include <tlc/error.hpp>
#include <tlc/topology.hpp>

#include "select/planner.hpp"
#include "select/tuning.hpp"
#include "team/config.hpp"

namespace {

constexpr const char* kProgram = "tlc-info";

// A mistake on the command line, answered with a pointer to --help.
struct UsageError {
  std::string message;
};

struct Settings {
  tlc::PlacementRequest request;
  std::string xml;
  std::string synthetic;
  bool help = false;
  bool algorithms = false;
  bool plan = false;
  bool predict = false;
  std::string collective = "allreduce";
  int processes = 2;
  std::optional<std::size_t> bytes;  // --bytes; unset: every size (8 B for --plan)
  std::string tuning;                // --tuning: the model's parameters from this file
  std::size_t min_size = 8, max_size = std::size_t{64} << 20;
  int lane_parallelism = 0;
  int numa_domains = 1;
};

// One command-line option. Adding an option (e.g. --algorithms) means adding one entry to
// option_table(); parsing, usage text and errors follow from it.
struct OptionSpec {
  std::string_view name;   // without the leading "--"
  std::string_view value;  // placeholder shown in the usage text, empty for a flag
  std::string_view help;
  std::function<void(Settings&, const std::string&)> apply;
};

int parse_int(std::string_view option, const std::string& text) {
  int value = 0;
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (text.empty() || ec != std::errc() || ptr != end)
    throw UsageError{"--" + std::string(option) + " expects an integer, got '" + text + "'"};
  return value;
}

// "8", "4K", "64M", "1G" (powers of 1024), the sizes tlc-bench reads too (bench/options.cpp).
std::size_t parse_size(std::string_view option, const std::string& text) {
  std::size_t value = 0;
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, value);
  std::size_t scale = 1;
  if (ptr != end && ptr + 1 == end) {
    switch (*ptr) {
      case 'k':
      case 'K':
        scale = std::size_t{1} << 10;
        break;
      case 'm':
      case 'M':
        scale = std::size_t{1} << 20;
        break;
      case 'g':
      case 'G':
        scale = std::size_t{1} << 30;
        break;
      default:
        scale = 0;
    }
  } else if (ptr != end) {
    scale = 0;
  }
  if (text.empty() || ec != std::errc() || scale == 0)
    throw UsageError{"--" + std::string(option) + " expects a size such as 8, 4K, 64M, got '" +
                     text + "'"};
  return value * scale;
}

const std::vector<OptionSpec>& option_table() {
  static const std::vector<OptionSpec> table{
      {"threads", "N",
       "threads in the team (default: threads-per-numa x domains, else one per core)",
       [](Settings& s, const std::string& v) { s.request.threads = parse_int("threads", v); }},
      {"threads-per-numa", "N", "threads on each NUMA domain",
       [](Settings& s, const std::string& v) {
         s.request.threads_per_numa = parse_int("threads-per-numa", v);
       }},
      {"lanes", "N", "lane communicators (default: threads-per-rail x rails, else 1)",
       [](Settings& s, const std::string& v) { s.request.lanes = parse_int("lanes", v); }},
      {"threads-per-rail", "N", "lane threads on each network rail",
       [](Settings& s, const std::string& v) {
         s.request.threads_per_rail = parse_int("threads-per-rail", v);
       }},
      {"no-pin", "", "plan without binding threads to cores",
       [](Settings& s, const std::string&) { s.request.pin = false; }},
      {"xml", "PATH", "use an hwloc XML export instead of this machine",
       [](Settings& s, const std::string& v) { s.xml = v; }},
      {"synthetic", "DESC",
       "use an hwloc synthetic topology, e.g. \"package:2 numa:2 core:8 pu:2\"",
       [](Settings& s, const std::string& v) { s.synthetic = v; }},
      {"algorithms", "",
       "list every algorithm per collective and the selector's choice for --processes, "
       "--threads and --lanes at 8 B .. 64 MiB (initialises MPI as a singleton to ask it how "
       "many lanes it progresses at once)",
       [](Settings& s, const std::string&) { s.algorithms = true; }},
      {"plan", "",
       "print the plan of one call (--collective, --bytes, --processes, --threads, --lanes): "
       "algorithm, form, chunk, lanes, leader, and the predicted cost of each candidate",
       [](Settings& s, const std::string&) { s.plan = true; }},
      {"collective", "C", "collective for --plan and --predict (default allreduce)",
       [](Settings& s, const std::string& v) { s.collective = v; }},
      {"processes", "P", "processes for --algorithms, --plan and --predict (default 2)",
       [](Settings& s, const std::string& v) { s.processes = parse_int("processes", v); }},
      {"bytes", "B",
       "bytes per rank block for --plan; only this size for --algorithms and --predict (4K, 1M "
       "accepted)",
       [](Settings& s, const std::string& v) { s.bytes = parse_size("bytes", v); }},
      {"predict", "",
       "the cost model's time of the whole call for every algorithm of --collective and the "
       "plan's choice, per size, for --processes x --threads with --lanes (any shape: no MPI, "
       "no topology needed)",
       [](Settings& s, const std::string&) { s.predict = true; }},
      {"tuning", "FILE",
       "model parameters for --predict, --plan and --algorithms from a tuning file, as "
       "TLC_TUNING=FILE does (TLC_COST_* override it)",
       [](Settings& s, const std::string& v) { s.tuning = v; }},
      {"min-size", "B", "smallest size for --predict (default 8; 4K, 1M accepted)",
       [](Settings& s, const std::string& v) { s.min_size = parse_size("min-size", v); }},
      {"max-size", "B", "largest size for --predict (default 64M)",
       [](Settings& s, const std::string& v) { s.max_size = parse_size("max-size", v); }},
      {"lane-parallelism", "K",
       "lanes MPI progresses at once for --predict (per-VCI MPICH: its VCIs; a global-lock "
       "build: 1; default: the tuning file, else every lane)",
       [](Settings& s, const std::string& v) {
         s.lane_parallelism = parse_int("lane-parallelism", v);
       }},
      {"numa-domains", "D", "NUMA domains a process's threads span, for --predict (default 1)",
       [](Settings& s, const std::string& v) { s.numa_domains = parse_int("numa-domains", v); }},
      {"help", "", "show this help", [](Settings& s, const std::string&) { s.help = true; }},
  };
  return table;
}

void print_usage(std::ostream& out) {
  out << "usage: " << kProgram << " [options]\n"
      << "Shows the topology tlc detects, the placement plan of a team, and the MPI library.\n"
      << "options:\n";
  auto left_column = [](const OptionSpec& o) {
    std::string left = "--";
    left += o.name;
    if (!o.value.empty()) {
      left += ' ';
      left += o.value;
    }
    return left;
  };
  std::size_t width = 0;
  for (const OptionSpec& o : option_table()) width = std::max(width, left_column(o).size());
  for (const OptionSpec& o : option_table()) {
    const std::string left = left_column(o);
    out << "  " << left << std::string(width - left.size() + 2, ' ') << o.help << '\n';
  }
  out << "Options taking a value also accept --name=value.\n";
}

Settings parse(int argc, char** argv) {
  Settings settings;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "-h") arg = "--help";
    if (arg.rfind("--", 0) != 0) throw UsageError{"unexpected argument '" + arg + "'"};
    std::string name = arg.substr(2);
    std::optional<std::string> value;
    if (const auto eq = name.find('='); eq != std::string::npos) {
      value = name.substr(eq + 1);
      name.resize(eq);
    }
    const OptionSpec* spec = nullptr;
    for (const OptionSpec& o : option_table())
      if (o.name == name) spec = &o;
    if (spec == nullptr) throw UsageError{"unknown option '" + arg + "'"};
    if (spec->value.empty()) {
      if (value) throw UsageError{"--" + name + " takes no value"};
      value = "";
    } else if (!value) {
      if (i + 1 >= argc)
        throw UsageError{"--" + name + " needs a value (" + std::string(spec->value) + ")"};
      value = argv[++i];
    }
    spec->apply(settings, *value);
  }
  if (!settings.xml.empty() && !settings.synthetic.empty())
    throw UsageError{"--xml and --synthetic are mutually exclusive"};
  return settings;
}

std::string without_prefix(std::string message) {
  // Library messages start with "tlc: "; ours already names the program.
  if (message.rfind("tlc: ", 0) == 0) message.erase(0, 5);
  return message;
}

// MPI version strings run over several lines ("MPICH Version:\t4.0.2\nMPICH Release date: ...");
// the first, with its whitespace tidied, is the part worth a line.
std::string first_line(const std::string& text) {
  std::string line;
  for (char c : text.substr(0, text.find('\n'))) {
    const bool space = c == ' ' || c == '\t' || c == '\r';
    if (!space)
      line += c;
    else if (!line.empty() && line.back() != ' ')
      line += ' ';
  }
  while (!line.empty() && line.back() == ' ') line.pop_back();
  return line;
}

std::string human_bytes(std::size_t b) {
  const char* units[] = {"B", "KiB", "MiB", "GiB"};
  int u = 0;
  while (u < 3 && b >= 1024 && b % 1024 == 0) {
    b /= 1024;
    ++u;
  }
  return std::to_string(b) + " " + units[u];
}

// The registry, then what the selector picks per collective and size for the given shape.
void print_algorithms(const Settings& settings, const tlc::Placement& plan) {
  tlc::Environment env;  // singleton MPI: thread level and lane parallelism
  std::cout << "MPI thread level: " << tlc::Environment::thread_level_name(env.thread_level())
            << '\n';
  const int parallel = tlc::mpi_lane_parallelism();
  std::cout << "lanes MPI progresses at once: "
            << (parallel > 0 ? std::to_string(parallel) +
                                   (parallel == 1 ? " (global-lock build: lanes are serialised)"
                                                  : " (MPICH VCIs)")
                             : std::string("unknown: the MPI does not say (Open MPI never "
                                           "does); assumed: all; TLC_COST_LANE_PARALLELISM "
                                           "sets it"))
            << "\n\nalgorithms:\n";
  for (const auto& a : tlc::algorithms()) {
    std::string forms;
    for (const std::string& f : a.forms) forms += (forms.empty() ? "" : "|") + f;
    std::cout << "  " << std::left << std::setw(22) << tlc::to_string(a.collective) << std::setw(20)
              << a.name << (a.single_process ? "[1 process] " : "") << a.summary
              << " (forms: " << forms << ")\n";
  }
  const int threads = static_cast<int>(plan.threads.size());
  const int lanes = static_cast<int>(plan.lanes.size());
  int domains = 1;
  for (std::size_t t = 1; t < plan.threads.size(); ++t)
    if (plan.threads[t].numa != plan.threads[t - 1].numa) ++domains;
  std::cout << "\nselector's choice for " << settings.processes << " process(es) x " << threads
            << " thread(s), " << lanes << " lane(s) (predicted time of the whole call, us):\n";
  std::vector<std::size_t> sizes;
  if (settings.bytes) {
    sizes.push_back(*settings.bytes);
  } else {
    for (std::size_t b = 8; b <= (std::size_t{64} << 20); b *= 8) sizes.push_back(b);
  }
  for (int c = 0; c <= static_cast<int>(tlc::Collective::exscan); ++c) {
    const auto collective = static_cast<tlc::Collective>(c);
    for (std::size_t b : sizes) {
      tlc::SelectionQuery q;
      q.collective = collective;
      q.bytes = b;
      q.processes = settings.processes;
      q.threads = threads;
      q.lanes = lanes;
      q.numa_domains = domains;
      const tlc::Selection pick = tlc::select_algorithm(q);
      std::cout << "  " << std::left << std::setw(22) << tlc::to_string(collective) << std::right
                << std::setw(8) << human_bytes(b) << "  " << std::left << std::setw(20)
                << pick.name + ":" + pick.form;
      for (const auto& [name, seconds] : pick.predicted_seconds)
        std::cout << ' ' << name << '=' << std::fixed << std::setprecision(1) << seconds * 1e6;
      std::cout << '\n';
      if (collective == tlc::Collective::barrier) break;
    }
  }
}

tlc::Collective collective_named(const std::string& name) {
  for (int c = 0; c <= static_cast<int>(tlc::Collective::exscan); ++c)
    if (name == tlc::to_string(static_cast<tlc::Collective>(c)))
      return static_cast<tlc::Collective>(c);
  throw UsageError{"--collective: unknown collective '" + name + "'"};
}

// The plan of one call (--plan): no topology, no placement, no MPI initialisation needed.
int print_plan(const Settings& settings) {
  tlc::SelectionQuery q;
  q.collective = collective_named(settings.collective);
  q.bytes = settings.bytes.value_or(8);
  q.processes = settings.processes;
  q.threads = std::max(1, settings.request.threads);
  q.lanes = std::max(1, settings.request.lanes);
  const tlc::Selection pick = tlc::select_algorithm(q);
  std::cout << "plan of " << settings.collective << ", " << human_bytes(q.bytes) << " per rank, "
            << q.processes << " process(es) x " << q.threads << " thread(s), " << q.lanes
            << " lane(s):\n"
            << "  algorithm  " << pick.name << "\n"
            << "  form       " << pick.form << "\n";
  if (pick.form == "pipelined")
    std::cout << "  chunk      " << human_bytes(pick.chunk_bytes) << " per lane\n";
  std::cout << "  lanes      " << pick.lanes << "\n"
            << "  leader     " << pick.leader << "\n";
  if (!pick.fallback.empty()) std::cout << "  fallback   " << pick.fallback << "\n";
  if (!pick.predicted_seconds.empty()) {
    std::cout << "predicted time of the whole call of each candidate (cost model, threads averaged "
                 "over processes):\n";
    for (const auto& [name, seconds] : pick.predicted_seconds)
      std::cout << "  " << std::left << std::setw(20) << name << std::right << std::fixed
                << std::setprecision(2) << std::setw(12) << seconds * 1e6 << " us"
                << (name == pick.name ? "  <- chosen" : "") << '\n';
  }
  return 0;
}

// The model for any shape (--predict): every algorithm's predicted time of the whole call and
// the plan's choice, size by size.
int print_prediction(const Settings& settings) {
  namespace td = tlc::detail;
  const tlc::Collective collective = collective_named(settings.collective);
  const int P = settings.processes, T = std::max(1, settings.request.threads),
            L = std::max(1, settings.request.lanes);
  if (P < 1 || settings.request.threads < 0 || settings.request.lanes < 0 ||
      settings.numa_domains < 1 || settings.lane_parallelism < 0)
    throw UsageError{"--predict needs positive --processes, --threads, --lanes, --numa-domains"};
  td::Config config = td::Config::read(tlc::TeamOptions{});  // TLC_TUNING, TLC_COST_*
  td::PlanSettings s = config.plan;
  s.forced = {};  // what the planner itself chooses
  s.leaders = td::LeaderPolicy::by_plan;
  if (config.pipeline_chunk_asked) s.pipeline_chunk_bytes = config.pipeline_chunk_asked;
  if (settings.lane_parallelism > 0) s.costs.lane_parallelism = settings.lane_parallelism;
  td::TeamShape shape{P, T, L, std::min(settings.numa_domains, T), P * T, true};
  shape.most_threads = T;
  const td::Planner planner(shape, s);

  const char* file = std::getenv("TLC_TUNING");
  std::cout << "model ("
            << (file && *file ? std::string("tuning file ") + file : "built-in defaults")
            << ", TLC_COST_* over it):";
  for (const td::CostKey& k : td::cost_keys()) {
    if (k.integer) continue;
    std::cout << ' ' << k.key << '=' << td::cost_value(s.costs, k);
  }
  std::cout << "\nlanes progressing at once: "
            << (s.costs.lane_parallelism > 0 ? std::to_string(s.costs.lane_parallelism)
                                             : "every lane (per-VCI MPI; a global-lock MPICH "
                                               "such as Debian's needs --lane-parallelism 1)")
            << "\n\n"
            << settings.collective << ", " << P << " process(es) x " << T << " thread(s), " << L
            << " lane(s): predicted time of the whole call, us (bytes per rank block; '*' the "
               "plan's choice: across processes the cheapest, with threads averaged over "
               "processes; in one process by size; both scaled to the tuning file's measured "
               "times where it has this shape)\n";

  std::vector<const td::AlgorithmInfo*> candidates;
  for (const td::AlgorithmInfo& info : td::algorithm_registry())
    if (info.collective == collective &&
        planner.forced_plan({collective, 1, 1, true, false}, info.id))
      candidates.push_back(&info);
  std::vector<std::size_t> sizes;
  if (settings.bytes) {
    sizes.push_back(*settings.bytes);
  } else {
    for (std::size_t b = std::max<std::size_t>(1, settings.min_size); b <= settings.max_size;
         b *= 4)
      sizes.push_back(b);
    if (sizes.empty() || sizes.back() != settings.max_size) sizes.push_back(settings.max_size);
  }
  std::cout << std::right << std::setw(10) << "bytes";
  std::vector<int> widths;
  for (const td::AlgorithmInfo* info : candidates) {
    widths.push_back(std::max<int>(14, static_cast<int>(std::string(info->name).size()) + 2));
    std::cout << std::setw(widths.back()) << info->name;
  }
  std::cout << "  plan\n";
  for (const std::size_t bytes : sizes) {
    const std::size_t e = bytes % 8 == 0 && bytes ? 8 : 1;
    const td::PlanQuery q{collective, bytes / e, e, true, false};
    const td::Plan chosen = planner.as_run(q, planner.plan(q));
    std::cout << std::setw(10) << human_bytes(bytes);
    for (std::size_t i = 0; i < candidates.size(); ++i) {
      std::ostringstream cell;
      cell << "- ";
      if (const std::optional<td::Plan> p = planner.forced_plan(q, candidates[i]->id)) {
        if (const std::optional<double> t = planner.priced_call(q, planner.as_run(q, *p))) {
          cell.str("");
          cell << std::fixed << std::setprecision(*t < 1e-4 ? 2 : 1) << *t * 1e6
               << (candidates[i]->id == chosen.algorithm ? "*" : " ");
        }
      }
      std::cout << std::setw(widths[i]) << cell.str();
    }
    std::cout << "  " << td::to_string(chosen.algorithm) << ':' << td::to_string(chosen.form)
              << '\n';
  }
  return 0;
}

int run(const Settings& settings) {
  // The library reads the model's parameters from TLC_TUNING (src/team/config.cpp).
  if (!settings.tuning.empty()) ::setenv("TLC_TUNING", settings.tuning.c_str(), 1);
  if (settings.predict) return print_prediction(settings);
  if (settings.plan) return print_plan(settings);
  const tlc::Topology topology = !settings.xml.empty() ? tlc::Topology::from_xml(settings.xml)
                                 : !settings.synthetic.empty()
                                     ? tlc::Topology::synthetic(settings.synthetic)
                                     : tlc::Topology::detect();
  std::cout << topology.describe() << '\n';
  const tlc::Placement plan = tlc::Placement::plan(topology, settings.request);
  std::cout << plan.describe() << '\n';
  std::cout << "MPI library: " << first_line(tlc::Environment::mpi_library_version()) << '\n';
  // tlc is built against the same mpi.h as this tool (a link-time check refuses a mix).
  std::cout << "Persistent calls across processes: "
            << (MPI_VERSION >= 4
                    ? "MPI's persistent collectives (MPI_Allreduce_init, ...), made at the first "
                      "start and started every round"
                    : "the nonblocking collective every round (this MPI has no persistent "
                      "collectives)")
            << "; with one thread in every process, allreduce (where the blocking call runs "
               "recursive doubling or Rabenseifner) and alltoall run tlc's own algorithm on "
               "persistent point-to-point requests instead\n";
  if (settings.algorithms) print_algorithms(settings, plan);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Settings settings;
  try {
    settings = parse(argc, argv);
  } catch (const UsageError& e) {
    std::cerr << kProgram << ": " << e.message << '\n';
    print_usage(std::cerr);
    return 2;
  }
  if (settings.help) {
    print_usage(std::cout);
    return 0;
  }
  try {
    return run(settings);
  } catch (const std::exception& e) {
    std::cerr << kProgram << ": " << without_prefix(e.what()) << '\n';
    return 2;
  }
}
