// The cost model's formulas (cost_model.hpp says what they price). What a collective is to the
// model comes from its row in select/collective_traits.hpp: the blocks its buffers hold, the
// bytes its step across processes moves, the MPI collective that prices that step and, for a
// v-variant, the fixed-count collective it is priced as. The switches here are over those
// properties and over the algorithms; only the work of the threads inside a process is written
// out per fixed-count collective, as the compositions in src/algo/ are.
#include "select/cost_model.hpp"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>

#include <tlc/error.hpp>

#include "select/registry.hpp"

namespace tlc::detail {

namespace {

double log2_ceil(int p) { return p <= 1 ? 0.0 : std::ceil(std::log2(static_cast<double>(p))); }

// A time in two parts: start-up terms (alpha) and per-byte terms (beta, gamma), so that MPI's
// own collectives can weigh each by the factors fitted for them.
struct Terms {
  double start = 0;
  double bytes = 0;
  double total() const { return start + bytes; }
};

// MPICH's default algorithms ([Thakur] sec. 4), n bytes per process (block for allgather-like).
// A step that sends m bytes starts at alpha, plus the rendezvous handshake where m is past the
// eager limit; a step of an algorithm whose messages shrink is priced at its largest message.
struct Mpi {
  const CostParameters& c;
  int P;
  double held = 1;  // the share of the operation's bytes the caches hold (lane_held)
  double beta() const { return held / c.lane_bandwidth + (1 - held) / c.lane_memory_bandwidth; }
  double gamma() const { return 1.0 / c.reduce_bandwidth; }
  double frac() const { return P <= 1 ? 0.0 : static_cast<double>(P - 1) / P; }
  double start(double m) const { return c.alpha + (m > c.eager_bytes ? c.handshake : 0.0); }

  // Each step of recursive doubling combines the very bytes the partner has just copied out of
  // this process's buffer. Where that buffer was freshly written (an application's contribution,
  // a staging buffer, the accumulator of the step before), that combine is slower than one over
  // bytes nobody else read, as if the partner's single-copy read had taken the lines out of this
  // core's cache: priced as an in-cache copy of the n bytes on top. Rabenseifner's halving
  // combines the half the partner did not read (docs/model.md, "Inputs the partner has just
  // read").
  Terms recursive_doubling_allreduce(double n) const {
    return {log2_ceil(P) * start(n),
            log2_ceil(P) * (n * beta() + n * gamma() + n / c.cache_bandwidth)};
  }
  Terms rabenseifner_allreduce(double n) const {
    return {2 * log2_ceil(P) * start(n / 2), 2 * frac() * n * beta() + frac() * n * gamma()};
  }
  Terms allreduce(double n) const {
    return n <= 2048 ? recursive_doubling_allreduce(n) : rabenseifner_allreduce(n);
  }
  Terms binomial_bcast(double n) const {
    return {log2_ceil(P) * start(n), log2_ceil(P) * n * beta()};
  }
  // tlc's binomial reduce (p2p::binomial_reduce), priced for root process 0: a root elsewhere
  // adds one message of n bytes.
  Terms binomial_reduce(double n) const {
    return {log2_ceil(P) * start(n), log2_ceil(P) * (n * beta() + n * gamma())};
  }
  Terms bcast(double n) const {  // scatter + allgather for large messages
    return n <= 12288 ? binomial_bcast(n)
                      : Terms{(log2_ceil(P) + P - 1) * start(n / P), 2 * frac() * n * beta()};
  }
  Terms reduce(double n) const {
    return n <= 2048 ? Terms{log2_ceil(P) * start(n), log2_ceil(P) * (n * beta() + n * gamma())}
                     : Terms{2 * log2_ceil(P) * start(n / 2),
                             2 * frac() * n * beta() + frac() * n * gamma()};
  }
  Terms ring_allgather(double total) const {
    return {(P - 1) * start(total / P), frac() * total * beta()};
  }
  Terms bruck_allgather(double total) const {
    return {log2_ceil(P) * start(total / 2), frac() * total * beta()};
  }
  Terms allgather(double total) const {
    return total <= 81920 ? bruck_allgather(total) : ring_allgather(total);
  }
  Terms gather(double total) const {
    return {log2_ceil(P) * start(total / 2), frac() * total * beta()};
  }
  // tlc's linear gather and scatter (p2p::linear_gatherv, linear_scatterv): the root's P-1
  // messages of one block each.
  Terms linear_gather(double total) const {
    return {(P - 1) * start(total / P), frac() * total * beta()};
  }
  Terms pairwise_alltoall(double per_pair) const {
    return {(P - 1) * start(per_pair), (P - 1) * per_pair * beta()};
  }
  Terms isend_alltoall(double per_pair) const { return pairwise_alltoall(per_pair); }
  Terms reduce_scatter(double total) const {  // pairwise exchange
    return {(P - 1) * start(total / P), frac() * total * (beta() + gamma())};
  }
  Terms exscan(double n) const {
    return {log2_ceil(P) * start(n), log2_ceil(P) * (n * beta() + n * gamma())};
  }
};

// Bytes of the process-level operation of q: what MPI's collective or tlc's point-to-point
// algorithm moves (collective_traits.hpp: ProcessBytes).
double process_bytes(const CostQuery& q) {
  const double n = static_cast<double>(q.bytes);
  switch (traits_of(q.collective).process_bytes) {
    case ProcessBytes::one_block:
      return n;
    case ProcessBytes::every_block:
      return n * q.ranks;
    case ProcessBytes::process_pair: {
      const double per_process = static_cast<double>(q.ranks) / q.processes;
      return n * per_process * per_process;
    }
  }
  return n;
}

// MPI's collective for q on `bytes` (of the process-level operation), before its factors.
Terms mpi_collective(const Mpi& mpi, Collective collective, double bytes) {
  switch (traits_of(collective).mpi_pricing) {
    case MpiPricing::barrier:
      return {log2_ceil(mpi.P) * mpi.c.alpha, 0};
    case MpiPricing::bcast:
      return mpi.bcast(bytes);
    case MpiPricing::reduce:
      return mpi.reduce(bytes);
    case MpiPricing::allreduce:
      return mpi.allreduce(bytes);
    case MpiPricing::allgather:
      return mpi.allgather(bytes);
    case MpiPricing::gather:
      return mpi.gather(bytes);
    case MpiPricing::alltoall:
      return mpi.pairwise_alltoall(bytes);
    case MpiPricing::reduce_scatter:
      return mpi.reduce_scatter(bytes);
    case MpiPricing::scan:
      return mpi.exscan(bytes);
  }
  return {};
}

}  // namespace

double lane_held(double bytes, const CostParameters& c) {
  const double working_set = 2 * bytes;  // what is sent and what is received
  return working_set > c.cache_bytes ? c.cache_bytes / working_set : 1.0;
}

MpiTerms mpi_terms(const CostQuery& q, const CostParameters& c) {
  const double size = process_bytes(q);
  const Terms t = mpi_collective(Mpi{c, q.processes, lane_held(size, c)}, q.collective, size);
  return {t.start, t.bytes};
}

std::optional<double> predict(Algorithm algorithm, const CostQuery& q, const CostParameters& c) {
  const int P = q.processes;
  const int L = std::max(1, q.lanes);
  const int concurrent = std::clamp(c.lane_parallelism > 0 ? c.lane_parallelism : L, 1, L);
  const double rounds = std::ceil(static_cast<double>(L) / concurrent);
  const double size = process_bytes(q);
  const Mpi mpi{c, P, lane_held(size, c)};
  // MPI's own collective on `bytes`, weighed by the factors fitted for it (a v-variant: for its
  // fixed-count collective).
  const auto b = static_cast<std::size_t>(traits_of(q.collective).fixed_count);
  auto mpi_cost = [&](double bytes) {
    const Terms t = mpi_collective(mpi, q.collective, bytes);
    return c.mpi_start + c.mpi_alpha[b] * t.start + c.mpi_beta[b] * t.bytes;
  };
  // Steps on L lanes: a process's threads wait for the L lane threads' steps (algo/pipeline.hpp)
  // where one leader's step would have been one thread's; with one lane, the same as MPI's
  // collective led by thread 0.
  const double lane_overhead = c.rendezvous * log2_ceil(L);
  const double part = size / L;
  auto p2p = [&](Terms t) { return rounds * t.total() + lane_overhead; };
  // Combining out of rank order needs a commutative op (registry.hpp).
  if (!q.commutative && needs_commutative_op(q.collective, algorithm)) return std::nullopt;
  // binomial (bcast, reduce) and pairwise (alltoall, reduce_scatter_block) each serve a collective
  // that moves blocks and a reduction, which combines them on the way as well.
  const bool combines = traits_of(q.collective).reduction;
  switch (algorithm) {
    case Algorithm::hierarchical:
      return mpi_cost(size);
    case Algorithm::full_lane:
      return rounds * mpi_cost(part) + lane_overhead;
    case Algorithm::ring:
      return p2p(mpi.ring_allgather(part));
    case Algorithm::bruck:
      if (!q.equal_processes) return std::nullopt;
      return p2p(mpi.bruck_allgather(part));
    case Algorithm::binomial:
      return p2p(combines ? mpi.binomial_reduce(part) : mpi.binomial_bcast(part));
    case Algorithm::pairwise:
      return p2p(combines ? mpi.reduce_scatter(part) : mpi.pairwise_alltoall(part));
    case Algorithm::isend:
      return p2p(mpi.isend_alltoall(part));
    case Algorithm::recursive_doubling:  // allreduce; scan and exscan step as MPICH's scan does
      return p2p(traits_of(q.collective).mpi_pricing == MpiPricing::scan
                     ? mpi.exscan(part)
                     : mpi.recursive_doubling_allreduce(part));
    case Algorithm::linear:
      return p2p(mpi.linear_gather(part));
    case Algorithm::rabenseifner:
      return p2p(mpi.rabenseifner_allreduce(part));
    case Algorithm::dissemination:
      return log2_ceil(P) * c.alpha;
    default:
      return std::nullopt;  // single-process algorithms are not priced here
  }
}

namespace {

// What one thread of T does in the intra-process phases of a call, in bytes of one rank block n
// (N ranks, P processes): bytes it copies (written) and combines (folded into an accumulator).
struct Work {
  double copy = 0;
  double combine = 0;
  Work operator+(const Work& o) const { return {copy + o.copy, combine + o.combine}; }
  Work operator/(double k) const { return {copy / k, combine / k}; }
};

// The bytes of a buffer holding `blocks` rank blocks of n bytes (N ranks).
double buffer_bytes(Blocks blocks, double n, double N) {
  switch (blocks) {
    case Blocks::none:
      return 0;
    case Blocks::one:
      return n;
    case Blocks::per_rank:
      return N * n;
  }
  return 0;
}

// The bytes of one thread's buffers (send + receive): T times this is what the callers bring to
// the working set of a process.
double footprint(Collective c, double n, double N) {
  const CollectiveTraits& t = traits_of(c);
  return buffer_bytes(t.send, n, N) + buffer_bytes(t.recv, n, N);
}

// One process alone (T threads, n bytes per rank block). Sliced: every thread takes 1/T of all
// the copying and combining (algo/sliced.cpp); flat: every thread computes its own output from
// every contribution (algo/flat.cpp), plus the copy that carries its own contribution.
// A v-variant does the work of its fixed-count collective.
Work single_process_work(Collective c, bool sliced, double n, double T) {
  const double share = sliced ? 1 / T : 1;
  switch (traits_of(c).fixed_count) {
    case Collective::barrier:
      return {};
    case Collective::bcast:
      return {sliced ? (T - 1) * n / T : n, 0};
    case Collective::reduce:
      return {sliced ? n / T : n, (T - 1) * n * share};
    case Collective::allreduce:
    case Collective::scan:
    case Collective::exscan:
      return {n, (T - 1) * n * share};
    case Collective::reduce_scatter_block:
      return {n, (T - 1) * n};
    case Collective::allgather:
    case Collective::alltoall:
      return {T * n, 0};
    case Collective::gather:
      return {sliced ? n : T * n, 0};
    case Collective::scatter:
      return {n, 0};
    default:  // v-variants: their fixed_count is one of the collectives above
      return {};
  }
}

// Across processes (algo/across.hpp): what the busiest thread does before the network step
// (produce: filling the staging region, shared by T workers) and after it (consume: taking its
// output out), and the bytes of the region. A v-variant does the work of its fixed-count
// collective.
struct Phases {
  Work produce;
  Work consume;
  double region = 0;
  double pieces = 1;  // rank blocks one chunk cuts (algo/pipeline.hpp)
};

Phases across_work(Collective c, double n, double T, double N) {
  const Work reduce_in{n / T, (T - 1) * n / T};  // T contributions into the region
  switch (traits_of(c).fixed_count) {
    case Collective::barrier:
      return {};
    case Collective::bcast:  // the data travels in a caller's output; the others copy it
      return {{}, {T > 1 ? n : 0, 0}, n, 1};
    case Collective::reduce:
    case Collective::allreduce:
      return {reduce_in, {n, 0}, n, 1};
    case Collective::scan:
    case Collective::exscan:
      return {reduce_in, {n, n}, n, 1};
    case Collective::allgather:
    case Collective::gather:
      return {{n, 0}, {N * n, 0}, N * n, N};
    case Collective::scatter:
      return {{N * n / T, 0}, {n, 0}, N * n, N};
    case Collective::alltoall:
      return {{N * n, 0}, {N * n, 0}, 2 * T * N * n, N};
    case Collective::reduce_scatter_block:
      return {{N * n / T, (T - 1) * N * n / T}, {n, 0}, N * n, N};
    default:  // v-variants: their fixed_count is one of the collectives above
      return {};
  }
}

}  // namespace

std::optional<double> predict_call(const CallCostQuery& q, const CostParameters& c) {
  const CostQuery& across = q.across;
  const Collective collective = across.collective;
  const double n = static_cast<double>(across.bytes);
  const double T = std::max(1, q.threads);
  const double N = std::max(across.ranks, 1);
  const double sync = T > 1 ? c.rendezvous * log2_ceil(q.threads) : 0.0;
  // Seconds of a thread's work when the process's copies touch `working_set` bytes: the part of
  // the working set the caches hold moves at cache speed, the rest at memory speed, where
  // combining is bound by memory too.
  auto seconds = [&](const Work& w, double working_set) {
    const double held = working_set > c.cache_bytes ? c.cache_bytes / working_set : 1.0;
    const double memory_combine = std::min(c.reduce_bandwidth, c.memory_bandwidth);
    return w.copy * (held / c.cache_bandwidth + (1 - held) / c.memory_bandwidth) +
           w.combine * (held / c.reduce_bandwidth + (1 - held) / memory_combine);
  };
  const double callers = T * footprint(collective, n, N);

  if (across.processes <= 1) {
    // Led by arrival: the data goes through a deposit, each thread copies it out.
    if (q.algorithm == Algorithm::dynamic)
      return c.call_overhead + sync +
             seconds(single_process_work(collective, false, n, T) + Work{n, 0}, callers);
    switch (q.form) {
      case Form::inline_line:  // one rendezvous of begin lines, no descriptor
        return sync;
      case Form::carried:
        return c.call_overhead + sync +
               seconds(single_process_work(collective, false, n, T), callers);
      case Form::two_level:  // a rendezvous more than sliced, the same bytes per thread
        return c.call_overhead + 3 * sync +
               seconds(single_process_work(collective, true, n, T), callers);
      default:
        return c.call_overhead + 2 * sync +
               seconds(single_process_work(collective, true, n, T), callers);
    }
  }

  auto network = [&](double bytes) {
    CostQuery part = across;
    part.bytes = static_cast<std::size_t>(bytes);
    // Led by arrival, the elected thread calls MPI's collective as hierarchical's leader does.
    return predict(q.algorithm == Algorithm::dynamic ? Algorithm::hierarchical : q.algorithm, part,
                   c);
  };
  if (collective == Collective::barrier) {
    const std::optional<double> mpi = network(0);
    if (!mpi) return std::nullopt;
    return c.call_overhead + 2 * sync + *mpi;
  }
  if (q.form == Form::direct) {  // MPI's call on the one thread's own buffers
    const std::optional<double> mpi = network(n);
    if (!mpi) return std::nullopt;
    return c.call_overhead + *mpi;
  }
  Phases ph = across_work(collective, n, T, N);
  // Led by arrival: a thread that leaves early first copies its data aside.
  if (q.algorithm == Algorithm::dynamic) ph.produce = ph.produce + Work{n, 0};
  const double working_set = callers + ph.region;
  const double lanes = std::max(1, across.lanes);
  double chunks = 1;
  if (q.form == Form::pipelined && q.chunk_bytes > 0)
    chunks = std::max(1.0, std::ceil(n * ph.pieces / (static_cast<double>(q.chunk_bytes) * lanes)));
  const std::optional<double> net = network(n / chunks);
  if (!net) return std::nullopt;
  // Per chunk: the produce and consume steps end with a rendezvous each (algo/pipeline.hpp).
  const double intra = seconds(ph.produce / chunks + ph.consume / chunks, working_set) + 2 * sync;
  if (chunks <= 1) return c.call_overhead + sync + intra + *net;
  // Threads that drive no lane produce and consume chunk i while chunk i - 1 crosses the network;
  // when every thread drives a lane nothing overlaps.
  const double drivers = uses_lanes(q.algorithm) ? std::min<double>(lanes, T) : 1;
  if (drivers >= T) return c.call_overhead + sync + chunks * (intra + *net);
  return c.call_overhead + sync + intra + *net + (chunks - 1) * std::max(intra, *net);
}

}  // namespace tlc::detail
