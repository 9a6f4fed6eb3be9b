// Reductions (reduce, allreduce, reduce_scatter_block, scan, exscan) checked element by element
// against the sequential references of reference.hpp: every algorithm forced in turn (two_level
// on a synthetic machine with several NUMA domains), 1..6 threads on one process and uneven
// shapes across processes, sizes 0, 1, 7, 4099 and 1 MiB + 3 (across processes also 2, 3 and
// 100003, and 1 MiB + 3 on the reduced matrix of collective_harness.hpp), every root, in-place
// and not, built-in ops on arithmetic and complex types, bitwise and logical ops, a commutative
// user op, and non-commutative user ops (a struct op and a lambda) whose result depends on rank
// order. Inputs are small integers, so floating-point sums and products are exact in any order.
// Buffers the call must not write (a non-root's receive buffer, rank 0's exscan output) are
// checked to keep their contents.
#include <complex>
#include <cstdint>
#include <cstring>

#include "mpi/collective_harness.hpp"

namespace tlc_test {
namespace {

// --- Ops and their inputs ------------------------------------------------------------------------

template <class T>
T factor(std::uint64_t h) {  // products stay exact and far from overflow over 16 ranks
  constexpr double doubles[] = {1, 2, -1, 0.5, 1, -2};
  constexpr int ints[] = {1, -1, 2, 1, -1, 3};
  if constexpr (std::is_floating_point_v<T>) {
    return static_cast<T>(doubles[h % 6]);
  } else {
    return static_cast<T>(ints[h % 6]);
  }
}

// Calls f(index, name, op, gen) for every op a reduction sweep checks at size n; gen(seed) makes
// an input element (its return type is the element type).
template <class F>
void for_ops(Collective c, std::size_t n, F&& f) {
  if (is_large(n)) {
    if (c == Collective::reduce_scatter_block) {  // size() blocks per rank: small elements
      f(0, "uint8 +", std::plus<>{}, plain<std::uint8_t>);
      if (is_reduced(n)) return;
      f(1, "Affine8 compose (user struct op, non-commutative)", Compose8{}, plain<Affine8>);
    } else {
      f(0, "double +", std::plus<>{}, plain<double>);
      if (is_reduced(n)) return;
      f(1, "Affine compose (user struct op, non-commutative)", Compose{}, plain<Affine>);
      f(2, "int +", std::plus<>{}, plain<int>);
    }
    return;
  }
  f(0, "double +", std::plus<>{}, plain<double>);
  f(1, "Affine compose (user struct op, non-commutative)", Compose{}, plain<Affine>);
  f(2, "int +", std::plus<>{}, plain<int>);
  f(3, "Mat2 product (user struct op, non-commutative)", MatMul{}, plain<Mat2>);
  // "The first non-zero value in rank order": associative, not commutative.
  f(
      4, "long first-non-zero (user lambda, non-commutative)",
      [](const long& a, const long& b) { return a != 0 ? a : b; },
      [](std::uint64_t h) { return h % 3 == 0 ? 0L : static_cast<long>(h % 1000) + 1; });
  f(5, "Triple tlc::commutative(user op)", tlc::commutative(AddTriple{}), plain<Triple>);
  f(17, "uint8 + (wrapping)", std::plus<>{},
    [](std::uint64_t h) { return static_cast<std::uint8_t>(h); });
  // The sizes that exist for their shape alone (empty buffers; 2 and 3 elements, which leave
  // lanes empty) take the ops whose paths differ; 1, 7 and 4099 elements take every op.
  if (only_path_ops() || n == 0 || n == 2 || n == 3) return;
  f(6, "complex<double> +", std::plus<>{}, plain<std::complex<double>>);
  f(7, "float +", std::plus<>{}, plain<float>);
  f(8, "uint32 bit_xor", std::bit_xor<>{},
    [](std::uint64_t h) { return static_cast<std::uint32_t>(h >> 7); });
  f(9, "uint16 bit_or", std::bit_or<>{},
    [](std::uint64_t h) { return static_cast<std::uint16_t>(1u << (h % 16)); });
  f(10, "uint64 bit_and", std::bit_and<>{}, [](std::uint64_t h) { return ~(1ull << (h % 64)); });
  f(11, "int tlc::min", tlc::min{}, plain<int>);
  f(12, "double tlc::max", tlc::max{}, plain<double>);
  f(13, "double *", std::multiplies<>{}, factor<double>);
  f(14, "int *", std::multiplies<>{}, factor<int>);
  f(15, "int logical_and", std::logical_and<>{},
    [](std::uint64_t h) { return static_cast<int>(h % 7 == 0 ? 0 : h % 3 + 1); });
  f(16, "bool logical_or", std::logical_or<>{}, [](std::uint64_t h) { return h % 9 == 0; });
}

constexpr std::uint64_t salt_of(Collective c, int op_index) {
  return static_cast<std::uint64_t>(c) * 64 + static_cast<std::uint64_t>(op_index) + 1;
}

template <class T, class Gen>
std::shared_ptr<PerRank<T>> inputs(const Ctx& ctx, std::size_t count, std::uint64_t salt, Gen gen) {
  auto send = std::make_shared<PerRank<T>>();
  for (int r = 0; r < ctx.size; ++r) send->push_back(generate<T>(count, r, salt, gen));
  return send;
}

// --- reduce --------------------------------------------------------------------------------------

// The first ops run at every root, the others at one root each (rotating). Non-roots pass an
// empty receive buffer for even roots and a full one, which must stay untouched, for odd
// roots; in place, a non-root's buffer must keep its contribution.
template <class T, class Op, class Gen>
void reduce_cases(const Ctx& ctx, std::size_t n, int index, const std::string& name, Op op,
                  Gen gen) {
  auto send = inputs<T>(ctx, n, salt_of(Collective::reduce, index), gen);
  std::vector<int> roots = ctx.roots(n);
  if (index >= 4 && !is_large(n)) roots = {(index + static_cast<int>(n)) % ctx.size};
  Batch<T> batch(ctx, n);
  for (int root : roots)
    for (bool in_place : {false, true}) {
      const bool full_nonroot = root % 2 == 1;
      auto e = expectation<T>(
          ctx,
          [&](int r) {
            if (in_place) return (*send)[static_cast<std::size_t>(r)];
            return r == root || full_nonroot ? garbage_buf<T>(n, r) : Buf<T>();
          },
          [&](int r, Buf<T>& out) { ref::reduce(*send, root, op, r, out); });
      batch.add(
          ctx.describe(n, root, in_place, name), std::move(e),
          [in_place, root, op](tlc::Thread& me, Buf<T>& mine, const Buf<T>& my_send) {
            if (in_place) {
              me.reduce(mine.span(), root, op);
            } else {
              me.reduce(my_send.cspan(), mine.span(), root, op);
            }
          },
          send);
    }
}

// --- allreduce -----------------------------------------------------------------------------------

template <class T, class Op, class Gen>
void allreduce_cases(const Ctx& ctx, std::size_t n, int index, const std::string& name, Op op,
                     Gen gen) {
  auto send = inputs<T>(ctx, n, salt_of(Collective::allreduce, index), gen);
  Buf<T> result(n);
  ref::allreduce(*send, op, 0, result);
  Batch<T> batch(ctx, n);
  for (bool in_place : {false, true}) {
    auto e = expectation<T>(
        ctx,
        [&](int r) {
          return in_place ? (*send)[static_cast<std::size_t>(r)] : garbage_buf<T>(n, r);
        },
        [&](int, Buf<T>& out) { out = result; });
    e.commutative_op = tlc::detail::is_commutative<Op>::value;
    batch.add(
        ctx.describe(n, -1, in_place, name), std::move(e),
        [in_place, op](tlc::Thread& me, Buf<T>& mine, const Buf<T>& my_send) {
          if (in_place) {
            me.allreduce(mine.span(), op);
          } else {
            me.allreduce(my_send.cspan(), mine.span(), op);
          }
        },
        in_place ? nullptr : send);
  }
}

// --- reduce_scatter_block ------------------------------------------------------------------------

// In place, only the first n elements of the buffer are defined afterwards.
template <class T, class Op, class Gen>
void reduce_scatter_block_cases(const Ctx& ctx, std::size_t n, int index, const std::string& name,
                                Op op, Gen gen) {
  const auto N = static_cast<std::size_t>(ctx.size);
  auto send = inputs<T>(ctx, N * n, salt_of(Collective::reduce_scatter_block, index), gen);
  Batch<T> batch(ctx, n);
  for (bool in_place : {false, true}) {
    auto e = expectation<T>(
        ctx,
        [&](int r) {
          return in_place ? (*send)[static_cast<std::size_t>(r)] : garbage_buf<T>(n, r);
        },
        [&](int r, Buf<T>& out) {
          Buf<T> block(n);
          ref::reduce_scatter_block(*send, op, r, block);
          for (std::size_t i = 0; i < n; ++i) out[i] = block[i];
        });
    e.specified = n;
    e.commutative_op = tlc::detail::is_commutative<Op>::value;
    batch.add(
        ctx.describe(n, -1, in_place, name), std::move(e),
        [in_place, op](tlc::Thread& me, Buf<T>& mine, const Buf<T>& my_send) {
          if (in_place) {
            me.reduce_scatter_block(mine.span(), op);
          } else {
            me.reduce_scatter_block(my_send.cspan(), mine.span(), op);
          }
        },
        in_place ? nullptr : send);
  }
}

// --- scan and exscan -----------------------------------------------------------------------------

// exscan leaves rank 0's buffer as it was: garbage out of place, its contribution in place.
template <class T, class Op, class Gen>
void scan_cases(const Ctx& ctx, std::size_t n, int index, const std::string& name, Op op, Gen gen,
                bool exclusive) {
  const Collective c = exclusive ? Collective::exscan : Collective::scan;
  auto send = inputs<T>(ctx, n, salt_of(c, index), gen);
  // Large sizes: every prefix at once instead of one fold per rank.
  PerRank<T> prefix;
  if (is_large(n)) prefix = ref::prefixes(*send, op);
  Batch<T> batch(ctx, n);
  for (bool in_place : {false, true}) {
    auto e = expectation<T>(
        ctx,
        [&](int r) {
          return in_place ? (*send)[static_cast<std::size_t>(r)] : garbage_buf<T>(n, r);
        },
        [&](int r, Buf<T>& out) {
          if (!prefix.empty()) {
            if (!exclusive) out = prefix[static_cast<std::size_t>(r)];
            if (exclusive && r > 0) out = prefix[static_cast<std::size_t>(r) - 1];
          } else if (exclusive) {
            ref::exscan(*send, op, r, out);
          } else {
            ref::scan(*send, op, r, out);
          }
        });
    batch.add(
        ctx.describe(n, -1, in_place, name), std::move(e),
        [in_place, op, exclusive](tlc::Thread& me, Buf<T>& mine, const Buf<T>& my_send) {
          if (exclusive) {
            if (in_place) {
              me.exscan(mine.span(), op);
            } else {
              me.exscan(my_send.cspan(), mine.span(), op);
            }
          } else if (in_place) {
            me.scan(mine.span(), op);
          } else {
            me.scan(my_send.cspan(), mine.span(), op);
          }
        },
        in_place ? nullptr : send);
  }
}

// --- the sweeps ----------------------------------------------------------------------------------

template <class Cases>
void reduction_sweep(Collective c, Algorithms which, Cases cases) {
  sweep(c, which, [&](const Ctx& ctx, std::size_t n) {
    for_ops(c, n, [&](int index, const char* name, auto op, auto gen) {
      using T = decltype(gen(std::uint64_t{}));
      cases(Tag<T>{}, ctx, n, index, std::string(name), op, gen);
    });
  });
}

void reduce_sweep(Algorithms which) {
  reduction_sweep(Collective::reduce, which, [](auto tag, auto&&... args) {
    reduce_cases<typename decltype(tag)::type>(args...);
  });
}
void allreduce_sweep(Algorithms which) {
  reduction_sweep(Collective::allreduce, which, [](auto tag, auto&&... args) {
    allreduce_cases<typename decltype(tag)::type>(args...);
  });
}
void reduce_scatter_block_sweep(Algorithms which) {
  reduction_sweep(Collective::reduce_scatter_block, which, [](auto tag, auto&&... args) {
    reduce_scatter_block_cases<typename decltype(tag)::type>(args...);
  });
}
void scan_sweep(Algorithms which) {
  reduction_sweep(Collective::scan, which, [](auto tag, auto&&... args) {
    scan_cases<typename decltype(tag)::type>(args..., false);
  });
}
void exscan_sweep(Algorithms which) {
  reduction_sweep(Collective::exscan, which, [](auto tag, auto&&... args) {
    scan_cases<typename decltype(tag)::type>(args..., true);
  });
}

// Core: every single-process algorithm on one process (two_level over synthetic NUMA domains),
// hierarchical and the selector across processes. Lanes: the full-lane and multi-sender
// algorithms across processes.
#define TLC_REDUCTION_TESTS(name)                                  \
  TEST_F(CollectiveTest, name) { name##_sweep(Algorithms::core); } \
  TEST_F(CollectiveTest, name##_lanes) { name##_sweep(Algorithms::lane); }

TLC_REDUCTION_TESTS(reduce)
TLC_REDUCTION_TESTS(allreduce)
TLC_REDUCTION_TESTS(reduce_scatter_block)
TLC_REDUCTION_TESTS(scan)
TLC_REDUCTION_TESTS(exscan)

// Results are bitwise identical from call to call for a fixed team shape and algorithm
// (docs/design.md section 5), also for floating-point sums whose value depends on the order of the
// additions.
TEST_F(CollectiveTest, reductions_are_reproducible) {
  for (Collective c : {Collective::allreduce, Collective::reduce, Collective::scan,
                       Collective::reduce_scatter_block}) {
    for (const TeamShape& shape : team_shapes(Algorithms::core)) {
      if (shape.threads < 2 && world_size() == 1) continue;
      std::vector<Configured> teams = make_teams(c, setups(c, Algorithms::core), shape.threads);
      for (Configured& conf : teams) {
        const int N = conf.team->size();
        std::vector<std::string> problems(static_cast<std::size_t>(shape.threads));
        conf.team->run([&](tlc::Thread& me) {
          std::string& problem = problems[static_cast<std::size_t>(me.local_index())];
          const std::size_t n = 4099;
          const std::size_t in =
              c == Collective::reduce_scatter_block ? static_cast<std::size_t>(N) * n : n;
          std::vector<double> send(in), first(n), again(n);
          for (std::size_t i = 0; i < in; ++i)
            send[i] =
                1.0 /
                (3.0 + static_cast<double>((static_cast<std::size_t>(me.rank()) * 31 + i) % 97));
          auto call = [&](std::vector<double>& out) {
            switch (c) {
              case Collective::reduce:
                me.reduce(send, out, N - 1);
                break;
              case Collective::scan:
                me.scan(send, out);
                break;
              case Collective::reduce_scatter_block:
                me.reduce_scatter_block(send, out);
                break;
              default:
                me.allreduce(send, out);
            }
          };
          try {
            call(first);
            for (int k = 0; k < 4 && problem.empty(); ++k) {
              call(again);
              if (std::memcmp(first.data(), again.data(), n * sizeof(double)) != 0)
                problem = "call " + std::to_string(k + 2) + " differs from the first";
            }
          } catch (const std::exception& e) {
            problem = std::string("threw: ") + e.what();
          }
        });
        for (std::size_t t = 0; t < problems.size(); ++t)
          EXPECT_TRUE(problems[t].empty())
              << tlc::to_string(c) << " [" << conf.setup.label() << "] " << shape.label
              << ", thread " << t << ": " << problems[t];
      }
    }
  }
}

}  // namespace
}  // namespace tlc_test
