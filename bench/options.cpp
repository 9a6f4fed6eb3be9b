// Command line of tlc-bench.
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <stdexcept>

#include "bench.hpp"

namespace tlc_bench {

namespace {

long long parse_integer(const std::string& option, const std::string& text, long long min) {
  char* end = nullptr;
  errno = 0;
  const long long value = std::strtoll(text.c_str(), &end, 10);
  if (text.empty() || errno || *end || value < min || value > std::numeric_limits<int>::max())
    throw std::invalid_argument(option + " expects an integer >= " + std::to_string(min) +
                                ", got '" + text + "'");
  return value;
}

double parse_number(const std::string& option, const std::string& text) {
  char* end = nullptr;
  const double value = std::strtod(text.c_str(), &end);
  if (text.empty() || *end || !(value >= 0) || !std::isfinite(value))
    throw std::invalid_argument(option + " expects a non-negative number, got '" + text + "'");
  return value;
}

}  // namespace

std::size_t parse_size(const std::string& text) {
  std::size_t digits = 0;
  while (digits < text.size() && std::isdigit(static_cast<unsigned char>(text[digits]))) ++digits;
  const std::string suffix = text.substr(digits);
  int shift = -1;
  if (suffix.empty()) shift = 0;
  if (suffix == "K" || suffix == "k") shift = 10;
  if (suffix == "M" || suffix == "m") shift = 20;
  if (suffix == "G" || suffix == "g") shift = 30;
  if (digits == 0 || shift < 0)
    throw std::invalid_argument("'" + text + "' is not a size (bytes, or a number with K, M or G)");
  errno = 0;
  const unsigned long long value = std::strtoull(text.substr(0, digits).c_str(), nullptr, 10);
  if (errno || value > (std::numeric_limits<std::size_t>::max() >> shift))
    throw std::invalid_argument("size '" + text + "' is too large");
  return static_cast<std::size_t>(value) << shift;
}

Options parse_options(int argc, char** argv) {
  Options o;
  bool csv = false;
  bool json = false;
  bool collective_given = false;
  bool max_size_given = false;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    std::string value;
    bool has_value = false;
    if (const std::size_t eq = arg.find('='); arg.rfind("--", 0) == 0 && eq != std::string::npos) {
      value = arg.substr(eq + 1);
      arg = arg.substr(0, eq);
      has_value = true;
    }
    // Options with a value take it from "--opt=value" or from the next argument.
    auto take = [&]() -> std::string {
      if (has_value) return value;
      if (i + 1 >= argc) throw std::invalid_argument(arg + " needs a value");
      return argv[++i];
    };
    auto flag = [&] {
      if (has_value) throw std::invalid_argument(arg + " takes no value");
    };
    if (arg == "--collective") {
      o.collective = take();
      collective_given = true;
    } else if (arg == "--min-size") {
      o.min_size = parse_size(take());
    } else if (arg == "--max-size") {
      o.max_size = parse_size(take());
      max_size_given = true;
    } else if (arg == "--threads") {
      o.threads = static_cast<int>(parse_integer(arg, take(), 1));
    } else if (arg == "--lanes") {
      o.lanes = static_cast<int>(parse_integer(arg, take(), 1));
    } else if (arg == "--algorithm") {
      o.algorithm = take();
    } else if (arg == "--iters") {
      o.iters = static_cast<int>(parse_integer(arg, take(), 1));
    } else if (arg == "--warmup") {
      o.warmup = static_cast<int>(parse_integer(arg, take(), 0));
    } else if (arg == "--reps") {
      o.reps = static_cast<int>(parse_integer(arg, take(), 1));
    } else if (arg == "--skew-us") {
      o.skew_us = parse_number(arg, take());
    } else if (arg == "--csv") {
      flag();
      csv = true;
    } else if (arg == "--json") {
      flag();
      json = true;
    } else if (arg == "--pin") {
      flag();
      o.pin = true;
    } else if (arg == "--no-pin") {
      flag();
      o.pin = false;
    } else if (arg == "--intra") {
      flag();
      o.intra = true;
    } else if (arg == "--algorithms") {
      flag();
      o.algorithms = true;
    } else if (arg == "--skew") {
      flag();
      o.skew = true;
    } else if (arg == "--delay-us") {
      o.delay_us = parse_number(arg, take());
    } else if (arg == "--seed") {
      o.seed = static_cast<unsigned>(parse_integer(arg, take(), 0));
    } else if (arg == "--skews") {
      const std::string list = take() + ",";
      std::size_t from = 0;
      for (std::size_t comma; (comma = list.find(',', from)) != std::string::npos; from = comma + 1)
        if (comma > from) o.skews.push_back(list.substr(from, comma - from));
    } else if (arg == "--sizes") {
      const std::string list = take() + ",";
      std::size_t from = 0;
      for (std::size_t comma; (comma = list.find(',', from)) != std::string::npos; from = comma + 1)
        if (comma > from) o.skew_sizes.push_back(parse_size(list.substr(from, comma - from)));
    } else if (arg == "--lane-pattern" || arg == "--multi-collective") {
      flag();
      o.lane_mode = arg.substr(2);
    } else if (arg == "--help" || arg == "-h") {
      flag();
      o.help = true;
    } else {
      throw std::invalid_argument("unknown option '" + std::string(argv[i]) + "'");
    }
  }
  if (csv && json) throw std::invalid_argument("--csv and --json exclude each other");
  // --intra has its own defaults: every collective, up to the 16 MiB of its acceptance targets.
  if (o.intra && !collective_given) o.collective = "all";
  if (o.intra && !max_size_given) o.max_size = std::size_t{16} << 20;
  if (o.intra && o.lanes)
    throw std::invalid_argument("--lanes has no meaning with --intra (a one-process team)");
  if (o.algorithms && (o.intra || !o.lane_mode.empty()))
    throw std::invalid_argument(
        "--algorithms excludes --intra, --lane-pattern and --multi-collective");
  if (o.skew && (o.intra || o.algorithms || !o.lane_mode.empty()))
    throw std::invalid_argument("--skew excludes --intra, --algorithms and the lane benchmarks");
  if (o.skew && !collective_given) o.collective = "all";
  if (o.skew && o.delay_us <= 0) throw std::invalid_argument("--delay-us must be positive");
  if (csv) o.format = Format::csv;
  if (json) o.format = Format::json;
  if (o.min_size > o.max_size) throw std::invalid_argument("--min-size is larger than --max-size");
  return o;
}

std::string usage(const char* program) {
  return std::string("usage: mpiexec -n P ") + program +
         " [options]\n"
         "\n"
         "Measures tlc collectives against raw MPI and the OpenMP master-only pattern, in the\n"
         "same run on the same data. Launch one process per node, or set TLC_NODE=process when\n"
         "several processes share a machine.\n"
         "\n"
         "  --collective NAME  allreduce (default) or barrier (--intra, --algorithms: see below)\n"
         "  --min-size BYTES   smallest buffer per thread (default 8; suffixes K, M, G = 1024^n)\n"
         "  --max-size BYTES   largest buffer per thread (default 64M); sizes double from min\n"
         "                     (--algorithms: x4)\n"
         "  --threads N        threads per process (default: TLC_THREADS, else one per core\n"
         "                     of this process's share of the node)\n"
         "  --lanes N          inter-process lanes of the tlc team (default: tlc's choice)\n"
         "  --algorithm NAME   force a tlc algorithm for the collective (default: selector)\n"
         "  --iters N          timed calls per size and implementation (default: adaptive,\n"
         "                     min(256 MiB / size, 0.2 s / warm-up time per call) in [4, 1000])\n"
         "  --warmup N         untimed calls before timing (default: iters/10 in [1, 100],\n"
         "                     cut short after 0.05 s)\n"
         "  --reps N           split the timed calls into N repetitions and report the median\n"
         "                     repetition (default 5; 1: one OSU-style loop); the repetitions\n"
         "                     of tlc, MPI and master-only are taken in turn, and the ratios\n"
         "                     are medians of the ratios within one repetition\n"
         "  --skew-us N        thread t of T arrives t*N/T microseconds late at every call\n"
         "                     (tlc and master-only alike); times are then exit - arrival\n"
         "  --csv              CSV instead of the table\n"
         "  --json             JSON instead of the table\n"
         "  --pin              pin tlc's threads; an error if they do not fit on the PUs\n"
         "  --no-pin           do not pin tlc's threads (default: pin when every thread has\n"
         "                     its own PU; OpenMP follows OMP_PROC_BIND either way)\n"
         "  --intra            intra-process mode, see below\n"
         "  --algorithms       inter-process algorithm comparison, see below\n"
         "  --lane-pattern     Traff & Hunold's lane pattern: for k = 1..--lanes (default 4)\n"
         "                     threads, each on its own communicator, every process sends\n"
         "                     --max-size bytes of ints to the next one split over the k\n"
         "                     threads (MPI_Sendrecv, 10 rounds); time and ratio to k = 1\n"
         "  --multi-collective k threads each run MPI_Alltoall of --max-size bytes on its own\n"
         "                     communicator at once; ratio to k = 1 (1: lanes in parallel,\n"
         "                     k: serialised)\n"
         "  --skew             arrival imbalance, see below\n"
         "  --help             this text\n"
         "\n"
         "Sizes are bytes per thread buffer of doubles (rounded up to whole elements, at least\n"
         "one). A time is the maximum over all threads of all processes of the mean per call\n"
         "(median over the repetitions).\n"
         "\n"
         "--intra: mpiexec -n T " +
         std::string(program) +
         " --intra [--threads T] [--collective NAME] [--min-size ..] [--max-size ..]\n"
         "  Process 0 alone runs a team of T threads (tlc::Team on MPI_COMM_SELF) while the other\n"
         "  processes sleep in a polling MPI_Ibarrier, and compares each collective with\n"
         "  - the memory-bandwidth bound: bytes that must move / copy bandwidth, the copy\n"
         "    bandwidth measured in the same run by the same T threads, each memcpy'ing a\n"
         "    private buffer (the T buffers together as large as the collective's buffers);\n"
         "  - MPI everywhere: all T processes call the matching MPI collective on one buffer\n"
         "    each, of the same size (so -n must equal --threads; --threads defaults to -n);\n"
         "  - for allreduce: bare barriers of the same T threads (a sense-reversing spin barrier\n"
         "    on std::atomic, std::barrier, me.barrier()) against an 8-byte me.allreduce and\n"
         "    the same sum done with one cache line per thread and nothing else.\n"
         "  --collective: allreduce, reduce, bcast, allgather, alltoall, barrier (the barrier\n"
         "  table alone) or all (default). --max-size defaults to 16M. Bytes that must move, T\n"
         "  threads, n bytes per thread buffer (alltoall: per send buffer): allreduce 2*T*n,\n"
         "  reduce T*n + n, bcast T*n, allgather T*n + T*T*n, alltoall 2*T*n.\n"
         "  Iterations as above but up to 1 GiB / size and 20000 calls; the repetitions of tlc,\n"
         "  the copy and MPI are taken in turn. The barrier table makes 100000 calls per case\n"
         "  (--iters) in 5 * --reps interleaved rounds. Columns others% and steal% say how much\n"
         "  of the machine other processes and the hypervisor took while a row was measured.\n"
         "\n"
         "--algorithms: mpiexec -n P " +
         std::string(program) +
         " --algorithms [--collective NAME] [--threads T] [--lanes L] ...\n"
         "  For one collective (bcast, reduce, allreduce (default), allgather, alltoall,\n"
         "  reduce_scatter_block, scan, gather, scatter; root 0, std::plus<> over double),\n"
         "  measures in the same run raw MPI (the MPI collective on MPI_COMM_WORLD, one rank per\n"
         "  process, with the buffers of one tlc thread: the baseline for one thread per\n"
         "  process) and tlc with each inter-process algorithm of tlc::algorithms() forced in\n"
         "  turn (hierarchical, full_lane and the multi-sender ones registered for it), then\n"
         "  with the selector's choice (column selector; pick: what the selector chooses). One\n"
         "  team per algorithm, made once; --lanes sets the lanes of all of them. Sizes grow x4\n"
         "  from --min-size (not x2, to keep runs short), and --max-size is always measured.\n"
         "  Bytes are per thread buffer: the send buffer (scatter: the receive buffer);\n"
         "  alltoall and reduce_scatter_block cut it into one block per rank (rounded up to\n"
         "  whole elements per block). --algorithm A,B,... keeps only those forced algorithms.\n"
         "  Iterations, times and ratios as in the sweep: the repetitions of all\n"
         "  implementations are taken in turn and /mpi is the median of the ratios within one\n"
         "  repetition. Every implementation is checked once per size; one with a wrong result\n"
         "  is reported and left out of the later rows.\n"
         "\n"
         "--skew: mpiexec -n P " +
         std::string(program) +
         " --skew [--collective reduce|bcast|allreduce|all] [--threads T]\n"
         "        [--sizes 64,64K,4M] [--skews none,uniform,exponential,late-leader,late-other]\n"
         "        [--delay-us D] [--seed S] [--iters N] [--reps R]\n"
         "  Before every call all threads of all processes synchronise, then each sleeps a delay\n"
         "  drawn from a fixed seed per call and rank: none; uniform in [0, D]; exponential with\n"
         "  mean D; one late thread (a static leader: thread 0 of the last process) late by D;\n"
         "  one late thread that is not (the last thread of the last process). D defaults to\n"
         "  1000 us. For tlc with static leaders, tlc with leaders elected by arrival (forced\n"
         "  dynamic; bcast and reduce) and the master-only pattern, all on the same delays and\n"
         "  data, it reports the mean time in the collective (exit - own arrival) and the mean\n"
         "  time after the last arrival, and their ratios to static leaders (medians of the\n"
         "  ratios within one repetition; N calls (default 20) per repetition, R repetitions\n"
         "  (default 5) taken in turn). Root 0, sums of doubles, every result checked. The\n"
         "  processes must share a machine (their clocks are compared): TLC_NODE=process.\n";
}

}  // namespace tlc_bench
