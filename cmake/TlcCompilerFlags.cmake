# Warning and sanitizer flags for tlc's own targets (never forced on consumers).
add_library(tlc_build_flags INTERFACE)
target_compile_options(tlc_build_flags INTERFACE -Wall -Wextra -Wpedantic -Wshadow
                       $<$<BOOL:${TLC_WARNINGS_AS_ERRORS}>:-Werror>)
# TLC_SANITIZER_ENVIRONMENT: what every test adds to its environment in a sanitized build, so
# that ctest in such a tree runs as CI runs it (scripts/bootstrap.sh test): every report fails
# the test, and the suppressions (tests/sanitizers/, each entry justified there) cover MPI's
# own code only.
set(TLC_SANITIZER_ENVIRONMENT "")
# tlc_sanitized_code: the instrumentation of the library's own code (src/). Every program links
# the sanitizer's runtime. AddressSanitizer and UBSan then check the library's accesses and
# every allocation, and the test and benchmark code is left uninstrumented, which keeps such a
# build within a few minutes on two cores (instrumenting the collective test sweeps more than
# doubled it). ThreadSanitizer needs every access and every synchronisation instrumented, or it
# reports races the tests' own synchronisation rules out: there everything is.
add_library(tlc_sanitized_code INTERFACE)
if(TLC_SANITIZE)
  list(JOIN TLC_SANITIZE "," _tlc_sanitizers)
  if("thread" IN_LIST TLC_SANITIZE)
    add_compile_options(-fsanitize=${_tlc_sanitizers})
  endif()
  # -g for the reports' file and line; GCC's variable tracking (where each local lives at each
  # instruction, for a debugger) more than doubles the compile time of instrumented code and no
  # report uses it.
  target_compile_options(tlc_sanitized_code INTERFACE -fsanitize=${_tlc_sanitizers}
                         -fno-omit-frame-pointer -g $<$<CXX_COMPILER_ID:GNU>:-fno-var-tracking>)
  add_link_options(-fsanitize=${_tlc_sanitizers})
  set(_tlc_supp ${PROJECT_SOURCE_DIR}/tests/sanitizers)
  # The collective sweeps without their largest size (1 MiB + 3 elements), which the plain
  # builds run: instrumented code is several times slower, and 100003 elements already cover
  # every algorithm, form and pipelined chunk at every process count (tests/mpi/
  # collective_harness.hpp). ThreadSanitizer, the slowest (most of its np 1 reduction sweep went to
  # 100003 elements), takes 40009: more than two of a mover's 256 KiB chunks of doubles
  # on its two processes, and the 4 KiB chunks of the pipelined forms as before; and 1031
  # instead of 4099 (every op of the sweep runs there): races come from the threads' paths, and
  # 1031 elements of 4 bytes and more still span several 4 KiB chunks (docs/reliability.md).
  # ThreadSanitizer also runs only the reductions' ops whose paths differ (TLC_TEST_OPS=paths:
  # built-in and user ops, commutative and not, five element sizes); the others differ by type
  # and op only, which the AddressSanitizer+UBSan and Open MPI trees check.
  if("thread" IN_LIST TLC_SANITIZE)
    list(APPEND TLC_SANITIZER_ENVIRONMENT "TLC_TEST_SIZES=0,1,2,3,7,1031,40009"
         "TLC_TEST_OPS=paths")
  else()
    list(APPEND TLC_SANITIZER_ENVIRONMENT "TLC_TEST_SIZES=0,1,2,3,7,4099,100003")
  endif()
  if("undefined" IN_LIST TLC_SANITIZE)
    list(APPEND TLC_SANITIZER_ENVIRONMENT "UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1")
  endif()
  if("address" IN_LIST TLC_SANITIZE)
    # The MPI programs keep the modules MPI loads mapped to the end (tests/sanitizers/
    # keep_modules.c says why); the sanitizer's runtime must come first among preloads.
    add_library(tlc_keep_modules SHARED ${_tlc_supp}/keep_modules.c)
    execute_process(COMMAND ${CMAKE_CXX_COMPILER} -print-file-name=libasan.so
                    OUTPUT_VARIABLE _tlc_asan_runtime OUTPUT_STRIP_TRAILING_WHITESPACE)
    list(APPEND TLC_SANITIZER_ENVIRONMENT
         "ASAN_OPTIONS=detect_leaks=1"
         "LSAN_OPTIONS=suppressions=${_tlc_supp}/lsan.supp:print_suppressions=0"
         "LD_PRELOAD=${_tlc_asan_runtime}:$<TARGET_FILE:tlc_keep_modules>")
  endif()
  if("thread" IN_LIST TLC_SANITIZE)
    # UCX (under Debian's MPICH) intercepts the memory allocator's mmap calls by patching them,
    # which ThreadSanitizer's own interception does not survive; MPICH works without it.
    list(APPEND TLC_SANITIZER_ENVIRONMENT
         "TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1:suppressions=${_tlc_supp}/tsan.supp"
         "UCX_MEM_EVENTS=no")
  endif()
endif()
list(APPEND TLC_TEST_ENVIRONMENT ${TLC_SANITIZER_ENVIRONMENT})  # after cmake/TlcMpi.cmake
