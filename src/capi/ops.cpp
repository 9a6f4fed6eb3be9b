// The element types of tlc_datatype and the combine function of every built-in op on every type
// it applies to: the only place the C interface instantiates anything per type and op, once for
// all its collectives and forms (capi/dispatch.hpp).
#include <complex>
#include <cstdint>
#include <functional>
#include <type_traits>

#include "capi/dispatch.hpp"

namespace tlc::capi {
namespace {

// Calls f(std::type_identity<T>{}) with the C++ type of type; false for an unknown type.
template <class F>
bool visit_type(int type, F&& f) {
  switch (type) {
    case TLC_INT8:
      return f(std::type_identity<std::int8_t>{}), true;
    case TLC_INT16:
      return f(std::type_identity<std::int16_t>{}), true;
    case TLC_INT32:
      return f(std::type_identity<std::int32_t>{}), true;
    case TLC_INT64:
      return f(std::type_identity<std::int64_t>{}), true;
    case TLC_UINT8:
      return f(std::type_identity<std::uint8_t>{}), true;
    case TLC_UINT16:
      return f(std::type_identity<std::uint16_t>{}), true;
    case TLC_UINT32:
      return f(std::type_identity<std::uint32_t>{}), true;
    case TLC_UINT64:
      return f(std::type_identity<std::uint64_t>{}), true;
    case TLC_FLOAT:
      return f(std::type_identity<float>{}), true;
    case TLC_DOUBLE:
      return f(std::type_identity<double>{}), true;
    case TLC_FLOAT_COMPLEX:
      return f(std::type_identity<std::complex<float>>{}), true;
    case TLC_DOUBLE_COMPLEX:
      return f(std::type_identity<std::complex<double>>{}), true;
    case TLC_BOOL:
      return f(std::type_identity<bool>{}), true;
    case TLC_BYTE:
      return f(std::type_identity<std::byte>{}), true;
  }
  return false;
}

// A built-in op on T, as detail::set_op<T> would record it; the op object is a static one (the
// ops have no state).
template <class T, class Op>
ResolvedOp builtin() {
  static const Op instance{};
  ResolvedOp r;
  r.op = detail::builtin_op<Op>::value;
  r.combine = &detail::combine<T, Op>;
  r.builtin_object = &instance;
  r.equal = detail::op_equal_of<Op>();
  r.digest = detail::op_digest_of<Op>();
  r.commutative = detail::is_commutative<Op>::value;
  return r;
}

// A user op: whole ranges go to the C function in one call. The op object is a copy of the
// registry's entry (ResolvedOp::user).
void combine_user(const void* op_object, void* inout, const void* in, std::size_t n,
                  bool in_is_lower) {
  const UserOp& op = *static_cast<const UserOp*>(op_object);
  if (in_is_lower)
    op.function(in, inout, inout, n, op.user_data);
  else
    op.function(inout, in, inout, n, op.user_data);
}

template <class T>
std::optional<ResolvedOp> resolve(tlc_op op, int type, std::string& problem) {
  constexpr bool integer = std::is_integral_v<T> && !std::is_same_v<T, bool>;
  constexpr bool arithmetic =
      integer || std::is_floating_point_v<T> || detail::is_complex<T>::value;
  constexpr bool ordered = integer || std::is_floating_point_v<T>;
  constexpr bool logical = integer || std::is_same_v<T, bool>;
  switch (op) {
    case TLC_SUM:
      if constexpr (arithmetic) return builtin<T, std::plus<>>();
      break;
    case TLC_PROD:
      if constexpr (arithmetic) return builtin<T, std::multiplies<>>();
      break;
    case TLC_MIN:
      if constexpr (ordered) return builtin<T, tlc::min>();
      break;
    case TLC_MAX:
      if constexpr (ordered) return builtin<T, tlc::max>();
      break;
    case TLC_BAND:
      if constexpr (integer) return builtin<T, std::bit_and<>>();
      break;
    case TLC_BOR:
      if constexpr (integer) return builtin<T, std::bit_or<>>();
      break;
    case TLC_BXOR:
      if constexpr (integer) return builtin<T, std::bit_xor<>>();
      break;
    case TLC_LAND:
      if constexpr (logical) return builtin<T, std::logical_and<>>();
      break;
    case TLC_LOR:
      if constexpr (logical) return builtin<T, std::logical_or<>>();
      break;
    default:
      if (const UserOp* user = find_user_op(op)) {
        ResolvedOp r;
        r.combine = &combine_user;
        r.user = *user;
        r.commutative = user->commutative;
        return r;
      }
      problem = "op " + std::to_string(op) +
                " is neither a built-in op (TLC_SUM .. TLC_LOR) nor a user op (tlc_op_create), or "
                "it was freed";
      return std::nullopt;
  }
  problem = std::string(op_name(op)) + " is not defined for " + type_name(type);
  return std::nullopt;
}

}  // namespace

std::optional<detail::TypeInfo> type_info(int type) noexcept {
  std::optional<detail::TypeInfo> info;
  visit_type(type, [&]<class T>(std::type_identity<T>) { info = detail::type_info_of<T>(); });
  return info;
}

std::optional<ResolvedOp> resolve_op(tlc_op op, int type, std::string& problem) {
  std::optional<ResolvedOp> resolved;
  if (!visit_type(
          type, [&]<class T>(std::type_identity<T>) { resolved = resolve<T>(op, type, problem); }))
    problem = std::to_string(type) + " is not a tlc_datatype";
  return resolved;
}

}  // namespace tlc::capi
