// An alpha-beta-gamma cost model of the inter-process algorithms (Thakur, Rabenseifner & Gropp,
// [Thakur] sec. 3: a message of n bytes costs alpha + n*beta, a
// reduction of n bytes n*gamma), with per-lane bandwidth (Traff & Hunold,
// [TraffHunold] sec. 2: k lanes each carrying c/k).
//
// predict() prices the inter-process phase plus the extra rendezvous a lane algorithm needs;
// MPI collectives are priced as MPICH's default algorithms for that size, weighed by factors
// fitted to the MPI library at hand. predict_call() prices a whole call as a plan runs it: the
// intra-process phases by the bytes each thread copies and combines, the rendezvous, tlc's own
// work per call, and the inter-process phase by predict(), chunk by chunk when the plan
// pipelines. The planner chooses on predict_call() (Planner::shared_cost); tlc-calibrate
// compares it with measured times, tlc-info --predict evaluates it for any shape.
// docs/model.md has the parameters and how they are fitted.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include <tlc/options.hpp>

#include "select/registry.hpp"

namespace tlc::detail {

// The model's parameters; their names, units and the tuning file are in select/tuning.hpp.
struct CostParameters {
  static constexpr std::array<double, collective_count> ones() {
    std::array<double, collective_count> a{};
    a.fill(1.0);
    return a;
  }
  double alpha = 2e-6;           // seconds per message (alpha_us)
  double lane_bandwidth = 10e9;  // bytes/s one lane moves (lane_gbs)
  // The same for the bytes of an operation beyond what the caches hold (lane_memory_gbs; a
  // shared-memory transport copies through memory; a network that does not care: lane_gbs).
  // Of an operation moving n bytes, the share cache_bytes / 2n beyond 2n > cache_bytes.
  double lane_memory_bandwidth = 10e9;
  // Messages past the eager limit (eager_kib) go by the rendezvous protocol, whose handshake
  // adds to their start-up (handshake_us); 0: no such step in the times.
  // Defaults: MPICH's (ch4:ucx) switch at 8 KiB, and a handshake of one more start-up (the
  // receiver's request for the data, which then moves as an eager message's would); without
  // them a 16 KiB message priced as eager made the plan prefer one message of 16 KiB to two of
  // 8 KiB or MPI's own call, and with two start-ups the plan took MPI's bcast and reduce over
  // tlc's binomial tree at 16 KiB, measured the slower (docs/model.md).
  double eager_bytes = 8 * 1024;
  double handshake = 2e-6;
  // Bytes/s one thread reduces (reduce_gbs): what combining a received message costs, whose
  // bytes are in the caches as they arrive; the default is near tlc-calibrate's sum kernel on
  // the development machine (docs/model.md).
  double reduce_bandwidth = 40e9;
  double rendezvous = 0.5e-6;     // seconds per intra-process rendezvous (sync_us)
  // Intra-process copies (predict_call only): bytes/s one thread copies while the others copy
  // too, inside the caches (cache_gbs) and beyond them (memory_gbs), and the bytes of a
  // process's working set the caches hold (cache_mib): of a working set W > cache_bytes, the
  // share cache_bytes / W moves at the cache rate, the rest at the memory rate.
  double memory_bandwidth = 5e9;
  double cache_bandwidth = 20e9;
  double cache_bytes = 32.0 * 1024 * 1024;
  double call_overhead = 0.2e-6;  // seconds of tlc's own work per call (call_us)
  // What one of MPI's own collectives costs on top of its algorithm's messages as tlc runs it:
  // its non-blocking form completed by polling (every wait must be able to end when another
  // process fails), whose schedule MPICH builds and advances per call (mpi_start_us). tlc's
  // point-to-point algorithms post their messages directly and pay none of it.
  double mpi_start = 0.3e-6;
  // The smallest message the alltoall led by arrival sends while threads of its process are
  // still to arrive (fragment_kib): blocks below it wait for their neighbours' and travel
  // together. 0: off, every block travels alone as soon as its thread arrives (what measured
  // fastest on a shared-memory transport, docs/imbalance.md); where messages start up slowly and
  // processes have many threads, alpha * lane bandwidth is a starting point.
  double alltoall_fragment = 0;
  // MPI's own collectives (hierarchical, full_lane) against the MPICH algorithm the model prices
  // them as: factors of its start-up terms and of its per-byte terms, per collective (v-variants
  // take their base's), fitted by tlc-calibrate (mpi_<collective>_alpha, _beta).
  std::array<double, collective_count> mpi_alpha = ones();
  std::array<double, collective_count> mpi_beta = ones();
  // Lanes whose MPI calls progress at the same time (lane_parallelism). 0: detected:
  // MPICH's number of VCIs (MPIR_CVAR_CH4_NUM_VCIS, 1 in a global-lock build such as Debian's),
  // else every lane.
  int lane_parallelism = 0;
};

struct CostQuery {
  Collective collective;
  std::size_t bytes = 0;  // per rank block
  int processes = 1;
  int ranks = 1;  // threads of all processes
  int lanes = 1;
  bool commutative = true;
  bool equal_processes = true;  // every process has the same number of threads
};

// Predicted seconds of the inter-process phase of `algorithm`, or nothing when it cannot serve
// the query (e.g. Rabenseifner with a non-commutative op).
std::optional<double> predict(Algorithm algorithm, const CostQuery& query,
                              const CostParameters& parameters);

// MPI's own collective for q (what hierarchical calls between processes) as the model prices it
// before the factors fitted for it: seconds of start-up terms and of per-byte terms.
struct MpiTerms {
  double start = 0;
  double bytes = 0;
};
MpiTerms mpi_terms(const CostQuery& query, const CostParameters& parameters);
// The share of an operation of `bytes` whose transfer the caches hold (lane_memory_bandwidth).
double lane_held(double bytes, const CostParameters& parameters);

// A whole call as a plan runs it (planner.hpp builds it from a Plan: Planner::predict_call).
struct CallCostQuery {
  CostQuery across;  // lanes: the plan's; bytes: of one rank block
  int threads = 1;   // of each process
  int numa_groups = 1;
  Algorithm algorithm{};
  Form form{};
  std::size_t chunk_bytes = 0;  // pipelined: bytes per lane of one chunk
};

// Predicted seconds of the whole call, from the first thread's arrival (all arriving together)
// to the last thread's return, or nothing when the algorithm cannot serve the query.
std::optional<double> predict_call(const CallCostQuery& query, const CostParameters& parameters);

}  // namespace tlc::detail
