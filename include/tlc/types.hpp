/// @file
/// Element types: what tlc needs to know about T to move and reduce it, without templates past
/// the public surface. MPI datatypes are chosen from this description inside the library.
#pragma once

#include <complex>
#include <cstdint>
#include <type_traits>

#include <tlc/detail/export.hpp>

namespace tlc {

/// Any arithmetic type, std::complex, or a trivially copyable struct (reduced with a user op).
template <class T>
concept Element = std::is_trivially_copyable_v<T> && !std::is_pointer_v<T> && !std::is_const_v<T>;

namespace detail {

enum class TypeClass : std::uint8_t {
  signed_integer,
  unsigned_integer,
  floating,
  boolean,
  complex_floating,
  opaque,  ///< trivially copyable struct: bytes for MPI, a user op for reductions
};

struct TypeInfo {
  TypeClass type_class;
  std::uint32_t size;
  std::uint32_t alignment;
  friend bool operator==(const TypeInfo&, const TypeInfo&) = default;
};

template <class T>
struct is_complex : std::false_type {};
template <class F>
struct is_complex<std::complex<F>> : std::true_type {};

template <Element T>
constexpr TypeInfo type_info_of() {
  TypeClass c = TypeClass::opaque;
  if constexpr (std::is_same_v<T, bool>) {
    c = TypeClass::boolean;
  } else if constexpr (std::is_integral_v<T> && std::is_signed_v<T>) {
    c = TypeClass::signed_integer;
  } else if constexpr (std::is_integral_v<T>) {
    c = TypeClass::unsigned_integer;
  } else if constexpr (std::is_floating_point_v<T>) {
    c = TypeClass::floating;
  } else if constexpr (is_complex<T>::value) {
    c = TypeClass::complex_floating;
  }
  return {c, static_cast<std::uint32_t>(sizeof(T)), static_cast<std::uint32_t>(alignof(T))};
}

TLC_API const char* to_string(TypeClass c) noexcept;

}  // namespace detail
}  // namespace tlc
