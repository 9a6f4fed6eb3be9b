// The signature of a call across processes: what every process must agree on for it, as
// numbers (the same collective on the same element type, op, root and count per rank block, and
// for a v-variant two words of its counts). TLC_CHECK compares it before a call's step between
// processes (algo/validation.cpp, algo/posted/calls.cpp), and the long-wait comparison puts the
// v-variant words in its notes (team/process_failures.cpp).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include <tlc/detail/call.hpp>

namespace tlc::detail {

// call_signature_size() numbers written to out from the calls of all threads of this process
// (local thread t has global rank first_rank + t, of `ranks`; count elements per rank block), and
// the verdict over every process's signature, in process order ("" when all agree).
std::size_t call_signature_size() noexcept;
void write_call_signature(std::span<const Call* const> calls, int first_rank, int ranks,
                          std::size_t count, std::int64_t* out);
std::string compare_signatures(std::span<const std::int64_t> all, int processes);
// The two words of the signature that carry a v-variant's counts, for the calls of all threads
// here (as write_call_signature): what this process's ranks send, what they expect; over all
// processes the sums of each are equal when every pair of ranks agrees.
std::array<std::uint64_t, 2> variant_count_words(std::span<const Call* const> calls, int first_rank,
                                                 int ranks);

}  // namespace tlc::detail
