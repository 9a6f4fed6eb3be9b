// The signature of a call across processes (select/call_signature.hpp).
#include "select/call_signature.hpp"

#include <algorithm>
#include <cstdio>
#include <iterator>

#include <tlc/options.hpp>

#include "select/collective_traits.hpp"

namespace tlc::detail {

namespace {

// TLC_CHECK: what every process must agree on for this call, as numbers (the same collective on
// the same element type, op, root and count per rank block). A process that skipped a call meets
// the others' call with its next one, which differs in one of these unless it is the same call.
// The last two are the v-variants' counts (count_pairs below): not equal between processes but
// adding up to the same total.
// The fields by name, in the order of signature_fields (describe() prints some by kind).
enum SignatureField : std::size_t {
  field_collective,
  field_op,
  field_element_type,
  field_element_size,
  field_root,
  field_count,
  field_op_digest,
  field_v_sent,
  field_v_expected,
};
constexpr const char* signature_fields[] = {"collective",
                                            "op",
                                            "element type",
                                            "element size",
                                            "root",
                                            "count per rank",
                                            "op object (a digest of its bytes)",
                                            "v sent",
                                            "v expected"};
constexpr std::size_t signature_size = std::size(signature_fields);
static_assert(signature_size == field_v_expected + 1, "a name for every signature field");
constexpr std::size_t equal_fields = field_v_sent;  // the v fields, last, may differ

// One pair of a v-variant call: rank s sends c elements to rank t. splitmix64's finaliser, so
// that different pairs give unrelated words and sums of them rarely collide.
std::uint64_t pair_word(std::uint64_t s, std::uint64_t t, std::uint64_t c, std::uint64_t ranks) {
  std::uint64_t k = (s * ranks + t) * 0x9e3779b97f4a7c15ull + c;
  k ^= k >> 30;
  k *= 0xbf58476d1ce4e5b9ull;
  k ^= k >> 27;
  k *= 0x94d049bb133111ebull;
  k ^= k >> 31;
  return k;
}

// TLC_CHECK of a v-variant: every count a rank sends must be the count its receiver expects,
// also between processes, where no thread sees both. Each process adds up a word per pair (s
// sends c to t) as its senders see it and as its receivers see it; over all processes the two
// sums are equal when every pair matches, and differ (but for a 2^-64 chance) when one does not.
// Two words per process, whatever the number of ranks. call_of(t): local thread t's call.
template <class CallOf>
std::array<std::int64_t, 2> count_pairs(Collective c, int threads, int first_rank, int ranks,
                                        CallOf call_of) {
  std::uint64_t sent = 0, expected = 0;
  const auto R = static_cast<std::uint64_t>(ranks);
  for (int t = 0; t < threads; ++t) {
    const Call& k = call_of(t);
    const auto me = static_cast<std::uint64_t>(first_rank + t);
    const auto root = static_cast<std::uint64_t>(k.root);
    const bool is_root = k.root == first_rank + t;
    switch (c) {
      case Collective::allgatherv:  // the counts of every rank: its own block, to everyone
        for (std::uint64_t r = 0; r < R; ++r) {
          sent += pair_word(me, r, k.recv_counts()[me], R);
          expected += pair_word(r, me, k.recv_counts()[r], R);
        }
        break;
      case Collective::gatherv:
        sent += pair_word(me, root, is_root && k.in_place ? k.recv_counts()[me] : k.send_count, R);
        if (is_root)
          for (std::uint64_t r = 0; r < R; ++r)
            expected += pair_word(r, root, k.recv_counts()[r], R);
        break;
      case Collective::scatterv:
        if (is_root)
          for (std::uint64_t r = 0; r < R; ++r) sent += pair_word(root, r, k.send_counts()[r], R);
        expected +=
            pair_word(root, me, is_root && k.in_place ? k.send_counts()[me] : k.recv_count, R);
        break;
      case Collective::alltoallv: {
        const std::span<const std::size_t> out = k.in_place ? k.recv_counts() : k.send_counts();
        for (std::uint64_t r = 0; r < R; ++r) {
          sent += pair_word(me, r, out[r], R);
          expected += pair_word(r, me, k.recv_counts()[r], R);
        }
        break;
      }
      default:
        return {0, 0};
    }
  }
  return {static_cast<std::int64_t>(sent), static_cast<std::int64_t>(expected)};
}

std::array<std::int64_t, signature_size> signature_of(const Call& c, std::size_t count,
                                                      std::array<std::int64_t, 2> pairs) {
  return {static_cast<std::int64_t>(c.collective),
          static_cast<std::int64_t>(c.op),
          static_cast<std::int64_t>(c.type.type_class),
          static_cast<std::int64_t>(c.type.size),
          traits_of(c.collective).has_root ? c.root : -1,
          traits_of(c.collective).v_variant ? -1 : static_cast<std::int64_t>(count),
          c.op_digest ? static_cast<std::int64_t>(c.op_digest(c.op_object)) : 0,
          pairs[0],
          pairs[1]};
}

std::string describe(std::size_t field, std::int64_t v) {
  switch (field) {
    case field_collective:
      return to_string(static_cast<Collective>(v));
    case field_op:
      return to_string(static_cast<BuiltinOp>(v));
    case field_element_type:
      return to_string(static_cast<TypeClass>(v));
    case field_op_digest: {
      char hex[24];
      std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(v));
      return hex;
    }
    default:
      return std::to_string(v);
  }
}

}  // namespace

std::size_t call_signature_size() noexcept { return signature_size; }

void write_call_signature(std::span<const Call* const> calls, int first_rank, int ranks,
                          std::size_t count, std::int64_t* out) {
  const Call& first = *calls[0];
  const auto mine = signature_of(
      first, count,
      count_pairs(first.collective, static_cast<int>(calls.size()), first_rank, ranks,
                  [&](int t) -> const Call& { return *calls[static_cast<std::size_t>(t)]; }));
  std::copy(mine.begin(), mine.end(), out);
}

std::string compare_signatures(std::span<const std::int64_t> all, int processes) {
  std::uint64_t sent = 0, expected = 0;
  for (int p = 0; p < processes; ++p) {
    const std::size_t at = static_cast<std::size_t>(p) * signature_size;
    for (std::size_t f = 0; f < equal_fields && p > 0; ++f) {
      const std::int64_t first = all[f], other = all[at + f];
      if (first == other) continue;
      return std::string("processes disagree (TLC_CHECK): process 0 has ") + signature_fields[f] +
             " " + describe(f, first) + " but process " + std::to_string(p) + " has " +
             describe(f, other);
    }
    sent += static_cast<std::uint64_t>(all[at + field_v_sent]);
    expected += static_cast<std::uint64_t>(all[at + field_v_expected]);
  }
  if (sent != expected)
    return "processes disagree (TLC_CHECK) about the counts of this v-variant call: a count "
           "that some rank passes for a rank of another process differs from the count that rank "
           "passes (or the processes pass different counts arrays)";
  return {};
}

// The long-wait comparison (team/process_failures.cpp) puts the same two words in the waiting
// note of a v-variant call, computed only once a wait has lasted: calls that complete soon pay
// nothing for it.
std::array<std::uint64_t, 2> variant_count_words(std::span<const Call* const> calls, int first_rank,
                                                 int ranks) {
  if (calls.empty()) return {0, 0};
  const auto words =
      count_pairs(calls[0]->collective, static_cast<int>(calls.size()), first_rank, ranks,
                  [&](int t) -> const Call& { return *calls[static_cast<std::size_t>(t)]; });
  return {static_cast<std::uint64_t>(words[0]), static_cast<std::uint64_t>(words[1])};
}

}  // namespace tlc::detail
