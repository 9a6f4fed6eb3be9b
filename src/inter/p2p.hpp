// Inter-process algorithms implemented in tlc on point-to-point messages (docs/design.md
// section 6, "multi-sender"; Parsons [Parsons] ch. 2.3.2; algorithms after
// Thakur, Rabenseifner & Gropp [Thakur]; docs/references.md).
//
// Each function runs one algorithm among the processes of `lane` (one rank per process) on a
// buffer in the team's staging memory. A multi-sender collective calls it from several threads
// at once, each on its own lane and on a disjoint part of the data, so several threads move
// bytes between processes concurrently. Every process calls with the same sizes.
//
// Common rules of the implementations:
// - Only MPI_Isend / MPI_Irecv with explicit sources and tags (lanes assert no wildcards),
//   completed through lane.wait_all, so that oversubscribed nodes wait politely.
// - Every process knows every message size, so zero-byte messages are simply not sent: both
//   ends skip the same messages.
// - No shared mutable state: the only memory besides the caller's buffer is per-thread scratch,
//   so calls on different lanes from different threads are independent.
// - Costs use the paper's model ([Thakur] sec. 3): a message of m bytes costs alpha + m*beta,
//   combining m bytes costs m*gamma; P processes, n bytes in the whole vector.
#pragma once

#include <cstddef>
#include <cstdint>
#include <new>
#include <span>
#include <string>

#include <mpi.h>

#include <tlc/error.hpp>
#include <tlc/thread.hpp>

#include "inter/mpi_check.hpp"
#include "inter/mpi_large.hpp"
#include "inter/process_comm.hpp"

namespace tlc::detail::p2p {

// ---- allgather (p2p_allgather.cpp) ----

// In place: process p's block (bytes[p] bytes at buf + displs[p]) ends up on every process.
// Blocks must not overlap. Ring, [Thakur] sec. 4.1: (P-1) alpha + (P-1)/P n beta.
// With own_block, this process's block is read from there (not from buf, where the function
// puts it while its first message travels): the other processes then read the caller's
// input, not a copy just written, which costs them the transfer of every written cache line
// (docs/model.md, "Inputs the partner has just read").
void ring_allgatherv(ProcessComm& lane, std::byte* buf, std::span<const std::size_t> bytes,
                     std::span<const std::size_t> displs, const std::byte* own_block = nullptr);
// The same with equal blocks, block p at buf + p * block_bytes (no per-process arrays to fill:
// the direct allgather's call of small blocks).
void ring_allgather(ProcessComm& lane, std::byte* buf, std::size_t block_bytes,
                    const std::byte* own_block = nullptr);

// In place: block p (block_bytes bytes at buf + p * block_bytes) ends up on every process.
// Bruck, [Thakur] sec. 4.1.2: ceil(lg P) alpha + (P-1)/P n beta plus a local rotation.
void bruck_allgather(ProcessComm& lane, std::byte* buf, std::size_t block_bytes);

// ---- barrier (p2p_barrier.cpp) ----

// Returns once every process of the lane has called it. Dissemination, [Hensgen]:
// ceil(lg P) alpha.
void dissemination_barrier(ProcessComm& lane);

// ---- bcast (p2p_bcast.cpp) ----

// bytes bytes of buf at process `root` are copied to buf of every process. Binomial tree
// ([Thakur] sec. 4.2), pipelined in segments of segment_bytes (0: one segment).
void binomial_bcast(ProcessComm& lane, std::byte* buf, std::size_t bytes, int root,
                    std::size_t segment_bytes);

// ---- gather, scatter (p2p_gather.cpp, p2p_scatter.cpp) ----
// Sizes and displacements are per process, in bytes, and read at the root only.

// At the root, in place: process p's bytes[p] bytes land at recv + displs[p] (its own block is
// already there); elsewhere send_bytes bytes of send go to the root. Linear: (P-1) alpha +
// (P-1)/P n beta at the root.
void linear_gatherv(ProcessComm& lane, const std::byte* send, std::size_t send_bytes,
                    std::byte* recv, std::span<const std::size_t> bytes,
                    std::span<const std::size_t> displs, int root);

// At the root, bytes[p] bytes at send + displs[p] go to process p (its own block stays in send);
// elsewhere recv_bytes bytes arrive in recv. Linear: (P-1) alpha + (P-1)/P n beta at the root.
void linear_scatterv(ProcessComm& lane, const std::byte* send, std::span<const std::size_t> bytes,
                     std::span<const std::size_t> displs, std::byte* recv, std::size_t recv_bytes,
                     int root);
// Both with equal blocks of block_bytes, block p at p * block_bytes of the root's buffer (no
// per-process arrays: the direct gather's and scatter's call of small blocks); elsewhere
// block_bytes bytes of send, or into recv.
void linear_gather(ProcessComm& lane, const std::byte* send, std::byte* recv,
                   std::size_t block_bytes, int root);
void linear_scatter(ProcessComm& lane, const std::byte* send, std::byte* recv,
                    std::size_t block_bytes, int root);

// ---- alltoall (p2p_alltoall.cpp) ----
// send_bytes[j] bytes from send + send_displs[j] go to process j, which receives them at
// recv + recv_displs[i] (recv_bytes[i] == what process i sends it). send and recv must not
// overlap, except that the own block may be the same memory (it is then left alone).

// Pairwise exchange, [Thakur] sec. 4.3: (P-1) alpha + n beta, one partner per step.
void pairwise_alltoallv(ProcessComm& lane, const std::byte* send,
                        std::span<const std::size_t> send_bytes,
                        std::span<const std::size_t> send_displs, std::byte* recv,
                        std::span<const std::size_t> recv_bytes,
                        std::span<const std::size_t> recv_displs);

// The same with equal blocks, block p at p * block_bytes on both sides (no per-process arrays:
// the direct alltoall's call of small blocks).
void pairwise_alltoall(ProcessComm& lane, const std::byte* send, std::byte* recv,
                       std::size_t block_bytes);

// All receives and sends posted at once, [Thakur] sec. 4.3 (MPICH's medium-size alltoall).
void isend_alltoallv(ProcessComm& lane, const std::byte* send,
                     std::span<const std::size_t> send_bytes,
                     std::span<const std::size_t> send_displs, std::byte* recv,
                     std::span<const std::size_t> recv_bytes,
                     std::span<const std::size_t> recv_displs);
// The same with equal blocks.
void isend_alltoall(ProcessComm& lane, const std::byte* send, std::byte* recv,
                    std::size_t block_bytes);

// ---- fragments: messages gathered from several buffers (p2p_alltoall.cpp) ----
// The alltoall led by arrival (algo/arrival/alltoall.cpp) sends the blocks of several threads for
// one destination in one message, and its receiver does not know in advance how the sender grouped
// them ([Parsons] section 3.7.3, opportunistic fragmentation).

// The blocks of block_bytes bytes at one offset of each buffer of `sources`, in order, as one
// message: a derived datatype whose displacements are the buffers' addresses relative to the
// first, so that one type serves every offset (every destination) and nothing is copied. The
// buffers must stay untouched until the sends complete. One source: plain sends.
class GatheredBlocks {
 public:
  GatheredBlocks(ProcessComm& lane, std::span<const std::byte* const> sources,
                 std::size_t block_bytes);
  ~GatheredBlocks();  // MPI keeps the type alive for sends still in flight
  GatheredBlocks(const GatheredBlocks&) = delete;
  GatheredBlocks& operator=(const GatheredBlocks&) = delete;
  void isend(std::size_t offset, int to, int tag, MPI_Request& request);

 private:
  ProcessComm& lane_;
  const std::byte* first_ = nullptr;
  std::size_t block_bytes_ = 0;
  MPI_Datatype type_ = MPI_DATATYPE_NULL;  // null: one source (or nothing to send)
};

// If a message from process `from` with `tag` has arrived, posts its receive into data and
// returns its length in bytes; otherwise posts nothing and returns 0 (zero-byte messages are
// never sent). Throws Error(mismatch) for a message longer than `capacity` (the processes
// disagree about the call) or whose length is not a multiple of `unit`.
std::size_t irecv_arrived(ProcessComm& lane, std::byte* data, std::size_t capacity,
                          std::size_t unit, int from, int tag, MPI_Request& request);

// Whether every request has completed (MPI_Testall; completed ones become MPI_REQUEST_NULL).
bool test_all(ProcessComm& lane, std::span<MPI_Request> requests, const char* what);

// ---- one message received as it arrives (p2p_receive.cpp) ----

// Receives one message of `bytes` bytes from process `from` with `tag` into data and returns
// once it is there. Where MPI takes such messages faster (mpi_takes_arrived_messages_faster), a
// message that has already arrived and went by the eager protocol (at most MPI's eager limit,
// mpi_default_eager_bytes) is taken at once by a blocking MPI_Mrecv, which waits for nothing
// but the message's own bytes; any other message is received by MPI_Irecv completed in the
// lane's watched wait. Why: in back-to-back calls the sender streams its messages and each has
// arrived before its receive is posted, and there MPICH's posted receive completed by MPI_Test
// took up to several times as long as the blocking receive of a message found by a probe
// (docs/reliability.md, "At c742c11"); a receive that waits for its message
// pays one probe more. Not when tlc serialises its MPI calls (a blocking call would hold the
// lock every other thread's MPI call needs).
void receive(ProcessComm& lane, std::byte* data, std::size_t bytes, int from, int tag,
             const char* what);

// ---- reductions (p2p_reduce.cpp) ----
// Counts are in elements of call.type; elements are combined with call.combine.

// buf holds sum(counts) elements, process blocks in rank order. On return this process's block
// (counts[rank] elements at the sum of the counts of lower processes) holds the element-wise
// reduction of that block over all processes; the other blocks are left as they were.
// Commutative ops only (throws tlc::Error(invalid_argument) otherwise, on every process).
// Pairwise exchange, [Thakur] sec. 4.4.
void pairwise_reduce_scatter(ProcessComm& lane, std::byte* buf, std::span<const std::size_t> counts,
                             const Call& call);
// The same with this process's block of the result in `own` (count[rank] elements; own may be
// its block in buf), buf only read: the direct form's, on the caller's buffers.
void pairwise_reduce_scatter(ProcessComm& lane, const std::byte* buf, std::byte* own,
                             std::span<const std::size_t> counts, const Call& call);

// In place (send == buf; the overloads without send): buf (count elements) becomes op over
// processes 0..P-1 in rank order, bitwise the same on every process; any op, non-commutative
// ones included. With the input apart (send, only read) the first exchange sends it from where
// it is and receives the partner's vector into buf, so the input is never copied (but for a
// non-power-of-two P, which folds first: copied into buf). Recursive doubling with the
// extra processes of a non-power-of-two P folded first, [Thakur] sections 4.5 and 5.1.
void recursive_doubling_allreduce(ProcessComm& lane, const std::byte* send, std::byte* buf,
                                  std::size_t count, const Call& call);
inline void recursive_doubling_allreduce(ProcessComm& lane, std::byte* buf, std::size_t count,
                                         const Call& call) {
  recursive_doubling_allreduce(lane, buf, buf, count, call);
}

// In place: buf (count elements) becomes the reduction over all processes, bitwise the same on
// every process (input apart: as recursive doubling, the first halving step reads send).
// Reduce-scatter by recursive vector halving, then allgather by recursive vector
// doubling (Rabenseifner), [Thakur] sec. 5.1. Commutative ops only (throws
// tlc::Error(invalid_argument) otherwise, on every process).
void rabenseifner_allreduce(ProcessComm& lane, const std::byte* send, std::byte* buf,
                            std::size_t count, const Call& call);
inline void rabenseifner_allreduce(ProcessComm& lane, std::byte* buf, std::size_t count,
                                   const Call& call) {
  rabenseifner_allreduce(lane, buf, buf, count, call);
}

// In place: at process `root` buf (count elements) becomes op over processes 0..P-1 in rank
// order, any op; elsewhere buf is used as the accumulator and left undefined. Binomial tree
// towards process 0 ([Thakur] sec. 4.2 run backwards), then one message to the root if it is not
// process 0, so that every subtree is a contiguous run of ranks and the fold keeps rank order:
// ceil(lg P) (alpha + n beta + n gamma), plus alpha + n beta for a root other than 0. Sent in
// segments of segment_bytes (0: one segment): a receiver folds each segment while it is still in
// its cache, and while the next one travels where the transport moves data without it.
void binomial_reduce(ProcessComm& lane, std::byte* buf, std::size_t count, const Call& call,
                     int root, std::size_t segment_bytes);
// The same with this process's input apart (send, only read; send == buf: as above): buf is then
// only an accumulator, written by the processes that receive (at the root: the result), and a
// process that only sends sends its input without copying it.
void binomial_reduce(ProcessComm& lane, const std::byte* send, std::byte* buf, std::size_t count,
                     const Call& call, int root, std::size_t segment_bytes);

// recv (count elements) becomes op over the send vectors of processes 0..rank (scan) or
// 0..rank-1 (exclusive: exscan; recv is left as it was on process 0), in rank order, any op.
// send may be recv (in place). Recursive doubling, [Thakur] sec. 4: ceil(lg P) (alpha + n beta
// + 2 n gamma), sending only the messages a later step needs (one message at P = 2).
void recursive_doubling_scan(ProcessComm& lane, const std::byte* send, std::byte* recv,
                             std::size_t count, const Call& call, bool exclusive);

// The segments tlc's reductions use: small enough to be folded while in the cache, large enough
// that the messages' start-ups stay small against their bytes.
inline constexpr std::size_t binomial_reduce_segment_bytes = 256 * 1024;

// ---- helpers shared by the implementations ----
namespace util {

// The steps of tlc's algorithms, which keep their messages apart on one lane. A message's tag
// (wire_tag) is its step together with what its call is and the message's own size, so that a
// message of a call that disagrees with the receiver's (another collective, count, op, element
// type or root) never matches: the receiver waits instead of taking wrong data or failing on a
// truncated message, and the long-wait comparison (team/process_failures.hpp) names both calls.
enum class Tag : int {
  ring_allgather = 1,
  bruck_allgather,
  bcast,
  pairwise_alltoall,
  isend_alltoall,
  reduce_scatter,
  recursive_doubling,
  recursive_doubling_fold,
  recursive_doubling_unfold,
  rabenseifner_fold,
  rabenseifner_fold_result,
  rabenseifner_halving,
  rabenseifner_doubling,
  rabenseifner_unfold,
  binomial_reduce,
  binomial_reduce_to_root,
  barrier,
  scan,
  gather,
  scatter,
  posted_call,  // a nonblocking call's one-shot rounds (inter/p2p_rounds.hpp)
};

static_assert(static_cast<int>(Tag::posted_call) < 32, "a step must fit ProcessComm::step_bits");

// What a call is, as far as the processes must agree on it: its collective, and for reductions
// its built-in op and element type, and its root. (A user op's function differs in address from
// process to process and is left out; TLC_CHECK compares it.)
inline std::uint64_t call_word(const Call& call) noexcept {
  return static_cast<std::uint64_t>(call.collective) | static_cast<std::uint64_t>(call.op) << 8 |
         static_cast<std::uint64_t>(call.type.type_class) << 16 |
         static_cast<std::uint64_t>(call.type.size) << 24 |
         static_cast<std::uint64_t>(static_cast<std::uint16_t>(call.root + 1)) << 32;
}
// A root among the processes of the lane (bits of their own beside call_word's): what the
// messages of a movement carry beside their sizes, and a reduction's beside its call.
inline std::uint64_t root_word(int root) noexcept {
  return static_cast<std::uint64_t>(static_cast<std::uint16_t>(root + 1)) << 48;
}

// A step and the word of its call.
struct MessageTag {
  Tag step;
  std::uint64_t call = 0;
  MessageTag(Tag s, std::uint64_t c = 0) noexcept : step(s), call(c) {}  // NOLINT: a Tag is one
};

// The tag on the wire of a message of `bytes` bytes.
inline int wire_tag(const ProcessComm& lane, MessageTag tag, std::size_t bytes) noexcept {
  return lane.message_tag(static_cast<int>(tag.step),
                          tag.call * 0x9e3779b97f4a7c15ULL + static_cast<std::uint64_t>(bytes));
}

// v mod size for v in [-size, 2 size), without the division of %.
inline int wrap(int v, int size) noexcept { return v < 0 ? v + size : v >= size ? v - size : v; }

// A per-process array (sizes, displacements) must have one entry per process of the lane. Every
// process passes the same shapes, so a wrong one throws on every process alike and nobody hangs.
inline void expect_per_process(std::span<const std::size_t> values, const ProcessComm& lane,
                               const char* what) {
  if (values.size() != static_cast<std::size_t>(lane.size()))
    throw Error(Errc::invalid_argument, std::string("tlc: p2p ") + what + " has " +
                                            std::to_string(values.size()) + " entries for " +
                                            std::to_string(lane.size()) + " processes");
}

// A root must be a process of the lane; every process passes the same root, so a wrong one
// throws on every process alike.
inline void expect_root(int root, const ProcessComm& lane, const char* what) {
  if (root < 0 || root >= lane.size())
    throw Error(Errc::invalid_argument, std::string("tlc: p2p ") + what + " root " +
                                            std::to_string(root) + " out of range for " +
                                            std::to_string(lane.size()) + " processes");
}

// Posts a send of `bytes` bytes, or leaves `request` as MPI_REQUEST_NULL (which wait_all
// accepts) when there is nothing to send.
inline void isend(ProcessComm& lane, const void* data, std::size_t bytes, int to, int tag,
                  MPI_Request& request) {
  request = MPI_REQUEST_NULL;
  if (bytes == 0) return;
  auto lock = lane.serialize();
  check_mpi(
      large::isend(data, static_cast<MPI_Count>(bytes), MPI_BYTE, to, tag, lane.get(), &request),
      "MPI_Isend");
}

inline void irecv(ProcessComm& lane, void* data, std::size_t bytes, int from, int tag,
                  MPI_Request& request) {
  request = MPI_REQUEST_NULL;
  if (bytes == 0) return;
  auto lock = lane.serialize();
  check_mpi(
      large::irecv(data, static_cast<MPI_Count>(bytes), MPI_BYTE, from, tag, lane.get(), &request),
      "MPI_Irecv");
}

// The same for the messages of tlc's algorithms: the tag says what the message is (wire_tag).
inline void isend(ProcessComm& lane, const void* data, std::size_t bytes, int to, MessageTag tag,
                  MPI_Request& request) {
  isend(lane, data, bytes, to, wire_tag(lane, tag, bytes), request);
}
inline void irecv(ProcessComm& lane, void* data, std::size_t bytes, int from, MessageTag tag,
                  MPI_Request& request) {
  irecv(lane, data, bytes, from, wire_tag(lane, tag, bytes), request);
}

// Per-thread scratch memory, 64-byte aligned (enough for any element type a combine function
// casts to), grown on demand and kept for the thread's lifetime: lane threads are long-lived,
// so in steady state the algorithms allocate nothing. `slot` separates buffers that one call
// uses at the same time. The contents are not preserved across calls.
inline std::byte* scratch(std::size_t bytes, int slot = 0) {
  struct Buffer {
    std::byte* data = nullptr;
    std::size_t size = 0;
    Buffer() = default;
    Buffer(const Buffer&) = delete;
    Buffer& operator=(const Buffer&) = delete;
    ~Buffer() {
      if (data) ::operator delete[](data, std::align_val_t{64});
    }
  };
  thread_local Buffer buffers[2];
  Buffer& b = buffers[slot];
  if (b.size < bytes) {
    if (b.data) ::operator delete[](b.data, std::align_val_t{64});
    b.data = nullptr;
    b.size = 0;
    b.data = static_cast<std::byte*>(::operator new[](bytes, std::align_val_t{64}));
    b.size = bytes;
  }
  return b.data;
}

}  // namespace util

// receive() of a message of tlc's algorithms (util::wire_tag).
inline void receive(ProcessComm& lane, std::byte* data, std::size_t bytes, int from,
                    util::MessageTag tag, const char* what) {
  receive(lane, data, bytes, from, util::wire_tag(lane, tag, bytes), what);
}

}  // namespace tlc::detail::p2p
