/// @file
/// What tlc can run and what it would choose: the algorithm registry and the selector's answer
/// for a team shape and message size (what `tlc-info --algorithms` prints).
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include <tlc/detail/export.hpp>
#include <tlc/options.hpp>

namespace tlc {

/// One algorithm of the registry, as tlc::algorithms() lists it (and tlc-info --algorithms).
struct AlgorithmDescription {
  Collective collective;  ///< the collective it implements
  std::string name;       ///< as accepted by TeamOptions::algorithms and TLC_ALGO_<COLLECTIVE>
  bool single_process;    ///< serves single-process teams only
  std::string summary;    ///< one line: what it does
  /// The forms it can run in ("staged", "direct", "pipelined", ...): TLC_ALGO_<C>=name:form.
  std::vector<std::string> forms;
};

/// Every algorithm of every collective, in registry order.
TLC_API std::vector<AlgorithmDescription> algorithms();

/// A call as the planner sees it: what tlc::select_algorithm() is asked about.
struct SelectionQuery {
  Collective collective = Collective::allreduce;  ///< the collective called
  std::size_t bytes = 8;                          ///< of one rank's block
  int processes = 1;                              ///< processes of the team
  int threads = 1;                                ///< per process
  int lanes = 1;                                  ///< inter-process lanes of the team
  int numa_domains = 1;          ///< the process's threads span this many NUMA domains
  bool commutative = true;       ///< whether the op is commutative (built-in ops are)
  std::size_t element_size = 8;  ///< bytes of one element (pipelining cuts whole elements)
  /// The team's pipeline chunk (bytes per lane); 0: TLC_PIPELINE_CHUNK, else the default.
  std::size_t pipeline_chunk_bytes = 0;
  bool oversubscribed = false;  ///< more threads than cores on a node (see TeamOptions)
};

/// The plan of a call: what runs and how.
struct Selection {
  std::string name;  ///< the algorithm
  std::string form;  ///< how it runs: inline, carried, sliced, two_level, staged, direct, pipelined
  std::size_t chunk_bytes = 0;  ///< pipelined: bytes per lane of one chunk
  int lanes = 1;                ///< lane communicators the network step drives
  std::string leader;           ///< who performs the inter-process step
  std::string fallback;         ///< non-empty: the forced choice could not serve the call, and why
  /// The cost model's time of the whole call per candidate algorithm, as the planner compares
  /// them (threads averaged over processes; scaled to the tuning file's measured times where the
  /// shape was measured; docs/model.md).
  std::vector<std::pair<std::string, double>> predicted_seconds;
  /// The cost model's time of the whole call as planned, on this process's threads (scaled to
  /// the tuning file's measured times, as the candidates are); unset where the model has no
  /// price for it.
  std::optional<double> plan_seconds;
};

/// A call of a team as Team::select_algorithm() is asked about it (the team supplies the shape).
struct CallQuery {
  Collective collective = Collective::allreduce;  ///< the collective called
  std::size_t bytes = 8;                          ///< of one rank's block
  std::size_t element_size = 8;                   ///< bytes of one element
  bool commutative = true;  ///< whether the op is commutative (built-in ops are)
  bool in_place = false;    ///< whether the call is in place
};

/// The plan tlc makes for such a call, honouring TLC_ALGO_<COLLECTIVE>, TLC_TUNING and the
/// TLC_COST_* parameters. Lane parallelism comes from TLC_COST_LANE_PARALLELISM, else from the MPI
/// library when MPI is initialised, else every lane is assumed to progress in parallel.
TLC_API Selection select_algorithm(const SelectionQuery& query);

/// How many lanes the MPI library progresses at once, when it says (MPICH: its number of VCIs;
/// 1 in a global-lock build such as Debian's); 0 when unknown. Needs MPI initialised.
TLC_API int mpi_lane_parallelism();

}  // namespace tlc
