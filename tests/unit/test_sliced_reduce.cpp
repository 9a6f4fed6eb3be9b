// Publish-and-slice phases without MPI: many threads of one process, each reducing its slice of
// all inputs into all outputs, against a sequential reference.
#include <gtest/gtest.h>

#include <algorithm>
#include <complex>
#include <cstdint>
#include <cstring>
#include <thread>
#include <vector>

#include <tlc/ops.hpp>
#include <tlc/types.hpp>

#include "intra/sliced_reduce.hpp"

namespace {

using tlc::detail::Slice;
using tlc::detail::slice_of;

TEST(SliceOf, CoversRangeOnceWithCacheLineBoundaries) {
  for (std::size_t element : {1u, 4u, 8u, 24u, 100u}) {
    for (std::size_t count : {0u, 1u, 7u, 63u, 64u, 65u, 4099u, 100000u}) {
      for (int parts = 1; parts <= 7; ++parts) {
        std::size_t expected_begin = 0;
        for (int p = 0; p < parts; ++p) {
          const Slice s = slice_of(count, element, p, parts);
          EXPECT_EQ(s.begin, expected_begin) << count << " x " << element << " part " << p;
          EXPECT_LE(s.begin, s.end);
          // Interior boundaries fall on whole cache lines when elements tile a line, and on
          // whole groups of elements otherwise.
          if (s.end != count) {
            if (64 % element == 0) {
              EXPECT_EQ(s.end * element % 64, 0u);
            } else {
              EXPECT_EQ(s.end % std::max<std::size_t>(1, 64 / element), 0u);
            }
          }
          expected_begin = s.end;
        }
        EXPECT_EQ(expected_begin, count) << count << " elements of " << element << " bytes";
      }
    }
  }
}

TEST(SliceOf, BalancesWork) {
  // 1000 cache lines over 3 threads: no slice more than one line larger than another.
  std::size_t smallest = SIZE_MAX, largest = 0;
  for (int p = 0; p < 3; ++p) {
    const Slice s = slice_of(8000, 8, p, 3);
    smallest = std::min(smallest, s.size());
    largest = std::max(largest, s.size());
  }
  EXPECT_LE(largest - smallest, 8u);
}

template <class T, class Op>
void threaded_reduce_matches_reference(int threads, std::size_t count, bool in_place) {
  const auto type = tlc::detail::type_info_of<T>();
  const Op op{};
  tlc::detail::CombineFn combine =
      tlc::detail::builtin_combine(tlc::detail::builtin_op<Op>::value, type);
  if (!combine) combine = &tlc::detail::combine<T, Op>;
  std::vector<std::vector<T>> in(static_cast<std::size_t>(threads), std::vector<T>(count));
  std::vector<std::vector<T>> out(static_cast<std::size_t>(threads), std::vector<T>(count, T{}));
  for (int t = 0; t < threads; ++t)
    for (std::size_t i = 0; i < count; ++i)
      in[static_cast<std::size_t>(t)][i] = static_cast<T>((t * 7 + i * 3) % 13 + 1);
  std::vector<T> reference(count);
  for (std::size_t i = 0; i < count; ++i) {
    T acc = in[0][i];
    for (int t = 1; t < threads; ++t)
      acc = static_cast<T>(op(acc, in[static_cast<std::size_t>(t)][i]));
    reference[i] = acc;
  }
  std::vector<const void*> inputs;
  std::vector<void*> outputs;
  for (int t = 0; t < threads; ++t) {
    auto& target = in_place ? in[static_cast<std::size_t>(t)] : out[static_cast<std::size_t>(t)];
    inputs.push_back(in[static_cast<std::size_t>(t)].data());
    outputs.push_back(target.data());
  }
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t)
    pool.emplace_back([&, t] {
      tlc::detail::reduce_slice_to_all(inputs, outputs, sizeof(T),
                                       slice_of(count, sizeof(T), t, threads), combine, &op);
    });
  for (auto& th : pool) th.join();
  for (int t = 0; t < threads; ++t) {
    const auto& result =
        in_place ? in[static_cast<std::size_t>(t)] : out[static_cast<std::size_t>(t)];
    for (std::size_t i = 0; i < count; ++i)
      ASSERT_EQ(result[i], reference[i]) << "thread " << t << " element " << i;
  }
}

TEST(ReduceSliceToAll, ManyThreadsMatchSequentialReference) {
  for (int threads : {1, 2, 3, 5, 8}) {
    for (std::size_t count : {0u, 1u, 7u, 4099u, 70001u}) {
      for (bool in_place : {false, true}) {
        threaded_reduce_matches_reference<double, std::plus<>>(threads, count, in_place);
        threaded_reduce_matches_reference<std::int32_t, std::multiplies<>>(threads, count,
                                                                           in_place);
        threaded_reduce_matches_reference<float, tlc::max>(threads, count, in_place);
        threaded_reduce_matches_reference<std::uint16_t, std::bit_xor<>>(threads, count, in_place);
      }
    }
  }
}

TEST(BuiltinCombine, SameResultAsHeaderTemplate) {
  // The library's kernels must agree with the template the header would otherwise use.
  std::vector<std::int8_t> a(1000), b(1000);
  for (int i = 0; i < 1000; ++i) {
    a[static_cast<std::size_t>(i)] = static_cast<std::int8_t>(i * 7);
    b[static_cast<std::size_t>(i)] = static_cast<std::int8_t>(i * 13 + 5);
  }
  auto x = a, y = a;
  const std::plus<> op;
  tlc::detail::combine<std::int8_t, std::plus<>>(&op, x.data(), b.data(), x.size(), false);
  auto kernel = tlc::detail::builtin_combine(tlc::detail::BuiltinOp::sum,
                                             tlc::detail::type_info_of<std::int8_t>());
  ASSERT_NE(kernel, nullptr);
  kernel(&op, y.data(), b.data(), y.size(), false);
  EXPECT_EQ(x, y);
  EXPECT_EQ(
      tlc::detail::builtin_combine(tlc::detail::BuiltinOp::none, tlc::detail::type_info_of<int>()),
      nullptr);
  EXPECT_EQ(tlc::detail::builtin_combine(tlc::detail::BuiltinOp::band,
                                         tlc::detail::type_info_of<double>()),
            nullptr);
}

// The inline form folds begin lines with builtin_line_fold; every other form combines with
// builtin_combine's kernel, input after input. Both must give the same bits, also where rounding
// makes the order visible (inputs here are not exact in floating point).
template <class T, class Op>
void line_fold_matches_combine() {
  const auto type = tlc::detail::type_info_of<T>();
  const auto op = tlc::detail::builtin_op<Op>::value;
  const tlc::detail::CombineFn combine = tlc::detail::builtin_combine(op, type);
  const tlc::detail::LineFoldFn fold = tlc::detail::builtin_line_fold(op, type);
  ASSERT_NE(combine, nullptr);
  ASSERT_NE(fold, nullptr);
  constexpr std::size_t stride = 72;  // lines apart by a stride that is no multiple of T
  constexpr std::size_t most = 32 / sizeof(T);
  for (int lines = 1; lines <= 6; ++lines) {
    for (std::size_t n = 1; n <= most; ++n) {
      std::vector<std::byte> memory(stride * static_cast<std::size_t>(lines) + 64);
      std::vector<T> acc(n), in(n);
      for (int t = 0; t < lines; ++t) {
        for (std::size_t i = 0; i < n; ++i)
          in[i] = static_cast<T>(0.1 * static_cast<double>(t * 7 + static_cast<int>(i)) + 1.3);
        std::memcpy(memory.data() + 8 + static_cast<std::size_t>(t) * stride, in.data(),
                    n * sizeof(T));
        if (t == 0) {
          acc = in;
        } else {
          combine(nullptr, acc.data(), in.data(), n, false);
        }
      }
      std::vector<T> out(n, T{});
      fold(memory.data() + 8, stride, lines, n, out.data());
      ASSERT_EQ(std::memcmp(out.data(), acc.data(), n * sizeof(T)), 0)
          << lines << " lines of " << n << " elements";
    }
  }
}

TEST(BuiltinLineFold, BitwiseSameAsCombiningLineAfterLine) {
  line_fold_matches_combine<double, std::plus<>>();
  line_fold_matches_combine<float, std::plus<>>();
  line_fold_matches_combine<double, std::multiplies<>>();
  line_fold_matches_combine<float, tlc::min>();
  line_fold_matches_combine<std::int8_t, std::plus<>>();
  line_fold_matches_combine<std::uint64_t, std::bit_xor<>>();
  line_fold_matches_combine<std::complex<double>, std::plus<>>();
  line_fold_matches_combine<std::complex<float>, std::multiplies<>>();
  EXPECT_EQ(tlc::detail::builtin_line_fold(tlc::detail::BuiltinOp::band,
                                           tlc::detail::type_info_of<double>()),
            nullptr);
}

TEST(CopySliceToAll, WritesEveryOutputButTheSource) {
  std::vector<int> source(300), a(300, -1), b(300, -1);
  for (int i = 0; i < 300; ++i) source[static_cast<std::size_t>(i)] = i;
  std::vector<void*> outputs = {a.data(), source.data(), b.data()};
  tlc::detail::copy_slice_to_all(source.data(), outputs, sizeof(int), Slice{16, 200});
  for (int i = 0; i < 300; ++i) {
    const int expected = (i >= 16 && i < 200) ? i : -1;
    EXPECT_EQ(a[static_cast<std::size_t>(i)], expected);
    EXPECT_EQ(b[static_cast<std::size_t>(i)], expected);
    EXPECT_EQ(source[static_cast<std::size_t>(i)], i);
  }
}

}  // namespace
