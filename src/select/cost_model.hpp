// An alpha-beta-gamma cost model of the inter-process algorithms (Thakur, Rabenseifner & Gropp,
// [Thakur] sec. 3: a message of n bytes costs alpha + n*beta, a
// reduction of n bytes n*gamma), with per-lane bandwidth (Traff & Hunold,
// [TraffHunold] sec. 2: k lanes each carrying c/k).
//
// Only differences between algorithms matter: every composition shares the same intra-process
// phases, so the model prices the inter-process phase plus the extra rendezvous a lane
// algorithm needs. MPI collectives are priced as MPICH's default algorithms for that size.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include <tlc/options.hpp>

namespace tlc::detail {

enum class Algorithm : std::uint8_t;

struct CostParameters {
  double alpha = 2e-6;            // seconds per message (TLC_COST_ALPHA_US)
  double lane_bandwidth = 10e9;   // bytes/s one lane moves (TLC_COST_LANE_GBS)
  double reduce_bandwidth = 5e9;  // bytes/s one thread reduces (TLC_COST_REDUCE_GBS)
  double rendezvous = 0.5e-6;     // seconds per intra-process rendezvous (TLC_COST_SYNC_US)
  // Lanes whose MPI calls progress at the same time (TLC_COST_LANE_PARALLELISM). 0: detected:
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

}  // namespace tlc::detail
