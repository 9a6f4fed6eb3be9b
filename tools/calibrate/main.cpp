// tlc-calibrate: fits tlc's cost model to this machine and writes a tuning file for TLC_TUNING
// (docs/model.md). The command line is read here; the measurements and fits are calibrate.cpp's.
#include <charconv>
#include <cstdint>
#include <functional>
#include <iostream>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <mpi.h>

#include <tlc/environment.hpp>

#include "calibrate.hpp"
#include "tlc_commit.hpp"  // TLC_COMMIT, stamped at build time

namespace {

constexpr const char* kUsage =
    "usage: mpiexec -n 2 tlc-calibrate [options]\n"
    "\n"
    "Fits tlc's cost model to this machine (Hockney-style; two processes or more for the\n"
    "inter-process terms) and writes a tuning file for TLC_TUNING, then prints predicted\n"
    "against measured times per algorithm and size (docs/model.md).\n"
    "\n"
    "  --output FILE      the tuning file to write (default tlc-tuning.txt)\n"
    "  --collective LIST  the collectives of the table, comma-separated (default\n"
    "                     allreduce,allgather,bcast,alltoall; reduce too)\n"
    "  --min-size S       smallest message of the table (default 8; 4K, 1M accepted)\n"
    "  --max-size S       largest message of the fits and of the table (default 64M)\n"
    "  --threads T        threads per process of the table's teams (default: tlc's)\n"
    "  --lanes L          lanes of the table's teams (default: tlc's)\n"
    "  --quick            a rough calibration in a small share of the time (one round, one\n"
    "                     repetition, short loops): shows the tool works; not a file to keep\n"
    "  --help             this text\n";

// "8", "4K", "64M", "1G": bytes, the suffixes powers of 1024 (the sizes tlc-bench reads).
std::size_t size_value(const std::string& option, const std::string& text) {
  const char* const end = text.data() + text.size();
  std::size_t value = 0;
  const auto [rest, error] = std::from_chars(text.data(), end, value);
  int shift = 0;
  if (rest != end) {
    const std::size_t unit = std::string_view("KMGkmg").find(*rest);
    shift = unit == std::string_view::npos || rest + 1 != end ? -1 : 10 * (1 + unit % 3);
  }
  if (error != std::errc() || shift < 0 || value > (SIZE_MAX >> shift))
    throw std::invalid_argument(option + " expects a size such as 8, 4K or 64M, got '" + text +
                                "'");
  return value << shift;
}

int positive_value(const std::string& option, const std::string& text) {
  const char* const end = text.data() + text.size();
  int value = 0;
  const auto [rest, error] = std::from_chars(text.data(), end, value);
  if (error != std::errc() || rest != end || value < 1)
    throw std::invalid_argument(option + " expects an integer >= 1, got '" + text + "'");
  return value;
}

// Options take their value from "--option=value" or from the next argument. Sets `help` and
// returns at once for --help.
tlc_calibrate::CalibrateOptions parse(int argc, char** argv, bool& help) {
  tlc_calibrate::CalibrateOptions o;
  const std::map<std::string, std::function<void(const std::string&)>> options = {
      {"--output", [&](const std::string& v) { o.output = v; }},
      {"--collective",
       [&](const std::string& v) {
         o.collectives.clear();
         std::istringstream list(v);
         for (std::string name; std::getline(list, name, ',');)
           if (!name.empty()) o.collectives.push_back(name);
       }},
      {"--min-size", [&](const std::string& v) { o.min_bytes = size_value("--min-size", v); }},
      {"--max-size", [&](const std::string& v) { o.max_bytes = size_value("--max-size", v); }},
      {"--threads", [&](const std::string& v) { o.threads = positive_value("--threads", v); }},
      {"--lanes", [&](const std::string& v) { o.lanes = positive_value("--lanes", v); }},
  };
  // Options without a value.
  const std::map<std::string, std::function<void()>> flags = {
      {"--quick",
       [&] {
         o.effort = 0.02;
         o.rounds = 1;
         o.reps = 1;
       }},
  };
  for (int i = 1; i < argc; ++i) {
    std::string name = argv[i];
    if (name == "--help" || name == "-h") {
      help = true;
      return o;
    }
    if (const auto flag = flags.find(name); flag != flags.end()) {
      flag->second();
      continue;
    }
    const std::size_t eq = name.rfind("--", 0) == 0 ? name.find('=') : std::string::npos;
    const auto option = options.find(name.substr(0, eq));
    if (option == options.end()) throw std::invalid_argument("unknown option '" + name + "'");
    if (eq != std::string::npos) {
      option->second(name.substr(eq + 1));
    } else if (i + 1 < argc) {
      option->second(argv[++i]);
    } else {
      throw std::invalid_argument(name + " needs a value");
    }
  }
  if (o.min_bytes > o.max_bytes)
    throw std::invalid_argument("--min-size is larger than --max-size");
  return o;
}

}  // namespace

int main(int argc, char** argv) {
  tlc::Environment env(argc, argv);
  bool help = false;
  std::string problem;
  tlc_calibrate::CalibrateOptions options;
  try {
    options = parse(argc, argv, help);
  } catch (const std::invalid_argument& e) {
    problem = e.what();
  }
  // The command line is the same on every process: process 0 alone answers.
  if (help || !problem.empty()) {
    int process = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &process);
    if (process == 0 && help) std::cout << kUsage;
    if (process == 0 && !help) std::cerr << "tlc-calibrate: " << problem << " (see --help)\n";
    return help ? 0 : 2;
  }
  options.header = {std::string("tlc-calibrate commit ") + TLC_COMMIT};
  return tlc_calibrate::run_calibrate(options);
}
