// The collectives of the C interface that move data without an op (capi/dispatch.hpp): barrier,
// bcast, allgather, gather, scatter, alltoall and the v-variants, each written once for its three
// forms and every type.
#include "capi/dispatch.hpp"

namespace tlc::capi {
namespace {

using detail::Call;
using detail::VariantLayout;

tlc_status barrier(Ctx& ctx, tlc_participant* me) noexcept {
  if (!me) return no_participant(ctx.function);
  if (const tlc_status s = prologue(ctx, me); s != TLC_SUCCESS) return s;
  return epilogue(ctx, guarded([&] {
                    Call call;  // Collective::barrier, no buffers
                    submit(ctx, *me->thread, call, nullptr, nullptr);
                  }));
}

tlc_status bcast(Ctx& ctx, tlc_participant* me, void* buf, size_t count, tlc_datatype type,
                 int root) noexcept {
  if (is_in_place(buf)) return reject_in_place(ctx, me, "buf");
  return movement(ctx, me, type,
                  [&](Thread&) { return in_place(Collective::bcast, buf, count, root); });
}

tlc_status allgather(Ctx& ctx, tlc_participant* me, const void* send, void* recv, size_t count,
                     tlc_datatype type) noexcept {
  if (is_in_place(recv)) return reject_in_place(ctx, me, "recv");
  return movement(ctx, me, type, [&](Thread& t) {
    if (is_in_place(send)) return in_place(Collective::allgather, recv, blocks(t, count));
    return buffers(Collective::allgather, send, count, recv, blocks(t, count));
  });
}

tlc_status gather(Ctx& ctx, tlc_participant* me, const void* send, void* recv, size_t count,
                  tlc_datatype type, int root) noexcept {
  if (is_in_place(recv)) return reject_in_place(ctx, me, "recv");
  return movement(ctx, me, type, [&](Thread& t) {
    const std::size_t received = t.rank() == root ? blocks(t, count) : 0;
    if (is_in_place(send)) return in_place(Collective::gather, recv, received, root);
    return buffers(Collective::gather, send, count, recv, received, root);
  });
}

tlc_status scatter(Ctx& ctx, tlc_participant* me, const void* send, void* recv, size_t count,
                   tlc_datatype type, int root) noexcept {
  if (is_in_place(send)) return reject_in_place(ctx, me, "send");
  return movement(ctx, me, type, [&](Thread& t) {
    const std::size_t sent = t.rank() == root ? blocks(t, count) : 0;
    if (is_in_place(recv)) return scatter_in_place(Collective::scatter, send, sent, root);
    return buffers(Collective::scatter, send, sent, recv, count, root);
  });
}

tlc_status alltoall(Ctx& ctx, tlc_participant* me, const void* send, void* recv, size_t count,
                    tlc_datatype type) noexcept {
  if (is_in_place(recv)) return reject_in_place(ctx, me, "recv");
  return movement(ctx, me, type, [&](Thread& t) {
    if (is_in_place(send)) return in_place(Collective::alltoall, recv, blocks(t, count));
    return buffers(Collective::alltoall, send, blocks(t, count), recv, blocks(t, count));
  });
}

tlc_status allgatherv(Ctx& ctx, tlc_participant* me, const void* send, size_t send_count,
                      void* recv, const size_t* counts, const size_t* displs,
                      tlc_datatype type) noexcept {
  if (is_in_place(recv)) return reject_in_place(ctx, me, "recv");
  return movement(ctx, me, type, [&](Thread& t, VariantLayout& layout) {
    layout.recv_counts = per_rank(counts, t);
    layout.recv_displs = per_rank(displs, t);
    const std::size_t received = extent(layout.recv_counts, layout.recv_displs);
    if (is_in_place(send)) return in_place(Collective::allgatherv, recv, received);
    return buffers(Collective::allgatherv, send, send_count, recv, received);
  });
}

tlc_status gatherv(Ctx& ctx, tlc_participant* me, const void* send, size_t send_count, void* recv,
                   const size_t* counts, const size_t* displs, tlc_datatype type,
                   int root) noexcept {
  if (is_in_place(recv)) return reject_in_place(ctx, me, "recv");
  return movement(ctx, me, type, [&](Thread& t, VariantLayout& layout) {
    if (t.rank() == root) {
      layout.recv_counts = per_rank(counts, t);
      layout.recv_displs = per_rank(displs, t);
    }
    const std::size_t received = extent(layout.recv_counts, layout.recv_displs);
    if (is_in_place(send)) return in_place(Collective::gatherv, recv, received, root);
    return buffers(Collective::gatherv, send, send_count, recv, received, root);
  });
}

tlc_status scatterv(Ctx& ctx, tlc_participant* me, const void* send, const size_t* counts,
                    const size_t* displs, void* recv, size_t recv_count, tlc_datatype type,
                    int root) noexcept {
  if (is_in_place(send)) return reject_in_place(ctx, me, "send");
  return movement(ctx, me, type, [&](Thread& t, VariantLayout& layout) {
    if (t.rank() == root) {
      layout.send_counts = per_rank(counts, t);
      layout.send_displs = per_rank(displs, t);
    }
    const std::size_t sent = extent(layout.send_counts, layout.send_displs);
    if (is_in_place(recv)) return scatter_in_place(Collective::scatterv, send, sent, root);
    return buffers(Collective::scatterv, send, sent, recv, recv_count, root);
  });
}

tlc_status alltoallv(Ctx& ctx, tlc_participant* me, const void* send, const size_t* send_counts,
                     const size_t* send_displs, void* recv, const size_t* recv_counts,
                     const size_t* recv_displs, tlc_datatype type) noexcept {
  if (is_in_place(send)) return reject_in_place(ctx, me, "send");
  if (is_in_place(recv)) return reject_in_place(ctx, me, "recv");
  return movement(ctx, me, type, [&](Thread& t, VariantLayout& layout) {
    layout = {per_rank(send_counts, t), per_rank(send_displs, t), per_rank(recv_counts, t),
              per_rank(recv_displs, t)};
    return buffers(Collective::alltoallv, send, extent(layout.send_counts, layout.send_displs),
                   recv, extent(layout.recv_counts, layout.recv_displs));
  });
}

}  // namespace
}  // namespace tlc::capi

using namespace tlc;
using namespace tlc::capi;

extern "C" {

TLC_C_FORMS(barrier, (tlc_participant * me), (me))
TLC_C_FORMS(bcast, (tlc_participant * me, void* buf, size_t count, tlc_datatype type, int root),
            (me, buf, count, type, root))
TLC_C_PAIR_FORMS(allgather)
TLC_C_ROOTED_FORMS(gather)
TLC_C_ROOTED_FORMS(scatter)
TLC_C_PAIR_FORMS(alltoall)
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
