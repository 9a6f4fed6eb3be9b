// tlc-bench internals: options, the measurement protocol shared by every implementation, the
// registry of collectives and implementations (Cases), the one sweep loop and its reporters.
//
// Every mode of tlc-bench is a selection for the one driver (driver.cpp): which collectives,
// which implementations (columns), which shape and how the threads arrive:
//   --intra       process 0 alone runs a team of T threads; MPI everywhere runs T processes
//                 (the main job: one node, one thread per core)
//   (default)     a team on every process against raw MPI (one rank per process) and the
//                 master-only pattern across processes
//   --algorithms  a team per forced inter-process algorithm, and the selector's, against raw MPI
//   --lanes-sweep a team per (threads per process, lanes) configuration
//   --lane-pattern, --multi-collective  k = 1..L threads each on its own communicator
//   --skew        static against dynamic leaders, the master-only pattern and MPI everywhere,
//                 with the threads' arrivals delayed on purpose (Arrivals)
//   --calibrate   only says to run tlc-calibrate (tools/calibrate/), the cost model's fit
//   --overlap     a loop of its own (overlap.cpp): OSU's overlap protocol for the nonblocking
//                 calls of tlc, MPI everywhere and master-only, and tlc's persistent calls
// Adding a collective is one entry in collectives.cpp and its cases in cases.cpp.
#pragma once

#include <algorithm>
#include <chrono>
#include <climits>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <iosfwd>
#include <memory>
#include <new>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <mpi.h>

#include <tlc/tlc.hpp>

namespace tlc_bench {

// ---------------------------------------------------------------------------------------------
// Options

enum class Format { table, csv, json };

struct Options {
  std::string collective;           // "" : the mode's default
  std::size_t min_size = 8;         // bytes per thread buffer
  std::size_t max_size = 64 << 20;  // bytes per thread buffer
  bool max_size_set = false;        // --max-size given (--overlap's default range ends at 16M)
  int step = 0;                     // size factor between rows; 0: the mode's default
  int threads = 0;            // per process; 0: tlc's default (TLC_THREADS, else one per core)
  int lanes = 0;              // 0: tlc's default
  std::string algorithm;      // empty: tlc's selector decides
  std::optional<int> iters;   // unset: adaptive per size
  std::optional<int> warmup;  // unset: adaptive per size
  int reps = 5;               // the timed calls are split into reps; the median is reported
  double skew_us = 0;         // arrival skew spread over the threads of a process
  Format format = Format::table;
  std::string out;            // --out PREFIX: table, CSV and JSON into PREFIX.{txt,csv,json}
  bool in_place = true;       // measure tlc's in-place form too (where the collective has one)
  bool fresh_inputs = false;  // --fresh-inputs: every timed call's input just rewritten (Loop)
  std::optional<bool> pin;    // unset: tlc pins only when every thread gets its own PU
  bool intra = false;         // --intra: one process's team against MPI everywhere (main job)
  std::string lane_mode;      // --lane-pattern / --multi-collective: Traff's lane benchmarks
  bool algorithms = false;    // --algorithms: every inter-process algorithm against raw MPI
  bool lanes_sweep = false;   // --lanes-sweep: threads per process x lanes
  bool calibrate = false;     // --calibrate: moved to tlc-calibrate, which main() points to
  std::string output;         // --output: tlc-calibrate's, accepted so that --calibrate can say so
  bool skew = false;          // --skew: arrival imbalance, static against dynamic leaders
  bool everywhere =
      false;  // --skew --everywhere: MPI everywhere on the world, teams on every T-th process
  bool overlap = false;    // --overlap: nonblocking collectives overlapped with computation (OSU)
  double delay_us = 1000;  // --delay-us: the D of the --skew distributions
  unsigned seed = 1;       // --seed: of the --skew delays
  std::vector<std::size_t> skew_sizes;  // --sizes: of --skew (default 64 B, 64 KiB, 4 MiB) and
                                        // of --overlap (default x8 from --min-size to 16 MiB)
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

// Arrival imbalance on purpose (--skew; Parsons [Parsons] ch. 3.3, docs/imbalance.md): before
// every call all participants of all processes synchronise, then each sleeps its delay (sleeping,
// not spinning: a spinning thread would take the core the others need), drawn from a fixed seed
// per call and global rank, so that every implementation sees the same delays.
enum class Arrival {
  none,         // no delay (the synchronisation before every call stays)
  uniform,      // uniform in [0, D]
  exponential,  // exponential with mean D
  late_leader,  // thread 0 of the last process (a static leader) late by D
  late_other,   // the last thread of the last process late by D
};
inline constexpr Arrival all_arrivals[] = {Arrival::none, Arrival::uniform, Arrival::exponential,
                                           Arrival::late_leader, Arrival::late_other};
const char* to_string(Arrival a);
// "late-leader" -> Arrival::late_leader; throws std::invalid_argument naming the choices.
Arrival arrival_named(const std::string& name);

struct Arrivals {
  Arrival kind = Arrival::none;
  double delay_us = 1000;  // D
  unsigned seed = 1;
  int threads = 1;  // per process, the same on every process: where the last process starts
  // Seconds global rank `rank` of `ranks` sleeps before call `call`.
  double delay_seconds(int call, int rank, int ranks) const;
};

// One timed measurement: `warmup` untimed calls, a synchronisation of everybody, `iters` timed
// calls. With skew, thread t of T delays each call by t * skew_us / T microseconds. With
// arrivals, every call is synchronised, delayed, timed from the own arrival and checked
// (arrival_loop); its calls are numbered from first_call, the same for every implementation.
struct Loop {
  int warmup = 0;
  int iters = 1;
  double skew_us = 0;
  const Arrivals* arrivals = nullptr;
  int first_call = 0;
  // --fresh-inputs: each call's input rewritten by its thread just before the call, untimed
  bool fresh_inputs = false;
};

void inject_skew(int thread, int threads, double skew_us);

// Median of values (NaN when empty).
double median(std::vector<double> values);
// Timed calls of repetition r of `reps` when `iters` calls are split over them (at least one).
int calls_in(int iters, int reps, int r);

// Runs the loop on one thread and returns that thread's mean seconds per call. Without skew
// the whole loop is timed (OSU style). With skew each call is timed from arrival (after the
// thread's own delay) to exit, so a thread's delay is not counted as its own collective time;
// the earliest arrivers then measure the wait that the imbalance costs them. With fresh inputs
// refresh() rewrites the thread's input before every call, as an application computes its
// contribution before it calls, so that the input is in the writing core's cache, modified,
// and not in the state the previous call left it; each call is timed alone, without that write.
template <class Call, class Sync, class Refresh>
double timed_loop(const Loop& loop, int thread, int threads, Call&& call, Sync&& sync,
                  Refresh&& refresh) {
  for (int i = 0; i < loop.warmup; ++i) {
    if (loop.fresh_inputs) refresh();
    inject_skew(thread, threads, loop.skew_us);
    call();
  }
  sync();
  if (loop.skew_us <= 0 && !loop.fresh_inputs) {
    const Clock::time_point start = Clock::now();
    for (int i = 0; i < loop.iters; ++i) call();
    return seconds_since(start) / loop.iters;
  }
  double inside = 0;
  for (int i = 0; i < loop.iters; ++i) {
    if (loop.fresh_inputs) refresh();
    inject_skew(thread, threads, loop.skew_us);
    const Clock::time_point arrival = Clock::now();
    call();
    inside += seconds_since(arrival);
  }
  return inside / loop.iters;
}

// The same for implementations without an input to rewrite (the memory-bandwidth bound, lane
// patterns).
template <class Call, class Sync>
double timed_loop(const Loop& loop, int thread, int threads, Call&& call, Sync&& sync) {
  return timed_loop(loop, thread, threads, std::forward<Call>(call), std::forward<Sync>(sync),
                    [] {});
}

// One participant's calls under Arrivals: stamps in seconds of the steady clock, which the
// processes of one machine share (TLC_NODE=process), and its wrong elements.
struct ArrivalRecord {
  std::vector<double> arrival, exit;
  std::size_t wrong = 0;
  std::string first;  // the first wrong element, described
};

inline double steady_seconds() {
  return std::chrono::duration<double>(Clock::now().time_since_epoch()).count();
}

// Per call: reset() (poison the output, restore an in-place input), sync() (every participant of
// every process), the participant's delay, call() timed from arrival to exit, then
// verify(first) counts the output's wrong elements: every result is checked, and a thread that
// returns early is checked the moment it returns.
template <class Reset, class Call, class Verify, class Sync>
ArrivalRecord arrival_loop(const Loop& loop, int rank, int ranks, Reset&& reset, Call&& call,
                           Verify&& verify, Sync&& sync) {
  ArrivalRecord record;
  const auto calls = static_cast<std::size_t>(loop.iters);
  record.arrival.resize(calls);
  record.exit.resize(calls);
  for (std::size_t i = 0; i < calls; ++i) {
    reset();
    sync();
    const double delay =
        loop.arrivals->delay_seconds(loop.first_call + static_cast<int>(i), rank, ranks);
    if (delay > 0) std::this_thread::sleep_for(std::chrono::duration<double>(delay));
    record.arrival[i] = steady_seconds();
    call();
    record.exit[i] = steady_seconds();
    record.wrong += verify(record.first);
  }
  return record;
}

// Per-thread results on separate cache lines, so that threads finishing their loops do not
// disturb the ones still timing.
struct alignas(64) PaddedDouble {
  double value = 0;
};

// Seconds per call of one measurement, over the participants (threads, processes) that made
// it: the slowest one's mean (what the collective costs: OSU's and nccl-tests' time), the mean
// and the fastest.
// Under Arrivals the times are each participant's time in the collective (exit - own arrival),
// and two more figures come with them.
struct Timing {
  double max = 0;
  double avg = 0;
  double min = 0;
  double after = std::nan("");  // Arrivals: mean time after the latest arrival of anybody
  std::size_t wrong = 0;        // Arrivals: wrong elements in the timed calls
};
Timing summarise(const std::vector<PaddedDouble>& per_participant);
// Combines the Timings of the processes of comm (every process of it calls it).
Timing global_timing(const Timing& local, int participants_here, MPI_Comm comm = MPI_COMM_WORLD);
// The Timing of arrival loops, over the participants here and on every process of comm (every
// process of it calls it): per participant the mean time in the collective; after: exit - the
// latest arrival of the call on any process, 0 for a participant that left before it. Wrong
// elements are summed and the first described on stderr.
Timing arrival_timing(const std::vector<ArrivalRecord>& here, MPI_Comm comm);

// ---------------------------------------------------------------------------------------------
// Input data

// Contribution of global rank `rank` at element i. Small integers, so that every sum is exact
// in double and any summation order gives the same bits.
inline double input_value(int rank, std::size_t i) {
  return 1.0 + static_cast<double>((i + 3 * static_cast<std::size_t>(rank)) % 11);
}

// Fills a buffer that a check reads afterwards with NaN, so that an unwritten element fails.
void poison(double* data, std::size_t count);

// A buffer of doubles that is not touched on allocation, so that the thread that fills it first
// owns its pages (first touch decides NUMA placement). Page-aligned: glibc's memcpy takes
// `rep movsb` for mid-sized copies, which on some x86 cores runs an order of magnitude slower
// when destination and source are a few bytes apart modulo the page, as two heap blocks can be;
// every implementation gets the same alignment, so none wins by chance, and --calibrate's
// buffers are the same, so that the times it writes to a tuning file are those the sweeps see.
inline constexpr std::size_t kBufferAlignment = 4096;
struct AlignedDelete {
  void operator()(double* p) const noexcept {
    ::operator delete[](p, std::align_val_t{kBufferAlignment});
  }
};
using Buffer = std::unique_ptr<double[], AlignedDelete>;
inline Buffer untouched_buffer(std::size_t count) {
  return Buffer(static_cast<double*>(::operator new[](
      std::max<std::size_t>(count, 1) * sizeof(double), std::align_val_t{kBufferAlignment})));
}

// An element count as MPI's int count; larger buffers are refused with a clear error.
inline int mpi_count(std::size_t count) {
  if (count > static_cast<std::size_t>(INT_MAX))
    throw std::invalid_argument("buffers above INT_MAX elements are not supported by MPI here");
  return static_cast<int>(count);
}

// ---------------------------------------------------------------------------------------------
// The collectives (collectives.cpp)

enum class Kind {
  barrier,
  bcast,
  reduce,
  allreduce,
  allgather,
  alltoall,
  reduce_scatter_block,
  scan,
  exscan,
  gather,
  scatter
};

struct CollectiveDef {
  const char* name;
  Kind kind;
  tlc::Collective collective;
  const char* op;  // "sum" for the reductions, "-" otherwise
  int root;        // 0 for rooted collectives, -1 otherwise
  bool in_place;   // tlc has an in-place form worth measuring
  const char* tlc_what;
  const char* mpi_what;
  const char* moved_formula;    // bytes that must move in one process: T threads, n bytes each
  const char* type = "double";  // element type of the buffers
  std::size_t element_bytes = sizeof(double);
};

// Every collective, in the order of the main job.
const std::vector<CollectiveDef>& collectives();
const CollectiveDef* find_collective(const std::string& name);
std::string collective_names();

// The buffers of one rank of `ranks` when the size is n elements. Every rank block the same: n
// is the send buffer of one rank (scatter: its receive buffer); alltoall and
// reduce_scatter_block cut it into one block per rank (n a multiple of the ranks). Out of place:
// the send buffer and the receive buffer; in place: the one buffer, of which the first `output`
// elements are the result (bcast: its one buffer is the output; send is 0).
struct Layout {
  std::size_t send = 0;    // elements of the send buffer, or of the in-place buffer (0: none)
  std::size_t output = 0;  // elements of the result on this rank (0: none here)
};
Layout layout(Kind kind, std::size_t n, int ranks, int rank, bool in_place);

// What element i of rank `rank`'s output must be, every rank q contributing input_value(q, .).
class Reference {
 public:
  Reference(Kind kind, std::size_t n, int ranks);
  double at(int rank, std::size_t i) const;
  // Whether the collective defines rank `rank`'s output (not exscan's rank 0).
  bool defined(int rank) const { return kind_ != Kind::exscan || rank > 0; }

 private:
  double prefix(int rank, std::size_t i) const;  // sum over ranks 0..rank of input_value
  Kind kind_;
  std::size_t n_;
  int ranks_;
  std::vector<double> prefix_;  // [rank][i % 11]
};

// Fills rank `rank`'s send buffer (in place: the buffer before the call).
void fill_input(Kind kind, double* send, std::size_t n, int ranks, int rank, bool in_place);
// --fresh-inputs: a participant writes its input again before a call, as fill_input did: the
// send buffer, bcast's root its (receive) buffer; nothing for barrier or an empty call.
void refill_input(Kind kind, int root, double* send, double* recv, std::size_t n, int ranks,
                  int rank, bool in_place);
// Counts the wrong elements of an output, describing the first in `first` (if still empty).
// With step > 1: the first 64 elements, then every step-th, and the last ones.
std::size_t count_wrong(const Reference& ref, const double* out, std::size_t count, int rank,
                        const std::string& who, std::string& first, std::size_t step = 1);
// The step of the checks of timed calls (arrival_loop): every element of small outputs, every
// 64th of large ones, so that a check does not take the core of a thread still in the call.
inline std::size_t timed_check_step(std::size_t count) { return count > 4096 ? 64 : 1; }

// Bytes that must move in one process of T threads with n elements per thread buffer (the
// memory-bandwidth bound's numerator); 0 when nothing moves.
double moved_bytes(Kind kind, int threads, std::size_t n);
// nccl-tests' bus bandwidth factor for `ranks` ranks, applied to size / time where size is the
// per-rank buffer of the table (allgather and gather: the factor includes the R blocks).
double bus_factor(Kind kind, int ranks);
// Element counts of the sweep: --min-size up to --max-size in steps of `step`, the largest
// always included, rounded up to a multiple of `multiple`.
std::vector<std::size_t> element_counts(const Options& o, int step, std::size_t multiple);

// ---------------------------------------------------------------------------------------------
// Implementations (cases.cpp)

// One implementation of one collective. Members are called by the main thread of every process
// that takes part (everyone, or process 0 alone; see Column), in the same order everywhere.
class Case {
 public:
  virtual ~Case() = default;
  // Allocates and fills buffers of n elements per rank, each in the thread that uses it; 0 frees.
  virtual void prepare(std::size_t n) = 0;
  // Runs one call into poisoned outputs and counts wrong elements on this process; the first is
  // described in `first`.
  virtual std::size_t check(std::string& first) = 0;
  // Seconds per call, over every participant of every process taking part.
  virtual Timing time(const Loop& loop) = 0;
  // The algorithm it runs for n elements per rank ("" when it has none to tell).
  virtual std::string algorithm(std::size_t /*n*/) const { return {}; }
  // The whole plan it runs for n elements per rank (algorithm, form, chunk, lanes, leader): two
  // implementations with the same plan run the same code ("" when it has none to tell).
  virtual std::string plan(std::size_t /*n*/) const { return {}; }
  // The cost model's time of that algorithm's call (seconds), as the plan prices it; NaN when it
  // has none.
  virtual double predicted(std::size_t /*n*/) const { return std::nan(""); }
  // Ranks of the collective it runs (what n must be a multiple of for alltoall).
  virtual int ranks() const = 0;
};

enum class Role {
  subject,   // what the row is about: tlc (or the selector's choice)
  in_place,  // the subject's in-place form
  baseline,  // timed against the subject: ratio = baseline / subject
  bound,     // the memory-bandwidth bound: ratio = bound / subject (fraction reached)
};

struct Column {
  std::string key;    // CSV/JSON name: tlc, tlc_in_place, mpi_everywhere, master_only, bound, ...
  std::string label;  // header text
  Role role = Role::baseline;
  bool everywhere = true;  // every process takes part; false: process 0 alone
  std::unique_ptr<Case> impl;
  std::string note;  // why it is empty, when impl is null or it failed its check
  // Rank buffers a call processes per process (a team's threads), for comparing configurations
  // of different sizes by throughput: time / work.
  double work = 1;
  // With everywhere: the processes p with p % stride == 0 take part (--skew --everywhere: the
  // teams on every T-th process of the world, while MPI everywhere runs on all of them).
  int stride = 1;
  bool takes_part(int process) const { return everywhere ? process % stride == 0 : process == 0; }
};

// tlc on a team (on MPI_COMM_WORLD or MPI_COMM_SELF, or `comm`: the team's processes, for
// combining their timings); the team outlives the case.
std::unique_ptr<Case> make_tlc_case(const CollectiveDef& def, tlc::Team& team, bool in_place,
                                    MPI_Comm comm = MPI_COMM_WORLD);
// The matching MPI collective on `comm`, one buffer per process.
std::unique_ptr<Case> make_mpi_case(const CollectiveDef& def, MPI_Comm comm);
// The OpenMP master-only pattern: T threads combine through shared arrays, thread 0 calls MPI
// on `comm`, barriers around it.
std::unique_ptr<Case> make_master_case(const CollectiveDef& def, int threads, MPI_Comm comm);
// The memory-bandwidth bound of the team's threads (barrier: a bare spin barrier).
std::unique_ptr<Case> make_bound_case(const CollectiveDef& def, tlc::Team& team);

// ---------------------------------------------------------------------------------------------
// The driver (driver.cpp) and its reporters (report.cpp)

struct RunHeader {
  std::string mode;         // "--intra", "across processes", "--algorithms"
  std::string description;  // what the subject and the baselines are
  int processes = 0;
  int threads = 0;  // of the subject's team, per process
  int lanes = 0;
  bool pinned = false;
  std::string node_env;      // TLC_NODE as set, or "" when unset
  std::string mpi_version;   // full MPI_Get_library_version text
  std::string thread_level;  // MPI_THREAD_*
  std::string tlc_version;   // version and commit
  std::string topology;      // NUMA domains, cores, PUs of this node
  std::string placement;     // where the subject's threads run and which lanes they drive
  std::string options;       // the command line
  std::string iters_policy;  // how iterations were chosen
  std::string omp_env;       // OpenMP wait and binding settings (master-only baseline)
  double skew_us = 0;
  std::string arrivals;  // --skew: the delays, described ("" otherwise)
  int node_threads = 0;  // threads of all processes on rank 0's node
  int node_pus = 0;      // hardware threads of that node
};

struct Cell {
  Timing t;                           // medians over the repetitions
  double ratio = 0;                   // baseline or bound: median of ratios within one repetition
  double after_ratio = std::nan("");  // Arrivals: the same of the times after the last arrival
  std::size_t wrong = 0;  // wrong elements in its check (and timed calls), all processes
  int iters = 0;          // timed calls over all repetitions
  bool measured = false;
};

struct Row {
  std::string arrivals;       // the Arrival of the row ("" without --skew)
  std::size_t bytes = 0;      // per rank buffer (see Layout); 0 for barrier
  std::size_t count = 0;      // elements
  int ranks = 0;              // of the subject
  std::string algorithm;      // the subject's
  double moved = 0;           // bytes that must move (bound), 0 if none
  std::vector<Cell> cells;    // one per column, in column order
  double others_percent = 0;  // CPU taken by other processes meanwhile (NaN: unknown)
  double steal_percent = 0;
};

class Reporter {
 public:
  virtual ~Reporter() = default;
  virtual void begin(const RunHeader& header) = 0;
  // Once per collective, or per collective and Arrival under --skew (arrivals: its name, or "").
  virtual void begin_collective(const CollectiveDef& def, const std::vector<Column>& columns,
                                const std::string& arrivals) = 0;
  virtual void row(const Row& row) = 0;  // as soon as it is measured
  virtual void end_collective() = 0;
  virtual void end(double seconds, const std::vector<std::string>& findings) = 0;
};

std::unique_ptr<Reporter> make_table_reporter(std::ostream& out);
std::unique_ptr<Reporter> make_csv_reporter(std::ostream& out);
std::unique_ptr<Reporter> make_json_reporter(std::ostream& out);
// The short summary: per collective, the subject against each baseline at a small, a medium and
// the largest size, and the self-consistency findings.
std::unique_ptr<Reporter> make_summary_reporter(std::ostream& out);

// Runs one sweep; returns the exit code (3 when any result was wrong).
struct Sweep {
  RunHeader header;
  std::vector<const CollectiveDef*> collectives;
  int step = 2;
  // Columns of one collective, the subject first; built on every process alike.
  std::function<std::vector<Column>(const CollectiveDef&)> columns;
  // Name the fastest column per size range (the configuration this machine wants).
  bool recommend = false;
  // Judge the subject's choice against these columns (--algorithms: the forced algorithms): at
  // how many sizes it is within 10% of the fastest of them, and its predicted time within 25%.
  std::function<bool(const Column&, std::size_t count)> rival;
  // --skew: every collective once per Arrival, at these bytes per rank buffer, --iters calls per
  // repetition (default 20), every call synchronised, delayed and checked; ratios of the times
  // in the collective (avg) and after the last arrival instead of the slowest participant's.
  std::vector<Arrivals> arrivals;
  std::vector<std::size_t> sizes;
};
int run_sweep(const Options& o, Sweep& sweep);

// Modes (modes.cpp). make_header fills what every mode's header shares.
RunHeader make_header(const std::string& mode, const tlc::Environment& env);
// The commit tlc-bench was configured at (git describe).
std::string commit();
// "thread 0: core 0, NUMA 0, lanes 0; ..." of process 0's team.
std::string placement_text(const tlc::Team& team);
int run_intra(const Options& o, const tlc::Environment& env);
int run_across(const Options& o, const tlc::Environment& env);
int run_algorithms(const Options& o, const tlc::Environment& env);
int run_lanes_sweep(const Options& o, const tlc::Environment& env);
// --skew: arrival imbalance, static against dynamic leaders (modes.cpp, docs/imbalance.md).
int run_skew(const Options& o, const tlc::Environment& env);
// --overlap: nonblocking collectives overlapped with computation, OSU's protocol (overlap.cpp).
int run_overlap(const Options& o, const tlc::Environment& env);

// Helpers shared by the reporters.
std::string number(const char* fmt, double value);       // "-" for NaN
std::string json_number(const char* fmt, double value);  // null for NaN and inf
std::string json_string(const std::string& s);
std::string mpi_summary(const std::string& version);  // first line and device of the version
std::string size_text(std::size_t bytes);             // 8, 64K, 4M
// Every process of comm calls it; it returns when all have, without taking a core meanwhile.
void polite_barrier(MPI_Comm comm = MPI_COMM_WORLD);
// The "# key: value" lines every text report starts with.
std::vector<std::pair<std::string, std::string>> header_fields(const RunHeader& h);
// How much of the machine other processes and the hypervisor took between two samples
// (driver.cpp). cpu_sample() is collective over MPI_COMM_WORLD, meaningful on process 0;
// interference() returns percent of the machine (others, steal), NaN when unknown.
struct CpuSample {
  double user_s = -1;  // user and nice time of all CPUs, from /proc/stat; -1: unknown
  double steal_s = 0;
  double own_s = 0;  // user time of all processes of this run (on process 0)
  Clock::time_point wall{};
};
CpuSample cpu_sample();
std::pair<double, double> interference(const CpuSample& a, const CpuSample& b);
// Waits until libgomp's idle threads stop spinning after a parallel region (cases.cpp).
void settle_openmp();

// ---------------------------------------------------------------------------------------------
// Modes with cases of their own

// --lane-pattern / --multi-collective (lane_patterns.cpp): k = 1..--lanes threads, each on its
// own communicator, moving the row's bytes per process (split over them / each an alltoall).
int run_lane_benchmark(const Options& o, const tlc::Environment& env, bool pattern);

}  // namespace tlc_bench
