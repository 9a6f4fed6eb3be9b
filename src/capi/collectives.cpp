// The collectives of the C interface: each entry point names the C++ element type of its
// tlc_datatype and the op object of its tlc_op, and calls the same collective of tlc::Thread. An
// argument that names no type or op, or an op the type does not have, is found on the calling
// thread alone; that thread still joins the call (tlc_reject), so no other thread waits for it.
#include <algorithm>
#include <complex>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <type_traits>

#include "capi/capi.hpp"

namespace tlc::capi {
namespace {

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

}  // namespace
}  // namespace tlc::capi

namespace tlc::detail {
template <class T>
struct is_commutative<capi::CUserOp<T, true>> : std::true_type {};
}  // namespace tlc::detail

namespace tlc::capi {
namespace {

// The integer a C caller passed as a tlc_datatype, read as bytes. C allows any int there; in C++
// loading an enum object whose value lies outside the enumeration's range is undefined (and
// UBSan says so), so the C++ side never loads the parameter as the enum type.
static_assert(sizeof(tlc_datatype) == sizeof(int));
int value_of(const tlc_datatype& type) noexcept {
  int value = 0;
  std::memcpy(&value, &type, sizeof value);
  return value;
}

const char* type_name(int type) noexcept {
  switch (type) {
    case TLC_INT8:
      return "TLC_INT8";
    case TLC_INT16:
      return "TLC_INT16";
    case TLC_INT32:
      return "TLC_INT32";
    case TLC_INT64:
      return "TLC_INT64";
    case TLC_UINT8:
      return "TLC_UINT8";
    case TLC_UINT16:
      return "TLC_UINT16";
    case TLC_UINT32:
      return "TLC_UINT32";
    case TLC_UINT64:
      return "TLC_UINT64";
    case TLC_FLOAT:
      return "TLC_FLOAT";
    case TLC_DOUBLE:
      return "TLC_DOUBLE";
    case TLC_FLOAT_COMPLEX:
      return "TLC_FLOAT_COMPLEX";
    case TLC_DOUBLE_COMPLEX:
      return "TLC_DOUBLE_COMPLEX";
    case TLC_BOOL:
      return "TLC_BOOL";
    case TLC_BYTE:
      return "TLC_BYTE";
  }
  return nullptr;
}

const char* op_name(tlc_op op) noexcept {
  static constexpr const char* names[] = {"TLC_SUM", "TLC_PROD", "TLC_MIN",  "TLC_MAX", "TLC_BAND",
                                          "TLC_BOR", "TLC_BXOR", "TLC_LAND", "TLC_LOR"};
  return op >= TLC_SUM && op <= TLC_LOR ? names[op - TLC_SUM] : nullptr;
}

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

// Completes the nonblocking calls whose place this thread took for a call it rejected, as far
// as they are complete; their errors are the other threads' to report.
void purge_rejected(tlc_participant* me) noexcept {
  auto& rejected = me->rejected;
  for (auto it = rejected.begin(); it != rejected.end();) {
    bool done = true;
    try {
      done = it->test();
    } catch (...) {
    }
    it = done ? rejected.erase(it) : it + 1;
  }
}

// This thread joins the current nonblocking call or persistent init without waiting: an
// ibarrier at its place, which the other threads' call cannot match (they get a mismatch unless
// they reject too). It is completed later (purge_rejected, or when the participant ends).
void take_place(tlc_participant* me) noexcept {
  purge_rejected(me);
  try {
    me->rejected.push_back(me->thread->ibarrier());
  } catch (...) {  // the call at this place failed already (a mismatch seen by this thread)
  }
}

tlc_status reject(tlc_participant* me, const std::string& message) noexcept {
  // The other threads fail with a mismatch (or pass, if they reject the same call).
  guarded([&] { me->thread->barrier(); });
  return fail(TLC_ERR_INVALID_ARGUMENT, message);
}

tlc_status reject(const Ctx& ctx, tlc_participant* me, const std::string& message) noexcept {
  if (ctx.form == Form::blocking) return reject(me, message);
  take_place(me);
  return fail(TLC_ERR_INVALID_ARGUMENT, message);
}

tlc_status no_participant(const std::string& function) noexcept {
  return fail(TLC_ERR_INVALID_ARGUMENT, function + ": me is NULL");
}

// TLC_IN_PLACE where a collective has no in-place form for that buffer.
tlc_status reject_in_place(const Ctx& ctx, tlc_participant* me, const char* buffer) noexcept {
  if (!me) return no_participant(ctx.function);
  return reject(ctx, me, ctx.function + ": " + buffer + " cannot be TLC_IN_PLACE");
}

// What every entry point checks first: the request pointer of the nonblocking and persistent
// forms (Ctx set it to TLC_REQUEST_NULL until the call has started). TLC_SUCCESS to go on.
tlc_status prologue(Ctx& ctx, tlc_participant* me) noexcept {
  if (ctx.form == Form::blocking) return TLC_SUCCESS;
  if (!me->rejected.empty()) purge_rejected(me);
  if (!ctx.out) return reject(ctx, me, ctx.function + ": request is NULL");
  return TLC_SUCCESS;
}

// Hands what the C++ call returned to the caller as a tlc_request.
tlc_status epilogue(Ctx& ctx, tlc_status status) noexcept {
  if (status != TLC_SUCCESS || ctx.form == Form::blocking) return status;
  return guarded([&] {
    auto handle = std::make_unique<tlc_request_object>();
    if (ctx.request) handle->request = std::move(*ctx.request);
    if (ctx.persistent) {
      handle->persistent = std::move(*ctx.persistent);
      handle->is_persistent = true;
    }
    *ctx.out = handle.release();
  });
}

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

bool is_in_place(const void* buffer) noexcept { return buffer == TLC_IN_PLACE; }

template <class T>
std::span<const T> in(const void* p, std::size_t n) {
  return {static_cast<const T*>(p), n};
}
template <class T>
std::span<T> out(void* p, std::size_t n) {
  return {static_cast<T*>(p), n};
}

// One entry per global rank, or empty (an error for the rank that needs it) for NULL.
std::span<const std::size_t> per_rank(const std::size_t* values, const Thread& t) {
  return values ? std::span<const std::size_t>(values, static_cast<std::size_t>(t.size()))
                : std::span<const std::size_t>{};
}

// Elements a buffer laid out by counts and displacements spans.
std::size_t extent(std::span<const std::size_t> counts, std::span<const std::size_t> displs) {
  std::size_t end = 0;
  for (std::size_t r = 0; r < std::min(counts.size(), displs.size()); ++r)
    end = std::max(end, displs[r] + counts[r]);
  return end;
}

std::size_t blocks(const Thread& t, std::size_t count) {
  return static_cast<std::size_t>(t.size()) * count;
}

// The collectives, each once for its three forms (Ctx).
tlc_status barrier(Ctx& ctx, tlc_participant* me) noexcept {
  if (!me) return no_participant(ctx.function);
  if (const tlc_status s = prologue(ctx, me); s != TLC_SUCCESS) return s;
  Thread& t = *me->thread;
  return epilogue(ctx, guarded([&] { TLC_FORMS(ctx, t, barrier); }));
}

tlc_status bcast(Ctx& ctx, tlc_participant* me, void* buf, size_t count, tlc_datatype type,
                 int root) noexcept {
  if (is_in_place(buf)) return reject_in_place(ctx, me, "buf");
  return movement(ctx, me, type,
                  [&]<class T>(Thread& t) { TLC_FORMS(ctx, t, bcast, out<T>(buf, count), root); });
}

tlc_status reduce(Ctx& ctx, tlc_participant* me, const void* send, void* recv, size_t count,
                  tlc_datatype type, tlc_op op, int root) noexcept {
  if (is_in_place(recv)) return reject_in_place(ctx, me, "recv");
  return reduction(ctx, me, type, op, [&]<class T>(Thread& t, const auto& o) {
    if (is_in_place(send))
      TLC_FORMS(ctx, t, reduce, out<T>(recv, count), root, o);
    else
      TLC_FORMS(ctx, t, reduce, in<T>(send, count), out<T>(recv, t.rank() == root ? count : 0),
                root, o);
  });
}

tlc_status allreduce(Ctx& ctx, tlc_participant* me, const void* send, void* recv, size_t count,
                     tlc_datatype type, tlc_op op) noexcept {
  if (is_in_place(recv)) return reject_in_place(ctx, me, "recv");
  return reduction(ctx, me, type, op, [&]<class T>(Thread& t, const auto& o) {
    if (is_in_place(send))
      TLC_FORMS(ctx, t, allreduce, out<T>(recv, count), o);
    else
      TLC_FORMS(ctx, t, allreduce, in<T>(send, count), out<T>(recv, count), o);
  });
}

tlc_status scan(Ctx& ctx, tlc_participant* me, const void* send, void* recv, size_t count,
                tlc_datatype type, tlc_op op) noexcept {
  if (is_in_place(recv)) return reject_in_place(ctx, me, "recv");
  return reduction(ctx, me, type, op, [&]<class T>(Thread& t, const auto& o) {
    if (is_in_place(send))
      TLC_FORMS(ctx, t, scan, out<T>(recv, count), o);
    else
      TLC_FORMS(ctx, t, scan, in<T>(send, count), out<T>(recv, count), o);
  });
}

tlc_status exscan(Ctx& ctx, tlc_participant* me, const void* send, void* recv, size_t count,
                  tlc_datatype type, tlc_op op) noexcept {
  if (is_in_place(recv)) return reject_in_place(ctx, me, "recv");
  return reduction(ctx, me, type, op, [&]<class T>(Thread& t, const auto& o) {
    if (is_in_place(send))
      TLC_FORMS(ctx, t, exscan, out<T>(recv, count), o);
    else
      TLC_FORMS(ctx, t, exscan, in<T>(send, count), out<T>(recv, count), o);
  });
}

tlc_status reduce_scatter_block(Ctx& ctx, tlc_participant* me, const void* send, void* recv,
                                size_t count, tlc_datatype type, tlc_op op) noexcept {
  if (is_in_place(recv)) return reject_in_place(ctx, me, "recv");
  return reduction(ctx, me, type, op, [&]<class T>(Thread& t, const auto& o) {
    if (is_in_place(send))
      TLC_FORMS(ctx, t, reduce_scatter_block, out<T>(recv, blocks(t, count)), o);
    else
      TLC_FORMS(ctx, t, reduce_scatter_block, in<T>(send, blocks(t, count)), out<T>(recv, count),
                o);
  });
}

tlc_status allgather(Ctx& ctx, tlc_participant* me, const void* send, void* recv, size_t count,
                     tlc_datatype type) noexcept {
  if (is_in_place(recv)) return reject_in_place(ctx, me, "recv");
  return movement(ctx, me, type, [&]<class T>(Thread& t) {
    if (is_in_place(send))
      TLC_FORMS(ctx, t, allgather, out<T>(recv, blocks(t, count)));
    else
      TLC_FORMS(ctx, t, allgather, in<T>(send, count), out<T>(recv, blocks(t, count)));
  });
}

tlc_status gather(Ctx& ctx, tlc_participant* me, const void* send, void* recv, size_t count,
                  tlc_datatype type, int root) noexcept {
  if (is_in_place(recv)) return reject_in_place(ctx, me, "recv");
  return movement(ctx, me, type, [&]<class T>(Thread& t) {
    const std::size_t received = t.rank() == root ? blocks(t, count) : 0;
    if (is_in_place(send))
      TLC_FORMS(ctx, t, gather, tlc::in_place, out<T>(recv, received), root);
    else
      TLC_FORMS(ctx, t, gather, in<T>(send, count), out<T>(recv, received), root);
  });
}

tlc_status scatter(Ctx& ctx, tlc_participant* me, const void* send, void* recv, size_t count,
                   tlc_datatype type, int root) noexcept {
  if (is_in_place(send)) return reject_in_place(ctx, me, "send");
  return movement(ctx, me, type, [&]<class T>(Thread& t) {
    const std::size_t sent = t.rank() == root ? blocks(t, count) : 0;
    if (is_in_place(recv))
      TLC_FORMS(ctx, t, scatter, in<T>(send, sent), tlc::in_place, root);
    else
      TLC_FORMS(ctx, t, scatter, in<T>(send, sent), out<T>(recv, count), root);
  });
}

tlc_status alltoall(Ctx& ctx, tlc_participant* me, const void* send, void* recv, size_t count,
                    tlc_datatype type) noexcept {
  if (is_in_place(recv)) return reject_in_place(ctx, me, "recv");
  return movement(ctx, me, type, [&]<class T>(Thread& t) {
    if (is_in_place(send))
      TLC_FORMS(ctx, t, alltoall, out<T>(recv, blocks(t, count)));
    else
      TLC_FORMS(ctx, t, alltoall, in<T>(send, blocks(t, count)), out<T>(recv, blocks(t, count)));
  });
}

tlc_status allgatherv(Ctx& ctx, tlc_participant* me, const void* send, size_t send_count,
                      void* recv, const size_t* counts, const size_t* displs,
                      tlc_datatype type) noexcept {
  if (is_in_place(recv)) return reject_in_place(ctx, me, "recv");
  return movement(ctx, me, type, [&]<class T>(Thread& t) {
    const auto c = per_rank(counts, t), d = per_rank(displs, t);
    if (is_in_place(send))
      TLC_FORMS(ctx, t, allgatherv, out<T>(recv, extent(c, d)), c, d);
    else
      TLC_FORMS(ctx, t, allgatherv, in<T>(send, send_count), out<T>(recv, extent(c, d)), c, d);
  });
}

tlc_status gatherv(Ctx& ctx, tlc_participant* me, const void* send, size_t send_count, void* recv,
                   const size_t* counts, const size_t* displs, tlc_datatype type,
                   int root) noexcept {
  if (is_in_place(recv)) return reject_in_place(ctx, me, "recv");
  return movement(ctx, me, type, [&]<class T>(Thread& t) {
    const bool at_root = t.rank() == root;
    const auto c = at_root ? per_rank(counts, t) : std::span<const std::size_t>{};
    const auto d = at_root ? per_rank(displs, t) : std::span<const std::size_t>{};
    if (is_in_place(send))
      TLC_FORMS(ctx, t, gatherv, tlc::in_place, out<T>(recv, extent(c, d)), c, d, root);
    else
      TLC_FORMS(ctx, t, gatherv, in<T>(send, send_count), out<T>(recv, extent(c, d)), c, d, root);
  });
}

tlc_status scatterv(Ctx& ctx, tlc_participant* me, const void* send, const size_t* counts,
                    const size_t* displs, void* recv, size_t recv_count, tlc_datatype type,
                    int root) noexcept {
  if (is_in_place(send)) return reject_in_place(ctx, me, "send");
  return movement(ctx, me, type, [&]<class T>(Thread& t) {
    const bool at_root = t.rank() == root;
    const auto c = at_root ? per_rank(counts, t) : std::span<const std::size_t>{};
    const auto d = at_root ? per_rank(displs, t) : std::span<const std::size_t>{};
    if (is_in_place(recv))
      TLC_FORMS(ctx, t, scatterv, in<T>(send, extent(c, d)), c, d, tlc::in_place, root);
    else
      TLC_FORMS(ctx, t, scatterv, in<T>(send, extent(c, d)), c, d, out<T>(recv, recv_count), root);
  });
}

tlc_status alltoallv(Ctx& ctx, tlc_participant* me, const void* send, const size_t* send_counts,
                     const size_t* send_displs, void* recv, const size_t* recv_counts,
                     const size_t* recv_displs, tlc_datatype type) noexcept {
  if (is_in_place(send)) return reject_in_place(ctx, me, "send");
  if (is_in_place(recv)) return reject_in_place(ctx, me, "recv");
  return movement(ctx, me, type, [&]<class T>(Thread& t) {
    const auto sc = per_rank(send_counts, t), sd = per_rank(send_displs, t);
    const auto rc = per_rank(recv_counts, t), rd = per_rank(recv_displs, t);
    TLC_FORMS(ctx, t, alltoallv, in<T>(send, extent(sc, sd)), sc, sd, out<T>(recv, extent(rc, rd)),
              rc, rd);
  });
}

}  // namespace
}  // namespace tlc::capi

using namespace tlc;
using namespace tlc::capi;

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

extern "C" {

tlc_status tlc_reject(tlc_participant* me, const char* message) {
  if (!me) return no_participant("tlc_reject");
  return reject(me, message ? message : "tlc_reject");
}

tlc_status tlc_ireject(tlc_participant* me, const char* message) {
  if (!me) return no_participant("tlc_ireject");
  take_place(me);
  return fail(TLC_ERR_INVALID_ARGUMENT, message ? message : "tlc_ireject");
}

size_t tlc_datatype_size(tlc_datatype type) {
  std::size_t size = 0;
  visit_type(value_of(type), [&]<class T>(std::type_identity<T>) { size = sizeof(T); });
  return size;
}

TLC_C_FORMS(barrier, (tlc_participant * me), (me))
TLC_C_FORMS(bcast, (tlc_participant * me, void* buf, size_t count, tlc_datatype type, int root),
            (me, buf, count, type, root))
TLC_C_FORMS(reduce,
            (tlc_participant * me, const void* send, void* recv, size_t count, tlc_datatype type,
             tlc_op op, int root),
            (me, send, recv, count, type, op, root))
TLC_C_FORMS(allreduce,
            (tlc_participant * me, const void* send, void* recv, size_t count, tlc_datatype type,
             tlc_op op),
            (me, send, recv, count, type, op))
TLC_C_FORMS(scan,
            (tlc_participant * me, const void* send, void* recv, size_t count, tlc_datatype type,
             tlc_op op),
            (me, send, recv, count, type, op))
TLC_C_FORMS(exscan,
            (tlc_participant * me, const void* send, void* recv, size_t count, tlc_datatype type,
             tlc_op op),
            (me, send, recv, count, type, op))
TLC_C_FORMS(reduce_scatter_block,
            (tlc_participant * me, const void* send, void* recv, size_t count, tlc_datatype type,
             tlc_op op),
            (me, send, recv, count, type, op))
TLC_C_FORMS(allgather,
            (tlc_participant * me, const void* send, void* recv, size_t count, tlc_datatype type),
            (me, send, recv, count, type))
TLC_C_FORMS(gather,
            (tlc_participant * me, const void* send, void* recv, size_t count, tlc_datatype type,
             int root),
            (me, send, recv, count, type, root))
TLC_C_FORMS(scatter,
            (tlc_participant * me, const void* send, void* recv, size_t count, tlc_datatype type,
             int root),
            (me, send, recv, count, type, root))
TLC_C_FORMS(alltoall,
            (tlc_participant * me, const void* send, void* recv, size_t count, tlc_datatype type),
            (me, send, recv, count, type))
TLC_C_FORMS(allgatherv,
            (tlc_participant * me, const void* send, size_t send_count, void* recv,
             const size_t* counts, const size_t* displs, tlc_datatype type),
            (me, send, send_count, recv, counts, displs, type))
TLC_C_FORMS(gatherv,
            (tlc_participant * me, const void* send, size_t send_count, void* recv,
             const size_t* counts, const size_t* displs, tlc_datatype type, int root),
            (me, send, send_count, recv, counts, displs, type, root))
TLC_C_FORMS(scatterv,
            (tlc_participant * me, const void* send, const size_t* counts, const size_t* displs,
             void* recv, size_t recv_count, tlc_datatype type, int root),
            (me, send, counts, displs, recv, recv_count, type, root))
TLC_C_FORMS(alltoallv,
            (tlc_participant * me, const void* send, const size_t* send_counts,
             const size_t* send_displs, void* recv, const size_t* recv_counts,
             const size_t* recv_displs, tlc_datatype type),
            (me, send, send_counts, send_displs, recv, recv_counts, recv_displs, type))

}  // extern "C"
