# Dependencies, found the standard way. The installed tlcConfig.cmake re-finds those the package
# needs (MPI and Threads always; hwloc only for a static libtlc).
# MPI: which one (TLC_MPI) and how tests launch it (TLC_TEST_ENVIRONMENT).
include(TlcMpi)
find_package(PkgConfig REQUIRED)
# hwloc 2's API (I/O type filters, NUMA nodes as memory children).
pkg_check_modules(HWLOC REQUIRED IMPORTED_TARGET GLOBAL hwloc>=2.0)
find_package(Threads REQUIRED)

# oneTBB is not a dependency of the library: nothing in src/ uses it (docs/packaging.md). Only
# examples/tbb_attach needs it, so it is looked for only when that example can be built, and
# never appears in the installed package (tlc::tlc's link interface, tlcConfig.cmake, tlc.pc).
#   AUTO (default): build the TBB example if oneTBB is found;  ON: require it;  OFF: never look.
set(TLC_WITH_TBB AUTO CACHE STRING "oneTBB for the TBB example: AUTO, ON or OFF")
set_property(CACHE TLC_WITH_TBB PROPERTY STRINGS AUTO ON OFF)
set(TLC_TBB_FOUND OFF)
if(TLC_BUILD_EXAMPLES AND NOT TLC_WITH_TBB STREQUAL "OFF")
  if(TLC_WITH_TBB STREQUAL "AUTO")
    find_package(TBB QUIET)
  else()
    find_package(TBB REQUIRED)
  endif()
  if(TBB_FOUND)
    set(TLC_TBB_FOUND ON)
  endif()
endif()
