// The collectives of the C interface that move data without an op (capi/dispatch.hpp): barrier,
// bcast, allgather, gather, scatter, alltoall and the v-variants, each once for its three forms.
#include "capi/dispatch.hpp"

namespace tlc::capi {
namespace {

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

extern "C" {

TLC_C_FORMS(barrier, (tlc_participant * me), (me))
TLC_C_FORMS(bcast, (tlc_participant * me, void* buf, size_t count, tlc_datatype type, int root),
            (me, buf, count, type, root))
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
