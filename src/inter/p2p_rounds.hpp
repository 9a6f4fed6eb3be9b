// tlc's point-to-point algorithms (inter/p2p.hpp) as persistent MPI requests, for the persistent
// thread collectives between processes (algo/posted/) whose processes each hold one thread.
//
// MPI's persistent collectives (MPI 4) run the MPI library's own schedule of the collective on
// every start, and Open MPI 4.1 has none (tlc then posts the nonblocking collective every
// round). The blocking calls of such teams run tlc's own algorithms, which are faster here for
// small messages and for alltoall (docs/mpi.md), so a persistent call that ran MPI's collective
// cost more per call than the blocking one. These rounds run the blocking calls' algorithms:
// made once, at the first start, as rounds of persistent point-to-point requests
// (MPI_Send_init / MPI_Recv_init), so that a start does no set-up at all:
//   start: copy the input where the algorithm reads it, start round 0 (MPI_Startall);
//   test:  when the round in flight is complete, combine what it received and start the next
//          one; done after the last.
// Every process makes the same number of rounds objects on a communicator in the same order
// (persistent calls are started in one order everywhere), so each object takes the next tag of
// its communicator: the messages of two calls in flight at once are never confused, whatever
// order their rounds go in on different processes.
//
// Nonblocking calls run the same rounds made one-shot: the same messages, posted as MPI_Isend /
// MPI_Irecv at each round's start with the tag of the call that starts them (its place in the
// order of posted calls), so that one object serves every later call with the same buffers and
// layout (reusable()) without binding a tag.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <memory>
#include <span>
#include <vector>

#include <mpi.h>

#include <tlc/detail/call.hpp>

namespace tlc::detail {

class PointToPointRounds {
 public:
  // buf (count elements of call's type) becomes the reduction of every process's send (send ==
  // buf: in place): the steps of p2p::recursive_doubling_allreduce (any op) or, with
  // `rabenseifner`, of p2p::rabenseifner_allreduce (commutative ops), with the input apart as
  // they take it, in the same order of combining, so the result is bitwise that of the
  // blocking call with the same algorithm.
  // tag < 0: one-shot (the tag is start's).
  static std::unique_ptr<PointToPointRounds> allreduce(MPI_Comm comm, int tag,
                                                       const std::byte* send, std::byte* buf,
                                                       std::size_t count, const Call& call,
                                                       bool rabenseifner);
  // buf (bytes) from process root to every process: the unsegmented binomial tree of
  // p2p::binomial_bcast (a receive from the parent, then the sends to every child).
  static std::unique_ptr<PointToPointRounds> bcast(MPI_Comm comm, int tag, std::byte* buf,
                                                   std::size_t bytes, int root);
  // Bytes per process in MPI's alltoallv layout: one round with every message of
  // p2p::isend_alltoallv; the own block is copied at each start. send and recv separate.
  static std::unique_ptr<PointToPointRounds> alltoallv(
      MPI_Comm comm, int tag, const std::byte* send, std::span<const MPI_Count> send_bytes,
      std::span<const MPI_Aint> send_displs, std::byte* recv, std::span<const MPI_Count> recv_bytes,
      std::span<const MPI_Aint> recv_displs);
  PointToPointRounds(const PointToPointRounds&) = delete;
  PointToPointRounds& operator=(const PointToPointRounds&) = delete;
  // Frees the requests (inactive then, unless a failure ended the job's calls).
  ~PointToPointRounds();

  // Whether these rounds move the data of these buffers (made for them).
  bool made_for(const void* send, const void* recv) const noexcept {
    return send == send_ && recv == buf_;
  }
  // One-shot rounds that serve a call with these buffers and this layout (the factory's
  // arguments, as layout_key() words them).
  bool reusable(const void* send, const void* recv,
                std::span<const std::int64_t> layout) const noexcept {
    return one_shot() && made_for(send, recv) && std::ranges::equal(layout, layout_);
  }
  bool one_shot() const noexcept { return tag_ < 0; }
  // Starts the call (round 0); the allreduce combines with this op (its object may move
  // between starts). One-shot rounds send and receive with `tag`.
  void start(CombineFn combine = nullptr, const void* op_object = nullptr, int tag = -1);
  // What a factory's arguments make: the words reusable() compares.
  static std::vector<std::int64_t> allreduce_key(std::size_t count, std::size_t element,
                                                 bool rabenseifner);
  static std::vector<std::int64_t> bcast_key(std::size_t bytes, int root);
  static std::vector<std::int64_t> alltoallv_key(std::span<const MPI_Count> send_bytes,
                                                 std::span<const MPI_Aint> send_displs,
                                                 std::span<const MPI_Count> recv_bytes,
                                                 std::span<const MPI_Aint> recv_displs);
  // Advances the call; true once its last round is complete. A combine that threw is rethrown
  // then, after the remaining rounds ran without combining (the other processes still get their
  // messages, and nobody waits forever).
  bool test(const char* what);

 private:
  struct Round {
    std::size_t first = 0, end = 0;  // its requests, in requests_
    // After the round: into = into op from (count elements; from_is_lower: from holds the
    // lower ranks' part), or nothing for count 0.
    std::byte* into = nullptr;
    const std::byte* from = nullptr;
    std::size_t count = 0;
    bool from_is_lower = false;
  };
  PointToPointRounds(MPI_Comm comm, int tag) : comm_(comm), tag_(tag) {}
  // While making: a message of this round (none for zero bytes: both ends skip it alike).
  void receive(std::byte* data, std::size_t bytes, int from);
  void send(const std::byte* data, std::size_t bytes, int to);
  // Closes the round being made; with a combine of count elements of from into into.
  void end_round(std::byte* into = nullptr, const std::byte* from = nullptr, std::size_t count = 0,
                 bool from_is_lower = false);
  void start_round(std::size_t r);

  MPI_Comm comm_;
  int tag_;            // of persistent requests; < 0: one-shot
  int start_tag_ = 0;  // one-shot: the tag of the call in flight
  std::vector<MPI_Request> requests_;
  // One-shot: what each request sends or receives, posted at its round's start.
  struct Message {
    std::byte* data = nullptr;
    std::size_t bytes = 0;
    int peer = 0;
    bool receive = false;
  };
  std::vector<Message> messages_;
  std::vector<std::int64_t> layout_;
  std::vector<Round> rounds_;
  std::size_t round_begin_ = 0;  // while making: the first request of the open round
  std::size_t current_ = 0;      // the round in flight (rounds_.size(): none)
  const void* send_ = nullptr;   // the buffers made for
  std::byte* buf_ = nullptr;
  std::vector<std::byte> incoming_;
  // Copied at every start: alltoallv's own block; an allreduce's input apart where a
  // non-power-of-two P folds first.
  const std::byte* own_from_ = nullptr;
  std::byte* own_to_ = nullptr;
  std::size_t own_bytes_ = 0;
  CombineFn combine_ = nullptr;
  const void* op_object_ = nullptr;
  std::exception_ptr combine_error_;
};

}  // namespace tlc::detail
