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

// MPICH's default algorithms ([Thakur] sec. 4), n bytes per process (block for allgather-like).
struct Mpi {
  const CostParameters& c;
  int P;
  double beta() const { return 1.0 / c.lane_bandwidth; }
  double gamma() const { return 1.0 / c.reduce_bandwidth; }
  double frac() const { return P <= 1 ? 0.0 : static_cast<double>(P - 1) / P; }

  double recursive_doubling_allreduce(double n) const {
    return log2_ceil(P) * (c.alpha + n * beta() + n * gamma());
  }
  double rabenseifner_allreduce(double n) const {
    return 2 * log2_ceil(P) * c.alpha + 2 * frac() * n * beta() + frac() * n * gamma();
  }
  double allreduce(double n) const {
    return n <= 2048 ? recursive_doubling_allreduce(n) : rabenseifner_allreduce(n);
  }
  double binomial_bcast(double n) const { return log2_ceil(P) * (c.alpha + n * beta()); }
  double bcast(double n) const {  // scatter + allgather for large messages
    return n <= 12288 ? binomial_bcast(n)
                      : (log2_ceil(P) + P - 1) * c.alpha + 2 * frac() * n * beta();
  }
  double reduce(double n) const {
    return n <= 2048 ? log2_ceil(P) * (c.alpha + n * beta() + n * gamma())
                     : 2 * log2_ceil(P) * c.alpha + 2 * frac() * n * beta() + frac() * n * gamma();
  }
  double ring_allgather(double total) const { return (P - 1) * c.alpha + frac() * total * beta(); }
  double bruck_allgather(double total) const {
    return log2_ceil(P) * c.alpha + frac() * total * beta();
  }
  double allgather(double total) const {
    return total <= 81920 ? bruck_allgather(total) : ring_allgather(total);
  }
  double gather(double total) const { return log2_ceil(P) * c.alpha + frac() * total * beta(); }
  double pairwise_alltoall(double per_pair) const {
    return (P - 1) * (c.alpha + per_pair * beta());
  }
  double isend_alltoall(double per_pair) const {
    return (P - 1) * c.alpha + (P - 1) * per_pair * beta();
  }
  double reduce_scatter(double total) const {  // pairwise exchange
    return (P - 1) * c.alpha + frac() * total * (beta() + gamma());
  }
  double exscan(double n) const { return log2_ceil(P) * (c.alpha + n * beta() + n * gamma()); }
};

}  // namespace

std::optional<double> predict(Algorithm algorithm, const CostQuery& q, const CostParameters& c) {
  const int P = q.processes;
  const double per_process = static_cast<double>(q.ranks) / P;  // average ranks per process
  const double n = static_cast<double>(q.bytes);
  const int L = std::max(1, q.lanes);
  const int concurrent = std::clamp(c.lane_parallelism > 0 ? c.lane_parallelism : L, 1, L);
  const double rounds = std::ceil(static_cast<double>(L) / concurrent);
  const Mpi mpi{c, P};

  // Bytes of the process-level operation.
  double size = n;
  switch (q.collective) {
    case Collective::allgather:
    case Collective::allgatherv:
    case Collective::gather:
    case Collective::gatherv:
    case Collective::scatter:
    case Collective::scatterv:
      size = n * q.ranks;  // total gathered
      break;
    case Collective::alltoall:
    case Collective::alltoallv:
      size = n * per_process * per_process;  // per process pair
      break;
    case Collective::reduce_scatter_block:
      size = n * q.ranks;
      break;
    default:
      break;
  }
  // The MPI collective of one part of `parts`.
  auto mpi_cost = [&](double bytes) -> double {
    switch (q.collective) {
      case Collective::barrier:
        return log2_ceil(P) * c.alpha;
      case Collective::bcast:
        return mpi.bcast(bytes);
      case Collective::reduce:
        return mpi.reduce(bytes);
      case Collective::allreduce:
        return mpi.allreduce(bytes);
      case Collective::allgather:
      case Collective::allgatherv:
        return mpi.allgather(bytes);
      case Collective::gather:
      case Collective::gatherv:
      case Collective::scatter:
      case Collective::scatterv:
        return mpi.gather(bytes);
      case Collective::alltoall:
      case Collective::alltoallv:
        return mpi.pairwise_alltoall(bytes);
      case Collective::reduce_scatter_block:
        return mpi.reduce_scatter(bytes);
      case Collective::scan:
      case Collective::exscan:
        return mpi.exscan(bytes);
    }
    return 0;
  };
  const double lane_overhead = c.rendezvous;  // lane steps end with a full rendezvous
  // tlc's point-to-point loops post every message through the lane lock and wait politely:
  // about one message start more per lane than the same schedule inside MPI, which also makes
  // an MPI collective win a tie against the same algorithm run by tlc.
  const double p2p_overhead = rounds * c.alpha;
  const double part = size / L;
  switch (algorithm) {
    case Algorithm::hierarchical:
      return mpi_cost(size);
    case Algorithm::full_lane:
      return rounds * mpi_cost(part) + lane_overhead;
    case Algorithm::ring:
      return rounds * mpi.ring_allgather(part) + lane_overhead + p2p_overhead;
    case Algorithm::bruck:
      if (!q.equal_processes) return std::nullopt;
      return rounds * mpi.bruck_allgather(part) + lane_overhead + p2p_overhead;
    case Algorithm::binomial:
      return rounds * mpi.binomial_bcast(part) + lane_overhead + p2p_overhead;
    case Algorithm::pairwise:
      if (q.collective == Collective::reduce_scatter_block) {
        if (!q.commutative) return std::nullopt;
        return rounds * mpi.reduce_scatter(part) + lane_overhead + p2p_overhead;
      }
      return rounds * mpi.pairwise_alltoall(part) + lane_overhead + p2p_overhead;
    case Algorithm::isend:
      return rounds * mpi.isend_alltoall(part) + lane_overhead + p2p_overhead;
    case Algorithm::recursive_doubling:
      return rounds * mpi.recursive_doubling_allreduce(part) + lane_overhead + p2p_overhead;
    case Algorithm::rabenseifner:
      if (!q.commutative) return std::nullopt;
      return rounds * mpi.rabenseifner_allreduce(part) + lane_overhead + p2p_overhead;
    default:
      return std::nullopt;  // single-process algorithms are not priced here
  }
}

}  // namespace tlc::detail
