// The process-level communicator of a team (one rank per node; with TLC_NODE=process, every
// process) and the MPI collectives leaders run on it, each completed by the team's wait loop.
// The MPI policy, node discovery and the wait loop have files of their own (included here for
// the code that reaches them through this header).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include <mpi.h>

#include <tlc/thread.hpp>

#include "inter/mpi_policy.hpp"
#include "inter/mpi_wait.hpp"
#include "inter/node_comm.hpp"
#include "inter/posted_op.hpp"

namespace tlc::detail {

class ProcessComm {
 public:
  // Duplicates parent (collective over it; see duplicate_comm). A lane communicator carries the
  // hints that tlc never receives from a wildcard there.
  explicit ProcessComm(MPI_Comm parent, bool lane = false);
  ~ProcessComm();
  ProcessComm(const ProcessComm&) = delete;
  ProcessComm& operator=(const ProcessComm&) = delete;

  int rank() const noexcept { return rank_; }
  int size() const noexcept { return size_; }
  MPI_Comm get() const noexcept { return comm_; }

  // A communicator of the processes listed (ranks of this one, in the new one's rank order),
  // made by MPI_Comm_create_group: collective over those processes only, so processes that
  // share several groups must make them in the same order. The caller frees it.
  MPI_Comm create_group(std::span<const int> processes) const;

  std::vector<int> allgather(int value);
  // Every process's `mine` (the same length everywhere), in process order: small data only.
  std::vector<std::int64_t> allgather(std::span<const std::int64_t> mine);
  int allreduce_max(int value);
  // Every process's values at process 0 (in process order; empty elsewhere). Small data only.
  std::vector<std::vector<double>> gather_to_root(std::span<const double> mine);
  // In place: every value becomes its maximum over the processes (one MPI call for several
  // agreements; pass -x as well to get the minimum of x).
  void allreduce_max(std::span<int> values);
  // Collective: if any process passes a non-empty message, every process throws; processes
  // with their own message throw it, the others name the first failing process. Keeps a
  // failure on one process from leaving the others blocked in the next collective.
  void agree_or_throw(const std::string& local_error, int local_code);

  // Every operation is the non-blocking variant completed by this communicator's wait loop
  // (inter/mpi_wait.hpp), polite on oversubscribed nodes and ended by the watch.
  void set_polite(bool polite) noexcept { wait_.set_polite(polite); }
  bool polite() const noexcept { return wait_.polite(); }
  void set_watch(MpiWatch watch) { wait_.set_watch(std::move(watch)); }

  // Completes requests with MPI_Testall in the wait loop. Every request is MPI_REQUEST_NULL on
  // return.
  void wait_all(std::span<MPI_Request> requests, const char* what) {
    wait_.wait_all(requests, what);
  }
  // Completes requests while the caller does local work between the tests (see
  // MpiWait::wait_all_alongside).
  void wait_all_alongside(std::span<MPI_Request> requests, const std::function<bool()>& alongside,
                          const char* what) {
    wait_.wait_all_alongside(requests, alongside, what);
  }

  // The largest tag MPI allows (MPI_TAG_UB; at least 32767).
  int tag_limit() const noexcept { return tag_limit_; }
  // The tag of a message of tlc's algorithms (p2p::util::wire_tag): its step (below 32) in the
  // low bits and a hash of `what` (the call and the message's size) above, under the top bit
  // of the tags MPI allows, which keeps them apart from the tags of the rounds objects (below).
  int message_tag(int step, std::uint64_t what) const noexcept {
    what ^= what >> 31;
    what *= 0x7fb5d329728ea185ULL;
    what ^= what >> 27;
    return message_tag_base_ | static_cast<int>((what & message_tag_mask_) << step_bits) | step;
  }
  // Serialises MPI calls when MPI provides only MPI_THREAD_SERIALIZED (empty lock otherwise);
  // hold it around every MPI call made on this communicator.
  static std::unique_lock<std::mutex> serialize() { return serialize_mpi(); }

  // The collectives leaders run on the team's staging buffers. Data movement is in bytes;
  // reductions take `count` elements of call.type combined with call's op, in process rank
  // order for non-commutative ops. Roots are process ranks. All use MPI-4 large counts.
  void barrier();
  // Adds up `values` across the processes, in place (MPI_SUM of doubles).
  void sum_in_place(std::span<double> values);
  void bcast(void* buf, std::size_t bytes, int root);
  // In place on buf: the reduction of every process's buf.
  void allreduce_in_place(void* buf, std::size_t count, const Call& call) {
    allreduce(nullptr, buf, count, call);
  }
  // recv = the reduction of every process's send (in place when send is null). MPI always runs
  // in place: a send block is first copied into recv.
  void allreduce(const void* send, void* recv, std::size_t count, const Call& call);
  // In place at the root (result in buf there); buf is only read elsewhere.
  void reduce_in_place(void* buf, std::size_t count, const Call& call, int root);
  // send holds sum(counts) elements; this process's block (counts[rank()] elements) of the
  // reduction lands in recv. (Not in place: MPICH 4.0's in-place form memcpys overlapping
  // ranges.)
  void reduce_scatter(const void* send, void* recv, std::span<const MPI_Count> counts,
                      const Call& call);
  // send holds size() blocks of count elements; block rank() of the reduction lands in recv
  // (send and recv separate).
  void reduce_scatter_block(const void* send, void* recv, std::size_t count, const Call& call);
  // In place: buf becomes the reduction over lower processes; undefined on process 0.
  void exscan_in_place(void* buf, std::size_t count, const Call& call);
  // In place: process p's bytes[p] bytes are already at buf + displs[p].
  void allgatherv_in_place(void* buf, std::span<const MPI_Count> bytes,
                           std::span<const MPI_Aint> displs);
  // Every process contributes `bytes` bytes, gathered in rank order into recv (in place, its own
  // block already at recv + rank() * bytes, when send is null). MPI always runs in place.
  void allgather(const void* send, void* recv, std::size_t bytes);
  // Blocks of `bytes` bytes per process, in rank order on both sides; send and recv separate.
  void alltoall(const void* send, void* recv, std::size_t bytes);
  // At the root, in place: its own block is already at recv + displs[root].
  void gatherv(const void* send, std::size_t send_bytes, void* recv,
               std::span<const MPI_Count> bytes, std::span<const MPI_Aint> displs, int root);
  // At the root, in place: its own block stays in send.
  void scatterv(const void* send, std::span<const MPI_Count> bytes,
                std::span<const MPI_Aint> displs, void* recv, std::size_t recv_bytes, int root);
  void alltoallv(const void* send, std::span<const MPI_Count> send_bytes,
                 std::span<const MPI_Aint> send_displs, void* recv,
                 std::span<const MPI_Count> recv_bytes, std::span<const MPI_Aint> recv_displs);

  // The same collectives posted without waiting: op holds the operation until test() finds it
  // complete (or complete() waits for it); every buffer and count array stays the caller's
  // responsibility until then. Calls with nothing to move leave op with no request.
  void post_barrier(PostedOp& op);
  void post_bcast(PostedOp& op, void* buf, std::size_t bytes, int root);
  void post_allreduce(PostedOp& op, const void* send, void* buf, std::size_t count,
                      const Call& call);
  void post_reduce_in_place(PostedOp& op, void* buf, std::size_t count, const Call& call, int root);
  void post_reduce_scatter(PostedOp& op, const void* send, void* recv,
                           std::span<const MPI_Count> counts, const Call& call);
  void post_exscan_in_place(PostedOp& op, void* buf, std::size_t count, const Call& call);
  void post_allgatherv_in_place(PostedOp& op, void* buf, std::span<const MPI_Count> bytes,
                                std::span<const MPI_Aint> displs);
  void post_gatherv(PostedOp& op, const void* send, std::size_t send_bytes, void* recv,
                    std::span<const MPI_Count> bytes, std::span<const MPI_Aint> displs, int root);
  void post_scatterv(PostedOp& op, const void* send, std::span<const MPI_Count> bytes,
                     std::span<const MPI_Aint> displs, void* recv, std::size_t recv_bytes,
                     int root);
  void post_alltoallv(PostedOp& op, const void* send, std::span<const MPI_Count> send_bytes,
                      std::span<const MPI_Aint> send_displs, void* recv,
                      std::span<const MPI_Count> recv_bytes, std::span<const MPI_Aint> recv_displs);
  // One MPI_Test of op (none if it has no request); true once complete, after its copy back
  // (and rethrowing a user op's exception). Not for two threads on one op at once.
  bool test(PostedOp& op);
  // tlc's own algorithms as rounds of point-to-point requests (inter/p2p_rounds.hpp):
  // allreduce (buf = the reduction of send, in place when send is null; recursive doubling or
  // Rabenseifner), the binomial bcast, alltoallv with every message at once. Every process
  // must post the same kind (these rounds or the MPI collective) for one call. `place`: 0 for a
  // persistent call (its rounds made once, on persistent requests, started at every post); else a
  // nonblocking call's place in the order of the posted calls (the same on every process), whose
  // rounds send one-shot messages tagged with it, with what the call is and with bytes every
  // process has alike (an alltoallv's agreed_bytes: an alltoall's block, 0 where the sizes differ),
  // and serve later calls with the same buffers and layout.
  void post_allreduce_rounds(PostedOp& op, const void* send, void* buf, std::size_t count,
                             const Call& c, bool rabenseifner, std::uint64_t place);
  void post_bcast_rounds(PostedOp& op, void* buf, std::size_t bytes, int root, const Call& c,
                         std::uint64_t place);
  void post_alltoallv_rounds(PostedOp& op, const void* send, std::span<const MPI_Count> send_bytes,
                             std::span<const MPI_Aint> send_displs, void* recv,
                             std::span<const MPI_Count> recv_bytes,
                             std::span<const MPI_Aint> recv_displs, const Call& c,
                             std::size_t agreed_bytes, std::uint64_t place);
  // Completes op in the wait loop, then as test().
  void complete(PostedOp& op);
  // Waits in this communicator's wait loop (its pace and its watch: abort, notes from other
  // processes, TLC_TIMEOUT) until done() is true; done() makes its own MPI calls.
  void wait_until(const std::function<bool()>& done, const char* what) {
    wait_.wait_until(done, what);
  }

 private:
  MPI_Comm comm_ = MPI_COMM_NULL;
  int rank_ = 0;
  int size_ = 1;
  MPI_Op user_op_commutative_ = MPI_OP_NULL;
  MPI_Op user_op_ordered_ = MPI_OP_NULL;
  int tag_limit_ = 32767;
  static constexpr int step_bits = 5;
  int message_tag_base_ = 1 << 14;                 // the top bit of tag_limit_
  std::uint64_t message_tag_mask_ = (1 << 9) - 1;  // the bits between it and the step
  // Rounds objects made on this communicator: the next one's tag (inter/p2p_rounds.hpp).
  unsigned rounds_made_ = 0;
  MpiWait wait_;
  // The tag of the next rounds object made on this communicator: every process makes them in
  // the same order, so the tags agree; a wrap after MPI_TAG_UB / 2 objects would only matter for
  // two calls that many apart both in flight.
  int next_rounds_tag() noexcept {
    return static_cast<int>(rounds_made_++ % static_cast<unsigned>(message_tag_base_));
  }
  // Posts the non-blocking form of an MPI call into op (which keeps the int count copies of
  // MPI-3 libraries alive).
  template <class Nonblocking>
  void post(PostedOp& op, const char* what, Nonblocking nonblocking);
  // The same with MPI's persistent form (init makes the request), used for an op set repeated:
  // made at the first post, started at every post.
  template <class Nonblocking, class Init>
  void post(PostedOp& op, const char* what, Nonblocking nonblocking, Init init);
  // Posts the non-blocking form of an MPI call and completes it in the wait loop.
  template <class Nonblocking>
  void call(const char* what, Nonblocking nonblocking);
};

}  // namespace tlc::detail
