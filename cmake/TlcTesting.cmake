# tlc_add_unit_test(name sources...): a GoogleTest binary run as a plain ctest test. Unit tests
#   test internals (src/), so they link tlc_internal (src/CMakeLists.txt).
# tlc_add_mpi_test(name [INTERNAL] sources...): a GoogleTest binary with tlc's MPI main,
#   registered once per process count (1..TLC_TEST_MAX_PROCS) as name.np<N>, run under mpiexec
#   with TLC_NODE=process. It links tlc::tlc, the library as installed (libtlc.so in a shared
#   build), unless INTERNAL: then tlc_internal, for tests of internals from src/.
find_package(GTest REQUIRED)

set(TLC_TEST_MAX_PROCS 4 CACHE STRING "Largest mpiexec -n used by the MPI tests")
set(TLC_TEST_TIMEOUT 300 CACHE STRING "Per-test timeout in seconds")

function(tlc_add_unit_test name)
  add_executable(${name} ${ARGN})
  target_link_libraries(${name} PRIVATE tlc_internal tlc_build_flags GTest::gtest GTest::gtest_main)
  target_include_directories(${name} PRIVATE ${PROJECT_SOURCE_DIR}/tests)
  add_test(NAME ${name} COMMAND ${name})
  set_tests_properties(${name} PROPERTIES TIMEOUT ${TLC_TEST_TIMEOUT} LABELS unit
                       ENVIRONMENT "TLC_DATA_DIR=${PROJECT_SOURCE_DIR}/tests/data;${TLC_SANITIZER_ENVIRONMENT}")
endfunction()

function(tlc_add_mpi_test name)
  cmake_parse_arguments(PARSE_ARGV 1 arg "INTERNAL" "" "")
  set(library tlc::tlc)
  if(arg_INTERNAL)
    set(library tlc_internal)
  endif()
  add_executable(${name} ${arg_UNPARSED_ARGUMENTS})
  # The main before the library: with a static libtlc the linker must see the main's references
  # to tlc::Environment before the archive.
  target_link_libraries(${name} PRIVATE tlc_mpi_gtest_main ${library} tlc_build_flags)
  target_include_directories(${name} PRIVATE ${PROJECT_SOURCE_DIR}/tests)
  foreach(np RANGE 1 ${TLC_TEST_MAX_PROCS})
    add_test(NAME ${name}.np${np}
             COMMAND ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} ${np} ${MPIEXEC_PREFLAGS}
                     $<TARGET_FILE:${name}> ${MPIEXEC_POSTFLAGS})
    set_tests_properties(${name}.np${np} PROPERTIES TIMEOUT ${TLC_TEST_TIMEOUT} LABELS mpi
                         PROCESSORS ${np} ENVIRONMENT "${TLC_TEST_ENVIRONMENT}")
  endforeach()
endfunction()

# tlc_add_mpi_program_test(name target PROCESSES n... [ENVIRONMENT var=value...]): a program whose
#   exit code is the verdict (no GoogleTest), registered as name.np<N> for each process count,
#   under mpiexec with TLC_NODE=process, like tlc_add_mpi_test.
function(tlc_add_mpi_program_test name target)
  cmake_parse_arguments(arg "" "" "PROCESSES;ENVIRONMENT" ${ARGN})
  foreach(np IN LISTS arg_PROCESSES)
    add_test(NAME ${name}.np${np}
             COMMAND ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} ${np} ${MPIEXEC_PREFLAGS}
                     $<TARGET_FILE:${target}> ${MPIEXEC_POSTFLAGS})
    set_tests_properties(${name}.np${np} PROPERTIES TIMEOUT ${TLC_TEST_TIMEOUT} LABELS mpi
                         PROCESSORS ${np}
                         ENVIRONMENT "${TLC_TEST_ENVIRONMENT};${arg_ENVIRONMENT}")
  endforeach()
endfunction()
