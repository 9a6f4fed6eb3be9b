// The library's own combine kernels for built-in ops on built-in types (vectorised whatever
// flags the application uses), slices, and the publish-and-slice phases of intra/sliced_reduce.hpp.
#include "intra/sliced_reduce.hpp"

#include <algorithm>
#include <complex>
#include <cstdint>
#include <cstring>
#include <vector>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace tlc::detail {

namespace {

constexpr std::size_t cache_line = 64;
// Accumulator chunk: small enough to stay in L1 next to the streaming inputs, large enough that
// the per-chunk loop overhead over T inputs and T outputs is noise.
constexpr std::size_t chunk_bytes = 8192;

// The library's own kernels: same arithmetic as the header template (same op object applied to
// the same type), but compiled here with restrict pointers so the loop vectorises regardless
// of the flags the application uses.
template <class T, class Op>
struct Combine {
  static void fn(const void*, void* inout_bytes, const void* in_bytes, std::size_t n,
                 bool in_is_lower) {
    T* __restrict inout = static_cast<T*>(inout_bytes);
    const T* __restrict in = static_cast<const T*>(in_bytes);
    const Op op{};
    if (in_is_lower) {
      for (std::size_t i = 0; i < n; ++i) inout[i] = static_cast<T>(op(in[i], inout[i]));
    } else {
      for (std::size_t i = 0; i < n; ++i) inout[i] = static_cast<T>(op(inout[i], in[i]));
    }
  }
};

// Combine::fn applied to line 1, 2, ... in turn, in one call (see builtin_line_fold).
template <class T, class Op>
struct LineFold {
  static void fn(const std::byte* first, std::size_t stride, int lines, std::size_t n, void* out) {
    // Element by element through memcpy of one element: lines are only 8-byte aligned.
    const Op op{};
    for (std::size_t i = 0; i < n; ++i) {
      const std::byte* at = first + i * sizeof(T);
      T acc;
      std::memcpy(&acc, at, sizeof(T));
      for (int t = 1; t < lines; ++t) {
        T in;
        std::memcpy(&in, at + static_cast<std::size_t>(t) * stride, sizeof(T));
        acc = static_cast<T>(op(acc, in));
      }
      std::memcpy(static_cast<std::byte*>(out) + i * sizeof(T), &acc, sizeof(T));
    }
  }
};

// Kind<T, Op>::fn for the built-in op `op` on arithmetic type T; nullptr where MPI has no such op.
template <class T, template <class, class> class Kind>
auto arithmetic_kernel(BuiltinOp op) noexcept -> decltype(&Kind<T, std::plus<>>::fn) {
  switch (op) {
    case BuiltinOp::sum:
      return &Kind<T, std::plus<>>::fn;
    case BuiltinOp::prod:
      return &Kind<T, std::multiplies<>>::fn;
    case BuiltinOp::min:
      return &Kind<T, tlc::min>::fn;
    case BuiltinOp::max:
      return &Kind<T, tlc::max>::fn;
    case BuiltinOp::land:
      return &Kind<T, std::logical_and<>>::fn;
    case BuiltinOp::lor:
      return &Kind<T, std::logical_or<>>::fn;
    default:
      break;
  }
  if constexpr (std::is_integral_v<T>) {
    switch (op) {
      case BuiltinOp::band:
        return &Kind<T, std::bit_and<>>::fn;
      case BuiltinOp::bor:
        return &Kind<T, std::bit_or<>>::fn;
      case BuiltinOp::bxor:
        return &Kind<T, std::bit_xor<>>::fn;
      default:
        break;
    }
  }
  return nullptr;
}

template <class T, template <class, class> class Kind>
auto complex_kernel(BuiltinOp op) noexcept -> decltype(&Kind<T, std::plus<>>::fn) {
  if (op == BuiltinOp::sum) return &Kind<T, std::plus<>>::fn;
  if (op == BuiltinOp::prod) return &Kind<T, std::multiplies<>>::fn;
  return nullptr;
}

// The Kind kernel for a built-in op on a built-in type, or nullptr.
template <template <class, class> class Kind>
auto builtin_kernel(BuiltinOp op, TypeInfo type) noexcept -> decltype(&Kind<int, std::plus<>>::fn) {
  if (op == BuiltinOp::none) return nullptr;
  switch (type.type_class) {
    case TypeClass::signed_integer:
      switch (type.size) {
        case 1:
          return arithmetic_kernel<std::int8_t, Kind>(op);
        case 2:
          return arithmetic_kernel<std::int16_t, Kind>(op);
        case 4:
          return arithmetic_kernel<std::int32_t, Kind>(op);
        case 8:
          return arithmetic_kernel<std::int64_t, Kind>(op);
      }
      break;
    case TypeClass::unsigned_integer:
      switch (type.size) {
        case 1:
          return arithmetic_kernel<std::uint8_t, Kind>(op);
        case 2:
          return arithmetic_kernel<std::uint16_t, Kind>(op);
        case 4:
          return arithmetic_kernel<std::uint32_t, Kind>(op);
        case 8:
          return arithmetic_kernel<std::uint64_t, Kind>(op);
      }
      break;
    case TypeClass::floating:
      if (type.size == sizeof(float)) return arithmetic_kernel<float, Kind>(op);
      if (type.size == sizeof(double)) return arithmetic_kernel<double, Kind>(op);
      if (type.size == sizeof(long double)) return arithmetic_kernel<long double, Kind>(op);
      break;
    case TypeClass::complex_floating:
      if (type.size == sizeof(std::complex<float>))
        return complex_kernel<std::complex<float>, Kind>(op);
      if (type.size == sizeof(std::complex<double>))
        return complex_kernel<std::complex<double>, Kind>(op);
      if (type.size == sizeof(std::complex<long double>))
        return complex_kernel<std::complex<long double>, Kind>(op);
      break;
    case TypeClass::boolean:  // bool arithmetic goes through the caller's template
    case TypeClass::opaque:
      break;
  }
  return nullptr;
}

// Outputs this large will not be read again before they leave the caches: write them with
// non-temporal stores, which skip the read-for-ownership of every output line and so move a
// third fewer bytes. Smaller outputs stay in cache for the caller.
constexpr std::size_t streaming_threshold = std::size_t{1} << 20;  // bytes per slice

void stream_copy(std::byte* dst, const std::byte* src, std::size_t bytes) {
#if defined(__SSE2__)
  const std::size_t head = std::min(bytes, (16 - reinterpret_cast<std::uintptr_t>(dst) % 16) % 16);
  std::memcpy(dst, src, head);
  std::size_t at = head;
  for (; at + 64 <= bytes; at += 64) {
    auto* d = reinterpret_cast<__m128i*>(dst + at);
    const auto* s = reinterpret_cast<const __m128i*>(src + at);
    const __m128i a = _mm_loadu_si128(s), b = _mm_loadu_si128(s + 1);
    const __m128i c = _mm_loadu_si128(s + 2), e = _mm_loadu_si128(s + 3);
    _mm_stream_si128(d, a);
    _mm_stream_si128(d + 1, b);
    _mm_stream_si128(d + 2, c);
    _mm_stream_si128(d + 3, e);
  }
  std::memcpy(dst + at, src + at, bytes - at);
#else
  std::memcpy(dst, src, bytes);
#endif
}

void stream_fence() {
#if defined(__SSE2__)
  _mm_sfence();  // streaming stores are weakly ordered: publish them before the next flag
#endif
}

}  // namespace

Slice slice_of(std::size_t count, std::size_t element_size, int part, int parts) noexcept {
  const std::size_t granule =
      std::max<std::size_t>(1, cache_line / std::max<std::size_t>(1, element_size));
  const std::size_t granules = (count + granule - 1) / granule;
  const auto p = static_cast<std::size_t>(part), n = static_cast<std::size_t>(parts);
  const std::size_t base = granules / n, extra = granules % n;
  const std::size_t first = p * base + std::min(p, extra);
  const std::size_t last = first + base + (p < extra ? 1 : 0);
  return {std::min(count, first * granule), std::min(count, last * granule)};
}

CombineFn builtin_combine(BuiltinOp op, TypeInfo type) noexcept {
  return builtin_kernel<Combine>(op, type);
}

LineFoldFn builtin_line_fold(BuiltinOp op, TypeInfo type) noexcept {
  return builtin_kernel<LineFold>(op, type);
}

void reduce_slice_to_all(std::span<const void* const> inputs, std::span<void* const> outputs,
                         std::size_t element_size, Slice slice, CombineFn combine,
                         const void* op_object) {
  if (slice.size() == 0 || inputs.empty()) return;
  thread_local std::vector<std::byte> accumulator;
  const std::size_t chunk = std::max<std::size_t>(1, chunk_bytes / element_size);
  if (accumulator.size() < chunk * element_size) accumulator.resize(chunk * element_size);
  auto* acc = accumulator.data();
  const bool streaming = slice.size() * element_size >= streaming_threshold;
  for (std::size_t at = slice.begin; at < slice.end; at += chunk) {
    const std::size_t n = std::min(chunk, slice.end - at);
    const std::size_t offset = at * element_size, bytes = n * element_size;
    std::memcpy(acc, static_cast<const std::byte*>(inputs[0]) + offset, bytes);
    for (std::size_t k = 1; k < inputs.size(); ++k)
      combine(op_object, acc, static_cast<const std::byte*>(inputs[k]) + offset, n, false);
    for (void* out : outputs) {
      if (streaming) {
        stream_copy(static_cast<std::byte*>(out) + offset, acc, bytes);
      } else {
        std::memcpy(static_cast<std::byte*>(out) + offset, acc, bytes);
      }
    }
  }
  if (streaming) stream_fence();
}

void copy_slice_to_all(const void* source, std::span<void* const> outputs, std::size_t element_size,
                       Slice slice) {
  if (slice.size() == 0) return;
  const std::size_t offset = slice.begin * element_size, bytes = slice.size() * element_size;
  for (void* out : outputs)
    if (out != source)
      std::memcpy(static_cast<std::byte*>(out) + offset,
                  static_cast<const std::byte*>(source) + offset, bytes);
}

}  // namespace tlc::detail
