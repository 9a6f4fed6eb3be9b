// The MPI-4 large-count calls tlc makes (MPI_Bcast_c, ...), under names of its own, so that tlc
// also builds against MPI-3.1 libraries such as Open MPI 4.1. With MPI 4 they are the library's
// own calls. Before MPI 4 they call the int-count forms when every count and displacement fits
// in an int, and otherwise fail with Error(unsupported) naming the call: one MPI step of 2^31
// elements or more needs an MPI-4 library.
//
// The v-variants' int arrays must stay valid until a non-blocking call completes: they live in
// the IntCopies of the operation being posted (inter/posted_op.hpp), which int_copies_for()
// names while the call is posted.
#pragma once

#include <mpi.h>

#include <climits>
#include <cstddef>
#include <span>
#include <string>
#include <vector>

#include <tlc/error.hpp>

namespace tlc::detail::large {

// Int copies of count and displacement arrays (MPI-3 libraries only; unused with MPI 4).
struct IntCopies {
  std::vector<int> arrays[4];
};
// The copies of the operation the calling thread is posting (set around the MPI call).
inline IntCopies*& int_copies_for() {
  thread_local IntCopies* copies = nullptr;
  return copies;
}

#if MPI_VERSION >= 4

inline int ibcast(void* b, MPI_Count n, MPI_Datatype t, int root, MPI_Comm c, MPI_Request* r) {
  return MPI_Ibcast_c(b, n, t, root, c, r);
}
inline int iallreduce(const void* s, void* b, MPI_Count n, MPI_Datatype t, MPI_Op o, MPI_Comm c,
                      MPI_Request* r) {
  return MPI_Iallreduce_c(s, b, n, t, o, c, r);
}
inline int ireduce(const void* s, void* b, MPI_Count n, MPI_Datatype t, MPI_Op o, int root,
                   MPI_Comm c, MPI_Request* r) {
  return MPI_Ireduce_c(s, b, n, t, o, root, c, r);
}
inline int ireduce_scatter(const void* s, void* b, const MPI_Count* n, MPI_Datatype t, MPI_Op o,
                           MPI_Comm c, MPI_Request* r) {
  return MPI_Ireduce_scatter_c(s, b, n, t, o, c, r);
}
inline int ireduce_scatter_block(const void* s, void* b, MPI_Count n, MPI_Datatype t, MPI_Op o,
                                 MPI_Comm c, MPI_Request* r) {
  return MPI_Ireduce_scatter_block_c(s, b, n, t, o, c, r);
}
inline int iexscan(const void* s, void* b, MPI_Count n, MPI_Datatype t, MPI_Op o, MPI_Comm c,
                   MPI_Request* r) {
  return MPI_Iexscan_c(s, b, n, t, o, c, r);
}
inline int iallgather(const void* s, MPI_Count sn, MPI_Datatype st, void* b, MPI_Count n,
                      MPI_Datatype t, MPI_Comm c, MPI_Request* r) {
  return MPI_Iallgather_c(s, sn, st, b, n, t, c, r);
}
inline int ialltoall(const void* s, MPI_Count sn, MPI_Datatype st, void* b, MPI_Count n,
                     MPI_Datatype t, MPI_Comm c, MPI_Request* r) {
  return MPI_Ialltoall_c(s, sn, st, b, n, t, c, r);
}
inline int iallgatherv(const void* s, MPI_Count sn, MPI_Datatype st, void* b, const MPI_Count* n,
                       const MPI_Aint* d, MPI_Datatype t, MPI_Comm c, MPI_Request* r) {
  return MPI_Iallgatherv_c(s, sn, st, b, n, d, t, c, r);
}
inline int igatherv(const void* s, MPI_Count sn, MPI_Datatype st, void* b, const MPI_Count* n,
                    const MPI_Aint* d, MPI_Datatype t, int root, MPI_Comm c, MPI_Request* r) {
  return MPI_Igatherv_c(s, sn, st, b, n, d, t, root, c, r);
}
inline int iscatterv(const void* s, const MPI_Count* sn, const MPI_Aint* sd, MPI_Datatype st,
                     void* b, MPI_Count n, MPI_Datatype t, int root, MPI_Comm c, MPI_Request* r) {
  return MPI_Iscatterv_c(s, sn, sd, st, b, n, t, root, c, r);
}
inline int ialltoallv(const void* s, const MPI_Count* sn, const MPI_Aint* sd, MPI_Datatype st,
                      void* b, const MPI_Count* n, const MPI_Aint* d, MPI_Datatype t, MPI_Comm c,
                      MPI_Request* r) {
  return MPI_Ialltoallv_c(s, sn, sd, st, b, n, d, t, c, r);
}
inline int isend(const void* b, MPI_Count n, MPI_Datatype t, int to, int tag, MPI_Comm c,
                 MPI_Request* r) {
  return MPI_Isend_c(b, n, t, to, tag, c, r);
}
inline int irecv(void* b, MPI_Count n, MPI_Datatype t, int from, int tag, MPI_Comm c,
                 MPI_Request* r) {
  return MPI_Irecv_c(b, n, t, from, tag, c, r);
}
inline int imrecv(void* b, MPI_Count n, MPI_Datatype t, MPI_Message* m, MPI_Request* r) {
  return MPI_Imrecv_c(b, n, t, m, r);
}
// Persistent point-to-point requests (every MPI has them; large counts since MPI 4).
inline int send_init(const void* b, MPI_Count n, MPI_Datatype t, int to, int tag, MPI_Comm c,
                     MPI_Request* r) {
  return MPI_Send_init_c(b, n, t, to, tag, c, r);
}
inline int recv_init(void* b, MPI_Count n, MPI_Datatype t, int from, int tag, MPI_Comm c,
                     MPI_Request* r) {
  return MPI_Recv_init_c(b, n, t, from, tag, c, r);
}
// The number of elements of type t a probed message holds (MPI_UNDEFINED: not a whole number).
inline int get_count(const MPI_Status* s, MPI_Datatype t, MPI_Count* n) {
  return MPI_Get_count_c(s, t, n);
}

// MPI 4's persistent collectives: made once, then started with MPI_Start for every round.
inline constexpr bool persistent_collectives = true;
inline int barrier_init(MPI_Comm c, MPI_Request* r) {
  return MPI_Barrier_init(c, MPI_INFO_NULL, r);
}
inline int bcast_init(void* b, MPI_Count n, MPI_Datatype t, int root, MPI_Comm c, MPI_Request* r) {
  return MPI_Bcast_init_c(b, n, t, root, c, MPI_INFO_NULL, r);
}
inline int allreduce_init(const void* s, void* b, MPI_Count n, MPI_Datatype t, MPI_Op o, MPI_Comm c,
                          MPI_Request* r) {
  return MPI_Allreduce_init_c(s, b, n, t, o, c, MPI_INFO_NULL, r);
}
inline int reduce_init(const void* s, void* b, MPI_Count n, MPI_Datatype t, MPI_Op o, int root,
                       MPI_Comm c, MPI_Request* r) {
  return MPI_Reduce_init_c(s, b, n, t, o, root, c, MPI_INFO_NULL, r);
}
inline int reduce_scatter_init(const void* s, void* b, const MPI_Count* n, MPI_Datatype t, MPI_Op o,
                               MPI_Comm c, MPI_Request* r) {
  return MPI_Reduce_scatter_init_c(s, b, n, t, o, c, MPI_INFO_NULL, r);
}
inline int reduce_scatter_block_init(const void* s, void* b, MPI_Count n, MPI_Datatype t, MPI_Op o,
                                     MPI_Comm c, MPI_Request* r) {
  return MPI_Reduce_scatter_block_init_c(s, b, n, t, o, c, MPI_INFO_NULL, r);
}
inline int exscan_init(const void* s, void* b, MPI_Count n, MPI_Datatype t, MPI_Op o, MPI_Comm c,
                       MPI_Request* r) {
  return MPI_Exscan_init_c(s, b, n, t, o, c, MPI_INFO_NULL, r);
}
inline int allgatherv_init(const void* s, MPI_Count sn, MPI_Datatype st, void* b,
                           const MPI_Count* n, const MPI_Aint* d, MPI_Datatype t, MPI_Comm c,
                           MPI_Request* r) {
  return MPI_Allgatherv_init_c(s, sn, st, b, n, d, t, c, MPI_INFO_NULL, r);
}
inline int gatherv_init(const void* s, MPI_Count sn, MPI_Datatype st, void* b, const MPI_Count* n,
                        const MPI_Aint* d, MPI_Datatype t, int root, MPI_Comm c, MPI_Request* r) {
  return MPI_Gatherv_init_c(s, sn, st, b, n, d, t, root, c, MPI_INFO_NULL, r);
}
inline int scatterv_init(const void* s, const MPI_Count* sn, const MPI_Aint* sd, MPI_Datatype st,
                         void* b, MPI_Count n, MPI_Datatype t, int root, MPI_Comm c,
                         MPI_Request* r) {
  return MPI_Scatterv_init_c(s, sn, sd, st, b, n, t, root, c, MPI_INFO_NULL, r);
}
inline int alltoallv_init(const void* s, const MPI_Count* sn, const MPI_Aint* sd, MPI_Datatype st,
                          void* b, const MPI_Count* n, const MPI_Aint* d, MPI_Datatype t,
                          MPI_Comm c, MPI_Request* r) {
  return MPI_Alltoallv_init_c(s, sn, sd, st, b, n, d, t, c, MPI_INFO_NULL, r);
}

#else  // MPI 3.x: int counts

[[noreturn]] inline void too_large(const char* what) {
  throw Error(Errc::unsupported,
              std::string("tlc: ") + what +
                  " of 2^31 elements or more in one MPI step needs an MPI-4 library (large "
                  "counts); this MPI is " +
                  std::to_string(MPI_VERSION) + "." + std::to_string(MPI_SUBVERSION));
}
template <class N>
int fit(N n, const char* what) {
  if (n < 0 || n > static_cast<N>(INT_MAX)) too_large(what);
  return static_cast<int>(n);
}
// The int copy of a count or displacement array of the communicator's size, kept in the
// operation's IntCopies (see the file comment).
template <class N>
const int* fit_all(const N* values, MPI_Comm c, int slot, const char* what) {
  thread_local IntCopies fallback;
  IntCopies* copies = int_copies_for() ? int_copies_for() : &fallback;
  int size = 0;
  MPI_Comm_size(c, &size);
  std::vector<int>& out = copies->arrays[slot];
  out.resize(static_cast<std::size_t>(size));
  for (int p = 0; p < size; ++p) out[static_cast<std::size_t>(p)] = fit(values[p], what);
  return out.data();
}

inline int ibcast(void* b, MPI_Count n, MPI_Datatype t, int root, MPI_Comm c, MPI_Request* r) {
  return MPI_Ibcast(b, fit(n, "MPI_Ibcast"), t, root, c, r);
}
inline int iallreduce(const void* s, void* b, MPI_Count n, MPI_Datatype t, MPI_Op o, MPI_Comm c,
                      MPI_Request* r) {
  return MPI_Iallreduce(s, b, fit(n, "MPI_Iallreduce"), t, o, c, r);
}
inline int ireduce(const void* s, void* b, MPI_Count n, MPI_Datatype t, MPI_Op o, int root,
                   MPI_Comm c, MPI_Request* r) {
  return MPI_Ireduce(s, b, fit(n, "MPI_Ireduce"), t, o, root, c, r);
}
inline int ireduce_scatter(const void* s, void* b, const MPI_Count* n, MPI_Datatype t, MPI_Op o,
                           MPI_Comm c, MPI_Request* r) {
  return MPI_Ireduce_scatter(s, b, fit_all(n, c, 0, "MPI_Ireduce_scatter"), t, o, c, r);
}
inline int ireduce_scatter_block(const void* s, void* b, MPI_Count n, MPI_Datatype t, MPI_Op o,
                                 MPI_Comm c, MPI_Request* r) {
  return MPI_Ireduce_scatter_block(s, b, fit(n, "MPI_Ireduce_scatter_block"), t, o, c, r);
}
inline int iexscan(const void* s, void* b, MPI_Count n, MPI_Datatype t, MPI_Op o, MPI_Comm c,
                   MPI_Request* r) {
  return MPI_Iexscan(s, b, fit(n, "MPI_Iexscan"), t, o, c, r);
}
inline int iallgather(const void* s, MPI_Count sn, MPI_Datatype st, void* b, MPI_Count n,
                      MPI_Datatype t, MPI_Comm c, MPI_Request* r) {
  return MPI_Iallgather(s, fit(sn, "MPI_Iallgather"), st, b, fit(n, "MPI_Iallgather"), t, c, r);
}
inline int ialltoall(const void* s, MPI_Count sn, MPI_Datatype st, void* b, MPI_Count n,
                     MPI_Datatype t, MPI_Comm c, MPI_Request* r) {
  return MPI_Ialltoall(s, fit(sn, "MPI_Ialltoall"), st, b, fit(n, "MPI_Ialltoall"), t, c, r);
}
inline int iallgatherv(const void* s, MPI_Count sn, MPI_Datatype st, void* b, const MPI_Count* n,
                       const MPI_Aint* d, MPI_Datatype t, MPI_Comm c, MPI_Request* r) {
  return MPI_Iallgatherv(s, fit(sn, "MPI_Iallgatherv"), st, b, fit_all(n, c, 0, "MPI_Iallgatherv"),
                         fit_all(d, c, 1, "MPI_Iallgatherv"), t, c, r);
}
// Gatherv and scatterv read the arrays at the root only; elsewhere they may be null.
inline int igatherv(const void* s, MPI_Count sn, MPI_Datatype st, void* b, const MPI_Count* n,
                    const MPI_Aint* d, MPI_Datatype t, int root, MPI_Comm c, MPI_Request* r) {
  return MPI_Igatherv(s, fit(sn, "MPI_Igatherv"), st, b,
                      n ? fit_all(n, c, 0, "MPI_Igatherv") : nullptr,
                      d ? fit_all(d, c, 1, "MPI_Igatherv") : nullptr, t, root, c, r);
}
inline int iscatterv(const void* s, const MPI_Count* sn, const MPI_Aint* sd, MPI_Datatype st,
                     void* b, MPI_Count n, MPI_Datatype t, int root, MPI_Comm c, MPI_Request* r) {
  return MPI_Iscatterv(s, sn ? fit_all(sn, c, 0, "MPI_Iscatterv") : nullptr,
                       sd ? fit_all(sd, c, 1, "MPI_Iscatterv") : nullptr, st, b,
                       fit(n, "MPI_Iscatterv"), t, root, c, r);
}
inline int ialltoallv(const void* s, const MPI_Count* sn, const MPI_Aint* sd, MPI_Datatype st,
                      void* b, const MPI_Count* n, const MPI_Aint* d, MPI_Datatype t, MPI_Comm c,
                      MPI_Request* r) {
  return MPI_Ialltoallv(s, fit_all(sn, c, 0, "MPI_Ialltoallv"), fit_all(sd, c, 1, "MPI_Ialltoallv"),
                        st, b, fit_all(n, c, 2, "MPI_Ialltoallv"),
                        fit_all(d, c, 3, "MPI_Ialltoallv"), t, c, r);
}
inline int isend(const void* b, MPI_Count n, MPI_Datatype t, int to, int tag, MPI_Comm c,
                 MPI_Request* r) {
  return MPI_Isend(b, fit(n, "MPI_Isend"), t, to, tag, c, r);
}
inline int irecv(void* b, MPI_Count n, MPI_Datatype t, int from, int tag, MPI_Comm c,
                 MPI_Request* r) {
  return MPI_Irecv(b, fit(n, "MPI_Irecv"), t, from, tag, c, r);
}
inline int imrecv(void* b, MPI_Count n, MPI_Datatype t, MPI_Message* m, MPI_Request* r) {
  return MPI_Imrecv(b, fit(n, "MPI_Imrecv"), t, m, r);
}
inline int send_init(const void* b, MPI_Count n, MPI_Datatype t, int to, int tag, MPI_Comm c,
                     MPI_Request* r) {
  return MPI_Send_init(b, fit(n, "MPI_Send_init"), t, to, tag, c, r);
}
inline int recv_init(void* b, MPI_Count n, MPI_Datatype t, int from, int tag, MPI_Comm c,
                     MPI_Request* r) {
  return MPI_Recv_init(b, fit(n, "MPI_Recv_init"), t, from, tag, c, r);
}
inline int get_count(const MPI_Status* s, MPI_Datatype t, MPI_Count* n) {
  return MPI_Get_elements_x(s, t, n);
}

// Before MPI 4 there are no persistent collectives (Open MPI 4.1 has them only as its MPIX_
// extension): the persistent calls post the nonblocking collective every round, and these names
// exist only so that the code that would make them compiles; nothing calls them.
inline constexpr bool persistent_collectives = false;
template <class... Args>
int no_persistent_collectives(Args...) {
  return MPI_ERR_OTHER;
}
#define TLC_NO_PERSISTENT(name)                \
  template <class... Args>                     \
  int name(Args... args) {                     \
    return no_persistent_collectives(args...); \
  }
TLC_NO_PERSISTENT(barrier_init)
TLC_NO_PERSISTENT(bcast_init)
TLC_NO_PERSISTENT(allreduce_init)
TLC_NO_PERSISTENT(reduce_init)
TLC_NO_PERSISTENT(reduce_scatter_init)
TLC_NO_PERSISTENT(reduce_scatter_block_init)
TLC_NO_PERSISTENT(exscan_init)
TLC_NO_PERSISTENT(allgatherv_init)
TLC_NO_PERSISTENT(gatherv_init)
TLC_NO_PERSISTENT(scatterv_init)
TLC_NO_PERSISTENT(alltoallv_init)
#undef TLC_NO_PERSISTENT

#endif

}  // namespace tlc::detail::large
