// What tlc can run and what it would choose: the algorithm registry and the selector's answer
// for a team shape and message size (what `tlc-info --algorithms` prints).
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include <tlc/options.hpp>

namespace tlc {

struct AlgorithmDescription {
  Collective collective;
  std::string name;     // as accepted by TeamOptions::algorithms and TLC_ALGO_<COLLECTIVE>
  bool single_process;  // serves single-process teams only
  std::string summary;
};

// Every algorithm of every collective, in registry order.
std::vector<AlgorithmDescription> algorithms();

struct SelectionQuery {
  Collective collective = Collective::allreduce;
  std::size_t bytes = 8;  // of one rank's block
  int processes = 1;
  int threads = 1;  // per process
  int lanes = 1;
  int numa_domains = 1;  // the process's threads span this many NUMA domains
  bool commutative = true;
};

struct Selection {
  std::string name;
  // The cost model's inter-process time per candidate algorithm (several processes only).
  std::vector<std::pair<std::string, double>> predicted_seconds;
};

// The selector's choice, honouring TLC_ALGO_<COLLECTIVE> and the TLC_COST_* parameters. Lane
// parallelism comes from TLC_COST_LANE_PARALLELISM, else from the MPI library when MPI is
// initialised, else every lane is assumed to progress in parallel.
Selection select_algorithm(const SelectionQuery& query);

// How many lanes the MPI library progresses at once, when it says (MPICH: its number of VCIs;
// 1 in a global-lock build such as Debian's); 0 when unknown. Needs MPI initialised.
int mpi_lane_parallelism();

}  // namespace tlc
