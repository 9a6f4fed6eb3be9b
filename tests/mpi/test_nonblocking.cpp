// The nonblocking and persistent forms of every collective (tlc/request.hpp) against the blocking
// form, element by element (integer data, so results are exact and bitwise comparable), on
// uniform and uneven teams, in place and not, with a non-commutative user op for the
// reductions; requests completed out of order and interleaved with blocking calls; persistent
// rounds; the errors of misuse.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <numeric>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "mpi/test_common.hpp"

using namespace tlc_test;

namespace {

using T = std::uint64_t;

enum class Form { blocking, nonblocking, persistent };
const char* name(Form f) {
  return f == Form::blocking ? "blocking" : f == Form::nonblocking ? "nonblocking" : "persistent";
}

// Associative, not commutative: composition of the affine maps x -> m x + c modulo 2^32, one
// map per element (m in the low half, c in the high half), so rank order must be kept.
struct Affine {
  T operator()(const T& a, const T& b) const {
    const std::uint32_t m1 = static_cast<std::uint32_t>(a),
                        c1 = static_cast<std::uint32_t>(a >> 32);
    const std::uint32_t m2 = static_cast<std::uint32_t>(b),
                        c2 = static_cast<std::uint32_t>(b >> 32);
    const std::uint32_t m = m2 * m1, c = m2 * c1 + c2;  // a first, then b
    return (static_cast<T>(c) << 32) | m;
  }
};

T value(int rank, std::size_t i, int salt) {
  const T low = static_cast<T>(rank + 1) * 1000003u + static_cast<T>(i) * 7u + static_cast<T>(salt);
  return (low * 2654435761u << 32) | (low | 1);
}

std::vector<T> filled(std::size_t n, int rank, int salt) {
  std::vector<T> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = value(rank, i, salt);
  return v;
}

// Runs one collective in `form` and returns what this thread's output holds afterwards. `run`
// gets the form and a starter, and calls the blocking call or passes the request or
// persistent call it made to finish().
struct Finisher {
  Form form;
  int rounds = 1;
  void operator()(tlc::Request r) const { r.wait(); }
  void operator()(tlc::Persistent p) const {
    for (int i = 0; i < rounds; ++i) {
      p.start();
      p.wait();
    }
  }
};

using Case = std::function<std::vector<T>(tlc::Thread&, Form, std::size_t)>;

struct NamedCase {
  std::string name;
  Case run;
};

std::vector<NamedCase> cases() {
  std::vector<NamedCase> all;
  auto add = [&](std::string n, Case c) { all.push_back({std::move(n), std::move(c)}); };
  const Finisher nb{Form::nonblocking}, pe{Form::persistent, 3};
  add("barrier", [=](tlc::Thread& me, Form f, std::size_t) {
    if (f == Form::blocking) me.barrier();
    if (f == Form::nonblocking) nb(me.ibarrier());
    if (f == Form::persistent) pe(me.barrier_init());
    return std::vector<T>{};
  });
  for (int root_choice = 0; root_choice < 2; ++root_choice) {
    const std::string suffix = root_choice ? "_last_root" : "";
    auto root_of = [root_choice](const tlc::Thread& me) { return root_choice ? me.size() - 1 : 0; };
    add("bcast" + suffix, [=](tlc::Thread& me, Form f, std::size_t n) {
      const int root = root_of(me);
      auto buf = me.rank() == root ? filled(n, root, 1) : std::vector<T>(n, 0);
      if (f == Form::blocking) me.bcast(buf, root);
      if (f == Form::nonblocking) nb(me.ibcast(buf, root));
      if (f == Form::persistent) pe(me.bcast_init(buf, root));
      return buf;
    });
    add("reduce" + suffix, [=](tlc::Thread& me, Form f, std::size_t n) {
      const int root = root_of(me);
      auto send = filled(n, me.rank(), 2);
      std::vector<T> recv(me.rank() == root ? n : 0, 0);
      if (f == Form::blocking) me.reduce(send, recv, root, Affine{});
      if (f == Form::nonblocking) nb(me.ireduce(send, recv, root, Affine{}));
      if (f == Form::persistent) pe(me.reduce_init(send, recv, root, Affine{}));
      return recv;
    });
    add("reduce_in_place" + suffix, [=](tlc::Thread& me, Form f, std::size_t n) {
      const int root = root_of(me);
      auto buf = filled(n, me.rank(), 3);
      if (f == Form::blocking) me.reduce(buf, root, std::plus<>{});
      if (f == Form::nonblocking) nb(me.ireduce(buf, root, std::plus<>{}));
      if (f == Form::persistent) {  // in place: every round reduces the previous round's buffer
        auto p = me.reduce_init(buf, root, std::plus<>{});
        p.start();
        p.wait();
      }
      return me.rank() == root ? buf : std::vector<T>{};
    });
    add("gather" + suffix, [=](tlc::Thread& me, Form f, std::size_t n) {
      const int root = root_of(me);
      auto send = filled(n, me.rank(), 4);
      std::vector<T> recv(me.rank() == root ? n * static_cast<std::size_t>(me.size()) : 0, 0);
      if (f == Form::blocking) me.gather(send, recv, root);
      if (f == Form::nonblocking) nb(me.igather(send, recv, root));
      if (f == Form::persistent) pe(me.gather_init(send, recv, root));
      return recv;
    });
    add("scatter" + suffix, [=](tlc::Thread& me, Form f, std::size_t n) {
      const int root = root_of(me);
      auto send = me.rank() == root ? filled(n * static_cast<std::size_t>(me.size()), root, 5)
                                    : std::vector<T>{};
      std::vector<T> recv(n, 0);
      if (f == Form::blocking) me.scatter(send, recv, root);
      if (f == Form::nonblocking) nb(me.iscatter(send, recv, root));
      if (f == Form::persistent) pe(me.scatter_init(send, recv, root));
      return recv;
    });
    add("gatherv" + suffix, [=](tlc::Thread& me, Form f, std::size_t n) {
      const int root = root_of(me);
      const auto size = static_cast<std::size_t>(me.size());
      std::vector<std::size_t> counts(size), displs(size);
      std::size_t total = 0;
      for (std::size_t r = 0; r < size; ++r) {
        counts[r] = (n + r) % (n + 2);  // uneven, some empty
        displs[r] = total + 1;          // gaps between blocks
        total += counts[r] + 1;
      }
      auto send = filled(counts[static_cast<std::size_t>(me.rank())], me.rank(), 6);
      std::vector<T> recv(me.rank() == root ? total + 1 : 0, 0);
      if (f == Form::blocking) me.gatherv(send, recv, counts, displs, root);
      if (f == Form::nonblocking) nb(me.igatherv(send, recv, counts, displs, root));
      if (f == Form::persistent) pe(me.gatherv_init(send, recv, counts, displs, root));
      return recv;
    });
    add("scatterv" + suffix, [=](tlc::Thread& me, Form f, std::size_t n) {
      const int root = root_of(me);
      const auto size = static_cast<std::size_t>(me.size());
      std::vector<std::size_t> counts(size), displs(size);
      std::size_t total = 0;
      for (std::size_t r = 0; r < size; ++r) {
        counts[r] = (n + 2 * r) % (n + 3);
        displs[r] = total;
        total += counts[r] + 2;
      }
      auto send = me.rank() == root ? filled(total, root, 7) : std::vector<T>{};
      std::vector<T> recv(counts[static_cast<std::size_t>(me.rank())], 0);
      if (f == Form::blocking) me.scatterv(send, counts, displs, recv, root);
      if (f == Form::nonblocking) nb(me.iscatterv(send, counts, displs, recv, root));
      if (f == Form::persistent) pe(me.scatterv_init(send, counts, displs, recv, root));
      return recv;
    });
  }
  add("allreduce", [=](tlc::Thread& me, Form f, std::size_t n) {
    auto send = filled(n, me.rank(), 8);
    std::vector<T> recv(n, 0);
    if (f == Form::blocking) me.allreduce(send, recv, Affine{});
    if (f == Form::nonblocking) nb(me.iallreduce(send, recv, Affine{}));
    if (f == Form::persistent) pe(me.allreduce_init(send, recv, Affine{}));
    return recv;
  });
  add("allreduce_in_place", [=](tlc::Thread& me, Form f, std::size_t n) {
    auto buf = filled(n, me.rank(), 9);
    if (f == Form::blocking) me.allreduce(buf, std::plus<>{});
    if (f == Form::nonblocking) nb(me.iallreduce(buf, std::plus<>{}));
    if (f == Form::persistent) {
      auto p = me.allreduce_init(buf, std::plus<>{});
      p.start();
      p.wait();
    }
    return buf;
  });
  add("allgather", [=](tlc::Thread& me, Form f, std::size_t n) {
    auto send = filled(n, me.rank(), 10);
    std::vector<T> recv(n * static_cast<std::size_t>(me.size()), 0);
    if (f == Form::blocking) me.allgather(send, recv);
    if (f == Form::nonblocking) nb(me.iallgather(send, recv));
    if (f == Form::persistent) pe(me.allgather_init(send, recv));
    return recv;
  });
  add("allgather_in_place", [=](tlc::Thread& me, Form f, std::size_t n) {
    std::vector<T> buf(n * static_cast<std::size_t>(me.size()), 0);
    auto mine = filled(n, me.rank(), 11);
    std::copy(mine.begin(), mine.end(), buf.begin() + static_cast<std::ptrdiff_t>(n) * me.rank());
    if (f == Form::blocking) me.allgather(buf);
    if (f == Form::nonblocking) nb(me.iallgather(buf));
    if (f == Form::persistent) pe(me.allgather_init(buf));
    return buf;
  });
  add("allgatherv", [=](tlc::Thread& me, Form f, std::size_t n) {
    const auto size = static_cast<std::size_t>(me.size());
    std::vector<std::size_t> counts(size), displs(size);
    std::size_t total = 0;
    for (std::size_t r = 0; r < size; ++r) {
      counts[r] = (n + 3 * r) % (n + 1);
      displs[r] = total;
      total += counts[r] + 1;
    }
    auto send = filled(counts[static_cast<std::size_t>(me.rank())], me.rank(), 12);
    std::vector<T> recv(total, 0);
    if (f == Form::blocking) me.allgatherv(send, recv, counts, displs);
    if (f == Form::nonblocking) nb(me.iallgatherv(send, recv, counts, displs));
    if (f == Form::persistent) pe(me.allgatherv_init(send, recv, counts, displs));
    return recv;
  });
  add("alltoall", [=](tlc::Thread& me, Form f, std::size_t n) {
    auto send = filled(n * static_cast<std::size_t>(me.size()), me.rank(), 13);
    std::vector<T> recv(send.size(), 0);
    if (f == Form::blocking) me.alltoall(send, recv);
    if (f == Form::nonblocking) nb(me.ialltoall(send, recv));
    if (f == Form::persistent) pe(me.alltoall_init(send, recv));
    return recv;
  });
  add("alltoall_in_place", [=](tlc::Thread& me, Form f, std::size_t n) {
    auto buf = filled(n * static_cast<std::size_t>(me.size()), me.rank(), 14);
    if (f == Form::blocking) me.alltoall(buf);
    if (f == Form::nonblocking) nb(me.ialltoall(buf));
    if (f == Form::persistent) {
      auto p = me.alltoall_init(buf);
      p.start();
      p.wait();
    }
    return buf;
  });
  add("alltoallv", [=](tlc::Thread& me, Form f, std::size_t n) {
    const auto size = static_cast<std::size_t>(me.size());
    const auto rank = static_cast<std::size_t>(me.rank());
    // rank i sends (n + i + j) % (n + 2) elements to rank j.
    auto amount = [&](std::size_t i, std::size_t j) { return (n + i + j) % (n + 2); };
    std::vector<std::size_t> sc(size), sd(size), rc(size), rd(size);
    std::size_t st = 0, rt = 0;
    for (std::size_t j = 0; j < size; ++j) {
      sc[j] = amount(rank, j);
      sd[j] = st;
      st += sc[j] + 1;
      rc[j] = amount(j, rank);
      rd[j] = rt;
      rt += rc[j] + 2;
    }
    auto send = filled(st, me.rank(), 15);
    std::vector<T> recv(rt, 0);
    if (f == Form::blocking) me.alltoallv(send, sc, sd, recv, rc, rd);
    if (f == Form::nonblocking) nb(me.ialltoallv(send, sc, sd, recv, rc, rd));
    if (f == Form::persistent) pe(me.alltoallv_init(send, sc, sd, recv, rc, rd));
    return recv;
  });
  add("reduce_scatter_block", [=](tlc::Thread& me, Form f, std::size_t n) {
    auto send = filled(n * static_cast<std::size_t>(me.size()), me.rank(), 16);
    std::vector<T> recv(n, 0);
    if (f == Form::blocking) me.reduce_scatter_block(send, recv, Affine{});
    if (f == Form::nonblocking) nb(me.ireduce_scatter_block(send, recv, Affine{}));
    if (f == Form::persistent) pe(me.reduce_scatter_block_init(send, recv, Affine{}));
    return recv;
  });
  add("scan", [=](tlc::Thread& me, Form f, std::size_t n) {
    auto send = filled(n, me.rank(), 17);
    std::vector<T> recv(n, 0);
    if (f == Form::blocking) me.scan(send, recv, Affine{});
    if (f == Form::nonblocking) nb(me.iscan(send, recv, Affine{}));
    if (f == Form::persistent) pe(me.scan_init(send, recv, Affine{}));
    return recv;
  });
  add("exscan", [=](tlc::Thread& me, Form f, std::size_t n) {
    auto send = filled(n, me.rank(), 18);
    std::vector<T> recv(n, 5);
    if (f == Form::blocking) me.exscan(send, recv, Affine{});
    if (f == Form::nonblocking) nb(me.iexscan(send, recv, Affine{}));
    if (f == Form::persistent) pe(me.exscan_init(send, recv, Affine{}));
    return recv;
  });
  add("exscan_in_place", [=](tlc::Thread& me, Form f, std::size_t n) {
    auto buf = filled(n, me.rank(), 19);
    if (f == Form::blocking) me.exscan(buf, std::plus<>{});
    if (f == Form::nonblocking) nb(me.iexscan(buf, std::plus<>{}));
    if (f == Form::persistent) {
      auto p = me.exscan_init(buf, std::plus<>{});
      p.start();
      p.wait();
    }
    return buf;
  });
  return all;
}

std::string first_difference(const std::vector<T>& want, const std::vector<T>& got) {
  if (want.size() != got.size())
    return "size " + std::to_string(got.size()) + " instead of " + std::to_string(want.size());
  for (std::size_t i = 0; i < want.size(); ++i)
    if (want[i] != got[i])
      return "element " + std::to_string(i) + ": " + std::to_string(got[i]) + " instead of " +
             std::to_string(want[i]);
  return {};
}

}  // namespace

// The nonblocking and persistent forms of every collective, sizes from nothing to past the eager
// limits, against the blocking form, on a team of `threads` made with `options`.
// `only`: the cases whose name begins so (all of them when empty).
void expect_every_collective_equals_blocking(int threads, tlc::TeamOptions options,
                                             const std::string& label, const std::string& only = {},
                                             std::vector<std::size_t> counts = {
                                                 std::size_t{0}, std::size_t{1}, std::size_t{5},
                                                 std::size_t{5000}}) {
  if (std::getenv("TRACE")) options.timeout_seconds = 3;
  tlc::Team team(MPI_COMM_WORLD, options);
  std::vector<Outcome> outcomes(static_cast<std::size_t>(threads));
  team.run([&](tlc::Thread& me) {
    Outcome& out = outcomes[static_cast<std::size_t>(me.local_index())];
    try {
      for (const NamedCase& c : cases())
        for (std::size_t n : counts)
          for (Form f : {Form::nonblocking, Form::persistent}) {
            if (!c.name.starts_with(only)) continue;
            if (std::getenv("TRACE") && me.rank() == 0)
              std::fprintf(stderr, "%s %s %zu\n", c.name.c_str(), name(f), n);
            const std::vector<T> want = c.run(me, Form::blocking, n);
            const std::vector<T> got = c.run(me, f, n);
            if (const std::string why = first_difference(want, got); !why.empty()) {
              if (out.mismatches++ == 0)
                out.first_mismatch =
                    c.name + " " + name(f) + " n=" + std::to_string(n) + ": " + why;
            }
          }
    } catch (const std::exception& e) {
      out.error = e.what();
    }
  });
  expect_clean(outcomes, label);
}

// Every collective, every shape, one lane and three (more than some processes have threads).
TEST(Nonblocking, EveryCollectiveEqualsItsBlockingForm) {
  const int P = world_size();
  for (const Shape& shape : shapes())
    for (int lanes : {1, 3}) {
      const int threads = shape.threads_of(world_rank());
      tlc::TeamOptions options = test_options(threads);
      options.lanes = lanes;
      expect_every_collective_equals_blocking(threads, options,
                                              std::string(shape.name) + " at " + std::to_string(P) +
                                                  " processes, " + std::to_string(lanes) +
                                                  " lanes");
    }
}

// The step between processes in parts (algo/posted/schedule.hpp, step_parts): full_lane forced
// for every collective that has it, in its staged form and pipelined in chunks of 4 KiB per
// lane, so that the posted calls cut their MPI step by lane and chunk as the blocking ones do;
// two lanes and three, even and uneven teams.
TEST(Nonblocking, StepInPartsEqualsTheBlockingForm) {
  const int P = world_size();
  if (P == 1) GTEST_SKIP() << "parts of the step between processes";
  for (const Shape& shape : shapes()) {
    if (std::string(shape.name) != "uniform2" && std::string(shape.name) != "uneven_4321") continue;
    for (int lanes : {2, 3})
      for (bool pipelined : {false, true}) {
        const int threads = shape.threads_of(world_rank());
        tlc::TeamOptions options = static_options(threads);
        options.lanes = lanes;
        if (pipelined) options.pipeline_chunk_bytes = 4096;
        for (const tlc::AlgorithmDescription& a : tlc::algorithms()) {
          if (a.name != "full_lane") continue;
          const bool has_pipelined =
              std::find(a.forms.begin(), a.forms.end(), "pipelined") != a.forms.end();
          if (pipelined && !has_pipelined) continue;
          options.algorithms[a.collective] = pipelined ? "full_lane:pipelined" : a.name;
        }
        expect_every_collective_equals_blocking(
            threads, options,
            std::string(shape.name) + " at " + std::to_string(P) + " processes, " +
                std::to_string(lanes) + " lanes, full_lane" + (pipelined ? ":pipelined" : ""));
      }
  }
}

// Forcing an algorithm forces it for every form. Allreduce, bcast and alltoall, whose posted
// forms run the step between processes of the blocking plan (its algorithm as point-to-point
// rounds, or MPI's collective): every algorithm of the registry that serves several processes,
// forced in turn, its nonblocking and persistent forms against its blocking form, with one
// thread per process and with uneven teams.
TEST(Nonblocking, EveryForcedAlgorithmInEveryForm) {
  const int P = world_size();
  if (P == 1) GTEST_SKIP() << "the step between processes";
  const std::pair<tlc::Collective, const char*> collectives[] = {
      {tlc::Collective::allreduce, "allreduce"},
      {tlc::Collective::bcast, "bcast"},
      {tlc::Collective::alltoall, "alltoall"}};
  int forced = 0;
  for (const auto& [collective, prefix] : collectives)
    for (const tlc::AlgorithmDescription& a : tlc::algorithms()) {
      if (a.collective != collective || a.single_process) continue;
      ++forced;
      for (const Shape& shape : shapes()) {
        if (std::string(shape.name) != "uniform1" && std::string(shape.name) != "uneven_123")
          continue;
        const int threads = shape.threads_of(world_rank());
        tlc::TeamOptions options = test_options(threads);
        options.algorithms[collective] = a.name;
        expect_every_collective_equals_blocking(threads, options,
                                                std::string(prefix) + " forced to " + a.name +
                                                    ", " + shape.name + " at " + std::to_string(P) +
                                                    " processes",
                                                prefix);
      }
    }
  EXPECT_GE(forced, 6) << "the registry lost the algorithms this test forces";
}

// One process: the nonblocking and persistent forms run on lines where the blocking plan runs
// flat's lines form, else on slices. Every single-process algorithm forced in turn (for every
// collective that has it), and the plan left alone, with 300 elements a block (2,400 bytes:
// lines for some collectives by default, slices for others) besides a small and a large count.
TEST(Nonblocking, EverySingleProcessAlgorithmInEveryForm) {
  if (world_size() > 1) GTEST_SKIP() << "one-process teams; run at one process";
  std::map<std::string, std::vector<tlc::Collective>> by_name{{"", {}}};
  for (const tlc::AlgorithmDescription& a : tlc::algorithms())
    if (a.single_process) by_name[a.name].push_back(a.collective);
  EXPECT_GE(by_name.size(), 3u) << "the registry lost the algorithms this test forces";
  for (const auto& [algorithm, collectives] : by_name)
    for (int threads : {2, 3}) {
      tlc::TeamOptions options = test_options(threads);
      for (tlc::Collective c : collectives) options.algorithms[c] = algorithm;
      expect_every_collective_equals_blocking(
          threads, options,
          (algorithm.empty() ? std::string("the plan") : algorithm + " forced") + ", " +
              std::to_string(threads) + " threads",
          {}, {std::size_t{1}, std::size_t{300}, std::size_t{5000}});
    }
}

// Several requests outstanding per thread, completed in an order that differs between threads,
// with blocking calls in between.
TEST(Nonblocking, OutOfOrderCompletionAndBlockingCallsBetween) {
  const int threads = 1 + world_rank() % 3;
  tlc::Team team(MPI_COMM_WORLD, test_options(threads));
  std::vector<Outcome> outcomes(static_cast<std::size_t>(threads));
  constexpr int rounds = 1000, outstanding = 6;
  constexpr std::size_t n = 17;
  team.run([&](tlc::Thread& me) {
    Outcome& out = outcomes[static_cast<std::size_t>(me.local_index())];
    try {
      std::mt19937 random(static_cast<unsigned>(me.rank() * 7919 + 1));
      const T size = static_cast<T>(me.size());
      for (int round = 0; round < rounds; ++round) {
        std::vector<std::vector<T>> sends, recvs;
        std::vector<tlc::Request> requests;
        for (int k = 0; k < outstanding; ++k) {
          sends.push_back(std::vector<T>(n, static_cast<T>(me.rank() + round + k)));
          recvs.push_back(std::vector<T>(n, 0));
        }
        for (int k = 0; k < outstanding; ++k) {
          requests.push_back(me.iallreduce(sends[static_cast<std::size_t>(k)],
                                           recvs[static_cast<std::size_t>(k)]));
          if (k == outstanding / 2) me.barrier();  // a blocking call among them
        }
        std::vector<std::size_t> order(outstanding);
        std::iota(order.begin(), order.end(), 0);
        std::shuffle(order.begin(), order.end(), random);
        for (std::size_t i : order) {
          if (random() % 2) {
            while (!requests[i].test()) {
            }
          } else {
            requests[i].wait();
          }
        }
        for (int k = 0; k < outstanding; ++k) {
          // sum over ranks r of (r + round + k)
          const T want = size * (size - 1) / 2 + size * static_cast<T>(round + k);
          for (T v : recvs[static_cast<std::size_t>(k)])
            if (v != want && out.mismatches++ == 0)
              out.first_mismatch = "round " + std::to_string(round) + " request " +
                                   std::to_string(k) + ": " + std::to_string(v);
        }
      }
    } catch (const std::exception& e) {
      out.error = e.what();
    }
  });
  expect_clean(outcomes, "out of order");
}

// The scalar forms (iallreduce(x), ireduce(x, root), iscan(x), iexscan(x)) against the blocking
// scalar forms, all four outstanding at once and completed in reverse order.
TEST(Nonblocking, ScalarFormsEqualTheBlockingOnes) {
  const int threads = 1 + world_rank() % 3;
  tlc::Team team(MPI_COMM_WORLD, test_options(threads));
  std::vector<Outcome> outcomes(static_cast<std::size_t>(threads));
  team.run([&](tlc::Thread& me) {
    Outcome& out = outcomes[static_cast<std::size_t>(me.local_index())];
    try {
      for (int round = 0; round < 50; ++round) {
        const long x = 3 * me.rank() - 7 + round;
        const int root = round % me.size();
        long sum = x, reduced = x, prefix = x, before = x;
        std::vector<tlc::Request> requests;
        requests.push_back(me.iallreduce(sum));
        requests.push_back(me.ireduce(reduced, root, tlc::max{}));
        requests.push_back(me.iscan(prefix));
        requests.push_back(me.iexscan(before));
        for (auto r = requests.rbegin(); r != requests.rend(); ++r) r->wait();
        const long want_sum = me.allreduce(x);
        const long want_reduced = me.reduce(x, root, tlc::max{});
        const long want_prefix = me.scan(x);
        const long want_before = me.rank() == 0 ? x : me.exscan(x);
        if (me.rank() == 0) (void)me.exscan(x);  // every rank makes the same calls
        if ((sum != want_sum || reduced != want_reduced || prefix != want_prefix ||
             before != want_before) &&
            out.mismatches++ == 0)
          out.first_mismatch = "round " + std::to_string(round) + ": " + std::to_string(sum) + " " +
                               std::to_string(reduced) + " " + std::to_string(prefix) + " " +
                               std::to_string(before);
      }
    } catch (const std::exception& e) {
      out.error = e.what();
    }
  });
  expect_clean(outcomes, "scalar forms");
}

// Many rounds of one persistent call (100,000), its buffers changed between rounds.
TEST(Nonblocking, PersistentRounds) {
  const int threads = 2;
  tlc::Team team(MPI_COMM_WORLD, test_options(threads));
  std::vector<Outcome> outcomes(static_cast<std::size_t>(threads));
  team.run([&](tlc::Thread& me) {
    Outcome& out = outcomes[static_cast<std::size_t>(me.local_index())];
    try {
      std::vector<T> send(3), recv(3);
      tlc::Persistent p = me.allreduce_init(send, recv);
      const T size = static_cast<T>(me.size());
      for (int round = 0; round < 100000; ++round) {
        std::fill(send.begin(), send.end(), static_cast<T>(me.rank() * round));
        p.start();
        p.wait();
        const T want = static_cast<T>(round) * size * (size - 1) / 2;
        for (T v : recv)
          if (v != want && out.mismatches++ == 0)
            out.first_mismatch = "round " + std::to_string(round) + ": " + std::to_string(v);
      }
    } catch (const std::exception& e) {
      out.error = e.what();
    }
  });
  expect_clean(outcomes, "persistent rounds");
}

// One thread in every process: persistent allreduce and alltoall run tlc's own algorithms as
// rounds of persistent point-to-point requests (inter/p2p_rounds.hpp). Sizes that take
// recursive doubling (the non-commutative op at every size) and Rabenseifner (sums past the
// eager limit), several calls in flight at once whose rounds are completed in an order that
// differs between processes, inputs that change every round; each element against its
// reference.
TEST(Nonblocking, PersistentRoundsOneThreadPerProcess) {
  tlc::Team team(MPI_COMM_WORLD, test_options(1));
  std::vector<Outcome> outcomes(1);
  team.run([&](tlc::Thread& me) {
    Outcome& out = outcomes[0];
    // what() names the element: built only for a mismatch, not for every element checked.
    auto expect = [&](bool good, auto&& what) {
      if (!good && out.mismatches++ == 0) out.first_mismatch = what();
    };
    try {
      const auto P = static_cast<std::size_t>(me.size());
      const auto rank = static_cast<std::size_t>(me.rank());
      for (std::size_t n :
           {std::size_t{1}, std::size_t{7}, std::size_t{3000}, std::size_t{70000}}) {
        std::vector<T> sum_send(n), sum_recv(n), affine_send(n), affine_recv(n);
        std::vector<T> all_send(n * P), all_recv(n * P);
        std::vector<T> late_send(n), late_recv(n);
        tlc::Persistent sum = me.allreduce_init(sum_send, sum_recv, std::plus<>{});
        tlc::Persistent affine = me.allreduce_init(affine_send, affine_recv, Affine{});
        tlc::Persistent exchange = me.alltoall_init(all_send, all_recv);
        tlc::Persistent late = me.allreduce_init(late_send, late_recv, std::plus<>{});
        for (int round = 0; round < 20; ++round) {
          const auto r = static_cast<T>(round);
          for (std::size_t i = 0; i < n; ++i) {
            sum_send[i] = static_cast<T>(me.rank()) * 1000 + r + i;
            affine_send[i] = value(me.rank(), i, round);
            late_send[i] = r * static_cast<T>(i);
          }
          for (std::size_t b = 0; b < P; ++b)
            for (std::size_t i = 0; i < n; ++i) all_send[b * n + i] = (rank * P + b) * 100 + r + i;
          sum.start();
          affine.start();
          exchange.start();
          late.start();
          // Completed in an order that differs between processes and rounds.
          std::vector<tlc::Persistent*> calls = {&sum, &affine, &exchange, &late};
          std::rotate(calls.begin(), calls.begin() + static_cast<long>((rank + r) % 4),
                      calls.end());
          for (tlc::Persistent* p : calls) p->wait();
          const auto at = [&] {
            return "n=" + std::to_string(n) + " round " + std::to_string(round);
          };
          for (std::size_t i = 0; i < n; ++i) {
            const T want_sum = 1000 * static_cast<T>(P * (P - 1) / 2) + P * (r + i);
            expect(sum_recv[i] == want_sum,
                   [&] { return "sum " + at() + " element " + std::to_string(i); });
            T want_affine = value(0, i, round);
            for (int q = 1; q < me.size(); ++q)
              want_affine = Affine{}(want_affine, value(q, i, round));
            expect(affine_recv[i] == want_affine,
                   [&] { return "affine " + at() + " element " + std::to_string(i); });
            expect(late_recv[i] == static_cast<T>(P) * r * static_cast<T>(i),
                   [&] { return "late " + at() + " element " + std::to_string(i); });
          }
          for (std::size_t b = 0; b < P; ++b)
            for (std::size_t i = 0; i < n; ++i)
              expect(all_recv[b * n + i] == (b * P + rank) * 100 + r + i,
                     [&] { return "alltoall " + at() + " block " + std::to_string(b); });
        }
      }
    } catch (const std::exception& e) {
      out.error = e.what();
    }
  });
  expect_clean(outcomes, "persistent rounds, one thread per process");
}

// Nonblocking calls of teams with one thread per process run the blocking calls' point-to-point
// algorithms as one-shot rounds (inter/p2p_rounds.hpp), kept with the call's state for a later
// call with the same buffers and layout and tagged with each call's place: five calls in flight
// at once on the same buffers round after round (so that rounds made for one call serve later
// ones under other tags), completed in an order that differs between processes and rounds,
// bcasts whose root moves (another layout on the same buffer) and sizes that take recursive
// doubling and Rabenseifner; every element against its sequential reference.
TEST(Nonblocking, NonblockingRoundsOneThreadPerProcess) {
  tlc::Team team(MPI_COMM_WORLD, test_options(1));
  std::vector<Outcome> outcomes(1);
  team.run([&](tlc::Thread& me) {
    Outcome& out = outcomes[0];
    auto expect = [&](bool good, auto&& what) {
      if (!good && out.mismatches++ == 0) out.first_mismatch = what();
    };
    try {
      const auto P = static_cast<std::size_t>(me.size());
      const auto rank = static_cast<std::size_t>(me.rank());
      for (std::size_t n :
           {std::size_t{1}, std::size_t{7}, std::size_t{3000}, std::size_t{70000}}) {
        std::vector<T> sum_send(n), sum_recv(n), affine_send(n), affine_recv(n), shared(n);
        std::vector<T> all_send(n * P), all_recv(n * P), in_place(n);
        for (int round = 0; round < 12; ++round) {
          const auto r = static_cast<T>(round);
          const int root = round % me.size();
          for (std::size_t i = 0; i < n; ++i) {
            sum_send[i] = static_cast<T>(me.rank()) * 1000 + r + i;
            affine_send[i] = value(me.rank(), i, round);
            shared[i] = me.rank() == root ? r * 7 + static_cast<T>(i) : ~T{0};
            in_place[i] = static_cast<T>(me.rank() + 1) * r;
          }
          for (std::size_t b = 0; b < P; ++b)
            for (std::size_t i = 0; i < n; ++i) all_send[b * n + i] = (rank * P + b) * 100 + r + i;
          std::vector<tlc::Request> calls;
          calls.push_back(me.iallreduce(sum_send, sum_recv, std::plus<>{}));
          calls.push_back(me.iallreduce(affine_send, affine_recv, Affine{}));
          calls.push_back(me.ialltoall(all_send, all_recv));
          calls.push_back(me.ibcast(shared, root));
          calls.push_back(me.iallreduce(in_place, std::plus<>{}));
          std::rotate(calls.begin(), calls.begin() + static_cast<long>((rank + r) % 5),
                      calls.end());
          for (tlc::Request& q : calls) q.wait();
          const auto at = [&] {
            return "n=" + std::to_string(n) + " round " + std::to_string(round);
          };
          for (std::size_t i = 0; i < n; ++i) {
            const T want_sum = 1000 * static_cast<T>(P * (P - 1) / 2) + P * (r + i);
            expect(sum_recv[i] == want_sum,
                   [&] { return "sum " + at() + " element " + std::to_string(i); });
            T want_affine = value(0, i, round);
            for (int q = 1; q < me.size(); ++q)
              want_affine = Affine{}(want_affine, value(q, i, round));
            expect(affine_recv[i] == want_affine,
                   [&] { return "affine " + at() + " element " + std::to_string(i); });
            expect(shared[i] == r * 7 + static_cast<T>(i),
                   [&] { return "bcast " + at() + " element " + std::to_string(i); });
            expect(in_place[i] == static_cast<T>(P * (P + 1) / 2) * r,
                   [&] { return "in place " + at() + " element " + std::to_string(i); });
          }
          for (std::size_t b = 0; b < P; ++b)
            for (std::size_t i = 0; i < n; ++i)
              expect(all_recv[b * n + i] == (b * P + rank) * 100 + r + i,
                     [&] { return "alltoall " + at() + " block " + std::to_string(b); });
        }
      }
    } catch (const std::exception& e) {
      out.error = e.what();
    }
  });
  expect_clean(outcomes, "nonblocking rounds, one thread per process");
}

// A one-process team's persistent calls past the lines run on slices (algo/posted/slices.hpp):
// any thread that tests or waits may run another's share of a round. Many rounds whose inputs
// change every round, threads that complete them differently (wait at once, poll test() while
// computing, sleep now and then before waiting), so that shares move between threads; every
// element against its sequential reference, every round.
TEST(Nonblocking, PersistentRoundsOnSlicesInOneProcess) {
  if (world_size() > 1) GTEST_SKIP() << "one-process teams; each process runs this alone";
  constexpr int threads = 3, rounds = 300;
  constexpr std::size_t n = 700;  // 5600 bytes per rank block: past the lines
  tlc::Team team(MPI_COMM_SELF, test_options(threads));
  std::vector<Outcome> outcomes(threads);
  team.run([&](tlc::Thread& me) {
    Outcome& out = outcomes[static_cast<std::size_t>(me.local_index())];
    const int rank = me.rank();
    const auto T_ = static_cast<std::size_t>(threads);
    std::vector<T> send(n), sum(n), prefix(n), cast(n), exchange(n * T_);
    auto p_sum = me.allreduce_init(send, sum);
    auto p_prefix = me.scan_init(send, prefix, Affine{});
    auto p_cast = me.bcast_init(cast, 1);
    auto p_exchange = me.alltoall_init(exchange);  // in place: the input is copied aside
    std::vector<tlc::Persistent*> calls{&p_sum, &p_prefix, &p_cast, &p_exchange};
    auto expect = [&](bool good, int round, const char* what, std::size_t i) {
      if (!good && out.mismatches++ == 0)
        out.first_mismatch =
            std::string(what) + " round " + std::to_string(round) + " element " + std::to_string(i);
    };
    volatile double sink = 0;
    try {
      for (int round = 0; round < rounds; ++round) {
        for (std::size_t i = 0; i < n; ++i) {  // in the buffers given at the init
          send[i] = value(rank, i, round);
          if (rank == 1) cast[i] = value(1, i, round + 7);
        }
        for (std::size_t j = 0; j < T_; ++j)
          for (std::size_t i = 0; i < n; ++i) exchange[j * n + i] = value(rank, j * n + i, round);
        for (tlc::Persistent* p : calls) p->start();
        for (tlc::Persistent* p : calls) {
          if (rank == 1) {
            while (!p->test())
              for (int k = 0; k < 200; ++k) sink = sink + 1.0;  // computing between tests
          } else {
            if (rank == 2 && round % 7 == 0)
              std::this_thread::sleep_for(std::chrono::microseconds(200));
            p->wait();
          }
        }
        for (std::size_t i = 0; i < n; ++i) {
          T want_sum = 0, want_prefix = value(0, i, round);
          for (int r = 0; r < threads; ++r) want_sum += value(r, i, round);
          for (int r = 1; r <= rank; ++r) want_prefix = Affine{}(want_prefix, value(r, i, round));
          expect(sum[i] == want_sum, round, "allreduce", i);
          expect(prefix[i] == want_prefix, round, "scan", i);
          expect(cast[i] == value(1, i, round + 7), round, "bcast", i);
          for (std::size_t j = 0; j < T_; ++j)
            expect(exchange[j * n + i] ==
                       value(static_cast<int>(j), static_cast<std::size_t>(rank) * n + i, round),
                   round, "alltoall in place", j * n + i);
        }
      }
    } catch (const std::exception& e) {
      out.error = e.what();
    }
  });
  expect_clean(outcomes, "persistent rounds on slices");
}

// A user op that throws in a share of a round on slices: that round fails on every thread with
// the op's exception, only once no share of it runs any more; the next round is whole.
struct PoisonFailure : std::runtime_error {
  PoisonFailure() : std::runtime_error("the user op met the poison") {}
};
constexpr T poison = 0xdeadbeef;
struct SumUnlessPoison {
  T operator()(const T& a, const T& b) const {
    if (b == poison) throw PoisonFailure();
    return a + b;
  }
};

TEST(Nonblocking, PersistentRoundOnSlicesWhoseOpThrowsFailsOnEveryThread) {
  if (world_size() > 1) GTEST_SKIP() << "one-process teams; each process runs this alone";
  constexpr int threads = 2;
  constexpr std::size_t n = 2000;
  tlc::Team team(MPI_COMM_SELF, test_options(threads));
  std::vector<std::string> outcome(threads);
  team.run([&](tlc::Thread& me) {
    std::string& mine = outcome[static_cast<std::size_t>(me.local_index())];
    std::vector<T> send(n), recv(n);
    auto p = me.allreduce_init(send, recv, SumUnlessPoison{});
    for (int round = 0; round < 3; ++round) {
      std::fill(send.begin(), send.end(), static_cast<T>(me.rank() + round));
      if (round == 1 && me.rank() == 1) send[n - 1] = poison;  // in the last thread's share
      try {
        p.start();
        p.wait();
        const T want = static_cast<T>(threads * (threads - 1) / 2 + threads * round);
        const bool whole = std::all_of(recv.begin(), recv.end(), [&](T v) { return v == want; });
        mine += "round " + std::to_string(round) + (whole ? " ok; " : " wrong; ");
      } catch (const PoisonFailure&) {
        mine += "round " + std::to_string(round) + " threw; ";
      } catch (const std::exception& e) {
        mine += "round " + std::to_string(round) + ": " + e.what() + "; ";
      }
    }
  });
  for (const std::string& o : outcome) EXPECT_EQ(o, "round 0 ok; round 1 threw; round 2 ok; ");
}

// A thread whose wait for a call on slices ends with an error (TLC_TIMEOUT: another thread has
// not started it) may free its buffers at once: the call runs for nobody (no output written),
// the late thread's wait ends with TeamAborted instead of reading them, and the next call is
// whole. make_call(me, send, recv) returns what runs one call of the form tried and waits for it.
template <class MakeCall>
void expect_call_abandoned_by_a_timed_out_thread(MakeCall make_call) {
  constexpr std::size_t n = 2000;  // past the lines
  tlc::TeamOptions options = test_options(2);
  options.timeout_seconds = 1;
  tlc::Team team(MPI_COMM_SELF, options);
  std::vector<std::string> outcome(2);
  std::atomic<bool> call_0_over{false}, thread_0_gave_up{false};
  team.run([&](tlc::Thread& me) {
    std::string& mine = outcome[static_cast<std::size_t>(me.local_index())];
    std::vector<T> send(n, static_cast<T>(me.rank() + 1)), recv(n, T{0});
    auto call = make_call(me, send, recv);
    // Thread 1 starts call 0 only once thread 0's wait has given up (not a time: a loaded
    // machine may end thread 0's wait late).
    if (me.rank() == 1)
      while (!thread_0_gave_up.load()) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    try {
      call();
      mine += "call 0 ran; ";
    } catch (const tlc::TeamAborted& e) {
      mine += std::string("call 0 aborted") +
              (std::string(e.what()).find("gave up") != std::string::npos ? " (gave up); " : "; ");
    } catch (const tlc::Error& e) {
      mine += e.code() == tlc::Errc::timeout ? "call 0 timed out; " : "call 0 other error; ";
    }
    if (std::any_of(recv.begin(), recv.end(), [](T v) { return v != T{0}; }))
      mine += "output written; ";
    if (me.rank() == 0) thread_0_gave_up.store(true);
    // Not a tlc call, which would time out too while thread 1 waits.
    if (me.rank() == 1) call_0_over.store(true);
    while (!call_0_over.load()) std::this_thread::yield();
    call();
    mine += std::all_of(recv.begin(), recv.end(), [](T v) { return v == 3; }) ? "call 1 ok"
                                                                              : "call 1 wrong";
  });
  EXPECT_EQ(outcome[0], "call 0 timed out; call 1 ok");
  EXPECT_EQ(outcome[1], "call 0 aborted (gave up); call 1 ok");
}

TEST(Nonblocking, PersistentRoundOnSlicesAbandonedByATimedOutThread) {
  if (world_size() > 1) GTEST_SKIP() << "one-process teams; each process runs this alone";
  expect_call_abandoned_by_a_timed_out_thread(
      [](tlc::Thread& me, std::vector<T>& send, std::vector<T>& recv) {
        return [p = me.allreduce_init(send, recv)]() mutable {
          p.start();
          p.wait();
        };
      });
}

// The same for a nonblocking call on the ring's slices (a one-process call past the lines).
TEST(Nonblocking, CallOnSlicesAbandonedByATimedOutThread) {
  if (world_size() > 1) GTEST_SKIP() << "one-process teams; each process runs this alone";
  expect_call_abandoned_by_a_timed_out_thread(
      [](tlc::Thread& me, std::vector<T>& send, std::vector<T>& recv) {
        return [&me, &send, &recv] { me.iallreduce(send, recv).wait(); };
      });
}

// More requests in progress than the limit: a clear error, the others still complete.
TEST(Nonblocking, TooManyOutstandingIsAnError) {
  tlc::TeamOptions options = test_options(1);
  options.max_requests = 4;
  tlc::Team team(MPI_COMM_WORLD, options);
  std::string error;
  team.run([&](tlc::Thread& me) {
    std::vector<std::vector<T>> bufs(5, std::vector<T>(2, 1));
    std::vector<tlc::Request> requests;
    for (int k = 0; k < 4; ++k)
      requests.push_back(me.iallreduce(bufs[static_cast<std::size_t>(k)]));
    try {
      requests.push_back(me.iallreduce(bufs[4]));
    } catch (const tlc::Error& e) {
      error = e.what();
    }
    tlc::wait_all(requests);
    // The team is still usable, and its order intact.
    auto r = me.iallreduce(bufs[4]);
    r.wait();
  });
  EXPECT_NE(error.find("TLC_MAX_REQUESTS"), std::string::npos) << error;
}

// A wrong argument of one thread fails the call on every thread, before any data moves.
TEST(Nonblocking, BadArgumentsThrowAtTheStart) {
  tlc::Team team(MPI_COMM_WORLD, static_options(1));
  std::string error;
  team.run([&](tlc::Thread& me) {
    std::vector<T> send(4, 1), recv(3, 0);
    try {
      auto r = me.iallreduce(send, recv);
      r.wait();
    } catch (const tlc::Error& e) {
      error = e.what();
    }
  });
  EXPECT_FALSE(error.empty());
}

// Starting a persistent call whose round is active is refused.
TEST(Nonblocking, PersistentStartWhileActiveIsAnError) {
  tlc::Team team(MPI_COMM_WORLD, test_options(1));
  bool refused = false;
  team.run([&](tlc::Thread& me) {
    std::vector<T> buf(2, 1);
    auto p = me.bcast_init(buf, 0);
    p.start();
    try {
      p.start();
    } catch (const tlc::Error&) {
      refused = true;
    }
    p.wait();
  });
  EXPECT_TRUE(refused);
}

// Telemetry counts nonblocking calls apart from blocking ones, with their span and wait.
TEST(Nonblocking, TelemetryCountsNonblockingCalls) {
  tlc::TeamOptions options = test_options(2);
  options.stats = true;
  tlc::Team team(MPI_COMM_WORLD, options);
  team.run([&](tlc::Thread& me) {
    std::vector<T> buf(4, 1);
    for (int i = 0; i < 10; ++i) {
      auto r = me.iallreduce(buf);
      r.wait();
    }
    auto p = me.allreduce_init(buf);
    for (int i = 0; i < 5; ++i) {
      p.start();
      while (!p.test()) {
      }
    }
    me.allreduce(buf);
  });
  const tlc::TeamStats stats = team.stats();
  const tlc::CollectiveStats* allreduce = nullptr;
  for (const auto& k : stats.collectives)
    if (k.collective == tlc::Collective::allreduce) allreduce = &k;
  ASSERT_NE(allreduce, nullptr);
  EXPECT_EQ(allreduce->calls, 1u);
  EXPECT_EQ(allreduce->nonblocking_calls, 15u);
  EXPECT_GT(allreduce->mean_nonblocking_span_us, 0.0);
  EXPECT_LE(allreduce->mean_nonblocking_wait_us, allreduce->mean_nonblocking_span_us);
}

// A persistent init with bad arguments on one thread fails every round on every thread (the
// others do not wait for a thread that never starts one).
TEST(Nonblocking, PersistentInitWithBadArgumentsFailsEveryThread) {
  tlc::Team team(MPI_COMM_WORLD, test_options(2));
  std::vector<std::string> errors(2);
  team.run([&](tlc::Thread& me) {
    std::vector<T> send(4, 1), recv(me.local_index() == 0 ? 3 : 4);
    try {
      auto p = me.allreduce_init(send, recv);
      p.start();
      p.wait();
    } catch (const tlc::TeamAborted& e) {
      errors[static_cast<std::size_t>(me.local_index())] = std::string("aborted: ") + e.what();
    } catch (const tlc::Error& e) {
      errors[static_cast<std::size_t>(me.local_index())] = e.what();
    }
  });
  for (const std::string& e : errors) {
    EXPECT_NE(e.find("receive buffer"), std::string::npos) << e;
    EXPECT_EQ(e.find("TLC_TIMEOUT"), std::string::npos) << e;
  }
}

// Threads whose persistent inits are valid each but disagree (the element count) get an error
// at every round on every thread, never a wait for a round that cannot run: in one process the
// rounds run on the threads' lines or slices, and the init compares the threads' calls for them.
TEST(Nonblocking, PersistentInitThreadsDisagreeFailEveryRound) {
  for (std::size_t base : {std::size_t{3}, std::size_t{3000}}) {  // lines, slices
    tlc::Team team(MPI_COMM_WORLD, test_options(2));
    std::vector<std::string> errors(2);
    std::vector<int> failed_rounds(2, 0);
    try {
      team.run([&](tlc::Thread& me) {
        const auto i = static_cast<std::size_t>(me.local_index());
        std::vector<T> send(base + i, 1), recv(base + i, 0);
        auto p = me.allreduce_init(send, recv);
        for (int round = 0; round < 3; ++round) {
          try {
            p.start();
            p.wait();
          } catch (const tlc::TeamAborted& e) {
            errors[i] = std::string("aborted: ") + e.what();
            throw;
          } catch (const tlc::Error& e) {
            errors[i] = e.what();
            ++failed_rounds[i];
          }
        }
      });
    } catch (const tlc::TeamAborted&) {  // across processes the failure aborts the team
    }
    for (std::size_t i = 0; i < errors.size(); ++i) {
      EXPECT_FALSE(errors[i].empty()) << "thread " << i << ", " << base << " elements";
      EXPECT_EQ(errors[i].find("TLC_TIMEOUT"), std::string::npos) << errors[i];
      if (world_size() == 1) {
        EXPECT_EQ(failed_rounds[i], 3) << errors[i];
        EXPECT_NE(errors[i].find("elements per rank"), std::string::npos) << errors[i];
      }
    }
  }
}

// TLC_CHECK compares nonblocking calls and first persistent rounds across processes before
// their step between processes: agreeing calls give their results; processes that pass
// different counts get Error(mismatch) on every thread of every process, nothing hangs, and
// the team goes on with the next call.
TEST(Nonblocking, CheckComparesProcesses) {
  tlc::TeamOptions options = test_options(1 + world_rank() % 2);
  options.check = true;
  tlc::Team team(MPI_COMM_WORLD, options);
  const int threads = team.threads();
  std::vector<Outcome> outcomes(static_cast<std::size_t>(threads));
  std::vector<std::string> errors(static_cast<std::size_t>(threads)),
      variant_errors(static_cast<std::size_t>(threads));
  team.run([&](tlc::Thread& me) {
    const auto i = static_cast<std::size_t>(me.local_index());
    Outcome& out = outcomes[i];
    const T size = static_cast<T>(me.size());
    auto expect_sum = [&](const std::vector<T>& got, T base, const char* what) {
      const T want = base * size + size * (size - 1) / 2;
      for (T v : got)
        if (v != want && out.mismatches++ == 0)
          out.first_mismatch = std::string(what) + ": " + std::to_string(v);
    };
    try {
      std::vector<T> send(5, static_cast<T>(me.rank())), recv(5, 0);
      me.iallreduce(send, recv).wait();
      expect_sum(recv, 0, "agreeing iallreduce");
      auto p = me.allreduce_init(send, recv);
      for (int round = 1; round <= 3; ++round) {
        std::fill(send.begin(), send.end(), static_cast<T>(me.rank() + round));
        p.start();
        p.wait();
        expect_sum(recv, static_cast<T>(round), "persistent round");
      }
      // Process 0 passes one element more than the others.
      const std::size_t n = me.process() == 0 ? 4 : 3;
      std::vector<T> a(n, 1), b(n, 0);
      try {
        me.iallreduce(a, b).wait();
      } catch (const tlc::Error& e) {
        errors[i] = e.what();
      }
      std::fill(send.begin(), send.end(), static_cast<T>(me.rank()));
      auto r = me.iallreduce(send, recv);
      r.wait();
      expect_sum(recv, 0, "iallreduce after the disagreement");
      // v-variant counts that agree inside each process but not between them: process 1
      // expects 2 elements from rank 0, which sends 1.
      const auto R = static_cast<std::size_t>(me.size());
      std::vector<std::size_t> send_counts(R, 1), recv_counts(R, 1), displs(R);
      for (std::size_t k = 0; k < R; ++k) displs[k] = 2 * k;
      if (me.process() == 1) recv_counts[0] = 2;
      std::vector<T> vs(2 * R, 1), vr(2 * R, 0);
      try {
        me.ialltoallv(vs, send_counts, displs, vr, recv_counts, displs).wait();
      } catch (const tlc::Error& e) {
        variant_errors[i] = e.what();
      }
      auto again = me.iallreduce(send, recv);
      again.wait();
      expect_sum(recv, 0, "iallreduce after the v-variant disagreement");
    } catch (const std::exception& e) {
      out.error = e.what();
    }
  });
  expect_clean(outcomes, "TLC_CHECK");
  if (world_size() > 1) {
    for (const std::string& e : variant_errors)
      EXPECT_NE(e.find("counts of this v-variant"), std::string::npos) << e;
  }
  for (const std::string& e : errors) {
    if (world_size() == 1) {
      EXPECT_TRUE(e.empty()) << e;  // one process: nothing to compare, the call runs
    } else {
      EXPECT_NE(e.find("TLC_CHECK"), std::string::npos) << e;
      EXPECT_NE(e.find("count per rank"), std::string::npos) << e;
    }
  }
}

// Threads that start different kinds of calls at one place of their order (a nonblocking call
// and a persistent init) get an error and the team aborts: nothing waits for a place that
// can no longer be filled.
TEST(Nonblocking, DifferentCallsAtOnePlaceAbortTheTeam) {
  tlc::Team team(MPI_COMM_WORLD, test_options(2));
  std::vector<std::string> errors(2);
  try {
    team.run([&](tlc::Thread& me) {
      try {
        if (me.local_index() == 0) {
          me.ibarrier().wait();
        } else {
          auto p = me.barrier_init();
        }
        std::vector<T> x(2, 1);
        me.iallreduce(x).wait();
      } catch (const std::exception& e) {
        errors[static_cast<std::size_t>(me.local_index())] = e.what();
        throw;
      }
    });
  } catch (const std::exception&) {
  }
  for (const std::string& e : errors) {
    EXPECT_FALSE(e.empty());
    EXPECT_EQ(e.find("TLC_TIMEOUT"), std::string::npos) << e;
  }
}

// One process: small nonblocking calls run on the threads' lines (algo/posted/lines.cpp), whose
// slots serve eight calls per thread in turn. Many more calls outstanding than that, of several
// collectives, completed in orders that differ between threads, one thread late by a few
// milliseconds now and then and some calls never waited for by their thread until much later:
// a start that needs a slot completes the old call for the threads that have not.
namespace {

// Many nonblocking calls in flight per thread, of base + (k % 4) elements per rank: on lines
// (base 1) or past them, on slices (one-process teams) or the general schedule.
void expect_many_outstanding_calls(std::size_t base, const std::string& label) {
  for (int threads : {1, 2, 3, 5}) {
    tlc::Team team(MPI_COMM_WORLD, test_options(threads));
    std::vector<Outcome> outcomes(static_cast<std::size_t>(threads));
    constexpr int rounds = 20, outstanding = 29;
    team.run([&](tlc::Thread& me) {
      Outcome& out = outcomes[static_cast<std::size_t>(me.local_index())];
      try {
        std::mt19937 random(static_cast<unsigned>(me.rank() * 104729 + 17));
        const int P = me.size(), r = me.rank();
        const T size = static_cast<T>(P);
        for (int round = 0; round < rounds; ++round) {
          std::vector<std::vector<T>> sends(outstanding), recvs(outstanding);
          std::vector<tlc::Request> requests;
          for (int k = 0; k < outstanding; ++k) {
            const std::size_t n = base + static_cast<std::size_t>(k % 4);
            auto& send = sends[static_cast<std::size_t>(k)];
            auto& recv = recvs[static_cast<std::size_t>(k)];
            switch (k % 4) {
              case 0:  // allreduce
                send.assign(n, static_cast<T>(r + round + k));
                recv.assign(n, 0);
                requests.push_back(me.iallreduce(send, recv));
                break;
              case 1:  // bcast from the last rank, in place
                recv.assign(n, r == P - 1 ? static_cast<T>(round * 100 + k) : 0);
                requests.push_back(me.ibcast(recv, P - 1));
                break;
              case 2:  // alltoall: block j of rank r holds r * 1000 + j
                send.resize(n * static_cast<std::size_t>(P));
                for (std::size_t i = 0; i < send.size(); ++i)
                  send[i] = static_cast<T>(r * 1000 + static_cast<int>(i / n) + round + k);
                recv.assign(send.size(), 0);
                requests.push_back(me.ialltoall(send, recv));
                break;
              default:  // scan
                send.assign(n, static_cast<T>(r + 1 + k));
                recv.assign(n, 0);
                requests.push_back(me.iscan(send, recv));
                break;
            }
            if (random() % 16 == 0) std::this_thread::sleep_for(std::chrono::milliseconds(2));
          }
          // Complete in a random order, the first few only after every other.
          std::vector<std::size_t> order(outstanding);
          std::iota(order.begin(), order.end(), 0);
          std::shuffle(order.begin() + 3, order.end(), random);
          std::rotate(order.begin(), order.begin() + 3, order.end());
          for (std::size_t i : order) {
            if (random() % 2) {
              while (!requests[i].test()) {
              }
            } else {
              requests[i].wait();
            }
          }
          auto check = [&](int k, std::size_t i, T got, T want) {
            if (got != want && out.mismatches++ == 0)
              out.first_mismatch = "round " + std::to_string(round) + " call " + std::to_string(k) +
                                   " element " + std::to_string(i) + ": " + std::to_string(got) +
                                   ", want " + std::to_string(want);
          };
          for (int k = 0; k < outstanding; ++k) {
            const auto& recv = recvs[static_cast<std::size_t>(k)];
            const std::size_t n = base + static_cast<std::size_t>(k % 4);
            for (std::size_t i = 0; i < recv.size(); ++i) {
              switch (k % 4) {
                case 0:
                  check(k, i, recv[i], size * (size - 1) / 2 + size * static_cast<T>(round + k));
                  break;
                case 1:
                  check(k, i, recv[i], static_cast<T>(round * 100 + k));
                  break;
                case 2: {
                  const auto from = static_cast<int>(i / n);
                  check(k, i, recv[i], static_cast<T>(from * 1000 + r + round + k));
                  break;
                }
                default: {  // sum over ranks q <= r of (q + 1 + k)
                  const T ranks = static_cast<T>(r + 1);
                  check(k, i, recv[i], ranks * (ranks + 1) / 2 + ranks * static_cast<T>(k));
                  break;
                }
              }
            }
          }
        }
      } catch (const std::exception& e) {
        out.error = e.what();
      }
    });
    expect_clean(outcomes,
                 "many outstanding " + label + ", " + std::to_string(threads) + " threads");
  }
}

}  // namespace

TEST(Nonblocking, ManyOutstandingCallsOnLines) { expect_many_outstanding_calls(1, "on lines"); }

// Past the lines: a one-process team runs each call as one round on slices (any thread that
// tests or waits may run another's share), recycled call after call.
TEST(Nonblocking, ManyOutstandingCallsOnSlices) {
  expect_many_outstanding_calls(100, "past the lines");
}

// One process: threads that pass different counts, or one thread's wrong arguments, fail the
// call on lines on every thread with the same error, before any output is written; the team
// stays usable and its order intact.
namespace {

// Calls of base + 2 elements per rank (base + 3 on thread 1, whose count disagrees).
void expect_disagreement_fails_every_thread(std::size_t base) {
  constexpr int threads = 3;
  tlc::Team team(MPI_COMM_WORLD, test_options(threads));
  std::vector<std::string> counts(threads), invalid(threads);
  std::vector<int> untouched(threads, 0), after(threads, 0);
  team.run([&](tlc::Thread& me) {
    const auto t = static_cast<std::size_t>(me.local_index());
    std::vector<T> send(base + (me.local_index() == 1 ? 3 : 2), 5), recv(send.size(), 7);
    try {
      me.iallreduce(std::span<const T>(send), std::span<T>(recv)).wait();
    } catch (const tlc::Error& e) {
      if (e.code() == tlc::Errc::mismatch) counts[t] = e.what();
    }
    untouched[t] = std::all_of(recv.begin(), recv.end(), [](T v) { return v == 7; });
    std::vector<T> small(base + 2, 1), out(base + (me.local_index() == 2 ? 1 : 2), 0);  // short
    try {
      auto r = me.iallreduce(std::span<const T>(small), std::span<T>(out));
      r.wait();
    } catch (const tlc::Error& e) {
      if (e.code() == tlc::Errc::invalid_argument) invalid[t] = e.what();
    }
    std::vector<T> x(2, 1);
    me.iallreduce(std::span<T>(x)).wait();
    after[t] = x[0] == threads && x[1] == threads;
  });
  for (int t = 0; t < threads; ++t) {
    const auto i = static_cast<std::size_t>(t);
    EXPECT_NE(counts[i].find("elements per rank"), std::string::npos) << t << ": " << counts[i];
    EXPECT_EQ(counts[i], counts[0]) << t;
    EXPECT_TRUE(untouched[i]) << t;
    if (t == 2)  // its own error, at its start
      EXPECT_NE(invalid[i].find("receive buffer"), std::string::npos) << invalid[i];
    else  // the others': whose arguments are wrong
      EXPECT_NE(invalid[i].find("rank 2"), std::string::npos) << t << ": " << invalid[i];
    EXPECT_TRUE(after[i]) << t;
  }
}

}  // namespace

TEST(Nonblocking, DisagreementOnLinesFailsEveryThread) {
  if (world_size() > 1) GTEST_SKIP() << "the lines serve one-process teams";
  expect_disagreement_fails_every_thread(0);
}

// The same past the lines, where a one-process team's call runs as one round on slices: the
// last thread to start it checks the threads' agreement and arguments before any share runs.
TEST(Nonblocking, DisagreementOnSlicesFailsEveryThread) {
  if (world_size() > 1) GTEST_SKIP() << "slices serve one-process teams";
  expect_disagreement_fails_every_thread(200);
}

// One process: threads that put one call on different schedules (a small count on lines, a
// large one on the general schedule) find out instead of waiting for each other: the team
// aborts; nothing waits for TLC_TIMEOUT.
TEST(Nonblocking, CallOnLinesAgainstTheGeneralScheduleAbortsTheTeam) {
  if (world_size() > 1) GTEST_SKIP() << "the lines serve one-process teams";
  for (int general : {0, 1}) {
    tlc::TeamOptions options = test_options(2);
    options.timeout_seconds = 60;
    tlc::Team team(MPI_COMM_WORLD, options);
    std::vector<std::string> errors(2);
    try {
      team.run([&](tlc::Thread& me) {
        std::vector<T> x(me.local_index() == general ? 4096 : 2, 1);
        try {
          me.iallreduce(std::span<T>(x)).wait();
        } catch (const std::exception& e) {
          errors[static_cast<std::size_t>(me.local_index())] = e.what();
          throw;
        }
      });
    } catch (const std::exception&) {
    }
    for (const std::string& e : errors) {
      EXPECT_FALSE(e.empty());
      EXPECT_EQ(e.find("TLC_TIMEOUT"), std::string::npos) << e;
    }
  }
}

// One process: a thread waiting for a call on lines that another thread never starts ends with
// TLC_TIMEOUT's error naming that thread, or with TeamAborted once that thread's exception
// aborts the team.
TEST(Nonblocking, WaitOnLinesEndsWhenTheTeamAbortsOrTimesOut) {
  if (world_size() > 1) GTEST_SKIP() << "the lines serve one-process teams";
  for (bool timeout : {true, false}) {
    tlc::TeamOptions options = test_options(2);
    if (timeout) options.timeout_seconds = 0.3;
    tlc::Team team(MPI_COMM_WORLD, options);
    std::string error;
    try {
      team.run([&](tlc::Thread& me) {
        std::vector<T> x(2, 1);
        if (me.local_index() == 1) {
          if (!timeout) throw std::runtime_error("thread 1 gives up");
          std::this_thread::sleep_for(std::chrono::seconds(2));
          return;
        }
        try {
          me.iallreduce(std::span<T>(x)).wait();
        } catch (const std::exception& e) {
          error = e.what();
          throw;
        }
      });
    } catch (const std::exception&) {
    }
    if (timeout)
      EXPECT_NE(error.find("rank 1"), std::string::npos) << error;
    else
      EXPECT_NE(error.find("aborted"), std::string::npos) << error;
  }
}
