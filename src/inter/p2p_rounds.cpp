// The rounds of persistent point-to-point requests (inter/p2p_rounds.hpp): the steps of the
// algorithms of p2p_reduce.cpp and p2p_alltoall.cpp, made once. The steps are written a second
// time here (the blocking functions run them as they go): a change to the messages or to the
// order of combining in one must be made in the other.
// Nonblocking.EveryCollectiveEqualsItsBlockingForm compares the two forms bitwise with a
// non-commutative op, so a difference in the order fails it. Running the blocking calls from these
// rounds would make them one; not done yet (docs/design.md section 14).
#include "inter/p2p_rounds.hpp"

#include <algorithm>
#include <cstring>

#include "inter/mpi_check.hpp"
#include "inter/mpi_large.hpp"
#include "inter/mpi_policy.hpp"
#include "inter/mpi_wait.hpp"

namespace tlc::detail {

namespace {

int floor_power_of_two(int p) {
  int pof2 = 1;
  while (pof2 * 2 <= p) pof2 *= 2;
  return pof2;
}

}  // namespace

void PointToPointRounds::receive(std::byte* data, std::size_t bytes, int from) {
  if (bytes == 0) return;
  MPI_Request& r = requests_.emplace_back(MPI_REQUEST_NULL);
  auto lock = serialize_mpi();
  check_mpi(large::recv_init(data, static_cast<MPI_Count>(bytes), MPI_BYTE, from, tag_, comm_, &r),
            "MPI_Recv_init");
}

void PointToPointRounds::send(const std::byte* data, std::size_t bytes, int to) {
  if (bytes == 0) return;
  MPI_Request& r = requests_.emplace_back(MPI_REQUEST_NULL);
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

// Recursive doubling (p2p::recursive_doubling_allreduce has the steps and their cost): fold the
// extra processes of a non-power-of-two P, exchange whole vectors at distance 1, 2, 4, ...,
// unfold. Rabenseifner (p2p::rabenseifner_allreduce): fold, reduce-scatter by recursive halving,
// allgather by recursive doubling, unfold. The rounds below are those steps, one per exchange.
std::unique_ptr<PointToPointRounds> PointToPointRounds::allreduce(MPI_Comm comm, int tag,
                                                                  const std::byte* send,
                                                                  std::byte* buf, std::size_t count,
                                                                  const Call& call,
                                                                  bool rabenseifner) {
  std::unique_ptr<PointToPointRounds> made(new PointToPointRounds(comm, tag));
  PointToPointRounds& m = *made;
  m.send_ = send;
  m.buf_ = buf;
  int size = 1, rank = 0;
  MPI_Comm_size(comm, &size);
  MPI_Comm_rank(comm, &rank);
  const std::size_t element = call.type.size, bytes = count * element;
  const int pof2 = floor_power_of_two(size);
  const int extra = size - pof2;
  // The input apart is read where it is by the first exchange, unless the fold comes first
  // (then it is copied into buf at every start, as the blocking algorithms copy it).
  if (send != buf && (size == 1 || extra > 0)) {
    m.own_from_ = send;
    m.own_to_ = buf;
    m.own_bytes_ = bytes;
    send = buf;
  }
  if (size == 1 || count == 0) return made;
  int renumbered = rank - extra;

  if (!rabenseifner) {
    m.incoming_.resize(bytes);
    std::byte* incoming = m.incoming_.data();
    if (rank < 2 * extra) {
      if (rank % 2 == 0) {
        m.send(buf, bytes, rank + 1);
        m.end_round();
        renumbered = -1;
      } else {
        m.receive(incoming, bytes, rank - 1);
        m.end_round(buf, incoming, count, true);
        renumbered = rank / 2;
      }
    }
    if (renumbered >= 0) {
      for (int mask = 1; mask < pof2; mask <<= 1) {
        const int partner_renumbered = renumbered ^ mask;
        const int partner =
            partner_renumbered < extra ? partner_renumbered * 2 + 1 : partner_renumbered + extra;
        if (send != buf) {  // the first exchange, input apart
          m.receive(buf, bytes, partner);
          m.send(send, bytes, partner);
          m.end_round(buf, send, count, rank < partner);
          send = buf;
          continue;
        }
        m.receive(incoming, bytes, partner);
        m.send(buf, bytes, partner);
        m.end_round(buf, incoming, count, partner < rank);
      }
    }
    if (rank < 2 * extra) {
      if (rank % 2 == 0) {
        m.receive(buf, bytes, rank + 1);
      } else {
        m.send(buf, bytes, rank - 1);
      }
      m.end_round();
    }
    return made;
  }

  const auto blocks = static_cast<std::size_t>(pof2);
  std::vector<std::size_t> first(blocks + 1, 0);
  for (std::size_t b = 0; b < blocks; ++b)
    first[b + 1] = first[b] + count / blocks + (b < count % blocks ? 1 : 0);
  const std::size_t half = count / 2;
  const std::size_t largest =
      std::max(count - half, std::max(first[blocks / 2], count - first[blocks / 2]));
  m.incoming_.resize(largest * element);
  std::byte* incoming = m.incoming_.data();
  auto at = [&](std::size_t element_index) { return buf + element_index * element; };

  // 1. Fold.
  if (rank < 2 * extra) {
    if (rank % 2 == 0) {
      m.receive(incoming, half * element, rank + 1);
      m.send(at(half), (count - half) * element, rank + 1);
      m.end_round(buf, incoming, half, false);
      m.receive(at(half), (count - half) * element, rank + 1);
      m.end_round();
      renumbered = rank / 2;
    } else {
      m.receive(incoming, (count - half) * element, rank - 1);
      m.send(buf, half * element, rank - 1);
      m.end_round(at(half), incoming, count - half, true);
      m.send(at(half), (count - half) * element, rank - 1);
      m.end_round();
      renumbered = -1;
    }
  }
  if (renumbered >= 0) {
    auto real_rank = [&](int r) { return r < extra ? r * 2 : r + extra; };
    struct Step {
      int partner;
      std::size_t keep_begin, keep_end, give_begin, give_end;  // block ranges
    };
    std::vector<Step> steps;
    // 2. Reduce-scatter by recursive halving.
    std::size_t low = 0, high = blocks;
    for (int mask = 1; mask < pof2; mask <<= 1) {
      const std::size_t middle = (low + high) / 2;
      const bool keep_lower = (renumbered & mask) == 0;
      const Step s{real_rank(renumbered ^ mask), keep_lower ? low : middle,
                   keep_lower ? middle : high, keep_lower ? middle : low,
                   keep_lower ? high : middle};
      const std::size_t keep = first[s.keep_end] - first[s.keep_begin];
      const std::size_t give = first[s.give_end] - first[s.give_begin];
      if (send != buf) {  // the first step, input apart
        m.receive(at(first[s.keep_begin]), keep * element, s.partner);
        m.send(send + first[s.give_begin] * element, give * element, s.partner);
        m.end_round(at(first[s.keep_begin]), send + first[s.keep_begin] * element, keep,
                    rank < s.partner);
        send = buf;
      } else {
        m.receive(incoming, keep * element, s.partner);
        m.send(at(first[s.give_begin]), give * element, s.partner);
        m.end_round(at(first[s.keep_begin]), incoming, keep, s.partner < rank);
      }
      steps.push_back(s);
      low = s.keep_begin;
      high = s.keep_end;
    }
    // 3. Allgather by recursive doubling: the same partners in reverse.
    for (auto s = steps.rbegin(); s != steps.rend(); ++s) {
      m.receive(at(first[s->give_begin]), (first[s->give_end] - first[s->give_begin]) * element,
                s->partner);
      m.send(at(first[s->keep_begin]), (first[s->keep_end] - first[s->keep_begin]) * element,
             s->partner);
      m.end_round();
    }
  }
  // 4. Unfold.
  if (rank < 2 * extra) {
    if (rank % 2 == 0) {
      m.send(buf, bytes, rank + 1);
    } else {
      m.receive(buf, bytes, rank - 1);
    }
    m.end_round();
  }
  return made;
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
  check_mpi(MPI_Startall(static_cast<int>(round.end - round.first), &requests_[round.first]),
            "MPI_Startall");
}

void PointToPointRounds::start(CombineFn combine, const void* op_object) {
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
