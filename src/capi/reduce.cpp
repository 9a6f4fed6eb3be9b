// tlc_reduce, tlc_ireduce and tlc_reduce_init: every type and op (capi/dispatch.hpp), in one file
// of its own because it instantiates the call for each of them.
#include "capi/dispatch.hpp"

namespace tlc::capi {
namespace {

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

}  // namespace
}  // namespace tlc::capi

using namespace tlc;
using namespace tlc::capi;

extern "C" {

TLC_C_FORMS(reduce,
            (tlc_participant * me, const void* send, void* recv, size_t count, tlc_datatype type,
             tlc_op op, int root),
            (me, send, recv, count, type, op, root))

}  // extern "C"
