// The rounds of persistent point-to-point requests (inter/p2p_rounds.hpp): the steps of the
// algorithms of p2p_reduce.cpp and p2p_alltoall.cpp, made once. The allreduces' exchanges are
// the blocking calls' own (inter/p2p_exchanges.hpp); the alltoall posts every message at once,
// as p2p::isend_alltoallv does.
#include "inter/p2p_rounds.hpp"

#include <algorithm>
#include <cstring>

#include "inter/mpi_check.hpp"
#include "inter/mpi_large.hpp"
#include "inter/mpi_policy.hpp"
#include "inter/mpi_wait.hpp"
#include "inter/p2p_exchanges.hpp"

namespace tlc::detail {

void PointToPointRounds::receive(std::byte* data, std::size_t bytes, int from) {
  if (bytes == 0) return;
  MPI_Request& r = requests_.emplace_back(MPI_REQUEST_NULL);
  if (one_shot()) {
    messages_.push_back(Message{data, bytes, from, true});
    return;
  }
  auto lock = serialize_mpi();
  check_mpi(large::recv_init(data, static_cast<MPI_Count>(bytes), MPI_BYTE, from, tag_, comm_, &r),
            "MPI_Recv_init");
}

void PointToPointRounds::send(const std::byte* data, std::size_t bytes, int to) {
  if (bytes == 0) return;
  MPI_Request& r = requests_.emplace_back(MPI_REQUEST_NULL);
  if (one_shot()) {  // MPI_Isend takes a const buffer; Message keeps one kind of pointer
    messages_.push_back(Message{const_cast<std::byte*>(data), bytes, to, false});
    return;
  }
  auto lock = serialize_mpi();
  check_mpi(large::send_init(data, static_cast<MPI_Count>(bytes), MPI_BYTE, to, tag_, comm_, &r),
            "MPI_Send_init");
}

void PointToPointRounds::end_round(std::byte* into, const std::byte* from, std::size_t count,
                                   bool from_is_lower) {
  if (requests_.size() > round_begin_ || count != 0)
    rounds_.push_back(Round{round_begin_, requests_.size(), into, from, count, from_is_lower});
  round_begin_ = requests_.size();
}

// Recursive doubling (p2p::recursive_doubling_allreduce) and Rabenseifner
// (p2p::rabenseifner_allreduce): the exchanges of inter/p2p_exchanges.hpp, one round each.
std::unique_ptr<PointToPointRounds> PointToPointRounds::allreduce(MPI_Comm comm, int tag,
                                                                  const std::byte* send,
                                                                  std::byte* buf, std::size_t count,
                                                                  const Call& call,
                                                                  bool rabenseifner) {
  std::unique_ptr<PointToPointRounds> made(new PointToPointRounds(comm, tag));
  PointToPointRounds& m = *made;
  m.send_ = send;
  m.buf_ = buf;
  m.layout_ = allreduce_key(count, call.type.size, rabenseifner);
  int size = 1, rank = 0;
  MPI_Comm_size(comm, &size);
  MPI_Comm_rank(comm, &rank);
  const std::size_t element = call.type.size, bytes = count * element;
  const int extra = size - p2p::floor_power_of_two(size);
  // The input apart is read where it is by the first exchange, unless the fold comes first
  // (then it is copied into buf at every start, as the blocking algorithms copy it).
  if (send != buf && (size == 1 || extra > 0)) {
    m.own_from_ = send;
    m.own_to_ = buf;
    m.own_bytes_ = bytes;
    send = buf;
  }
  if (size == 1 || count == 0) return made;
  auto round_of = [&m](const p2p::Exchange& x) {
    m.receive(x.recv, x.recv_bytes, x.from);
    m.send(x.send, x.send_bytes, x.to);
    m.end_round(x.into, x.operand, x.count, x.operand_is_lower);
  };
  if (rabenseifner) {
    m.incoming_.resize(p2p::rabenseifner_scratch_bytes(size, count, element));
    p2p::rabenseifner_exchanges(rank, size, send, buf, m.incoming_.data(), count, element,
                                round_of);
  } else {
    m.incoming_.resize(p2p::recursive_doubling_scratch_bytes(count, element));
    p2p::recursive_doubling_exchanges(rank, size, send, buf, m.incoming_.data(), count, element,
                                      round_of);
  }
  return made;
}

// The binomial tree of p2p::binomial_bcast in one message per edge: ranks relative to the root,
// v = (r - root) mod P; the parent of v is v minus its lowest set bit, its children v + m for
// every power of two m below that bit (largest subtree first).
std::unique_ptr<PointToPointRounds> PointToPointRounds::bcast(MPI_Comm comm, int tag,
                                                              std::byte* buf, std::size_t bytes,
                                                              int root) {
  std::unique_ptr<PointToPointRounds> made(new PointToPointRounds(comm, tag));
  PointToPointRounds& m = *made;
  m.send_ = buf;
  m.buf_ = buf;
  m.layout_ = bcast_key(bytes, root);
  int size = 1, rank = 0;
  MPI_Comm_size(comm, &size);
  MPI_Comm_rank(comm, &rank);
  if (size == 1 || bytes == 0) return made;
  const int relative = p2p::util::wrap(rank - root, size);
  auto real = [&](int v) { return p2p::util::wrap(v + root, size); };
  int mask = 1;
  for (; mask < size; mask <<= 1) {
    if (relative & mask) {
      m.receive(buf, bytes, real(relative - mask));
      m.end_round();
      break;
    }
  }
  for (int k = mask >> 1; k > 0; k >>= 1)
    if (relative + k < size) m.send(buf, bytes, real(relative + k));
  m.end_round();
  return made;
}

std::vector<std::int64_t> PointToPointRounds::bcast_key(std::size_t bytes, int root) {
  return {static_cast<std::int64_t>(bytes), root};
}

// Every receive and send at once (p2p::isend_alltoallv, MPICH's medium-size alltoall).
std::unique_ptr<PointToPointRounds> PointToPointRounds::alltoallv(
    MPI_Comm comm, int tag, const std::byte* send, std::span<const MPI_Count> send_bytes,
    std::span<const MPI_Aint> send_displs, std::byte* recv, std::span<const MPI_Count> recv_bytes,
    std::span<const MPI_Aint> recv_displs) {
  std::unique_ptr<PointToPointRounds> made(new PointToPointRounds(comm, tag));
  PointToPointRounds& m = *made;
  m.send_ = send;
  m.buf_ = recv;
  m.layout_ = alltoallv_key(send_bytes, send_displs, recv_bytes, recv_displs);
  int size = 1, rank = 0;
  MPI_Comm_size(comm, &size);
  MPI_Comm_rank(comm, &rank);
  const auto me = static_cast<std::size_t>(rank);
  m.own_from_ = send + send_displs[me];
  m.own_to_ = recv + recv_displs[me];
  m.own_bytes_ = static_cast<std::size_t>(send_bytes[me]);
  for (int k = 1; k < size; ++k) {  // from the neighbours outwards, as the blocking algorithm
    const auto from = static_cast<std::size_t>((rank - k + size) % size);
    m.receive(recv + recv_displs[from], static_cast<std::size_t>(recv_bytes[from]),
              static_cast<int>(from));
  }
  for (int k = 1; k < size; ++k) {
    const auto to = static_cast<std::size_t>((rank + k) % size);
    m.send(send + send_displs[to], static_cast<std::size_t>(send_bytes[to]), static_cast<int>(to));
  }
  m.end_round();
  return made;
}

std::vector<std::int64_t> PointToPointRounds::allreduce_key(std::size_t count, std::size_t element,
                                                            bool rabenseifner) {
  return {static_cast<std::int64_t>(count), static_cast<std::int64_t>(element), rabenseifner};
}

std::vector<std::int64_t> PointToPointRounds::alltoallv_key(std::span<const MPI_Count> send_bytes,
                                                            std::span<const MPI_Aint> send_displs,
                                                            std::span<const MPI_Count> recv_bytes,
                                                            std::span<const MPI_Aint> recv_displs) {
  std::vector<std::int64_t> key;
  key.reserve(4 * send_bytes.size());
  for (auto words : {send_bytes, recv_bytes})
    for (MPI_Count w : words) key.push_back(static_cast<std::int64_t>(w));
  for (auto words : {send_displs, recv_displs})
    for (MPI_Aint w : words) key.push_back(static_cast<std::int64_t>(w));
  return key;
}

PointToPointRounds::~PointToPointRounds() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (finalized || mpi_operation_abandoned()) return;
  auto lock = serialize_mpi();
  for (MPI_Request& r : requests_)
    if (r != MPI_REQUEST_NULL) MPI_Request_free(&r);
}

void PointToPointRounds::start_round(std::size_t r) {
  current_ = r;
  const Round& round = rounds_[r];
  if (round.end == round.first) return;
  auto lock = serialize_mpi();
  if (one_shot()) {
    for (std::size_t i = round.first; i < round.end; ++i) {
      const Message& m = messages_[i];
      const auto bytes = static_cast<MPI_Count>(m.bytes);
      check_mpi(
          m.receive
              ? large::irecv(m.data, bytes, MPI_BYTE, m.peer, start_tag_, comm_, &requests_[i])
              : large::isend(m.data, bytes, MPI_BYTE, m.peer, start_tag_, comm_, &requests_[i]),
          m.receive ? "MPI_Irecv" : "MPI_Isend");
    }
    return;
  }
  check_mpi(MPI_Startall(static_cast<int>(round.end - round.first), &requests_[round.first]),
            "MPI_Startall");
}

void PointToPointRounds::start(CombineFn combine, const void* op_object, int tag) {
  start_tag_ = tag;
  combine_ = combine;
  op_object_ = op_object;
  combine_error_ = nullptr;
  if (own_bytes_ != 0 && own_from_ != own_to_) std::memcpy(own_to_, own_from_, own_bytes_);
  current_ = 0;
  if (!rounds_.empty()) start_round(0);
}

bool PointToPointRounds::test(const char* what) {
  while (current_ < rounds_.size()) {
    const Round& round = rounds_[current_];
    if (round.end > round.first) {
      int done = 0;
      {
        auto lock = serialize_mpi();
        const WorldErrorsReturned returned;
        check_mpi(MPI_Testall(static_cast<int>(round.end - round.first), &requests_[round.first],
                              &done, MPI_STATUSES_IGNORE),
                  what);
      }
      if (!done) return false;
    }
    if (round.count != 0 && !combine_error_) {
      try {
        combine_(op_object_, round.into, round.from, round.count, round.from_is_lower);
      } catch (...) {
        combine_error_ = std::current_exception();
      }
    }
    if (current_ + 1 == rounds_.size()) {
      current_ = rounds_.size();
      break;
    }
    start_round(current_ + 1);
  }
  if (combine_error_) {
    const std::exception_ptr error = combine_error_;
    combine_error_ = nullptr;
    std::rethrow_exception(error);
  }
  return true;
}

}  // namespace tlc::detail
