// tlc-bench: OSU-style sweeps of tlc collectives against raw MPI and the OpenMP master-only
// pattern, all measured in the same run on the same data (DESIGN.md section 8).
//
// Protocol per size, identical for every implementation: allocate and fill buffers in the
// threads that use them, verify one call into poisoned buffers, warm up, then time loops that
// start after a global synchronisation. A loop's time is the maximum over all threads of all
// processes of the per-thread mean, as OSU reports the slowest rank; the timed calls are split
// into a few such loops (repetitions), those of tlc, MPI and master-only taken in turn, and the
// median loop is reported, with ratios that are medians of the ratios within one repetition.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <span>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <mpi.h>

#include "bench.hpp"

namespace tlc_bench {

namespace {

// The benchmarked collectives. A new collective is three Cases and one line here.
const CollectiveSpec kCollectives[] = {
    {"allreduce", tlc::Collective::allreduce, true,
     "every thread: me.allreduce(send, recv, std::plus<>) over double",
     "main thread: MPI_Allreduce(SUM) on one buffer per process (inter-process part alone)",
     "omp for sums the thread buffers into a shared array; barrier; master "
     "MPI_Allreduce(IN_PLACE); barrier; every thread copies out",
     make_tlc_allreduce, make_mpi_allreduce, make_master_allreduce},
    {"barrier", tlc::Collective::barrier, false, "every thread: me.barrier()",
     "main thread: MPI_Barrier", "omp barrier; master MPI_Barrier; omp barrier", make_tlc_barrier,
     make_mpi_barrier, make_master_barrier},
};

const CollectiveSpec* find_collective(const std::string& name) {
  for (const CollectiveSpec& spec : kCollectives)
    if (name == spec.name) return &spec;
  return nullptr;
}

std::string collective_names() {
  std::string names;
  for (const CollectiveSpec& spec : kCollectives)
    names += (names.empty() ? "" : ", ") + std::string(spec.name);
  return names;
}

// Adaptive iteration counts, OSU style: many calls for small sizes (latency bound, noisy), few
// for large ones (bandwidth bound, stable). The byte budget bounds the data moved per
// measurement; the time budgets keep a slow implementation or an oversubscribed machine from
// turning the default sweep into minutes. Each implementation gets its own count, so a slow
// baseline does not cost tlc its statistics.
constexpr double kSecondsPerMeasurement = 0.2;
constexpr double kSecondsPerWarmup = 0.05;
constexpr int kMinIters = 4;

int default_iters(std::size_t bytes, const IterationLimits& limits) {
  const std::size_t by_bytes = limits.bytes_per_measurement / std::max<std::size_t>(bytes, 1);
  return static_cast<int>(
      std::clamp<std::size_t>(by_bytes, kMinIters, static_cast<std::size_t>(limits.max_iters)));
}

int default_warmup(int iters) { return std::clamp(iters / 10, 1, 100); }

std::string iteration_policy(const Options& o) {
  const std::string iters = o.iters ? "fixed " + std::to_string(*o.iters)
                                    : "adaptive per implementation (iters column: tlc's)";
  const std::string warmup = o.warmup ? std::to_string(*o.warmup) : "adaptive";
  return iters + ", median of " + std::to_string(o.reps) +
         " repetitions, those of tlc, MPI and master-only taken in turn, warm-up " + warmup;
}

}  // namespace

// Warms one implementation up and returns its number of timed calls. Every time() returns the
// maximum over all processes that measure it, so they all derive the same counts.
int calibrate(Case& c, std::size_t bytes, const Options& o, const IterationLimits& limits) {
  int iters = o.iters.value_or(default_iters(bytes, limits));
  const int warmup = o.warmup.value_or(default_warmup(iters));
  if (warmup > 0) {
    // The first call pays for page faults and connection set-up: keep it out of the estimate.
    double per_call = c.time({0, 1, o.skew_us});
    if (warmup > 1) {
      int more = warmup - 1;
      if (!o.warmup)
        more = static_cast<int>(
            std::clamp(kSecondsPerWarmup / per_call, 1.0, static_cast<double>(more)));
      per_call = c.time({0, more, o.skew_us});
    }
    if (!o.iters && per_call > 0) {
      const double affordable = kSecondsPerMeasurement / per_call;
      iters = static_cast<int>(std::clamp(std::min(affordable, static_cast<double>(iters)),
                                          static_cast<double>(kMinIters),
                                          static_cast<double>(limits.max_iters)));
    }
  }
  return iters;
}

// Sizes double from --min-size to --max-size; sizes that round to the same element count run once.
std::vector<std::size_t> element_counts(const Options& o) {
  std::vector<std::size_t> counts;
  for (std::size_t bytes = std::max<std::size_t>(o.min_size, 1); bytes <= o.max_size;) {
    const std::size_t count =
        std::max<std::size_t>((bytes + sizeof(double) - 1) / sizeof(double), 1);
    if (counts.empty() || counts.back() != count) counts.push_back(count);
    if (bytes > o.max_size / 2) break;
    bytes *= 2;
  }
  return counts;
}

namespace {

// The settings that decide how the master-only baseline waits and where its threads run.
std::string openmp_environment() {
  std::string text;
  for (const char* name : {"OMP_WAIT_POLICY", "GOMP_SPINCOUNT", "OMP_PROC_BIND", "OMP_PLACES"}) {
    const char* value = std::getenv(name);
    text += (text.empty() ? "" : ", ") + std::string(name) + "=" + (value ? value : "(unset)");
  }
  return text;
}

[[noreturn]] void fail_verification(const CollectiveSpec& spec, std::size_t bytes,
                                    const std::string& what) {
  std::fprintf(stderr, "tlc-bench: WRONG RESULT in %s with %zu bytes per thread: %s\n", spec.name,
               bytes, what.c_str());
  std::fflush(stderr);
  MPI_Abort(MPI_COMM_WORLD, 3);
  std::abort();
}

void sweep(const Options& o, const CollectiveSpec& spec, tlc::Team& team,
           const tlc::Environment& env) {
  int process = 0;
  int processes = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &process);
  MPI_Comm_size(MPI_COMM_WORLD, &processes);
  const Context ctx{team, team.threads(), process, processes};
  // Same order in every row; the slot index is also the column (tlc, mpi, master).
  std::unique_ptr<Case> cases[] = {spec.tlc(ctx), spec.mpi(ctx), spec.master(ctx)};

  std::unique_ptr<Reporter> reporter = make_reporter(o.format, std::cout);
  RunInfo info;
  info.spec = &spec;
  info.processes = processes;
  info.threads = team.threads();
  info.lanes = team.lanes();
  info.pinned = team.placement().pinned;
  if (const char* node = std::getenv("TLC_NODE")) info.node_env = node;
  info.mpi_version = tlc::Environment::mpi_library_version();
  info.thread_level = tlc::Environment::thread_level_name(env.thread_level());
  info.algorithm = o.algorithm;
  info.iters_policy = iteration_policy(o);
  info.skew_us = o.skew_us;
  info.omp_env = openmp_environment();
  // Oversubscription decides small-message times (whoever spins steals the core the awaited
  // thread needs), so the header says when the node running rank 0 is oversubscribed.
  MPI_Comm node = MPI_COMM_NULL;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
  int node_processes = 1;
  MPI_Comm_size(node, &node_processes);
  MPI_Comm_free(&node);
  info.node_threads = node_processes * team.threads();
  info.node_pus = static_cast<int>(std::thread::hardware_concurrency());
  if (process == 0) reporter->begin(info);

  const Clock::time_point start = Clock::now();
  const std::vector<std::size_t> counts =
      spec.sized ? element_counts(o) : std::vector<std::size_t>{0};
  for (const std::size_t count : counts) {
    const std::size_t bytes = count * sizeof(double);
    for (auto& c : cases) c->prepare(count);
    for (auto& c : cases)
      if (std::string what = c->verify(); !what.empty()) fail_verification(spec, bytes, what);

    // Each implementation is warmed up and gets its own iteration count; then the repetitions
    // of the three are taken in turn, each after one untimed call, the order rotating. On a
    // shared machine memory and network speed drift within seconds: timing tlc and MPI moments
    // apart, and taking the median of the ratios within a repetition, keeps the drift out of
    // the ratios (all repetitions of one implementation before the next one's did not).
    int iters[3];
    for (int k = 0; k < 3; ++k) iters[k] = calibrate(*cases[k], bytes, o, IterationLimits{});
    const int reps = std::max(o.reps, 1);
    std::vector<double> seconds[3], over_mpi, over_master;
    for (int r = 0; r < reps; ++r) {
      for (int step = 0; step < 3; ++step) {
        const int k = (step + r) % 3;
        seconds[k].push_back(cases[k]->time({1, calls_in(iters[k], reps, r), o.skew_us}));
      }
      over_mpi.push_back(seconds[0].back() / seconds[1].back());
      over_master.push_back(seconds[0].back() / seconds[2].back());
    }
    Row row;
    row.bytes = spec.sized ? bytes : 0;
    row.iters = iters[0];
    row.tlc_s = median(seconds[0]);
    row.mpi_s = median(seconds[1]);
    row.master_s = median(seconds[2]);
    row.tlc_over_mpi = median(over_mpi);
    row.tlc_over_master = median(over_master);
    if (process == 0) reporter->row(row);
  }
  if (process == 0) {
    reporter->end();
    if (o.format == Format::table) {
      // Choosing what runs is a table lookup per call; set its cost against the calls above.
      for (const std::size_t count : {counts.front(), counts.back()}) {
        const PlanLookup cost = plan_lookup_ns(processes, team.threads(), team.lanes(), spec.kind,
                                               count * sizeof(double));
        std::printf(
            "# plan lookup per call at %zu B (this shape): %.1f ns (the thread's plan cache; "
            "Planner::plan on a miss: %.1f ns)\n",
            count * sizeof(double), cost.per_call_ns, cost.planner_ns);
      }
      std::printf("# sweep took %.1f s\n", seconds_since(start));
    }
    std::fflush(stdout);
  }
}

}  // namespace

}  // namespace tlc_bench

int main(int argc, char** argv) {
  using namespace tlc_bench;
  tlc::Environment env(argc, argv);
  int process = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &process);

  // Problems with the command line are the same on every process: report once, exit cleanly.
  Options options;
  try {
    options = parse_options(argc, argv);
  } catch (const std::invalid_argument& e) {
    if (process == 0) std::cerr << "tlc-bench: " << e.what() << " (see --help)\n";
    return 2;
  }
  if (options.help) {
    if (process == 0) std::cout << usage(argv[0]);
    return 0;
  }
  if (options.intra) return run_intra(options, env);
  if (options.algorithms) return run_algorithms(options, env);
  if (options.skew) return run_skew(options);
  if (!options.lane_mode.empty())
    return run_lane_benchmark(options.lane_mode, options.lanes > 0 ? options.lanes : 4,
                              std::max<std::size_t>(options.max_size / sizeof(int), 1), 10,
                              options.reps > 1 ? 4 * options.reps : 20);
  const CollectiveSpec* spec = find_collective(options.collective);
  if (!spec) {
    if (process == 0)
      std::cerr << "tlc-bench: unknown collective '" << options.collective
                << "' (available: " << collective_names() << ")\n";
    return 2;
  }

  tlc::TeamOptions team_options;
  team_options.threads = options.threads;
  team_options.lanes = options.lanes;
  team_options.pin = options.pin;
  if (!options.algorithm.empty()) team_options.algorithms[spec->kind] = options.algorithm;

  // Team construction agrees on errors across processes, so they can be reported once too.
  std::unique_ptr<tlc::Team> team;
  try {
    team = std::make_unique<tlc::Team>(MPI_COMM_WORLD, team_options);
  } catch (const std::exception& e) {
    if (process == 0) std::cerr << "tlc-bench: cannot build the team: " << e.what() << "\n";
    return 1;
  }

  // Later failures may hit one process only while the others wait in a collective.
  try {
    sweep(options, *spec, *team, env);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tlc-bench: process %d: %s\n", process, e.what());
    std::fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  return 0;
}
