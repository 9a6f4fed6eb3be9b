// Where the unit tests find tests/data: TLC_DATA_DIR (set by ctest), else next to this source.
// tests/data holds hwloc XML exports of two machines for the topology and placement tests:
// dual_socket_two_rails.xml (2 packages, 2 NUMA domains, 16 cores, two OpenFabrics rails) and
// quad_numa_one_rail.xml (2 packages, 4 NUMA domains, 16 cores, one rail). They carry no comment
// of their own: hwloc's minimal XML parser, used where hwloc has no libxml2, refuses comments.
#pragma once

#include <cstdlib>
#include <filesystem>
#include <string>

namespace tlc_test {

inline std::string data_path(const std::string& name) {
  const char* dir = std::getenv("TLC_DATA_DIR");
  const std::filesystem::path base =
      (dir != nullptr && *dir != '\0')
          ? std::filesystem::path(dir)
          : std::filesystem::path(__FILE__).parent_path().parent_path() / "data";
  return (base / name).string();
}

}  // namespace tlc_test
