// Alltoall on point-to-point messages: pairwise exchange and isend-irecv; the gathered messages
// and probed receives of the alltoall led by arrival.
#include <array>
#include <climits>
#include <cstring>
#include <vector>

#include "inter/p2p.hpp"

namespace tlc::detail::p2p {

namespace {

// Where the blocks are: per process, bytes and displacements on both sides, read through
// functions so that equal blocks need no arrays.
struct VariableBlocks {
  std::span<const std::size_t> send_bytes, send_displs, recv_bytes, recv_displs;
  std::size_t sent(int p) const { return send_bytes[static_cast<std::size_t>(p)]; }
  std::size_t send_at(int p) const { return send_displs[static_cast<std::size_t>(p)]; }
  std::size_t received(int p) const { return recv_bytes[static_cast<std::size_t>(p)]; }
  std::size_t recv_at(int p) const { return recv_displs[static_cast<std::size_t>(p)]; }
};
struct EqualBlocks {
  std::size_t block;
  std::size_t sent(int) const { return block; }
  std::size_t send_at(int p) const { return static_cast<std::size_t>(p) * block; }
  std::size_t received(int) const { return block; }
  std::size_t recv_at(int p) const { return static_cast<std::size_t>(p) * block; }
};

VariableBlocks checked_layout(const ProcessComm& lane, std::span<const std::size_t> send_bytes,
                              std::span<const std::size_t> send_displs,
                              std::span<const std::size_t> recv_bytes,
                              std::span<const std::size_t> recv_displs) {
  util::expect_per_process(send_bytes, lane, "alltoallv send sizes");
  util::expect_per_process(send_displs, lane, "alltoallv send displacements");
  util::expect_per_process(recv_bytes, lane, "alltoallv receive sizes");
  util::expect_per_process(recv_displs, lane, "alltoallv receive displacements");
  return {send_bytes, send_displs, recv_bytes, recv_displs};
}

// The own block never crosses the network.
template <class Blocks>
void copy_own_block(const ProcessComm& lane, const std::byte* send, std::byte* recv,
                    const Blocks& b) {
  const int r = lane.rank();
  const std::byte* from = send + b.send_at(r);
  std::byte* to = recv + b.recv_at(r);
  if (b.sent(r) != 0 && from != to) std::memcpy(to, from, b.sent(r));
}

// The pairwise exchange and the isend-irecv alltoall (described at their public forms below).
template <class Blocks>
void pairwise(ProcessComm& lane, const std::byte* send, std::byte* recv, const Blocks& b) {
  copy_own_block(lane, send, recv, b);
  const int size = lane.size(), rank = lane.rank();
  const bool power_of_two = (size & (size - 1)) == 0;
  for (int k = 1; k < size; ++k) {
    const int to = power_of_two ? rank ^ k : util::wrap(rank + k, size);
    const int from = power_of_two ? rank ^ k : util::wrap(rank - k, size);
    std::array<MPI_Request, 2> requests;
    util::irecv(lane, recv + b.recv_at(from), b.received(from), from, util::Tag::pairwise_alltoall,
                requests[0]);
    util::isend(lane, send + b.send_at(to), b.sent(to), to, util::Tag::pairwise_alltoall,
                requests[1]);
    lane.wait_all(requests, "pairwise alltoallv");
  }
}

template <class Blocks>
void isend_irecv(ProcessComm& lane, const std::byte* send, std::byte* recv, const Blocks& b) {
  copy_own_block(lane, send, recv, b);
  const int size = lane.size(), rank = lane.rank();
  if (size == 1) return;
  const auto peers = static_cast<std::size_t>(size - 1);
  thread_local std::vector<MPI_Request> requests;  // a small call allocates nothing
  requests.assign(2 * peers, MPI_REQUEST_NULL);
  for (int i = 1; i < size; ++i) {
    const int from = util::wrap(rank + i, size);
    util::irecv(lane, recv + b.recv_at(from), b.received(from), from, util::Tag::isend_alltoall,
                requests[static_cast<std::size_t>(i - 1)]);
  }
  for (int i = 1; i < size; ++i) {
    const int to = util::wrap(rank - i, size);
    util::isend(lane, send + b.send_at(to), b.sent(to), to, util::Tag::isend_alltoall,
                requests[peers + static_cast<std::size_t>(i - 1)]);
  }
  lane.wait_all(requests, "isend alltoallv");
}

}  // namespace

// Pairwise-exchange alltoallv ([Thakur] sec. 4.3, MPICH's long-message alltoall).
// Steps: P-1 steps after the local copy of the own block. In step k = 1 .. P-1, a
// power-of-two P pairs r with r XOR k (both directions between the same two processes);
// otherwise r sends to r + k and receives from r - k (mod P). Every block goes straight from
// its source to its destination.
// Cost: (P-1) alpha + n beta (n: bytes a process sends). One message in and one out per step
// keeps the network free of the contention of posting everything at once.
void pairwise_alltoallv(ProcessComm& lane, const std::byte* send,
                        std::span<const std::size_t> send_bytes,
                        std::span<const std::size_t> send_displs, std::byte* recv,
                        std::span<const std::size_t> recv_bytes,
                        std::span<const std::size_t> recv_displs) {
  pairwise(lane, send, recv,
           checked_layout(lane, send_bytes, send_displs, recv_bytes, recv_displs));
}

void pairwise_alltoall(ProcessComm& lane, const std::byte* send, std::byte* recv,
                       std::size_t block_bytes) {
  pairwise(lane, send, recv, EqualBlocks{block_bytes});
}

// Isend-irecv alltoallv ([Thakur] sec. 4.3, MPICH's medium-size alltoall).
// Steps: post the P-1 receives, from r + i for i = 1 .. P-1, then the P-1 sends, to r - i, and
// wait for all. Process r - i receives from r at its own index i, so the messages a process
// expects first are the ones its peers send first; the scattered partners avoid every process
// sending to the same destination at once ([Thakur] sec. 4.3).
// Cost: (P-1) alpha + n beta in the model, all latencies overlapped in practice; many
// simultaneous messages may contend on the network for long blocks.
void isend_alltoallv(ProcessComm& lane, const std::byte* send,
                     std::span<const std::size_t> send_bytes,
                     std::span<const std::size_t> send_displs, std::byte* recv,
                     std::span<const std::size_t> recv_bytes,
                     std::span<const std::size_t> recv_displs) {
  isend_irecv(lane, send, recv,
              checked_layout(lane, send_bytes, send_displs, recv_bytes, recv_displs));
}

void isend_alltoall(ProcessComm& lane, const std::byte* send, std::byte* recv,
                    std::size_t block_bytes) {
  isend_irecv(lane, send, recv, EqualBlocks{block_bytes});
}

GatheredBlocks::GatheredBlocks(ProcessComm& lane, std::span<const std::byte* const> sources,
                               std::size_t block_bytes)
    : lane_(lane), first_(sources.empty() ? nullptr : sources[0]), block_bytes_(block_bytes) {
  if (sources.size() < 2 || block_bytes == 0) return;
  if (block_bytes > static_cast<std::size_t>(INT_MAX))
    throw Error(Errc::unsupported, "tlc: a gathered message of blocks of 2^31 bytes or more");
  std::vector<MPI_Aint> displacements(sources.size());
  auto lock = lane.serialize();
  MPI_Aint first = 0;
  check_mpi(MPI_Get_address(sources[0], &first), "MPI_Get_address");
  for (std::size_t i = 0; i < sources.size(); ++i) {
    MPI_Aint address = 0;
    check_mpi(MPI_Get_address(sources[i], &address), "MPI_Get_address");
    displacements[i] = MPI_Aint_diff(address, first);
  }
  check_mpi(MPI_Type_create_hindexed_block(static_cast<int>(sources.size()),
                                           static_cast<int>(block_bytes), displacements.data(),
                                           MPI_BYTE, &type_),
            "MPI_Type_create_hindexed_block");
  const int rc = MPI_Type_commit(&type_);
  if (rc != MPI_SUCCESS) MPI_Type_free(&type_);
  check_mpi(rc, "MPI_Type_commit");
}

GatheredBlocks::~GatheredBlocks() {
  if (type_ == MPI_DATATYPE_NULL) return;
  auto lock = lane_.serialize();
  MPI_Type_free(&type_);
}

void GatheredBlocks::isend(std::size_t offset, int to, int tag, MPI_Request& request) {
  if (type_ == MPI_DATATYPE_NULL) {
    if (first_ == nullptr) {
      request = MPI_REQUEST_NULL;
      return;
    }
    return util::isend(lane_, first_ + offset, block_bytes_, to, tag, request);
  }
  request = MPI_REQUEST_NULL;
  auto lock = lane_.serialize();
  check_mpi(MPI_Isend(first_ + offset, 1, type_, to, tag, lane_.get(), &request), "MPI_Isend");
}

std::size_t irecv_arrived(ProcessComm& lane, std::byte* data, std::size_t capacity,
                          std::size_t unit, int from, int tag, MPI_Request& request) {
  request = MPI_REQUEST_NULL;
  auto lock = lane.serialize();
  int arrived = 0;
  MPI_Message message = MPI_MESSAGE_NULL;
  MPI_Status status;
  check_mpi(MPI_Improbe(from, tag, lane.get(), &arrived, &message, &status), "MPI_Improbe");
  if (!arrived) return 0;
  MPI_Count bytes = 0;
  check_mpi(large::get_count(&status, MPI_BYTE, &bytes), "MPI_Get_count");
  if (bytes <= 0 || static_cast<std::size_t>(bytes) > capacity ||
      static_cast<std::size_t>(bytes) % unit != 0)
    throw Error(Errc::mismatch, "tlc: a fragment of " + std::to_string(bytes) +
                                    " bytes from process " + std::to_string(from) +
                                    " where at most " + std::to_string(capacity) +
                                    " bytes in blocks of " + std::to_string(unit) +
                                    " were due: the processes disagree about the call");
  check_mpi(large::imrecv(data, bytes, MPI_BYTE, &message, &request), "MPI_Imrecv");
  return static_cast<std::size_t>(bytes);
}

bool test_all(ProcessComm& lane, std::span<MPI_Request> requests, const char* what) {
  if (requests.empty()) return true;
  int done = 0;
  auto lock = lane.serialize();
  const WorldErrorsReturned returned;
  check_mpi(
      MPI_Testall(static_cast<int>(requests.size()), requests.data(), &done, MPI_STATUSES_IGNORE),
      what);
  return done != 0;
}

}  // namespace tlc::detail::p2p
