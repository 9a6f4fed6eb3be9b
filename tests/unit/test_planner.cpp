// The planner (src/select/planner.hpp): one plan per call from tables filled once per team.
// Each test builds a Planner for a team shape and checks the decisions that used to be spread
// over the algorithms: forms, fallbacks of forced choices, pipelining, the inline form.
#include <gtest/gtest.h>

#include <tlc/error.hpp>

#include "select/collective_traits.hpp"
#include "select/planner.hpp"

namespace {

using namespace tlc::detail;
using tlc::Collective;

TeamShape across(int processes, int threads, int lanes = 1, bool equal = true) {
  TeamShape s{processes, threads, lanes, 1, processes * threads, equal};
  s.most_threads = equal ? threads : threads + 1;
  return s;
}

PlanQuery call(Collective c, std::size_t count, std::size_t e = 8, bool commutative = true) {
  return {c, count, e, commutative, false};
}

PlanSettings forcing(Collective c, const std::string& choice) {
  PlanSettings s;
  s.forced[static_cast<std::size_t>(c)] = parse_override(c, choice, "test");
  return s;
}

TEST(Planner, OneProcessTakesFlatSlicedOrTwoLevel) {
  const Planner p(across(1, 4), PlanSettings{});
  EXPECT_EQ(p.plan(call(Collective::allreduce, 16)).algorithm, Algorithm::flat);
  EXPECT_EQ(p.plan(call(Collective::allreduce, 16)).form, Form::carried);
  EXPECT_EQ(p.plan(call(Collective::allreduce, 1 << 20)).form, Form::sliced);
  EXPECT_EQ(p.plan(call(Collective::allgatherv, 0)).form, Form::sliced);
  // exscan and scatter take flat as long as it carries (copies) the data, 4 KiB (count in 8-byte
  // elements; scatter's bytes are the root's buffer, 4 blocks here), sliced past it.
  for (const auto& [count, algorithm] :
       {std::pair{64, Algorithm::flat}, std::pair{65, Algorithm::flat},
        std::pair{512, Algorithm::flat}, std::pair{513, Algorithm::sliced},
        std::pair{8 * 1024, Algorithm::sliced}})
    EXPECT_EQ(p.plan(call(Collective::exscan, count)).algorithm, algorithm) << count;
  EXPECT_EQ(p.plan(call(Collective::scatter, 128)).algorithm, Algorithm::flat);
  EXPECT_EQ(p.plan(call(Collective::scatter, 129)).algorithm, Algorithm::sliced);
  // The others as far as the lines form beat sliced: buffers of 1 KiB (allreduce), 2 KiB
  // (reduce, allgather), 4 KiB (bcast, gather; alltoall, all 4 blocks).
  for (const auto& [c, largest] :
       {std::pair{Collective::allreduce, 128}, std::pair{Collective::reduce, 256},
        std::pair{Collective::allgather, 256}, std::pair{Collective::bcast, 512},
        std::pair{Collective::gather, 512}, std::pair{Collective::alltoall, 128}}) {
    const std::size_t n = static_cast<std::size_t>(largest);
    EXPECT_EQ(p.plan(call(c, n)).algorithm, Algorithm::flat) << tlc::to_string(c);
    EXPECT_EQ(p.plan(call(c, n + 1)).algorithm, Algorithm::sliced) << tlc::to_string(c);
  }
  EXPECT_EQ(p.plan(call(Collective::scan, 64)).algorithm, Algorithm::flat);
  EXPECT_EQ(p.plan(call(Collective::scan, 65)).algorithm, Algorithm::sliced);
  TeamShape numa = across(1, 4);
  numa.numa_groups = 2;
  const Planner q(numa, PlanSettings{});
  EXPECT_EQ(q.plan(call(Collective::reduce, 1 << 20)).form, Form::two_level);
  EXPECT_EQ(q.plan(call(Collective::bcast, 1 << 20)).form, Form::sliced);
}

TEST(Planner, InlineFormNeedsABeginLineAndALineKernel) {
  const Planner p(across(1, 2), PlanSettings{});
  Call c;
  c.collective = Collective::allreduce;
  c.op = tlc::detail::BuiltinOp::sum;
  c.type = {TypeClass::floating, 8, 8};
  EXPECT_TRUE(p.serves_inline(c, 4));   // 32 bytes
  EXPECT_FALSE(p.serves_inline(c, 5));  // 40 bytes
  c.op = tlc::detail::BuiltinOp::band;  // no bitwise and on doubles
  EXPECT_FALSE(p.serves_inline(c, 1));
  c.op = tlc::detail::BuiltinOp::none;  // a user op
  EXPECT_FALSE(p.serves_inline(c, 1));
  c.collective = Collective::alltoall;  // not inline-capable
  EXPECT_FALSE(p.serves_inline(c, 1));
  const Planner forced(across(1, 2), forcing(Collective::allreduce, "sliced"));
  c.collective = Collective::allreduce;
  c.op = tlc::detail::BuiltinOp::sum;
  EXPECT_FALSE(forced.serves_inline(c, 1));
  const Planner two(across(2, 1), PlanSettings{});
  EXPECT_FALSE(two.serves_inline(c, 1));  // several processes
}

TEST(Planner, DirectFormForOneThreadHierarchical) {
  const Planner everywhere(across(2, 1), forcing(Collective::allgather, "hierarchical"));
  const Plan p = everywhere.plan(call(Collective::allgather, 100));
  EXPECT_EQ(p.algorithm, Algorithm::hierarchical);
  EXPECT_EQ(p.form, Form::direct);
  EXPECT_TRUE(p.one_thread_everywhere);
  // MPI's scan has no direct composition; MPI's alltoall in place has none either.
  EXPECT_EQ(Planner(across(2, 1), forcing(Collective::scan, "hierarchical"))
                .plan(call(Collective::scan, 100))
                .form,
            Form::staged);
  PlanQuery in_place = call(Collective::alltoall, 100);
  in_place.in_place = true;
  EXPECT_EQ(
      Planner(across(2, 1), forcing(Collective::alltoall, "hierarchical")).plan(in_place).form,
      Form::staged);
  // One thread here, two elsewhere: direct by default, but not reduce_scatter_block, whose
  // direct form is MPI's non-v collective.
  const Planner uneven(across(2, 1, 1, false), forcing(Collective::allgather, "hierarchical"));
  EXPECT_EQ(uneven.plan(call(Collective::allgather, 100)).form, Form::direct);
  EXPECT_FALSE(uneven.plan(call(Collective::allgather, 100)).one_thread_everywhere);
  EXPECT_EQ(uneven.plan(call(Collective::reduce_scatter_block, 100)).form, Form::staged);
}

// tlc's point-to-point algorithms run on the callers' buffers too, with one thread everywhere
// only; that is what the plan takes for small calls (MPI's collectives, run non-blocking and
// polled, start up slower: CostParameters::mpi_start).
TEST(Planner, DirectFormForOneThreadMultiSender) {
  const Planner everywhere(across(2, 1), PlanSettings{});
  for (const Collective c :
       {Collective::barrier, Collective::bcast, Collective::reduce, Collective::allreduce,
        Collective::allgather, Collective::gather, Collective::scatter, Collective::alltoall,
        Collective::reduce_scatter_block, Collective::scan, Collective::exscan}) {
    const Plan p = everywhere.plan(call(c, 1));
    EXPECT_TRUE(is_multi_sender(p.algorithm)) << tlc::to_string(c);
    EXPECT_EQ(p.form, c == Collective::barrier ? Form::staged : Form::direct) << tlc::to_string(c);
  }
  for (const char* forced : {"recursive_doubling:direct", "rabenseifner:direct"}) {
    const Plan p = Planner(across(2, 1), forcing(Collective::allreduce, forced))
                       .plan(call(Collective::allreduce, 100));
    EXPECT_EQ(p.form, Form::direct) << forced;
    EXPECT_FALSE(p.fell_back) << forced;
  }
  // Two threads somewhere: the multi-sender algorithms run staged, and their direct form
  // falls back.
  const Plan uneven = Planner(across(2, 1, 1, false), forcing(Collective::allgather, "ring"))
                          .plan(call(Collective::allgather, 100));
  EXPECT_EQ(uneven.algorithm, Algorithm::ring);
  EXPECT_EQ(uneven.form, Form::staged);
  EXPECT_TRUE(Planner(across(2, 1, 1, false), forcing(Collective::allgather, "ring:direct"))
                  .plan(call(Collective::allgather, 100))
                  .fell_back);
  // Algorithms without one do not list it: naming it is an error.
  EXPECT_THROW(forcing(Collective::alltoallv, "pairwise:direct"), tlc::Error);
}

TEST(Planner, AllreduceBetweenTwoProcessesTakesRabenseifnerFrom64KiB) {
  // With the built-in parameters recursive doubling pays for combining the bytes its partner has
  // just read (cost_model.cpp): one message of 32 KiB still beats Rabenseifner's two of 16 KiB,
  // from 64 KiB Rabenseifner's half combine wins (docs/model.md, "Inputs the partner has just
  // read"; counts of 8-byte elements).
  const Planner p(across(2, 1), PlanSettings{});
  EXPECT_EQ(p.plan(call(Collective::allreduce, 4 * 1024)).algorithm, Algorithm::recursive_doubling);
  for (const std::size_t count : {8 * 1024, 16 * 1024, 32 * 1024})
    EXPECT_EQ(p.plan(call(Collective::allreduce, count)).algorithm, Algorithm::rabenseifner)
        << count;
}

TEST(Planner, PipelinesFromTwoChunks) {
  PlanSettings s;
  s.pipeline_chunk_bytes = 1 << 20;
  s.leaders = LeaderPolicy::fixed;  // the static algorithms pipeline
  const Planner p(across(2, 2), s);
  EXPECT_EQ(p.plan(call(Collective::allreduce, (1 << 18) - 1)).form, Form::staged);  // < 2 MiB
  const Plan big = p.plan(call(Collective::allreduce, 1 << 18));                     // 2 MiB
  EXPECT_EQ(big.form, Form::pipelined);
  EXPECT_EQ(big.chunk_bytes, std::size_t{1} << 20);
  // Not with one thread everywhere and one leader: nothing to overlap.
  const Planner single(across(2, 1), s);
  EXPECT_NE(single.plan(call(Collective::allreduce, 1 << 22)).form, Form::pipelined);
  // Movers only where cores are to spare.
  s.pipeline_movers = false;
  const Planner busy(across(2, 2), s);
  EXPECT_EQ(busy.plan(call(Collective::allgather, 1 << 22)).form, Form::staged);
  EXPECT_EQ(busy.plan(call(Collective::allreduce, 1 << 22)).form, Form::pipelined);
}

TEST(Planner, ForcedChoicesServeWhereTheyCan) {
  const Planner p(across(2, 2, 3), forcing(Collective::allreduce, "full_lane:pipelined"));
  const Plan plan = p.plan(call(Collective::allreduce, 10));
  EXPECT_EQ(plan.algorithm, Algorithm::full_lane);
  EXPECT_EQ(plan.form, Form::pipelined);
  EXPECT_EQ(plan.lanes, 3);
  EXPECT_EQ(plan.leader(), Leader::lane_threads);
  EXPECT_FALSE(plan.fell_back);
}

TEST(Planner, ForcedChoicesThatCannotServeFallBack) {
  std::string why;
  // Non-commutative op: the automatic plan, with the reason.
  const Planner rab(across(2, 2), forcing(Collective::allreduce, "rabenseifner"));
  Plan p = rab.plan(call(Collective::allreduce, 100, 8, false), &why);
  EXPECT_TRUE(p.fell_back);
  EXPECT_NE(p.algorithm, Algorithm::rabenseifner);
  EXPECT_NE(why.find("commutative"), std::string::npos) << why;
  EXPECT_FALSE(rab.plan(call(Collective::allreduce, 100, 8, true)).fell_back);
  // Only the form cannot serve: the same algorithm in its own form.
  const Planner direct(across(2, 2), forcing(Collective::allreduce, "hierarchical:direct"));
  p = direct.plan(call(Collective::allreduce, 100));
  EXPECT_TRUE(p.fell_back);
  EXPECT_EQ(p.algorithm, Algorithm::hierarchical);
  EXPECT_EQ(p.form, Form::staged);
  // Bruck with unequal processes; full_lane with one thread everywhere; single-process
  // algorithms across processes and the reverse.
  EXPECT_TRUE(Planner(across(2, 2, 1, false), forcing(Collective::allgather, "bruck"))
                  .plan(call(Collective::allgather, 8))
                  .fell_back);
  EXPECT_FALSE(Planner(across(2, 2), forcing(Collective::allgather, "bruck"))
                   .plan(call(Collective::allgather, 8))
                   .fell_back);
  EXPECT_TRUE(Planner(across(2, 1, 2), forcing(Collective::allreduce, "full_lane"))
                  .plan(call(Collective::allreduce, 8))
                  .fell_back);
  EXPECT_TRUE(Planner(across(2, 2), forcing(Collective::allreduce, "flat"))
                  .plan(call(Collective::allreduce, 8))
                  .fell_back);
  EXPECT_TRUE(Planner(across(1, 2), forcing(Collective::allreduce, "recursive_doubling"))
                  .plan(call(Collective::allreduce, 8))
                  .fell_back);
  // hierarchical on one process is the single-process work, not a fallback.
  EXPECT_FALSE(Planner(across(1, 2), forcing(Collective::allreduce, "hierarchical"))
                   .plan(call(Collective::allreduce, 8))
                   .fell_back);
}

TEST(Planner, OverridesNameKnownAlgorithmsAndForms) {
  EXPECT_THROW(parse_override(Collective::allreduce, "nope", "test"), tlc::Error);
  EXPECT_THROW(parse_override(Collective::allreduce, "ring", "test"), tlc::Error);
  EXPECT_THROW(parse_override(Collective::allreduce, "full_lane:direct", "test"), tlc::Error);
  EXPECT_THROW(parse_override(Collective::scan, "hierarchical:direct", "test"), tlc::Error);
  const Override o = parse_override(Collective::bcast, "hierarchical:pipelined", "test");
  EXPECT_EQ(o.algorithm, Algorithm::hierarchical);
  EXPECT_EQ(o.form, Form::pipelined);
}

TEST(Planner, CostTableMatchesTheModelAtBandStarts) {
  // The table answers the cost model's cheapest algorithm for the band's first size (static
  // leaders: the default leads some sizes by arrival, which the table does not price).
  PlanSettings fixed;
  fixed.leaders = LeaderPolicy::fixed;
  const Planner p(across(4, 2, 2), fixed);
  for (std::size_t bytes : {std::size_t{8}, std::size_t{4096}, std::size_t{1} << 20}) {
    const auto all = p.predictions(call(Collective::allreduce, bytes / 8));
    ASSERT_FALSE(all.empty());
    Algorithm best = all.front().first;
    double cost = all.front().second;
    for (const auto& [a, c] : all)
      if (c < cost) {
        best = a;
        cost = c;
      }
    EXPECT_EQ(p.plan(call(Collective::allreduce, bytes / 8)).algorithm, best) << bytes;
  }
}

}  // namespace

// The per-thread cache answers what the planner answers, also for queries that share a cache
// entry (many sizes, both op kinds, in place and not, over every collective) and when a query
// comes back after others have replaced it.
TEST(PlanCache, AnswersWhatThePlannerAnswers) {
  const Planner p(across(3, 2, 2, false), forcing(Collective::allreduce, "full_lane"));
  PlanCache cache;
  for (int pass = 0; pass < 2; ++pass)
    for (std::size_t c = 0; c < collective_count; ++c)
      for (std::size_t count : {0, 1, 7, 100, 4099, 1 << 17, 1 << 21})
        for (std::size_t e : {1, 8})
          for (bool commutative : {true, false})
            for (bool in_place : {false, true}) {
              const PlanQuery q{static_cast<Collective>(c), count, e, commutative, in_place};
              const PlanCache::Entry& got =
                  cache.get(p, q, 64 << 10, [](Collective, std::size_t) { return 7; });
              EXPECT_EQ(got.plan, p.plan(q))
                  << tlc::to_string(q.collective) << " count " << count << " e " << e;
              const std::optional<Plan> alternative = p.arrival_alternative(q, got.plan, 64 << 10);
              EXPECT_EQ(got.switch_class, alternative ? 7 : -1);
              if (alternative) {
                EXPECT_EQ(got.alternative, *alternative);
              }
            }
}

// Under the default leaders, a large call whose plan has static leaders may switch to the plan
// led by arrival (team/leader_switch.hpp): across processes with several threads, above the
// size given, never where the plan already leads by arrival, nor with leaders forced.
TEST(Planner, ArrivalAlternativeOfLargeStaticCalls) {
  const std::size_t min = 64 << 10;
  const Planner team(across(2, 2), PlanSettings{});
  const PlanQuery large = call(Collective::allreduce, 1 << 20);  // 8 MiB of doubles: static
  ASSERT_NE(team.plan(large).leader(), Leader::arrival);
  const std::optional<Plan> alt = team.arrival_alternative(large, team.plan(large), min);
  ASSERT_TRUE(alt);
  EXPECT_EQ(alt->leader(), Leader::arrival);
  EXPECT_FALSE(team.arrival_alternative(call(Collective::allreduce, 8),
                                        team.plan(call(Collective::allreduce, 8)), min));
  const PlanQuery reduce = call(Collective::reduce, 8 << 10);  // led by arrival already
  EXPECT_FALSE(team.arrival_alternative(reduce, team.plan(reduce), min));
  const Planner one_thread(across(2, 1), PlanSettings{});
  EXPECT_FALSE(one_thread.arrival_alternative(large, one_thread.plan(large), min));
  PlanSettings fixed;
  fixed.leaders = LeaderPolicy::fixed;
  const Planner static_leaders(across(2, 2), fixed);
  EXPECT_FALSE(static_leaders.arrival_alternative(large, static_leaders.plan(large), min));
}

namespace {

// By default (TLC_LEADERS unset, or auto) the plan leads by arrival across processes with several
// threads, where that is no slower with balanced arrivals, and never inside one process or with
// one thread everywhere; "static" never does.
TEST(Planner, LeadersChosenByThePlanByDefault) {
  const Planner team(across(2, 2), PlanSettings{});
  EXPECT_EQ(team.plan(call(Collective::reduce, 8)).leader(), Leader::arrival);
  EXPECT_EQ(team.plan(call(Collective::bcast, 8 << 10)).leader(), Leader::arrival);
  EXPECT_EQ(team.plan(call(Collective::bcast, 1 << 19)).leader(), Leader::arrival);  // 4 MiB
  EXPECT_EQ(team.plan(call(Collective::alltoall, 1 << 10)).leader(), Leader::arrival);
  EXPECT_EQ(team.plan(call(Collective::scan, 1)).leader(), Leader::arrival);
  EXPECT_NE(team.plan(call(Collective::scan, 1 << 17)).leader(), Leader::arrival);   // 1 MiB
  EXPECT_EQ(team.plan(call(Collective::scan, 1 << 18)).leader(), Leader::arrival);   // 2 MiB
  EXPECT_NE(team.plan(call(Collective::alltoall, 8)).leader(), Leader::arrival);     // 64 B blocks
  EXPECT_NE(team.plan(call(Collective::bcast, 1 << 20)).leader(), Leader::arrival);  // 8 MiB
  for (const std::size_t n : {std::size_t{1}, std::size_t{4} << 10})
    EXPECT_NE(team.plan(call(Collective::allreduce, n)).leader(), Leader::arrival) << n;
  EXPECT_NE(team.plan(call(Collective::allgather, 1)).leader(), Leader::arrival);  // none
  // Uneven teams too: one process of two threads is enough.
  EXPECT_EQ(
      Planner(across(2, 1, 1, false), PlanSettings{}).plan(call(Collective::reduce, 8)).leader(),
      Leader::arrival);
  for (const TeamShape& shape : {across(1, 4), across(3, 1)})
    for (const Collective c : {Collective::reduce, Collective::bcast, Collective::alltoall})
      EXPECT_NE(Planner(shape, PlanSettings{}).plan(call(c, 8)).leader(), Leader::arrival)
          << tlc::to_string(c) << " " << shape.processes << " x " << shape.threads;
  PlanSettings fixed;
  fixed.leaders = LeaderPolicy::fixed;
  EXPECT_NE(Planner(across(2, 2), fixed).plan(call(Collective::reduce, 8)).leader(),
            Leader::arrival);
  // The policy is part of what the processes compare.
  EXPECT_NE(choice_fingerprint(fixed), choice_fingerprint(PlanSettings{}));
}

// Leaders elected by arrival: forced per collective, or asked for the whole team
// (TLC_LEADERS=dynamic), which changes the collectives that have such an algorithm and no other.
TEST(Planner, LeadersByArrivalWhereAskedFor) {
  for (const int processes : {1, 3}) {
    PlanSettings reduce_only = forcing(Collective::reduce, "dynamic");
    reduce_only.leaders = LeaderPolicy::fixed;  // the others' leaders static
    const Planner forced(across(processes, 2), reduce_only);
    const Plan p = forced.plan(call(Collective::reduce, 1 << 20));
    EXPECT_EQ(p.algorithm, Algorithm::dynamic);
    EXPECT_EQ(p.leader(), Leader::arrival);
    EXPECT_FALSE(p.fell_back);
    EXPECT_NE(forced.plan(call(Collective::bcast, 8)).algorithm, Algorithm::dynamic);

    PlanSettings asked;
    asked.leaders = LeaderPolicy::by_arrival;
    const Planner team(across(processes, 2), asked);
    for (const Collective c : {Collective::reduce, Collective::bcast, Collective::scatter,
                               Collective::allreduce, Collective::reduce_scatter_block,
                               Collective::scan, Collective::exscan, Collective::alltoall})
      for (const std::size_t n : {std::size_t{1}, std::size_t{1} << 20})
        EXPECT_EQ(team.plan(call(c, n)).leader(), Leader::arrival) << tlc::to_string(c) << " " << n;
    EXPECT_NE(team.plan(call(Collective::allgather, 1)).leader(), Leader::arrival);
    Call small;
    small.collective = Collective::reduce;
    small.op = tlc::detail::BuiltinOp::sum;
    small.type = {TypeClass::floating, 8, 8};
    EXPECT_FALSE(team.serves_inline(small, 1));  // the inline form waits for every thread
    // A forced algorithm still wins.
    PlanSettings both = forcing(Collective::reduce, "hierarchical");
    both.leaders = LeaderPolicy::by_arrival;
    EXPECT_EQ(Planner(across(processes, 2), both).plan(call(Collective::reduce, 64)).algorithm,
              Algorithm::hierarchical);
  }
  EXPECT_THROW(forcing(Collective::bcast, "dynamic:pipelined"), tlc::Error);  // one form only
  EXPECT_THROW(forcing(Collective::allgather, "dynamic"), tlc::Error);        // not (yet) there
}

}  // namespace
