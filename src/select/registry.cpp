// The registry (select/registry.hpp): every algorithm of every collective with its forms and
// summary, the parsing of TLC_ALGO_<COLLECTIVE> values, and the public tlc::algorithms().
#include "select/registry.hpp"

#include <tlc/algorithms.hpp>
#include <tlc/error.hpp>

namespace tlc::detail {

namespace {

constexpr const char* flat_summary =
    "single process, small messages: contributions travel in the threads' flag slots, each "
    "thread computes its own output, one rendezvous";
constexpr const char* sliced_summary =
    "single process, large messages: publish-and-slice, every thread moves an equal share of "
    "all bytes (reductions fused with the write into every output)";
constexpr const char* hierarchical_summary =
    "intra-process phase into a staging buffer, thread 0 runs the MPI collective between "
    "processes, intra-process phase out (single process: as sliced)";
constexpr const char* two_level_summary =
    "single process over several NUMA domains: reduce inside each domain, then across domains, "
    "so each byte crosses the socket link once";
constexpr const char* full_lane_summary =
    "as hierarchical, but the staging buffer is cut into L parts and lane thread l runs the MPI "
    "collective on part l over lane l, all lanes at once";

constexpr const char* dynamic_bcast_summary =
    "led by arrival: the root copies its data aside and returns at once; in each process the "
    "first thread to arrive runs the MPI step, every thread copies out as soon as the data is "
    "there";
constexpr const char* dynamic_reduce_summary =
    "led by arrival: non-root threads copy their contribution aside and return at once; the "
    "last thread to arrive in a process combines (the waiting root helps) and takes the "
    "process's part in a binomial tree of point-to-point messages between processes";

constexpr const char* dynamic_scatter_summary =
    "led by arrival: the root copies its send buffer aside and returns at once; in each process "
    "the first thread to arrive runs the MPI step, every thread copies its block out as soon as "
    "it is there";
constexpr const char* dynamic_reduction_summary =
    "led by arrival: rank r reduces block r of every input itself (rank order); each thread "
    "sends its blocks for other processes as it arrives, reads the blocks of the threads here "
    "in place once all have arrived";
constexpr const char* dynamic_allreduce_summary =
    "led by arrival: rank r reduces block r of every input itself (rank order) and sends the "
    "result to every other rank; each thread sends its blocks for other processes as it "
    "arrives, the threads here read each other's blocks in place";
constexpr const char* dynamic_scan_summary =
    "led by arrival: every thread copies its contribution aside on arrival and waits only for "
    "the ranks below it; the last thread to arrive in a process sends the process's total to "
    "the processes above, the first receives the totals from below";
constexpr const char* dynamic_alltoall_summary =
    "led by arrival: each thread sends its blocks for other processes and posts its receives as "
    "it arrives; two threads of a process exchange their blocks when the second of them arrives "
    "(the waiting threads do the last arriver's), so after the last arrival only its blocks move";

constexpr std::uint8_t bit(Form f) {
  return static_cast<std::uint8_t>(1u << static_cast<unsigned>(f));
}

// The forms an algorithm takes for a collective.
constexpr std::uint8_t forms_of(Collective c, Algorithm a) {
  const CollectiveTraits& t = traits_of(c);
  const std::uint8_t pipelined = t.chunking != Chunking::none ? bit(Form::pipelined) : 0;
  switch (a) {
    case Algorithm::flat:
      return bit(Form::carried) | (t.inline_capable ? bit(Form::inline_line) : 0);
    case Algorithm::sliced:
      return bit(Form::sliced);
    case Algorithm::two_level:
      return bit(Form::two_level);
    case Algorithm::hierarchical: {
      // Collectives whose one-thread composition can run on the callers' buffers.
      const bool direct = t.hierarchical_direct != DirectForm::none;
      return bit(Form::staged) | (direct ? bit(Form::direct) : 0) | pipelined;
    }
    case Algorithm::full_lane:
      return bit(Form::staged) | pipelined;
    default:
      // Multi-sender algorithms that run on the callers' buffers with one thread everywhere.
      return bit(Form::staged) | (multi_sender_direct(c, a) ? bit(Form::direct) : 0);
  }
}

constexpr AlgorithmInfo entry(Collective c, const char* name, Algorithm a, bool single,
                              const char* summary) {
  return {c, name, a, single, forms_of(c, a), summary};
}

// clang-format off
#define TLC_DATA_COLLECTIVE(c)                                                                 \
  entry(Collective::c, "hierarchical", Algorithm::hierarchical, false, hierarchical_summary),  \
  entry(Collective::c, "flat", Algorithm::flat, true, flat_summary),                           \
  entry(Collective::c, "sliced", Algorithm::sliced, true, sliced_summary),                     \
  entry(Collective::c, "full_lane", Algorithm::full_lane, false, full_lane_summary)
// clang-format on

// The first entry of each collective is its multi-process default.
constexpr AlgorithmInfo registry[] = {
    entry(Collective::barrier, "hierarchical", Algorithm::hierarchical, false,
          "rendezvous of the process's threads; thread 0 runs MPI_Barrier between processes"),
    entry(Collective::barrier, "flat", Algorithm::flat, true,
          "single process: the begin step (one cache line per thread) is the whole barrier"),
    entry(Collective::barrier, "dissemination", Algorithm::dissemination, false,
          "rendezvous of the process's threads; thread 0 runs tlc's dissemination barrier "
          "(one-byte messages, ceil(log2 P) rounds) between processes"),
    TLC_DATA_COLLECTIVE(bcast),
    entry(Collective::bcast, "dynamic", Algorithm::dynamic, false, dynamic_bcast_summary),
    TLC_DATA_COLLECTIVE(reduce),
    entry(Collective::reduce, "dynamic", Algorithm::dynamic, false, dynamic_reduce_summary),
    entry(Collective::reduce, "two_level", Algorithm::two_level, true, two_level_summary),
    TLC_DATA_COLLECTIVE(allreduce),
    entry(Collective::allreduce, "two_level", Algorithm::two_level, true, two_level_summary),
    entry(Collective::allreduce, "dynamic", Algorithm::dynamic, false, dynamic_allreduce_summary),
    TLC_DATA_COLLECTIVE(allgather),
    TLC_DATA_COLLECTIVE(allgatherv),
    TLC_DATA_COLLECTIVE(gather),
    TLC_DATA_COLLECTIVE(gatherv),
    TLC_DATA_COLLECTIVE(scatter),
    entry(Collective::scatter, "dynamic", Algorithm::dynamic, false, dynamic_scatter_summary),
    TLC_DATA_COLLECTIVE(scatterv),
    TLC_DATA_COLLECTIVE(alltoall),
    entry(Collective::alltoall, "dynamic", Algorithm::dynamic, false, dynamic_alltoall_summary),
    TLC_DATA_COLLECTIVE(alltoallv),
    TLC_DATA_COLLECTIVE(reduce_scatter_block),
    entry(Collective::reduce_scatter_block, "dynamic", Algorithm::dynamic, false,
          dynamic_reduction_summary),
    TLC_DATA_COLLECTIVE(scan),
    entry(Collective::scan, "dynamic", Algorithm::dynamic, false, dynamic_scan_summary),
    TLC_DATA_COLLECTIVE(exscan),
    entry(Collective::exscan, "dynamic", Algorithm::dynamic, false, dynamic_scan_summary),
    entry(Collective::allgather, "ring", Algorithm::ring, false,
          "multi-sender ring allgather: each lane thread runs the ring on its part of every block"),
    entry(
        Collective::allgatherv, "ring", Algorithm::ring, false,
        "multi-sender ring allgatherv: each lane thread runs the ring on its part of every block"),
    entry(
        Collective::allgather, "bruck", Algorithm::bruck, false,
        "multi-sender Bruck allgather (equal process blocks; ceil(log2 P) rounds), per lane part"),
    entry(Collective::bcast, "binomial", Algorithm::binomial, false,
          "multi-sender pipelined binomial-tree bcast, each lane thread on its part"),
    entry(Collective::reduce, "binomial", Algorithm::binomial, false,
          "multi-sender binomial-tree reduce (any op, rank order kept), each lane thread on its "
          "part"),
    entry(Collective::alltoall, "pairwise", Algorithm::pairwise, false,
          "multi-sender pairwise-exchange alltoall (P-1 steps), each lane thread on its part"),
    entry(Collective::alltoallv, "pairwise", Algorithm::pairwise, false,
          "multi-sender pairwise-exchange alltoallv (P-1 steps), each lane thread on its part"),
    entry(Collective::alltoall, "isend", Algorithm::isend, false,
          "multi-sender alltoall posting every send and receive at once, per lane part"),
    entry(Collective::alltoallv, "isend", Algorithm::isend, false,
          "multi-sender alltoallv posting every send and receive at once, per lane part"),
    entry(Collective::reduce_scatter_block, "pairwise", Algorithm::pairwise, false,
          "multi-sender pairwise-exchange reduce-scatter (commutative ops), per lane part"),
    entry(Collective::allreduce, "recursive_doubling", Algorithm::recursive_doubling, false,
          "multi-sender recursive-doubling allreduce (any op, rank order kept), per lane part"),
    entry(Collective::allreduce, "rabenseifner", Algorithm::rabenseifner, false,
          "multi-sender Rabenseifner allreduce: recursive-halving reduce-scatter + "
          "recursive-doubling allgather (commutative ops), per lane part"),
    entry(Collective::scan, "recursive_doubling", Algorithm::recursive_doubling, false,
          "multi-sender recursive-doubling scan (any op, rank order kept), per lane part"),
    entry(Collective::exscan, "recursive_doubling", Algorithm::recursive_doubling, false,
          "multi-sender recursive-doubling exscan (any op, rank order kept), per lane part"),
    entry(Collective::gather, "linear", Algorithm::linear, false,
          "multi-sender linear gather: every process sends its blocks to the root in one message, "
          "per lane part"),
    entry(Collective::scatter, "linear", Algorithm::linear, false,
          "multi-sender linear scatter: the root sends every process its blocks in one message, "
          "per lane part"),
    entry(Collective::gatherv, "linear", Algorithm::linear, false,
          "multi-sender linear gatherv: every process sends its blocks to the root in one message, "
          "per lane part"),
    entry(Collective::scatterv, "linear", Algorithm::linear, false,
          "multi-sender linear scatterv: the root sends every process its blocks in one message, "
          "per lane part"),
};
#undef TLC_DATA_COLLECTIVE

constexpr const char* form_names[form_count] = {"inline", "carried", "sliced",   "two_level",
                                                "staged", "direct",  "pipelined"};

}  // namespace

std::span<const AlgorithmInfo> algorithm_registry() noexcept { return registry; }

const AlgorithmInfo* find_algorithm(Collective c, Algorithm a) noexcept {
  for (const auto& info : registry)
    if (info.collective == c && info.id == a) return &info;
  return nullptr;
}

const char* to_string(Form f) noexcept { return form_names[static_cast<int>(f)]; }

const char* to_string(Algorithm a) noexcept {
  for (const auto& info : registry)
    if (info.id == a) return info.name;
  return "?";
}

Override parse_override(Collective c, const std::string& text, const std::string& origin) {
  const std::size_t colon = text.find(':');
  const std::string name = text.substr(0, colon);
  std::string known;
  const AlgorithmInfo* found = nullptr;
  for (const auto& info : registry) {
    if (info.collective != c) continue;
    if (name == info.name) found = &info;
    known += known.empty() ? "" : ", ";
    known += info.name;
  }
  if (!found)
    throw Error(Errc::invalid_argument, "tlc: " + origin + " names unknown algorithm '" + name +
                                            "' for " + to_string(c) + " (known: " + known + ")");
  Override o{found->id, std::nullopt};
  if (colon == std::string::npos) return o;
  const std::string form = text.substr(colon + 1);
  std::string forms;
  for (int f = 0; f < form_count; ++f) {
    if (!found->has(static_cast<Form>(f))) continue;
    if (form == form_names[f]) o.form = static_cast<Form>(f);
    forms += forms.empty() ? "" : ", ";
    forms += form_names[f];
  }
  if (!o.form)
    throw Error(Errc::invalid_argument, "tlc: " + origin + " names unknown form '" + form +
                                            "' of " + name + " for " + to_string(c) +
                                            " (its forms: " + forms + ")");
  return o;
}

}  // namespace tlc::detail

namespace tlc {

std::vector<AlgorithmDescription> algorithms() {
  std::vector<AlgorithmDescription> all;
  for (const auto& info : detail::algorithm_registry()) {
    std::vector<std::string> forms;
    for (int f = 0; f < detail::form_count; ++f)
      if (info.has(static_cast<detail::Form>(f)))
        forms.emplace_back(detail::to_string(static_cast<detail::Form>(f)));
    all.push_back({info.collective, info.name, info.single_process, info.summary, forms});
  }
  return all;
}

}  // namespace tlc
