// The reductions of the C interface (capi/dispatch.hpp): reduce, allreduce, reduce_scatter_block,
// scan and exscan, each written once for its three forms, every type and every op.
#include "capi/dispatch.hpp"

namespace tlc::capi {
namespace {

tlc_status reduce(Ctx& ctx, tlc_participant* me, const void* send, void* recv, size_t count,
                  tlc_datatype type, tlc_op op, int root) noexcept {
  if (is_in_place(recv)) return reject_in_place(ctx, me, "recv");
  return reduction(ctx, me, type, op, [&](Thread& t) {
    if (is_in_place(send)) return in_place(Collective::reduce, recv, count, root);
    return buffers(Collective::reduce, send, count, recv, t.rank() == root ? count : 0, root);
  });
}

tlc_status allreduce(Ctx& ctx, tlc_participant* me, const void* send, void* recv, size_t count,
                     tlc_datatype type, tlc_op op) noexcept {
  if (is_in_place(recv)) return reject_in_place(ctx, me, "recv");
  return reduction(ctx, me, type, op, [&](Thread&) {
    if (is_in_place(send)) return in_place(Collective::allreduce, recv, count);
    return buffers(Collective::allreduce, send, count, recv, count);
  });
}

tlc_status reduce_scatter_block(Ctx& ctx, tlc_participant* me, const void* send, void* recv,
                                size_t count, tlc_datatype type, tlc_op op) noexcept {
  if (is_in_place(recv)) return reject_in_place(ctx, me, "recv");
  return reduction(ctx, me, type, op, [&](Thread& t) {
    if (is_in_place(send))
      return in_place(Collective::reduce_scatter_block, recv, blocks(t, count));
    return buffers(Collective::reduce_scatter_block, send, blocks(t, count), recv, count);
  });
}

// scan and exscan: the same arguments.
tlc_status prefix(Collective collective, Ctx& ctx, tlc_participant* me, const void* send,
                  void* recv, size_t count, tlc_datatype type, tlc_op op) noexcept {
  if (is_in_place(recv)) return reject_in_place(ctx, me, "recv");
  return reduction(ctx, me, type, op, [&](Thread&) {
    if (is_in_place(send)) return in_place(collective, recv, count);
    return buffers(collective, send, count, recv, count);
  });
}

tlc_status scan(Ctx& ctx, tlc_participant* me, const void* send, void* recv, size_t count,
                tlc_datatype type, tlc_op op) noexcept {
  return prefix(Collective::scan, ctx, me, send, recv, count, type, op);
}

tlc_status exscan(Ctx& ctx, tlc_participant* me, const void* send, void* recv, size_t count,
                  tlc_datatype type, tlc_op op) noexcept {
  return prefix(Collective::exscan, ctx, me, send, recv, count, type, op);
}

}  // namespace
}  // namespace tlc::capi

using namespace tlc;
using namespace tlc::capi;

extern "C" {

TLC_C_FORMS(reduce,
            (tlc_participant * me, const void* send, void* recv, size_t count, tlc_datatype type,
             tlc_op op, int root),
            (me, send, recv, count, type, op, root))
TLC_C_ELEMENTWISE_FORMS(allreduce)
TLC_C_ELEMENTWISE_FORMS(reduce_scatter_block)
TLC_C_ELEMENTWISE_FORMS(scan)
TLC_C_ELEMENTWISE_FORMS(exscan)

}  // extern "C"
