// Inclusive and exclusive prefix reductions on point-to-point messages: recursive doubling.
#include <cstring>
#include <vector>

#include "inter/p2p.hpp"

namespace tlc::detail::p2p {

namespace {

// Whether process r exchanges with a partner after the step of distance `mask`: only then does
// it need the total of its block of processes (`partial` below) beyond that step.
bool has_later_step(int r, int mask, int size) {
  for (int m = mask << 1; m < size; m <<= 1)
    if ((r ^ m) < size) return true;
  return false;
}

}  // namespace

// Recursive-doubling scan ([Thakur] sec. 4, MPICH's scan): in the step of distance m = 1, 2, 4,
// ... process r pairs with r XOR m (when that is a process). Each keeps `partial`, the op over the
// aligned block of 2m processes it belongs to after the step (its own block of m combined with
// the partner's block, lower block first), and its result, to which a partner below prepends its
// partial. The partner below needs the one above's partial only to extend its own, so that
// message is sent only if the lower process has a later step: with P = 2, one message from
// process 0 to 1 and nothing back (MPI's linear scan sends the same one). Results keep rank order
// for any op.
// Cost: ceil(lg P) (alpha + n beta + 2 n gamma) on the process with the most steps; every step
// moves the whole vector, so it suits small and medium vectors and few processes.
void recursive_doubling_scan(ProcessComm& lane, const std::byte* send, std::byte* recv,
                             std::size_t count, const Call& call, bool exclusive) {
  const int size = lane.size(), rank = lane.rank();
  const std::size_t bytes = count * call.type.size;
  if (bytes == 0) return;
  if (size == 1) {
    if (!exclusive && send != recv) std::memcpy(recv, send, bytes);
    return;
  }
  // In place, the input is set aside first: the first result received lands in recv.
  const std::byte* own = send;
  if (send == recv) {
    thread_local std::vector<std::byte> aside;
    if (aside.size() < bytes) aside.resize(bytes);
    std::memcpy(aside.data(), send, bytes);
    own = aside.data();
  }
  // The partial is the input itself until the first combination into it, so a process that
  // sends before it combines anything (half of them, every one at P = 2) copies nothing.
  std::byte* partial = nullptr;
  const std::byte* partial_source = own;
  std::byte* incoming = util::scratch(bytes, 1);
  bool received_lower = false;
  for (int mask = 1; mask < size; mask <<= 1) {
    const int partner = rank ^ mask;
    if (partner >= size) continue;
    const bool lower = partner < rank;  // the partner's block precedes this one's
    const bool i_continue = has_later_step(rank, mask, size);
    const bool receive = lower || i_continue;
    const bool send_partial = !lower || has_later_step(partner, mask, size);
    // The first partial from below goes straight into recv; it is the start of the result.
    std::byte* target = lower && !received_lower ? recv : incoming;
    MPI_Request requests[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
    if (receive)
      util::irecv(lane, target, bytes, partner, {util::Tag::scan, util::call_word(call)},
                  requests[0]);
    if (send_partial)
      util::isend(lane, partial_source, bytes, partner, {util::Tag::scan, util::call_word(call)},
                  requests[1]);
    lane.wait_all(requests, exclusive ? "recursive doubling exscan" : "recursive doubling scan");
    if (!receive) continue;
    if (i_continue) {  // before recv changes: target may be recv
      if (!partial) {
        partial = util::scratch(bytes, 0);
        std::memcpy(partial, own, bytes);
        partial_source = partial;
      }
      call.combine(call.op_object, partial, target, count, lower);
    }
    if (!lower) continue;
    if (received_lower)
      call.combine(call.op_object, recv, incoming, count, true);
    else if (!exclusive)
      call.combine(call.op_object, recv, own, count, false);  // recv = op(lower ones, own)
    received_lower = true;
  }
  if (!exclusive && !received_lower && send != recv) std::memcpy(recv, own, bytes);
}

}  // namespace tlc::detail::p2p
