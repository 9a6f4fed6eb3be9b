// The exchanges of the point-to-point allreduces, recursive doubling and Rabenseifner's
// (p2p::recursive_doubling_allreduce, p2p::rabenseifner_allreduce in p2p_reduce.cpp: the steps,
// their cost and the order of combining are documented there), written once for both forms
// that run them: the blocking calls post, wait for and combine each exchange in turn
// (p2p_reduce.cpp), the persistent rounds make each exchange once as persistent requests and
// combine when a test finds it complete (p2p_rounds.cpp).
//
// An exchange receives recv_bytes into `recv` from `from` and sends send_bytes of `send` to `to`
// (a side of 0 bytes is no message: both ends skip it alike), then, when count is not 0,
// combines: into[0, count) = op(into, operand) with `operand` the lower ranks' side when
// operand_is_lower, else the higher ranks'. An exchange reads its send side only after the one
// before it has been combined, and a later exchange may send what an earlier one combined.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <vector>

#include "inter/p2p.hpp"

namespace tlc::detail::p2p {

struct Exchange {
  std::byte* recv = nullptr;
  std::size_t recv_bytes = 0;
  int from = -1;
  const std::byte* send = nullptr;
  std::size_t send_bytes = 0;
  int to = -1;
  util::Tag tag{};  // the blocking form's step (one tag per rounds object instead)
  std::byte* into = nullptr;
  const std::byte* operand = nullptr;
  std::size_t count = 0;
  bool operand_is_lower = false;
};

// The largest power of two <= p (p >= 1).
inline int floor_power_of_two(int p) {
  int pof2 = 1;
  while (pof2 * 2 <= p) pof2 *= 2;
  return pof2;
}

// Scratch bytes the exchanges receive into besides buf.
inline std::size_t recursive_doubling_scratch_bytes(std::size_t count, std::size_t element) {
  return count * element;
}

// Block b of Rabenseifner's halving: elements [first[b], first[b + 1]) of P' = 2^floor(lg P)
// blocks, the first count % P' one larger (blocks may be empty when count < P').
inline std::vector<std::size_t> rabenseifner_blocks(int size, std::size_t count) {
  const auto blocks = static_cast<std::size_t>(floor_power_of_two(size));
  std::vector<std::size_t> first(blocks + 1, 0);
  for (std::size_t b = 0; b < blocks; ++b)
    first[b + 1] = first[b] + count / blocks + (b < count % blocks ? 1 : 0);
  return first;
}

// The largest receive into scratch: a half of the vector in the fold, or a half of the blocks in
// the first halving step.
inline std::size_t rabenseifner_scratch_bytes(int size, std::size_t count, std::size_t element) {
  const std::vector<std::size_t> first = rabenseifner_blocks(size, count);
  const std::size_t blocks = first.size() - 1, half = count / 2;
  return std::max(count - half, std::max(first[blocks / 2], count - first[blocks / 2])) * element;
}

// Recursive doubling among `size` processes (size > 1, count > 0) on buf, whose first exchange
// reads the input at `send` where it is (send == buf: already there). `incoming`: scratch of
// recursive_doubling_scratch_bytes.
template <class Run>
void recursive_doubling_exchanges(int rank, int size, const std::byte* send, std::byte* buf,
                                  std::byte* incoming, std::size_t count, std::size_t element,
                                  Run&& run) {
  const std::size_t bytes = count * element;
  const int pof2 = floor_power_of_two(size);
  const int extra = size - pof2;
  int renumbered = rank - extra;
  if (rank < 2 * extra) {  // fold
    if (rank % 2 == 0) {
      run(Exchange{.send = buf,
                   .send_bytes = bytes,
                   .to = rank + 1,
                   .tag = util::Tag::recursive_doubling_fold});
      renumbered = -1;
    } else {
      run(Exchange{.recv = incoming,
                   .recv_bytes = bytes,
                   .from = rank - 1,
                   .tag = util::Tag::recursive_doubling_fold,
                   .into = buf,
                   .operand = incoming,
                   .count = count,
                   .operand_is_lower = true});
      renumbered = rank / 2;
    }
  }
  if (renumbered >= 0) {
    for (int mask = 1; mask < pof2; mask <<= 1) {
      const int partner_renumbered = renumbered ^ mask;
      const int partner =
          partner_renumbered < extra ? partner_renumbered * 2 + 1 : partner_renumbered + extra;
      if (send != buf) {  // the first exchange, input apart: the partner's vector lands in buf
        run(Exchange{buf, bytes, partner, send, bytes, partner, util::Tag::recursive_doubling, buf,
                     send, count, rank < partner});
        send = buf;
        continue;
      }
      run(Exchange{incoming, bytes, partner, buf, bytes, partner, util::Tag::recursive_doubling,
                   buf, incoming, count, partner < rank});
    }
  }
  if (rank < 2 * extra) {  // unfold
    if (rank % 2 == 0)
      run(Exchange{.recv = buf,
                   .recv_bytes = bytes,
                   .from = rank + 1,
                   .tag = util::Tag::recursive_doubling_unfold});
    else
      run(Exchange{.send = buf,
                   .send_bytes = bytes,
                   .to = rank - 1,
                   .tag = util::Tag::recursive_doubling_unfold});
  }
}

// Rabenseifner's allreduce among `size` processes (size > 1, count > 0), as above; `incoming`:
// scratch of rabenseifner_scratch_bytes.
template <class Run>
void rabenseifner_exchanges(int rank, int size, const std::byte* send, std::byte* buf,
                            std::byte* incoming, std::size_t count, std::size_t element,
                            Run&& run) {
  const int pof2 = floor_power_of_two(size);
  const int extra = size - pof2;
  const std::vector<std::size_t> first = rabenseifner_blocks(size, count);
  const auto blocks = static_cast<std::size_t>(pof2);
  const std::size_t half = count / 2;
  auto at = [&](std::size_t element_index) { return buf + element_index * element; };

  // 1. Fold.
  int renumbered = rank - extra;
  if (rank < 2 * extra) {
    if (rank % 2 == 0) {
      run(Exchange{incoming, half * element, rank + 1, at(half), (count - half) * element, rank + 1,
                   util::Tag::rabenseifner_fold, buf, incoming, half, false});
      // The upper half was just sent from here; only now may it be overwritten.
      run(Exchange{.recv = at(half),
                   .recv_bytes = (count - half) * element,
                   .from = rank + 1,
                   .tag = util::Tag::rabenseifner_fold_result});
      renumbered = rank / 2;
    } else {
      run(Exchange{incoming, (count - half) * element, rank - 1, buf, half * element, rank - 1,
                   util::Tag::rabenseifner_fold, at(half), incoming, count - half, true});
      run(Exchange{.send = at(half),
                   .send_bytes = (count - half) * element,
                   .to = rank - 1,
                   .tag = util::Tag::rabenseifner_fold_result});
      renumbered = -1;
    }
  }

  if (renumbered >= 0) {
    auto real_rank = [&](int r) { return r < extra ? r * 2 : r + extra; };
    struct Step {
      int partner;
      std::size_t keep_begin, keep_end, give_begin, give_end;  // block ranges
    };
    std::array<Step, 32> steps;
    std::size_t step_count = 0;
    // 2. Reduce-scatter by recursive halving (distance doubling).
    std::size_t low = 0, high = blocks;
    for (int mask = 1; mask < pof2; mask <<= 1) {
      const std::size_t middle = (low + high) / 2;
      const bool keep_lower = (renumbered & mask) == 0;
      const Step s{real_rank(renumbered ^ mask), keep_lower ? low : middle,
                   keep_lower ? middle : high, keep_lower ? middle : low,
                   keep_lower ? high : middle};
      const std::size_t keep = first[s.keep_end] - first[s.keep_begin];
      const std::size_t give = first[s.give_end] - first[s.give_begin];
      if (send != buf) {  // the first step, input apart: the partner's half lands in buf
        run(Exchange{at(first[s.keep_begin]), keep * element, s.partner,
                     send + first[s.give_begin] * element, give * element, s.partner,
                     util::Tag::rabenseifner_halving, at(first[s.keep_begin]),
                     send + first[s.keep_begin] * element, keep, rank < s.partner});
        send = buf;
      } else {
        run(Exchange{incoming, keep * element, s.partner, at(first[s.give_begin]), give * element,
                     s.partner, util::Tag::rabenseifner_halving, at(first[s.keep_begin]), incoming,
                     keep, s.partner < rank});
      }
      steps[step_count++] = s;
      low = s.keep_begin;
      high = s.keep_end;
    }
    // 3. Allgather by recursive doubling (distance halving): the same partners in reverse.
    while (step_count > 0) {
      const Step& s = steps[--step_count];
      run(Exchange{at(first[s.give_begin]), (first[s.give_end] - first[s.give_begin]) * element,
                   s.partner, at(first[s.keep_begin]),
                   (first[s.keep_end] - first[s.keep_begin]) * element, s.partner,
                   util::Tag::rabenseifner_doubling});
    }
  }

  // 4. Unfold.
  if (rank < 2 * extra) {
    if (rank % 2 == 0)
      run(Exchange{.send = buf,
                   .send_bytes = count * element,
                   .to = rank + 1,
                   .tag = util::Tag::rabenseifner_unfold});
    else
      run(Exchange{.recv = buf,
                   .recv_bytes = count * element,
                   .from = rank - 1,
                   .tag = util::Tag::rabenseifner_unfold});
  }
}

}  // namespace tlc::detail::p2p
