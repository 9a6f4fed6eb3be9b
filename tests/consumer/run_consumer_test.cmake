# Driver of the tlc_consumer_package test (run with cmake -P; the variables come from
# tests/consumer/CMakeLists.txt):
#   1. cmake --install <tlc build dir> --prefix <PREFIX>          (fresh prefix every run)
#   2. configure project/ with CMAKE_PREFIX_PATH=<PREFIX>, same generator and compilers
#   3. cmake --build
#   4. <mpiexec> -n 2 tlc_consumer     (TLC_NODE=process TLC_PIN=0 come from the test's environment)
#   5. the same program built with mpicxx and `pkg-config --cflags/--libs tlc` against
#      the installed tlc.pc, and run the same way
# Any failure prints "tlc_consumer_package FAILED: <step>" (the test's FAIL_REGULAR_EXPRESSION).
cmake_minimum_required(VERSION 3.25)

foreach(var TLC_BUILD_DIR PREFIX CONSUMER_SOURCE_DIR CONSUMER_BINARY_DIR GENERATOR CXX_COMPILER
            MPIEXEC_EXECUTABLE)
  if("${${var}}" STREQUAL "")
    message(FATAL_ERROR "tlc_consumer_package FAILED: ${var} is not set")
  endif()
endforeach()
if("${MPIEXEC_NUMPROC_FLAG}" STREQUAL "")
  set(MPIEXEC_NUMPROC_FLAG "-n")
endif()

function(run_step name)
  string(JOIN " " _shown ${ARGN})
  message(STATUS "[${name}] ${_shown}")
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE _rc)
  if(NOT _rc STREQUAL "0")
    message(FATAL_ERROR "tlc_consumer_package FAILED: step '${name}' exited with '${_rc}'")
  endif()
endfunction()

set(_config_args "")
if(NOT "${TLC_CONFIG}" STREQUAL "")
  set(_config_args --config "${TLC_CONFIG}")
endif()

# 1. Install into a fresh prefix, so that nothing left over from an earlier run can hide a file
#    the package forgot to install.
file(REMOVE_RECURSE "${PREFIX}" "${CONSUMER_BINARY_DIR}")
run_step(install "${CMAKE_COMMAND}" --install "${TLC_BUILD_DIR}" --prefix "${PREFIX}" ${_config_args})
if(NOT EXISTS "${PREFIX}/include/tlc/tlc.hpp")
  message(FATAL_ERROR "tlc_consumer_package FAILED: headers were not installed under ${PREFIX}/include/tlc")
endif()

# 2. Configure the consumer with the same generator, compiler, MPI, TBB and pkg-config.
set(_configure "${CMAKE_COMMAND}" -S "${CONSUMER_SOURCE_DIR}" -B "${CONSUMER_BINARY_DIR}"
    -G "${GENERATOR}"
    "-DCMAKE_PREFIX_PATH=${PREFIX}"
    "-DCMAKE_CXX_COMPILER=${CXX_COMPILER}"
    "-DMPIEXEC_EXECUTABLE=${MPIEXEC_EXECUTABLE}")
if(NOT "${GENERATOR_PLATFORM}" STREQUAL "")
  list(APPEND _configure -A "${GENERATOR_PLATFORM}")
endif()
if(NOT "${GENERATOR_TOOLSET}" STREQUAL "")
  list(APPEND _configure -T "${GENERATOR_TOOLSET}")
endif()
if(NOT "${MAKE_PROGRAM}" STREQUAL "")
  list(APPEND _configure "-DCMAKE_MAKE_PROGRAM=${MAKE_PROGRAM}")
endif()
if(NOT "${TLC_CONFIG}" STREQUAL "")
  list(APPEND _configure "-DCMAKE_BUILD_TYPE=${TLC_CONFIG}")
endif()
if(NOT "${CXX_FLAGS}" STREQUAL "")
  list(APPEND _configure "-DCMAKE_CXX_FLAGS=${CXX_FLAGS}")
endif()
foreach(var MPI_CXX_COMPILER TBB_DIR PKG_CONFIG_EXECUTABLE)
  if(NOT "${${var}}" STREQUAL "" AND NOT "${${var}}" MATCHES "-NOTFOUND$")
    list(APPEND _configure "-D${var}=${${var}}")
  endif()
endforeach()
run_step(configure ${_configure})

# 3. Build.
run_step(build "${CMAKE_COMMAND}" --build "${CONSUMER_BINARY_DIR}" ${_config_args})

# 4. Run on two processes. Where the executable lands depends on the generator (multi-config
#    generators add a per-configuration directory); the consumer project writes its path to
#    consumer-executable-<config>.txt with file(GENERATE).
set(_where "${CONSUMER_BINARY_DIR}/consumer-executable-${TLC_CONFIG}.txt")
if(NOT EXISTS "${_where}")
  message(FATAL_ERROR "tlc_consumer_package FAILED: ${_where} is missing")
endif()
file(READ "${_where}" _exe)
string(STRIP "${_exe}" _exe)
if(NOT EXISTS "${_exe}")
  message(FATAL_ERROR "tlc_consumer_package FAILED: consumer executable ${_exe} was not built")
endif()
# MPIEXEC_PREFLAGS / MPIEXEC_POSTFLAGS are lists, expanded unquoted as add_test does.
run_step(run "${MPIEXEC_EXECUTABLE}" ${MPIEXEC_NUMPROC_FLAG} 2 ${MPIEXEC_PREFLAGS} "${_exe}"
         ${MPIEXEC_POSTFLAGS})

# 5. The same program built with pkg-config and the MPI wrapper instead of CMake, and run.
if(NOT "${PKG_CONFIG_EXECUTABLE}" STREQUAL "" AND NOT "${MPI_CXX_COMPILER}" STREQUAL "")
  file(GLOB _pc_files "${PREFIX}/*/pkgconfig/tlc.pc" "${PREFIX}/*/*/pkgconfig/tlc.pc")
  list(LENGTH _pc_files _pc_count)
  if(NOT _pc_count EQUAL 1)
    message(FATAL_ERROR "tlc_consumer_package FAILED: expected one installed tlc.pc, found '${_pc_files}'")
  endif()
  get_filename_component(_pc_dir "${_pc_files}" DIRECTORY)
  set(ENV{PKG_CONFIG_PATH} "${_pc_dir}")
  execute_process(COMMAND "${PKG_CONFIG_EXECUTABLE}" --cflags tlc OUTPUT_VARIABLE _pc_cflags
                  RESULT_VARIABLE _rc OUTPUT_STRIP_TRAILING_WHITESPACE)
  execute_process(COMMAND "${PKG_CONFIG_EXECUTABLE}" --libs tlc OUTPUT_VARIABLE _pc_libs
                  RESULT_VARIABLE _rc2 OUTPUT_STRIP_TRAILING_WHITESPACE)
  if(NOT _rc STREQUAL "0" OR NOT _rc2 STREQUAL "0")
    message(FATAL_ERROR "tlc_consumer_package FAILED: pkg-config cannot read tlc.pc")
  endif()
  separate_arguments(_pc_cflags UNIX_COMMAND "${_pc_cflags}")
  separate_arguments(_pc_libs UNIX_COMMAND "${_pc_libs}")
  separate_arguments(_extra UNIX_COMMAND "${CXX_FLAGS}")
  set(_pc_exe "${CONSUMER_BINARY_DIR}/tlc_consumer_pkgconfig")
  run_step(pkgconfig-build "${MPI_CXX_COMPILER}" -std=c++20 ${_extra} ${_pc_cflags}
           "${CONSUMER_SOURCE_DIR}/main.cpp" -o "${_pc_exe}" ${_pc_libs})
  run_step(pkgconfig-run "${MPIEXEC_EXECUTABLE}" ${MPIEXEC_NUMPROC_FLAG} 2 ${MPIEXEC_PREFLAGS}
           "${_pc_exe}" ${MPIEXEC_POSTFLAGS})
endif()
message(STATUS "tlc_consumer_package: all steps succeeded")
