// How the collectives of the C interface reach tlc::Thread: each entry point builds the
// type-erased call (detail::Call) that tlc::Thread's templates would build, from a table of the
// element types of tlc_datatype and of the combine functions of each type and op
// (capi/ops.cpp), and hands it to the calling Thread in the form it was asked for (blocking,
// nonblocking or persistent). An argument that names no type or op, or an op the type does not
// have, is found on the calling thread alone; that thread still joins the call (tlc_reject), so
// no other thread waits for it.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <type_traits>

#include "capi/capi.hpp"

namespace tlc::detail {

// The one way into tlc::Thread besides its templates: run, start or persist a Call.
struct CallAccess {
  static void run(Thread& t, const Call& call) { t.run(call); }
  static Request start(Thread& t, const Call& call, const VariantLayout& layout,
                       std::shared_ptr<const void> held_op) {
    return t.start_posted(call, layout, std::move(held_op));
  }
  static Persistent persist(Thread& t, const Call& call, const VariantLayout& layout,
                            std::shared_ptr<const void> held_op) {
    return t.init_persistent(call, layout, std::move(held_op));
  }
};

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

// What tlc::Thread's templates know of the element type T of a tlc_datatype (type_info_of<T>),
// or nothing for an int that names no tlc_datatype.
std::optional<detail::TypeInfo> type_info(int type) noexcept;

// An op applied to a type: what detail::set_op puts in a Call. The built-in ops point at static
// objects (they have no state); a user op's object is a copy of the registry's entry, which the
// nonblocking and persistent forms copy once more into the call (so that tlc_op_free may come
// before the call completes).
struct ResolvedOp {
  detail::BuiltinOp op = detail::BuiltinOp::none;
  detail::CombineFn combine = nullptr;
  const void* builtin_object = nullptr;
  std::optional<UserOp> user;
  detail::OpEqualFn equal = nullptr;
  detail::OpDigestFn digest = nullptr;
  bool commutative = true;
};

// op on elements of the tlc_datatype type, or why there is none in `problem`. The built-in ops
// follow MPI's table of which ops apply to which types.
std::optional<ResolvedOp> resolve_op(tlc_op op, int type, std::string& problem);

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

inline bool is_in_place(const void* buffer) noexcept { return buffer == TLC_IN_PLACE; }

// A call's collective, buffers (in elements) and root, as tlc::Thread's templates set them; its
// element type and op are the entry point's to fill in.
inline detail::Call buffers(Collective collective, const void* send, std::size_t send_count,
                            void* recv, std::size_t recv_count, int root = -1) noexcept {
  detail::Call call;
  call.collective = collective;
  call.send = send;
  call.send_count = send_count;
  call.recv = recv;
  call.recv_count = recv_count;
  call.root = root;
  return call;
}
// The in-place form: buf is this rank's contribution and its result.
inline detail::Call in_place(Collective collective, void* buf, std::size_t count,
                             int root = -1) noexcept {
  detail::Call call = buffers(collective, buf, count, buf, count, root);
  call.in_place = true;
  return call;
}

// scatter's in-place form at the root: the root's block stays in send, and nothing is received.
inline detail::Call scatter_in_place(Collective collective, const void* send, std::size_t sent,
                                     int root) noexcept {
  detail::Call call = buffers(collective, send, sent, nullptr, 0, root);
  call.in_place = true;
  return call;
}

// Starts (nonblocking) or sets up (persistent) call on t, its request kept in ctx.
void post(Ctx& ctx, Thread& t, const detail::Call& call, const detail::VariantLayout* layout,
          std::shared_ptr<const void> held_op);

// Runs call on t in the form of ctx: blocking, or posted. layout: the v-variants' counts and
// displacements.
inline void submit(Ctx& ctx, Thread& t, detail::Call& call, const detail::VariantLayout* layout,
                   std::shared_ptr<const void> held_op) {
  if (ctx.form == Form::blocking) {
    call.layout = layout;
    detail::CallAccess::run(t, call);
  } else {
    post(ctx, t, call, layout, std::move(held_op));
  }
}

// A collective without an op: runs the call build(thread) returns, or for the v-variants
// build(thread, layout) with their counts and displacements in layout, in the form of ctx.
template <class Build>
tlc_status movement(Ctx& ctx, tlc_participant* me, const tlc_datatype& c_type,
                    Build&& build) noexcept {
  if (!me) return no_participant(ctx.function);
  if (const tlc_status s = prologue(ctx, me); s != TLC_SUCCESS) return s;
  const int type = value_of(c_type);
  const std::optional<detail::TypeInfo> info = type_info(type);
  if (!info)
    return reject(ctx, me, ctx.function + ": " + std::to_string(type) + " is not a tlc_datatype");
  return epilogue(ctx, guarded([&] {
                    if constexpr (std::is_invocable_v<Build&, Thread&>) {
                      detail::Call call = build(*me->thread);
                      call.type = *info;
                      submit(ctx, *me->thread, call, nullptr, nullptr);
                    } else {
                      detail::VariantLayout layout;
                      detail::Call call = build(*me->thread, layout);
                      call.type = *info;
                      submit(ctx, *me->thread, call, &layout, nullptr);
                    }
                  }));
}

// A reduction: the same with the op of op on the elements of type.
template <class Build>
tlc_status reduction(Ctx& ctx, tlc_participant* me, const tlc_datatype& c_type, tlc_op op,
                     Build&& build) noexcept {
  if (!me) return no_participant(ctx.function);
  if (const tlc_status s = prologue(ctx, me); s != TLC_SUCCESS) return s;
  const int type = value_of(c_type);
  const std::optional<detail::TypeInfo> info = type_info(type);
  std::string problem;
  std::optional<ResolvedOp> resolved;
  if (!info)
    problem = std::to_string(type) + " is not a tlc_datatype";
  else
    resolved = resolve_op(op, type, problem);
  if (!resolved) return reject(ctx, me, ctx.function + ": " + problem);
  return epilogue(ctx, guarded([&] {
                    detail::Call call = build(*me->thread);
                    call.type = *info;
                    call.op = resolved->op;
                    call.combine = resolved->combine;
                    call.op_object = resolved->builtin_object;
                    call.op_equal = resolved->equal;
                    call.op_digest = resolved->digest;
                    call.commutative = resolved->commutative;
                    std::shared_ptr<const UserOp> held;
                    if (resolved->user && ctx.form != Form::blocking) {
                      held = std::make_shared<const UserOp>(*resolved->user);
                      call.op_object = held.get();
                    } else if (resolved->user) {
                      call.op_object = &*resolved->user;
                    }
                    submit(ctx, *me->thread, call, nullptr, std::move(held));
                  }));
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

// The signatures that several collectives share: (me, send, recv, count, type) of allgather and
// alltoall, with a root (gather, scatter), with an op (allreduce, reduce_scatter_block, scan,
// exscan).
#define TLC_C_PAIR_FORMS(name)                                                                     \
  TLC_C_FORMS(                                                                                     \
      name, (tlc_participant * me, const void* send, void* recv, size_t count, tlc_datatype type), \
      (me, send, recv, count, type))
#define TLC_C_ROOTED_FORMS(name)                                                 \
  TLC_C_FORMS(name,                                                              \
              (tlc_participant * me, const void* send, void* recv, size_t count, \
               tlc_datatype type, int root),                                     \
              (me, send, recv, count, type, root))
#define TLC_C_ELEMENTWISE_FORMS(name)                                            \
  TLC_C_FORMS(name,                                                              \
              (tlc_participant * me, const void* send, void* recv, size_t count, \
               tlc_datatype type, tlc_op op),                                    \
              (me, send, recv, count, type, op))
