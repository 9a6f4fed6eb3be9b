#!/usr/bin/env bash
# The project's one set-up entry point (see README.md):
#
#   bash scripts/bootstrap.sh bench [tlc-bench options...]   install, build, run the main benchmark
#   bash scripts/bootstrap.sh test                           install, build, run the whole test suite
#
# Steps: (1) install the Debian packages that are missing (nothing is fetched when all are
# present), (2) configure and build (incremental; fast when nothing changed), (3) run.
# `test` builds and tests three trees: against MPICH with AddressSanitizer and UBSan
# (build-asan/, the whole suite at one to three processes), against Open MPI (build-openmpi/,
# the whole suite, optimised as users build it, libtlc shared, with the benchmark's and
# examples' tests) and against MPICH with ThreadSanitizer (build-tsan/, one and two processes). `bench` builds MPICH optimised (build/).
# Each build names its MPI explicitly (-DTLC_MPI=mpich|openmpi), so the Debian alternatives for
# mpicxx / mpiexec never decide which MPI a build gets.
# Environment: TLC_BUILD_DIR  the bench's build directory (default: build, relative to the
#              repository root); TLC_BUILD_DIR_OPENMPI, TLC_BUILD_DIR_ASAN, TLC_BUILD_DIR_TSAN
#              the test trees (default: build-openmpi, build-asan, build-tsan).
# Exits non-zero on any failure.
set -euo pipefail

usage() {
  cat >&2 <<'USAGE'
usage: bash scripts/bootstrap.sh bench [tlc-bench options...]
       bash scripts/bootstrap.sh test
  bench  install missing packages, build, run tlc-bench's main job: one process's team of one
         thread per core against MPI everywhere, master-only and the memory bound, every
         collective, 8 B .. 64 MiB; summary on stdout, table, CSV, JSON and PNG in bench-results/
  test   install missing packages, build and run the whole test suite with ctest against MPICH
         under AddressSanitizer+UBSan and against Open MPI, and its one- and two-process tests
         against MPICH under ThreadSanitizer
  bench uses MPICH. TLC_BUILD_DIR chooses its build directory (default: build);
  TLC_BUILD_DIR_OPENMPI, TLC_BUILD_DIR_ASAN, TLC_BUILD_DIR_TSAN the test trees (default:
  build-openmpi, build-asan, build-tsan); TLC_BENCH_PROCESSES the team's threads and MPI
  everywhere's processes (default: nproc); TLC_BENCH_OUT the results prefix
USAGE
}

if [[ $# -lt 1 ]]; then
  usage
  exit 2
fi
mode=$1
shift
case "$mode" in
  bench) ;;
  test)
    if [[ $# -gt 0 ]]; then
      echo "bootstrap: 'test' takes no further arguments" >&2
      usage
      exit 2
    fi
    ;;
  -h | --help | help)
    usage
    exit 0
    ;;
  *)
    echo "bootstrap: unknown command '$mode'" >&2
    usage
    exit 2
    ;;
esac

repo_root=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")/.." && pwd)
cd -- "$repo_root"
build_dir=${TLC_BUILD_DIR:-build}
openmpi_build_dir=${TLC_BUILD_DIR_OPENMPI:-build-openmpi}
asan_build_dir=${TLC_BUILD_DIR_ASAN:-build-asan}
tsan_build_dir=${TLC_BUILD_DIR_TSAN:-build-tsan}

log() { printf 'bootstrap: %s\n' "$*"; }

# --- 1. packages ------------------------------------------------------------------------------
# libtbb-dev: for examples/tbb_attach only; the library does not use oneTBB (docs/packaging.md).
# doxygen: the API reference (the docs target), which the test suite builds (tlc_api_reference);
# python3: the test of the documents' code snippets (tlc_doc_snippets).
packages=(build-essential cmake pkg-config libmpich-dev mpich libtbb-dev libhwloc-dev hwloc
          libgtest-dev gfortran doxygen python3)
# The main job's plot; the test suite runs against Open MPI too.
if [[ "$mode" == bench ]]; then
  packages+=(gnuplot-nox)
else
  packages+=(libopenmpi-dev openmpi-bin)
fi

install_packages() {
  if ! command -v dpkg-query >/dev/null 2>&1 || ! command -v apt-get >/dev/null 2>&1; then
    log "no dpkg/apt-get here: not installing anything; needs: ${packages[*]}"
    return 0
  fi
  local missing=() pkg
  for pkg in "${packages[@]}"; do
    if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed'; then
      missing+=("$pkg")
    fi
  done
  if [[ ${#missing[@]} -eq 0 ]]; then
    log "all packages present"
    return 0
  fi
  local sudo=()
  if [[ $(id -u) -ne 0 ]]; then
    if command -v sudo >/dev/null 2>&1; then
      sudo=(sudo)
    else
      log "missing packages (${missing[*]}) and not root, no sudo: install them and re-run" >&2
      return 1
    fi
  fi
  log "installing: ${missing[*]}"
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -q
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
    "${missing[@]}"
  # Installing Open MPI beside MPICH makes Debian's plain mpicc / mpicxx / mpiexec Open MPI's
  # (higher priority of the alternatives). tlc's builds do not depend on that; say it, since
  # other builds on this machine might.
  if command -v update-alternatives >/dev/null 2>&1 &&
    update-alternatives --query mpirun 2>/dev/null | grep -q '^Value: .*openmpi'; then
    log "note: plain mpicxx / mpiexec are now Open MPI's (Debian alternatives); tlc's builds name"
    log "      their MPI explicitly. To switch them back: update-alternatives --set mpi"
    log "      /usr/bin/mpicc.mpich; update-alternatives --set mpirun /usr/bin/mpirun.mpich;"
    log "      update-alternatives --set mpi-x86_64-linux-gnu /usr/include/x86_64-linux-gnu/mpich"
  fi
}

# --- 2. configure and build ---------------------------------------------------------------------
# build <directory> <mpich|openmpi> [cmake options...] (after the defaults: they may override)
build() {
  local dir=$1 mpi=$2 jobs
  shift 2
  jobs=$(nproc 2>/dev/null || echo 2)
  # A tree configured for another MPI, or before builds named their MPI, starts from a fresh
  # cache: FindMPI's cached results would otherwise mix two MPIs.
  if [[ -f "$dir/CMakeCache.txt" ]] &&
    ! grep -qx "TLC_MPI_CONFIGURED:INTERNAL=$mpi" "$dir/CMakeCache.txt"; then
    log "$dir was configured for another MPI (or none named): configuring it afresh for $mpi"
    rm -rf -- "$dir/CMakeCache.txt" "$dir/CMakeFiles"
  fi
  # Always (re)configure: with an existing cache this only re-checks, and it picks up changed
  # CMakeLists and a changed compiler.
  log "configuring $dir ($mpi)"
  cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=Release -DTLC_MPI="$mpi" "$@"
  log "building $dir with $jobs jobs"
  local start=$SECONDS
  cmake --build "$dir" -j "$jobs"
  log "built $dir in $((SECONDS - start)) s"
}

# The mpiexec that belongs to the MPI the build found (falls back to the one on PATH).
find_mpiexec() {
  local exe=""
  if [[ -f "$build_dir/CMakeCache.txt" ]]; then
    exe=$(sed -n 's/^MPIEXEC_EXECUTABLE:[A-Z]*=//p' "$build_dir/CMakeCache.txt" | head -n 1)
  fi
  if [[ -z "$exe" || "$exe" == *-NOTFOUND ]]; then
    exe=$(command -v mpiexec || true)
  fi
  if [[ -z "$exe" ]]; then
    log "no mpiexec found" >&2
    return 1
  fi
  printf '%s\n' "$exe"
}

# --- 3. run --------------------------------------------------------------------------------------
run_bench() {
  local bench="$build_dir/bench/tlc-bench" mpiexec processes out csv names
  if [[ ! -x "$bench" ]]; then
    log "$bench was not built (is TLC_BUILD_BENCH off in $build_dir/CMakeCache.txt?)" >&2
    return 1
  fi
  mpiexec=$(find_mpiexec)
  # One thread per core in one process, against as many MPI processes (MPI everywhere).
  processes=${TLC_BENCH_PROCESSES:-$(nproc 2>/dev/null || echo 2)}
  out=${TLC_BENCH_OUT:-bench-results/tlc-bench}
  mkdir -p -- "$(dirname -- "$out")"
  log "$mpiexec -n $processes $bench --intra --out $out $*"
  "$mpiexec" -n "$processes" "$bench" --intra --out "$out" "$@"
  csv="$out.csv"
  if [[ ! -s "$csv" ]]; then
    log "no $csv: nothing to plot" >&2
    return 1
  fi
  # Barrier has one size and no curve; every other collective measured gets a panel.
  names=$(grep -v '^#' "$csv" | tail -n +2 | cut -d, -f1 | uniq | grep -vx barrier | tr '\n' ' ')
  if command -v gnuplot >/dev/null 2>&1 && [[ -n "$names" ]]; then
    gnuplot -e "csv='$csv'; png='$out.png'; names='$names'; title='tlc-bench --intra: one process of $processes threads against MPI everywhere ($processes processes), master-only and the memory bound'" \
      bench/plot.gp
    log "wrote $out.txt (table), $out.csv, $out.json and $out.png (plot)"
  else
    log "wrote $out.txt (table), $out.csv, $out.json; no gnuplot, no plot"
  fi
}

# run_tests <directory> <label>
run_tests() {
  local dir=$1 label=$2 rc=0 start=$SECONDS
  log "test suite against $label ($dir)"
  ctest --test-dir "$dir" --output-on-failure --timeout 600 -j2 || rc=$?
  echo
  if [[ $rc -eq 0 ]]; then
    log "test suite passed against $label ($dir) in $((SECONDS - start)) s"
  else
    log "test suite FAILED against $label (ctest exit code $rc) after $((SECONDS - start)) s"
    local failed="$dir/Testing/Temporary/LastTestsFailed.log"
    if [[ -s "$failed" ]]; then
      log "failed tests:"
      sed 's/^[0-9]*:/  /' "$failed"
    fi
  fi
  if [[ $rc -ne 0 ]]; then
    failures+=("$label ($dir)")
  fi
  return "$rc"
}

# report_failures: the failed tests of every tree again, each with the end of its output, last
# in the log, so that a report showing only the log's tail still says what failed and why.
report_failures() {
  local entry dir name
  [[ ${#failures[@]} -eq 0 ]] && return 0
  log "summary: the test suite FAILED against ${#failures[@]} tree(s)"
  for entry in "${failures[@]}"; do
    dir=${entry##*(}
    dir=${dir%)}
    log "failed against $entry:"
    [[ -s "$dir/Testing/Temporary/LastTestsFailed.log" ]] || continue
    while IFS= read -r name; do
      name=${name#*:}
      log "--- $name: the last 40 lines of its output (whole: $dir/Testing/Temporary/LastTest.log)"
      awk -v name="$name" '
        $0 ~ "^[0-9]+/[0-9]+ Testing: " && $3 == name { on = 1; next }
        on && /^Test (Passed|Failed)/ { on = 0 }
        on && /^[0-9]+\/[0-9]+ Testing: / { on = 0 }
        on { print }' "$dir/Testing/Temporary/LastTest.log" | tail -n 40
    done <"$dir/Testing/Temporary/LastTestsFailed.log"
  done
}

failures=()
install_packages
case "$mode" in
  bench)
    build "$build_dir" mpich
    run_bench "$@"
    ;;
  test)
    # Every tree is built and tested even when one fails, so that one run shows all.
    # The sanitized trees: optimised lightly (-O1: instrumented code compiles several times
    # slower at -O3), with NDEBUG as users build (tlc's defaults then are a release's: a build
    # with assertions compares every call across processes), the library in batches
    # (TLC_UNITY_BUILD), without the benchmark and the examples (smoke tests, run in the Open MPI
    # tree); cmake/TlcCompilerFlags.cmake says what else differs (docs/reliability.md).
    sanitized=(-DCMAKE_BUILD_TYPE=RelWithDebInfo "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -DNDEBUG"
               "-DCMAKE_C_FLAGS_RELWITHDEBINFO=-O1 -DNDEBUG" -DTLC_BUILD_BENCH=OFF
               -DTLC_BUILD_EXAMPLES=OFF -DTLC_UNITY_BUILD=ON)
    rc=0
    # Each tree tests the package of its own library kind only (the other kind's consumer test
    # compiles the library once more): the sanitized trees static, the Open MPI tree shared
    # (docs/mpi.md).
    # AddressSanitizer's tree runs 1-3 processes: 4 (a power of two like 2, with 8 threads on
    # a 2-core machine) took a third of its test time; the Open MPI tree runs 1-4
    # (docs/reliability.md, "Under the sanitizers").
    build "$asan_build_dir" mpich "${sanitized[@]}" "-DTLC_SANITIZE=address;undefined" \
      -DTLC_TEST_MAX_PROCS=3 -DTLC_CONSUMER_OTHER_KIND=OFF
    run_tests "$asan_build_dir" "MPICH, AddressSanitizer+UBSan" || rc=1
    build "$openmpi_build_dir" openmpi -DBUILD_SHARED_LIBS=ON -DTLC_CONSUMER_OTHER_KIND=OFF
    run_tests "$openmpi_build_dir" "Open MPI" || rc=1
    build "$tsan_build_dir" mpich "${sanitized[@]}" -DTLC_SANITIZE=thread -DTLC_TEST_MAX_PROCS=2 \
      -DTLC_CONSUMER_OTHER_KIND=OFF
    run_tests "$tsan_build_dir" "MPICH, ThreadSanitizer" || rc=1
    report_failures
    exit "$rc"
    ;;
esac
