// Random collectives checked against the sequential references of reference.hpp, shared by the
// soak (test_soak.cpp) and the sub-team tests (test_split.cpp): every process draws the same
// sequence from one seed (collectives, element types and ops, sizes, roots, in-place or not) so
// that the processes make the same calls; only the arrival skew (short sleeps before a call) is
// drawn per thread. A Check's body runs on every thread of a team; its verdict is read on the
// main thread afterwards.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "mpi/collective_harness.hpp"
#include "mpi/reference.hpp"
#include "mpi/test_common.hpp"

namespace tlc_test {

using tlc::Collective;

// The shared random sequence (the same on every process).
struct Rng {
  std::uint64_t state;
  std::uint64_t next() { return mix(state++); }
  std::size_t below(std::size_t n) { return n ? static_cast<std::size_t>(next() % n) : 0; }
  bool chance(unsigned percent) { return next() % 100 < percent; }
};

inline std::uint64_t env_number(const char* name, std::uint64_t fallback) {
  const char* v = std::getenv(name);
  return v && *v ? std::strtoull(v, nullptr, 10) : fallback;
}

// What one team-wide call leaves to check, per local thread.
struct Check {
  std::string what;
  std::function<void(tlc::Thread&)> body;         // run by every thread of the team
  std::function<std::string(int local)> verdict;  // on the main thread afterwards: "" if right
};

struct TeamCtx {
  int size = 0;   // ranks of the team
  int first = 0;  // global rank of this process's thread 0
  int threads = 0;
};

// Per-call state shared by the threads (each writes only its own slots) and the verdict.
template <class T>
struct State {
  PerRank<T> inputs;                           // every rank's send buffer (empty where none)
  std::vector<Buf<T>> initial, expected, got;  // per local thread
  std::vector<std::string> errors;
  std::size_t specified = static_cast<std::size_t>(-1);
  std::uint64_t skew_seed = 0;
};

// Short sleeps before a call: none for most calls, otherwise up to 200 us for some threads
// and occasionally one thread late by up to 2 ms, so that every arrival order occurs.
inline void skew(std::uint64_t call_seed, int rank) {
  const std::uint64_t pattern = call_seed % 8;
  if (pattern < 4) return;
  const std::uint64_t h = mix(call_seed ^ (static_cast<std::uint64_t>(rank) << 40));
  std::uint64_t us = 0;
  if (pattern == 7) {
    us = static_cast<int>(call_seed >> 20) % 7 == rank % 7 ? 500 + h % 1500 : 0;
  } else if (h % 2 == 0) {
    us = h % 200;
  }
  if (us) std::this_thread::sleep_for(std::chrono::microseconds(us));
}

template <class T>
std::shared_ptr<State<T>> new_state(const TeamCtx& ctx, std::uint64_t call_seed) {
  auto st = std::make_shared<State<T>>();
  st->got.resize(static_cast<std::size_t>(ctx.threads));
  st->errors.resize(static_cast<std::size_t>(ctx.threads));
  st->skew_seed = call_seed;
  return st;
}

// Fills initial/expected of every local thread: init(rank) before the call, reference(rank,
// buffer) turns a copy into what the call must leave there.
template <class T, class Init, class Reference>
inline void expect(const TeamCtx& ctx, State<T>& st, Init init, Reference reference) {
  for (int t = 0; t < ctx.threads; ++t) {
    const int r = ctx.first + t;
    st.initial.push_back(init(r));
    st.expected.push_back(st.initial.back());
    reference(r, st.expected.back());
  }
}

// The call made by every thread: body(me, mine, send) with private copies of the thread's
// buffers; the send copy must come back unchanged.
template <class T, class Body>
inline Check make_check(std::string what, std::shared_ptr<State<T>> st, Body body) {
  Check c;
  c.what = std::move(what);
  c.body = [st, body](tlc::Thread& me) {
    const auto t = static_cast<std::size_t>(me.local_index());
    Buf<T> mine = st->initial[t];
    const Buf<T>& input = st->inputs[static_cast<std::size_t>(me.rank())];
    Buf<T> send = input;
    skew(st->skew_seed, me.rank());
    try {
      body(me, mine, send);
      const std::string changed = first_difference(send, input, send.size());
      if (!changed.empty()) st->errors[t] = "the send buffer was written: " + changed;
    } catch (const std::exception& ex) {
      st->errors[t] = std::string("threw: ") + ex.what();
    }
    st->got[t] = std::move(mine);
  };
  c.verdict = [st](int local) {
    const auto t = static_cast<std::size_t>(local);
    if (!st->errors[t].empty()) return st->errors[t];
    return first_difference(st->got[t], st->expected[t], st->specified);
  };
  return c;
}

// A random element count: 0, a few, a few hundred, occasionally thousands; `blocks` buffers of
// this size go to or come from every rank, so large counts shrink with it.
inline std::size_t random_count(Rng& rng, std::size_t blocks, bool long_run) {
  const std::size_t p = rng.below(100);
  std::size_t n;
  if (p < 15) {
    n = 0;
  } else if (p < 50) {
    n = 1 + rng.below(8);
  } else if (p < 85) {
    n = 9 + rng.below(300);
  } else if (p < 97 || !long_run) {
    n = 300 + rng.below(5000);
  } else {
    n = 5000 + rng.below(60000);  // several small pipeline chunks
  }
  if (blocks > 1 && n > 64) n = 64 + n / blocks;
  return n;
}

template <class T>
PerRank<T> inputs_of(const TeamCtx& ctx, std::size_t n, std::uint64_t salt) {
  PerRank<T> in;
  for (int r = 0; r < ctx.size; ++r) in.push_back(generate<T>(n, r, salt, plain<T>));
  return in;
}

inline std::string describe(Collective c, const char* type, std::size_t n, int root,
                            bool in_place) {
  std::string s = std::string(tlc::to_string(c)) + " " + type + " n=" + std::to_string(n);
  if (root >= 0) s += " root=" + std::to_string(root);
  if (in_place) s += " in-place";
  return s;
}

// --- Reductions
// -----------------------------------------------------------------------------------

template <class T, class Op>
inline Check reduction(const TeamCtx& ctx, Rng& rng, Collective c, const char* name, Op op,
                       bool long_run) {
  const auto N = static_cast<std::size_t>(ctx.size);
  const bool rsb = c == Collective::reduce_scatter_block;
  const std::size_t n = random_count(rng, rsb ? N : 1, long_run);
  const std::size_t len = rsb ? N * n : n;
  const int root = c == Collective::reduce ? static_cast<int>(rng.below(N)) : -1;
  const bool in_place = rng.chance(40);
  // The scalar forms (one value in, one out) of allreduce, scan and exscan.
  const bool scalar = n == 1 && !rsb && c != Collective::reduce && rng.chance(50);
  const std::uint64_t salt = rng.next();
  auto st = new_state<T>(ctx, rng.next());
  st->inputs = inputs_of<T>(ctx, len, salt);
  const PerRank<T>& in = st->inputs;
  expect(
      ctx, *st,
      [&](int r) {
        if (in_place || scalar) return in[static_cast<std::size_t>(r)];
        return garbage_buf<T>(n, r);
      },
      [&](int r, Buf<T>& out) {
        switch (c) {
          case Collective::reduce:
            ref::reduce(in, root, op, r, out);
            break;
          case Collective::allreduce:
            ref::allreduce(in, op, r, out);
            break;
          case Collective::scan:
            ref::scan(in, op, r, out);
            break;
          case Collective::exscan:
            ref::exscan(in, op, r, out);
            if (scalar && r == 0) out[0] = T{};
            break;
          default: {
            // In place the buffer holds size() blocks; the result is its first block.
            Buf<T> block(n);
            ref::reduce_scatter_block(in, op, r, block);
            for (std::size_t i = 0; i < n; ++i) out[i] = block[i];
            break;
          }
        }
      });
  if (rsb && in_place) st->specified = n;
  std::string what = describe(c, name, n, root, in_place);
  if (scalar) what += " scalar";
  return make_check<T>(
      std::move(what), st,
      [c, root, in_place, scalar, op](tlc::Thread& me, Buf<T>& mine, const Buf<T>& send) {
        if (scalar) {
          const T x = mine[0];
          if (c == Collective::allreduce) mine[0] = me.allreduce(x, op);
          if (c == Collective::scan) mine[0] = me.scan(x, op);
          if (c == Collective::exscan) mine[0] = me.exscan(x, op);
          return;
        }
        switch (c) {
          case Collective::reduce:
            if (in_place) {
              me.reduce(mine.span(), root, op);
            } else {
              me.reduce(send.cspan(), mine.span(), root, op);
            }
            break;
          case Collective::allreduce:
            if (in_place) {
              me.allreduce(mine.span(), op);
            } else {
              me.allreduce(send.cspan(), mine.span(), op);
            }
            break;
          case Collective::scan:
            if (in_place) {
              me.scan(mine.span(), op);
            } else {
              me.scan(send.cspan(), mine.span(), op);
            }
            break;
          case Collective::exscan:
            if (in_place) {
              me.exscan(mine.span(), op);
            } else {
              me.exscan(send.cspan(), mine.span(), op);
            }
            break;
          default:
            if (in_place) {
              me.reduce_scatter_block(mine.span(), op);
            } else {
              me.reduce_scatter_block(send.cspan(), mine.span(), op);
            }
            break;
        }
      });
}

// A user op on a built-in type that tlc must treat as non-commutative (rank order kept).
struct IntSum {
  int operator()(int a, int b) const { return a + b; }
};

// A user op with state and operator== (ops that tlc can compare across threads).
struct ModSum {
  std::uint32_t modulus;
  std::uint32_t operator()(std::uint32_t a, std::uint32_t b) const {
    return static_cast<std::uint32_t>((std::uint64_t{a} + b) % modulus);
  }
  friend bool operator==(const ModSum&, const ModSum&) = default;
};

inline Check random_reduction(const TeamCtx& ctx, Rng& rng, Collective c, bool long_run) {
  switch (rng.below(10)) {
    case 0:
      return reduction<double>(ctx, rng, c, "double+", std::plus<>{}, long_run);
    case 1:
      return reduction<int>(ctx, rng, c, "int max", tlc::max{}, long_run);
    case 2:
      return reduction<long>(ctx, rng, c, "long min", tlc::min{}, long_run);
    case 3:
      return reduction<std::uint32_t>(ctx, rng, c, "uint32 xor", std::bit_xor<>{}, long_run);
    case 4:
      return reduction<std::uint64_t>(ctx, rng, c, "uint64 *", std::multiplies<>{}, long_run);
    case 5:
      return reduction<Affine>(ctx, rng, c, "Affine compose", Compose{}, long_run);
    case 6:
      return reduction<Mat2>(ctx, rng, c, "Mat2 matmul", MatMul{}, long_run);
    case 7:
      return reduction<Triple>(ctx, rng, c, "Triple commutative user op",
                               tlc::commutative(AddTriple{}), long_run);
    case 8:
      return reduction<int>(ctx, rng, c, "int user sum", IntSum{}, long_run);
    default:
      return reduction<std::uint32_t>(ctx, rng, c, "uint32 sum mod 1000003 (op with state)",
                                      ModSum{1000003}, long_run);
  }
}

// --- Data movement
// --------------------------------------------------------------------------------

template <class T>
inline Check movement(const TeamCtx& ctx, Rng& rng, Collective c, const char* name, bool long_run) {
  const auto N = static_cast<std::size_t>(ctx.size);
  const bool blocks = c == Collective::allgather || c == Collective::gather ||
                      c == Collective::scatter || c == Collective::alltoall ||
                      c == Collective::allgatherv || c == Collective::gatherv ||
                      c == Collective::scatterv || c == Collective::alltoallv;
  const std::size_t n = random_count(rng, blocks ? N : 1, long_run);
  const bool rooted = c == Collective::bcast || c == Collective::gather ||
                      c == Collective::gatherv || c == Collective::scatter ||
                      c == Collective::scatterv;
  const int root = rooted ? static_cast<int>(rng.below(N)) : -1;
  const bool in_place = c != Collective::bcast && c != Collective::alltoallv && rng.chance(40);
  const std::uint64_t salt = rng.next();
  const int v_salt = static_cast<int>(rng.below(4));
  auto st = new_state<T>(ctx, rng.next());
  auto v = std::make_shared<const VLayout>(v_layout(ctx.size, n, v_salt));
  auto l = std::make_shared<const AlltoallvLayout>(alltoallv_layout(ctx.size, n));
  PerRank<T>& in = st->inputs;
  const auto me_of = [](int r) { return static_cast<std::size_t>(r); };
  switch (c) {
    case Collective::bcast:
      in = inputs_of<T>(ctx, 0, salt);
      expect(
          ctx, *st,
          [&](int r) {
            return r == root ? generate<T>(n, r, salt, plain<T>) : garbage_buf<T>(n, r);
          },
          [&](int, Buf<T>& out) { out = generate<T>(n, root, salt, plain<T>); });
      break;
    case Collective::allgather:
    case Collective::gather:
      in = inputs_of<T>(ctx, n, salt);
      expect(
          ctx, *st,
          [&](int r) {
            if (c == Collective::gather && r != root) return Buf<T>();
            Buf<T> b = garbage_buf<T>(N * n, r);
            if (in_place)
              for (std::size_t i = 0; i < n; ++i) b[me_of(r) * n + i] = in[me_of(r)][i];
            return b;
          },
          [&](int r, Buf<T>& out) {
            if (c == Collective::gather) {
              ref::gather(in, root, r, out);
            } else {
              ref::allgather(in, r, out);
            }
          });
      break;
    case Collective::allgatherv:
    case Collective::gatherv:
      for (int r = 0; r < ctx.size; ++r)
        in.push_back(generate<T>(v->counts[me_of(r)], r, salt, plain<T>));
      expect(
          ctx, *st,
          [&](int r) {
            if (c == Collective::gatherv && r != root) return Buf<T>();
            Buf<T> b = garbage_buf<T>(v->extent, r);
            if (in_place)
              for (std::size_t i = 0; i < v->counts[me_of(r)]; ++i)
                b[v->displs[me_of(r)] + i] = in[me_of(r)][i];
            return b;
          },
          [&](int r, Buf<T>& out) {
            if (c == Collective::gatherv) {
              ref::gatherv(in, *v, root, r, out);
            } else {
              ref::allgatherv(in, *v, r, out);
            }
          });
      break;
    case Collective::scatter:
    case Collective::scatterv:
      in.resize(N);
      if (c == Collective::scatter) {
        in[me_of(root)] = generate<T>(N * n, root, salt, plain<T>);
      } else {
        in[me_of(root)] = garbage_buf<T>(v->extent, root);
        for (std::size_t k = 0; k < N; ++k)
          for (std::size_t i = 0; i < v->counts[k]; ++i)
            in[me_of(root)][v->displs[k] + i] = plain<T>(seed(static_cast<int>(k), i, salt));
      }
      expect(
          ctx, *st,
          [&](int r) {
            if (in_place && r == root) return in[me_of(root)];
            return garbage_buf<T>(c == Collective::scatter ? n : v->counts[me_of(r)], r);
          },
          [&](int r, Buf<T>& out) {
            if (in_place && r == root) return;
            if (c == Collective::scatter) {
              ref::scatter(in, root, r, out);
            } else {
              ref::scatterv(in, *v, root, r, out);
            }
          });
      break;
    case Collective::alltoall:
      in = inputs_of<T>(ctx, N * n, salt);
      expect(
          ctx, *st, [&](int r) { return in_place ? in[me_of(r)] : garbage_buf<T>(N * n, r); },
          [&](int r, Buf<T>& out) { ref::alltoall(in, r, out); });
      break;
    default:  // alltoallv
      for (int r = 0; r < ctx.size; ++r)
        in.push_back(generate<T>(l->send_extent[me_of(r)], r, salt, plain<T>));
      expect(
          ctx, *st, [&](int r) { return garbage_buf<T>(l->recv_extent[me_of(r)], r); },
          [&](int r, Buf<T>& out) { ref::alltoallv(in, *l, r, out); });
      break;
  }
  return make_check<T>(
      describe(c, name, n, root, in_place), st,
      [c, root, in_place, v, l](tlc::Thread& me, Buf<T>& mine, const Buf<T>& send) {
        const bool at_root = me.rank() == root;
        const auto r = static_cast<std::size_t>(me.rank());
        switch (c) {
          case Collective::bcast:
            me.bcast(mine.span(), root);
            break;
          case Collective::allgather:
            if (in_place) {
              me.allgather(mine.span());
            } else {
              me.allgather(send.cspan(), mine.span());
            }
            break;
          case Collective::gather:
            if (in_place && at_root) {
              me.gather(tlc::in_place, mine.span(), root);
            } else {
              me.gather(send.cspan(), mine.span(), root);
            }
            break;
          case Collective::allgatherv:
            if (in_place) {
              me.allgatherv(mine.span(), v->counts, v->displs);
            } else {
              me.allgatherv(send.cspan(), mine.span(), v->counts, v->displs);
            }
            break;
          case Collective::gatherv:
            if (in_place && at_root) {
              me.gatherv(tlc::in_place, mine.span(), v->counts, v->displs, root);
            } else {
              me.gatherv(send.cspan(), mine.span(), v->counts, v->displs, root);
            }
            break;
          case Collective::scatter:
            if (in_place && at_root) {
              me.scatter(mine.cspan(), tlc::in_place, root);
            } else {
              me.scatter(send.cspan(), mine.span(), root);
            }
            break;
          case Collective::scatterv:
            if (in_place && at_root) {
              me.scatterv(mine.cspan(), v->counts, v->displs, tlc::in_place, root);
            } else {
              me.scatterv(send.cspan(), v->counts, v->displs, mine.span(), root);
            }
            break;
          case Collective::alltoall:
            if (in_place) {
              me.alltoall(mine.span());
            } else {
              me.alltoall(send.cspan(), mine.span());
            }
            break;
          default:
            me.alltoallv(send.cspan(), l->send_counts[r], l->send_displs[r], mine.span(),
                         l->recv_counts[r], l->recv_displs[r]);
            break;
        }
      });
}

inline Check random_movement(const TeamCtx& ctx, Rng& rng, Collective c, bool long_run) {
  switch (rng.below(4)) {
    case 0:
      return movement<double>(ctx, rng, c, "double", long_run);
    case 1:
      return movement<Rgb>(ctx, rng, c, "Rgb", long_run);
    case 2:
      return movement<std::uint8_t>(ctx, rng, c, "uint8", long_run);
    default:
      return movement<Affine>(ctx, rng, c, "Affine", long_run);
  }
}

inline Check barrier_check(const TeamCtx& ctx, Rng& rng) {
  auto st = new_state<int>(ctx, rng.next());
  st->inputs.resize(static_cast<std::size_t>(ctx.size));
  expect(
      ctx, *st, [](int) { return Buf<int>(); }, [](int, Buf<int>&) {});
  return make_check<int>("barrier", st,
                         [](tlc::Thread& me, Buf<int>&, const Buf<int>&) { me.barrier(); });
}

inline const std::vector<Collective> all_collectives = {Collective::barrier,
                                                        Collective::bcast,
                                                        Collective::reduce,
                                                        Collective::allreduce,
                                                        Collective::allgather,
                                                        Collective::allgatherv,
                                                        Collective::gather,
                                                        Collective::gatherv,
                                                        Collective::scatter,
                                                        Collective::scatterv,
                                                        Collective::alltoall,
                                                        Collective::alltoallv,
                                                        Collective::reduce_scatter_block,
                                                        Collective::scan,
                                                        Collective::exscan};

inline bool is_reduction(Collective c) {
  return c == Collective::reduce || c == Collective::allreduce ||
         c == Collective::reduce_scatter_block || c == Collective::scan || c == Collective::exscan;
}

inline Check random_call(const TeamCtx& ctx, Rng& rng, bool long_run) {
  const Collective c = all_collectives[rng.below(all_collectives.size())];
  if (c == Collective::barrier) return barrier_check(ctx, rng);
  if (is_reduction(c)) return random_reduction(ctx, rng, c, long_run);
  return random_movement(ctx, rng, c, long_run);
}

// Random team options; the same on every process except the thread count, which differs
// between processes (uneven shapes) but is drawn from the shared sequence too.
inline tlc::TeamOptions random_options(Rng& rng, std::string& label) {
  const int processes = world_size();
  std::vector<int> threads(static_cast<std::size_t>(processes));
  for (int& t : threads) t = 1 + static_cast<int>(rng.below(processes == 1 ? 4 : 3));
  // TLC_SOAK_THREADS=a,b,...: fixed threads per process instead (the last entry repeats).
  if (const char* fixed = std::getenv("TLC_SOAK_THREADS"); fixed && *fixed) {
    std::vector<int> given;
    std::istringstream in(fixed);
    std::string item;
    while (std::getline(in, item, ',')) given.push_back(std::max(1, std::stoi(item)));
    for (std::size_t q = 0; q < threads.size() && !given.empty(); ++q)
      threads[q] = given[std::min(q, given.size() - 1)];
  }
  tlc::TeamOptions o = test_options(threads[static_cast<std::size_t>(world_rank())]);
  label = "threads";
  for (int t : threads) {
    label += ' ';
    label += std::to_string(t);
  }
  o.lanes = 1 + static_cast<int>(rng.below(3));
  label += ", lanes ";
  label += std::to_string(o.lanes);
  if (rng.chance(30)) {
    o.pipeline_chunk_bytes = rng.chance(50) ? 4096 : 65536;
    label += ", chunk ";
    label += std::to_string(o.pipeline_chunk_bytes);
  }
  if (rng.chance(25)) {
    o.leaders = "dynamic";
    label += ", dynamic leaders";
  }
  if (rng.chance(25)) {
    o.reproducible = false;
    label += ", not reproducible";
  }
  const auto algos = tlc::algorithms();
  for (Collective c : all_collectives) {
    if (!rng.chance(60)) continue;
    std::vector<const tlc::AlgorithmDescription*> fits;
    for (const auto& a : algos)
      if (a.collective == c && (processes == 1 || !a.single_process)) fits.push_back(&a);
    if (fits.empty()) continue;
    const auto& a = *fits[rng.below(fits.size())];
    std::string choice = a.name;
    if (!a.forms.empty() && rng.chance(50)) choice += ":" + a.forms[rng.below(a.forms.size())];
    o.algorithms[c] = choice;
    label += std::string(", ") + tlc::to_string(c) + "=" + choice;
  }
  return o;
}

}  // namespace tlc_test
