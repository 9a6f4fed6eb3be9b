// Binding the calling thread to its planned PUs. Called by every team thread at start-up, at
// the same time, so it only reads the shared topology and keeps its scratch cpuset local.
#include <cerrno>
#include <system_error>

#include <tlc/error.hpp>

#include "topo/topology_impl.hpp"

namespace tlc {

void pin_current_thread(const Topology& topology, const ThreadPlacement& where) {
  if (where.cpuset.empty()) return;
  const detail::TopologyImpl& t = detail::TopologyAccess::impl(topology);
  const std::string who =
      "tlc: cannot pin thread " + std::to_string(where.local_index) + " to PUs " + where.cpuset;
  // Binding hooks exist only for the machine hwloc discovered; an XML or synthetic topology
  // describes some other machine, and its PU numbers mean nothing here.
  if (!hwloc_topology_is_thissystem(t.topology))
    throw Error(Errc::topology, who + ": the topology (" + t.source +
                                    ") is not this machine's; use pin=false / TLC_PIN=0 with it");

  hwloc_bitmap_t set = hwloc_bitmap_alloc();
  if (set == nullptr) throw Error(Errc::topology, who + ": out of memory");
  if (hwloc_bitmap_list_sscanf(set, where.cpuset.c_str()) != 0 || hwloc_bitmap_iszero(set)) {
    hwloc_bitmap_free(set);
    throw Error(Errc::invalid_argument, who + ": not a valid PU list");
  }
  const int rc = hwloc_set_cpubind(t.topology, set, HWLOC_CPUBIND_THREAD);
  const int saved = errno;
  hwloc_bitmap_free(set);
  // strerror's buffer may be shared between threads; the error category's message is not.
  if (rc != 0) throw Error(Errc::topology, who + ": " + std::generic_category().message(saved));
}

}  // namespace tlc
