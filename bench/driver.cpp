// The one sweep loop of tlc-bench. Per collective and size, identical for every implementation
// (column) of the selection:
//   1. prepare: buffers allocated and filled by the threads that use them (first touch);
//   2. check: one call into poisoned outputs, every element compared with the sequential
//      reference; wrong elements are counted (#wrong), reported on stderr, and make the exit
//      code 3, as nccl-tests does;
//   3. warm-up and an iteration count per implementation (adaptive unless --iters: at most
//      1 GiB / size and 0.2 s / warm-up time per call, in [4, 20000]);
//   4. the timed calls split into --reps repetitions, those of all implementations taken in
//      turn (the order rotating); a repetition's time is the slowest participant's mean per call
//      (also the mean and fastest participants'). Reported: the median repetition, and ratios
//      that are medians of the ratios within one repetition, so that the drift of a shared
//      machine's memory and network speed stays out of them.
// Implementations that only process 0 runs (the main job's team, master-only and bound) are
// measured while the other processes wait in a polling MPI_Ibarrier with 1 ms sleeps, so that
// they do not take a core from the measured threads.
// Under --skew (Sweep::arrivals) each collective is swept once per Arrival; step 3 is a fixed
// --iters calls per repetition (default 20), and every timed call is synchronised, delayed and
// checked (arrival_loop), repetition r taking calls r * iters.. so that every implementation
// sees the same delays.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <map>
#include <random>
#include <thread>

#include <sys/resource.h>
#include <unistd.h>

#include "bench.hpp"

namespace tlc_bench {

void inject_skew(int thread, int threads, double skew_us) {
  if (skew_us <= 0 || thread == 0) return;
  const auto until =
      Clock::now() + std::chrono::duration<double, std::micro>(skew_us * thread / threads);
  // Sleeping is far too coarse at microsecond scale, so wait by polling the clock; yielding
  // while doing so gives the core to threads with real work when the machine is oversubscribed.
  while (Clock::now() < until) std::this_thread::yield();
}

const char* to_string(Arrival a) {
  switch (a) {
    case Arrival::none:
      return "none";
    case Arrival::uniform:
      return "uniform";
    case Arrival::exponential:
      return "exponential";
    case Arrival::late_leader:
      return "late-leader";
    case Arrival::late_other:
      return "late-other";
  }
  return "?";
}

Arrival arrival_named(const std::string& name) {
  for (const Arrival a : all_arrivals)
    if (name == to_string(a)) return a;
  throw std::invalid_argument("unknown skew '" + name +
                              "' (none, uniform, exponential, late-leader, late-other)");
}

double Arrivals::delay_seconds(int call, int rank, int ranks) const {
  std::mt19937_64 random(seed * 1000003ull + static_cast<unsigned>(call) * 7919ull +
                         static_cast<unsigned>(rank));
  const double d = delay_us * 1e-6;
  switch (kind) {
    case Arrival::none:
      return 0;
    case Arrival::uniform:
      return std::uniform_real_distribution<double>(0, d)(random);
    case Arrival::exponential:
      return std::exponential_distribution<double>(1 / d)(random);
    case Arrival::late_leader:
      return rank == ranks - threads ? d : 0;
    case Arrival::late_other:
      return rank == ranks - 1 ? d : 0;
  }
  return 0;
}

double median(std::vector<double> values) {
  if (values.empty()) return std::nan("");
  std::sort(values.begin(), values.end());
  const std::size_t mid = values.size() / 2;
  return values.size() % 2 ? values[mid] : (values[mid - 1] + values[mid]) / 2;
}

int calls_in(int iters, int reps, int r) {
  return std::max(1, iters / reps + (r < iters % reps ? 1 : 0));
}

namespace {

// ---------------------------------------------------------------------------------------------
// Is anybody else using the machine? On a shared machine (a developer's, CI's) a compiler on one
// of two cores halves what both sides can do; each row says how much of the machine others
// took while it was measured:
// - others%: user time of other processes. User time only: the kernel time of our own wake-ups
//   is not attributed to any process and would read as somebody else's.
// - steal%: time the hypervisor ran something else while a virtual CPU of ours wanted to run.

void read_proc_stat(CpuSample& s) {
  std::FILE* f = std::fopen("/proc/stat", "r");
  if (!f) return;
  unsigned long long v[8] = {};  // user nice system idle iowait irq softirq steal
  const int got = std::fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2],
                              &v[3], &v[4], &v[5], &v[6], &v[7]);
  std::fclose(f);
  const long hz = sysconf(_SC_CLK_TCK);
  if (got < 2 || hz <= 0) return;
  s.user_s = static_cast<double>(v[0] + v[1]) / static_cast<double>(hz);
  s.steal_s = got >= 8 ? static_cast<double>(v[7]) / static_cast<double>(hz) : 0;
}

}  // namespace

// Collective over MPI_COMM_WORLD; meaningful on process 0.
CpuSample cpu_sample() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  const double mine = static_cast<double>(usage.ru_utime.tv_sec) +
                      1e-6 * static_cast<double>(usage.ru_utime.tv_usec);
  CpuSample s;
  MPI_Reduce(&mine, &s.own_s, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
  read_proc_stat(s);
  s.wall = Clock::now();
  return s;
}

// Percent of the machine's CPU capacity taken by others and by the hypervisor; NaN: unknown.
std::pair<double, double> interference(const CpuSample& a, const CpuSample& b) {
  const double cpus = std::thread::hardware_concurrency();
  const double capacity = std::chrono::duration<double>(b.wall - a.wall).count() * cpus;
  if (a.user_s < 0 || b.user_s < 0 || capacity <= 0) return {std::nan(""), std::nan("")};
  return {std::max(0.0, 100.0 * ((b.user_s - a.user_s) - (b.own_s - a.own_s)) / capacity),
          std::max(0.0, 100.0 * (b.steal_s - a.steal_s) / capacity)};
}

namespace {

// ---------------------------------------------------------------------------------------------
// Iteration counts

// Adaptive, OSU style: many calls for small sizes (latency bound, noisy), few for large ones
// (bandwidth bound, stable). The byte budget bounds the data moved per measurement; the time
// budgets keep a slow implementation or an oversubscribed machine from turning a sweep into
// minutes. Each implementation gets its own count, so a slow baseline does not cost tlc its
// statistics. The byte budget is large enough for each repetition to reach the steady state of
// sizes around the last-level cache: its first calls after another implementation's buffers
// went through the caches run slower, and two or three calls per repetition measured that.
constexpr std::size_t kBytesPerMeasurement = std::size_t{1} << 30;
constexpr int kMaxIters = 20000;
constexpr double kSecondsPerMeasurement = 0.2;
constexpr double kSecondsPerWarmup = 0.05;
constexpr int kMinIters = 4;

// Warms one implementation up and returns its number of timed calls. Every time() that several
// processes take part in returns their maximum, so they all derive the same counts.
int calibrate(Case& c, std::size_t bytes, const Options& o) {
  const std::size_t by_bytes = kBytesPerMeasurement / std::max<std::size_t>(bytes, 1);
  int iters = o.iters.value_or(static_cast<int>(
      std::clamp<std::size_t>(by_bytes, kMinIters, static_cast<std::size_t>(kMaxIters))));
  const int warmup = o.warmup.value_or(std::clamp(iters / 10, 1, 100));
  if (warmup > 0) {
    // The first call pays for page faults and connection set-up: keep it out of the estimate.
    double per_call = c.time({0, 1, o.skew_us, nullptr, 0, o.fresh_inputs}).max;
    if (warmup > 1) {
      int more = warmup - 1;
      if (!o.warmup)
        more = static_cast<int>(
            std::clamp(kSecondsPerWarmup / per_call, 1.0, static_cast<double>(more)));
      per_call = c.time({0, more, o.skew_us, nullptr, 0, o.fresh_inputs}).max;
    }
    if (!o.iters && per_call > 0)
      iters = static_cast<int>(
          std::clamp(std::min(kSecondsPerMeasurement / per_call, static_cast<double>(iters)),
                     static_cast<double>(kMinIters), static_cast<double>(kMaxIters)));
  }
  return iters;
}

std::string iteration_policy(const Options& o) {
  const std::string iters =
      o.iters ? "fixed " + std::to_string(*o.iters)
              : "adaptive per implementation, min(1 GiB / size, 0.2 s / warm-up time per "
                "call) in [4, 20000]";
  const std::string warmup = o.warmup ? std::to_string(*o.warmup) : "adaptive";
  return iters + ", split into " + std::to_string(o.reps) +
         " repetitions taken in turn with the other implementations, median reported; warm-up " +
         warmup +
         (o.fresh_inputs ? "; inputs rewritten before every call (untimed), calls timed one by one"
                         : "");
}

// ---------------------------------------------------------------------------------------------
// Self-consistency (Parker & Harms [ParkerHarms] sec. IV; Traff & Hunold [TraffHunold]): a
// collective should not be slower than a decomposition of it into others at the same size.

// log-log interpolation of time over size; NaN outside the measured sizes.
double time_at(const std::map<std::size_t, double>& times, std::size_t bytes) {
  if (times.empty()) return std::nan("");
  auto hi = times.lower_bound(bytes);
  if (hi == times.end()) return std::nan("");
  if (hi->first == bytes) return hi->second;
  if (hi == times.begin()) return std::nan("");
  auto lo = std::prev(hi);
  const double f = std::log(static_cast<double>(bytes) / static_cast<double>(lo->first)) /
                   std::log(static_cast<double>(hi->first) / static_cast<double>(lo->first));
  return std::exp(std::log(lo->second) + f * (std::log(hi->second) - std::log(lo->second)));
}

constexpr double kConsistencyMargin = 1.10;
constexpr double kSameSpeed = 1.05;

// --algorithms: the subject's choice against the forced algorithms, size by size (issue 15's
// acceptance: never more than 10% slower than the fastest, its predicted time within 25%).
// The choice is an algorithm, and its time is taken where the forced algorithms' are: from the
// forced column that runs the same plan (algorithm, form, chunk, lanes, leader), one team each
// like every rival; the selector's own team runs that plan too, and how far the two teams of one
// plan measure apart is reported on its own (team-to-team variation: the same code on other
// memory, which on a virtual machine moves small calls by several percent and is no choice).
// Where no forced column runs the selector's plan, the selector's team stands for the choice.
struct Judgement {
  int sizes = 0, within = 0, predicted = 0, predicted_within = 0;
  int twins = 0, twins_within = 0;  // sizes where a forced column runs the selector's plan
  double twins_worst = 1;           // largest selector team / forced team of the same plan
  std::size_t twins_worst_bytes = 0;
  std::string slower, off;  // the sizes that miss, with their figures

  void add(const Row& row, const std::vector<Column>& columns,
           const std::function<bool(const Column&, std::size_t)>& rival, std::size_t count,
           double predicted_seconds) {
    // ratio = rival / subject within each repetition (median): below 1, the rival was faster.
    double fastest = INFINITY;
    std::string which;
    for (std::size_t k = 1; k < columns.size(); ++k)
      if (row.cells[k].measured && rival(columns[k], count) && row.cells[k].ratio < fastest) {
        fastest = row.cells[k].ratio;
        which = columns[k].key;
      }
    if (std::isinf(fastest)) return;
    ++sizes;
    // The choice's time, relative to the selector's team, and in seconds.
    double choice = 1;
    double choice_seconds = row.cells[0].t.max;
    const std::string plan = columns[0].impl ? columns[0].impl->plan(count) : std::string();
    for (std::size_t k = 1; k < columns.size() && !plan.empty(); ++k)
      if (row.cells[k].measured && rival(columns[k], count) &&
          columns[k].impl->plan(count) == plan) {
        choice = row.cells[k].ratio;
        choice_seconds = row.cells[k].t.max;
        ++twins;
        const double apart = std::max(choice, 1 / choice);
        if (apart <= 1.10) ++twins_within;
        if (apart > twins_worst) {
          twins_worst = apart;
          twins_worst_bytes = row.bytes;
        }
        break;
      }
    if (choice / fastest <= 1.10) {
      ++within;
    } else {
      char text[96];
      std::snprintf(text, sizeof text, "%s%s %.2fx (%s faster)", slower.empty() ? "" : ", ",
                    size_text(row.bytes).c_str(), choice / fastest, which.c_str());
      slower += text;
    }
    if (!std::isnan(predicted_seconds)) {
      ++predicted;
      const double ratio = predicted_seconds / choice_seconds;
      if (std::abs(ratio - 1) <= 0.25) {
        ++predicted_within;
      } else {
        char text[64];
        std::snprintf(text, sizeof text, "%s%s %.2f", off.empty() ? "" : ", ",
                      size_text(row.bytes).c_str(), ratio);
        off += text;
      }
    }
  }

  std::string text(const char* collective) const {
    std::string line = std::string(collective) + ": the selector's choice within 10% of the " +
                       "fastest forced algorithm at " + std::to_string(within) + "/" +
                       std::to_string(sizes) + " sizes" +
                       (slower.empty() ? "" : " (slower: " + slower + ")");
    if (predicted > 0)
      line += "; the model's time of the choice within 25% of the measured at " +
              std::to_string(predicted_within) + "/" + std::to_string(predicted) + " sizes" +
              (off.empty() ? "" : " (predicted/measured: " + off + ")");
    if (twins > 0) {
      char worst[32];
      std::snprintf(worst, sizeof worst, "%.2fx", twins_worst);
      line +=
          "; the selector's team and the forced team of its plan within 10% of each other "
          "at " +
          std::to_string(twins_within) + "/" + std::to_string(twins) + " sizes" +
          (twins_worst > 1.10 ? std::string(" (furthest apart: ") + worst + " at " +
                                    size_text(twins_worst_bytes) + ")"
                              : std::string());
    }
    return line;
  }
};

std::vector<std::string> consistency_findings(
    const std::map<Kind, std::map<std::size_t, double>>& times, int ranks) {
  std::vector<std::string> findings;
  auto series = [&](Kind k) -> const std::map<std::size_t, double>* {
    auto it = times.find(k);
    return it == times.end() ? nullptr : &it->second;
  };
  struct Rule {
    Kind whole;
    const char* whole_name;
    Kind first;
    const char* first_name;
    Kind second;
    const char* second_name;
    std::size_t second_factor_num;  // second's size = bytes * num / den
    std::size_t second_factor_den;
  };
  const auto r = static_cast<std::size_t>(ranks);
  const Rule rules[] = {
      {Kind::allreduce, "allreduce", Kind::reduce, "reduce", Kind::bcast, "bcast", 1, 1},
      {Kind::allgather, "allgather", Kind::gather, "gather", Kind::bcast, "bcast", r, 1},
      {Kind::reduce_scatter_block, "reduce_scatter_block", Kind::reduce, "reduce", Kind::scatter,
       "scatter", 1, r},
  };
  for (const Rule& rule : rules) {
    const auto* whole = series(rule.whole);
    const auto* first = series(rule.first);
    const auto* second = series(rule.second);
    if (!whole || !first || !second) continue;
    int checked = 0;
    std::vector<std::string> slow;
    for (const auto& [bytes, t] : *whole) {
      const double a = time_at(*first, bytes);
      const double b = time_at(*second, bytes * rule.second_factor_num / rule.second_factor_den);
      if (std::isnan(a) || std::isnan(b)) continue;
      ++checked;
      if (t > kConsistencyMargin * (a + b)) {
        char text[160];
        std::snprintf(text, sizeof text, "%s %.2fx", size_text(bytes).c_str(), t / (a + b));
        slow.push_back(text);
      }
    }
    if (checked == 0) continue;
    std::string line = "self-consistency: " + std::string(rule.whole_name) +
                       " <= " + rule.first_name + " + " + rule.second_name + ": ";
    if (slow.empty()) {
      line += "holds at all " + std::to_string(checked) + " sizes";
    } else {
      line += "VIOLATED at " + std::to_string(slow.size()) + " of " + std::to_string(checked) +
              " sizes (time / decomposition):";
      for (const std::string& s : slow) line += " " + s;
    }
    findings.push_back(line);
  }
  return findings;
}

// ---------------------------------------------------------------------------------------------
// Output

struct Outputs {
  std::vector<std::unique_ptr<Reporter>> reporters;
  std::vector<std::unique_ptr<std::ofstream>> files;
  std::vector<std::string> names;

  template <class F>
  void each(F&& f) {
    for (auto& r : reporters) f(*r);
  }
};

// --out PREFIX: the table, CSV and JSON into PREFIX.txt, .csv, .json and the summary on stdout;
// otherwise the chosen format on stdout, followed by the summary when it is the table.
Outputs open_outputs(const Options& o) {
  Outputs out;
  if (!o.out.empty()) {
    const std::pair<const char*, std::unique_ptr<Reporter> (*)(std::ostream&)> kinds[] = {
        {".txt", make_table_reporter}, {".csv", make_csv_reporter}, {".json", make_json_reporter}};
    for (const auto& [suffix, make] : kinds) {
      const std::string name = o.out + suffix;
      auto file = std::make_unique<std::ofstream>(name);
      if (!*file) throw std::runtime_error("cannot write " + name);
      out.reporters.push_back(make(*file));
      out.files.push_back(std::move(file));
      out.names.push_back(name);
    }
    out.reporters.push_back(make_summary_reporter(std::cout));
    return out;
  }
  switch (o.format) {
    case Format::table:
      out.reporters.push_back(make_table_reporter(std::cout));
      out.reporters.push_back(make_summary_reporter(std::cout));
      break;
    case Format::csv:
      out.reporters.push_back(make_csv_reporter(std::cout));
      break;
    case Format::json:
      out.reporters.push_back(make_json_reporter(std::cout));
      break;
  }
  return out;
}

}  // namespace

int run_sweep(const Options& o, Sweep& sweep) {
  int process = 0;
  int processes = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &process);
  MPI_Comm_size(MPI_COMM_WORLD, &processes);
  sweep.header.iters_policy = iteration_policy(o);
  sweep.header.skew_us = o.skew_us;

  Outputs out;
  if (process == 0) {
    out = open_outputs(o);
    out.each([&](Reporter& r) { r.begin(sweep.header); });
    if (!o.out.empty()) {
      std::cout << "# writing";
      for (const std::string& n : out.names) std::cout << " " << n;
      std::cout << std::endl;
    }
  }

  const Clock::time_point start = Clock::now();
  std::size_t wrong_total = 0;
  std::vector<std::string> recommendations;
  std::map<Kind, std::map<std::size_t, double>> subject_times;
  int subject_ranks = 1;
  // One pass per collective, or one per collective and Arrival.
  std::vector<const Arrivals*> passes;
  for (const Arrivals& a : sweep.arrivals) passes.push_back(&a);
  if (passes.empty()) passes.push_back(nullptr);
  const int reps = std::max(o.reps, 1);
  const int arrival_calls = o.iters.value_or(20);

  for (const CollectiveDef* def : sweep.collectives) {
    std::vector<Column> columns = sweep.columns(*def);
    // Runs f where the column is measured; the processes that do not take part wait politely.
    auto on = [&](const Column& c, auto&& f) {
      if (c.takes_part(process)) f();
      if (!(c.everywhere && c.stride == 1) && processes > 1) polite_barrier();
    };
    // Which columns are measured, as process 0 knows it (the columns only it runs have no
    // implementation elsewhere), and the rank count that alltoall's sizes must be a multiple of.
    std::vector<int> present(columns.size());
    unsigned long multiple = 1;
    for (std::size_t k = 0; k < columns.size(); ++k) {
      const Column& c = columns[k];
      present[k] = c.impl ? 1 : 0;
      if (c.impl && (def->kind == Kind::alltoall || def->kind == Kind::reduce_scatter_block))
        multiple = std::max<unsigned long>(multiple, static_cast<unsigned long>(c.impl->ranks()));
    }
    MPI_Bcast(present.data(), static_cast<int>(present.size()), MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Allreduce(MPI_IN_PLACE, &multiple, 1, MPI_UNSIGNED_LONG, MPI_MAX, MPI_COMM_WORLD);
    std::vector<std::size_t> counts;
    if (def->kind == Kind::barrier) {
      counts = {0};
    } else if (!sweep.arrivals.empty()) {
      for (const std::size_t bytes : sweep.sizes) {
        const std::size_t n = std::max<std::size_t>(1, bytes / sizeof(double));
        counts.push_back((n + multiple - 1) / multiple * multiple);
      }
    } else {
      counts = element_counts(o, sweep.step, multiple);
    }
    if (columns.front().impl) subject_ranks = columns.front().impl->ranks();

    for (const Arrivals* arrivals : passes) {
      const std::string arrival_name = arrivals ? to_string(arrivals->kind) : "";
      if (process == 0)
        out.each([&](Reporter& r) { r.begin_collective(*def, columns, arrival_name); });
      std::vector<std::pair<std::size_t, std::string>> fastest;  // per size: the fastest column
      Judgement judged;

      for (const std::size_t count : counts) {
        const std::size_t k_count = columns.size();
        Row row;
        row.arrivals = arrival_name;
        row.bytes = count * sizeof(double);
        row.count = row.bytes / def->element_bytes;
        row.cells.resize(k_count);
        if (columns.front().impl) {
          row.ranks = columns.front().impl->ranks();
          row.algorithm = columns.front().impl->algorithm(count);
        }
        row.moved = moved_bytes(def->kind, sweep.header.threads, count);
        const CpuSample before = cpu_sample();

        std::vector<int> iters(k_count, 0);
        for (std::size_t k = 0; k < k_count; ++k) {
          Column& c = columns[k];
          if (!present[k]) continue;
          std::size_t wrong = 0;
          std::string first;
          on(c, [&] {
            c.impl->prepare(count);
            wrong = c.impl->check(first);
          });
          MPI_Allreduce(MPI_IN_PLACE, &wrong, 1, MPI_UNSIGNED_LONG, MPI_SUM, MPI_COMM_WORLD);
          if (!first.empty()) {
            std::fprintf(stderr, "tlc-bench: WRONG RESULT in %s, %s, %zu bytes: %s\n", def->name,
                         c.key.c_str(), row.bytes, first.c_str());
            std::fflush(stderr);
          }
          row.cells[k].wrong = wrong;
          wrong_total += process == 0 ? wrong : 0;
          if (arrivals)
            iters[k] = arrival_calls * reps;  // the checked call above was the warm-up
          else
            on(c, [&] { iters[k] = calibrate(*c.impl, row.bytes, o); });
        }

        std::vector<std::vector<Timing>> timings(k_count);
        for (int r = 0; r < reps; ++r)
          for (std::size_t step = 0; step < k_count; ++step) {
            const std::size_t k = (step + static_cast<std::size_t>(r)) % k_count;
            Column& c = columns[k];
            if (!present[k]) continue;
            const int calls = arrivals ? arrival_calls : calls_in(iters[k], reps, r);
            on(c, [&] {
              timings[k].push_back(
                  c.impl->time({1, calls, o.skew_us, arrivals, r * arrival_calls, o.fresh_inputs}));
            });
            row.cells[k].iters += calls;
          }
        for (std::size_t k = 0; k < k_count; ++k)
          if (present[k]) on(columns[k], [&] { columns[k].impl->prepare(0); });
        row.others_percent = row.steal_percent = std::nan("");
        const CpuSample after = cpu_sample();

        if (process == 0) {
          std::tie(row.others_percent, row.steal_percent) = interference(before, after);
          // What a ratio compares: the slowest participant's time per call; under Arrivals the
          // mean time in the collective, and the mean time after the last arrival.
          auto measure = [&](const Timing& t) { return arrivals ? t.avg : t.max; };
          for (std::size_t k = 0; k < k_count; ++k) {
            Cell& cell = row.cells[k];
            if (timings[k].empty()) continue;
            cell.measured = true;
            std::vector<double> mx, av, mn, af, ratio, after_ratio;
            for (std::size_t r = 0; r < timings[k].size(); ++r) {
              const Timing& t = timings[k][r];
              mx.push_back(t.max);
              av.push_back(t.avg);
              mn.push_back(t.min);
              if (arrivals) af.push_back(t.after);
              cell.wrong += t.wrong;
              wrong_total += t.wrong;
              if (r >= timings[0].size()) continue;
              const Timing& subject = timings[0][r];
              if (measure(subject) > 0) ratio.push_back(measure(t) / measure(subject));
              if (arrivals && subject.after > 0) after_ratio.push_back(t.after / subject.after);
            }
            cell.t = {median(mx), median(av), median(mn), median(af), 0};
            const bool compared =
                columns[k].role == Role::baseline || columns[k].role == Role::bound;
            cell.ratio = compared ? median(ratio) : std::nan("");
            cell.after_ratio = compared ? median(after_ratio) : std::nan("");
          }
          if (row.cells[0].measured && !arrivals)
            subject_times[def->kind][row.bytes] = row.cells[0].t.max;
          // The first column (the cheapest configuration, in a sweep) within 5% of the fastest,
          // by time per unit of work: differences below that are this machine's noise, not a
          // reason to take more threads or lanes.
          auto per_work = [&](std::size_t k) { return row.cells[k].t.max / columns[k].work; };
          double fastest_s = 0;
          for (std::size_t k = 0; k < k_count; ++k)
            if (row.cells[k].measured && columns[k].role != Role::bound &&
                (fastest_s == 0 || per_work(k) < fastest_s))
              fastest_s = per_work(k);
          for (std::size_t k = 0; k < k_count; ++k)
            if (row.cells[k].measured && columns[k].role != Role::bound &&
                per_work(k) <= kSameSpeed * fastest_s) {
              fastest.emplace_back(row.bytes, columns[k].key);
              break;
            }
          if (sweep.rival && row.cells[0].measured)
            judged.add(row, columns, sweep.rival, count, columns.front().impl->predicted(count));
          out.each([&](Reporter& r) { r.row(row); });
        }
      }
      if (process == 0) out.each([&](Reporter& r) { r.end_collective(); });
      if (process == 0 && judged.sizes > 0) recommendations.push_back(judged.text(def->name));
      if (process == 0 && sweep.recommend && !fastest.empty()) {
        // Consecutive sizes with the same fastest column make one range.
        std::string line = std::string(def->name) +
                           " wants (the first column within 5% of the fastest, by the slowest "
                           "participant's time per rank buffer of a process):";
        for (std::size_t i = 0; i < fastest.size();) {
          std::size_t j = i;
          while (j + 1 < fastest.size() && fastest[j + 1].second == fastest[i].second) ++j;
          line += (i ? "; " : " ") + size_text(fastest[i].first) +
                  (j > i ? " .. " + size_text(fastest[j].first) : "") + ": " + fastest[i].second;
          i = j + 1;
        }
        recommendations.push_back(line);
      }
    }
  }

  if (process == 0) {
    std::vector<std::string> findings = recommendations;
    for (std::string& f : consistency_findings(subject_times, subject_ranks))
      findings.push_back(std::move(f));
    out.each([&](Reporter& r) { r.end(seconds_since(start), findings); });
    std::cout.flush();
  }
  unsigned long wrong = wrong_total;
  MPI_Bcast(&wrong, 1, MPI_UNSIGNED_LONG, 0, MPI_COMM_WORLD);
  return wrong ? 3 : 0;
}

// MPICH's blocking calls poll without end, which on a machine with one core per thread would
// take the core a measured thread needs.
void polite_barrier(MPI_Comm comm) {
  MPI_Request request = MPI_REQUEST_NULL;
  MPI_Ibarrier(comm, &request);
  for (;;) {
    int done = 0;
    MPI_Test(&request, &done, MPI_STATUS_IGNORE);
    if (done) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

}  // namespace tlc_bench
