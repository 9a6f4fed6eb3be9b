// Data-moving collectives (barrier, bcast, allgather(v), gather(v), scatter(v), alltoall(v))
// checked element by element against the sequential references of reference.hpp: every
// algorithm forced in turn, 1..6 threads on one process and uneven shapes across processes,
// sizes 0, 1, 7, 4099 and 1 MiB + 3 (across processes also 2, 3 and 100003, and 1 MiB + 3 on the
// reduced matrix of collective_harness.hpp), every root (the first and last for the large
// sizes), in-place and not, 8-, 4- and 3-byte elements. Buffers a
// collective must not write (gaps between v-blocks, a non-root's receive buffer) are checked to
// keep their contents.
#include <chrono>
#include <complex>
#include <cstdint>
#include <thread>

#include "mpi/collective_harness.hpp"

namespace tlc_test {
namespace {

constexpr std::uint64_t salt_of(Collective c) { return static_cast<std::uint64_t>(c) + 1; }

// Element types of a mover sweep: double, int and a 3-byte struct at the small sizes (complex
// too at n = 7); at the large size one small type, so that size()^2 * n buffers stay modest.
template <class F>
void for_mover_types(std::size_t n, F&& f) {
  if (is_large(n)) {
    f(Tag<std::uint8_t>{});
    return;
  }
  f(Tag<double>{});
  f(Tag<int>{});
  f(Tag<Rgb>{});
  if (n == 7) f(Tag<std::complex<double>>{});
}

// --- barrier -------------------------------------------------------------------------------------

// Inside a process: no thread leaves round k before every thread of its process entered it.
// Across processes: thread 0 of every process puts its round number into process 0's window
// before the barrier; after it, process 0 must see every process at that round or later. One
// process (rotating) and one thread (rotating) arrive late.
TEST_F(CollectiveTest, barrier) {
  const int P = world_size(), p = world_rank();
  int* marks = nullptr;
  MPI_Win win;
  MPI_Win_allocate(static_cast<MPI_Aint>(P * sizeof(int)), sizeof(int), MPI_INFO_NULL,
                   MPI_COMM_WORLD, &marks, &win);
  for (const TeamShape& shape : team_shapes(Algorithms::core)) {
    std::vector<tlc_test::Setup> chosen = setups(Collective::barrier, Algorithms::core);
    if (P > 1 && algorithm_wanted("dissemination")) chosen.push_back({"dissemination", 1, false});
    std::vector<Configured> teams = make_teams(Collective::barrier, chosen, shape.threads);
    for (Configured& c : teams) {
      MPI_Win_lock(MPI_LOCK_EXCLUSIVE, p, 0, win);
      for (int q = 0; q < P; ++q) marks[q] = 0;
      MPI_Win_unlock(p, win);
      MPI_Barrier(MPI_COMM_WORLD);
      constexpr int rounds = 24;
      std::vector<std::atomic<int>> entered(rounds);
      std::vector<std::string> problems(static_cast<std::size_t>(shape.threads));
      c.team->run([&](tlc::Thread& me) {
        std::string& problem = problems[static_cast<std::size_t>(me.local_index())];
        try {
          for (int k = 0; k < rounds; ++k) {
            if (me.process() == k % P && me.local_index() == k % me.threads())
              std::this_thread::sleep_for(std::chrono::microseconds(500 + 200 * (k % 3)));
            entered[static_cast<std::size_t>(k)].fetch_add(1);
            if (me.local_index() == 0) {
              const int round = k + 1;
              MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win);
              MPI_Put(&round, 1, MPI_INT, 0, me.process(), 1, MPI_INT, win);
              MPI_Win_unlock(0, win);
            }
            me.barrier();
            const int in = entered[static_cast<std::size_t>(k)].load();
            if (in != me.threads() && problem.empty())
              problem = "round " + std::to_string(k) + ": left the barrier when " +
                        std::to_string(in) + " of " + std::to_string(me.threads()) +
                        " threads had entered";
            if (me.process() == 0 && me.local_index() == 0) {
              MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win);
              for (int q = 0; q < P; ++q)
                if (marks[q] < k + 1 && problem.empty())
                  problem = "round " + std::to_string(k) + ": left the barrier before process " +
                            std::to_string(q) + " entered it (it is at round " +
                            std::to_string(marks[q]) + ")";
              MPI_Win_unlock(0, win);
            }
          }
        } catch (const std::exception& e) {
          problem = std::string("threw: ") + e.what();
        }
      });
      for (std::size_t t = 0; t < problems.size(); ++t)
        EXPECT_TRUE(problems[t].empty()) << "barrier [" << c.setup.label() << "] " << shape.label
                                         << ", thread " << t << ": " << problems[t];
    }
  }
  MPI_Win_free(&win);
}

// --- bcast ---------------------------------------------------------------------------------------

template <class T>
void bcast_cases(const Ctx& ctx, std::size_t n) {
  Batch<T> batch(ctx, n);
  for (int root : ctx.roots(n)) {
    auto send = std::make_shared<PerRank<T>>(static_cast<std::size_t>(ctx.size));
    (*send)[static_cast<std::size_t>(root)] =
        generate<T>(n, root, salt_of(Collective::bcast), plain<T>);
    auto e = expectation<T>(
        ctx,
        [&](int r) {
          return r == root ? (*send)[static_cast<std::size_t>(root)] : garbage_buf<T>(n, r);
        },
        [&](int r, Buf<T>& out) { ref::bcast(*send, root, r, out); });
    batch.add(
        ctx.describe(n, root, false, type_name<T>()), std::move(e),
        [root](tlc::Thread& me, Buf<T>& mine, const Buf<T>&) { me.bcast(mine.span(), root); });
  }
}

// --- allgather -----------------------------------------------------------------------------------

template <class T>
void allgather_cases(const Ctx& ctx, std::size_t n) {
  const auto N = static_cast<std::size_t>(ctx.size);
  auto send = std::make_shared<PerRank<T>>();
  for (int r = 0; r < ctx.size; ++r)
    send->push_back(generate<T>(n, r, salt_of(Collective::allgather), plain<T>));
  Batch<T> batch(ctx, n);
  for (bool in_place : {false, true}) {
    auto e = expectation<T>(
        ctx,
        [&](int r) {
          Buf<T> b = garbage_buf<T>(N * n, r);
          if (in_place)
            for (std::size_t i = 0; i < n; ++i)
              b[static_cast<std::size_t>(r) * n + i] = (*send)[static_cast<std::size_t>(r)][i];
          return b;
        },
        [&](int r, Buf<T>& out) { ref::allgather(*send, r, out); });
    batch.add(
        ctx.describe(n, -1, in_place, type_name<T>()), std::move(e),
        [in_place](tlc::Thread& me, Buf<T>& mine, const Buf<T>& my_send) {
          if (in_place) {
            me.allgather(mine.span());
          } else {
            me.allgather(my_send.cspan(), mine.span());
          }
        },
        in_place ? nullptr : send);
  }
}

// --- allgatherv ----------------------------------------------------------------------------------

// Every thread passes its own copy of the counts and displacements, scribbled over once its
// call returns.
template <class T>
void allgatherv_cases(const Ctx& ctx, std::size_t n) {
  auto v = std::make_shared<const VLayout>(v_layout(ctx.size, n, 0));
  auto send = std::make_shared<PerRank<T>>();
  for (int r = 0; r < ctx.size; ++r)
    send->push_back(generate<T>(v->counts[static_cast<std::size_t>(r)], r,
                                salt_of(Collective::allgatherv), plain<T>));
  Batch<T> batch(ctx, n);
  for (bool in_place : {false, true}) {
    auto e = expectation<T>(
        ctx,
        [&](int r) {
          Buf<T> b = garbage_buf<T>(v->extent, r);
          const auto me = static_cast<std::size_t>(r);
          if (in_place)
            for (std::size_t i = 0; i < v->counts[me]; ++i) b[v->displs[me] + i] = (*send)[me][i];
          return b;
        },
        [&](int r, Buf<T>& out) { ref::allgatherv(*send, *v, r, out); });
    batch.add(
        ctx.describe(n, -1, in_place, type_name<T>()), std::move(e),
        [in_place, v](tlc::Thread& me, Buf<T>& mine, const Buf<T>& my_send) {
          std::vector<std::size_t> counts = v->counts, displs = v->displs;
          if (in_place) {
            me.allgatherv(mine.span(), counts, displs);
          } else {
            me.allgatherv(my_send.cspan(), mine.span(), counts, displs);
          }
          scribble(counts);
          scribble(displs);
        },
        in_place ? nullptr : send);
  }
}

// --- gather --------------------------------------------------------------------------------------

// Non-roots pass an empty receive buffer for even roots and a full one (which must stay
// untouched) for odd roots.
template <class T>
void gather_cases(const Ctx& ctx, std::size_t n) {
  const auto N = static_cast<std::size_t>(ctx.size);
  auto send = std::make_shared<PerRank<T>>();
  for (int r = 0; r < ctx.size; ++r)
    send->push_back(generate<T>(n, r, salt_of(Collective::gather), plain<T>));
  Batch<T> batch(ctx, n);
  for (int root : ctx.roots(n))
    for (bool in_place : {false, true}) {
      const bool full_nonroot = root % 2 == 1;
      auto e = expectation<T>(
          ctx,
          [&](int r) {
            if (r != root && !full_nonroot) return Buf<T>();
            Buf<T> b = garbage_buf<T>(N * n, r);
            if (in_place && r == root)
              for (std::size_t i = 0; i < n; ++i)
                b[static_cast<std::size_t>(r) * n + i] = (*send)[static_cast<std::size_t>(r)][i];
            return b;
          },
          [&](int r, Buf<T>& out) { ref::gather(*send, root, r, out); });
      batch.add(
          ctx.describe(n, root, in_place, type_name<T>()), std::move(e),
          [in_place, root](tlc::Thread& me, Buf<T>& mine, const Buf<T>& my_send) {
            if (in_place && me.rank() == root) {
              me.gather(tlc::in_place, mine.span(), root);
            } else {
              me.gather(my_send.cspan(), mine.span(), root);
            }
          },
          send);
    }
}

// --- gatherv -------------------------------------------------------------------------------------

// Counts and displacements are read at the root only: for even roots the non-roots pass none
// (and an empty receive buffer), for odd roots a copy (and a receive buffer that must stay
// untouched).
template <class T>
void gatherv_cases(const Ctx& ctx, std::size_t n) {
  auto v = std::make_shared<const VLayout>(v_layout(ctx.size, n, 1));
  auto send = std::make_shared<PerRank<T>>();
  for (int r = 0; r < ctx.size; ++r)
    send->push_back(generate<T>(v->counts[static_cast<std::size_t>(r)], r,
                                salt_of(Collective::gatherv), plain<T>));
  Batch<T> batch(ctx, n);
  for (int root : ctx.roots(n))
    for (bool in_place : {false, true}) {
      const bool full_nonroot = root % 2 == 1;
      auto e = expectation<T>(
          ctx,
          [&](int r) {
            if (r != root && !full_nonroot) return Buf<T>();
            Buf<T> b = garbage_buf<T>(v->extent, r);
            const auto me = static_cast<std::size_t>(r);
            if (in_place && r == root)
              for (std::size_t i = 0; i < v->counts[me]; ++i) b[v->displs[me] + i] = (*send)[me][i];
            return b;
          },
          [&](int r, Buf<T>& out) { ref::gatherv(*send, *v, root, r, out); });
      batch.add(
          ctx.describe(n, root, in_place, type_name<T>()), std::move(e),
          [in_place, root, full_nonroot, v](tlc::Thread& me, Buf<T>& mine, const Buf<T>& my_send) {
            const bool at_root = me.rank() == root;
            std::vector<std::size_t> counts, displs;
            if (at_root || full_nonroot) {
              counts = v->counts;
              displs = v->displs;
            }
            if (in_place && at_root) {
              me.gatherv(tlc::in_place, mine.span(), counts, displs, root);
            } else {
              me.gatherv(my_send.cspan(), mine.span(), counts, displs, root);
            }
            scribble(counts);
            scribble(displs);
          },
          send);
    }
}

// --- scatter -------------------------------------------------------------------------------------

// In place, the root keeps its block in its send buffer, which is what is checked there (it
// must not change). Non-roots pass no send buffer for even roots, a meaningless one for odd.
template <class T>
void scatter_cases(const Ctx& ctx, std::size_t n) {
  const auto N = static_cast<std::size_t>(ctx.size);
  Batch<T> batch(ctx, n);
  for (int root : ctx.roots(n)) {
    const auto uroot = static_cast<std::size_t>(root);
    auto send = std::make_shared<PerRank<T>>(N);
    (*send)[uroot] = generate<T>(N * n, root, salt_of(Collective::scatter), plain<T>);
    if (root % 2 == 1)
      for (int r = 0; r < ctx.size; ++r)
        if (r != root) (*send)[static_cast<std::size_t>(r)] = garbage_buf<T>(n + 1, r);
    for (bool in_place : {false, true}) {
      auto e = expectation<T>(
          ctx, [&](int r) { return in_place && r == root ? (*send)[uroot] : garbage_buf<T>(n, r); },
          [&](int r, Buf<T>& out) {
            if (!(in_place && r == root)) ref::scatter(*send, root, r, out);
          });
      batch.add(
          ctx.describe(n, root, in_place, type_name<T>()), std::move(e),
          [in_place, root](tlc::Thread& me, Buf<T>& mine, const Buf<T>& my_send) {
            if (in_place && me.rank() == root) {
              me.scatter(mine.cspan(), tlc::in_place, root);
            } else {
              me.scatter(my_send.cspan(), mine.span(), root);
            }
          },
          send);
    }
  }
}

// --- scatterv ------------------------------------------------------------------------------------

template <class T>
void scatterv_cases(const Ctx& ctx, std::size_t n) {
  const auto N = static_cast<std::size_t>(ctx.size);
  auto v = std::make_shared<const VLayout>(v_layout(ctx.size, n, 2));
  Batch<T> batch(ctx, n);
  for (int root : ctx.roots(n)) {
    const auto uroot = static_cast<std::size_t>(root);
    const bool full_nonroot = root % 2 == 1;
    auto send = std::make_shared<PerRank<T>>(N);
    (*send)[uroot] = garbage_buf<T>(v->extent, root);
    for (std::size_t k = 0; k < N; ++k)
      for (std::size_t i = 0; i < v->counts[k]; ++i)
        (*send)[uroot][v->displs[k] + i] =
            plain<T>(seed(static_cast<int>(k), i, salt_of(Collective::scatterv) + 100 * uroot));
    for (bool in_place : {false, true}) {
      auto e = expectation<T>(
          ctx,
          [&](int r) {
            return in_place && r == root
                       ? (*send)[uroot]
                       : garbage_buf<T>(v->counts[static_cast<std::size_t>(r)], r);
          },
          [&](int r, Buf<T>& out) {
            if (!(in_place && r == root)) ref::scatterv(*send, *v, root, r, out);
          });
      batch.add(
          ctx.describe(n, root, in_place, type_name<T>()), std::move(e),
          [in_place, root, full_nonroot, v](tlc::Thread& me, Buf<T>& mine, const Buf<T>& my_send) {
            const bool at_root = me.rank() == root;
            std::vector<std::size_t> counts, displs;
            if (at_root || full_nonroot) {
              counts = v->counts;
              displs = v->displs;
            }
            if (in_place && at_root) {
              me.scatterv(mine.cspan(), counts, displs, tlc::in_place, root);
            } else {
              me.scatterv(my_send.cspan(), counts, displs, mine.span(), root);
            }
            scribble(counts);
            scribble(displs);
          },
          send);
    }
  }
}

// --- alltoall ------------------------------------------------------------------------------------

template <class T>
void alltoall_cases(const Ctx& ctx, std::size_t n) {
  const auto N = static_cast<std::size_t>(ctx.size);
  auto send = std::make_shared<PerRank<T>>();
  for (int r = 0; r < ctx.size; ++r)
    send->push_back(generate<T>(N * n, r, salt_of(Collective::alltoall), plain<T>));
  Batch<T> batch(ctx, n);
  for (bool in_place : {false, true}) {
    auto e = expectation<T>(
        ctx,
        [&](int r) {
          return in_place ? (*send)[static_cast<std::size_t>(r)] : garbage_buf<T>(N * n, r);
        },
        [&](int r, Buf<T>& out) { ref::alltoall(*send, r, out); });
    batch.add(
        ctx.describe(n, -1, in_place, type_name<T>()), std::move(e),
        [in_place](tlc::Thread& me, Buf<T>& mine, const Buf<T>& my_send) {
          if (in_place) {
            me.alltoall(mine.span());
          } else {
            me.alltoall(my_send.cspan(), mine.span());
          }
        },
        in_place ? nullptr : send);
  }
}

// --- alltoallv -----------------------------------------------------------------------------------

template <class T>
void alltoallv_cases(const Ctx& ctx, std::size_t n) {
  auto l = std::make_shared<const AlltoallvLayout>(alltoallv_layout(ctx.size, n));
  auto send = std::make_shared<PerRank<T>>();
  for (int k = 0; k < ctx.size; ++k) {
    const auto uk = static_cast<std::size_t>(k);
    Buf<T> b = garbage_buf<T>(l->send_extent[uk], k);
    for (int j = 0; j < ctx.size; ++j) {
      const auto uj = static_cast<std::size_t>(j);
      for (std::size_t i = 0; i < l->send_counts[uk][uj]; ++i)
        b[l->send_displs[uk][uj] + i] =
            plain<T>(seed(k * 1000 + j, i, salt_of(Collective::alltoallv)));
    }
    send->push_back(std::move(b));
  }
  auto e = expectation<T>(
      ctx, [&](int r) { return garbage_buf<T>(l->recv_extent[static_cast<std::size_t>(r)], r); },
      [&](int r, Buf<T>& out) { ref::alltoallv(*send, *l, r, out); });
  Batch<T> batch(ctx, n);
  batch.add(
      ctx.describe(n, -1, false, type_name<T>()), std::move(e),
      [l](tlc::Thread& me, Buf<T>& mine, const Buf<T>& my_send) {
        const auto r = static_cast<std::size_t>(me.rank());
        std::vector<std::size_t> sc = l->send_counts[r], sd = l->send_displs[r],
                                 rc = l->recv_counts[r], rd = l->recv_displs[r];
        me.alltoallv(my_send.cspan(), sc, sd, mine.span(), rc, rd);
        scribble(sc);
        scribble(sd);
        scribble(rc);
        scribble(rd);
      },
      send);
}

// --- the sweeps ----------------------------------------------------------------------------------

#define TLC_MOVER_SWEEP(name)                                                                    \
  void name##_sweep(Algorithms which) {                                                          \
    sweep(Collective::name, which, [](const Ctx& ctx, std::size_t n) {                           \
      for_mover_types(n, [&](auto tag) { name##_cases<typename decltype(tag)::type>(ctx, n); }); \
    });                                                                                          \
  }

TLC_MOVER_SWEEP(allgather)
TLC_MOVER_SWEEP(allgatherv)
TLC_MOVER_SWEEP(gather)
TLC_MOVER_SWEEP(gatherv)
TLC_MOVER_SWEEP(scatter)
TLC_MOVER_SWEEP(scatterv)
TLC_MOVER_SWEEP(alltoall)
TLC_MOVER_SWEEP(alltoallv)

// bcast's large size uses 4-byte elements (its buffers are n per rank).
void bcast_sweep(Algorithms which) {
  sweep(Collective::bcast, which, [](const Ctx& ctx, std::size_t n) {
    if (is_large(n)) {
      bcast_cases<std::int32_t>(ctx, n);
    } else {
      for_mover_types(n, [&](auto tag) { bcast_cases<typename decltype(tag)::type>(ctx, n); });
    }
  });
}

// Core: every single-process algorithm on one process, hierarchical and the selector across
// processes. Lanes: the full-lane and multi-sender algorithms across processes.
#define TLC_MOVEMENT_TESTS(name)                                   \
  TEST_F(CollectiveTest, name) { name##_sweep(Algorithms::core); } \
  TEST_F(CollectiveTest, name##_lanes) { name##_sweep(Algorithms::lane); }

TLC_MOVEMENT_TESTS(bcast)
TLC_MOVEMENT_TESTS(allgather)
TLC_MOVEMENT_TESTS(allgatherv)
TLC_MOVEMENT_TESTS(gather)
TLC_MOVEMENT_TESTS(gatherv)
TLC_MOVEMENT_TESTS(scatter)
TLC_MOVEMENT_TESTS(scatterv)
TLC_MOVEMENT_TESTS(alltoall)
TLC_MOVEMENT_TESTS(alltoallv)

}  // namespace
}  // namespace tlc_test
