// The planner (select/planner.hpp): its tables, filled once per team from the cost model, and the
// rules that make one Plan per call (tlc::select_algorithm() asks it: team/selection.cpp).
#include "select/planner.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdio>

#include <tlc/algorithms.hpp>
#include <tlc/error.hpp>

#include "intra/lines.hpp"
#include "intra/sliced_reduce.hpp"

namespace tlc::detail {

const char* to_string(Leader l) noexcept {
  switch (l) {
    case Leader::first_thread:
      return "thread 0 (static)";
    case Leader::lane_threads:
      return "each lane's thread (static)";
    case Leader::arrival:
      return "the first (bcast) or last (reduce) thread to arrive in each process";
    case Leader::none:
      return "none (one process)";
  }
  return "?";
}

int Planner::band_of(std::size_t bytes) noexcept {
  if (bytes == 0) return 0;
  const int k = std::bit_width(bytes) - 1;
  const auto quarter = static_cast<int>(k >= 2 ? (bytes >> (k - 2)) & 3 : (bytes << (2 - k)) & 3);
  return 1 + 4 * k + quarter;
}

std::size_t Planner::band_start(int band) noexcept {
  if (band == 0) return 0;
  const int k = (band - 1) / 4;
  const std::size_t mantissa = 4 + static_cast<std::size_t>((band - 1) % 4);
  return k >= 2 ? mantissa << (k - 2) : (mantissa << k) >> 2;
}

Planner::Planner(const TeamShape& shape, const PlanSettings& settings)
    : shape_(shape), settings_(settings) {
  // The inline fold kernels that exist, by op, type class and element size.
  static_assert(op_count == static_cast<unsigned>(BuiltinOp::lor) + 1);
  static_assert(class_count == static_cast<unsigned>(TypeClass::opaque) + 1);
  for (unsigned op = 1; op < op_count; ++op)
    for (unsigned cls = 0; cls < class_count; ++cls)
      for (unsigned size = 1; size < size_slots; size *= 2)
        folds_[(op * class_count + cls) * size_slots + size] = builtin_line_fold(
            static_cast<BuiltinOp>(op), TypeInfo{static_cast<TypeClass>(cls), size, size});
  if (!settings_.measured.empty() && shape_.equal_processes)
    measured_shape_ =
        MeasuredShape{shape_.processes, shape_.ranks / shape_.processes, shape_.lanes};
  // The cost model once: the cheapest algorithm across processes per collective, op kind and
  // size band, evaluated at the band's first size (shared_cost).
  if (shape_.processes > 1) {
    cheapest_.assign(collective_count * 2 * bands, Algorithm::hierarchical);
    for (std::size_t c = 0; c < collective_count; ++c) {
      const auto collective = static_cast<Collective>(c);
      const bool v_variant = traits_of(collective).v_variant;
      for (int commutative = 0; commutative < 2; ++commutative) {
        // Nothing to price where one algorithm alone can serve (often so with one thread).
        int serving = 0;
        const char* why = nullptr;
        for (const auto& info : algorithm_registry())
          serving += info.collective == collective && chosen_by_cost(collective, info.id) &&
                     can_serve({collective, 1, 1, commutative != 0, false}, info.id, why);
        if (serving <= 1) continue;
        // Bands past 16 TiB per buffer take the choice of the last one below.
        constexpr int priced = 1 + 4 * 44;
        Algorithm* row = &cheapest_[(c * 2 + static_cast<std::size_t>(commutative)) * bands];
        // A v-variant's sizes differ from rank to rank, so no size may decide: it takes at every
        // size the algorithm cheapest for small blocks, where its calls mostly are.
        if (v_variant) {
          std::fill(row, row + bands, cheapest(collective, band_start(0), commutative != 0));
          continue;
        }
        for (int b = 0; b < bands; ++b)
          row[b] =
              b <= priced ? cheapest(collective, band_start(b), commutative != 0) : row[priced];
      }
    }
  }
  // Inside one process the choice is by size (flat_max_bytes), or by the times measured at this
  // shape where there are some.
  if (shape_.processes == 1 && measured_shape_) {
    constexpr int priced = 1 + 4 * 44;
    for (std::size_t c = 0; c < collective_count; ++c) {
      const auto collective = static_cast<Collective>(c);
      if (traits_of(collective).v_variant || collective == Collective::barrier ||
          !settings_.measured.covers(collective, *measured_shape_))
        continue;
      if (cheapest_.empty()) cheapest_.assign(collective_count * 2 * bands, Algorithm::flat);
      measured_single_ |= 1u << c;
      for (int commutative = 0; commutative < 2; ++commutative) {
        Algorithm* row = &cheapest_[(c * 2 + static_cast<std::size_t>(commutative)) * bands];
        for (int b = 0; b < bands; ++b)
          row[b] = b <= priced ? cheapest_measured_single(collective, band_start(b)) : row[priced];
      }
    }
  }
  // Single-process calls small enough for a begin line take the inline form wherever the plan
  // for them is flat in its default or inline form.
  if (shape_.processes == 1)
    for (std::size_t c = 0; c < collective_count; ++c) {
      const auto collective = static_cast<Collective>(c);
      if (!traits_of(collective).inline_capable) continue;
      const std::optional<Override>& o = settings_.forced[c];
      const bool by_arrival = !o && settings_.leaders == LeaderPolicy::by_arrival &&
                              find_algorithm(collective, Algorithm::dynamic) != nullptr;
      const bool inline_ok = (!o && !by_arrival) || collective == Collective::barrier ||
                             (o->algorithm == Algorithm::flat &&
                              o->form.value_or(Form::inline_line) == Form::inline_line);
      if (inline_ok) inline_collectives_ |= 1u << c;
    }
  // The lines form: the non-v collectives that carry a contribution, where nothing else is
  // forced or leads by arrival; flat forced in its default or inline form takes it wherever
  // the data fits.
  if (shape_.processes == 1)
    for (std::size_t c = 0; c < collective_count; ++c) {
      const auto collective = static_cast<Collective>(c);
      const CollectiveTraits& t = traits_of(collective);
      if (t.v_variant || collective == Collective::barrier) continue;
      const std::optional<Override>& o = settings_.forced[c];
      const bool by_arrival = !o && settings_.leaders == LeaderPolicy::by_arrival &&
                              find_algorithm(collective, Algorithm::dynamic) != nullptr;
      if (!o && !by_arrival) lines_collectives_ |= 1u << c;
      if (o && o->algorithm == Algorithm::flat &&
          o->form.value_or(Form::inline_line) == Form::inline_line)
        lines_forced_ |= 1u << c;
    }
}

bool Planner::serves_lines(const Call& c, std::size_t count) const noexcept {
  const unsigned bit = 1u << static_cast<unsigned>(c.collective);
  if (!((lines_collectives_ | lines_forced_) & bit)) return false;
  const std::size_t bytes = line_contribution_bytes(c, count, shape_.threads);
  if (bytes == 0 || bytes > lines_max_bytes) return false;
  if (traits_of(c.collective).reduction && builtin_combine(c.op, c.type) == nullptr) return false;
  if (lines_forced_ & bit) return true;
  const std::size_t buffer =
      count * c.type.size *
      (traits_of(c.collective).buffer_holds_every_block ? static_cast<std::size_t>(shape_.ranks)
                                                        : 1);
  return single_process_choice(c.collective, buffer, c.commutative) == Algorithm::flat;
}

int choice_fingerprint(const PlanSettings& settings) noexcept {
  std::uint64_t h = 1469598103934665603ull;  // FNV-1a
  auto mix = [&h](std::uint64_t value) {
    h ^= value;
    h *= 1099511628211ull;
  };
  for (const std::optional<Override>& o : settings.forced) {
    mix(o ? 1u + static_cast<unsigned>(o->algorithm) : 0u);
    mix(o && o->form ? 1u + static_cast<unsigned>(*o->form) : 0u);
  }
  mix(static_cast<unsigned>(settings.leaders));
  mix(settings.fallback_error ? 1 : 0);
  return static_cast<int>((h ^ (h >> 32)) & 0x3fffffffu);
}

// Whether algorithm a can serve calls like q on this team at all; why says why not.
bool Planner::can_serve(const PlanQuery& q, Algorithm a, const char*& why) const {
  const AlgorithmInfo* info = find_algorithm(q.collective, a);
  if (!info) {
    why = "it is not an algorithm of this collective";
    return false;
  }
  if (shape_.processes == 1) {
    if (!info->single_process && a != Algorithm::hierarchical && a != Algorithm::dynamic) {
      why = "it runs between processes and this team is one process";
      return false;
    }
    return true;
  }
  if (info->single_process) {
    why = "it works inside a single process only and this team spans several processes";
    return false;
  }
  if (!q.commutative && needs_commutative_op(q.collective, a)) {
    why =
        "it combines out of rank order and needs a commutative op (declare a commutative user "
        "op with tlc::commutative(f))";
    return false;
  }
  if (a == Algorithm::bruck && !shape_.equal_processes) {
    why = "it needs equal process blocks, and processes have different thread counts";
    return false;
  }
  // Tags name the sending and the receiving thread of a block.
  if (a == Algorithm::dynamic &&
      (q.collective == Collective::alltoall || q.collective == Collective::allreduce ||
       q.collective == Collective::reduce_scatter_block) &&
      shape_.most_threads > max_exchange_threads) {
    why =
        "it tags each block with its two threads, and MPI guarantees tags for at most 181 "
        "threads per process";
    return false;
  }
  if (a == Algorithm::full_lane && shape_.equal_processes && shape_.threads == 1) {
    why = "every process has one thread, which would drive every lane in turn";
    return false;
  }
  return true;
}

// The planner compares whole calls (predict_call), not only their inter-process phases: the
// algorithms differ inside the process too (the direct form copies nothing, a pipelined form
// overlaps its copies with the network). Every process must choose alike, so the call is priced
// on what they share: the average thread count, and the direct form only where every process
// has one thread.
bool Planner::chosen_by_cost(Collective c, Algorithm a) const noexcept {
  // The ring passes each block on through the processes between its sender and a receiver, and
  // a process skips a block it counts as empty: where the counts of allgatherv disagree, some
  // processes can complete with what they expect while others wait (docs/reliability.md). MPI's
  // allgatherv is taken unless the ring is forced.
  if (c == Collective::allgatherv && a == Algorithm::ring) return false;
  return a != Algorithm::dynamic ||
         (settings_.leaders == LeaderPolicy::by_plan && measured_shape_ &&
          !settings_.measured.points(c, a, *measured_shape_).empty());
}

namespace {

// Where leaders by arrival are no slower than static ones with balanced arrivals, across
// processes with several threads: bytes of one rank's block from `from` up to, not including,
// `below` (a collective may have several ranges). Measured on the development machine
// (docs/imbalance.md, "Leaders by default"); a tuning file with measured times of `dynamic` at the
// team's shape replaces this table (the cost table then chooses).
struct ArrivalRange {
  Collective collective;
  std::size_t from, below;
};
// allreduce has none: with balanced arrivals its blocks by rank cost more than the static
// algorithms at every size but the largest.
constexpr std::size_t KiB = 1024, MiB = 1024 * KiB, unbounded = ~std::size_t{0};
constexpr ArrivalRange arrival_pays[] = {
    {Collective::bcast, 1, 8 * MiB},
    {Collective::scatter, 4 * KiB, unbounded},
    {Collective::reduce, 1, 8 * MiB},
    {Collective::reduce_scatter_block, 256 * KiB, unbounded},
    {Collective::alltoall, 2 * KiB, unbounded},
    // From 1 MiB the arrival-led scan's deposits cost more (at 1 x 2 as well: a cache effect),
    // while the static plan keeps its staged form up to 1 MiB and pipelines above.
    {Collective::scan, 1, 1 * MiB},
    {Collective::scan, 2 * MiB, unbounded},
    {Collective::exscan, 1, unbounded},
};

}  // namespace

// Where the uncalibrated choice inside one process moved from flat_max_bytes because the other
// form measured faster at 1 x 2 (docs/benchmarking.md, "Uncalibrated defaults" and "Small calls
// on lines", have the figures): scatter's and exscan's flat form as long as it carries the data
// (copies it first, while it is in the writer's cache), flat_carried_max_bytes: past it, flat
// reads the other threads' freshly written buffers where they are, and sliced is the faster;
// and for the others, as far as the lines form (one synchronisation, the data through the
// callers' carry buffers) beat sliced (two, the data read in place).
bool flat_by_size(Collective c, std::size_t bytes) noexcept {
  // Past flat_max_bytes, where the lines form carries a call of a built-in op: its one
  // synchronisation against sliced's two, measured at 1 x 2 (docs/benchmarking.md, "Small calls
  // on lines"). bytes is the buffer, one block but for alltoall (every block).
  switch (c) {
    case Collective::allreduce:
      return bytes <= 1024;
    case Collective::bcast:
    case Collective::scatter:
    case Collective::exscan:
      return bytes <= flat_carried_max_bytes;
    case Collective::reduce:
    case Collective::allgather:
      return bytes <= 2048;
    case Collective::gather:
    case Collective::alltoall:  // every block: 2 KiB a block at 1 x 2
      return bytes <= lines_max_bytes;
    default:
      return bytes <= flat_max_bytes;
  }
}

bool Planner::led_by_arrival(const PlanQuery& q) const {
  if (!find_algorithm(q.collective, Algorithm::dynamic)) return false;
  switch (settings_.leaders) {
    case LeaderPolicy::by_arrival:
      return true;
    case LeaderPolicy::fixed:
      return false;
    case LeaderPolicy::by_plan:
      break;
  }
  // One process: the static algorithms on shared buffers are hard to beat. One thread in every
  // process: nobody to lead but the one thread, and the direct forms move nothing inside it.
  if (shape_.processes == 1 || shape_.most_threads == 1) return false;
  // Measured at this shape: the cost table, which then holds dynamic too, decides.
  if (chosen_by_cost(q.collective, Algorithm::dynamic)) return false;
  const std::size_t bytes = q.count * q.element_size;
  for (const ArrivalRange& r : arrival_pays)
    if (r.collective == q.collective && bytes >= r.from && bytes < r.below) return true;
  return false;
}

std::optional<Plan> Planner::arrival_alternative(const PlanQuery& q, const Plan& chosen,
                                                 std::size_t min_bytes) const {
  if (settings_.leaders != LeaderPolicy::by_plan || chosen.leader() == Leader::arrival ||
      settings_.forced[static_cast<std::size_t>(q.collective)] || shape_.processes == 1 ||
      shape_.most_threads == 1 || traits_of(q.collective).v_variant ||
      q.count * q.element_size < min_bytes || chosen_by_cost(q.collective, Algorithm::dynamic))
    return std::nullopt;
  const char* why = nullptr;
  if (!can_serve(q, Algorithm::dynamic, why)) return std::nullopt;
  return in_form(q, Algorithm::dynamic, std::nullopt, why);
}

std::optional<double> Planner::shared_cost(const PlanQuery& q, Algorithm a) const {
  if (!chosen_by_cost(q.collective, a)) return std::nullopt;
  const std::optional<double> model = model_cost(q, a);
  if (!model) return model;
  return *model * measured_scale(q, a);
}

double Planner::measured_scale(const PlanQuery& q, Algorithm a) const {
  if (!measured_shape_) return 1;
  const std::span<const MeasuredPoint> points =
      settings_.measured.points(q.collective, a, *measured_shape_);
  if (points.empty()) return 1;
  const std::size_t element = std::max<std::size_t>(1, q.element_size);
  return measured_factor(points, q.count * element, [&](std::size_t bytes) {
    PlanQuery at = q;
    at.count = std::max<std::size_t>(1, bytes / element);
    return model_cost(at, a);
  });
}

Algorithm Planner::single_process_choice(Collective c, std::size_t bytes, bool commutative) const {
  if ((measured_single_ >> static_cast<unsigned>(c)) & 1u)
    return cheapest_[(static_cast<std::size_t>(c) * 2 + (commutative ? 1 : 0)) * bands +
                     static_cast<std::size_t>(band_of(bytes))];
  if (c == Collective::barrier || (!traits_of(c).v_variant && flat_by_size(c, bytes)))
    return Algorithm::flat;
  if (shape_.numa_groups > 1 && find_algorithm(c, Algorithm::two_level))
    return Algorithm::two_level;
  return Algorithm::sliced;
}

Algorithm Planner::cheapest_measured_single(Collective c, std::size_t bytes) const {
  const std::size_t blocks =
      traits_of(c).buffer_holds_every_block ? static_cast<std::size_t>(shape_.ranks) : 1;
  const PlanQuery q{c, bytes / blocks, 1, true, false};
  // The default when nothing measured serves: the size rule of automatic().
  Algorithm best = flat_by_size(c, bytes) ? Algorithm::flat
                   : shape_.numa_groups > 1 && find_algorithm(c, Algorithm::two_level)
                       ? Algorithm::two_level
                       : Algorithm::sliced;
  double best_cost = -1;
  for (const Algorithm a : {Algorithm::flat, Algorithm::sliced, Algorithm::two_level}) {
    if (!find_algorithm(c, a) || settings_.measured.points(c, a, *measured_shape_).empty())
      continue;
    const std::optional<double> cost = shared_cost(q, a);
    if (cost && (best_cost < 0 || *cost < best_cost)) {
      best = a;
      best_cost = *cost;
    }
  }
  return best;
}

std::optional<double> Planner::model_cost(const PlanQuery& q, Algorithm a) const {
  const char* why = nullptr;
  if (!can_serve(q, a, why)) return std::nullopt;
  std::optional<Plan> p = in_form(q, a, std::nullopt, why);
  if (!p) return std::nullopt;
  if (p->form == Form::direct && !p->one_thread_everywhere) p->form = Form::staged;
  // Priced in the form the call runs in (a small flat call takes the inline form), so that the
  // measured times of an algorithm scale the model of what was measured.
  *p = as_run(q, *p);
  const int threads = std::max(
      1, static_cast<int>(std::lround(static_cast<double>(shape_.ranks) / shape_.processes)));
  return tlc::detail::predict_call(call_query(q, *p, threads), settings_.costs);
}

CallCostQuery Planner::call_query(const PlanQuery& q, const Plan& p, int threads) const {
  CallCostQuery query;
  query.across = {q.collective,          q.count * q.element_size, shape_.processes,
                  shape_.ranks,          std::max(1, p.lanes),     q.commutative,
                  shape_.equal_processes};
  query.threads = threads;
  query.numa_groups = shape_.numa_groups;
  query.algorithm = p.algorithm;
  query.form = p.form;
  query.chunk_bytes = p.chunk_bytes;
  return query;
}

Algorithm Planner::cheapest(Collective c, std::size_t bytes, bool commutative) const {
  // The table is banded by the bytes of one thread's buffer; the model prices one rank block.
  const std::size_t blocks =
      traits_of(c).buffer_holds_every_block ? static_cast<std::size_t>(shape_.ranks) : 1;
  const PlanQuery q{c, bytes / blocks, 1, commutative, false};
  Algorithm best = Algorithm::hierarchical;
  double best_cost = -1;
  for (const auto& info : algorithm_registry()) {
    if (info.collective != c) continue;
    const std::optional<double> cost = shared_cost(q, info.id);
    if (cost && (best_cost < 0 || *cost < best_cost)) {
      best = info.id;
      best_cost = *cost;
    }
  }
  return best;
}

// Pipelining pays from two chunks up, where the threads have an intra-process phase to overlap
// (not with one thread everywhere and one leader) and, for bcast and the movers, where cores are
// to spare. The same answer on every process: it depends on shared values only.
bool Planner::pipelines_by_default(const PlanQuery& q, Algorithm a) const {
  if (is_multi_sender(a)) return false;
  if (a == Algorithm::hierarchical && shape_.equal_processes && shape_.threads == 1) return false;
  const std::size_t chunk = settings_.pipeline_chunk_bytes;
  switch (traits_of(q.collective).chunking) {
    case Chunking::none:
      return false;
    case Chunking::block:
      if (q.collective == Collective::bcast && !settings_.pipeline_movers) return false;
      return q.count * q.element_size >= 2 * chunk;
    case Chunking::pieces: {
      if (!settings_.pipeline_movers) return false;
      const auto lanes = static_cast<std::size_t>(uses_lanes(a) ? shape_.lanes : 1);
      const std::size_t per_chunk = std::max<std::size_t>(
          1, chunk * lanes / (q.element_size * static_cast<std::size_t>(shape_.ranks)));
      return q.count >= 2 * per_chunk;
    }
  }
  return false;
}

// The one-thread composition on the callers' buffers: a hierarchical collective that has one,
// in a process of one thread (forced: in every process, so that no process is left without it).
// The multi-sender algorithms that have one run it with one thread everywhere only (their
// messages assume every rank block is one process's).
static bool direct_serves(const PlanQuery& q, const TeamShape& s, Algorithm a, bool forced) {
  const bool everywhere = s.equal_processes && s.threads == 1;
  if (s.threads != 1 || (forced && !everywhere)) return false;
  if (a != Algorithm::hierarchical) return everywhere && multi_sender_direct(q.collective, a);
  switch (traits_of(q.collective).hierarchical_direct) {
    case DirectForm::none:
      return false;
    case DirectForm::one_thread_here:
      return true;
    case DirectForm::not_in_place:
      return !q.in_place;
    case DirectForm::one_thread_everywhere:
      return everywhere;
  }
  return false;
}

std::optional<Plan> Planner::in_form(const PlanQuery& q, Algorithm a, std::optional<Form> f,
                                     const char*& why) const {
  const Collective c = q.collective;
  Plan p;
  p.algorithm = a;
  if (a == Algorithm::dynamic) {  // one form: its own protocol, on the process communicator
    p.form = Form::staged;
    p.one_thread_everywhere = shape_.equal_processes && shape_.threads == 1;
    return p;  // f can only be staged: the registry gives it no other form
  }
  if (shape_.processes == 1) {
    p.lanes = 0;
    switch (a) {
      case Algorithm::hierarchical:  // nothing between processes: the single-process work
        p.form = c == Collective::barrier ? Form::inline_line : Form::sliced;
        return p;
      case Algorithm::flat: {
        // The inline form and its lines form are taken before any plan is asked for
        // (Planner::serves_inline, serves_lines): a call that reaches here does not fit them,
        // or its op is not built in.
        if (f == Form::inline_line && c != Collective::barrier) {
          why =
              "the inline form carries at most 4096 bytes per thread (a begin line 32) of a "
              "built-in op on a built-in type";
          return std::nullopt;
        }
        p.form = c == Collective::barrier ? Form::inline_line : Form::carried;
        return p;
      }
      case Algorithm::two_level:
        p.form = Form::two_level;
        return p;
      default:
        p.form = Form::sliced;
        return p;
    }
  }
  p.lanes = uses_lanes(a) ? shape_.lanes : 1;
  p.one_thread_everywhere = shape_.equal_processes && shape_.threads == 1;
  if (c == Collective::barrier) {
    p.form = Form::staged;
    return p;
  }
  if (!f) {
    if (pipelines_by_default(q, a)) {
      p.form = Form::pipelined;
      p.chunk_bytes = settings_.pipeline_chunk_bytes;
    } else {
      p.form = direct_serves(q, shape_, a, false) ? Form::direct : Form::staged;
    }
    return p;
  }
  switch (*f) {
    case Form::pipelined:
      p.form = Form::pipelined;
      p.chunk_bytes = settings_.pipeline_chunk_bytes;
      return p;
    case Form::direct:
      if (!direct_serves(q, shape_, a, true)) {
        why =
            "the direct form needs one thread in every process (and, for alltoall, a call "
            "that is not in place; for a multi-sender algorithm, one that has it)";
        return std::nullopt;
      }
      p.form = Form::direct;
      return p;
    default:
      p.form = Form::staged;
      return p;
  }
}

Plan Planner::automatic(const PlanQuery& q) const {
  const Collective c = q.collective;
  const CollectiveTraits& t = traits_of(c);
  const char* unused = nullptr;
  if (led_by_arrival(q)) return *in_form(q, Algorithm::dynamic, std::nullopt, unused);
  if (shape_.processes == 1) {
    const std::size_t bytes =
        q.count * q.element_size *
        (t.buffer_holds_every_block ? static_cast<std::size_t>(shape_.ranks) : 1);
    return *in_form(q, single_process_choice(c, bytes, q.commutative), std::nullopt, unused);
  }
  // A v-variant's row holds one algorithm at every band.
  const std::size_t bytes =
      q.count * q.element_size *
      (t.buffer_holds_every_block ? static_cast<std::size_t>(shape_.ranks) : 1);
  const Algorithm a =
      cheapest_[(static_cast<std::size_t>(c) * 2 + (q.commutative ? 1 : 0)) * bands +
                static_cast<std::size_t>(band_of(bytes))];
  return *in_form(q, a, std::nullopt, unused);
}

void Planner::report_fallback(Collective c, const char* why, const Plan& used) const {
  if (!settings_.verbose) return;
  const std::uint32_t bit = 1u << static_cast<unsigned>(c);
  if (reported_.bits.fetch_or(bit) & bit) return;
  std::fprintf(stderr,
               "tlc: the algorithm forced for %s cannot serve a call (%s); it runs %s:%s "
               "instead (TLC_FALLBACK=error makes this an error)\n",
               to_string(c), why, to_string(used.algorithm), to_string(used.form));
}

Plan Planner::plan(const PlanQuery& q, std::string* reason) const {
  const std::optional<Override>& o = settings_.forced[static_cast<std::size_t>(q.collective)];
  if (!o) return automatic(q);
  const char* why = "";
  Plan p;
  if (!can_serve(q, o->algorithm, why)) {
    p = automatic(q);
  } else if (auto forced = in_form(q, o->algorithm, o->form, why)) {
    return *forced;
  } else {
    const char* unused = nullptr;
    p = *in_form(q, o->algorithm, std::nullopt, unused);  // the algorithm in its own form
  }
  p.fell_back = true;
  if (reason)
    *reason = std::string("the algorithm forced for ") + to_string(q.collective) + " (" +
              to_string(o->algorithm) + (o->form ? std::string(":") + to_string(*o->form) : "") +
              ") cannot serve this call: " + why;
  if (!settings_.fallback_error) report_fallback(q.collective, why, p);
  return p;
}

std::vector<std::pair<Algorithm, double>> Planner::predictions(const PlanQuery& q) const {
  std::vector<std::pair<Algorithm, double>> all;
  // In one process the single-process algorithms, across processes the others.
  for (const auto& info : algorithm_registry())
    if (info.collective == q.collective && info.single_process == (shape_.processes == 1))
      if (const std::optional<double> cost = shared_cost(q, info.id))
        all.emplace_back(info.id, *cost);
  return all;
}

std::optional<Plan> Planner::forced_plan(const PlanQuery& q, Algorithm a) const {
  const char* why = nullptr;
  if (!can_serve(q, a, why)) return std::nullopt;
  return in_form(q, a, std::nullopt, why);
}

Plan Planner::as_run(const PlanQuery& q, Plan p) const {
  if (shape_.processes != 1 || p.algorithm != Algorithm::flat) return p;
  const std::optional<Override>& o = settings_.forced[static_cast<std::size_t>(q.collective)];
  if (o && o->form && *o->form != Form::inline_line) return p;
  // The inline form takes calls of built-in ops on built-in types: priced as a sum of floats.
  Call probe;
  probe.collective = q.collective;
  probe.type = {TypeClass::floating, static_cast<std::uint32_t>(q.element_size),
                static_cast<std::uint32_t>(q.element_size)};
  probe.op = q.commutative ? BuiltinOp::sum : BuiltinOp::none;
  if (q.collective == Collective::barrier || serves_inline(probe, q.count) ||
      serves_lines(probe, q.count))
    p.form = Form::inline_line;
  return p;
}

std::optional<double> Planner::predict_call(const PlanQuery& q, const Plan& p) const {
  return tlc::detail::predict_call(call_query(q, p, shape_.threads), settings_.costs);
}

std::optional<double> Planner::priced_call(const PlanQuery& q, const Plan& p) const {
  const std::optional<double> model = predict_call(q, p);
  if (!model) return model;
  return *model * measured_scale(q, p.algorithm);
}

Selection Planner::describe(const PlanQuery& q, const Plan& p, std::string reason) const {
  Selection selection;
  selection.name = to_string(p.algorithm);
  selection.form = to_string(p.form);
  selection.chunk_bytes = p.chunk_bytes;
  selection.lanes = p.lanes;
  selection.leader = to_string(p.leader());
  if (p.fell_back) selection.fallback = std::move(reason);
  for (const auto& [algorithm, seconds] : predictions(q))
    selection.predicted_seconds.emplace_back(to_string(algorithm), seconds);
  selection.plan_seconds = priced_call(q, p);
  return selection;
}

}  // namespace tlc::detail
