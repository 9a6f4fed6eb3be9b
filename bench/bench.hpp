// tlc-bench internals: options, the measurement protocol shared by every implementation, and the
// Case interface. A collective is benchmarked as three Cases measured in the same run on the same
// input values: tlc itself, raw MPI (the inter-process part alone) and the OpenMP master-only
// pattern tlc replaces. Adding a collective means writing its three Cases and one table entry in
// main.cpp.
#pragma once

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstddef>
#include <iosfwd>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <tlc/tlc.hpp>

namespace tlc_bench {

// ---------------------------------------------------------------------------------------------
// Options

enum class Format { table, csv, json };

struct Options {
  std::string collective = "allreduce";
  std::size_t min_size = 8;         // bytes per thread buffer
  std::size_t max_size = 64 << 20;  // bytes per thread buffer
  int threads = 0;            // per process; 0: tlc's default (TLC_THREADS, else one per core)
  int lanes = 0;              // 0: tlc's default
  std::string algorithm;      // empty: tlc's selector decides
  std::optional<int> iters;   // unset: adaptive per size
  std::optional<int> warmup;  // unset: adaptive per size
  int reps = 5;               // the timed calls are split into reps; the median is reported
  double skew_us = 0;         // arrival skew spread over the threads of a process
  Format format = Format::table;
  std::optional<bool> pin;  // unset: tlc pins only when every thread gets its own PU
  bool intra = false;       // --intra: one process's team against the bandwidth bound and MPI
  std::string lane_mode;    // --lane-pattern / --multi-collective: Traff's lane benchmarks
  bool algorithms = false;  // --algorithms: every inter-process algorithm against raw MPI
  bool skew = false;        // --skew: arrival imbalance, static against dynamic leaders
  double delay_us = 1000;   // --delay-us: the D of the --skew distributions
  unsigned seed = 1;        // --seed: of the --skew delays
  std::vector<std::size_t> skew_sizes;  // --sizes: of --skew (default 64 B, 64 KiB, 4 MiB)
  std::vector<std::string> skews;       // --skews: of --skew (default: all)
  bool help = false;
};

// Throws std::invalid_argument naming the offending option.
Options parse_options(int argc, char** argv);
// "8", "4K", "64M", "1G" (powers of 1024, case-insensitive) -> bytes.
std::size_t parse_size(const std::string& text);
std::string usage(const char* program);

// ---------------------------------------------------------------------------------------------
// Measurement protocol

using Clock = std::chrono::steady_clock;

inline double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// One timed measurement: `warmup` untimed calls, a synchronisation of everybody, `iters` timed
// calls. With skew, thread t of T delays each call by t * skew_us / T microseconds.
struct Loop {
  int warmup = 0;
  int iters = 1;
  double skew_us = 0;
};

void inject_skew(int thread, int threads, double skew_us);

// Median of values (NaN when empty).
double median(std::vector<double> values);
// Timed calls of repetition r of `reps` when `iters` calls are split over them (at least one).
int calls_in(int iters, int reps, int r);

class Case;
// Adaptive iteration counts (unless --iters): min(bytes_per_measurement / size, 0.2 s / warm-up
// time per call), clamped to [4, max_iters]. The defaults are the sweep's.
struct IterationLimits {
  std::size_t bytes_per_measurement = std::size_t{256} << 20;
  int max_iters = 1000;
};
// Warms up and returns the number of timed calls (the same on every process).
int calibrate(Case& c, std::size_t bytes, const Options& o, const IterationLimits& limits);
// Element counts per thread buffer: --min-size doubling up to --max-size, duplicates dropped.
std::vector<std::size_t> element_counts(const Options& o);

// Runs the loop on one thread and returns that thread's mean seconds per call. Without skew
// the whole loop is timed (OSU style). With skew each call is timed from arrival (after the
// thread's own delay) to exit, so a thread's delay is not counted as its own collective time;
// the earliest arrivers then measure the wait that the imbalance costs them.
template <class Call, class Sync>
double timed_loop(const Loop& loop, int thread, int threads, Call&& call, Sync&& sync) {
  for (int i = 0; i < loop.warmup; ++i) {
    inject_skew(thread, threads, loop.skew_us);
    call();
  }
  sync();
  if (loop.skew_us <= 0) {
    const Clock::time_point start = Clock::now();
    for (int i = 0; i < loop.iters; ++i) call();
    return seconds_since(start) / loop.iters;
  }
  double inside = 0;
  for (int i = 0; i < loop.iters; ++i) {
    inject_skew(thread, threads, loop.skew_us);
    const Clock::time_point arrival = Clock::now();
    call();
    inside += seconds_since(arrival);
  }
  return inside / loop.iters;
}

// Per-thread results on separate cache lines, so that threads finishing their loops do not
// disturb the ones still timing.
struct alignas(64) PaddedDouble {
  double value = 0;
};

inline double max_of(const std::vector<PaddedDouble>& values) {
  double m = 0;
  for (const PaddedDouble& v : values) m = std::max(m, v.value);
  return m;
}

// MPI_Allreduce(MAX) over MPI_COMM_WORLD, from the calling (main) thread.
double global_max(double local);

// ---------------------------------------------------------------------------------------------
// Input data and verification

// Contribution of global rank `rank` at element i. Small integers, so that every sum is exact
// in double and any summation order gives the same bits.
inline double input_value(int rank, std::size_t i) {
  return 1.0 + static_cast<double>((i + 3 * static_cast<std::size_t>(rank)) % 11);
}

// The sum over ranks 0..ranks-1 of input_value; periodic in i with period 11.
class Expected {
 public:
  explicit Expected(int ranks);
  double at(std::size_t i) const { return sums_[i % sums_.size()]; }

 private:
  std::vector<double> sums_;
};

// who + "element i of count is got, expected want".
std::string mismatch_text(std::size_t i, std::size_t count, double got, double want,
                          const std::string& who);

// "" if out[i] == want(i) for every i < count, else mismatch_text of the first that differs.
// Exact on purpose: the benchmarks' inputs make every result exact (NaN poison fails too).
template <class Want>
std::string first_mismatch(const double* out, std::size_t count, Want&& want,
                           const std::string& who) {
  for (std::size_t i = 0; i < count; ++i)
    if (const double w = want(i); !(out[i] == w)) return mismatch_text(i, count, out[i], w, who);
  return {};
}

// Fills a buffer that a check reads afterwards with NaN, so that an unwritten element fails.
void poison(double* data, std::size_t count);

// "" if recv[0..count) matches, else a description of the first mismatch.
std::string check_sum(const double* recv, std::size_t count, const Expected& expected,
                      const std::string& who);

// A buffer of doubles that is not touched on allocation, so that the thread that fills it first
// owns its pages (first touch decides NUMA placement).
using Buffer = std::unique_ptr<double[]>;
inline Buffer untouched_buffer(std::size_t count) {
  return Buffer(new double[std::max<std::size_t>(count, 1)]);
}

// ---------------------------------------------------------------------------------------------
// Cases

struct Context {
  tlc::Team& team;
  int threads;    // per process
  int process;    // rank in MPI_COMM_WORLD
  int processes;  // size of MPI_COMM_WORLD
};

// One implementation of one collective. Every member is called on every process by the main
// thread, in the same order (the members are collective over MPI_COMM_WORLD).
class Case {
 public:
  virtual ~Case() = default;
  // Allocates and fills buffers of `count` elements, each in the thread that will use it.
  virtual void prepare(std::size_t count) = 0;
  // Seconds per call: the maximum over all threads of all processes of the per-thread mean.
  virtual double time(const Loop& loop) = 0;
  // Runs one call into poisoned receive buffers and checks the result on this process. Returns
  // "" or what went wrong.
  virtual std::string verify() { return {}; }
};

using CaseFactory = std::unique_ptr<Case> (*)(const Context&);

struct CollectiveSpec {
  const char* name;
  tlc::Collective kind;     // for --algorithm
  bool sized;               // false: a single row without payload (barrier)
  const char* what;         // header description of the tlc call
  const char* mpi_what;     // header description of the raw MPI baseline
  const char* master_what;  // header description of the master-only baseline
  CaseFactory tlc;
  CaseFactory mpi;
  CaseFactory master;
};

// tlc_cases.cpp
std::unique_ptr<Case> make_tlc_allreduce(const Context& ctx);
std::unique_ptr<Case> make_tlc_barrier(const Context& ctx);
// baselines.cpp
std::unique_ptr<Case> make_mpi_allreduce(const Context& ctx);
std::unique_ptr<Case> make_mpi_barrier(const Context& ctx);
std::unique_ptr<Case> make_master_allreduce(const Context& ctx);
std::unique_ptr<Case> make_master_barrier(const Context& ctx);

// ---------------------------------------------------------------------------------------------
// Reporting

struct RunInfo {
  const CollectiveSpec* spec = nullptr;
  int processes = 0;
  int threads = 0;
  int lanes = 0;
  bool pinned = false;
  std::string node_env;      // TLC_NODE as set, or "" when unset
  std::string mpi_version;   // full MPI_Get_library_version text
  std::string thread_level;  // MPI_THREAD_*
  std::string algorithm;     // forced tlc algorithm or ""
  std::string iters_policy;  // how iterations were chosen
  double skew_us = 0;
  std::string omp_env;   // OpenMP wait and binding settings, for the master-only baseline
  int node_threads = 0;  // threads of all processes on rank 0's node
  int node_pus = 0;      // hardware threads of that node
};

struct Row {
  std::size_t bytes = 0;  // per thread buffer; 0 for payload-free collectives
  int iters = 0;
  double tlc_s = 0;  // median repetition of each implementation
  double mpi_s = 0;
  double master_s = 0;
  // Medians over the repetitions of tlc's time over the baseline's in the same repetition.
  double tlc_over_mpi = 0;
  double tlc_over_master = 0;
};

class Reporter {
 public:
  virtual ~Reporter() = default;
  virtual void begin(const RunInfo& info) = 0;
  virtual void row(const Row& row) = 0;  // called as soon as a row is measured
  virtual void end() = 0;
};

std::unique_ptr<Reporter> make_reporter(Format format, std::ostream& out);

// report.cpp helpers shared with --intra.
std::string number(const char* fmt, double value);       // "-" for NaN
std::string json_number(const char* fmt, double value);  // null for NaN and inf
std::string json_string(const std::string& s);
std::string mpi_summary(const std::string& version);  // first line and device of the version

// An element count as MPI's int count; larger buffers are refused with a clear error.
inline int mpi_count(std::size_t count) {
  if (count > static_cast<std::size_t>(INT_MAX))
    throw std::invalid_argument("buffers above INT_MAX elements are not supported by MPI here");
  return static_cast<int>(count);
}

// ---------------------------------------------------------------------------------------------
// --intra (intra.cpp): the threads of one process against the memory-bandwidth bound of the
// same threads and against MPI everywhere (one process per thread). Returns the exit code.
int run_intra(const Options& o, const tlc::Environment& env);

// --algorithms (algorithms.cpp): for one collective, raw MPI (one rank per process) against tlc
// with each inter-process algorithm forced in turn and with the selector's choice, one team
// each, sizes in x4 steps. Returns the exit code.
int run_algorithms(const Options& o, const tlc::Environment& env);
// tlc-bench --skew (skew.cpp).
int run_skew(const Options& o);

// --lane-pattern / --multi-collective (lane_patterns.cpp): k = 1..max_lanes threads, each on its
// own communicator, moving `count` ints per process (split over them / each an alltoall).
int run_lane_benchmark(const std::string& mode, int max_lanes, std::size_t count, int rounds,
                       int repetitions);

// Nanoseconds per plan lookup for a team of this shape (bench/plan_cost.cpp).
struct PlanLookup {
  double per_call_ns = 0;  // the thread's plan cache, as every call asks it
  double planner_ns = 0;   // Planner::plan itself, what a cache miss costs
};
PlanLookup plan_lookup_ns(int processes, int threads, int lanes, tlc::Collective collective,
                          std::size_t bytes);

}  // namespace tlc_bench
