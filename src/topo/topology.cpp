// Loading a machine description through hwloc (this machine, an XML export or a synthetic
// string) and reducing it to what tlc plans with: NUMA domains that hold allowed cores, the
// allowed cores and PUs, and the network rails with the NUMA domain each hangs off.
#include "topo/topology_impl.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>
#include <utility>

#include <tlc/error.hpp>

namespace tlc {
namespace detail {

std::string bitmap_list(hwloc_const_bitmap_t set) {
  char* text = nullptr;
  if (hwloc_bitmap_list_asprintf(&text, set) < 0 || text == nullptr)
    throw Error(Errc::topology, "tlc: hwloc could not format a cpuset");
  std::string result(text);
  std::free(text);
  return result;
}

std::string render_table(const std::vector<std::vector<std::string>>& rows,
                         const std::string& indent) {
  std::vector<std::size_t> width;
  for (const auto& row : rows) {
    if (width.size() < row.size()) width.resize(row.size(), 0);
    for (std::size_t c = 0; c < row.size(); ++c) width[c] = std::max(width[c], row[c].size());
  }
  std::string out;
  for (const auto& row : rows) {
    std::string line = indent;
    for (std::size_t c = 0; c < row.size(); ++c) {
      line += row[c];
      if (c + 1 < row.size()) line.append(width[c] - row[c].size() + 2, ' ');
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line;
    out += '\n';
  }
  return out;
}

namespace {

// "0-3,8" style, for lists of logical indices in messages and summaries.
std::string int_ranges(const std::vector<int>& values) {
  std::string out;
  for (std::size_t i = 0; i < values.size();) {
    std::size_t j = i;
    while (j + 1 < values.size() && values[j + 1] == values[j] + 1) ++j;
    if (!out.empty()) out += ',';
    out += std::to_string(values[i]);
    if (j > i) out += '-' + std::to_string(values[j]);
    i = j + 1;
  }
  return out;
}

// The PCI function an OS device belongs to; an OS device without one (a virtual or
// platform device) is a rail of its own.
// A scratch bitmap freed on every path out.
struct Bitmap {
  hwloc_bitmap_t set = hwloc_bitmap_alloc();
  Bitmap() {
    if (set == nullptr)
      throw Error(Errc::topology, "tlc: out of memory allocating an hwloc cpuset");
  }
  ~Bitmap() { hwloc_bitmap_free(set); }
  Bitmap(const Bitmap&) = delete;
  Bitmap& operator=(const Bitmap&) = delete;
};

hwloc_obj_t rail_key(hwloc_obj_t osdev) {
  hwloc_obj_t p = osdev->parent;
  while (p != nullptr && p->type == HWLOC_OBJ_OS_DEVICE) p = p->parent;
  return (p != nullptr && p->type == HWLOC_OBJ_PCI_DEVICE) ? p : osdev;
}

}  // namespace

TopologyImpl::TopologyImpl(hwloc_topology_t loaded, hwloc_bitmap_t allowed_set,
                           std::string source_name)
    : topology(loaded), allowed(allowed_set), source(std::move(source_name)) {
  try {
    hwloc_bitmap_and(allowed, allowed, hwloc_topology_get_topology_cpuset(topology));
    pus = hwloc_bitmap_weight(allowed);
    if (pus <= 0)
      throw Error(Errc::topology, "tlc: no processing unit of " + source + " is allowed");

    // Some topologies (synthetic "pu:4", a few exotic platforms) have no Core objects; each PU
    // then stands in for a core so that planning still works.
    const hwloc_obj_type_t core_type =
        hwloc_get_nbobjs_by_type(topology, HWLOC_OBJ_CORE) > 0 ? HWLOC_OBJ_CORE : HWLOC_OBJ_PU;

    std::vector<hwloc_obj_t> nodes;
    for (hwloc_obj_t n = hwloc_get_next_obj_by_type(topology, HWLOC_OBJ_NUMANODE, nullptr);
         n != nullptr; n = hwloc_get_next_obj_by_type(topology, HWLOC_OBJ_NUMANODE, n))
      nodes.push_back(n);

    // A core goes to the first NUMA node that covers it: nodes with the same CPUs (DRAM plus
    // HBM or CXL memory) must not count the same cores twice, and hwloc lists DRAM first.
    std::vector<int> node_of_core;
    std::vector<int> cores_per_node(nodes.size(), 0);
    Bitmap pu_set;
    Bitmap single;
    for (hwloc_obj_t c = hwloc_get_next_obj_by_type(topology, core_type, nullptr); c != nullptr;
         c = hwloc_get_next_obj_by_type(topology, core_type, c)) {
      hwloc_bitmap_and(pu_set.set, c->cpuset, allowed);
      if (hwloc_bitmap_iszero(pu_set.set)) continue;
      CoreInfo info;
      info.logical = static_cast<int>(c->logical_index);
      info.cpuset = bitmap_list(pu_set.set);
      for (int pu = hwloc_bitmap_first(pu_set.set); pu >= 0;
           pu = hwloc_bitmap_next(pu_set.set, pu)) {
        hwloc_bitmap_only(single.set, static_cast<unsigned>(pu));
        info.pu_sets.push_back(bitmap_list(single.set));
      }
      int node = 0;
      for (std::size_t n = 0; n < nodes.size(); ++n) {
        if (hwloc_bitmap_intersects(nodes[n]->cpuset, c->cpuset)) {
          node = static_cast<int>(n);
          break;
        }
      }
      if (!nodes.empty()) ++cores_per_node[static_cast<std::size_t>(node)];
      node_of_core.push_back(node);
      cores.push_back(std::move(info));
    }

    // Domains: NUMA nodes that hold allowed cores, renumbered densely in hwloc's order.
    std::vector<int> domain_of_node(nodes.size(), -1);
    if (nodes.empty()) {
      domains.push_back(NumaDomain{0, 0, {}});
    } else {
      for (std::size_t n = 0; n < nodes.size(); ++n) {
        if (cores_per_node[n] == 0) continue;
        domain_of_node[n] = static_cast<int>(domains.size());
        domains.push_back(
            NumaDomain{static_cast<int>(domains.size()), static_cast<int>(nodes[n]->os_index), {}});
      }
    }
    domain_cores.assign(domains.size(), {});
    for (std::size_t i = 0; i < cores.size(); ++i) {
      const int d = nodes.empty() ? 0 : domain_of_node[static_cast<std::size_t>(node_of_core[i])];
      cores[i].domain = d;
      domain_cores[static_cast<std::size_t>(d)].push_back(static_cast<int>(i));
      domains[static_cast<std::size_t>(d)].cores.push_back(cores[i].logical);
    }
    for (std::size_t d = 0; d < domains.size(); ++d) {
      hwloc_bitmap_zero(pu_set.set);
      for (int i : domain_cores[d]) {
        hwloc_obj_t c = hwloc_get_obj_by_type(
            topology, core_type, static_cast<unsigned>(cores[static_cast<std::size_t>(i)].logical));
        hwloc_bitmap_or(pu_set.set, pu_set.set, c->cpuset);
      }
      hwloc_bitmap_and(pu_set.set, pu_set.set, allowed);
      domain_cpusets.push_back(bitmap_list(pu_set.set));
    }

    // Rails: one per PCI function carrying an OpenFabrics or network OS device. mlx5_0 and its
    // IPoIB interface ib0 are the same wire, so the pair is one rail named after mlx5_0.
    struct Found {
      hwloc_obj_t key;
      std::string fabric;
      std::string network;
    };
    std::vector<Found> found;
    for (hwloc_obj_t o = hwloc_get_next_osdev(topology, nullptr); o != nullptr;
         o = hwloc_get_next_osdev(topology, o)) {
      const auto type = o->attr->osdev.type;
      if (type != HWLOC_OBJ_OSDEV_OPENFABRICS && type != HWLOC_OBJ_OSDEV_NETWORK) continue;
      if (o->name == nullptr) continue;
      const hwloc_obj_t key = rail_key(o);
      auto it =
          std::find_if(found.begin(), found.end(), [&](const Found& f) { return f.key == key; });
      if (it == found.end()) {
        found.push_back(Found{key, {}, {}});
        it = found.end() - 1;
      }
      std::string& slot = type == HWLOC_OBJ_OSDEV_OPENFABRICS ? it->fabric : it->network;
      if (slot.empty()) slot = o->name;
    }
    const hwloc_obj_t root = hwloc_get_root_obj(topology);
    for (const Found& f : found) {
      Rail rail;
      rail.name = f.fabric.empty() ? f.network : f.fabric;
      rail.kind = f.fabric.empty() ? "network" : "openfabrics";
      const hwloc_obj_t anchor = hwloc_get_non_io_ancestor_obj(topology, f.key);
      // Hanging off the whole machine means hwloc does not know the locality; with a single
      // domain that is still an exact answer.
      if (anchor != nullptr && (anchor != root || domains.size() == 1)) {
        if (nodes.empty()) {
          rail.numa = 0;
        } else {
          for (std::size_t n = 0; n < nodes.size(); ++n) {
            if (domain_of_node[n] >= 0 && hwloc_bitmap_isset(anchor->nodeset, nodes[n]->os_index)) {
              rail.numa = domain_of_node[n];
              break;
            }
          }
        }
      }
      rails.push_back(std::move(rail));
    }
  } catch (...) {
    hwloc_bitmap_free(allowed);
    hwloc_topology_destroy(topology);
    throw;
  }
}

TopologyImpl::~TopologyImpl() {
  hwloc_bitmap_free(allowed);
  hwloc_topology_destroy(topology);
}

}  // namespace detail

namespace {

using detail::TopologyImpl;

// Owns an hwloc topology until it is handed to a TopologyImpl.
struct Loading {
  hwloc_topology_t topology = nullptr;
  Loading() {
    if (hwloc_topology_init(&topology) != 0)
      throw Error(Errc::topology,
                  std::string("tlc: hwloc_topology_init failed: ") + std::strerror(errno));
  }
  ~Loading() {
    if (topology != nullptr) hwloc_topology_destroy(topology);
  }
  Loading(const Loading&) = delete;
  Loading& operator=(const Loading&) = delete;
  hwloc_topology_t release() { return std::exchange(topology, nullptr); }
};

hwloc_bitmap_t alloc_bitmap() {
  hwloc_bitmap_t set = hwloc_bitmap_alloc();
  if (set == nullptr) throw Error(Errc::topology, "tlc: out of memory allocating an hwloc cpuset");
  return set;
}

// Rails are PCI devices, so I/O discovery has to be on; "important" keeps NICs and their OS
// devices but drops the bridges and functions nobody cares about.
void keep_network_devices(hwloc_topology_t topology) {
  hwloc_topology_set_io_types_filter(topology, HWLOC_TYPE_FILTER_KEEP_IMPORTANT);
}

std::shared_ptr<const TopologyImpl> finish(Loading& loading, hwloc_bitmap_t allowed,
                                           std::string source) {
  // The TopologyImpl constructor frees both on failure.
  return std::make_shared<const TopologyImpl>(loading.release(), allowed, std::move(source));
}

// This machine as hwloc discovers it, once per process: discovery reads every PCI device's
// configuration through the kernel, too slow to repeat for every team. The machine does not
// change while the process runs; the process's binding can, so detect() reads that each time.
class DiscoveredMachine {
 public:
  // A private copy of the discovered topology (hwloc_topology_dup does not rediscover).
  static void copy_into(Loading& loading) {
    static DiscoveredMachine machine;  // a throw leaves it to the next call to try again
    std::lock_guard<std::mutex> hold(machine.copying_);
    hwloc_topology_t copy = nullptr;
    if (hwloc_topology_dup(&copy, machine.loaded_.topology) != 0)
      throw Error(Errc::topology,
                  std::string("tlc: hwloc could not copy this machine's topology: ") +
                      std::strerror(errno));
    hwloc_topology_destroy(loading.release());
    loading.topology = copy;
  }

 private:
  DiscoveredMachine() {
    keep_network_devices(loaded_.topology);
    if (hwloc_topology_load(loaded_.topology) != 0)
      throw Error(Errc::topology, std::string("tlc: hwloc could not discover this machine: ") +
                                      std::strerror(errno));
  }
  Loading loaded_;
  std::mutex copying_;
};

}  // namespace

Topology Topology::detect() {
  Loading loading;
  DiscoveredMachine::copy_into(loading);
  hwloc_const_bitmap_t machine = hwloc_topology_get_allowed_cpuset(loading.topology);
  hwloc_bitmap_t allowed = alloc_bitmap();
  // The launcher's binding (mpiexec --bind-to, taskset, srun --cpu-bind) is what this process
  // may use; when it cannot be read, or lies outside the allowed set, use everything allowed.
  if (hwloc_get_cpubind(loading.topology, allowed, HWLOC_CPUBIND_PROCESS) == 0) {
    hwloc_bitmap_and(allowed, allowed, machine);
    if (hwloc_bitmap_iszero(allowed)) hwloc_bitmap_copy(allowed, machine);
  } else {
    hwloc_bitmap_copy(allowed, machine);
  }
  return Topology(finish(loading, allowed, "detected"));
}

Topology Topology::from_xml(const std::string& path) {
  // hwloc only says that loading failed; say why when it is the file itself.
  {
    std::ifstream probe(path);
    if (!probe)
      throw Error(Errc::topology,
                  "tlc: cannot read hwloc XML topology '" + path + "': " + std::strerror(errno));
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec))
      throw Error(Errc::topology,
                  "tlc: cannot read hwloc XML topology '" + path + "': it is a directory");
  }
  Loading loading;
  keep_network_devices(loading.topology);
  if (hwloc_topology_set_xml(loading.topology, path.c_str()) != 0 ||
      hwloc_topology_load(loading.topology) != 0)
    throw Error(Errc::topology, "tlc: '" + path +
                                    "' is not a valid hwloc XML topology (check it with "
                                    "hwloc-ls --input '" +
                                    path + "')");
  hwloc_bitmap_t allowed = alloc_bitmap();
  hwloc_bitmap_copy(allowed, hwloc_topology_get_allowed_cpuset(loading.topology));
  return Topology(finish(loading, allowed, "xml:" + path));
}

Topology Topology::synthetic(const std::string& description) {
  Loading loading;
  if (hwloc_topology_set_synthetic(loading.topology, description.c_str()) != 0 ||
      hwloc_topology_load(loading.topology) != 0)
    throw Error(Errc::topology, "tlc: invalid hwloc synthetic topology '" + description +
                                    "' (expected e.g. 'package:2 numa:2 core:8 pu:2')");
  hwloc_bitmap_t allowed = alloc_bitmap();
  hwloc_bitmap_copy(allowed, hwloc_topology_get_allowed_cpuset(loading.topology));
  return Topology(finish(loading, allowed, "synthetic:" + description));
}

int Topology::numa_domains() const { return static_cast<int>(impl_->domains.size()); }
int Topology::cores() const { return static_cast<int>(impl_->cores.size()); }
int Topology::pus() const { return impl_->pus; }
const std::vector<NumaDomain>& Topology::domains() const { return impl_->domains; }
const std::vector<Rail>& Topology::rails() const { return impl_->rails; }
std::string Topology::source() const { return impl_->source; }

std::string Topology::describe() const {
  const TopologyImpl& t = *impl_;
  std::ostringstream out;
  out << "topology " << t.source << ": " << t.domains.size() << " NUMA domain"
      << (t.domains.size() == 1 ? "" : "s") << ", " << t.cores.size() << " core"
      << (t.cores.size() == 1 ? "" : "s") << ", " << t.pus << " PU" << (t.pus == 1 ? "" : "s")
      << ", " << t.rails.size() << " rail" << (t.rails.size() == 1 ? "" : "s") << '\n';
  std::vector<std::vector<std::string>> rows{{"numa", "os", "cores", "PUs"}};
  for (std::size_t d = 0; d < t.domains.size(); ++d)
    rows.push_back({std::to_string(t.domains[d].index), std::to_string(t.domains[d].os_index),
                    detail::int_ranges(t.domains[d].cores), t.domain_cpusets[d]});
  out << detail::render_table(rows, "  ");
  if (t.rails.empty()) {
    out << "  no network rails\n";
  } else {
    rows = {{"rail", "name", "kind", "numa"}};
    for (std::size_t r = 0; r < t.rails.size(); ++r)
      rows.push_back({std::to_string(r), t.rails[r].name, t.rails[r].kind,
                      t.rails[r].numa < 0 ? "?" : std::to_string(t.rails[r].numa)});
    out << detail::render_table(rows, "  ");
  }
  return out.str();
}

Topology Topology::restricted_to(const std::string& pu_list) const {
  hwloc_bitmap_t wanted = alloc_bitmap();
  if (hwloc_bitmap_list_sscanf(wanted, pu_list.c_str()) != 0) {
    hwloc_bitmap_free(wanted);
    throw Error(Errc::invalid_argument,
                "tlc: '" + pu_list + "' is not a PU list (expected e.g. '0-3,8')");
  }
  hwloc_bitmap_and(wanted, wanted, impl_->allowed);
  if (hwloc_bitmap_iszero(wanted)) {
    hwloc_bitmap_free(wanted);
    throw Error(Errc::topology, "tlc: restricting " + impl_->source + " to PUs '" + pu_list +
                                    "' leaves nothing: the allowed PUs are " +
                                    detail::bitmap_list(impl_->allowed));
  }
  // A copy of its own keeps each Topology's lifetime independent; hwloc_topology_dup only
  // reads the original, which other threads may be using.
  hwloc_topology_t copy = nullptr;
  if (hwloc_topology_dup(&copy, impl_->topology) != 0) {
    hwloc_bitmap_free(wanted);
    throw Error(Errc::topology,
                std::string("tlc: hwloc could not copy the topology: ") + std::strerror(errno));
  }
  return Topology(std::make_shared<const TopologyImpl>(copy, wanted, impl_->source));
}

Topology Topology::share(int part, int parts) const {
  if (parts < 1 || part < 0 || part >= parts)
    throw Error(Errc::invalid_argument, "tlc: share " + std::to_string(part) + " of " +
                                            std::to_string(parts) + " does not exist");
  const std::size_t cores = impl_->cores.size();
  const auto p = static_cast<std::size_t>(part), n = static_cast<std::size_t>(parts);
  std::size_t first = p % cores, last = first + 1;
  if (cores >= n) {
    first = p * cores / n;
    last = (p + 1) * cores / n;
  }
  std::string list;
  for (std::size_t c = first; c < last; ++c)
    list += (list.empty() ? "" : ",") + impl_->cores[c].cpuset;
  return restricted_to(list);
}

std::string Topology::allowed_pus() const { return detail::bitmap_list(impl_->allowed); }

}  // namespace tlc
