// The tuning file (src/select/tuning.hpp) and the whole-call prediction (predict_call): a file
// changes the cost parameters and with them the plan, TLC_COST_* variables override it, every
// kind of bad file is an error that names its line, and the prediction of a call adds up its
// phases as the plan runs them.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <tlc/error.hpp>

#include "select/planner.hpp"
#include "select/tuning.hpp"
#include "team/config.hpp"

namespace {

using namespace tlc::detail;
using tlc::Collective;

// A file in the temporary directory holding `text`, removed with the object.
class TempFile {
 public:
  explicit TempFile(const std::string& text) {
    static int counter = 0;
    path_ = (std::filesystem::temp_directory_path() /
             ("tlc_tuning_" + std::to_string(::getpid()) + "_" + std::to_string(counter++)))
                .string();
    std::ofstream(path_) << text;
  }
  ~TempFile() { std::filesystem::remove(path_); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// Sets an environment variable for the lifetime of the object.
class ScopedVariable {
 public:
  ScopedVariable(const char* name, const std::string& value) : name_(name) {
    ::setenv(name, value.c_str(), 1);
  }
  ~ScopedVariable() { ::unsetenv(name_); }

 private:
  const char* name_;
};

CostParameters from_file(const std::string& path) {
  tlc::TeamOptions o;
  o.tuning_file = path;
  return Config::read(o).plan.costs;
}

PlanQuery call(Collective c, std::size_t bytes) { return {c, bytes / 8, 8, true, false}; }

PlanSettings forcing(Collective c, const std::string& choice) {
  PlanSettings s;
  s.forced[static_cast<std::size_t>(c)] = parse_override(c, choice, "test");
  return s;
}

TeamShape across(int processes, int threads, int lanes = 1) {
  TeamShape s{processes, threads, lanes, 1, processes * threads, true};
  s.most_threads = threads;
  return s;
}

// The message of the error reading `text` throws.
std::string error_of(const std::string& text) {
  const TempFile file(text);
  try {
    from_file(file.path());
  } catch (const tlc::Error& e) {
    EXPECT_EQ(e.code(), tlc::Errc::invalid_argument);
    return e.what();
  }
  ADD_FAILURE() << "no error for:\n" << text;
  return "";
}

bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST(Tuning, FileSetsTheParametersItNames) {
  const TempFile file(
      "# fitted on a test machine\n"
      "alpha_us = 50   # start-up\n"
      "\n"
      "lane_gbs=100\n"
      "  memory_gbs = 2.5\n"
      "lane_parallelism = 3\n");
  const CostParameters p = from_file(file.path());
  const CostParameters defaults;
  EXPECT_DOUBLE_EQ(p.alpha, 50e-6);
  EXPECT_DOUBLE_EQ(p.lane_bandwidth, 100e9);
  EXPECT_DOUBLE_EQ(p.memory_bandwidth, 2.5e9);
  EXPECT_EQ(p.lane_parallelism, 3);
  EXPECT_DOUBLE_EQ(p.reduce_bandwidth, defaults.reduce_bandwidth);  // not in the file
  EXPECT_DOUBLE_EQ(p.rendezvous, defaults.rendezvous);
}

TEST(Tuning, FileChangesThePlan) {
  // Four processes, 1 MiB allreduce: with the defaults Rabenseifner is the cheapest (tlc's own:
  // MPI's runs the same messages and starts up slower, mpi_start_us); with a start-up 50 times
  // larger and a faster network, recursive doubling's log2(P) messages beat Rabenseifner's
  // 2 log2(P).
  const PlanQuery q = call(Collective::allreduce, 1 << 20);
  PlanSettings settings;
  EXPECT_EQ(Planner(across(4, 1), settings).plan(q).algorithm, Algorithm::rabenseifner);
  const TempFile file("alpha_us = 100\nlane_gbs = 100\n");
  settings.costs = from_file(file.path());
  EXPECT_EQ(Planner(across(4, 1), settings).plan(q).algorithm, Algorithm::recursive_doubling);
  // TLC_TUNING loads the same file; the option wins over it.
  {
    const ScopedVariable tuning("TLC_TUNING", file.path());
    EXPECT_DOUBLE_EQ(Config::read(tlc::TeamOptions{}).plan.costs.alpha, 100e-6);
    const TempFile other("alpha_us = 7\n");
    EXPECT_DOUBLE_EQ(from_file(other.path()).alpha, 7e-6);
  }
  // A TLC_COST_ variable overrides its key over the file, and only that key.
  const ScopedVariable alpha("TLC_COST_ALPHA_US", "2");
  settings.costs = from_file(file.path());
  EXPECT_DOUBLE_EQ(settings.costs.alpha, 2e-6);
  EXPECT_DOUBLE_EQ(settings.costs.lane_bandwidth, 100e9);
  EXPECT_EQ(Planner(across(4, 1), settings).plan(q).algorithm, Algorithm::rabenseifner);
}

TEST(Tuning, BadFilesNameTheLineAndKey) {
  std::string e = error_of("alpha_us = 1\n# comment\nlane_speed = 3\n");
  EXPECT_TRUE(has(e, "line 3") && has(e, "unknown key 'lane_speed'")) << e;
  EXPECT_TRUE(has(e, "alpha_us, lane_gbs")) << e;  // the known keys

  e = error_of("alpha_us = 1\nlane_gbs = fast\n");
  EXPECT_TRUE(has(e, "line 2") && has(e, "'lane_gbs'") && has(e, "'fast'")) << e;
  e = error_of("lane_gbs = 10 GB/s\n");
  EXPECT_TRUE(has(e, "line 1") && has(e, "'lane_gbs'")) << e;

  e = error_of("\n\nsync_us = 0\n");
  EXPECT_TRUE(has(e, "line 3") && has(e, "'sync_us'") && has(e, "positive")) << e;
  e = error_of("reduce_gbs = -4\n");
  EXPECT_TRUE(has(e, "line 1") && has(e, "'reduce_gbs'") && has(e, "positive")) << e;
  e = error_of("memory_gbs = nan\n");
  EXPECT_TRUE(has(e, "line 1") && has(e, "'memory_gbs'")) << e;
  e = error_of("lane_parallelism = 1.5\n");
  EXPECT_TRUE(has(e, "line 1") && has(e, "'lane_parallelism'") && has(e, "integer")) << e;

  e = error_of("alpha_us = 1\nalpha_us = 2\n");
  EXPECT_TRUE(has(e, "line 2") && has(e, "'alpha_us'") && has(e, "line 1")) << e;
  e = error_of("alpha_us 1\n");
  EXPECT_TRUE(has(e, "line 1") && has(e, "key = value")) << e;
  e = error_of("= 1\n");
  EXPECT_TRUE(has(e, "line 1") && has(e, "unknown key ''")) << e;

  const std::string missing =
      (std::filesystem::temp_directory_path() / "tlc_no_such_tuning_file").string();
  try {
    from_file(missing);
    ADD_FAILURE() << "no error for a missing file";
  } catch (const tlc::Error& err) {
    EXPECT_EQ(err.code(), tlc::Errc::invalid_argument);
    EXPECT_TRUE(has(err.what(), missing) && has(err.what(), "TeamOptions::tuning_file"))
        << err.what();
  }
  // A bad TLC_COST_ variable names itself.
  const TempFile good("alpha_us = 1\n");
  const ScopedVariable bad("TLC_COST_CACHE_MIB", "0");
  try {
    from_file(good.path());
    ADD_FAILURE() << "no error for TLC_COST_CACHE_MIB=0";
  } catch (const tlc::Error& err) {
    EXPECT_TRUE(has(err.what(), "TLC_COST_CACHE_MIB")) << err.what();
  }
}

TEST(Tuning, WrittenFileReadsBack) {
  CostParameters p;
  p.alpha = 1.25e-6;
  p.lane_bandwidth = 7.5e9;
  p.cache_bytes = 12.0 * 1024 * 1024;
  p.call_overhead = 0.3e-6;
  const std::string text = tuning_text(p, {"fitted by a test"});
  EXPECT_TRUE(has(text, "# fitted by a test\n")) << text;
  EXPECT_TRUE(has(text, "# lane_parallelism = (detected at run time)")) << text;
  CostParameters back;
  back.alpha = 99;
  std::istringstream in(text);
  read_tuning(in, "written", back);
  for (const CostKey& k : cost_keys())
    EXPECT_NEAR(cost_value(back, k), cost_value(p, k), 1e-5 * cost_value(p, k)) << k.key;
  // Processes compare the fingerprint: the same values give the same, another value another.
  const CostParameters copy = back;
  EXPECT_EQ(cost_fingerprint(copy), cost_fingerprint(back));
  back.alpha *= 2;
  EXPECT_NE(cost_fingerprint(copy), cost_fingerprint(back));
}

// ------------------------------------------------------------------------------------------
// predict_call

TEST(PredictCall, DirectIsMpisCallPlusTlcsOwnWork) {
  const Planner p(across(2, 1), forcing(Collective::allreduce, "hierarchical"));
  for (std::size_t bytes : {std::size_t{8}, std::size_t{1} << 20}) {
    const PlanQuery q = call(Collective::allreduce, bytes);
    const Plan plan = p.plan(q);
    ASSERT_EQ(plan.form, Form::direct);
    const CostQuery mpi{Collective::allreduce, bytes, 2, 2, 1, true, true};
    EXPECT_DOUBLE_EQ(*p.predict_call(q, plan),
                     p.costs().call_overhead + *predict(Algorithm::hierarchical, mpi, p.costs()));
  }
  // tlc's recursive doubling: direct, its messages and tlc's work; staged, a copy in and a copy
  // out more.
  const PlanQuery q = call(Collective::allreduce, 1 << 20);
  const CostQuery mpi{Collective::allreduce, 1 << 20, 2, 2, 1, true, true};
  const double rd_network = *predict(Algorithm::recursive_doubling, mpi, p.costs());
  const Plan direct = *p.forced_plan(q, Algorithm::recursive_doubling);
  EXPECT_EQ(direct.form, Form::direct);
  EXPECT_NEAR(*p.predict_call(q, direct), p.costs().call_overhead + rd_network, 1e-12);
  const Planner staged_only(across(2, 1),
                            forcing(Collective::allreduce, "recursive_doubling:staged"));
  const Plan rd = staged_only.plan(q);
  EXPECT_EQ(rd.form, Form::staged);
  const double copies = 2.0 * (1 << 20) / p.costs().cache_bandwidth;
  EXPECT_NEAR(*p.predict_call(q, rd), p.costs().call_overhead + copies + rd_network, 1e-12);
}

TEST(PredictCall, SingleProcessPhases) {
  CostParameters c;
  c.rendezvous = 1e-6;
  c.call_overhead = 0.25e-6;
  PlanSettings s;
  s.costs = c;
  const Planner p(across(1, 4), s);
  // An 8-byte allreduce of four threads takes the inline form: two rounds of rendezvous.
  const PlanQuery small = call(Collective::allreduce, 8);
  const Plan inline_plan = p.as_run(small, p.plan(small));
  EXPECT_EQ(inline_plan.form, Form::inline_line);
  EXPECT_DOUBLE_EQ(*p.predict_call(small, inline_plan), 2e-6);
  // Sliced: two rendezvous, tlc's work, and each thread's share of the bytes: it writes n bytes
  // (its slice into four outputs) and combines three quarters of n.
  const std::size_t n = 1 << 20;  // working set 8 MiB: inside the caches
  const PlanQuery big = call(Collective::allreduce, n);
  const Plan sliced = p.plan(big);
  EXPECT_EQ(sliced.form, Form::sliced);
  EXPECT_NEAR(*p.predict_call(big, sliced),
              0.25e-6 + 4e-6 + n / c.cache_bandwidth + 0.75 * n / c.reduce_bandwidth, 1e-12);
  // Beyond the caches the memory rate holds.
  const PlanQuery huge = call(Collective::allreduce, std::size_t{64} << 20);
  s.costs.memory_bandwidth = c.memory_bandwidth / 2;
  const Planner slower(across(1, 4), s);
  EXPECT_GT(*slower.predict_call(huge, slower.plan(huge)),
            1.5 * *p.predict_call(huge, p.plan(huge)));
}

TEST(PredictCall, PipeliningOverlapsWhereThreadsAreToSpare) {
  PlanSettings s;
  s.pipeline_chunk_bytes = 1 << 20;
  const Planner p(across(2, 4), s);
  const PlanQuery q = call(Collective::allreduce, std::size_t{64} << 20);
  const Plan pipelined = p.plan(q);
  ASSERT_EQ(pipelined.form, Form::pipelined);
  Plan staged = pipelined;
  staged.form = Form::staged;
  EXPECT_LT(*p.predict_call(q, pipelined), *p.predict_call(q, staged));
}

TEST(PredictCall, AlltoallIsPricedPerRankBlock) {
  // Two processes of two threads, n bytes per block: each process pair exchanges T*T*n bytes
  // in one step of MPICH's pairwise exchange (one message, below the eager limit).
  const std::size_t n = 1024;
  const CostParameters c;
  EXPECT_DOUBLE_EQ(
      *predict(Algorithm::hierarchical, {Collective::alltoall, n, 2, 4, 1, true, true}, c),
      c.mpi_start + c.alpha + 4.0 * n / c.lane_bandwidth);
  // The planner prices a call by its rank block, not by the whole buffer (N blocks).
  const Planner p(across(2, 2), PlanSettings{});
  const PlanQuery q{Collective::alltoall, n, 1, true, false};
  CallCostQuery staged;
  staged.across = {Collective::alltoall, n, 2, 4, 1, true, true};
  staged.threads = 2;
  staged.algorithm = Algorithm::hierarchical;
  staged.form = Form::staged;
  bool priced = false;
  for (const auto& [a, seconds] : p.predictions(q)) {
    if (a != Algorithm::hierarchical) continue;
    EXPECT_DOUBLE_EQ(seconds, *predict_call(staged, c));
    priced = true;
  }
  EXPECT_TRUE(priced);
}

// The Hockney refinements the calibration fits: a handshake for messages past the eager limit,
// and another bandwidth for the bytes of a transfer beyond what the caches hold.
TEST(PredictCall, HandshakeAndMemoryBandwidthOfTheLanes) {
  CostParameters c;
  c.mpi_start = 0;  // MPI's own start-up aside: the message's
  const auto bcast = [&](std::size_t n) {
    return *predict(Algorithm::hierarchical, {Collective::bcast, n, 2, 2, 1, true, true}, c);
  };
  // Two processes: MPICH's binomial bcast is one message of n bytes.
  EXPECT_DOUBLE_EQ(bcast(4096), c.alpha + 4096 / c.lane_bandwidth);
  c.eager_bytes = 1024;
  c.handshake = 3e-6;
  EXPECT_DOUBLE_EQ(bcast(1024), c.alpha + 1024 / c.lane_bandwidth);
  EXPECT_DOUBLE_EQ(bcast(4096), c.alpha + 3e-6 + 4096 / c.lane_bandwidth);
  // Sending and receiving 2 * 8 KiB with 4 KiB of cache: a quarter at the cache's bandwidth.
  c.handshake = 0;
  c.cache_bytes = 4096;
  c.lane_memory_bandwidth = c.lane_bandwidth / 4;
  EXPECT_DOUBLE_EQ(bcast(8192),
                   c.alpha + 8192 * (0.25 / c.lane_bandwidth + 0.75 / c.lane_memory_bandwidth));
}

// tlc's binomial reduce is the binomial bcast's tree run backwards, with a fold of the n bytes
// received at every step: ceil(lg P) folds more.
TEST(PredictCall, BinomialReduceFoldsAtEveryStepOfTheTree) {
  const CostParameters c;
  const std::size_t n = 1 << 20;
  const CostQuery reduce{Collective::reduce, n, 4, 4, 1, true, true};
  const CostQuery bcast{Collective::bcast, n, 4, 4, 1, true, true};
  EXPECT_NEAR(*predict(Algorithm::binomial, reduce, c) - *predict(Algorithm::binomial, bcast, c),
              2.0 * n / c.reduce_bandwidth, 1e-12);
}

// Where MPI's reduce is slow per byte (the factor calibration fits for it), the plan takes tlc's
// binomial reduce for large vectors; where it is as the model prices it, MPI's. (Two threads per
// process and static leaders, so that both run staged: with one thread everywhere the binomial
// reduce runs on the callers' buffers and MPI's does not.)
TEST(PredictCall, PlannerTakesTheBinomialReduceWhereMpisIsSlow) {
  for (const double factor : {1.0, 4.0}) {
    CostParameters c;
    c.mpi_beta[static_cast<std::size_t>(Collective::reduce)] = factor;
    PlanSettings s;
    s.costs = c;
    s.leaders = LeaderPolicy::fixed;
    const Planner p(across(2, 2), s);
    EXPECT_EQ(p.plan(call(Collective::reduce, 8 << 20)).algorithm,
              factor > 1 ? Algorithm::binomial : Algorithm::hierarchical)
        << "MPI_Reduce's per-byte factor " << factor;
  }
}

// The planner chooses on the whole call: with one thread everywhere hierarchical's direct form
// copies nothing, while a point-to-point algorithm's staged form copies in and out of the staging
// buffer; its direct form copies nothing either.
TEST(PredictCall, PlannerWeighsTheCopiesOfTheStagedForms) {
  CostParameters c;
  c.mpi_beta[static_cast<std::size_t>(Collective::alltoall)] = 1.2;  // MPI 20% slower per byte
  c.cache_bandwidth = c.memory_bandwidth = c.lane_bandwidth;         // copies cost as much
  PlanSettings s;
  s.costs = c;
  const Planner p(across(2, 1), s);
  const PlanQuery q = call(Collective::alltoall, 1 << 20);
  // On the inter-process phase alone pairwise is cheaper; with its copies (staged) it is not.
  const CostQuery phase{Collective::alltoall, 1 << 20, 2, 2, 1, true, true};
  EXPECT_LT(*predict(Algorithm::pairwise, phase, c), *predict(Algorithm::hierarchical, phase, c));
  const Plan mpi = Planner(across(2, 1), forcing(Collective::alltoall, "hierarchical")).plan(q);
  const Plan staged =
      Planner(across(2, 1), forcing(Collective::alltoall, "pairwise:staged")).plan(q);
  ASSERT_EQ(mpi.form, Form::direct);
  ASSERT_EQ(staged.form, Form::staged);
  EXPECT_GT(*p.predict_call(q, staged), *p.predict_call(q, mpi));
  // Its direct form: the cheapest.
  EXPECT_EQ(p.plan(q).algorithm, Algorithm::pairwise);
  EXPECT_EQ(p.plan(q).form, Form::direct);
}

}  // namespace

namespace {

// TLC_LEADERS (TeamOptions::leaders wins over it): auto by default, static, dynamic; anything
// else is an error naming what is accepted.
TEST(Config, LeaderPolicy) {
  EXPECT_EQ(Config::read(tlc::TeamOptions{}).plan.leaders, LeaderPolicy::by_plan);
  const std::pair<const char*, LeaderPolicy> accepted[] = {{"auto", LeaderPolicy::by_plan},
                                                           {"static", LeaderPolicy::fixed},
                                                           {"dynamic", LeaderPolicy::by_arrival}};
  for (const auto& [text, policy] : accepted) {
    const ScopedVariable leaders("TLC_LEADERS", text);
    EXPECT_EQ(Config::read(tlc::TeamOptions{}).plan.leaders, policy) << text;
    tlc::TeamOptions o;
    o.leaders = "static";
    EXPECT_EQ(Config::read(o).plan.leaders, LeaderPolicy::fixed) << text;
  }
  const ScopedVariable bad("TLC_LEADERS", "first");
  try {
    Config::read(tlc::TeamOptions{});
    ADD_FAILURE() << "TLC_LEADERS=first was accepted";
  } catch (const tlc::Error& e) {
    EXPECT_NE(std::string(e.what()).find("'auto', 'static' or 'dynamic'"), std::string::npos)
        << e.what();
  }
}

}  // namespace
