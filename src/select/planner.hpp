// The one place that decides what runs (docs/design.md section 7). The Planner turns a call
// (collective, bytes, op, in-place) and the team's shape and overrides into a Plan: the algorithm,
// its form, the pipeline chunk, the lanes and who leads. Tables are filled once per team (the cost
// model is evaluated at construction for every collective and size band, as NCCL's tuning tables
// are), so a call is a lookup plus a few comparisons.
//
// Every process computes the same plan from the same inputs wherever processes must make
// matching MPI calls: the algorithm and whether a call pipelines depend only on what all
// processes share (sizes, op, forced choices, the whole team's shape). The one local choice,
// `direct` (one thread here runs the MPI call on its own buffers), makes the same MPI call as
// `staged`, except where every process has one thread, which every process knows.
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <tlc/algorithms.hpp>
#include <tlc/detail/call.hpp>

#include "intra/sliced_reduce.hpp"
#include "select/collective_traits.hpp"
#include "select/cost_model.hpp"
#include "select/measured.hpp"
#include "select/registry.hpp"

namespace tlc::detail {

// Who performs the inter-process step: statically thread 0 on the process communicator or each
// lane's thread on its lane, or the thread elected by its arrival (algo/arrival/).
enum class Leader : std::uint8_t { first_thread, lane_threads, arrival, none };
const char* to_string(Leader l) noexcept;

// Who leads is recorded once, by the algorithm and the lanes: leader() derives it, so that a
// plan cannot say "led by arrival" in one field and run a static algorithm by another.
struct Plan {
  Algorithm algorithm = Algorithm::hierarchical;
  // The arrival-led algorithms (dynamic) have one form, their own protocol: staged, which is
  // what they do (deposits, then one step on the process communicator); the form is not read.
  Form form = Form::staged;
  std::size_t chunk_bytes = 0;  // pipelined: bytes per lane of one chunk
  int lanes = 1;  // lanes the network step drives (1: the process communicator; 0: one process)
  // Processes all hold blocks of the same size in one thread each: the direct form may call MPI's
  // non-v collective (MPI_Allgather, MPI_Alltoall, MPI_Reduce_scatter_block).
  bool one_thread_everywhere = false;
  bool fell_back = false;  // a forced choice could not serve this call
  friend bool operator==(const Plan&, const Plan&) = default;

  constexpr Leader leader() const noexcept {
    if (algorithm == Algorithm::dynamic) return Leader::arrival;
    if (lanes == 0) return Leader::none;
    return uses_lanes(algorithm) ? Leader::lane_threads : Leader::first_thread;
  }
};

// What the planner may look at of the team. Everything but `threads` and `numa_groups` is the
// same on every process.
struct TeamShape {
  int processes = 1;
  int threads = 1;  // threads of this process
  int lanes = 1;
  int numa_groups = 1;  // runs of consecutive threads in one NUMA domain
  int ranks = 1;        // threads of all processes
  bool equal_processes = true;
  int most_threads = 1;  // threads of the process with the most
};

// TLC_LEADERS / TeamOptions::leaders: "auto", "static", "dynamic".
enum class LeaderPolicy : std::uint8_t {
  by_plan,     // led by arrival where that is no slower with balanced arrivals (Planner)
  fixed,       // static leaders: thread 0, or the lane threads
  by_arrival,  // led by arrival wherever the collective has such an algorithm
};

// What the planner is told once per team (read by the team's configuration).
struct PlanSettings {
  std::array<std::optional<Override>, collective_count> forced{};
  bool fallback_error = false;  // TLC_FALLBACK=error: a forced choice that cannot serve throws
  bool verbose = false;         // TLC_VERBOSE=1: say once per collective when a force falls back
  // Who leads the collectives that have an algorithm led by arrival (registry: "dynamic") when
  // none is forced (TLC_LEADERS): the plan's choice, always static, always by arrival.
  LeaderPolicy leaders = LeaderPolicy::by_plan;
  CostParameters costs{};
  // Times measured on this machine (the tuning file's `measured` lines): where the team has a
  // measured shape, the model's prices are scaled to them (select/measured.hpp).
  MeasuredTimes measured{};
  std::size_t pipeline_chunk_bytes = std::size_t{1} << 20;
  // Whether bcast and the movers pipeline by default (no node oversubscribed, or a chunk size
  // asked for): their chunks need cores to spare for the overlap to pay.
  bool pipeline_movers = true;
};

// One call as the planner sees it.
struct PlanQuery {
  Collective collective = Collective::allreduce;
  std::size_t count = 0;  // elements per rank block (0 for v-variants)
  std::size_t element_size = 1;
  bool commutative = true;
  bool in_place = false;
};

// A digest of the choices that decide plans besides the costs (forced algorithms and forms,
// leaders by arrival, the fallback policy), compared between processes at team construction:
// their MPI steps must pair up.
int choice_fingerprint(const PlanSettings& settings) noexcept;

// Default thresholds (bytes of one thread's buffer): flat measured the faster inside a process up
// to 512 bytes, sliced from 1 KiB (docs/benchmarking.md, "Uncalibrated defaults"), and where
// the lines form carries the call, further (flat_by_size).
inline constexpr std::size_t flat_max_bytes = 512;
// The largest contribution the flat form carries in the caller's slot (copied, then read by the
// others) instead of reading it in place (team/rendezvous.hpp, carry_capacity).
inline constexpr std::size_t flat_carried_max_bytes = 4096;
// Inside one process without measured times: whether a buffer of `bytes` per thread takes flat
// (up to flat_max_bytes, but for the collectives measured otherwise: docs/benchmarking.md,
// "Small calls on lines").
bool flat_by_size(Collective c, std::size_t bytes) noexcept;
// Bytes of data the inline form of flat carries in a begin line (team_impl.hpp checks it).
inline constexpr std::size_t inline_max_bytes = 32;
// Bytes of one thread's contribution that the lines form of flat carries in its slot's carry
// buffer (team/rendezvous.hpp, carry_capacity); the nonblocking and persistent calls of one
// process carry as much in theirs (team/line_ring.hpp, algo/posted/lines.cpp).
inline constexpr std::size_t lines_max_bytes = flat_carried_max_bytes;
// The alltoall led by arrival tags a block with sender * threads + receiver; MPI guarantees tags
// up to 32767 (MPI_TAG_UB), which covers 181 threads per process.
inline constexpr int max_exchange_threads = 181;

class Planner {
 public:
  Planner() = default;
  Planner(const TeamShape& shape, const PlanSettings& settings);
  Planner(const Planner& other) : Planner(other.shape_, other.settings_) {}
  Planner& operator=(const Planner& other) = default;

  // The plan of one call. A forced choice that cannot serve the call falls back to the
  // algorithm's own form (when only the form cannot serve) or to the automatic plan, and the
  // plan says so (fell_back; the message in *reason when given, which costs a string); with
  // fallbacks as errors (fallback_error()) the caller turns that into the call's error on every
  // thread.
  Plan plan(const PlanQuery& q, std::string* reason = nullptr) const;
  // The plan led by arrival that a call whose automatic plan `chosen` has static leaders may
  // switch to when its arrivals are measured uneven (team/leader_switch.hpp): under
  // TLC_LEADERS=auto, across processes with several threads in some process, blocks of at least
  // `min_bytes`, nothing forced or measured for the collective. nullopt: the plan stays.
  std::optional<Plan> arrival_alternative(const PlanQuery& q, const Plan& chosen,
                                          std::size_t min_bytes) const;
  // Whether a single-process call of c with this op, element type and count takes the inline
  // form of flat, and for reductions the line kernel it folds with: the cheap question asked
  // before anything else on every call.
  struct InlineForm {
    bool serves = false;
    LineFoldFn fold = nullptr;  // reductions only
  };
  InlineForm inline_form(const Call& c, std::size_t count) const noexcept {
    if (!((inline_collectives_ >> static_cast<unsigned>(c.collective)) & 1u)) return {};
    if (count > inline_max_bytes || count * c.type.size > inline_max_bytes) return {};
    if (!traits_of(c.collective).reduction) return {true, nullptr};
    const LineFoldFn fold = fold_of(c.op, c.type);
    return {fold != nullptr, fold};
  }
  bool serves_inline(const Call& c, std::size_t count) const noexcept {
    return inline_form(c, count).serves;
  }
  // Whether a single-process call of c (count elements per rank block, as the begin step's
  // fingerprint counts them; its checked descriptor's) takes the lines form of flat: the inline
  // form with each thread's contribution in its slot's carry buffer (algo/flat_inline.cpp), for
  // the non-v collectives whose contribution per thread is at most lines_max_bytes and a
  // built-in op, where the plan is flat (or flat is forced in its default or inline form).
  bool serves_lines(const Call& c, std::size_t count) const noexcept;
  // Whether fallbacks are errors (TLC_FALLBACK=error).
  bool fallback_error() const noexcept { return settings_.fallback_error; }
  const TeamShape& shape() const noexcept { return shape_; }
  const PlanSettings& settings() const noexcept { return settings_; }
  const CostParameters& costs() const noexcept { return settings_.costs; }
  // The smallest message the alltoall led by arrival sends while threads are still to arrive
  // (CostParameters::alltoall_fragment; 0: blocks are never held back to travel together).
  std::size_t alltoall_fragment_bytes() const noexcept {
    return static_cast<std::size_t>(settings_.costs.alltoall_fragment);
  }
  // The cost model's time of the whole call for every candidate across processes, as the
  // planner compares them (shared_cost; tlc-info --plan).
  std::vector<std::pair<Algorithm, double>> predictions(const PlanQuery& q) const;
  // The plan of algorithm a forced for q in its own form, or nothing when a cannot serve q.
  std::optional<Plan> forced_plan(const PlanQuery& q, Algorithm a) const;
  // p as a call of a built-in op on floating-point elements would run it: single-process flat
  // calls small enough for a begin line take the inline form (decided before any plan is made).
  Plan as_run(const PlanQuery& q, Plan p) const;
  // The cost model's time of the whole call q run as p on this process's threads
  // (cost_model.hpp, predict_call), for comparing with measurements.
  std::optional<double> predict_call(const PlanQuery& q, const Plan& p) const;
  // The same scaled to the measured times of p's algorithm where this shape was measured, as
  // the planner compares algorithms (tlc-info --predict).
  std::optional<double> priced_call(const PlanQuery& q, const Plan& p) const;
  // Plan p of q as the public API describes it (tlc::Selection; `reason`: why a forced choice
  // fell back), with every candidate's price: what tlc::select_algorithm() and
  // Team::select_algorithm() answer.
  Selection describe(const PlanQuery& q, const Plan& p, std::string reason) const;

 private:
  // The automatic plan: what runs when nothing is forced.
  Plan automatic(const PlanQuery& q) const;
  // The algorithm's plan in form f (nullopt: f cannot serve q, why says so).
  std::optional<Plan> in_form(const PlanQuery& q, Algorithm a, std::optional<Form> f,
                              const char*& why) const;
  bool pipelines_by_default(const PlanQuery& q, Algorithm a) const;
  // Whether the automatic plan of q is led by arrival (the leader policy and, for "auto", where
  // that pays with balanced arrivals).
  bool led_by_arrival(const PlanQuery& q) const;
  bool can_serve(const PlanQuery& q, Algorithm a, const char*& why) const;
  Algorithm cheapest(Collective c, std::size_t bytes, bool commutative) const;
  // Whether the cost table may choose a: every algorithm but the one led by arrival, which the
  // table chooses only with the default leaders (TLC_LEADERS=auto) and only where it was
  // measured at this shape (the model prices it as hierarchical plus a copy, so it would never
  // win on the model alone); elsewhere led_by_arrival decides.
  bool chosen_by_cost(Collective c, Algorithm a) const noexcept;
  // What the planner compares: a's whole call for q priced on what every process shares, scaled
  // to the measured times where the team's shape was measured.
  std::optional<double> shared_cost(const PlanQuery& q, Algorithm a) const;
  // The same by the model alone.
  std::optional<double> model_cost(const PlanQuery& q, Algorithm a) const;
  // measured / model for a's calls like q at this shape (1: nothing measured).
  double measured_scale(const PlanQuery& q, Algorithm a) const;
  // Inside one process, what automatic() runs for c with `bytes` in one thread's buffer: by
  // size, or the measured choice.
  Algorithm single_process_choice(Collective c, std::size_t bytes, bool commutative) const;
  // Inside one process, the algorithm measured fastest for c at `bytes` (of one thread's
  // buffer), of those measured at this shape.
  Algorithm cheapest_measured_single(Collective c, std::size_t bytes) const;
  CallCostQuery call_query(const PlanQuery& q, const Plan& p, int threads) const;
  // The inline fold kernel of a built-in op on a built-in type of at most 32 bytes, or nullptr.
  LineFoldFn fold_of(BuiltinOp op, TypeInfo type) const noexcept {
    const auto o = static_cast<unsigned>(op), cls = static_cast<unsigned>(type.type_class);
    if (o >= op_count || cls >= class_count || type.size >= size_slots) return nullptr;
    return folds_[(o * class_count + cls) * size_slots + type.size];
  }
  void report_fallback(Collective c, const char* why, const Plan& used) const;

  // Size bands of the cost table: band 0 holds 0 bytes, then four bands per power of two.
  static constexpr int bands = 4 * 64 + 1;
  static int band_of(std::size_t bytes) noexcept;
  static std::size_t band_start(int band) noexcept;

  TeamShape shape_{};
  PlanSettings settings_{};
  // cheapest_[c][commutative][band]: the cost model's choice across processes; in one process,
  // the measured choice of the collectives in measured_single_.
  std::vector<Algorithm> cheapest_;
  // The shape the measured times are looked up for (every process the same thread count).
  std::optional<MeasuredShape> measured_shape_;
  std::uint32_t measured_single_ = 0;  // bit c: one process, c chosen by the measured times
  std::uint32_t inline_collectives_ =
      0;  // bit c: single-process calls of c may take the inline form
  std::uint32_t lines_collectives_ = 0;  // bit c: ... the lines form, where flat is the plan
  std::uint32_t lines_forced_ = 0;       // bit c: ... the lines form wherever it fits (forced)
  // folds_[(op * class_count + type class) * size_slots + element size]: the line kernels.
  static constexpr unsigned op_count = 10, class_count = 6, size_slots = 33;
  std::array<LineFoldFn, op_count * class_count * size_slots> folds_{};
  // Bit c: a fallback of c was reported, by this planner (a copy starts afresh).
  struct FallbackReports {
    std::atomic<std::uint32_t> bits{0};
    FallbackReports() = default;
    FallbackReports(const FallbackReports&) noexcept {}
    FallbackReports& operator=(const FallbackReports&) noexcept {
      bits.store(0);
      return *this;
    }
  };
  mutable FallbackReports reported_;
};

// The plans one thread has asked for, remembered: a plan is a pure function of the query and of
// the planner's tables, which never change, so a call that repeats a recent query (the common
// case: a loop of the same collective on the same sizes) costs one hash and one comparison
// instead of the planner's lookups. One per thread, never shared.
class PlanCache {
 public:
  struct Entry {
    PlanQuery query;
    Plan plan;
    // The plan led by arrival it may switch to (Planner::arrival_alternative), and the class
    // under which the switch measures it (-1: none).
    Plan alternative;
    int switch_class = -1;
    bool valid = false;
  };
  // `switch_min_bytes` and `class_of` describe the team's switch (0: it is off).
  template <class ClassOf>
  const Entry& get(const Planner& planner, const PlanQuery& q, std::size_t switch_min_bytes,
                   ClassOf class_of) {
    Entry& e = entries_[slot_of(q)];
    if (!e.valid || !same(e.query, q)) {
      e.plan = planner.plan(q);
      e.query = q;
      e.switch_class = -1;
      if (switch_min_bytes)
        if (auto a = planner.arrival_alternative(q, e.plan, switch_min_bytes)) {
          e.alternative = *a;
          e.switch_class = class_of(q.collective, q.count * q.element_size);
        }
      e.valid = true;
    }
    return e;
  }

 private:
  static constexpr std::size_t size = 16;
  static bool same(const PlanQuery& a, const PlanQuery& b) noexcept {
    return a.collective == b.collective && a.count == b.count && a.element_size == b.element_size &&
           a.commutative == b.commutative && a.in_place == b.in_place;
  }
  // Every field of the query mixed into every bit (splitmix64's finaliser), so that queries
  // that differ in one low bit (n and n + 1 elements, say) do not share an entry.
  static std::size_t slot_of(const PlanQuery& q) noexcept {
    std::uint64_t k = q.count;
    k = k * 31 + q.element_size;
    k = k * 31 + static_cast<std::uint64_t>(q.collective);
    k = k * 4 + (q.commutative ? 2u : 0u) + (q.in_place ? 1u : 0u);
    k ^= k >> 30;
    k *= 0xbf58476d1ce4e5b9ull;
    k ^= k >> 27;
    k *= 0x94d049bb133111ebull;
    k ^= k >> 31;
    return static_cast<std::size_t>(k % size);
  }
  std::array<Entry, size> entries_{};
};

}  // namespace tlc::detail
