// Reductions on point-to-point messages: pairwise reduce-scatter, recursive-doubling allreduce
// and Rabenseifner's allreduce (reduce-scatter by recursive halving + allgather by recursive
// doubling). Elements are combined with call.combine, which applies the op as op(lower ranks,
// higher ranks).
#include <algorithm>
#include <array>
#include <cstring>
#include <string>
#include <vector>

#include "inter/p2p.hpp"
#include "inter/p2p_exchanges.hpp"

namespace tlc::detail::p2p {

namespace {

void require_commutative(const Call& call, const char* algorithm) {
  if (!call.commutative)
    throw Error(Errc::invalid_argument,
                std::string("tlc: ") + algorithm +
                    " reorders the contributions and needs a commutative op");
}

// One exchange of the allreduces (p2p_exchanges.hpp): posted, waited for, combined.
void run_exchange(ProcessComm& lane, const Exchange& x, const Call& call, const char* what) {
  std::array<MPI_Request, 2> requests;
  const util::MessageTag tag{x.tag, util::call_word(call)};
  util::irecv(lane, x.recv, x.recv_bytes, x.from, tag, requests[0]);
  util::isend(lane, x.send, x.send_bytes, x.to, tag, requests[1]);
  lane.wait_all(requests, what);
  if (x.count != 0) call.combine(call.op_object, x.into, x.operand, x.count, x.operand_is_lower);
}

}  // namespace

// Pairwise-exchange reduce-scatter ([Thakur] sec. 4.4, MPICH's long-message reduce-scatter).
// Steps: in step k = 1 .. P-1, process r sends its input for block r + k to process r + k,
// receives the input of process r - k for its own block, and combines it into its block. The
// receive of step k+1 is posted before step k's data is combined (two scratch buffers), so the
// reduction overlaps the next transfer.
// Cost: (P-1) alpha + (P-1)/P n beta + (P-1)/P n gamma; only the data a process needs moves.
// Commutative ops only: a block accumulates r, r-1, r-2, ... (mod P), not rank order. The order
// is fixed for a given P, so results are reproducible from run to run.
// Out of place (own outside buf), the own block is first copied to own; the blocks for other
// processes are only read.
void pairwise_reduce_scatter(ProcessComm& lane, const std::byte* buf, std::byte* own,
                             std::span<const std::size_t> counts, const Call& call) {
  util::expect_per_process(counts, lane, "reduce_scatter counts");
  require_commutative(call, "pairwise reduce_scatter");
  const int size = lane.size(), rank = lane.rank();
  const std::size_t element = call.type.size;
  thread_local std::vector<std::size_t> offset;  // in elements
  offset.assign(counts.size() + 1, 0);
  for (std::size_t i = 0; i < counts.size(); ++i) offset[i + 1] = offset[i] + counts[i];

  const auto me = static_cast<std::size_t>(rank);
  const std::size_t own_count = counts[me];
  const std::byte* own_input = buf + offset[me] * element;
  if (own != own_input && own_count != 0) std::memcpy(own, own_input, own_count * element);
  if (size == 1) return;
  const std::array<std::byte*, 2> incoming = {util::scratch(own_count * element, 0),
                                              util::scratch(own_count * element, 1)};
  std::array<std::array<MPI_Request, 2>, 2> requests;
  const util::MessageTag tag{util::Tag::reduce_scatter, util::call_word(call)};
  auto post = [&](int k) {
    const auto to = static_cast<std::size_t>((rank + k) % size);
    const int from = (rank - k + size) % size;
    auto& r = requests[static_cast<std::size_t>(k % 2)];
    util::irecv(lane, incoming[static_cast<std::size_t>(k % 2)], own_count * element, from, tag,
                r[0]);
    util::isend(lane, buf + offset[to] * element, counts[to] * element, static_cast<int>(to), tag,
                r[1]);
  };
  post(1);
  for (int k = 1; k < size; ++k) {
    lane.wait_all(requests[static_cast<std::size_t>(k % 2)], "pairwise reduce_scatter");
    if (k + 1 < size) post(k + 1);
    if (own_count != 0)
      call.combine(call.op_object, own, incoming[static_cast<std::size_t>(k % 2)], own_count, true);
  }
}

void pairwise_reduce_scatter(ProcessComm& lane, std::byte* buf, std::span<const std::size_t> counts,
                             const Call& call) {
  std::size_t before = 0;  // elements of the lower processes' blocks
  for (int p = 0; p < lane.rank() && static_cast<std::size_t>(p) < counts.size(); ++p)
    before += counts[static_cast<std::size_t>(p)];
  pairwise_reduce_scatter(lane, buf, buf + before * call.type.size, counts, call);
}

// Recursive-doubling allreduce ([Thakur] sec. 4.5; non-power-of-two handling as in 5.1).
// Steps: with P' = 2^floor(lg P) and R = P - P': among the first 2R processes each even one
// sends its vector to the odd one above it, which combines (even as lower) and goes on for
// both; the others go on as they are. The P' remaining processes, renumbered 0 .. P'-1 in rank
// order, exchange whole vectors with the partner at distance 1, 2, 4, ... (renumbered rank XOR
// mask) and combine. Finally every odd process of the first 2R sends the result to its even
// neighbour.
// Rank order: a renumbered process always stands for a contiguous range of ranks, and aligned
// groups of 2^k renumbered processes for contiguous ranges too, so combining the lower
// partner's vector as the lower operand keeps rank order for any associative op. Both partners
// compute op(lower, higher) from the same two operands, so the result is bitwise the same on
// every process even for floating point.
// Cost: P a power of two: lg P (alpha + n beta + n gamma). Otherwise
// (floor(lg P) + 2) alpha + (floor(lg P) + 2) n beta + (floor(lg P) + 1) n gamma.
// Latency-optimal; the choice for short vectors and for non-commutative ops ([Thakur] sec. 4.5).
void recursive_doubling_allreduce(ProcessComm& lane, const std::byte* send, std::byte* buf,
                                  std::size_t count, const Call& call) {
  const int size = lane.size(), rank = lane.rank();
  const std::size_t element = call.type.size, bytes = count * element;
  const int extra = size - floor_power_of_two(size);
  // The input apart: the first exchange reads it where it is, unless the fold comes first.
  if (send != buf && bytes != 0 && (size == 1 || extra > 0)) {
    std::memcpy(buf, send, bytes);
    send = buf;
  }
  if (size == 1 || count == 0) return;
  std::byte* incoming = util::scratch(recursive_doubling_scratch_bytes(count, element));
  recursive_doubling_exchanges(
      rank, size, send, buf, incoming, count, element,
      [&](const Exchange& x) { run_exchange(lane, x, call, "recursive doubling allreduce"); });
}

// Rabenseifner's allreduce: vector halving and distance doubling ([Thakur] sec. 5.1).
// Steps, with P' = 2^floor(lg P) and R = P - P':
// 1. Fold (only if R > 0): among the first 2R processes, an even process sends the upper half
//    of its vector to the odd one above it and receives that one's lower half; each combines
//    its half, the odd one returns its combined upper half and drops out. The even ones and the
//    last P - 2R processes go on, renumbered 0 .. P'-1.
// 2. Reduce-scatter by recursive halving: the vector is cut into P' blocks of count / P'
//    elements (the first count % P' one larger; blocks may be empty when count < P'). In step
//    j = 0 .. lg P' - 1 a process exchanges with renumbered rank XOR 2^j: it keeps one half of
//    its current block range (the lower half if its bit j is 0), sends the other half and
//    combines the partner's copy of the half it keeps. It ends with one fully reduced block.
// 3. Allgather by recursive doubling: the steps in reverse; each sends the range it kept and
//    receives the partner's, so the reduced ranges double back to the whole vector.
// 4. Unfold (only if R > 0): each even process of the first 2R sends the result to its odd
//    neighbour.
// Cost: P a power of two: 2 lg P alpha + 2 (P-1)/P n beta + (P-1)/P n gamma. Otherwise about
// (2 floor(lg P) + 3) alpha + 4 n beta + 3/2 n gamma (the fold and unfold move n/2 + n more).
// Bandwidth-optimal; the choice for long vectors ([Thakur] sec. 4.5, 5.4).
// Commutative ops only: the halving combines in an order set by the bits of the renumbered
// ranks. Every element is combined by one process and then copied, so the result is bitwise
// the same on every process and reproducible for a given P.
void rabenseifner_allreduce(ProcessComm& lane, const std::byte* send, std::byte* buf,
                            std::size_t count, const Call& call) {
  require_commutative(call, "Rabenseifner allreduce");
  const int size = lane.size(), rank = lane.rank();
  const std::size_t element = call.type.size;
  const int extra = size - floor_power_of_two(size);
  // The input apart: the first halving step reads it where it is, unless the fold comes first.
  if (send != buf && count != 0 && (size == 1 || extra > 0)) {
    std::memcpy(buf, send, count * element);
    send = buf;
  }
  if (size == 1 || count == 0) return;
  std::byte* incoming = util::scratch(rabenseifner_scratch_bytes(size, count, element));
  rabenseifner_exchanges(rank, size, send, buf, incoming, count, element, [&](const Exchange& x) {
    run_exchange(lane, x, call, "Rabenseifner allreduce");
  });
}

// Binomial reduce towards process 0. Step k (mask 2^k): a process whose bit k is set sends its
// accumulator (ranks p .. p + 2^k - 1) to p - 2^k and is done; one whose bits 0..k are clear
// receives the accumulator of p + 2^k (if that process exists) and folds it in as the higher
// ranks. Process 0 ends with all P; a root other than 0 receives it from process 0. Each
// accumulator travels in segments, one message each, received into two scratch buffers in turn:
// segment s is folded while segment s + 1 is on its way. With the input apart from buf, a process
// that only sends (half of them) sends its input as it is, and the first accumulator a process
// receives lands in buf directly, its input folded in as the lower ranks: no copy of the input.
void binomial_reduce(ProcessComm& lane, const std::byte* send, std::byte* buf, std::size_t count,
                     const Call& call, int root, std::size_t segment_bytes) {
  const int size = lane.size(), rank = lane.rank();
  util::expect_root(root, lane, "reduce");
  if (size == 1 || count == 0) {
    if (count != 0 && send != buf) std::memcpy(buf, send, count * call.type.size);
    return;
  }
  const std::size_t element = call.type.size, bytes = count * element;
  // No division on the one-message path: a small call pays for every instruction of it.
  const bool whole = segment_bytes == 0 || segment_bytes >= bytes;
  const std::size_t per_segment =
      whole ? count : std::clamp<std::size_t>(segment_bytes / element, 1, count);
  const std::size_t segments = whole ? 1 : (count + per_segment - 1) / per_segment;
  auto segment_count = [&](std::size_t s) {
    return std::min(per_segment, count - s * per_segment);
  };
  auto segment_at = [&](std::size_t s) { return buf + s * per_segment * element; };
  bool folded = send == buf;  // buf holds this process's accumulator
  const std::uint64_t word = util::call_word(call) | util::root_word(root);
  const util::MessageTag tag{util::Tag::binomial_reduce, word};
  const util::MessageTag to_root{util::Tag::binomial_reduce_to_root, word};
  for (int mask = 1; mask < size; mask <<= 1) {
    if (rank & mask) {
      const std::byte* from = folded ? buf : send;
      thread_local std::vector<MPI_Request> requests;  // a small call allocates nothing
      requests.assign(segments, MPI_REQUEST_NULL);
      for (std::size_t s = 0; s < segments; ++s)
        util::isend(lane, from + s * per_segment * element, segment_count(s) * element, rank - mask,
                    tag, requests[s]);
      lane.wait_all(requests, "binomial reduce");
      break;
    }
    if (rank + mask >= size) continue;
    // The first accumulator received goes straight into buf, the later ones through scratch.
    const bool into_buf = !folded;
    const std::array<std::byte*, 2> incoming = {
        into_buf ? nullptr : util::scratch(per_segment * element, 0),
        into_buf ? nullptr : util::scratch(per_segment * element, 1)};
    if (segments == 1) {  // one message: received as it arrives (p2p::receive)
      std::byte* const into = into_buf ? buf : incoming[0];
      receive(lane, into, bytes, rank + mask, tag, "binomial reduce");
      if (into_buf)
        call.combine(call.op_object, buf, send, count, true);
      else
        call.combine(call.op_object, buf, into, count, false);
      folded = true;
      continue;
    }
    std::array<MPI_Request, 2> requests{MPI_REQUEST_NULL, MPI_REQUEST_NULL};
    auto post = [&](std::size_t s) {
      util::irecv(lane, into_buf ? segment_at(s) : incoming[s % 2], segment_count(s) * element,
                  rank + mask, tag, requests[s % 2]);
    };
    post(0);
    if (segments > 1) post(1);
    for (std::size_t s = 0; s < segments; ++s) {
      lane.wait_all(std::span(&requests[s % 2], 1), "binomial reduce");
      if (into_buf)
        call.combine(call.op_object, segment_at(s), send + s * per_segment * element,
                     segment_count(s), true);
      else
        call.combine(call.op_object, segment_at(s), incoming[s % 2], segment_count(s), false);
      if (s + 2 < segments) post(s + 2);
    }
    folded = true;
  }
  if (root == 0) return;
  if (rank == root) {
    receive(lane, buf, bytes, 0, to_root, "binomial reduce");
    return;
  }
  MPI_Request request = MPI_REQUEST_NULL;
  if (rank == 0) util::isend(lane, buf, bytes, root, to_root, request);
  lane.wait_all(std::span(&request, 1), "binomial reduce");
}

void binomial_reduce(ProcessComm& lane, std::byte* buf, std::size_t count, const Call& call,
                     int root, std::size_t segment_bytes) {
  binomial_reduce(lane, buf, buf, count, call, root, segment_bytes);
}

}  // namespace tlc::detail::p2p
