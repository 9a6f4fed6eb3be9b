# Installation and the exported CMake package.
#
#   <prefix>/include/tlc/*.hpp, tlc.h          public headers (C++ and the C interface;
#                                              tlc/version.hpp generated)
#   <prefix>/include/tlc.mod                   the Fortran module (TLC_FORTRAN), with
#   <prefix>/lib/libtlc_fortran.a              its library (exported as tlc::tlc_fortran)
#   <prefix>/lib/libtlc.a                      the library (exported as tlc::tlc), or with
#   <prefix>/lib/libtlc.so.<version>             -DBUILD_SHARED_LIBS=ON the shared library, its
#   <prefix>/lib/libtlc.so.<major>, libtlc.so    SONAME link and the development link
#   <prefix>/bin/tlc-info                      machine / team report tool
#   <prefix>/bin/tlc-calibrate                 fits the cost model to the machine (a tuning file)
#   <prefix>/lib/cmake/tlc/tlcConfig.cmake     find_package(tlc) entry point; re-finds the
#   <prefix>/lib/cmake/tlc/tlcConfigVersion.cmake   dependencies (MPI, Threads; hwloc if static)
#   <prefix>/lib/cmake/tlc/tlcTargets*.cmake
#   <prefix>/lib/pkgconfig/tlc.pc              for pkg-config (relocatable: paths from the file's
#                                              own place); MPI comes from the wrapper (mpicxx,
#                                              mpicc); `mpi` names the MPI tlc was built with
#   <prefix>/lib/pkgconfig/tlc-fortran.pc      the same for the Fortran module (TLC_FORTRAN)
#   <prefix>/share/doc/tlc/                    LICENSE, CHANGELOG.md
#
# A consumer writes find_package(tlc REQUIRED) and links tlc::tlc. A static libtlc's PRIVATE
# dependency (PkgConfig::HWLOC) appears in the exported link interface as $<LINK_ONLY:...>, so the
# config file has to find it again; a shared libtlc carries it in its own DT_NEEDED. oneTBB is no
# dependency of the library (docs/packaging.md). tlc_build_flags is linked by the objects only and
# therefore never exported.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(TLC_INSTALL_CMAKEDIR "${CMAKE_INSTALL_LIBDIR}/cmake/tlc"
    CACHE STRING "Where tlcConfig.cmake is installed, relative to the install prefix")
mark_as_advanced(TLC_INSTALL_CMAKEDIR)

# The public headers need C++20 (concepts, std::span); the exported target must say so, or a
# consumer compiling with the compiler's default standard fails inside tlc's headers. Added here
# only if the library target does not already carry it.
get_target_property(_tlc_features tlc INTERFACE_COMPILE_FEATURES)
if(NOT _tlc_features OR NOT "cxx_std_20" IN_LIST _tlc_features)
  target_compile_features(tlc PUBLIC cxx_std_20)
endif()
unset(_tlc_features)

install(DIRECTORY "${PROJECT_SOURCE_DIR}/include/tlc"
        DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}"
        COMPONENT tlc_development
        FILES_MATCHING PATTERN "*.hpp" PATTERN "*.h")
install(FILES "${PROJECT_BINARY_DIR}/include/tlc/version.hpp"
        DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}/tlc"
        COMPONENT tlc_development)

install(TARGETS tlc
        EXPORT tlcTargets
        ARCHIVE DESTINATION "${CMAKE_INSTALL_LIBDIR}" COMPONENT tlc_development
        LIBRARY DESTINATION "${CMAKE_INSTALL_LIBDIR}" COMPONENT tlc_runtime
                NAMELINK_COMPONENT tlc_development
        RUNTIME DESTINATION "${CMAKE_INSTALL_BINDIR}" COMPONENT tlc_runtime)

# The Fortran module: its own export file, which tlcConfig.cmake includes when present, so that
# the C++ package does not change for consumers without Fortran. The .mod file goes next to the
# headers (-I<prefix>/include finds both); it is specific to the compiler that built it.
if(TARGET tlc_fortran)
  install(TARGETS tlc_fortran
          EXPORT tlcFortranTargets
          ARCHIVE DESTINATION "${CMAKE_INSTALL_LIBDIR}" COMPONENT tlc_development
          LIBRARY DESTINATION "${CMAKE_INSTALL_LIBDIR}" COMPONENT tlc_runtime)
  get_target_property(_tlc_module_dir tlc_fortran Fortran_MODULE_DIRECTORY)
  install(FILES "${_tlc_module_dir}/tlc.mod"
          DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}"
          COMPONENT tlc_development)
  unset(_tlc_module_dir)
  install(EXPORT tlcFortranTargets
          NAMESPACE tlc::
          FILE tlcFortranTargets.cmake
          DESTINATION "${TLC_INSTALL_CMAKEDIR}"
          COMPONENT tlc_development)
endif()

if(TARGET tlc-info)
  install(TARGETS tlc-info tlc-calibrate RUNTIME DESTINATION "${CMAKE_INSTALL_BINDIR}"
          COMPONENT tlc_runtime)
endif()

install(EXPORT tlcTargets
        NAMESPACE tlc::
        FILE tlcTargets.cmake
        DESTINATION "${TLC_INSTALL_CMAKEDIR}"
        COMPONENT tlc_development)

# Whether the installed library is static decides whether the config must provide the
# PRIVATE link dependencies (see tlcConfig.cmake.in).
get_target_property(_tlc_type tlc TYPE)
if(_tlc_type STREQUAL "STATIC_LIBRARY")
  set(TLC_INSTALLED_STATIC ON)
else()
  set(TLC_INSTALLED_STATIC OFF)
endif()
unset(_tlc_type)

# pkg-config: the prefix is found from the .pc file's own directory, so the file stays right
# under `cmake --install --prefix` anywhere. MPI comes from the compiler wrapper (mpicxx), as MPI
# has no pkg-config module everywhere.
#   shared: libtlc.so records hwloc in its own DT_NEEDED, so `pkg-config --libs tlc` is -ltlc
#           alone, and hwloc is a private requirement (no tlc header includes hwloc's).
#   static: every link of libtlc.a needs -lhwloc, so hwloc is a public requirement and plain
#           `pkg-config --libs tlc` links. A private requirement would need `pkg-config --static`,
#           which also pulls in hwloc's own private libraries (Debian's hwloc.pc: -ludev, whose
#           libudev.so exists only with libudev-dev), which a libtlc.a over a shared libhwloc
#           does not need.
file(RELATIVE_PATH TLC_PC_TO_PREFIX "/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/")
string(REGEX REPLACE "/$" "" TLC_PC_TO_PREFIX "${TLC_PC_TO_PREFIX}")
if(TLC_INSTALLED_STATIC)
  set(TLC_PC_REQUIRES "Requires: hwloc >= 2.0")
else()
  set(TLC_PC_REQUIRES "Requires.private: hwloc >= 2.0")
endif()
# A static libtlc is C++: a program linked by the C or Fortran wrapper (mpicc, mpif90) needs the
# C++ runtime and what it needs (libstdc++ and libm with GCC), which the C++ wrapper adds by
# itself. They are what the C++ compiler links beyond the C compiler, and go into Libs (not
# Libs.private) for the same reason hwloc is a public requirement: plain --libs must link. A
# shared libtlc records them in its own DT_NEEDED.
set(TLC_PC_CXX_RUNTIME "")
if(TLC_INSTALLED_STATIC)
  set(_tlc_runtime ${CMAKE_CXX_IMPLICIT_LINK_LIBRARIES})
  if(_tlc_runtime)
    list(REMOVE_ITEM _tlc_runtime ${CMAKE_C_IMPLICIT_LINK_LIBRARIES})
  endif()
  foreach(_lib IN LISTS _tlc_runtime)
    string(APPEND TLC_PC_CXX_RUNTIME " -l${_lib}")
  endforeach()
  unset(_tlc_runtime)
  unset(_lib)
endif()
# The licence's SPDX identifier (LICENSE), also in the Spack recipe.
set(TLC_LICENSE "BSD-3-Clause")
configure_file("${PROJECT_SOURCE_DIR}/cmake/tlc.pc.in" "${PROJECT_BINARY_DIR}/tlc.pc" @ONLY)
set(_tlc_pc_files "${PROJECT_BINARY_DIR}/tlc.pc")
# The Fortran module's own module, tlc-fortran, which requires tlc (it adds -ltlc_fortran ahead).
if(TARGET tlc_fortran)
  configure_file("${PROJECT_SOURCE_DIR}/cmake/tlc-fortran.pc.in"
                 "${PROJECT_BINARY_DIR}/tlc-fortran.pc" @ONLY)
  list(APPEND _tlc_pc_files "${PROJECT_BINARY_DIR}/tlc-fortran.pc")
endif()
install(FILES ${_tlc_pc_files}
        DESTINATION "${CMAKE_INSTALL_LIBDIR}/pkgconfig"
        COMPONENT tlc_development)
unset(_tlc_pc_files)
install(FILES "${PROJECT_SOURCE_DIR}/LICENSE" "${PROJECT_SOURCE_DIR}/CHANGELOG.md"
        DESTINATION "${CMAKE_INSTALL_DATADIR}/doc/tlc"
        COMPONENT tlc_development)

configure_package_config_file(
  "${PROJECT_SOURCE_DIR}/cmake/tlcConfig.cmake.in"
  "${PROJECT_BINARY_DIR}/tlcConfig.cmake"
  INSTALL_DESTINATION "${TLC_INSTALL_CMAKEDIR}")
write_basic_package_version_file(
  "${PROJECT_BINARY_DIR}/tlcConfigVersion.cmake"
  VERSION "${PROJECT_VERSION}"
  COMPATIBILITY SameMajorVersion)
install(FILES "${PROJECT_BINARY_DIR}/tlcConfig.cmake" "${PROJECT_BINARY_DIR}/tlcConfigVersion.cmake"
        DESTINATION "${TLC_INSTALL_CMAKEDIR}"
        COMPONENT tlc_development)
