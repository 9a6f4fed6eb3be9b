// Measured times in the plan (src/select/measured.hpp): the tuning file's `measured` lines are
// read, checked and written back; where the team has a measured shape the planner chooses what
// was measured fastest and prices it at the measured time; other shapes keep the model's choice.
#include <gtest/gtest.h>

#include <cmath>
#include <sstream>
#include <string>

#include <tlc/error.hpp>

#include "select/measured.hpp"
#include "select/planner.hpp"
#include "select/tuning.hpp"

namespace {

using namespace tlc::detail;
using tlc::Collective;

TeamShape team(int processes, int threads, int lanes = 1) {
  return {processes, threads, lanes, 1, processes * threads, true};
}

PlanQuery call(Collective c, std::size_t bytes) { return {c, bytes / 8, 8, true, false}; }

MeasuredTimes read(const std::string& text, CostParameters* costs = nullptr) {
  CostParameters p;
  MeasuredTimes m;
  std::istringstream in(text);
  read_tuning(in, "test", costs ? *costs : p, &m);
  return m;
}

std::string what_reading(const std::string& text) {
  try {
    read(text);
  } catch (const tlc::Error& e) {
    EXPECT_EQ(e.code(), tlc::Errc::invalid_argument);
    return e.what();
  }
  return "no error";
}

TEST(MeasuredTimes, LinesAreReadInOrderOfSize) {
  CostParameters costs;
  const MeasuredTimes m = read(
      "alpha_us = 3\n"
      "measured allreduce recursive_doubling 2x1x1 1024 = 4.5  # a comment\n"
      "measured allreduce recursive_doubling 2x1x1 8 = 1.25\n"
      "measured allreduce hierarchical 2x1x1 8 = 2\n"
      "measured bcast flat 1x2x1 64 = 0.5\n",
      &costs);
  EXPECT_DOUBLE_EQ(costs.alpha, 3e-6);
  const MeasuredShape two_by_one{2, 1, 1};
  const auto rd = m.points(Collective::allreduce, Algorithm::recursive_doubling, two_by_one);
  ASSERT_EQ(rd.size(), 2u);
  EXPECT_EQ(rd[0].bytes, 8u);
  EXPECT_DOUBLE_EQ(rd[0].seconds, 1.25e-6);
  EXPECT_EQ(rd[1].bytes, 1024u);
  EXPECT_DOUBLE_EQ(rd[1].seconds, 4.5e-6);
  EXPECT_EQ(m.points(Collective::allreduce, Algorithm::hierarchical, two_by_one).size(), 1u);
  EXPECT_TRUE(m.points(Collective::allreduce, Algorithm::recursive_doubling, {2, 2, 1}).empty());
  EXPECT_TRUE(m.covers(Collective::bcast, {1, 2, 1}));
  EXPECT_FALSE(m.covers(Collective::bcast, two_by_one));
}

TEST(MeasuredTimes, BadLinesNameTheLine) {
  EXPECT_NE(what_reading("measured allreduce ring 2x1x1 8 = 1\n").find("line 1"),
            std::string::npos);
  EXPECT_NE(what_reading("measured allreduce ring 2x1x1 8 = 1\n").find("unknown algorithm 'ring'"),
            std::string::npos);
  EXPECT_NE(what_reading("measured allreduc hierarchical 2x1x1 8 = 1\n").find("allreduc"),
            std::string::npos);
  EXPECT_NE(what_reading("\nmeasured allreduce hierarchical 2x1 8 = 1\n").find("line 2"),
            std::string::npos);
  EXPECT_NE(what_reading("measured allreduce hierarchical 0x1x1 8 = 1\n").find("team shape"),
            std::string::npos);
  EXPECT_NE(what_reading("measured allreduce hierarchical 2x1x1 -8 = 1\n").find("size in bytes"),
            std::string::npos);
  EXPECT_NE(what_reading("measured allreduce hierarchical 2x1x1 8 = -1\n").find("microseconds"),
            std::string::npos);
  EXPECT_NE(what_reading("measured allreduce hierarchical 2x1x1 8 = 1\n"
                         "measured allreduce hierarchical 2x1x1 8 = 2\n")
                .find("already given"),
            std::string::npos);
  EXPECT_NE(what_reading("measured allreduce hierarchical 2x1x1 = 1\n").find("not of the form"),
            std::string::npos);
  // A bad measured line leaves the parameters as they were.
  CostParameters costs;
  std::istringstream in("alpha_us = 9\nmeasured allreduce hierarchical 2x1x1 8 = x\n");
  MeasuredTimes m;
  EXPECT_THROW(read_tuning(in, "test", costs, &m), tlc::Error);
  EXPECT_DOUBLE_EQ(costs.alpha, CostParameters{}.alpha);
  EXPECT_TRUE(m.empty());
}

TEST(MeasuredTimes, WrittenFileReadsBackAndTheDigestSeesThem) {
  MeasuredTimes m;
  ASSERT_TRUE(m.add(Collective::allgather, Algorithm::ring, {2, 1, 1}, {1 << 20, 123.5e-6}));
  ASSERT_TRUE(m.add(Collective::allgather, Algorithm::ring, {2, 1, 1}, {8, 1.5e-6}));
  EXPECT_FALSE(m.add(Collective::allgather, Algorithm::ring, {2, 1, 1}, {8, 2e-6}));
  ASSERT_TRUE(m.add(Collective::bcast, Algorithm::sliced, {1, 2, 1}, {64, 0.25e-6}));
  const CostParameters p;
  const MeasuredTimes back = read(tuning_text(p, {"a test"}, &m));
  EXPECT_EQ(back.text(), m.text());
  EXPECT_EQ(back.digest(), m.digest());
  EXPECT_EQ(cost_fingerprint(p, back), cost_fingerprint(p, m));
  EXPECT_NE(cost_fingerprint(p, m), cost_fingerprint(p));
  MeasuredTimes other = m;
  other.erase({1, 2, 1});
  EXPECT_FALSE(other.covers(Collective::bcast, {1, 2, 1}));
  EXPECT_TRUE(other.covers(Collective::allgather, {2, 1, 1}));
  EXPECT_NE(other.digest(), m.digest());
  other.merge(m);
  EXPECT_EQ(other.points(Collective::bcast, Algorithm::sliced, {1, 2, 1}).size(), 1u);
}

TEST(MeasuredTimes, FactorInterpolatesTheRatioGeometrically) {
  // The model says 1 s everywhere; measured 2 s at 100 B and 8 s at 10000 B.
  const MeasuredPoint points[] = {{100, 2}, {10000, 8}};
  auto one = [](std::size_t) { return std::optional<double>(1.0); };
  EXPECT_DOUBLE_EQ(measured_factor(points, 100, one), 2);
  EXPECT_DOUBLE_EQ(measured_factor(points, 10000, one), 8);
  EXPECT_NEAR(measured_factor(points, 1000, one), 4, 1e-9);  // halfway in log size
  EXPECT_DOUBLE_EQ(measured_factor(points, 10, one), 2);     // the end ratios beyond
  EXPECT_DOUBLE_EQ(measured_factor(points, 1 << 30, one), 8);
  // A size the model cannot price is skipped: the next one counts.
  auto not_100 = [](std::size_t b) { return b == 100 ? std::nullopt : std::optional<double>(1.0); };
  EXPECT_DOUBLE_EQ(measured_factor(points, 1000, not_100), 8);
  EXPECT_DOUBLE_EQ(measured_factor({}, 1000, one), 1);
}

// Across processes: the times make Rabenseifner fastest at small sizes and recursive doubling
// at large ones (the model says the opposite); where the team has the measured shape the plan
// follows them and prices them as measured, at another shape the model decides as without them.
TEST(MeasuredTimes, PlanAcrossProcessesFollowsThem) {
  PlanSettings model;
  model.costs.lane_parallelism = 1;
  PlanSettings tuned = model;
  const MeasuredShape shape{2, 1, 1};
  const std::size_t sizes[] = {8, 512, 32 << 10, 2 << 20, 64 << 20};
  for (const std::size_t n : sizes) {
    const double base = 1e-6 + static_cast<double>(n) * 1e-10;
    const bool small = n <= (32 << 10);
    tuned.measured.add(Collective::allreduce, Algorithm::hierarchical, shape, {n, base});
    tuned.measured.add(Collective::allreduce, Algorithm::recursive_doubling, shape,
                       {n, small ? base * 3 : base / 2});
    tuned.measured.add(Collective::allreduce, Algorithm::rabenseifner, shape,
                       {n, small ? base / 2 : base * 3});
  }
  const Planner plain(team(2, 1), model), measured(team(2, 1), tuned);
  const Planner elsewhere(team(3, 1), model), elsewhere_tuned(team(3, 1), tuned);
  bool differs = false;
  for (const std::size_t n : {std::size_t{8}, std::size_t{4096}, std::size_t{32} << 10,
                              std::size_t{8} << 20, std::size_t{64} << 20}) {
    const PlanQuery q = call(Collective::allreduce, n);
    const Algorithm expected =
        n <= (32 << 10) ? Algorithm::rabenseifner : Algorithm::recursive_doubling;
    EXPECT_EQ(measured.plan(q).algorithm, expected) << n << " B";
    differs = differs || plain.plan(q).algorithm != expected;
    EXPECT_EQ(elsewhere_tuned.plan(q).algorithm, elsewhere.plan(q).algorithm) << n << " B";
  }
  EXPECT_TRUE(differs) << "the model alone chose as the measurements: the test shows nothing";
  // At a measured size the price is the measured time.
  bool priced = false;
  for (const auto& [algorithm, seconds] : measured.predictions(call(Collective::allreduce, 512))) {
    if (algorithm != Algorithm::rabenseifner) continue;
    EXPECT_NEAR(seconds, (1e-6 + 512e-10) / 2, 1e-12);
    priced = true;
  }
  EXPECT_TRUE(priced);
}

// The bcast led by arrival is never chosen on the model alone (it prices it as hierarchical plus
// a copy); measured faster at this shape, it is.
TEST(MeasuredTimes, ArrivalLedBcastOnlyWhereMeasuredFaster) {
  PlanSettings tuned;
  const MeasuredShape shape{2, 2, 1};
  for (const std::size_t n : {std::size_t{8}, std::size_t{1024}, std::size_t{1} << 20}) {
    const double base = 1e-6 + static_cast<double>(n) * 1e-10;
    tuned.measured.add(Collective::bcast, Algorithm::hierarchical, shape, {n, base});
    tuned.measured.add(Collective::bcast, Algorithm::dynamic, shape,
                       {n, n <= 1024 ? base / 2 : base * 2});
  }
  const Planner plain(team(2, 2), PlanSettings{}), measured(team(2, 2), tuned);
  for (const std::size_t n : {std::size_t{8}, std::size_t{1024}, std::size_t{1} << 20})
    EXPECT_NE(plain.plan(call(Collective::bcast, n)).algorithm, Algorithm::dynamic) << n;
  const Plan small = measured.plan(call(Collective::bcast, 512));
  EXPECT_EQ(small.algorithm, Algorithm::dynamic);
  EXPECT_EQ(small.leader(), Leader::arrival);
  EXPECT_NE(measured.plan(call(Collective::bcast, 1 << 20)).algorithm, Algorithm::dynamic);
}

// Inside one process: the size rule takes allgather's flat up to 2 KiB; measured times that make
// flat faster up to 8 KiB move the switch there, only at the measured thread count.
TEST(MeasuredTimes, PlanInsideAProcessFollowsThem) {
  PlanSettings tuned;
  const MeasuredShape shape{1, 2, 1};
  for (const std::size_t n : {std::size_t{8}, std::size_t{128}, std::size_t{2048}, std::size_t{8192},
                              std::size_t{32768}, std::size_t{1} << 20}) {
    const double base = 1e-7 + static_cast<double>(n) * 1e-10;
    tuned.measured.add(Collective::allgather, Algorithm::flat, shape, {n, base});
    tuned.measured.add(Collective::allgather, Algorithm::sliced, shape,
                       {n, n > 8192 ? base / 2 : base * 2});
  }
  const Planner plain(team(1, 2), PlanSettings{}), measured(team(1, 2), tuned);
  const Planner three(team(1, 3), tuned);
  EXPECT_EQ(plain.plan(call(Collective::allgather, 4096)).algorithm, Algorithm::sliced);
  EXPECT_EQ(measured.plan(call(Collective::allgather, 4096)).algorithm, Algorithm::flat);
  EXPECT_EQ(measured.plan(call(Collective::allgather, 128)).algorithm, Algorithm::flat);
  EXPECT_EQ(measured.plan(call(Collective::allgather, 64 << 20)).algorithm, Algorithm::sliced);
  EXPECT_EQ(three.plan(call(Collective::allgather, 4096)).algorithm, Algorithm::sliced);
  // Collectives without measurements keep the size rule (reduce: flat up to 2 KiB).
  EXPECT_EQ(measured.plan(call(Collective::reduce, 4096)).algorithm, Algorithm::sliced);
  EXPECT_EQ(measured.plan(call(Collective::reduce, 2048)).algorithm, Algorithm::flat);
}

// A flat call small enough for the inline form runs inline, and was measured so: its price, in
// the form it runs in, is the measured time (the model of the carried form would scale the
// inline one wrongly: the two differ by more than the test's tolerance).
TEST(MeasuredTimes, InlineCallsArePricedAtTheirMeasuredTime) {
  PlanSettings tuned;
  const MeasuredShape shape{1, 2, 1};
  const double at_8 = 0.2e-6, at_2k = 1.1e-6;
  tuned.measured.add(Collective::allreduce, Algorithm::flat, shape, {8, at_8});
  tuned.measured.add(Collective::allreduce, Algorithm::flat, shape, {2048, at_2k});
  const Planner measured(team(1, 2), tuned), plain(team(1, 2), PlanSettings{});
  const PlanQuery q = call(Collective::allreduce, 8);
  const Plan p = measured.as_run(q, measured.plan(q));
  ASSERT_EQ(p.algorithm, Algorithm::flat);
  ASSERT_EQ(p.form, Form::inline_line);
  Plan carried = p;
  carried.form = Form::carried;
  ASSERT_GT(*plain.predict_call(q, carried), 1.2 * *plain.predict_call(q, p))
      << "the model prices both forms alike: the test shows nothing";
  EXPECT_NEAR(*measured.priced_call(q, p), at_8, 1e-12);
  const PlanQuery big = call(Collective::allreduce, 2048);
  EXPECT_NEAR(*measured.priced_call(big, measured.as_run(big, measured.plan(big))), at_2k, 1e-12);
}

}  // namespace
