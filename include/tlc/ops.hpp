/// @file
/// Reduction operators. Built-in ops (std::plus<>, std::multiplies<>, tlc::min, tlc::max, the
/// bitwise and logical function objects) are commutative and map to MPI's own MPI_Op for the
/// network phase when MPI defines them for the element type. Any other callable T(const T&, const
/// T&) is a user op: applied as op(a, b) with a combining lower ranks than b, rank order kept,
/// unless wrapped as tlc::commutative(f).
#pragma once

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <type_traits>
#include <utility>

#include <tlc/detail/export.hpp>

// Whether the compiler can clear an object's padding bits (GCC 11, Clang 16): op digests below.
#if defined(__has_builtin)
#if __has_builtin(__builtin_clear_padding)
#define TLC_DETAIL_CLEAR_PADDING 1
#endif
#endif

namespace tlc {

/// The minimum, as an op: me.allreduce(x, tlc::min{}).
struct min {
  /// The smaller of a and b (a when equal).
  template <class T>
  constexpr T operator()(const T& a, const T& b) const {
    return b < a ? b : a;
  }
};

/// The maximum, as an op: me.allreduce(x, tlc::max{}).
struct max {
  /// The larger of a and b (a when equal).
  template <class T>
  constexpr T operator()(const T& a, const T& b) const {
    return a < b ? b : a;
  }
};

/// Declares a user op commutative, which lets tlc and MPI combine in any order.
template <class F>
struct commutative_op {
  F f;  ///< the user's op
  /// f(a, b).
  template <class T>
  constexpr T operator()(const T& a, const T& b) const {
    return f(a, b);
  }
  /// Equal when the wrapped ops are, so that ops of different state are found out through the
  /// wrapper too (detail::op_equal_of).
  friend constexpr bool operator==(const commutative_op& a, const commutative_op& b) requires
      requires(const F& x) {
    { x == x } -> std::convertible_to<bool>;
  }
  { return static_cast<bool>(a.f == b.f); }
};

/// Wraps a user op as commutative (tlc::commutative_op): tlc and MPI may then combine the
/// ranks in any order. me.allreduce(x, tlc::commutative(my_op)).
template <class F>
constexpr commutative_op<std::decay_t<F>> commutative(F&& f) {
  return {std::forward<F>(f)};
}

namespace detail {

enum class BuiltinOp : unsigned char { none, sum, prod, min, max, band, bor, bxor, land, lor };

TLC_API const char* to_string(BuiltinOp op) noexcept;

template <class Op>
struct builtin_op : std::integral_constant<BuiltinOp, BuiltinOp::none> {};
template <class T>
struct builtin_op<std::plus<T>> : std::integral_constant<BuiltinOp, BuiltinOp::sum> {};
template <class T>
struct builtin_op<std::multiplies<T>> : std::integral_constant<BuiltinOp, BuiltinOp::prod> {};
template <>
struct builtin_op<tlc::min> : std::integral_constant<BuiltinOp, BuiltinOp::min> {};
template <>
struct builtin_op<tlc::max> : std::integral_constant<BuiltinOp, BuiltinOp::max> {};
template <class T>
struct builtin_op<std::bit_and<T>> : std::integral_constant<BuiltinOp, BuiltinOp::band> {};
template <class T>
struct builtin_op<std::bit_or<T>> : std::integral_constant<BuiltinOp, BuiltinOp::bor> {};
template <class T>
struct builtin_op<std::bit_xor<T>> : std::integral_constant<BuiltinOp, BuiltinOp::bxor> {};
template <class T>
struct builtin_op<std::logical_and<T>> : std::integral_constant<BuiltinOp, BuiltinOp::land> {};
template <class T>
struct builtin_op<std::logical_or<T>> : std::integral_constant<BuiltinOp, BuiltinOp::lor> {};

template <class Op>
struct is_commutative : std::bool_constant<builtin_op<Op>::value != BuiltinOp::none> {};
template <class F>
struct is_commutative<commutative_op<F>> : std::true_type {};

/// Combines n elements. accumulate_right: inout[i] = op(inout[i], in[i]) (inout holds lower
/// ranks); accumulate_left: inout[i] = op(in[i], inout[i]) (in holds lower ranks, MPI's order).
/// Two pointers that never alias let the compiler vectorise built-in ops.
using CombineFn = void (*)(const void* op, void* inout, const void* in, std::size_t n,
                           bool in_is_lower);

/// Whether two op objects of the same type are equal; where the type has no operator== (a
/// lambda, say), nothing can tell ops of different state apart.
using OpEqualFn = bool (*)(const void* a, const void* b);

template <class Op>
bool ops_equal(const void* a, const void* b) {
  return static_cast<bool>(*static_cast<const Op*>(a) == *static_cast<const Op*>(b));
}

/// Built-in ops have no state; user ops are compared where their type allows it.
template <class Op>
constexpr OpEqualFn op_equal_of() noexcept {
  if constexpr (builtin_op<Op>::value == BuiltinOp::none && requires(const Op& a, const Op& b) {
                  { a == b } -> std::convertible_to<bool>;
                }) {
    return &ops_equal<Op>;
  } else {
    return nullptr;
  }
}

/// A digest of an op object's bytes (its padding cleared), which TLC_CHECK compares across
/// processes, where operator== cannot reach the other process's object.
using OpDigestFn = std::uint64_t (*)(const void* op);

template <class Op>
std::uint64_t op_digest(const void* op) {
  alignas(Op) unsigned char bytes[sizeof(Op)];
  std::memcpy(bytes, op, sizeof(Op));
#ifdef TLC_DETAIL_CLEAR_PADDING
  __builtin_clear_padding(reinterpret_cast<Op*>(bytes));
#endif
  std::uint64_t h = 0xcbf29ce484222325ull;  // FNV-1a
  for (unsigned char b : bytes) h = (h ^ b) * 0x100000001b3ull;
  return h;
}

/// Only op types that say their state matters (operator==) and whose bytes are that state
/// (trivially copyable) are digested: a lambda captures by reference as an address, which
/// differs between processes running the same program, so its bytes would differ spuriously.
/// Without __builtin_clear_padding, types with padding bytes are left out as well.
template <class Op>
constexpr OpDigestFn op_digest_of() noexcept {
#ifdef TLC_DETAIL_CLEAR_PADDING
  constexpr bool clears_padding = true;
#else
  constexpr bool clears_padding = std::has_unique_object_representations_v<Op>;
#endif
  if constexpr (op_equal_of<Op>() != nullptr && !std::is_empty_v<Op> &&
                std::is_trivially_copyable_v<Op> && clears_padding) {
    return &op_digest<Op>;
  } else {
    return nullptr;
  }
}

template <class T, class Op>
void combine(const void* op_object, void* inout_bytes, const void* in_bytes, std::size_t n,
             bool in_is_lower) {
  const Op& op = *static_cast<const Op*>(op_object);
  // An op that combines whole ranges itself (the C interface's user ops, which call a C
  // function once per range rather than once per element).
  if constexpr (requires { op.combine_range(inout_bytes, in_bytes, n, in_is_lower); }) {
    op.combine_range(inout_bytes, in_bytes, n, in_is_lower);
  } else {
    T* inout = static_cast<T*>(inout_bytes);
    const T* in = static_cast<const T*>(in_bytes);
    if (in_is_lower) {
      for (std::size_t i = 0; i < n; ++i) inout[i] = static_cast<T>(op(in[i], inout[i]));
    } else {
      for (std::size_t i = 0; i < n; ++i) inout[i] = static_cast<T>(op(inout[i], in[i]));
    }
  }
}

}  // namespace detail
}  // namespace tlc
