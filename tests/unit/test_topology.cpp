// Unit tests of tlc::Topology (synthetic, XML and detected machines, restriction, errors) and of
// pinning threads on this machine.
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include <tlc/error.hpp>
#include <tlc/topology.hpp>

#include "unit/test_data.hpp"

#include "topo/topology_impl.hpp"

namespace {

using tlc_test::data_path;

// A scratch file that removes itself; the name carries the test's pid so parallel runs of the
// binary do not collide.
struct TempFile {
  std::filesystem::path path;
  TempFile(const std::string& stem, const std::string& contents)
      : path(std::filesystem::temp_directory_path() /
             (stem + "_" + std::to_string(::getpid()) + ".xml")) {
    std::ofstream(path) << contents;
  }
  ~TempFile() {
    std::error_code ec;
    std::filesystem::remove(path, ec);
  }
};

template <typename F>
tlc::Errc error_code_of(F&& f) {
  try {
    f();
  } catch (const tlc::Error& e) {
    return e.code();
  }
  ADD_FAILURE() << "expected a tlc::Error";
  return tlc::Errc::unsupported;
}

std::vector<int> iota(int first, int count) {
  std::vector<int> v;
  for (int i = 0; i < count; ++i) v.push_back(first + i);
  return v;
}

const tlc::Rail* find_rail(const tlc::Topology& t, const std::string& name) {
  for (const tlc::Rail& r : t.rails())
    if (r.name == name) return &r;
  return nullptr;
}

TEST(TopologySynthetic, CountsAndDomains) {
  const tlc::Topology t = tlc::Topology::synthetic("package:2 numa:2 core:8 pu:2");
  EXPECT_EQ(t.numa_domains(), 4);
  EXPECT_EQ(t.cores(), 32);
  EXPECT_EQ(t.pus(), 64);
  EXPECT_TRUE(t.rails().empty());
  EXPECT_EQ(t.source(), "synthetic:package:2 numa:2 core:8 pu:2");
  ASSERT_EQ(t.domains().size(), 4u);
  for (int d = 0; d < 4; ++d) {
    EXPECT_EQ(t.domains()[d].index, d);
    EXPECT_EQ(t.domains()[d].os_index, d);
    EXPECT_EQ(t.domains()[d].cores, iota(d * 8, 8)) << "domain " << d;
  }
}

TEST(TopologySynthetic, SingleDomainWithHyperthreads) {
  const tlc::Topology t = tlc::Topology::synthetic("package:1 core:4 pu:2");
  EXPECT_EQ(t.numa_domains(), 1);
  EXPECT_EQ(t.cores(), 4);
  EXPECT_EQ(t.pus(), 8);
  EXPECT_EQ(t.domains()[0].cores, iota(0, 4));
}

TEST(TopologySynthetic, PusStandInForMissingCores) {
  const tlc::Topology t = tlc::Topology::synthetic("pu:4");
  EXPECT_EQ(t.numa_domains(), 1);
  EXPECT_EQ(t.cores(), 4);
  EXPECT_EQ(t.pus(), 4);
}

TEST(TopologySynthetic, InvalidDescriptionIsTopologyError) {
  try {
    tlc::Topology::synthetic("garbage:3");
    FAIL() << "expected tlc::Error";
  } catch (const tlc::Error& e) {
    EXPECT_EQ(e.code(), tlc::Errc::topology);
    EXPECT_NE(std::string(e.what()).find("garbage:3"), std::string::npos) << e.what();
  }
}

TEST(TopologyXml, DualSocketTwoRails) {
  const std::string path = data_path("dual_socket_two_rails.xml");
  const tlc::Topology t = tlc::Topology::from_xml(path);
  EXPECT_EQ(t.source(), "xml:" + path);
  EXPECT_EQ(t.numa_domains(), 2);
  EXPECT_EQ(t.cores(), 16);
  EXPECT_EQ(t.pus(), 32);
  ASSERT_EQ(t.domains().size(), 2u);
  EXPECT_EQ(t.domains()[0].cores, iota(0, 8));
  EXPECT_EQ(t.domains()[1].cores, iota(8, 8));
  EXPECT_EQ(t.domains()[1].os_index, 1);

  // hfi1_N and ibN share a PCI function: one rail each, named after the fabric device.
  ASSERT_EQ(t.rails().size(), 2u);
  EXPECT_EQ(t.rails()[0].name, "hfi1_0");
  EXPECT_EQ(t.rails()[0].kind, "openfabrics");
  EXPECT_EQ(t.rails()[0].numa, 0);
  EXPECT_EQ(t.rails()[1].name, "hfi1_1");
  EXPECT_EQ(t.rails()[1].kind, "openfabrics");
  EXPECT_EQ(t.rails()[1].numa, 1);
  EXPECT_EQ(find_rail(t, "ib0"), nullptr);
}

TEST(TopologyXml, QuadNumaOneRailOnDomainTwo) {
  const tlc::Topology t = tlc::Topology::from_xml(data_path("quad_numa_one_rail.xml"));
  EXPECT_EQ(t.numa_domains(), 4);
  EXPECT_EQ(t.cores(), 16);
  EXPECT_EQ(t.pus(), 32);
  for (int d = 0; d < 4; ++d) EXPECT_EQ(t.domains()[d].cores, iota(d * 4, 4)) << "domain " << d;
  // The NVMe disk is not a rail; mlx5_0 + ib0 are one rail on NUMA node 2.
  ASSERT_EQ(t.rails().size(), 1u);
  EXPECT_EQ(t.rails()[0].name, "mlx5_0");
  EXPECT_EQ(t.rails()[0].kind, "openfabrics");
  EXPECT_EQ(t.rails()[0].numa, 2);
}

// Two sockets with a plain Ethernet port on socket 1 and an InfiniBand HCA whose host bridge
// hangs off the machine (hwloc does not know its locality). The HCA lists its netdev first.
constexpr const char* kMixedNicsXml = R"(<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE topology SYSTEM "hwloc2.dtd">
<topology version="2.0">
  <object type="Machine" os_index="0" cpuset="0x00000003" complete_cpuset="0x00000003" allowed_cpuset="0x00000003" nodeset="0x00000003" complete_nodeset="0x00000003" allowed_nodeset="0x00000003" gp_index="1">
    <object type="Package" os_index="0" cpuset="0x00000001" complete_cpuset="0x00000001" nodeset="0x00000001" complete_nodeset="0x00000001" gp_index="2">
      <object type="NUMANode" os_index="0" cpuset="0x00000001" complete_cpuset="0x00000001" nodeset="0x00000001" complete_nodeset="0x00000001" gp_index="3" local_memory="1073741824"/>
      <object type="Core" os_index="0" cpuset="0x00000001" complete_cpuset="0x00000001" nodeset="0x00000001" complete_nodeset="0x00000001" gp_index="4">
        <object type="PU" os_index="0" cpuset="0x00000001" complete_cpuset="0x00000001" nodeset="0x00000001" complete_nodeset="0x00000001" gp_index="5"/>
      </object>
    </object>
    <object type="Package" os_index="1" cpuset="0x00000002" complete_cpuset="0x00000002" nodeset="0x00000002" complete_nodeset="0x00000002" gp_index="6">
      <object type="NUMANode" os_index="1" cpuset="0x00000002" complete_cpuset="0x00000002" nodeset="0x00000002" complete_nodeset="0x00000002" gp_index="7" local_memory="1073741824"/>
      <object type="Core" os_index="0" cpuset="0x00000002" complete_cpuset="0x00000002" nodeset="0x00000002" complete_nodeset="0x00000002" gp_index="8">
        <object type="PU" os_index="1" cpuset="0x00000002" complete_cpuset="0x00000002" nodeset="0x00000002" complete_nodeset="0x00000002" gp_index="9"/>
      </object>
      <object type="Bridge" gp_index="10" bridge_type="0-1" depth="0" bridge_pci="0000:[80-81]">
        <object type="PCIDev" gp_index="11" pci_busid="0000:81:00.0" pci_type="0200 [8086:1521] [8086:0001] 01" pci_link_speed="0.500000">
          <object type="OSDev" gp_index="12" name="eth2" osdev_type="2"/>
        </object>
      </object>
    </object>
    <object type="Bridge" gp_index="13" bridge_type="0-1" depth="0" bridge_pci="0000:[00-01]">
      <object type="PCIDev" gp_index="14" pci_busid="0000:01:00.0" pci_type="0207 [15b3:1017] [15b3:0007] 00" pci_link_speed="15.753846">
        <object type="OSDev" gp_index="15" name="ib0" osdev_type="2"/>
        <object type="OSDev" gp_index="16" name="mlx5_0" osdev_type="3"/>
      </object>
    </object>
  </object>
</topology>
)";

TEST(TopologyXml, NetworkOnlyDeviceAndUnknownLocality) {
  const TempFile file("tlc_mixed_nics", kMixedNicsXml);
  const tlc::Topology t = tlc::Topology::from_xml(file.path.string());
  EXPECT_EQ(t.numa_domains(), 2);
  ASSERT_EQ(t.rails().size(), 2u);
  const tlc::Rail* eth = find_rail(t, "eth2");
  ASSERT_NE(eth, nullptr);
  EXPECT_EQ(eth->kind, "network");
  EXPECT_EQ(eth->numa, 1);
  const tlc::Rail* hca = find_rail(t, "mlx5_0");
  ASSERT_NE(hca, nullptr);
  EXPECT_EQ(hca->kind, "openfabrics");
  EXPECT_EQ(hca->numa, -1);
  EXPECT_EQ(find_rail(t, "ib0"), nullptr);
}

TEST(TopologyXml, MissingFileIsTopologyErrorNamingThePath) {
  const std::string path = data_path("no_such_topology.xml");
  try {
    tlc::Topology::from_xml(path);
    FAIL() << "expected tlc::Error";
  } catch (const tlc::Error& e) {
    EXPECT_EQ(e.code(), tlc::Errc::topology);
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
  }
}

TEST(TopologyXml, InvalidFileIsTopologyErrorNamingThePath) {
  const TempFile file("tlc_not_a_topology", "this is not XML <topology");
  try {
    tlc::Topology::from_xml(file.path.string());
    FAIL() << "expected tlc::Error";
  } catch (const tlc::Error& e) {
    EXPECT_EQ(e.code(), tlc::Errc::topology);
    EXPECT_NE(std::string(e.what()).find(file.path.string()), std::string::npos) << e.what();
  }
}

TEST(TopologyDescribe, ListsDomainsAndRails) {
  const tlc::Topology t = tlc::Topology::from_xml(data_path("dual_socket_two_rails.xml"));
  const std::string text = t.describe();
  EXPECT_NE(text.find("2 NUMA domains"), std::string::npos) << text;
  EXPECT_NE(text.find("16 cores"), std::string::npos) << text;
  EXPECT_NE(text.find("hfi1_0"), std::string::npos) << text;
  EXPECT_NE(text.find("hfi1_1"), std::string::npos) << text;
  EXPECT_NE(text.find("0-7,16-23"), std::string::npos) << text;  // domain 0's PUs
  const std::string none = tlc::Topology::synthetic("core:2 pu:1").describe();
  EXPECT_NE(none.find("no network rails"), std::string::npos) << none;
}

TEST(TopologyRestrict, KeepsOnlyTheGivenPus) {
  const tlc::Topology full = tlc::Topology::from_xml(data_path("dual_socket_two_rails.xml"));
  // Cores 0-3 (with their hyperthreads 16-19 for two of them) and one PU of core 8.
  const tlc::Topology part = full.restricted_to("0-3,16-17,8");
  EXPECT_EQ(part.cores(), 5);
  EXPECT_EQ(part.pus(), 7);
  ASSERT_EQ(part.numa_domains(), 2);
  EXPECT_EQ(part.domains()[0].cores, iota(0, 4));
  EXPECT_EQ(part.domains()[1].cores, std::vector<int>{8});
  EXPECT_EQ(part.rails().size(), 2u);
  // The original is untouched.
  EXPECT_EQ(full.cores(), 16);
  EXPECT_EQ(full.pus(), 32);
}

TEST(TopologyRestrict, DropsDomainsWithoutAllowedCores) {
  const tlc::Topology t =
      tlc::Topology::from_xml(data_path("dual_socket_two_rails.xml")).restricted_to("0-7");
  EXPECT_EQ(t.numa_domains(), 1);
  EXPECT_EQ(t.cores(), 8);
  EXPECT_EQ(t.pus(), 8);
  // hfi1_1 hangs off a NUMA node this process cannot use: its domain is unknown here.
  ASSERT_EQ(t.rails().size(), 2u);
  EXPECT_EQ(t.rails()[0].numa, 0);
  EXPECT_EQ(t.rails()[1].numa, -1);
}

TEST(TopologyRestrict, RestrictionsCompose) {
  const tlc::Topology t =
      tlc::Topology::synthetic("package:1 core:4 pu:2").restricted_to("0-5").restricted_to("4-7");
  EXPECT_EQ(t.pus(), 2);
  EXPECT_EQ(t.cores(), 1);
}

TEST(TopologyRestrict, EmptyIntersectionIsTopologyError) {
  const tlc::Topology t = tlc::Topology::synthetic("package:1 core:4 pu:1");
  EXPECT_EQ(error_code_of([&] { t.restricted_to("100-200"); }), tlc::Errc::topology);
}

TEST(TopologyRestrict, MalformedListIsInvalidArgument) {
  const tlc::Topology t = tlc::Topology::synthetic("package:1 core:4 pu:1");
  EXPECT_EQ(error_code_of([&] { t.restricted_to("zero to three"); }), tlc::Errc::invalid_argument);
}

TEST(TopologyDetect, ThisMachine) {
  const tlc::Topology t = tlc::Topology::detect();
  EXPECT_EQ(t.source(), "detected");
  EXPECT_GE(t.cores(), 1);
  EXPECT_GE(t.pus(), t.cores());
  EXPECT_GE(t.numa_domains(), 1);
  ASSERT_EQ(static_cast<int>(t.domains().size()), t.numa_domains());
  std::size_t listed = 0;
  for (const tlc::NumaDomain& d : t.domains()) {
    EXPECT_FALSE(d.cores.empty());
    listed += d.cores.size();
  }
  EXPECT_EQ(static_cast<int>(listed), t.cores());
  for (const tlc::Rail& r : t.rails()) {
    EXPECT_FALSE(r.name.empty());
    EXPECT_TRUE(r.kind == "openfabrics" || r.kind == "network") << r.kind;
    EXPECT_GE(r.numa, -1);
    EXPECT_LT(r.numa, t.numa_domains());
  }
}

TEST(TopologyCopy, SharesAndOutlivesTheOriginal) {
  std::vector<tlc::Topology> kept;
  {
    const tlc::Topology t = tlc::Topology::synthetic("package:2 core:3 pu:1");
    kept.push_back(t);
  }
  EXPECT_EQ(kept[0].cores(), 6);
  EXPECT_EQ(kept[0].numa_domains(), 1);
}

// The PUs hwloc says the calling thread is bound to, as a list string.
std::string current_binding(const tlc::Topology& t) {
  hwloc_bitmap_t set = hwloc_bitmap_alloc();
  const int rc =
      hwloc_get_cpubind(tlc::detail::TopologyAccess::impl(t).topology, set, HWLOC_CPUBIND_THREAD);
  std::string text = rc == 0 ? tlc::detail::bitmap_list(set) : "error";
  hwloc_bitmap_free(set);
  return text;
}

TEST(Pinning, UnpinnedPlacementIsANoOp) {
  const tlc::Topology t = tlc::Topology::from_xml(data_path("dual_socket_two_rails.xml"));
  tlc::ThreadPlacement where;  // cpuset "" means not pinned, even for another machine's topology
  EXPECT_NO_THROW(tlc::pin_current_thread(t, where));
}

TEST(Pinning, ForeignTopologyIsTopologyError) {
  const tlc::Topology t = tlc::Topology::synthetic("package:1 core:4 pu:1");
  tlc::ThreadPlacement where;
  where.cpuset = "0";
  EXPECT_EQ(error_code_of([&] { tlc::pin_current_thread(t, where); }), tlc::Errc::topology);
}

TEST(Pinning, ManyThreadsPinThemselvesAtOnce) {
  const tlc::Topology t = tlc::Topology::detect();
  tlc::PlacementRequest request;
  request.threads = t.pus();  // hyperthreads too, so every PU gets its own thread
  const tlc::Placement plan = tlc::Placement::plan(t, request);
  ASSERT_TRUE(plan.pinned);

  std::vector<std::string> seen(plan.threads.size());
  std::vector<std::string> errors(plan.threads.size());
  std::atomic<int> ready{0};
  std::vector<std::thread> pool;
  for (std::size_t i = 0; i < plan.threads.size(); ++i) {
    pool.emplace_back([&, i] {
      // Start together so the calls really overlap.
      ready.fetch_add(1);
      while (ready.load() < static_cast<int>(plan.threads.size())) std::this_thread::yield();
      try {
        tlc::pin_current_thread(t, plan.threads[i]);
        seen[i] = current_binding(t);
      } catch (const std::exception& e) {
        errors[i] = e.what();
      }
    });
  }
  for (std::thread& th : pool) th.join();
  for (std::size_t i = 0; i < plan.threads.size(); ++i) {
    EXPECT_EQ(errors[i], "") << "thread " << i;
    EXPECT_EQ(seen[i], plan.threads[i].cpuset) << "thread " << i;
  }
}

TEST(Pinning, RestrictedDetectedTopologyStillPins) {
  const tlc::Topology full = tlc::Topology::detect();
  const std::string first = tlc::detail::TopologyAccess::impl(full).cores.front().pu_sets.front();
  const tlc::Topology one = full.restricted_to(first);
  ASSERT_EQ(one.pus(), 1);
  const tlc::Placement plan = tlc::Placement::plan(one, {});
  ASSERT_EQ(plan.threads.size(), 1u);
  EXPECT_EQ(plan.threads[0].cpuset, first);
  std::string seen;
  std::thread([&] {
    try {
      tlc::pin_current_thread(one, plan.threads[0]);
      seen = current_binding(one);
    } catch (const std::exception& e) {
      seen = e.what();
    }
  }).join();
  EXPECT_EQ(seen, first);
}

}  // namespace
