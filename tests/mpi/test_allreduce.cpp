// allreduce checked element by element against a sequential reference, for every team shape,
// type, op (built-in, user, non-commutative), size and in-place / out-of-place.
#include <algorithm>
#include <complex>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "mpi/test_common.hpp"

namespace {

using namespace tlc_test;

// A non-commutative, associative user type: affine maps v -> a*v + b composed in rank order,
// in wrapping 32-bit arithmetic. compose(x, y) applies x first, then y.
struct Affine {
  std::uint32_t a, b;
  friend bool operator==(const Affine&, const Affine&) = default;
};
struct Compose {
  Affine operator()(const Affine& x, const Affine& y) const { return {x.a * y.a, x.b * y.a + y.b}; }
};

template <class T>
std::string show(const T& v) {
  std::ostringstream s;
  if constexpr (std::is_same_v<T, Affine>) {
    s << "{" << v.a << "," << v.b << "}";
  } else if constexpr (sizeof(T) == 1 && std::is_integral_v<T>) {
    s << static_cast<int>(v);
  } else {
    s << v;
  }
  return s.str();
}

class AllreduceTest : public testing::TestWithParam<Shape> {
 protected:
  void SetUp() override {
    shape_ = GetParam();
    team_ =
        std::make_unique<tlc::Team>(MPI_COMM_WORLD, test_options(shape_.threads_of(world_rank())));
  }

  // Every thread contributes value(rank, i); all must receive the rank-ordered fold.
  template <class T, class Op, class Value>
  void check(const char* what, std::size_t count, Op op, Value value) {
    const int size = team_->size();
    std::unique_ptr<T[]> reference(new T[count]);
    for (std::size_t i = 0; i < count; ++i) {
      T acc = value(0, i);
      for (int r = 1; r < size; ++r) acc = static_cast<T>(op(acc, value(r, i)));
      reference[i] = acc;
    }
    for (bool in_place : {false, true}) {
      std::vector<Outcome> outcomes(static_cast<std::size_t>(team_->threads()));
      team_->run([&](tlc::Thread& me) {
        Outcome& out = outcomes[static_cast<std::size_t>(me.local_index())];
        // unique_ptr, not vector: std::vector<bool> has no contiguous storage.
        std::unique_ptr<T[]> send(new T[count]), recv(new T[count]);
        for (std::size_t i = 0; i < count; ++i) send[i] = value(me.rank(), i);
        std::memset(static_cast<void*>(recv.get()), 0x5a, count * sizeof(T));
        if (in_place) {
          me.allreduce(std::span<T>(send.get(), count), op);
          recv.swap(send);
        } else {
          me.allreduce(std::span<const T>(send.get(), count), std::span<T>(recv.get(), count), op);
        }
        for (std::size_t i = 0; i < count; ++i) {
          if (recv[i] == reference[i]) continue;
          if (out.mismatches++ == 0)
            out.first_mismatch = "element " + std::to_string(i) + ": got " + show(recv[i]) +
                                 ", expected " + show(reference[i]);
        }
      });
      expect_clean(outcomes, std::string(what) + " count " + std::to_string(count) +
                                 (in_place ? " in-place" : " out-of-place"));
    }
  }

  Shape shape_{};
  std::unique_ptr<tlc::Team> team_;
};

const std::size_t small_sizes[] = {0, 1, 7, 4099};
constexpr std::size_t largest = (std::size_t{1} << 20) + 3;

// The large size: 1 MiB + 3 elements, or in the sanitized trees (which set TLC_TEST_SIZES for
// the sweeps, cmake/TlcCompilerFlags.cmake) the largest size there: instrumented runs are several
// times slower, and these tests took most of their MPI suite's time at 1 MiB + 3.
std::size_t large_size() {
  static const std::size_t size = [] {
    std::size_t n = largest;
    if (const char* only = std::getenv("TLC_TEST_SIZES"); only && *only) {
      n = 0;
      std::istringstream in(only);
      std::string item;
      while (std::getline(in, item, ',')) n = std::max<std::size_t>(n, std::stoul(item));
      n = std::min(n, largest);
    }
    return n;
  }();
  return size;
}

template <class T>
T small_int(int r, std::size_t i) {
  return static_cast<T>(static_cast<int>((r * 7 + i * 13) % 11) - 5);
}
template <class T>
T small_factor(int r, std::size_t i) {
  const std::size_t k = (static_cast<std::size_t>(r) + i) % 5;
  return static_cast<T>(k == 0 ? 2 : (k == 3 ? -1 : 1));
}

TEST_P(AllreduceTest, SumOfArithmeticTypes) {
  for (std::size_t n : small_sizes) {
    check<int>("int sum", n, std::plus<>{}, small_int<int>);
    check<double>("double sum", n, std::plus<>{}, small_int<double>);
    check<float>("float sum", n, std::plus<>{}, small_int<float>);
    check<std::int8_t>("int8 sum", n, std::plus<>{}, small_int<std::int8_t>);
    check<std::uint16_t>("uint16 sum", n, std::plus<>{}, small_int<std::uint16_t>);
    check<long double>("long double sum", n, std::plus<>{}, small_int<long double>);
    check<std::complex<double>>("complex sum", n, std::plus<>{}, [](int r, std::size_t i) {
      return std::complex<double>(r, static_cast<double>(i % 7));
    });
  }
}

TEST_P(AllreduceTest, ProductMinMax) {
  for (std::size_t n : small_sizes) {
    check<std::int64_t>("int64 prod", n, std::multiplies<>{}, small_factor<std::int64_t>);
    check<double>("double prod", n, std::multiplies<>{}, small_factor<double>);
    check<int>("int min", n, tlc::min{},
               [](int r, std::size_t i) { return static_cast<int>((r * 31 + i * 17) % 97) - 48; });
    check<double>("double max", n, tlc::max{}, [](int r, std::size_t i) {
      return static_cast<double>((r * 31 + i * 17) % 97) - 48.5;
    });
    check<unsigned>("unsigned max", n, tlc::max{},
                    [](int r, std::size_t i) { return static_cast<unsigned>(r * 5 + i); });
  }
}

TEST_P(AllreduceTest, BitwiseAndLogical) {
  auto bits = [](int r, std::size_t i) { return static_cast<std::uint8_t>(r * 37 + i * 11 + 1); };
  auto truth = [](int r, std::size_t i) { return (static_cast<std::size_t>(r) + i) % 3 != 0; };
  auto tri = [](int r, std::size_t i) {
    return static_cast<int>((static_cast<std::size_t>(r) * 3 + i) % 3);
  };
  for (std::size_t n : small_sizes) {
    check<std::uint8_t>("uint8 bit_and", n, std::bit_and<>{}, bits);
    check<std::uint8_t>("uint8 bit_or", n, std::bit_or<>{}, bits);
    check<std::uint32_t>("uint32 bit_xor", n, std::bit_xor<>{}, [](int r, std::size_t i) {
      return static_cast<std::uint32_t>(r * 2654435761u + i);
    });
    check<bool>("bool logical_and", n, std::logical_and<>{}, truth);
    check<bool>("bool logical_or", n, std::logical_or<>{}, truth);
    check<int>("int logical_and", n, std::logical_and<>{}, tri);
    check<double>("double logical_or", n, std::logical_or<>{},
                  [](int r, std::size_t i) { return static_cast<double>((r + i) % 2); });
    check<bool>("bool plus (user path)", n, std::plus<>{}, truth);
  }
}

TEST_P(AllreduceTest, UserOps) {
  auto affine = [](int r, std::size_t i) {
    return Affine{2u * static_cast<std::uint32_t>((static_cast<std::size_t>(r) + i) % 4) + 1u,
                  static_cast<std::uint32_t>(r * 3 + i)};
  };
  for (std::size_t n : small_sizes) {
    check<Affine>("non-commutative struct op", n, Compose{}, affine);
    check<int>("commutative lambda", n,
               tlc::commutative([](const int& a, const int& b) { return a + 2 * b - b; }),
               small_int<int>);
    // "First non-zero in rank order": associative, not commutative.
    check<long>(
        "non-commutative lambda", n, [](const long& a, const long& b) { return a != 0 ? a : b; },
        [](int r, std::size_t i) {
          return (static_cast<std::size_t>(r) + i) % 3 == 0 ? 0L : static_cast<long>(r + 1);
        });
  }
}

TEST_P(AllreduceTest, LargeBuffers) {
  const std::size_t large = large_size();
  check<double>("double sum large", large, std::plus<>{}, small_int<double>);
  auto affine = [](int r, std::size_t i) {
    return Affine{2u * static_cast<std::uint32_t>((static_cast<std::size_t>(r) + i) % 4) + 1u,
                  static_cast<std::uint32_t>(r + i)};
  };
  check<Affine>("non-commutative struct op large", large, Compose{}, affine);
}

// Large buffers take the pipelined path between processes; full_lane cuts every chunk over the
// lanes (a chunk is one pipeline unit per lane), so 3 lanes give chunks that do not divide the
// buffer, and 4 lanes more lanes than some processes have threads. Below 1 MiB + 3 (the
// sanitized trees) the pipelined form is forced, with chunks small enough to be several.
TEST_P(AllreduceTest, LargeBuffersFullLanePipelined) {
  if (world_size() == 1) GTEST_SKIP() << "full_lane needs several processes";
  const std::size_t large = large_size();
  for (int lanes : {3, 4}) {
    tlc::TeamOptions o = test_options(shape_.threads_of(world_rank()));
    o.lanes = lanes;
    o.algorithms[tlc::Collective::allreduce] = "full_lane";
    if (large < largest) {
      o.algorithms[tlc::Collective::allreduce] = "full_lane:pipelined";
      o.pipeline_chunk_bytes = 12 * 1024 + 8;  // divides neither buffer nor lane count
    }
    team_ = std::make_unique<tlc::Team>(MPI_COMM_WORLD, o);
    check<double>("double sum large, full_lane", large, std::plus<>{}, small_int<double>);
    auto affine = [](int r, std::size_t i) {
      return Affine{2u * static_cast<std::uint32_t>((static_cast<std::size_t>(r) + i) % 4) + 1u,
                    static_cast<std::uint32_t>(r + i)};
    };
    check<Affine>("non-commutative struct op large, full_lane", large, Compose{}, affine);
  }
}

INSTANTIATE_TEST_SUITE_P(Shapes, AllreduceTest, testing::ValuesIn(shapes()),
                         [](const testing::TestParamInfo<Shape>& param_info) {
                           return std::string(param_info.param.name);
                         });

}  // namespace
