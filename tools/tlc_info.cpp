// tlc-info: shows the machine as tlc sees it (NUMA domains, cores, rails), the placement plan a
// team would get for the given options, and the MPI library tlc was built against. Runs
// without MPI_Init and without a launcher, so it can be used on a login node or with --xml.
#include <algorithm>
#include <charconv>
#include <cstdio>
#include <exception>
#include <functional>
#include <iostream>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <tlc/environment.hpp>
#include <tlc/error.hpp>
#include <tlc/topology.hpp>

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
      {"help", "", "show this help", [](Settings& s, const std::string&) { s.help = true; }},
  };
  return table;
}

void print_usage(std::ostream& out) {
  out << "usage: " << kProgram << " [options]\n"
      << "Shows the topology tlc detects, the placement plan of a team, and the MPI library.\n"
      << "options:\n";
  auto left_column = [](const OptionSpec& o) {
    std::string left = "--" + std::string(o.name);
    if (!o.value.empty()) left += " " + std::string(o.value);
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

int run(const Settings& settings) {
  const tlc::Topology topology = !settings.xml.empty() ? tlc::Topology::from_xml(settings.xml)
                                 : !settings.synthetic.empty()
                                     ? tlc::Topology::synthetic(settings.synthetic)
                                     : tlc::Topology::detect();
  std::cout << topology.describe() << '\n';
  const tlc::Placement plan = tlc::Placement::plan(topology, settings.request);
  std::cout << plan.describe() << '\n';
  std::cout << "MPI library: " << first_line(tlc::Environment::mpi_library_version()) << '\n';
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
