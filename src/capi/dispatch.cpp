// The parts of the C interface's dispatch (capi/dispatch.hpp) that are the same for every
// collective, and the C entry points that are no collective of their own (tlc_reject,
// tlc_ireject, tlc_datatype_size).
#include "capi/dispatch.hpp"

namespace tlc::capi {

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

namespace {

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

}  // namespace

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

void post(Ctx& ctx, Thread& t, const detail::Call& call, const detail::VariantLayout* layout,
          std::shared_ptr<const void> held_op) {
  const detail::VariantLayout none;
  if (ctx.form == Form::nonblocking)
    ctx.request.emplace(
        detail::CallAccess::start(t, call, layout ? *layout : none, std::move(held_op)));
  else
    ctx.persistent.emplace(
        detail::CallAccess::persist(t, call, layout ? *layout : none, std::move(held_op)));
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

}  // namespace tlc::capi

using namespace tlc;
using namespace tlc::capi;

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
  const std::optional<detail::TypeInfo> info = type_info(value_of(type));
  return info ? info->size : 0;
}

}  // extern "C"
