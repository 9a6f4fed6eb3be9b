// The modes of tlc-bench as selections for the one driver: which collectives, which
// implementations, which shape.
#include <omp.h>

#include <climits>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <thread>

#include <mpi.h>

#include "bench.hpp"
#include "tlc_commit.hpp"  // TLC_COMMIT, stamped at build time

namespace tlc_bench {

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

std::string topology_summary() {
  try {
    const tlc::Topology t = tlc::Topology::detect();
    return std::to_string(t.numa_domains()) + " NUMA domain(s), " + std::to_string(t.cores()) +
           " cores, " + std::to_string(t.pus()) + " PUs, " + std::to_string(t.rails().size()) +
           " rail(s) allowed to this process";
  } catch (const std::exception& e) {
    return std::string("unknown (") + e.what() + ")";
  }
}

}  // namespace

extern int g_argc;
extern char** g_argv;

std::string commit() { return TLC_COMMIT; }

RunHeader make_header(const std::string& mode, const tlc::Environment& env) {
  const int argc = g_argc;
  char** const argv = g_argv;
  RunHeader h;
  h.mode = mode;
  MPI_Comm_size(MPI_COMM_WORLD, &h.processes);
  if (const char* node = std::getenv("TLC_NODE")) h.node_env = node;
  h.mpi_version = tlc::Environment::mpi_library_version();
  h.thread_level = tlc::Environment::thread_level_name(env.thread_level());
  h.tlc_version = std::string("tlc ") + tlc::version_string + " (commit " + commit() + ")";
  h.topology = topology_summary();
  for (int i = 0; i < argc; ++i) {
    if (i) h.options += ' ';
    h.options += argv[i];
  }
  h.omp_env = openmp_environment();
  // Oversubscription decides small-message times (whoever spins steals the core the awaited
  // thread needs), so the header says when the node running rank 0 is oversubscribed.
  MPI_Comm node = MPI_COMM_NULL;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
  MPI_Comm_size(node, &h.node_threads);
  MPI_Comm_free(&node);
  h.node_pus = static_cast<int>(std::thread::hardware_concurrency());
  return h;
}

std::string placement_text(const tlc::Team& team) {
  std::string text;
  for (const tlc::ThreadPlacement& t : team.placement().threads) {
    if (!text.empty()) text += "; ";
    text += "thread " + std::to_string(t.local_index) + ": " +
            (t.core >= 0 ? "core " + std::to_string(t.core) : std::string("not pinned")) +
            ", NUMA " + std::to_string(t.numa);
    if (!t.lanes.empty()) {
      text += ", lanes";
      for (int l : t.lanes) {
        text += ' ';
        text += std::to_string(l);
      }
    }
  }
  return text;
}

namespace {

// The collectives of --collective: one name, "all", or a comma-separated list.
std::vector<const CollectiveDef*> chosen(const std::string& names, const char* mode) {
  std::vector<const CollectiveDef*> out;
  if (names == "all") {
    for (const CollectiveDef& def : collectives()) out.push_back(&def);
    return out;
  }
  const std::string list = names + ",";
  std::size_t from = 0;
  for (std::size_t comma; (comma = list.find(',', from)) != std::string::npos; from = comma + 1) {
    if (comma == from) continue;
    const std::string name = list.substr(from, comma - from);
    const CollectiveDef* def = find_collective(name);
    if (!def)
      throw std::invalid_argument(std::string(mode) + ": unknown collective '" + name +
                                  "' (available: " + collective_names() + ", all)");
    out.push_back(def);
  }
  if (out.empty()) throw std::invalid_argument(std::string(mode) + ": no collective given");
  return out;
}

bool has_algorithm(tlc::Collective collective, const std::string& name, bool inter_process) {
  for (const tlc::AlgorithmDescription& a : tlc::algorithms())
    if (a.collective == collective && a.name == name && (!inter_process || !a.single_process))
      return true;
  return false;
}

// Errors that are the same on every process are reported once, by process 0.
int usage_error(const std::string& what) {
  int process = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &process);
  if (process == 0) std::cerr << "tlc-bench: " << what << " (see --help)\n";
  return 2;
}

// A launcher that binds the process to fewer hardware threads than its team has (Open MPI binds
// a job of one or two processes to one core each by default) makes every wait of the team a
// context switch: the figures then measure the scheduler. Said once per process, on stderr.
static void warn_if_bound_narrower(const tlc::Team& team) {
  static bool said = false;
  if (said) return;
  try {
    const tlc::Topology t = tlc::Topology::detect();
    const auto machine = static_cast<int>(std::thread::hardware_concurrency());
    if (team.threads() > t.pus() && t.pus() < machine) {
      std::cerr << "tlc-bench: process " << team.process() << " may run on " << t.pus()
                << " of the machine's " << machine << " hardware threads (its launcher's binding) "
                << "for a team of " << team.threads()
                << " threads: every wait becomes a context switch; launch with the binding off "
                   "(Open MPI: mpiexec --bind-to none)\n";
      said = true;
    }
  } catch (const std::exception&) {
    // No topology: nothing to compare.
  }
}

// A team on MPI_COMM_WORLD, or nullptr after process 0 said why (construction agrees on errors
// across processes, so one report is enough).
std::unique_ptr<tlc::Team> world_team(const tlc::TeamOptions& options, const std::string& what) {
  try {
    auto team = std::make_unique<tlc::Team>(MPI_COMM_WORLD, options);
    warn_if_bound_narrower(*team);
    return team;
  } catch (const std::exception& e) {
    int process = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &process);
    if (process == 0) std::cerr << "tlc-bench: cannot build " << what << ": " << e.what() << "\n";
    return nullptr;
  }
}

// Later failures may hit one process while the others wait in a collective.
template <class F>
int guarded(const char* mode, F&& f) {
  try {
    return f();
  } catch (const std::exception& e) {
    int process = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &process);
    std::fprintf(stderr, "tlc-bench %s: process %d: %s\n", mode, process, e.what());
    std::fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, 1);
    return 1;
  }
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// --intra, the main job: the threads of one process against MPI everywhere on as many
// processes, the master-only pattern of the same threads and the memory-bandwidth bound.

int run_intra(const Options& o, const tlc::Environment& env) {
  int process = 0;
  int processes = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &process);
  MPI_Comm_size(MPI_COMM_WORLD, &processes);
  const int threads = o.threads > 0 ? o.threads : processes;
  if (threads != processes)
    return usage_error(
        "--intra: MPI everywhere runs one process per tlc thread, so launch as "
        "many processes as --threads: mpiexec -n " +
        std::to_string(threads) + " (got -n " + std::to_string(processes) + ")");
  std::vector<const CollectiveDef*> defs;
  try {
    defs = chosen(o.collective.empty() ? "all" : o.collective, "--intra");
  } catch (const std::invalid_argument& e) {
    return usage_error(e.what());
  }

  // Process 0 alone builds its team; everybody learns whether that worked.
  std::unique_ptr<tlc::Team> team;
  std::string error;
  if (process == 0) {
    tlc::TeamOptions options;
    options.threads = threads;
    options.pin = o.pin;
    bool known = o.algorithm.empty();
    for (const CollectiveDef* d : defs)
      if (!o.algorithm.empty() && has_algorithm(d->collective, o.algorithm, false)) {
        options.algorithms[d->collective] = o.algorithm;
        known = true;
      }
    try {
      if (!known)
        throw std::invalid_argument("no measured collective has an algorithm '" + o.algorithm +
                                    "' (tlc-info --algorithms lists them)");
      team = std::make_unique<tlc::Team>(MPI_COMM_SELF, options);
      warn_if_bound_narrower(*team);
      if (team->threads() != threads)
        error = "the team has " + std::to_string(team->threads()) + " threads, not " +
                std::to_string(threads);
    } catch (const std::exception& e) {
      error = e.what();
    }
  }
  int failed = error.empty() ? 0 : 1;
  MPI_Bcast(&failed, 1, MPI_INT, 0, MPI_COMM_WORLD);
  if (failed) {
    if (process == 0) std::cerr << "tlc-bench --intra: cannot build the team: " << error << "\n";
    return 1;
  }

  Sweep sweep;
  sweep.header = make_header("--intra", env);
  sweep.header.threads = threads;
  sweep.header.processes = 1;
  sweep.header.lanes = 1;
  int pinned = process == 0 && team->placement().pinned;
  MPI_Bcast(&pinned, 1, MPI_INT, 0, MPI_COMM_WORLD);
  sweep.header.pinned = pinned != 0;
  if (process == 0) sweep.header.placement = placement_text(*team);
  sweep.header.description =
      "one process's team of " + std::to_string(threads) +
      " threads (tlc::Team on MPI_COMM_SELF, process 0; the other processes sleep meanwhile) "
      "against MPI everywhere (" +
      std::to_string(processes) +
      " processes, one per thread, on MPI_COMM_WORLD), the OpenMP master-only pattern of " +
      std::to_string(threads) +
      " threads and the memory-bandwidth bound of the team's threads, in the same run on the "
      "same data";
  sweep.collectives = defs;
  sweep.step = o.step ? o.step : 4;
  tlc::Team* t = team.get();
  sweep.columns = [&, t](const CollectiveDef& def) {
    std::vector<Column> c;
    auto local = [&](std::string key, std::string label, Role role, auto make) {
      Column col{std::move(key), std::move(label), role, false, nullptr, {}};
      if (process == 0) col.impl = make();
      c.push_back(std::move(col));
    };
    local("tlc", std::string("every thread ") + def.tlc_what, Role::subject,
          [&] { return make_tlc_case(def, *t, false); });
    if (def.in_place && o.in_place)
      local("tlc_in_place", "the same in place", Role::in_place,
            [&] { return make_tlc_case(def, *t, true); });
    c.push_back({"mpi",
                 std::string("MPI everywhere: every process ") + def.mpi_what,
                 Role::baseline,
                 true,
                 make_mpi_case(def, MPI_COMM_WORLD),
                 {}});
    local("master",
          "OpenMP master-only: threads combine in shared arrays, thread 0 calls " +
              std::string(def.mpi_what) + " on MPI_COMM_SELF, barriers, copy out",
          Role::baseline, [&] { return make_master_case(def, threads, MPI_COMM_SELF); });
    local("bound",
          def.kind == Kind::barrier
              ? std::string("a bare sense-reversing spin barrier on std::atomic")
              : "memory-bandwidth bound: bytes that must move / copy bandwidth of the same "
                "threads (each memcpy's a private buffer of moved / (2T) bytes)",
          Role::bound, [&] { return make_bound_case(def, *t); });
    return c;
  };
  return guarded("--intra", [&] { return run_sweep(o, sweep); });
}

// ---------------------------------------------------------------------------------------------
// Across processes (the default): a team on every process against raw MPI (one rank per process,
// the inter-process part alone) and the master-only pattern.

int run_across(const Options& o, const tlc::Environment& env) {
  std::vector<const CollectiveDef*> defs;
  try {
    defs = chosen(o.collective.empty() ? "allreduce" : o.collective, "tlc-bench");
  } catch (const std::invalid_argument& e) {
    return usage_error(e.what());
  }
  tlc::TeamOptions options;
  options.threads = o.threads;
  options.lanes = o.lanes;
  options.pin = o.pin;
  if (!o.algorithm.empty()) {
    bool known = false;
    for (const CollectiveDef* d : defs)
      if (has_algorithm(d->collective, o.algorithm, false)) {
        options.algorithms[d->collective] = o.algorithm;
        known = true;
      }
    if (!known)
      return usage_error("no measured collective has an algorithm '" + o.algorithm +
                         "' (tlc-info --algorithms lists them)");
  }
  std::unique_ptr<tlc::Team> team = world_team(options, "the team");
  if (!team) return 1;
  Sweep sweep;
  sweep.header = make_header("across processes", env);
  sweep.header.threads = team->threads();
  sweep.header.lanes = team->lanes();
  sweep.header.pinned = team->placement().pinned;
  sweep.header.placement = placement_text(*team);
  sweep.header.node_threads *= team->threads();
  sweep.header.description =
      "a tlc team on every process (tlc::Team on MPI_COMM_WORLD) against raw MPI (one rank per "
      "process, the inter-process part alone) and the OpenMP master-only pattern, in the same "
      "run on the same data";
  sweep.collectives = defs;
  sweep.step = o.step ? o.step : 2;
  tlc::Team* t = team.get();
  const int threads = team->threads();
  sweep.columns = [&, t, threads](const CollectiveDef& def) {
    std::vector<Column> c;
    c.push_back({"tlc",
                 std::string("every thread ") + def.tlc_what,
                 Role::subject,
                 true,
                 make_tlc_case(def, *t, false),
                 {}});
    if (def.in_place && o.in_place)
      c.push_back({"tlc_in_place",
                   "the same in place",
                   Role::in_place,
                   true,
                   make_tlc_case(def, *t, true),
                   {}});
    c.push_back({"mpi",
                 std::string("raw MPI: the main thread of every process calls ") + def.mpi_what +
                     " on MPI_COMM_WORLD with one thread's buffers (the inter-process part alone)",
                 Role::baseline,
                 true,
                 make_mpi_case(def, MPI_COMM_WORLD),
                 {}});
    c.push_back({"master",
                 "OpenMP master-only: threads combine in shared arrays, thread 0 calls " +
                     std::string(def.mpi_what) + " on MPI_COMM_WORLD, barriers, copy out",
                 Role::baseline,
                 true,
                 make_master_case(def, threads, MPI_COMM_WORLD),
                 {}});
    return c;
  };
  return guarded("", [&] { return run_sweep(o, sweep); });
}

// ---------------------------------------------------------------------------------------------
// --algorithms: for each collective, a team per algorithm of the shape (forced) and one with the
// selector's choice (the subject), against raw MPI.

int run_algorithms(const Options& o, const tlc::Environment& env) {
  std::vector<const CollectiveDef*> defs;
  try {
    defs = chosen(o.collective.empty() ? "allreduce" : o.collective, "--algorithms");
  } catch (const std::invalid_argument& e) {
    return usage_error(e.what());
  }
  std::vector<std::string> keep;
  if (!o.algorithm.empty()) {
    const std::string list = o.algorithm + ",";
    std::size_t from = 0;
    for (std::size_t comma; (comma = list.find(',', from)) != std::string::npos; from = comma + 1)
      if (comma > from) keep.push_back(list.substr(from, comma - from));
    for (const std::string& k : keep) {
      bool any = false;
      for (const CollectiveDef* d : defs) any = any || has_algorithm(d->collective, k, false);
      if (!any)
        return usage_error("--algorithms: no measured collective has an algorithm '" + k +
                           "' (tlc-info --algorithms)");
    }
  }
  auto options_for = [&](const CollectiveDef* def, const std::string& name) {
    tlc::TeamOptions team_options;
    team_options.threads = o.threads;
    team_options.lanes = o.lanes;
    team_options.pin = o.pin;
    if (def && !name.empty()) team_options.algorithms[def->collective] = name;
    return team_options;
  };
  std::unique_ptr<tlc::Team> selector = world_team(options_for(nullptr, ""), "the team");
  if (!selector) return 1;
  // The forced teams of the collective being measured; replaced per collective.
  std::vector<std::unique_ptr<tlc::Team>> forced;
  Sweep sweep;
  sweep.header = make_header("--algorithms", env);
  sweep.header.threads = selector->threads();
  sweep.header.lanes = selector->lanes();
  sweep.header.pinned = selector->placement().pinned;
  sweep.header.placement = placement_text(*selector);
  sweep.header.node_threads *= selector->threads();
  sweep.header.description =
      "tlc with the selector's choice (the subject) against tlc with each algorithm of the "
      "shape forced in turn (one team each; across processes the inter-process algorithms, in "
      "one process the single-process ones) and raw MPI (one rank per process), in the same "
      "run on the same data; X/selector > 1: the selector's choice is faster than X";
  sweep.collectives = defs;
  sweep.step = o.step ? o.step : 4;
  tlc::Team* sel = selector.get();
  sweep.columns = [&, sel](const CollectiveDef& def) {
    forced.clear();
    std::vector<Column> c;
    c.push_back({"selector",
                 "tlc, the selector's choice",
                 Role::subject,
                 true,
                 make_tlc_case(def, *sel, false),
                 {}});
    for (const tlc::AlgorithmDescription& a : tlc::algorithms()) {
      // The algorithms of the team's shape: across processes the inter-process ones, in one
      // process the single-process ones.
      if (a.collective != def.collective || a.single_process != (sel->processes() == 1)) continue;
      if (!keep.empty() && std::find(keep.begin(), keep.end(), a.name) == keep.end()) continue;
      Column col{a.name,         "tlc with " + a.name + " forced: " + a.summary,
                 Role::baseline, true,
                 nullptr,        {}};
      // Construction is collective and agrees on errors: a forced algorithm that cannot be
      // built is an empty column on every process, with the reason.
      try {
        forced.push_back(std::make_unique<tlc::Team>(MPI_COMM_WORLD, options_for(&def, a.name)));
        col.impl = make_tlc_case(def, *forced.back(), false);
      } catch (const std::exception& e) {
        col.note = std::string("cannot build the team: ") + e.what();
      }
      c.push_back(std::move(col));
    }
    c.push_back({"mpi",
                 std::string("raw MPI: the main thread of every process calls ") + def.mpi_what +
                     " with one thread's buffers",
                 Role::baseline,
                 true,
                 make_mpi_case(def, MPI_COMM_WORLD),
                 {}});
    return c;
  };
  // The forced algorithms, where they serve the call (a forced choice that cannot falls back to
  // the selector's and is no rival).
  sweep.rival = [](const Column& c, std::size_t n) {
    return c.role == Role::baseline && c.key != "mpi" && c.impl && c.impl->algorithm(n) == c.key;
  };
  return guarded("--algorithms", [&] { return run_sweep(o, sweep); });
}

// ---------------------------------------------------------------------------------------------
// --lanes-sweep: how many threads per process and lanes (threads per rail) this machine wants.
// One team per configuration (t threads, l lanes) on every process, all measured in the same run
// on the same bytes per rank; the subject is t = 1, l = 1. A process of t threads moves t times
// the data of one, so configurations are compared by time / t.

int run_lanes_sweep(const Options& o, const tlc::Environment& env) {
  std::vector<const CollectiveDef*> defs;
  try {
    defs = chosen(o.collective.empty() ? "allreduce" : o.collective, "--lanes-sweep");
  } catch (const std::invalid_argument& e) {
    return usage_error(e.what());
  }
  const int max_threads = o.threads > 0 ? o.threads : 2;
  const int max_lanes = o.lanes > 0 ? o.lanes : 4;
  struct Config {
    int threads;
    int lanes;
    std::unique_ptr<tlc::Team> team;
  };
  std::vector<Config> configs;
  for (int t = 1; t <= max_threads; ++t)
    for (int l = 1; l <= max_lanes; ++l) {
      tlc::TeamOptions options;
      options.threads = t;
      options.lanes = l;
      options.pin = o.pin;
      if (!o.algorithm.empty())
        for (const CollectiveDef* d : defs)
          if (has_algorithm(d->collective, o.algorithm, false))
            options.algorithms[d->collective] = o.algorithm;
      std::unique_ptr<tlc::Team> team =
          world_team(options, "the team of " + std::to_string(t) + " threads and " +
                                  std::to_string(l) + " lanes");
      if (!team) return 1;
      configs.push_back({t, l, std::move(team)});
    }
  Sweep sweep;
  sweep.header = make_header("--lanes-sweep", env);
  sweep.header.threads = max_threads;
  sweep.header.lanes = max_lanes;
  sweep.header.pinned = configs.back().team->placement().pinned;
  sweep.header.placement = "largest configuration: " + placement_text(*configs.back().team);
  sweep.header.node_threads *= max_threads;
  sweep.header.description =
      "threads per process t = 1.." + std::to_string(max_threads) + " x lanes l = 1.." +
      std::to_string(max_lanes) +
      " (tlc::Team on MPI_COMM_WORLD, one per configuration); sizes are bytes per rank, so a "
      "process of t threads moves t times the data of one thread: configurations are ranked by "
      "time / t (the time per rank buffer of a process); X/t1_l1 = X's time over t1_l1's";
  sweep.collectives = defs;
  sweep.step = o.step ? o.step : 4;
  sweep.recommend = true;
  sweep.columns = [&](const CollectiveDef& def) {
    std::vector<Column> c;
    for (Config& cfg : configs) {
      std::string key = "t";
      key += std::to_string(cfg.threads);
      key += "_l";
      key += std::to_string(cfg.lanes);
      c.push_back({key,
                   "tlc with " + std::to_string(cfg.threads) + " thread(s) per process and " +
                       std::to_string(cfg.lanes) + " lane(s)",
                   c.empty() ? Role::subject : Role::baseline,
                   true,
                   make_tlc_case(def, *cfg.team, false),
                   {},
                   static_cast<double>(cfg.threads)});
    }
    return c;
  };
  return guarded("--lanes-sweep", [&] { return run_sweep(o, sweep); });
}

// ---------------------------------------------------------------------------------------------
// --skew: what arrival imbalance costs and how much of it leaders elected by arrival recover
// (Parsons [Parsons] ch. 3.3 and 3.7; docs/imbalance.md). Columns: tlc with static leaders (the
// plan's choice), tlc led by arrival (the dynamic algorithm forced, where the collective has
// one), the master-only pattern and, with --everywhere, MPI everywhere; every collective once per
// Arrival, every call synchronised, delayed and checked (driver.cpp, arrival_loop).

int run_skew(const Options& o, const tlc::Environment& env) {
  int process = 0;
  int world = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &process);
  MPI_Comm_size(MPI_COMM_WORLD, &world);
  std::vector<const CollectiveDef*> defs;
  std::vector<Arrivals> passes;
  try {
    defs =
        chosen(o.collective == "all" ? "reduce,bcast,allreduce,alltoall" : o.collective, "--skew");
    for (const std::string& name : o.skews) passes.push_back({arrival_named(name)});
  } catch (const std::invalid_argument& e) {
    return usage_error(e.what());
  }
  if (passes.empty())
    for (const Arrival a : all_arrivals) passes.push_back({a});
  // --everywhere: the world's processes are MPI everywhere's ranks; every T-th of them runs the
  // teams (the others wait without a core while the teams measure).
  if (o.everywhere && (o.threads < 1 || world % o.threads != 0))
    return usage_error(
        "--skew --everywhere: launch P * T processes for teams of --threads T (got " +
        std::to_string(world) + " processes, --threads " + std::to_string(o.threads) + ")");
  const int stride = o.everywhere ? o.threads : 1;
  const bool in_team = process % stride == 0;
  MPI_Comm team_comm = MPI_COMM_NULL;
  MPI_Comm_split(MPI_COMM_WORLD, in_team ? 0 : MPI_UNDEFINED, process, &team_comm);

  std::unique_ptr<tlc::Team> static_team, dynamic_team, default_team;
  std::string error;
  // Team processes, -(fewest threads per process), most threads per process; the processes
  // outside the teams (--everywhere) count for nothing in the maxima.
  int shape[3] = {0, INT_MIN, 0};
  if (in_team) {
    tlc::TeamOptions base;
    base.threads = o.threads;
    base.pin = o.pin;
    // The library's defaults (leaders chosen by the plan, or TLC_LEADERS), and static leaders.
    const tlc::TeamOptions defaults = base;
    base.leaders = "static";
    tlc::TeamOptions dynamic = base;
    dynamic.fallback = "error";
    bool any = false;
    for (const CollectiveDef* d : defs)
      if (has_algorithm(d->collective, "dynamic", false)) {
        dynamic.algorithms[d->collective] = "dynamic";
        any = true;
      }
    try {
      static_team = std::make_unique<tlc::Team>(team_comm, base);
      if (any) dynamic_team = std::make_unique<tlc::Team>(team_comm, dynamic);
      default_team = std::make_unique<tlc::Team>(team_comm, defaults);
      warn_if_bound_narrower(*static_team);
      shape[0] = static_team->processes();
      shape[1] = -static_team->threads();
      shape[2] = static_team->threads();
    } catch (const std::exception& e) {
      error = e.what();
    }
  }
  int failed = error.empty() ? 0 : 1;
  MPI_Allreduce(MPI_IN_PLACE, &failed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Allreduce(MPI_IN_PLACE, shape, 3, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  auto free_comm = [&] {
    static_team.reset();
    dynamic_team.reset();
    default_team.reset();
    if (team_comm != MPI_COMM_NULL) MPI_Comm_free(&team_comm);
  };
  if (failed || -shape[1] != shape[2]) {
    if (!error.empty())
      std::cerr << "tlc-bench --skew: process " << process << ": cannot build the teams: " << error
                << "\n";
    else if (process == 0)
      std::cerr << "tlc-bench --skew: the processes have different thread counts; give --threads\n";
    free_comm();
    return 1;
  }
  const int processes = shape[0], threads = shape[2], ranks = processes * threads;
  for (Arrivals& a : passes) {
    a.delay_us = o.delay_us;
    a.seed = o.seed;
    a.threads = threads;
  }

  Sweep sweep;
  sweep.header = make_header("--skew", env);
  sweep.header.processes = processes;
  sweep.header.threads = threads;
  sweep.header.lanes = in_team ? static_team->lanes() : 0;
  sweep.header.pinned = in_team && static_team->placement().pinned;
  if (process == 0) sweep.header.placement = placement_text(*static_team);
  char text[512];
  std::snprintf(
      text, sizeof text,
      "before every call all threads of all processes synchronise (a barrier of the "
      "process's threads, MPI_Barrier, a barrier), then each sleeps its delay, seeded per "
      "call and rank "
      "(seed %u): none; uniform in [0, D]; exponential, mean D; late-leader: rank %d "
      "(thread 0 of the last process, a static leader) late by D; late-other: rank %d "
      "late by D. D = %.0f us; %d calls x %d repetitions per case",
      o.seed, ranks - threads, ranks - 1, o.delay_us, o.iters.value_or(20), std::max(o.reps, 1));
  sweep.header.arrivals = text;
  // The teams' threads on this node (the processes outside the teams sleep meanwhile).
  sweep.header.node_threads = sweep.header.node_threads / stride * threads;
  const char* wait_policy = std::getenv("OMP_WAIT_POLICY");
  if (process == 0 && sweep.header.node_threads > sweep.header.node_pus &&
      !(wait_policy && std::string(wait_policy) == "passive"))
    std::cerr << "tlc-bench --skew: " << sweep.header.node_threads << " threads on "
              << sweep.header.node_pus
              << " hardware threads: the master-only column's OpenMP threads spin in their "
                 "barriers and take the cores the other threads need; set "
                 "OMP_WAIT_POLICY=passive\n";
  sweep.header.description =
      "tlc with static leaders (the plan's choice among them) against tlc led by arrival (the "
      "dynamic algorithm forced), tlc with its default leaders (TLC_LEADERS, else chosen by the "
      "plan), the master-only pattern" +
      std::string(o.everywhere ? " and MPI everywhere (one process per rank, the same ranks)"
                               : "") +
      ", under the same delays, on the same data; root 0, sums of doubles (alltoall: the size "
      "is a thread's whole buffer). The processes must share a machine (their clocks are "
      "compared): TLC_NODE=process";
  sweep.collectives = defs;
  sweep.arrivals = passes;
  sweep.sizes = o.skew_sizes.empty()
                    ? std::vector<std::size_t>{64, std::size_t{64} << 10, std::size_t{4} << 20}
                    : o.skew_sizes;
  sweep.columns = [&](const CollectiveDef& def) {
    std::vector<Column> c;
    auto team_column = [&](std::string key, std::string label, Role role, auto make) {
      Column col{std::move(key), std::move(label), role, true, nullptr, {}};
      col.stride = stride;
      if (in_team) col.impl = make();
      return col;
    };
    c.push_back(team_column("static", "tlc with static leaders", Role::subject,
                            [&] { return make_tlc_case(def, *static_team, false, team_comm); }));
    const bool dynamic = has_algorithm(def.collective, "dynamic", false);
    c.push_back(team_column("dynamic", "tlc led by arrival (dynamic forced)", Role::baseline,
                            [&]() -> std::unique_ptr<Case> {
                              if (!dynamic) return nullptr;
                              return make_tlc_case(def, *dynamic_team, false, team_comm);
                            }));
    if (!dynamic) c.back().note = "no algorithm led by arrival for this collective";
    c.push_back(team_column("default", "tlc with its default leaders (TLC_LEADERS, else auto)",
                            Role::baseline,
                            [&] { return make_tlc_case(def, *default_team, false, team_comm); }));
    c.push_back(
        team_column("master",
                    "OpenMP master-only: threads combine in shared arrays, thread 0 calls " +
                        std::string(def.mpi_what) + ", barriers, copy out",
                    Role::baseline, [&] { return make_master_case(def, threads, team_comm); }));
    if (o.everywhere)
      c.push_back({"mpi",
                   std::string("MPI everywhere: every process ") + def.mpi_what,
                   Role::baseline,
                   true,
                   make_mpi_case(def, MPI_COMM_WORLD),
                   {}});
    return c;
  };
  const int rc = guarded("--skew", [&] { return run_sweep(o, sweep); });
  free_comm();
  return rc;
}

}  // namespace tlc_bench
