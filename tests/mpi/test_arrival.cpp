// Collectives led by arrival (the "dynamic" algorithm of bcast, scatter, reduce, allreduce,
// reduce_scatter_block, scan, exscan and alltoall): threads that need nothing from the late ones
// leave before those arrive (a non-root reduce caller may overwrite its send buffer the moment it
// returns, a bcast root returns at once, a scan caller need not wait for the ranks above), results
// stay right and bitwise equal to the static algorithm's under uneven arrivals mixed with static
// calls (alltoall blocks, in place and not, checked element by element; also in fragments under
// forced arrival orders), and a call whose threads disagree fails every thread still in it and
// the calls after it, without a hang. Element-by-element correctness over every shape, root and
// op is in the collective matrices (collective_harness.hpp forces dynamic like every other
// algorithm, and the alltoall's fragments).
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "mpi/test_common.hpp"

namespace {

using namespace tlc_test;
using tlc::Collective;
using Clock = std::chrono::steady_clock;

tlc::TeamOptions dynamic_options(int threads) {
  tlc::TeamOptions o = test_options(threads);
  o.algorithms[Collective::reduce] = "dynamic";
  o.algorithms[Collective::bcast] = "dynamic";
  o.algorithms[Collective::alltoall] = "dynamic";
  o.algorithms[Collective::scatter] = "dynamic";
  o.algorithms[Collective::allreduce] = "dynamic";
  o.algorithms[Collective::reduce_scatter_block] = "dynamic";
  o.algorithms[Collective::scan] = "dynamic";
  o.algorithms[Collective::exscan] = "dynamic";
  o.fallback = "error";  // a plan that silently ran something else would prove nothing
  return o;
}

// Waits until flag reaches want, at most 30 s; false on time-out.
bool wait_until(const std::atomic<int>& flag, int want) {
  const auto deadline = Clock::now() + std::chrono::seconds(30);
  while (flag.load() < want) {
    if (Clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  return true;
}

double value_of(int rank, int call, std::size_t i) {
  return static_cast<double>((rank + 1) * 7 + call * 3) + static_cast<double>(i % 101) * 0.25;
}

// Element i of the sum of ranks 0..ranks-1's values (exact in double).
double sum_below(int ranks, int call, std::size_t i) {
  double sum = 0;
  for (int r = 0; r < ranks; ++r) sum += value_of(r, call, i);
  return sum;
}

// The root of process 0 calls only after every other thread of its process has returned from
// the same reduce (a static algorithm would hang here until the time-out); those threads then
// overwrite their send buffers at once, and the root's result must not see it.
TEST(Arrival, NonRootReduceCallersLeaveBeforeTheRootArrives) {
  constexpr int threads = 3;
  for (std::size_t n : {std::size_t{1}, std::size_t{1000}, std::size_t{300001}}) {
    tlc::Team team(MPI_COMM_WORLD, dynamic_options(threads));
    std::vector<Outcome> outcomes(threads);
    std::atomic<int> returned{0};
    team.run([&](tlc::Thread& me) {
      Outcome& out = outcomes[static_cast<std::size_t>(me.local_index())];
      std::vector<double> send(n), recv(n, -1);
      for (int call = 0; call < 3; ++call) {
        for (std::size_t i = 0; i < n; ++i) send[i] = value_of(me.rank(), call, i);
        const bool root = me.rank() == 0;
        if (root && !wait_until(returned, (call + 1) * (threads - 1)))
          out.error = "the other threads of the root's process did not return before it arrived";
        me.reduce(std::span<const double>(send), std::span<double>(recv), 0);
        if (me.process() == 0 && !root) {
          std::fill(send.begin(), send.end(), -1e300);  // free again, as MPI promises
          returned.fetch_add(1);
        }
        if (!root) continue;
        for (std::size_t i = 0; i < n; ++i) {
          const double expected = sum_below(me.size(), call, i);
          if (recv[i] != expected && out.mismatches++ == 0)
            out.first_mismatch = "call " + std::to_string(call) + " [" + std::to_string(i) +
                                 "]: " + std::to_string(recv[i]) +
                                 " != " + std::to_string(expected);
        }
      }
    });
    expect_clean(outcomes, "reduce n=" + std::to_string(n));
  }
}

// scan and exscan: in every process the highest thread calls only after the others of its
// process have returned from the same call (a static algorithm would hang here until the
// time-out); they overwrite their buffers at once, and nobody's result may see it.
TEST(Arrival, ScanCallersLeaveBeforeTheRanksAbove) {
  constexpr int threads = 3;
  for (const bool exclusive : {false, true})
    for (std::size_t n : {std::size_t{1}, std::size_t{70001}}) {
      tlc::Team team(MPI_COMM_WORLD, dynamic_options(threads));
      std::vector<Outcome> outcomes(threads);
      std::atomic<int> returned{0};
      team.run([&](tlc::Thread& me) {
        Outcome& out = outcomes[static_cast<std::size_t>(me.local_index())];
        std::vector<double> send(n), recv(n, -1);
        const bool highest = me.local_index() == threads - 1;
        for (int call = 0; call < 3; ++call) {
          for (std::size_t i = 0; i < n; ++i) send[i] = value_of(me.rank(), call, i);
          std::fill(recv.begin(), recv.end(), -1.0);
          if (highest && !wait_until(returned, (call + 1) * (threads - 1)))
            out.error = "the lower threads of a scan did not return before the highest arrived";
          if (exclusive)
            me.exscan(std::span<const double>(send), std::span<double>(recv));
          else
            me.scan(std::span<const double>(send), std::span<double>(recv));
          if (!highest) {
            std::fill(send.begin(), send.end(), -1e300);  // free again, as MPI promises
            returned.fetch_add(1);
          }
          const int upto = exclusive ? me.rank() : me.rank() + 1;
          if (upto == 0) continue;  // exscan's rank 0: nothing defined
          for (std::size_t i = 0; i < n; ++i) {
            const double expected = sum_below(upto, call, i);
            if (recv[i] != expected && out.mismatches++ == 0)
              out.first_mismatch = "call " + std::to_string(call) + " [" + std::to_string(i) +
                                   "]: " + std::to_string(recv[i]) +
                                   " != " + std::to_string(expected);
          }
        }
      });
      expect_clean(outcomes,
                   std::string(exclusive ? "exscan" : "scan") + " n=" + std::to_string(n));
    }
}

// The bcast root returns before the other threads of its process arrive, and overwrites its
// buffer; every rank still gets the data it sent.
TEST(Arrival, BcastRootReturnsAtOnce) {
  constexpr int threads = 3;
  const int root_rank = 1;  // thread 1 of process 0
  for (std::size_t n : {std::size_t{3}, std::size_t{200003}}) {
    tlc::Team team(MPI_COMM_WORLD, dynamic_options(threads));
    std::vector<Outcome> outcomes(threads);
    std::atomic<int> root_returned{0};
    team.run([&](tlc::Thread& me) {
      Outcome& out = outcomes[static_cast<std::size_t>(me.local_index())];
      std::vector<double> buf(n);
      for (int call = 0; call < 3; ++call) {
        const bool root = me.rank() == root_rank;
        for (std::size_t i = 0; i < n; ++i) buf[i] = root ? value_of(root_rank, call, i) : -7;
        if (me.process() == 0 && !root && !wait_until(root_returned, call + 1))
          out.error = "the bcast root did not return before the others arrived";
        me.bcast(std::span<double>(buf), root_rank);
        if (root) {
          std::fill(buf.begin(), buf.end(), -1e300);
          root_returned.fetch_add(1);
          continue;
        }
        for (std::size_t i = 0; i < n; ++i)
          if (buf[i] != value_of(root_rank, call, i) && out.mismatches++ == 0)
            out.first_mismatch = "call " + std::to_string(call) + " [" + std::to_string(i) + "]";
      }
    });
    expect_clean(outcomes, "bcast n=" + std::to_string(n));
  }
}

// The root of a bcast or scatter lets the other threads of its process copy from its own buffer
// when they are all there: when it arrives last (it sends while they copy), and when they arrive
// while it sends (the other processes come late, so a large send lasts). Either way it may not
// return before they are done: it overwrites its buffer the moment it returns, and every rank
// must still get what it sent.
TEST(Arrival, RootSharesItsBufferOnlyUntilItReturns) {
  constexpr int threads = 2;
  const int root_rank = 0;                     // thread 0 of process 0
  const std::size_t n = std::size_t{1} << 19;  // 4 MiB of doubles: MPI's rendezvous protocol
  tlc::Team team(MPI_COMM_WORLD, dynamic_options(threads));
  std::vector<Outcome> outcomes(threads);
  team.run([&](tlc::Thread& me) {
    Outcome& out = outcomes[static_cast<std::size_t>(me.local_index())];
    const bool root = me.rank() == root_rank;
    const auto R = static_cast<std::size_t>(me.size());
    const std::size_t per = n / R;  // scatter: a block per rank
    std::vector<double> buf(n), block(per);
    for (int call = 0; call < 4; ++call) {
      const bool root_last = call % 2 == 0;
      // Root last: the others of its process come at once, the root 20 ms later. Otherwise the
      // root comes at once, the others of its process 5 ms later, other processes 50 ms later.
      const int delay_ms = root_last ? (root ? 20 : 0) : root ? 0 : me.process() == 0 ? 5 : 50;
      for (std::size_t i = 0; i < n; ++i) buf[i] = root ? value_of(root_rank, call, i) : -7;
      std::fill(block.begin(), block.end(), -7.0);
      std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms));
      const bool scatter = call >= 2;
      if (scatter)
        me.scatter(std::span<const double>(buf.data(), root ? R * per : 0),
                   std::span<double>(block), root_rank);
      else
        me.bcast(std::span<double>(buf), root_rank);
      if (root) std::fill(buf.begin(), buf.end(), -1e300);
      const std::string what =
          std::string(scatter ? "scatter" : "bcast") + (root_last ? ", root last" : ", root first");
      const std::size_t first = scatter ? per * static_cast<std::size_t>(me.rank()) : 0;
      const std::span<const double> got =
          scatter ? std::span<const double>(block) : std::span<const double>(buf);
      for (std::size_t i = 0; i < got.size() && (scatter || !root); ++i)
        if (got[i] != value_of(root_rank, call, first + i) && out.mismatches++ == 0)
          out.first_mismatch = what + " [" + std::to_string(i) + "]";
      me.barrier();
    }
  });
  expect_clean(outcomes, "bcast and scatter, 4 MiB");
}

// An alltoall of blocks of per_block doubles (in place or not), checked element by element:
// block j of rank r holds r * 1000 + j + shift + i / 1000. The first mismatch is named `what`.
void checked_alltoall(tlc::Thread& me, std::size_t per_block, double shift, bool in_place,
                      Outcome& out, const std::string& what) {
  const auto R = static_cast<std::size_t>(me.size());
  std::vector<double> blocks(R * per_block), received(R * per_block, -1.0);
  for (std::size_t j = 0; j < R; ++j)
    for (std::size_t i = 0; i < per_block; ++i)
      blocks[j * per_block + i] = me.rank() * 1000.0 + j + shift + 1e-3 * i;
  if (in_place) {
    me.alltoall(std::span<double>(blocks));
    received = blocks;
  } else {
    me.alltoall(std::span<const double>(blocks), std::span<double>(received));
  }
  for (std::size_t j = 0; j < R; ++j)
    for (std::size_t i = 0; i < per_block; ++i)
      if (received[j * per_block + i] != j * 1000.0 + me.rank() + shift + 1e-3 * i &&
          out.mismatches++ == 0)
        out.first_mismatch = what + " block " + std::to_string(j) + " element " + std::to_string(i);
}

// Seeded random sleeps before every call, calls led by arrival mixed with static ones (the next
// call of any kind must wait for the previous dynamic one to be complete), roots changing, uneven
// thread counts; the reduce results are compared bitwise with a static team's that runs the same
// binomial tree between processes (`binomial`). The dynamic
// allreduce and reduce_scatter_block fold all ranks in rank order, which rounds differently from
// the static fold per process then across processes: they are compared bitwise between two
// dynamic runs with different arrivals, and with the static team's within rounding.
TEST(Arrival, UnevenArrivalsMixedWithStaticCalls) {
  const int threads = 1 + world_rank() % 3;  // 1, 2, 3, 1 threads
  constexpr int calls = 24;
  constexpr std::size_t n = 5003;
  struct Run {
    std::vector<std::vector<double>> reduced, blockwise;
    std::vector<Outcome> outcomes;
    explicit Run(int t) : reduced(t), blockwise(t), outcomes(t) {}
  };
  auto body = [&](tlc::Team& team, Run& run, bool skew, unsigned seed) {
    team.run([&](tlc::Thread& me) {
      const auto local = static_cast<std::size_t>(me.local_index());
      Outcome& out = run.outcomes[local];
      std::vector<double>& mine = run.reduced[local];
      std::vector<double>& blockwise = run.blockwise[local];
      std::mt19937 random(static_cast<unsigned>(seed + me.rank()));
      std::uniform_int_distribution<int> delay_us(0, 2000);
      std::vector<double> send(n), recv(n), buf(n);
      for (int call = 0; call < calls; ++call) {
        if (skew) std::this_thread::sleep_for(std::chrono::microseconds(delay_us(random)));
        const int root = (call * 5) % me.size();
        for (std::size_t i = 0; i < n; ++i)
          send[i] = std::sin(static_cast<double>(me.rank() * 7919 + call * 104729) + i);
        std::fill(recv.begin(), recv.end(), 0.0);
        me.reduce(std::span<const double>(send), std::span<double>(recv), root);
        if (me.rank() == root) mine.insert(mine.end(), recv.begin(), recv.end());
        for (std::size_t i = 0; i < n; ++i) buf[i] = me.rank() == root ? call + 0.5 * i : -1;
        me.bcast(std::span<double>(buf), root);
        for (std::size_t i = 0; i < n; ++i)
          if (buf[i] != call + 0.5 * i && out.mismatches++ == 0)
            out.first_mismatch = "bcast call " + std::to_string(call);
        // scatter, in place at the root every third call: rank j's block holds j * 10 + call.
        {
          const auto R = static_cast<std::size_t>(me.size());
          const std::size_t per = 1 + static_cast<std::size_t>(call % 3) * 900;
          std::vector<double> all(me.rank() == root ? R * per : 0), block(per, -1.0);
          for (std::size_t i = 0; i < all.size(); ++i)
            all[i] = static_cast<double>(i / per) * 10 + call + 1e-3 * (i % per);
          if (call % 3 == 0 && me.rank() == root) {
            me.scatter(std::span<double>(all), tlc::in_place, root);
            std::copy_n(all.begin() + static_cast<std::ptrdiff_t>(per) * root, per, block.begin());
          } else {
            me.scatter(std::span<const double>(all), std::span<double>(block), root);
          }
          for (std::size_t i = 0; i < per; ++i)
            if (block[i] != me.rank() * 10.0 + call + 1e-3 * i && out.mismatches++ == 0)
              out.first_mismatch = "scatter call " + std::to_string(call);
        }
        const auto R = static_cast<std::size_t>(me.size());
        // alltoall, in place every other call.
        checked_alltoall(me, 1 + static_cast<std::size_t>(call % 4) * 700, call, call % 2 == 1, out,
                         "alltoall call " + std::to_string(call));
        // allreduce and reduce_scatter_block of sines (rounding differs with the order of the
        // sum: kept for the bitwise comparison), in place every other call.
        {
          const std::size_t len = 3001 + static_cast<std::size_t>(call % 2) * 4;
          std::vector<double> in(len * R), res(len * R);
          for (std::size_t i = 0; i < in.size(); ++i)
            in[i] = std::sin(static_cast<double>(me.rank() * 31 + call) + 0.37 * i);
          if (call % 2) {
            res = in;
            me.allreduce(std::span<double>(res));
          } else {
            me.allreduce(std::span<const double>(in), std::span<double>(res));
          }
          blockwise.insert(blockwise.end(), res.begin(), res.end());
          const std::vector<double> own(in.begin(), in.begin() + static_cast<std::ptrdiff_t>(len));
          std::vector<double> part(len);
          if (call % 2) {
            me.reduce_scatter_block(std::span<double>(in));
            std::copy_n(in.begin(), len, part.begin());
          } else {
            me.reduce_scatter_block(std::span<const double>(in), std::span<double>(part));
          }
          blockwise.insert(blockwise.end(), part.begin(), part.end());
          // scan and exscan of the first len sines, in place every other call (exscan's rank 0
          // keeps its input in place; out of place its output is not written).
          for (const bool exclusive : {false, true}) {
            std::vector<double> prefix = call % 2 ? own : std::vector<double>(len, 0.0);
            const std::span<double> result(prefix);
            const std::span<const double> from(own);
            if (call % 2)
              exclusive ? me.exscan(result) : me.scan(result);
            else
              exclusive ? me.exscan(from, result) : me.scan(from, result);
            if (!exclusive || me.rank() > 0)
              blockwise.insert(blockwise.end(), prefix.begin(), prefix.end());
          }
        }
        me.barrier();  // a static call between dynamic ones
        double one = me.rank();
        const double total = me.allreduce(one);
        const double ranks = me.size();
        if (total != ranks * (ranks - 1) / 2 && out.mismatches++ == 0)
          out.first_mismatch = "allreduce call " + std::to_string(call);
      }
    });
  };
  Run dynamic(threads), again(threads), fixed(threads);
  {
    tlc::Team team(MPI_COMM_WORLD, dynamic_options(threads));
    body(team, dynamic, true, 1000);
    body(team, again, true, 2000);  // other arrivals
  }
  {
    tlc::TeamOptions o = test_options(threads);
    o.algorithms[Collective::reduce] = "binomial";  // the dynamic reduce's tree, statically
    o.algorithms[Collective::allreduce] = "hierarchical";
    o.algorithms[Collective::reduce_scatter_block] = "hierarchical";
    o.algorithms[Collective::scan] = "hierarchical";
    o.algorithms[Collective::exscan] = "hierarchical";
    tlc::Team team(MPI_COMM_WORLD, o);
    body(team, fixed, false, 1000);
  }
  expect_clean(dynamic.outcomes, "dynamic");
  expect_clean(again.outcomes, "dynamic, other arrivals");
  expect_clean(fixed.outcomes, "static");
  for (int t = 0; t < threads; ++t) {
    const auto k = static_cast<std::size_t>(t);
    const auto& d = dynamic.reduced[k];
    const auto& f = fixed.reduced[k];
    ASSERT_EQ(d.size(), f.size()) << "thread " << t;
    EXPECT_EQ(std::memcmp(d.data(), f.data(), d.size() * sizeof(double)), 0)
        << "thread " << t << ": the dynamic reduce is not bitwise the static one";
    const auto& b = dynamic.blockwise[k];
    const auto& b2 = again.blockwise[k];
    const auto& bf = fixed.blockwise[k];
    ASSERT_EQ(b.size(), b2.size()) << "thread " << t;
    ASSERT_EQ(b.size(), bf.size()) << "thread " << t;
    EXPECT_EQ(std::memcmp(b.data(), b2.data(), b.size() * sizeof(double)), 0)
        << "thread " << t
        << ": the dynamic allreduce, reduce_scatter_block, scan or exscan changed with arrivals";
    std::size_t far = 0;
    for (std::size_t i = 0; i < b.size(); ++i)
      if (std::abs(b[i] - bf[i]) > 1e-12 * (1 + std::abs(bf[i]))) ++far;
    EXPECT_EQ(far, 0u) << "thread " << t << ": dynamic and static allreduce differ beyond rounding";
  }
}

// alltoall in fragments: small blocks of consecutive threads travel together, grouped by how
// the threads arrive. Each call makes its own arrival order (threads sleep in a rotated or
// reversed order, differently per process), with the fragment minimum at one byte (every block
// alone, receives posted ahead), at 32 bytes (runs of a few blocks) and at 1 MiB (everything
// waits for the last arrival); uneven thread counts, in place every other call, blocks of 1, 3
// and 8 doubles, every element checked.
TEST(Arrival, AlltoallFragmentsInEveryArrivalOrder) {
  const int threads = 1 + (world_rank() + 1) % 4;  // 2, 3, 4, 1 threads
  for (const char* minimum_kib : {"0.0009765625", "0.03125", "1024"}) {
    ::setenv("TLC_COST_FRAGMENT_KIB", minimum_kib, 1);
    std::vector<Outcome> outcomes(static_cast<std::size_t>(threads));
    try {
      tlc::Team team(MPI_COMM_WORLD, dynamic_options(threads));
      team.run([&](tlc::Thread& me) {
        Outcome& out = outcomes[static_cast<std::size_t>(me.local_index())];
        const int T = me.threads();
        int call = 0;
        for (std::size_t per_block : {std::size_t{1}, std::size_t{3}, std::size_t{8}})
          for (int order = 0; order < 4; ++order, ++call) {
            // order 0: rotated by the process; 1: reversed; 2: all at once; 3: one thread late.
            const int t = me.local_index(), p = me.rank() - t;
            int position = 0;
            if (order == 0) position = (t + p) % T;
            if (order == 1) position = T - 1 - t;
            if (order == 3) position = t == (p + call) % T ? 3 : 0;
            std::this_thread::sleep_for(std::chrono::microseconds(400 * position));
            checked_alltoall(me, per_block, call * 0.5, call % 2 == 1, out,
                             "call " + std::to_string(call));
          }
      });
    } catch (const std::exception& e) {
      outcomes[0].error = e.what();
    }
    ::unsetenv("TLC_COST_FRAGMENT_KIB");
    expect_clean(outcomes, std::string("fragment minimum ") + minimum_kib + " KiB");
  }
}

// Threads of one process disagree (one process's team on MPI_COMM_SELF, so that no other
// process waits in MPI): every thread still in the call throws, naming the disagreement where
// it sees it, and every later call throws TeamAborted; nothing hangs.
TEST(Arrival, DisagreementFailsTheCallAndTheTeam) {
  for (const Collective c :
       {Collective::reduce, Collective::bcast, Collective::alltoall, Collective::scatter,
        Collective::allreduce, Collective::reduce_scatter_block, Collective::scan,
        Collective::exscan}) {
    constexpr int threads = 3;
    tlc::Team team(MPI_COMM_SELF, dynamic_options(threads));
    std::vector<std::string> errors(threads), later(threads);
    std::atomic<int> failures{0};
    team.run([&](tlc::Thread& me) {
      // Thread 2 passes more elements than the others.
      std::vector<double> send(me.rank() == 2 ? 12 : 10, 1.0), recv(send.size());
      try {
        if (c == Collective::reduce)
          me.reduce(std::span<const double>(send), std::span<double>(recv), 0);
        else if (c == Collective::bcast)
          me.bcast(std::span<double>(recv), 0);
        else if (c == Collective::allreduce)
          me.allreduce(std::span<const double>(send), std::span<double>(recv));
        else if (c == Collective::scan)
          me.scan(std::span<const double>(send), std::span<double>(recv));
        else if (c == Collective::exscan)
          me.exscan(std::span<const double>(send), std::span<double>(recv));
        else if (c == Collective::reduce_scatter_block)  // 3 ranks: blocks of 3, and 4
          me.reduce_scatter_block(std::span<const double>(send.data(), me.rank() == 2 ? 12 : 9),
                                  std::span<double>(recv.data(), me.rank() == 2 ? 4 : 3));
        else if (c == Collective::scatter)  // 3 ranks: blocks of 3, and of 4 on thread 2
          me.scatter(std::span<const double>(send.data(), me.rank() == 2 ? 12 : 9),
                     std::span<double>(recv.data(), me.rank() == 2 ? 4 : 3), 0);
        else  // 3 ranks: blocks of 3 elements, and of 4 on thread 2
          me.alltoall(std::span<const double>(send.data(), me.rank() == 2 ? 12 : 9),
                      std::span<double>(recv.data(), me.rank() == 2 ? 12 : 9));
      } catch (const tlc::Error& e) {
        errors[static_cast<std::size_t>(me.local_index())] = e.what();
        failures.fetch_add(1);
      }
      try {
        me.barrier();
      } catch (const tlc::TeamAborted& e) {
        later[static_cast<std::size_t>(me.local_index())] = e.what();
      }
    });
    const std::string name = tlc::to_string(c);
    EXPECT_GE(failures.load(), 1) << name;
    bool named = false;
    for (const std::string& e : errors) named = named || e.find("elements per rank") != e.npos;
    EXPECT_TRUE(named) << name << ": no thread names the disagreement";
    // The root of a reduce waits for the result, so it is always told; every alltoall caller
    // waits for every other.
    if (c == Collective::alltoall || c == Collective::allreduce ||
        c == Collective::reduce_scatter_block) {
      EXPECT_EQ(failures.load(), threads) << name;
    }
    if (c == Collective::reduce) {
      EXPECT_FALSE(errors[0].empty()) << name;
    }
    for (int t = 0; t < threads; ++t)
      EXPECT_NE(later[static_cast<std::size_t>(t)].find("elements per rank"), std::string::npos)
          << name << ", thread " << t << ": " << later[static_cast<std::size_t>(t)];
  }
}

// Under the default leaders a large bcast has static leaders (it was measured no faster led by
// arrival with balanced arrivals); when the static leader of every process is late at every
// call, the team measures it and switches the calls to leaders by arrival (team/
// leader_switch.hpp), after some static calls to measure. Every process must
// switch at the same call (their MPI steps pair: a disagreement would hang or abort), with uneven
// thread counts and other calls of another class in between; every result is checked.
TEST(Arrival, LateStaticLeadersSwitchLargeCallsToLeadersByArrival) {
  if (world_size() == 1) GTEST_SKIP() << "one process: the switch is off";
  tlc::TeamOptions o = test_options(world_rank() == 1 ? 3 : 2);
  o.leaders = "auto";
  o.stats = true;
  tlc::Team team(MPI_COMM_WORLD, o);
  constexpr int calls = 40;
  constexpr std::size_t n = std::size_t{1} << 20;  // 8 MiB of doubles: static by the plan
  constexpr std::size_t m = std::size_t{1} << 13;  // 64 KiB: an allreduce of another class
  std::atomic<int> wrong{0};
  team.run([&](tlc::Thread& me) {
    std::vector<double> buf(n), send(m), sum(m);
    for (int k = 0; k < calls; ++k) {
      if (me.local_index() == 0) std::this_thread::sleep_for(std::chrono::milliseconds(10));
      const int root = 1;
      if (me.rank() == root)
        for (std::size_t i = 0; i < n; ++i) buf[i] = value_of(root, k, i);
      me.bcast(std::span<double>(buf), root);
      for (std::size_t i = 0; i < n; ++i)
        if (buf[i] != value_of(root, k, i)) {
          wrong.fetch_add(1);
          break;
        }
      for (std::size_t i = 0; i < m; ++i) send[i] = value_of(me.rank(), k, i);
      me.allreduce(std::span<const double>(send), std::span<double>(sum));
      for (std::size_t i = 0; i < m; ++i)
        if (sum[i] != sum_below(me.size(), k, i)) {
          wrong.fetch_add(1);
          break;
        }
    }
  });
  EXPECT_EQ(wrong.load(), 0);
  const tlc::TeamStats stats = team.stats();
  const tlc::CollectiveStats* b = nullptr;
  for (const tlc::CollectiveStats& c : stats.collectives)
    if (c.collective == Collective::bcast) b = &c;
  ASSERT_NE(b, nullptr);
  EXPECT_GT(b->led_by_arrival, 0u) << "process " << team.process();
  EXPECT_LT(b->led_by_arrival, static_cast<std::uint64_t>(calls)) << "process " << team.process();
}

}  // namespace
