// How the collectives of the C interface reach tlc::Thread: each entry point names the C++
// element type of its tlc_datatype and the op object of its tlc_op, and calls the same collective
// of tlc::Thread. An argument that names no type or op, or an op the type does not have, is found
// on the calling thread alone; that thread still joins the call (tlc_reject), so no other thread
// waits for it. Every collective instantiates its call for every type and op, in its three forms:
// each has its own file (capi/<collective>.cpp, the movers together in capi/movement.cpp), so
// that the library's largest compilations run side by side.
#pragma once

#include <algorithm>
#include <complex>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <type_traits>

#include "capi/capi.hpp"

namespace tlc::capi {

// A user op as a tlc op: whole ranges go to the C function in one call (detail::combine). It
// holds a copy of the registry's entry, not a pointer to it: the nonblocking and persistent
// forms copy the op object into the call, so tlc_op_free may come before the call completes.
template <class T, bool Commutative>
struct CUserOp {
  UserOp op;
  T operator()(const T& a, const T& b) const {
    T out{};
    op.function(&a, &b, &out, 1, op.user_data);
    return out;
  }
  void combine_range(void* inout, const void* in, std::size_t n, bool in_is_lower) const {
    if (in_is_lower)
      op.function(in, inout, inout, n, op.user_data);
    else
      op.function(inout, in, inout, n, op.user_data);
  }
};

}  // namespace tlc::capi

namespace tlc::detail {
template <class T>
struct is_commutative<capi::CUserOp<T, true>> : std::true_type {};
}  // namespace tlc::detail

namespace tlc::capi {

// The integer a C caller passed as a tlc_datatype, read as bytes. C allows any int there; in C++
// loading an enum object whose value lies outside the enumeration's range is undefined (and
// UBSan says so), so the C++ side never loads the parameter as the enum type.
static_assert(sizeof(tlc_datatype) == sizeof(int));
inline int value_of(const tlc_datatype& type) noexcept {
  int value = 0;
  std::memcpy(&value, &type, sizeof value);
  return value;
}

// The names of a tlc_datatype and of a built-in tlc_op, for messages; nullptr for others.
const char* type_name(int type) noexcept;
const char* op_name(tlc_op op) noexcept;

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

// Calls g(op object) for op on elements of type T, or returns why there is none. The built-in
// ops follow MPI's table of which ops apply to which types.
template <class T, class G>
std::string visit_op(tlc_op op, int type, G&& g) {
  constexpr bool integer = std::is_integral_v<T> && !std::is_same_v<T, bool>;
  constexpr bool arithmetic =
      integer || std::is_floating_point_v<T> || detail::is_complex<T>::value;
  constexpr bool ordered = integer || std::is_floating_point_v<T>;
  constexpr bool logical = integer || std::is_same_v<T, bool>;
  switch (op) {
    case TLC_SUM:
      if constexpr (arithmetic) return g(std::plus<>{}), "";
      break;
    case TLC_PROD:
      if constexpr (arithmetic) return g(std::multiplies<>{}), "";
      break;
    case TLC_MIN:
      if constexpr (ordered) return g(tlc::min{}), "";
      break;
    case TLC_MAX:
      if constexpr (ordered) return g(tlc::max{}), "";
      break;
    case TLC_BAND:
      if constexpr (integer) return g(std::bit_and<>{}), "";
      break;
    case TLC_BOR:
      if constexpr (integer) return g(std::bit_or<>{}), "";
      break;
    case TLC_BXOR:
      if constexpr (integer) return g(std::bit_xor<>{}), "";
      break;
    case TLC_LAND:
      if constexpr (logical) return g(std::logical_and<>{}), "";
      break;
    case TLC_LOR:
      if constexpr (logical) return g(std::logical_or<>{}), "";
      break;
    default:
      if (const UserOp* user = find_user_op(op)) {
        if (user->commutative)
          g(CUserOp<T, true>{*user});
        else
          g(CUserOp<T, false>{*user});
        return "";
      }
      return "op " + std::to_string(op) +
             " is neither a built-in op (TLC_SUM .. TLC_LOR) nor a user op (tlc_op_create), or "
             "it was freed";
  }
  return std::string(op_name(op)) + " is not defined for " + type_name(type);
}

// Which form of a collective an entry point makes: the blocking call, a nonblocking start
// (tlc_i<name>) or a persistent init (tlc_<name>_init).
enum class Form { blocking, nonblocking, persistent };

// One call of an entry point: its form, its name for messages, where its request goes, and
// what the C++ call returned.
struct Ctx {
  Form form;
  std::string function;
  tlc_request* out = nullptr;
  std::optional<Request> request;
  std::optional<Persistent> persistent;
  Ctx(Form f, const char* base, tlc_request* request_out = nullptr)
      : form(f),
        function(f == Form::blocking      ? std::string("tlc_") + base
                 : f == Form::nonblocking ? std::string("tlc_i") + base
                                          : std::string("tlc_") + base + "_init"),
        out(request_out) {
    if (out) *out = TLC_REQUEST_NULL;  // on every path, the rejections before the prologue too
  }
};

// Calls the form of ctx: blocking(), or keeps what nonblocking() or persistent() returns.
template <class B, class N, class P>
void dispatch(Ctx& ctx, B&& blocking, N&& nonblocking, P&& persistent) {
  switch (ctx.form) {
    case Form::blocking:
      blocking();
      break;
    case Form::nonblocking:
      ctx.request.emplace(nonblocking());
      break;
    case Form::persistent:
      ctx.persistent.emplace(persistent());
      break;
  }
}
// t.name(args), t.i<name>(args) or t.<name>_init(args), as ctx says.
#define TLC_FORMS(ctx, t, name, ...)                                             \
  dispatch(                                                                      \
      ctx, [&] { t.name(__VA_ARGS__); }, [&] { return t.i##name(__VA_ARGS__); }, \
      [&] { return t.name##_init(__VA_ARGS__); })

// This thread joins the current nonblocking call or persistent init without waiting (an ibarrier
// at its place), for a call it rejects.
void take_place(tlc_participant* me) noexcept;
// The calling thread rejects the call: it joins it (a barrier, or take_place for the nonblocking
// and persistent forms), so that the other threads fail with a mismatch instead of waiting.
tlc_status reject(tlc_participant* me, const std::string& message) noexcept;
tlc_status reject(const Ctx& ctx, tlc_participant* me, const std::string& message) noexcept;
tlc_status no_participant(const std::string& function) noexcept;
// TLC_IN_PLACE where a collective has no in-place form for that buffer.
tlc_status reject_in_place(const Ctx& ctx, tlc_participant* me, const char* buffer) noexcept;
// What every entry point checks first: the request pointer of the nonblocking and persistent
// forms (Ctx set it to TLC_REQUEST_NULL until the call has started). TLC_SUCCESS to go on.
tlc_status prologue(Ctx& ctx, tlc_participant* me) noexcept;
// Hands what the C++ call returned to the caller as a tlc_request.
tlc_status epilogue(Ctx& ctx, tlc_status status) noexcept;

// A collective without an op: f.template operator()<T>(thread).
template <class F>
tlc_status movement(Ctx& ctx, tlc_participant* me, const tlc_datatype& c_type, F&& f) noexcept {
  if (!me) return no_participant(ctx.function);
  if (const tlc_status s = prologue(ctx, me); s != TLC_SUCCESS) return s;
  const int type = value_of(c_type);
  bool known = true;
  const tlc_status status = guarded([&] {
    known = visit_type(
        type, [&]<class T>(std::type_identity<T>) { f.template operator()<T>(*me->thread); });
  });
  if (!known)
    return reject(ctx, me, ctx.function + ": " + std::to_string(type) + " is not a tlc_datatype");
  return epilogue(ctx, status);
}

// A reduction: f.template operator()<T>(thread, op object).
template <class F>
tlc_status reduction(Ctx& ctx, tlc_participant* me, const tlc_datatype& c_type, tlc_op op,
                     F&& f) noexcept {
  if (!me) return no_participant(ctx.function);
  if (const tlc_status s = prologue(ctx, me); s != TLC_SUCCESS) return s;
  const int type = value_of(c_type);
  std::string problem;
  const tlc_status status = guarded([&] {
    const bool known = visit_type(type, [&]<class T>(std::type_identity<T>) {
      problem = visit_op<T>(op, type, [&](const auto& op_object) {
        f.template operator()<T>(*me->thread, op_object);
      });
    });
    if (!known) problem = std::to_string(type) + " is not a tlc_datatype";
  });
  if (!problem.empty()) return reject(ctx, me, ctx.function + ": " + problem);
  return epilogue(ctx, status);
}

inline bool is_in_place(const void* buffer) noexcept { return buffer == TLC_IN_PLACE; }

template <class T>
std::span<const T> in(const void* p, std::size_t n) {
  return {static_cast<const T*>(p), n};
}
template <class T>
std::span<T> out(void* p, std::size_t n) {
  return {static_cast<T*>(p), n};
}

// One entry per global rank, or empty (an error for the rank that needs it) for NULL.
std::span<const std::size_t> per_rank(const std::size_t* values, const Thread& t);
// Elements a buffer laid out by counts and displacements spans.
std::size_t extent(std::span<const std::size_t> counts, std::span<const std::size_t> displs);
// count elements for every rank of the team.
std::size_t blocks(const Thread& t, std::size_t count);

}  // namespace tlc::capi

// The three C entry points of a collective: tlc_<name>(PARAMS), tlc_i<name>(PARAMS, request)
// and tlc_<name>_init(PARAMS, request), all calling capi::<name>(ctx, ARGS).
#define TLC_UNPAREN(...) __VA_ARGS__
#define TLC_C_FORMS(name, PARAMS, ARGS)                                    \
  tlc_status tlc_##name(TLC_UNPAREN PARAMS) {                              \
    Ctx ctx(Form::blocking, #name);                                        \
    return capi::name(ctx, TLC_UNPAREN ARGS);                              \
  }                                                                        \
  tlc_status tlc_i##name(TLC_UNPAREN PARAMS, tlc_request* request) {       \
    Ctx ctx(Form::nonblocking, #name, request);                            \
    return capi::name(ctx, TLC_UNPAREN ARGS);                              \
  }                                                                        \
  tlc_status tlc_##name##_init(TLC_UNPAREN PARAMS, tlc_request* request) { \
    Ctx ctx(Form::persistent, #name, request);                             \
    return capi::name(ctx, TLC_UNPAREN ARGS);                              \
  }
