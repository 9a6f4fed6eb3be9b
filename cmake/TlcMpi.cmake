# Which MPI a build gets, and how its tests launch it.
#
# TLC_MPI=mpich|openmpi asks for one MPI by name: the build then uses mpicxx.<name> and
# mpiexec.<name> (the names Debian, Ubuntu and Fedora give them beside each other), whatever the
# plain `mpicxx` / `mpiexec` point to (on Debian, the alternatives `mpi` and `mpirun`). An
# explicit -DMPI_CXX_COMPILER / -DMPIEXEC_EXECUTABLE still wins over both. Empty (default):
# FindMPI's usual search, and then the launcher is taken from the same MPI as the library.
#
# After finding MPI, the build knows which one it got (TLC_MPI_VENDOR: mpich, openmpi or other,
# from <mpi.h>) and refuses a launcher of another MPI, since a program launched by the wrong
# mpiexec starts as N singletons instead of one job of N processes.
#
# TLC_TEST_ENVIRONMENT: what every test that runs mpiexec adds to its environment, so that the
# suite runs the same under both MPIs on a small machine, as root, in a container:
#   TLC_NODE=process TLC_PIN=0           several processes on one machine count as nodes, unpinned
#   Open MPI only:
#   OMPI_ALLOW_RUN_AS_ROOT(_CONFIRM)=1  mpirun refuses root otherwise (CI containers run as root)
#   OMPI_MCA_rmaps_base_oversubscribe=1 more processes than cores (mpiexec -n 4 on 2 cores)
#   OMPI_MCA_hwloc_base_binding_policy=none  mpirun binds each process to one core by default
#                                        (up to 2 processes), which would put all of a process's
#                                        threads on that core; hydra does not bind
# docs/mpi.md has the rest of what differs between the two.
set(TLC_MPI "" CACHE STRING "MPI to build against: '' (FindMPI's search), 'mpich' or 'openmpi'")
set_property(CACHE TLC_MPI PROPERTY STRINGS "" mpich openmpi)
if(NOT TLC_MPI MATCHES "^(|mpich|openmpi)$")
  message(FATAL_ERROR "TLC_MPI='${TLC_MPI}': expected mpich, openmpi or nothing")
endif()
# FindMPI caches what it found: switching MPI in an existing build tree would mix the two.
if(DEFINED TLC_MPI_CONFIGURED AND NOT TLC_MPI_CONFIGURED STREQUAL TLC_MPI)
  message(FATAL_ERROR "This build tree was configured with TLC_MPI='${TLC_MPI_CONFIGURED}'; "
                      "use a fresh build directory for TLC_MPI='${TLC_MPI}'")
endif()
set(TLC_MPI_CONFIGURED "${TLC_MPI}" CACHE INTERNAL "TLC_MPI of the first configure")

if(TLC_MPI)
  if(NOT MPI_CXX_COMPILER)
    find_program(TLC_MPI_CXX_WRAPPER NAMES mpicxx.${TLC_MPI} mpic++.${TLC_MPI} NO_CACHE)
    if(NOT TLC_MPI_CXX_WRAPPER)
      message(FATAL_ERROR "TLC_MPI=${TLC_MPI}: no mpicxx.${TLC_MPI} on the PATH; install "
                          "${TLC_MPI}'s development package or set MPI_CXX_COMPILER")
    endif()
    set(MPI_CXX_COMPILER "${TLC_MPI_CXX_WRAPPER}" CACHE FILEPATH "MPI C++ compiler wrapper")
  endif()
  if(NOT MPIEXEC_EXECUTABLE)
    find_program(TLC_MPI_LAUNCHER NAMES mpiexec.${TLC_MPI} NO_CACHE)
    if(TLC_MPI_LAUNCHER)
      set(MPIEXEC_EXECUTABLE "${TLC_MPI_LAUNCHER}" CACHE FILEPATH
          "Executable for running MPI programs.")
    endif()
  endif()
endif()

if(NOT DEFINED TLC_MPIEXEC_FROM_USER)
  if(DEFINED MPIEXEC_EXECUTABLE AND NOT TLC_MPI_LAUNCHER)
    set(TLC_MPIEXEC_FROM_USER ON CACHE INTERNAL "MPIEXEC_EXECUTABLE was given on the first configure")
  else()
    set(TLC_MPIEXEC_FROM_USER OFF CACHE INTERNAL "MPIEXEC_EXECUTABLE was given on the first configure")
  endif()
endif()

# tlc calls MPI's C interface only; the C++ bindings (libmpi_cxx, libmpichcxx) are not needed.
set(MPI_CXX_SKIP_MPICXX ON CACHE BOOL "Skip MPI's deprecated C++ bindings")
find_package(MPI REQUIRED COMPONENTS CXX)

# Which MPI <mpi.h> belongs to. Both define a macro of their own.
include(CheckCXXSourceCompiles)
function(tlc_mpi_header_defines macro result)
  set(CMAKE_REQUIRED_INCLUDES ${MPI_CXX_INCLUDE_DIRS})
  set(CMAKE_REQUIRED_QUIET ON)
  # Compiled, not linked: only the header is in question.
  set(CMAKE_TRY_COMPILE_TARGET_TYPE STATIC_LIBRARY)
  check_cxx_source_compiles("#include <mpi.h>
#ifndef ${macro}
#error not this MPI
#endif
int main() { return 0; }" ${result})
endfunction()
if(NOT DEFINED TLC_MPI_VENDOR)
  tlc_mpi_header_defines(OMPI_MAJOR_VERSION TLC_MPI_IS_OPENMPI)
  tlc_mpi_header_defines(MPICH_VERSION TLC_MPI_IS_MPICH)
  if(TLC_MPI_IS_OPENMPI)
    set(_vendor openmpi)
  elseif(TLC_MPI_IS_MPICH)
    set(_vendor mpich)
  else()
    set(_vendor other)
  endif()
  set(TLC_MPI_VENDOR ${_vendor} CACHE INTERNAL "Which MPI the build found: mpich, openmpi, other")
  unset(_vendor)
endif()
if(TLC_MPI AND NOT TLC_MPI STREQUAL TLC_MPI_VENDOR)
  message(FATAL_ERROR "TLC_MPI=${TLC_MPI}, but MPI_CXX_COMPILER=${MPI_CXX_COMPILER} is "
                      "${TLC_MPI_VENDOR}'s")
endif()

# The launcher. FindMPI looks for a plain `mpiexec` beside the wrapper, which on Debian is the
# `mpirun` alternative and may belong to the other MPI; mpiexec.<vendor> is unambiguous. Only when
# the user did not name one (on the first configure, before FindMPI filled the cache).
if(NOT TLC_MPIEXEC_CHOSEN AND TLC_MPI_VENDOR MATCHES "^(mpich|openmpi)$"
   AND NOT TLC_MPIEXEC_FROM_USER)
  find_program(TLC_MPIEXEC_OF_VENDOR NAMES mpiexec.${TLC_MPI_VENDOR} NO_CACHE)
  if(TLC_MPIEXEC_OF_VENDOR)
    set(MPIEXEC_EXECUTABLE "${TLC_MPIEXEC_OF_VENDOR}" CACHE FILEPATH
        "Executable for running MPI programs." FORCE)
  endif()
endif()
set(TLC_MPIEXEC_CHOSEN ON CACHE INTERNAL "the launcher was chosen on the first configure")
# A launcher of the other MPI would start every process as a singleton: refuse it.
if(MPIEXEC_EXECUTABLE AND TLC_MPI_VENDOR MATCHES "^(mpich|openmpi)$")
  execute_process(COMMAND "${MPIEXEC_EXECUTABLE}" --version OUTPUT_VARIABLE _out
                  ERROR_VARIABLE _out RESULT_VARIABLE _rc TIMEOUT 20)
  if(_out MATCHES "Open MPI|OpenRTE")
    set(_launcher openmpi)
  elseif(_out MATCHES "HYDRA|[Hh]ydra")
    set(_launcher mpich)
  else()
    set(_launcher unknown)
  endif()
  if(NOT _launcher STREQUAL "unknown" AND NOT _launcher STREQUAL TLC_MPI_VENDOR)
    message(FATAL_ERROR "MPIEXEC_EXECUTABLE=${MPIEXEC_EXECUTABLE} launches ${_launcher}, but the "
                        "library is ${TLC_MPI_VENDOR}'s (MPI_CXX_COMPILER=${MPI_CXX_COMPILER}); "
                        "set MPIEXEC_EXECUTABLE to ${TLC_MPI_VENDOR}'s (e.g. mpiexec.${TLC_MPI_VENDOR})")
  endif()
  unset(_out)
  unset(_rc)
  unset(_launcher)
endif()
message(STATUS "tlc: MPI ${TLC_MPI_VENDOR} (${MPI_CXX_COMPILER}), launcher ${MPIEXEC_EXECUTABLE}")

# TLC_LAUNCH_ENVIRONMENT: the launcher's part alone (empty under MPICH), for the tests that must
# run without TLC_NODE (examples/cg: several processes per node detected by tlc itself).
set(TLC_LAUNCH_ENVIRONMENT "")
if(TLC_MPI_VENDOR STREQUAL "openmpi")
  set(TLC_LAUNCH_ENVIRONMENT OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
      OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_MCA_hwloc_base_binding_policy=none)
endif()
set(TLC_TEST_ENVIRONMENT "TLC_NODE=process;TLC_PIN=0" ${TLC_LAUNCH_ENVIRONMENT})
