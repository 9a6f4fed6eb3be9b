// What a tlc::Topology holds: the loaded hwloc topology, the PUs this process may use, and the
// views of it that placement and pinning need (domains, cores with their PUs, rails), computed
// once at load time so that planning never touches hwloc and pinning only reads it.
#pragma once

#include <hwloc.h>

#include <string>
#include <vector>

#include <tlc/topology.hpp>

namespace tlc::detail {

// One allowed core (or, on a topology without Core objects, one allowed PU standing in for it).
struct CoreInfo {
  int logical = 0;                   // hwloc logical index of the core (Core L#n in hwloc-ls)
  int domain = 0;                    // index into TopologyImpl::domains
  std::string cpuset;                // allowed PUs of the core as an hwloc list string
  std::vector<std::string> pu_sets;  // each allowed PU alone, as a list string, in PU order
};

struct TopologyImpl {
  hwloc_topology_t topology = nullptr;  // loaded; only read after construction
  hwloc_bitmap_t allowed = nullptr;     // PUs the process may use
  std::string source;

  std::vector<NumaDomain> domains;
  std::vector<Rail> rails;
  std::vector<CoreInfo> cores;                 // allowed cores in hwloc's logical order
  std::vector<std::vector<int>> domain_cores;  // per domain: indices into `cores`
  std::vector<std::string> domain_cpusets;     // per domain: its allowed PUs as a list string
  int pus = 0;                                 // allowed PUs

  // Takes ownership of a loaded topology and an allowed set (both freed by the destructor),
  // computes the views above, and throws tlc::Error(topology) if no PU is allowed.
  TopologyImpl(hwloc_topology_t loaded, hwloc_bitmap_t allowed_set, std::string source_name);
  ~TopologyImpl();
  TopologyImpl(const TopologyImpl&) = delete;
  TopologyImpl& operator=(const TopologyImpl&) = delete;
};

// What a Topology holds, for the library's own code and its unit tests: the public class keeps
// it private.
struct TopologyAccess {
  static const TopologyImpl& impl(const Topology& topology) noexcept { return *topology.impl_; }
};

// An hwloc bitmap as an hwloc list string ("0-3,8"); throws tlc::Error(topology) on failure.
std::string bitmap_list(hwloc_const_bitmap_t set);

// Aligned text table (columns left-aligned, two spaces apart); the first row is the header and
// every line starts with `indent`.
std::string render_table(const std::vector<std::vector<std::string>>& rows,
                         const std::string& indent);

}  // namespace tlc::detail
