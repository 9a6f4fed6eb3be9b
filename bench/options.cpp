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
    } else if (arg == "--min-size") {
      o.min_size = parse_size(take());
    } else if (arg == "--max-size") {
      o.max_size = parse_size(take());
      o.max_size_set = true;
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
    } else if (arg == "--step") {
      o.step = static_cast<int>(parse_integer(arg, take(), 2));
    } else if (arg == "--out") {
      o.out = take();
      if (o.out.empty()) throw std::invalid_argument("--out needs a file name prefix");
    } else if (arg == "--no-in-place") {
      flag();
      o.in_place = false;
    } else if (arg == "--fresh-inputs") {
      flag();
      o.fresh_inputs = true;
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
    } else if (arg == "--lanes-sweep") {
      flag();
      o.lanes_sweep = true;
    } else if (arg == "--calibrate") {
      flag();
      o.calibrate = true;
    } else if (arg == "--output") {
      o.output = take();
    } else if (arg == "--skew") {
      flag();
      o.skew = true;
    } else if (arg == "--overlap") {
      flag();
      o.overlap = true;
    } else if (arg == "--everywhere") {
      flag();
      o.everywhere = true;
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
  if (!o.out.empty() && (csv || json))
    throw std::invalid_argument("--out writes the table, CSV and JSON at once; drop --csv/--json");
  if (o.intra && o.lanes)
    throw std::invalid_argument("--lanes has no meaning with --intra (a one-process team)");
  const int modes = (o.intra ? 1 : 0) + (o.algorithms ? 1 : 0) + (o.skew ? 1 : 0) +
                    (o.lanes_sweep ? 1 : 0) + (o.calibrate ? 1 : 0) +
                    (o.lane_mode.empty() ? 0 : 1) + (o.overlap ? 1 : 0);
  if (modes > 1)
    throw std::invalid_argument(
        "choose one mode of --intra, --algorithms, --lanes-sweep, --calibrate, --skew, "
        "--overlap, --lane-pattern and --multi-collective");
  if (o.skew && o.collective.empty()) o.collective = "all";
  if (o.skew && o.delay_us <= 0) throw std::invalid_argument("--delay-us must be positive");
  if (o.everywhere && !o.skew) throw std::invalid_argument("--everywhere is an option of --skew");
  if (o.fresh_inputs &&
      (o.skew || o.overlap || o.lanes_sweep || o.calibrate || !o.lane_mode.empty()))
    throw std::invalid_argument(
        "--fresh-inputs is an option of the sweeps (none, --intra, --algorithms)");
  if (o.overlap && json)
    throw std::invalid_argument("--overlap writes a table and CSV (--csv, --out), not JSON");
  if (csv) o.format = Format::csv;
  if (json) o.format = Format::json;
  if (o.min_size > o.max_size) throw std::invalid_argument("--min-size is larger than --max-size");
  return o;
}

std::string usage(const char* program) {
  return std::string("usage: mpiexec -n P ") + program +
         " [mode] [options]\n"
         "\n"
         "Measures tlc's collectives against the baselines a hybrid program would otherwise use,\n"
         "in the same run on the same data, every result checked element by element against a\n"
         "sequential reference (wrong elements: #wrong, stderr, exit code 3).\n"
         "\n"
         "Modes (one driver: they choose collectives, implementations and shape):\n"
         "  --intra            the main job: process 0 alone runs a team of T threads (-n T, one\n"
         "                     per core) against MPI everywhere (T processes), the OpenMP\n"
         "                     master-only pattern of T threads and the memory-bandwidth bound\n"
         "                     of the team's threads; every collective by default, sizes x4\n"
         "  (none)             across processes: a team on every process against raw MPI (one\n"
         "                     rank per process, the inter-process part alone) and master-only\n"
         "                     across processes; allreduce by default, sizes x2. Launch one\n"
         "                     process per node, or set TLC_NODE=process on one machine\n"
         "  --algorithms       the selector's choice against each algorithm forced in turn\n"
         "                     (a team each; inter-process ones across processes, the\n"
         "                     single-process ones in one) and raw MPI; allreduce by default\n"
         "  --lanes-sweep      threads per process and lanes (threads per rail): a team of t\n"
         "                     threads and l lanes on every process for t = 1..--threads\n"
         "                     (default 2), l = 1..--lanes (default 4); per size range the\n"
         "                     configuration this machine wants, by time / t (a process of t\n"
         "                     threads moves t rank buffers); heat map: bench/plot_lanes.gp\n"
         "  --calibrate        moved: the cost model's fit to this machine is the program\n"
         "                     tlc-calibrate, with the same options (docs/model.md)\n"
         "  --lane-pattern, --multi-collective: Traff & Hunold's lane benchmarks, see below\n"
         "  --skew             arrival imbalance, a program of its own, see below\n"
         "  --overlap          nonblocking collectives overlapped with computation (OSU's\n"
         "                     osu_iallreduce protocol), and persistent against blocking, see\n"
         "                     below\n"
         "\n"
         "  --collective LIST  a collective, a comma-separated list of them, or all:\n"
         "                     " +
         collective_names() +
         "\n"
         "  --min-size BYTES   smallest buffer per rank (default 8; suffixes K, M, G = 1024^n)\n"
         "  --max-size BYTES   largest buffer per rank (default 64M; always measured)\n"
         "  --step N           size factor between rows (default: 4 with --intra and\n"
         "                     --algorithms, else 2)\n"
         "  --threads N        threads per process (default: TLC_THREADS, else one per core of\n"
         "                     this process's share of the node; --intra: -n)\n"
         "  --lanes N          inter-process lanes of the tlc team (default: tlc's choice)\n"
         "  --algorithm NAME   force a tlc algorithm where the collective has it (--algorithms:\n"
         "                     A,B,... keeps only those forced algorithms)\n"
         "  --iters N          timed calls per size and implementation (default: adaptive,\n"
         "                     min(1 GiB / size, 0.2 s / warm-up time per call) in [4, 20000])\n"
         "  --warmup N         untimed calls before timing (default: iters/10 in [1, 100],\n"
         "                     cut short after 0.05 s)\n"
         "  --reps N           split the timed calls into N repetitions, those of all\n"
         "                     implementations taken in turn; times are the median repetition,\n"
         "                     ratios the median of the ratios within one (default 5)\n"
         "  --no-in-place      skip tlc's in-place forms (measured by default where they exist)\n"
         "  --fresh-inputs     every thread rewrites its input before each call (untimed), as an\n"
         "                     application computes its contribution: the input is in the\n"
         "                     writer's cache, modified, not as the last call left it; calls\n"
         "                     are then timed one by one (exit - arrival)\n"
         "  --skew-us N        thread t of T arrives t*N/T microseconds late at every call;\n"
         "                     times are then exit - arrival\n"
         "  --out PREFIX       write the table, CSV and JSON to PREFIX.txt, .csv, .json and\n"
         "                     print only progress and the summary (plot: bench/plot.gp)\n"
         "  --csv, --json      CSV or JSON on standard output instead of the table\n"
         "  --pin, --no-pin    pin tlc's threads or not (default: when each has its own PU;\n"
         "                     OpenMP follows OMP_PROC_BIND either way)\n"
         "  --help             this text\n"
         "\n"
         "Sizes are bytes per rank buffer of doubles: the send buffer (scatter: the receive\n"
         "buffer); alltoall and reduce_scatter_block cut it into one block per rank. Columns as\n"
         "OSU and nccl-tests print them: time (the slowest participant's mean per call), avg and\n"
         "min, algbw = size / time, busbw = algbw * nccl-tests' factor, #wrong; then each\n"
         "baseline's time and its time over tlc's (> 1: tlc faster), and bound/tlc, the fraction\n"
         "of the memory-bandwidth bound reached. The summary gives those ratios per collective at\n"
         "the smallest size, the size nearest 64 KiB and the largest, and checks that a\n"
         "collective is not slower than its decomposition (allreduce <= reduce + bcast, allgather\n"
         "<= gather + bcast, reduce_scatter_block <= reduce + scatter).\n"
         "\n"
         "--lane-pattern: Traff & Hunold's lane pattern: for k = 1..--lanes (default 4) threads,\n"
         "  each on its own communicator, every process sends --max-size bytes of ints to the\n"
         "  next one split over the k threads (MPI_Sendrecv, 10 rounds); time and ratio to k = 1.\n"
         "--multi-collective: k threads each run MPI_Alltoall of --max-size bytes on its own\n"
         "  communicator at once; ratio to k = 1 (1: lanes in parallel, k: serialised).\n"
         "\n"
         "--skew: mpiexec -n P " +
         std::string(program) +
         " --skew [--collective LIST|all] [--threads T]\n"
         "        [--sizes 64,64K,4M] [--skews none,uniform,exponential,late-leader,late-other]\n"
         "        [--delay-us D] [--seed S] [--iters N] [--reps R] [--everywhere]\n"
         "  Before every call all threads of all processes synchronise, then each sleeps a delay\n"
         "  drawn from a fixed seed per call and rank: none; uniform in [0, D]; exponential with\n"
         "  mean D; one late thread (a static leader: thread 0 of the last process) late by D;\n"
         "  one late thread that is not (the last thread of the last process). D defaults to\n"
         "  1000 us. For tlc with static leaders, tlc led by arrival (dynamic forced, where the\n"
         "  collective has it) and the OpenMP master-only pattern, all on the same delays and\n"
         "  data, it reports per collective and skew the mean time in the collective (exit - own\n"
         "  arrival) and the mean time after the last arrival, and their ratios to static leaders\n"
         "  (medians of the ratios within one repetition; N calls (default 20) per repetition, R\n"
         "  repetitions (default 5) taken in turn). --collective all: reduce, bcast, allreduce,\n"
         "  alltoall. Root 0, sums of doubles (alltoall: the size is a thread's whole buffer),\n"
         "  every call's result checked. --everywhere: launch P * T processes; every T-th runs\n"
         "  the teams, and all of them run MPI everywhere (one rank per process, the same ranks,\n"
         "  delays and data) as a fourth column. The processes must share a machine (their\n"
         "  clocks are compared): TLC_NODE=process. On an oversubscribed node set\n"
         "  OMP_WAIT_POLICY=passive, or the master-only threads spin on the others' cores.\n"
         "\n"
         "--overlap: mpiexec -n P*T " +
         std::string(program) +
         " --overlap [--threads T] [--collective allreduce|bcast|alltoall|all]\n"
         "        [--sizes 8,1K,64K,1M,16M] [--iters N] [--warmup N] [--reps R] [--out PREFIX]\n"
         "  OSU's overlap protocol (osu_iallreduce) per size and implementation: t_comm = start\n"
         "  and wait with nothing between; a busy loop calibrated to that t_comm on every thread;\n"
         "  t_total = start, the loop (t_compute, measured inside), wait; overlap % = 100 *\n"
         "  (t_comm + t_compute - t_total) / t_comm, at least 0 as OSU clamps it. For tlc (every\n"
         "  thread me.i<name>, computes, waits), MPI everywhere (P*T processes, one per thread,\n"
         "  MPI_I<name> on MPI_COMM_WORLD) and master-only (threads combine, thread 0 starts\n"
         "  MPI_I<name>, all compute, thread 0 waits, the threads copy out); and tlc's persistent\n"
         "  form (<name>_init once, start() + wait() per call) against its blocking call. Teams\n"
         "  of T threads (--threads, else TLC_THREADS, else -n) run on every T-th process, the\n"
         "  others sleep meanwhile; when T does not divide -n, on every process, without MPI\n"
         "  everywhere. Sizes: --sizes, else x8 from --min-size to --max-size (default 16M).\n"
         "  Times are the mean over all participants (OSU's); every checked call and the last\n"
         "  call of every timed loop is compared element by element with the reference.\n"
         "";
}

}  // namespace tlc_bench
