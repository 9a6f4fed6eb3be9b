/// @file
/// The machine as hwloc sees it: NUMA domains, cores, PUs and network rails, plus the placement
/// plan that maps a team's threads to cores and its lanes to rails.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <tlc/detail/export.hpp>

namespace tlc {

namespace detail {
struct TopologyImpl;
struct TopologyAccess;
}  // namespace detail

/// A network rail: one network device (an OpenFabrics device such as mlx5_0 or hfi1_0, or a
/// network interface such as ib0 or eth0 when no OpenFabrics device shares its PCI function).
struct Rail {
  std::string name;  ///< OS device name
  std::string kind;  ///< "openfabrics" or "network"
  int numa = -1;     ///< logical index of the NUMA domain the device hangs off, -1 if unknown
};

/// One NUMA domain of a Topology, with its allowed cores.
struct NumaDomain {
  int index = 0;           ///< logical index (0..numa_domains()-1)
  int os_index = 0;        ///< the OS's node number
  std::vector<int> cores;  ///< logical indices of the allowed cores in this domain
};

/// The machine a team is placed on: NUMA domains, cores, rails (network devices), from hwloc.
class TLC_API Topology {
 public:
  /// The machine this process runs on; the allowed cpuset is the process's current binding.
  static Topology detect();
  /// An hwloc XML export (hwloc-ls --of xml, lstopo foo.xml), I/O devices included.
  static Topology from_xml(const std::string& path);
  /// An hwloc synthetic description, e.g. "package:2 numa:2 core:8 pu:2". Has no rails.
  static Topology synthetic(const std::string& description);

  int numa_domains() const;                        ///< NUMA domains with at least one allowed core
  int cores() const;                               ///< allowed cores
  int pus() const;                                 ///< allowed processing units (hardware threads)
  const std::vector<NumaDomain>& domains() const;  ///< the NUMA domains, by logical index
  const std::vector<Rail>& rails() const;          ///< the network devices found
  std::string source() const;    ///< "detected", "xml:<path>" or "synthetic:<description>"
  std::string describe() const;  ///< multi-line human-readable summary

  /// Restricts the allowed cpuset to the given PUs (an hwloc list string such as "0-3,8"), as a
  /// launcher binding would. Throws tlc::Error(topology) if nothing remains.
  Topology restricted_to(const std::string& pu_list) const;

  /// Share `part` of `parts` equal shares of the allowed cores (consecutive cores, so a share
  /// stays inside a NUMA domain where it can). For several processes on one node that were all
  /// given the whole node: each takes its own cores instead of all pinning onto the same ones.
  /// With fewer cores than parts, part p gets core p % cores.
  Topology share(int part, int parts) const;

  /// The allowed PUs as an hwloc list string, e.g. "0-15".
  std::string allowed_pus() const;

 private:
  // The library's own code (placement, pinning) reads the hwloc topology through this accessor
  // (src/topo/topology_impl.hpp), which programs never see.
  friend struct detail::TopologyAccess;
  explicit Topology(std::shared_ptr<const detail::TopologyImpl> impl) : impl_(std::move(impl)) {}
  std::shared_ptr<const detail::TopologyImpl> impl_;
};

/// What a team asks of the machine. Zero means "choose for me" (see Placement::plan).
struct PlacementRequest {
  int threads = 0;           ///< 0: threads_per_numa * domains, else one per allowed core
  int threads_per_numa = 0;  ///< 0: spread threads evenly over the NUMA domains
  int lanes = 0;             ///< 0: threads_per_rail * rails, else 1
  int threads_per_rail = 0;  ///< lane threads per rail; requires rails
  bool pin = true;           ///< bind each thread to its core (an unpinnable plan is an error)
};

/// Where one thread of the team runs.
struct ThreadPlacement {
  int local_index = 0;     ///< the thread's index inside its process
  int numa = 0;            ///< logical NUMA domain
  int core = -1;           ///< logical core index, -1 when not pinned
  std::string cpuset;      ///< hwloc list string of the PUs it is bound to ("" when not pinned)
  std::vector<int> lanes;  ///< lanes this thread drives (usually zero or one)
};

/// Which rail a lane uses and which thread drives it.
struct LanePlacement {
  int lane = 0;    ///< the lane's index
  int rail = -1;   ///< index into Topology::rails(), -1 when the machine has no rail
  int numa = 0;    ///< NUMA domain of the rail (or of the lane thread when there is no rail)
  int thread = 0;  ///< local index of the thread that drives this lane
};

/// The placement plan of a team: threads to cores, lanes to rails and threads.
struct TLC_API Placement {
  std::vector<ThreadPlacement> threads;  ///< one per thread, by local index
  std::vector<LanePlacement> lanes;      ///< one per lane
  bool pinned = false;                   ///< whether the threads are bound to their cores

  /// Builds the plan, or throws tlc::Error(topology / invalid_argument) with a message that says
  /// what cannot be honoured (more pinned threads than PUs, zero lanes, threads_per_rail on a
  /// machine without rails, threads and threads_per_numa that contradict each other, ...).
  static Placement plan(const Topology& topology, const PlacementRequest& request);

  /// Multi-line human-readable summary (tlc-info prints it).
  std::string describe() const;
};

/// Binds the calling thread to the thread's planned cpuset. No-op when the plan is not pinned.
TLC_API void pin_current_thread(const Topology& topology, const ThreadPlacement& where);

}  // namespace tlc
