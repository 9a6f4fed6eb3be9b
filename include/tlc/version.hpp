#pragma once

#define TLC_VERSION_MAJOR 0
#define TLC_VERSION_MINOR 1
#define TLC_VERSION_PATCH 0

namespace tlc {
inline constexpr const char* version_string = "0.1.0";
}
