// tlc_allreduce, tlc_iallreduce and tlc_allreduce_init: every type and op (capi/dispatch.hpp), in
// one file of its own because it instantiates the call for each of them.
#include "capi/dispatch.hpp"

namespace tlc::capi {
namespace {

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

}  // namespace
}  // namespace tlc::capi

using namespace tlc;
using namespace tlc::capi;

extern "C" {

TLC_C_FORMS(allreduce,
            (tlc_participant * me, const void* send, void* recv, size_t count, tlc_datatype type,
             tlc_op op),
            (me, send, recv, count, type, op))

}  // extern "C"
