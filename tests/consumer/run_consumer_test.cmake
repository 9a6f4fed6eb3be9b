# Driver of the tlc_consumer_package.<kind> tests (run with cmake -P; the variables come from
# tests/consumer/CMakeLists.txt). KIND is static or shared:
#   0. with SUBBUILD_DIR set: configure and build tlc's sources there as a KIND library, the
#      library and tlc-info only (the test of the other kind than the build tree's own)
#   1. cmake --install <tlc build dir> --prefix <PREFIX>          (fresh prefix every run)
#   2. check what was installed: libtlc.a, or libtlc.so.<version> with its SONAME link and only
#      the public interface exported (check_exports.cmake)
#   3. configure project/ with CMAKE_PREFIX_PATH=<PREFIX>, same generator and compilers; build
#   4. <mpiexec> -n 2 tlc_consumer     (TLC_NODE=process TLC_PIN=0 come from the test's environment)
#   5. the same program built by project/Makefile (mpicxx and `pkg-config --cflags --libs tlc`
#      against the installed tlc.pc), and run the same way
#   6. the C-only (project_c/) and Fortran-only (project_fortran/, when the package has the
#      module) programs, each by CMake and by its Makefile (mpicc / mpif90 and pkg-config), each
#      run on one and two processes
#   7. when the other MPI's mpicc is installed: find_package(tlc) and the pkg-config link with it
#      must fail, naming the problem
# Any failure prints "tlc_consumer_package FAILED: <step>" (the test's FAIL_REGULAR_EXPRESSION).
cmake_minimum_required(VERSION 3.25)

foreach(var KIND TLC_VERSION TLC_BUILD_DIR PREFIX CONSUMER_SOURCE_DIR CONSUMER_BINARY_DIR
            GENERATOR CXX_COMPILER C_COMPILER MPIEXEC_EXECUTABLE MPI_CXX_COMPILER
            PKG_CONFIG_EXECUTABLE MAKE_EXECUTABLE)
  if("${${var}}" STREQUAL "" OR "${${var}}" MATCHES "-NOTFOUND$")
    message(FATAL_ERROR "tlc_consumer_package FAILED: ${var} is not set or not found")
  endif()
endforeach()
if("${MPIEXEC_NUMPROC_FLAG}" STREQUAL "")
  set(MPIEXEC_NUMPROC_FLAG "-n")
endif()

function(fail why)
  message(FATAL_ERROR "tlc_consumer_package FAILED: ${why}")
endfunction()

function(run_step name)
  string(JOIN " " _shown ${ARGN})
  message(STATUS "[${KIND} ${name}] ${_shown}")
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE _rc)
  if(NOT _rc STREQUAL "0")
    fail("${KIND}: step '${name}' exited with '${_rc}'")
  endif()
endfunction()

set(_config_args "")
if(NOT "${TLC_CONFIG}" STREQUAL "")
  set(_config_args --config "${TLC_CONFIG}")
endif()

# Same generator (and platform, toolset, make program) as the build tree, for both configures.
set(_generator_args -G "${GENERATOR}" "-DCMAKE_CXX_COMPILER=${CXX_COMPILER}")
if(NOT "${GENERATOR_PLATFORM}" STREQUAL "")
  list(APPEND _generator_args -A "${GENERATOR_PLATFORM}")
endif()
if(NOT "${GENERATOR_TOOLSET}" STREQUAL "")
  list(APPEND _generator_args -T "${GENERATOR_TOOLSET}")
endif()
if(NOT "${MAKE_PROGRAM}" STREQUAL "")
  list(APPEND _generator_args "-DCMAKE_MAKE_PROGRAM=${MAKE_PROGRAM}")
endif()
if(NOT "${TLC_CONFIG}" STREQUAL "")
  list(APPEND _generator_args "-DCMAKE_BUILD_TYPE=${TLC_CONFIG}")
endif()

# 0. The library of the other kind, from the same sources, with the same compiler, MPI and
#    pkg-config. Not optimised (CMAKE_CXX_FLAGS_<CONFIG>=-O0): this checks packaging, not speed,
#    and it compiles the library's sources about twice as fast. The directory is kept between
#    runs, so later runs rebuild only what changed.
if(NOT "${SUBBUILD_DIR}" STREQUAL "")
  if(NOT "${TLC_CONFIG}" STREQUAL "")
    string(TOUPPER "${TLC_CONFIG}" _config_upper)
    set(_no_optimisation "-DCMAKE_CXX_FLAGS_${_config_upper}=-O0")
  else()
    set(_no_optimisation "-DCMAKE_CXX_FLAGS_RELEASE=-O0")
  endif()
  if(KIND STREQUAL "shared")
    set(_shared ON)
  else()
    set(_shared OFF)
  endif()
  run_step(library-configure "${CMAKE_COMMAND}" -S "${TLC_SOURCE_DIR}" -B "${SUBBUILD_DIR}"
           ${_generator_args} "${_no_optimisation}" "-DBUILD_SHARED_LIBS=${_shared}"
           -DTLC_BUILD_TESTS=OFF -DTLC_BUILD_EXAMPLES=OFF -DTLC_BUILD_BENCH=OFF
           "-DTLC_SANITIZE=${TLC_SANITIZE}" "-DMPI_CXX_COMPILER=${MPI_CXX_COMPILER}"
           "-DMPIEXEC_EXECUTABLE=${MPIEXEC_EXECUTABLE}"
           "-DPKG_CONFIG_EXECUTABLE=${PKG_CONFIG_EXECUTABLE}")
  run_step(library-build "${CMAKE_COMMAND}" --build "${SUBBUILD_DIR}" ${_config_args} -j 2)
  set(TLC_BUILD_DIR "${SUBBUILD_DIR}")
endif()

# 1. Install into a fresh prefix, so that nothing left over from an earlier run can hide a file
#    the package forgot to install.
file(REMOVE_RECURSE "${PREFIX}" "${CONSUMER_BINARY_DIR}")
run_step(install "${CMAKE_COMMAND}" --install "${TLC_BUILD_DIR}" --prefix "${PREFIX}" ${_config_args})

# 2. What a package of this kind must hold, and must not.
foreach(header tlc.hpp version.hpp detail/export.hpp)
  if(NOT EXISTS "${PREFIX}/include/tlc/${header}")
    fail("${KIND}: include/tlc/${header} was not installed under ${PREFIX}")
  endif()
endforeach()
file(GLOB_RECURSE _archives "${PREFIX}/*/libtlc.a")
file(GLOB_RECURSE _shared_objects "${PREFIX}/*libtlc.so*")
string(REGEX MATCH "^[0-9]+" _major "${TLC_VERSION}")
if(KIND STREQUAL "static")
  if(NOT _archives OR _shared_objects)
    fail("static: expected libtlc.a and no libtlc.so, installed: '${_archives}' '${_shared_objects}'")
  endif()
else()
  # The real file, the SONAME link and the development link, nothing else: in particular not
  # the internal archive that tlc's own tools link.
  set(_expected libtlc.so libtlc.so.${_major} libtlc.so.${TLC_VERSION})
  set(_names "")
  foreach(f IN LISTS _shared_objects)
    get_filename_component(_name "${f}" NAME)
    list(APPEND _names "${_name}")
  endforeach()
  list(SORT _names)
  list(SORT _expected)
  if(_archives OR NOT _names STREQUAL _expected)
    fail("shared: expected ${_expected} and no archive, installed: '${_names}' '${_archives}'")
  endif()
  # Only the public interface is exported (check_exports.cmake).
  list(FILTER _shared_objects INCLUDE REGEX "libtlc\\.so\\.${TLC_VERSION}$")
  include("${CMAKE_CURRENT_LIST_DIR}/check_exports.cmake")
  check_exports("${_shared_objects}")
endif()

# 3. Configure and build the consumer with the same generator, compiler, MPI and pkg-config.
set(_configure "${CMAKE_COMMAND}" -S "${CONSUMER_SOURCE_DIR}" -B "${CONSUMER_BINARY_DIR}"
    ${_generator_args}
    "-DCMAKE_PREFIX_PATH=${PREFIX}"
    "-DMPIEXEC_EXECUTABLE=${MPIEXEC_EXECUTABLE}"
    "-DMPI_CXX_COMPILER=${MPI_CXX_COMPILER}"
    "-DPKG_CONFIG_EXECUTABLE=${PKG_CONFIG_EXECUTABLE}")
if(NOT "${CXX_FLAGS}" STREQUAL "")
  list(APPEND _configure "-DCMAKE_CXX_FLAGS=${CXX_FLAGS}")
endif()
run_step(configure ${_configure})
run_step(build "${CMAKE_COMMAND}" --build "${CONSUMER_BINARY_DIR}" ${_config_args})

# Where the executable lands depends on the generator (multi-config generators add a
# per-configuration directory); the consumer project writes its path with file(GENERATE).
set(_where "${CONSUMER_BINARY_DIR}/consumer-executable-${TLC_CONFIG}.txt")
if(NOT EXISTS "${_where}")
  fail("${KIND}: ${_where} is missing")
endif()
file(READ "${_where}" _exe)
string(STRIP "${_exe}" _exe)
if(NOT EXISTS "${_exe}")
  fail("${KIND}: consumer executable ${_exe} was not built")
endif()

# A program linked against the shared package loads libtlc.so.<major> (its SONAME; a Fortran
# program libtlc_fortran.so.<major>), and one linked against the static package does not load
# libtlc at all.
function(check_linkage exe)
  if("${OBJDUMP}" STREQUAL "" OR "${OBJDUMP}" MATCHES "-NOTFOUND$")
    return()
  endif()
  execute_process(COMMAND "${OBJDUMP}" -p "${exe}" OUTPUT_VARIABLE _headers RESULT_VARIABLE _rc)
  if(NOT _rc STREQUAL "0")
    fail("${KIND}: objdump -p ${exe} exited with '${_rc}'")
  endif()
  # libtlc, or for a Fortran program libtlc_fortran (which needs libtlc itself), by SONAME.
  string(REGEX MATCHALL "NEEDED +libtlc[^\n]*" _needed "${_headers}")
  if(KIND STREQUAL "shared" AND NOT _needed MATCHES "NEEDED +libtlc(_fortran)?\\.so\\.${_major}$")
    fail("shared: ${exe} does not need libtlc.so.${_major} (its libtlc entries: '${_needed}')")
  elseif(KIND STREQUAL "static" AND _needed)
    fail("static: ${exe} needs a shared libtlc: '${_needed}'")
  endif()
endfunction()
check_linkage("${_exe}")

# 4. Run on two processes. MPIEXEC_PREFLAGS / MPIEXEC_POSTFLAGS are lists, expanded unquoted as
#    add_test does.
run_step(run "${MPIEXEC_EXECUTABLE}" ${MPIEXEC_NUMPROC_FLAG} 2 ${MPIEXEC_PREFLAGS} "${_exe}"
         ${MPIEXEC_POSTFLAGS})

# 5. The same program built by a plain Makefile with the MPI wrapper and pkg-config, and run.
file(GLOB _pc_files "${PREFIX}/*/pkgconfig/tlc.pc" "${PREFIX}/*/*/pkgconfig/tlc.pc")
list(LENGTH _pc_files _pc_count)
if(NOT _pc_count EQUAL 1)
  fail("${KIND}: expected one installed tlc.pc, found '${_pc_files}'")
endif()
# A static libtlc needs hwloc on every link (a public requirement), a shared one carries it
# (private); oneTBB is no requirement of either (cmake/TlcInstall.cmake).
file(READ "${_pc_files}" _pc)
if(KIND STREQUAL "static")
  set(_requires "\nRequires: hwloc >= 2.0\n")
else()
  set(_requires "\nRequires.private: hwloc >= 2.0\n")
endif()
string(FIND "${_pc}" "${_requires}" _at)
if(_at EQUAL -1 OR _pc MATCHES "tbb")
  fail("${KIND}: tlc.pc should hold '${_requires}' and nothing of tbb:\n${_pc}")
endif()
get_filename_component(_pc_dir "${_pc_files}" DIRECTORY)
set(ENV{PKG_CONFIG_PATH} "${_pc_dir}")
execute_process(COMMAND "${PKG_CONFIG_EXECUTABLE}" --modversion tlc OUTPUT_VARIABLE _pc_version
                RESULT_VARIABLE _rc OUTPUT_STRIP_TRAILING_WHITESPACE)
if(NOT _rc STREQUAL "0" OR NOT _pc_version STREQUAL TLC_VERSION)
  fail("${KIND}: pkg-config --modversion tlc gave '${_pc_version}' (exit ${_rc}), expected ${TLC_VERSION}")
endif()
set(_make_dir "${CONSUMER_BINARY_DIR}/make")
file(MAKE_DIRECTORY "${_make_dir}")
run_step(pkgconfig-make "${MAKE_EXECUTABLE}" -C "${CONSUMER_SOURCE_DIR}" "O=${_make_dir}"
         "MPICXX=${MPI_CXX_COMPILER}" "PKG_CONFIG=${PKG_CONFIG_EXECUTABLE}" "CXXFLAGS=${CXX_FLAGS}")
set(_pc_exe "${_make_dir}/tlc_consumer_pkgconfig")
check_linkage("${_pc_exe}")
run_step(pkgconfig-run "${MPIEXEC_EXECUTABLE}" ${MPIEXEC_NUMPROC_FLAG} 2 ${MPIEXEC_PREFLAGS}
         "${_pc_exe}" ${MPIEXEC_POSTFLAGS})

# 6. The C-only and the Fortran-only projects (project_c/, project_fortran/), each built as a
#    CMake project (find_package(tlc) in a project without C++) and by a plain Makefile with the
#    C or Fortran MPI wrapper and pkg-config (tlc, tlc-fortran), and each run on one and two
#    processes.
function(run_program name exe)
  foreach(np 1 2)
    run_step(${name}-np${np} "${MPIEXEC_EXECUTABLE}" ${MPIEXEC_NUMPROC_FLAG} ${np}
             ${MPIEXEC_PREFLAGS} "${exe}" ${MPIEXEC_POSTFLAGS})
  endforeach()
endfunction()
# What the tlc.pc of this build must say beyond the requirement checked above: its MPI and
# licence.
execute_process(COMMAND "${PKG_CONFIG_EXECUTABLE}" --variable=mpi tlc OUTPUT_VARIABLE _pc_mpi
                OUTPUT_STRIP_TRAILING_WHITESPACE)
if(NOT "${MPI_VENDOR}" STREQUAL "" AND NOT _pc_mpi STREQUAL MPI_VENDOR)
  fail("${KIND}: pkg-config --variable=mpi tlc gave '${_pc_mpi}', expected '${MPI_VENDOR}'")
endif()
set(_languages C)
if(EXISTS "${_pc_dir}/tlc-fortran.pc")
  list(APPEND _languages Fortran)
endif()
foreach(lang IN LISTS _languages)
  string(TOLOWER "${lang}" _lower)
  set(_wrapper "${MPI_${lang}_WRAPPER}")
  if("${_wrapper}" STREQUAL "" OR "${_wrapper}" MATCHES "-NOTFOUND$")
    fail("${KIND}: no MPI ${lang} wrapper for the ${_lower} consumer")
  endif()
  set(_dir "${CONSUMER_BINARY_DIR}/${_lower}")
  set(_flags "-DCMAKE_${lang}_FLAGS=${CXX_FLAGS}" "-DCMAKE_CXX_FLAGS=${CXX_FLAGS}")
  run_step(${_lower}-configure "${CMAKE_COMMAND}" -S "${CONSUMER_SOURCE_DIR}_${_lower}" -B "${_dir}"
           ${_generator_args} "-DCMAKE_${lang}_COMPILER=${${lang}_COMPILER}"
           "-DCMAKE_PREFIX_PATH=${PREFIX}" "-DMPI_${lang}_COMPILER=${_wrapper}"
           "-DMPIEXEC_EXECUTABLE=${MPIEXEC_EXECUTABLE}"
           "-DPKG_CONFIG_EXECUTABLE=${PKG_CONFIG_EXECUTABLE}" ${_flags})
  run_step(${_lower}-build "${CMAKE_COMMAND}" --build "${_dir}" ${_config_args})
  file(READ "${_dir}/consumer-executable-${TLC_CONFIG}.txt" _exe)
  string(STRIP "${_exe}" _exe)
  check_linkage("${_exe}")
  run_program(${_lower}-run "${_exe}")
  if(lang STREQUAL "C")
    set(_make_vars "MPICC=${_wrapper}" "CFLAGS=${CXX_FLAGS}")
  else()
    set(_make_vars "MPIFC=${_wrapper}" "FFLAGS=${CXX_FLAGS}")
  endif()
  run_step(${_lower}-pkgconfig-make "${MAKE_EXECUTABLE}" -C "${CONSUMER_SOURCE_DIR}_${_lower}"
           "O=${_make_dir}" "PKG_CONFIG=${PKG_CONFIG_EXECUTABLE}" ${_make_vars})
  set(_pc_exe "${_make_dir}/tlc_consumer_${_lower}_pkgconfig")
  check_linkage("${_pc_exe}")
  run_program(${_lower}-pkgconfig-run "${_pc_exe}")
endforeach()

# 7. The other MPI's C wrapper, when installed, must be refused: by find_package(tlc) at
#    configure time and by the linker for the pkg-config build, each with a message naming the
#    problem (include/tlc/detail/mpi_check.h, tlcConfig.cmake).
if(NOT "${OTHER_MPI_VENDOR}" STREQUAL "" AND EXISTS "${OTHER_MPI_C_WRAPPER}")
  set(_dir "${CONSUMER_BINARY_DIR}/c-other-mpi")
  execute_process(COMMAND "${CMAKE_COMMAND}" -S "${CONSUMER_SOURCE_DIR}_c" -B "${_dir}"
                          ${_generator_args} "-DCMAKE_C_COMPILER=${C_COMPILER}"
                          "-DCMAKE_PREFIX_PATH=${PREFIX}"
                          "-DMPI_C_COMPILER=${OTHER_MPI_C_WRAPPER}"
                          "-DPKG_CONFIG_EXECUTABLE=${PKG_CONFIG_EXECUTABLE}"
                  RESULT_VARIABLE _rc OUTPUT_VARIABLE _out ERROR_VARIABLE _out)
  string(REGEX REPLACE "[ \n]+" " " _out "${_out}")
  if(_rc STREQUAL "0" OR NOT _out MATCHES "tlc was built with ${MPI_VENDOR}, but this project's C MPI")
    fail("${KIND}: find_package(tlc) with ${OTHER_MPI_C_WRAPPER} should fail naming both MPIs (exit ${_rc}): ${_out}")
  endif()
  message(STATUS "[${KIND} other-mpi-cmake] refused as expected")
  set(_other_dir "${_make_dir}/other-mpi")
  file(MAKE_DIRECTORY "${_other_dir}")
  execute_process(COMMAND "${MAKE_EXECUTABLE}" -C "${CONSUMER_SOURCE_DIR}_c" "O=${_other_dir}"
                          "MPICC=${OTHER_MPI_C_WRAPPER}" "PKG_CONFIG=${PKG_CONFIG_EXECUTABLE}"
                          "CFLAGS=${CXX_FLAGS}"
                  RESULT_VARIABLE _rc OUTPUT_VARIABLE _out ERROR_VARIABLE _out)
  if(_rc STREQUAL "0" OR NOT _out MATCHES "undefined reference to .tlc_built_with_${OTHER_MPI_VENDOR}")
    fail("${KIND}: linking with ${OTHER_MPI_C_WRAPPER} should fail on tlc_built_with_${OTHER_MPI_VENDOR} (exit ${_rc}): ${_out}")
  endif()
  message(STATUS "[${KIND} other-mpi-pkgconfig] refused as expected")
endif()
message(STATUS "tlc_consumer_package.${KIND}: all steps succeeded")
