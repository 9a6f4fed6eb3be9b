// Where the unit tests find tests/data: TLC_DATA_DIR (set by ctest), else next to this source.
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
