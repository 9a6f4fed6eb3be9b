# Dependencies, found the standard way. The installed tlcConfig.cmake re-finds the same ones.
find_package(MPI REQUIRED COMPONENTS CXX)
find_package(TBB REQUIRED)
find_package(PkgConfig REQUIRED)
pkg_check_modules(HWLOC REQUIRED IMPORTED_TARGET GLOBAL hwloc)
find_package(Threads REQUIRED)
