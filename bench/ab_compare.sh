#!/usr/bin/env bash
# A/B of two builds of tlc-bench on this machine: the measurements a restructuring must keep
# (README sweep, --intra, --algorithms, 2 x 2 across processes), each case run by the old and the new build in turn,
# round after round, so that the machine's drift falls on both alike. Prints, per case and size,
# the median over rounds of new/old for every time taken relative to a baseline of the same run
# (tlc/mpi, tlc/master, tlc against the memory bound, the selector against each forced algorithm
# and MPI; the CSV of tlc-bench since its one driver: builds before it print another format): absolute times move together from run to run on this
# machine (e.g. when the scheduler puts both MPI processes' main threads on one core), ratios
# within a run do not.
#
#   bash bench/ab_compare.sh OLD_BUILD_DIR NEW_BUILD_DIR [ROUNDS] [OUT_DIR]
#
# OLD/NEW_BUILD_DIR: build trees holding bench/tlc-bench. ROUNDS: default 3. OUT_DIR: where the
# CSV of every run goes (default: a new directory under /tmp). Needs python3 for the table.
# AB_CASES=sweep,intra,algorithms,across picks case families or single cases such as
# intra_allreduce (default: all four families; `across` is 2 processes x 2 threads with the
# default plan, where reduce, bcast and alltoall are led by arrival in their measured ranges).
# AB_REPORT_ONLY=1 makes the table from OUT_DIR's CSV files alone.
set -euo pipefail

if [[ $# -lt 2 ]]; then
  sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//' >&2
  exit 2
fi
old=$1/bench/tlc-bench
new=$2/bench/tlc-bench
rounds=${3:-3}
out=${4:-$(mktemp -d /tmp/tlc-ab.XXXXXX)}
for b in "$old" "$new"; do
  [[ -x $b ]] || { echo "ab_compare: $b is not built" >&2; exit 1; }
done
mkdir -p "$out"
mpiexec=${MPIEXEC:-mpiexec}
cases=${AB_CASES:-sweep,intra,algorithms,across}

# name|processes|tlc-bench arguments (each run adds --csv)
all_cases=(
  "sweep_allreduce|2|--collective allreduce --min-size 8 --max-size 64M"
  "intra_allreduce|2|--intra --threads 2 --collective allreduce --min-size 8 --max-size 16M --step 2"
  "intra_bcast|2|--intra --threads 2 --collective bcast --min-size 8 --max-size 16M --step 2"
  "intra_allgather|2|--intra --threads 2 --collective allgather --min-size 8 --max-size 16M --step 2"
  "intra_alltoall|2|--intra --threads 2 --collective alltoall --min-size 8 --max-size 16M --step 2"
  "algorithms_allreduce|2|--algorithms --threads 1 --collective allreduce --min-size 8 --max-size 64M"
  "algorithms_allgather|2|--algorithms --threads 1 --collective allgather --min-size 8 --max-size 64M"
  "across_reduce|2|--threads 2 --collective reduce --min-size 8 --max-size 16M --step 8"
  "across_bcast|2|--threads 2 --collective bcast --min-size 8 --max-size 16M --step 8"
  "across_alltoall|2|--threads 2 --collective alltoall --min-size 8 --max-size 4M --step 8"
  "across_allreduce|2|--threads 2 --collective allreduce --min-size 8 --max-size 16M --step 8"
)

# AB_REPORT_ONLY=1: only the table, from the CSV files already in OUT_DIR.
for ((r = 1; r <= rounds && ${AB_REPORT_ONLY:-0} == 0; ++r)); do
  for entry in "${all_cases[@]}"; do
    IFS='|' read -r name procs args <<<"$entry"
    [[ ",$cases," == *",${name%%_*},"* || ",$cases," == *",$name,"* ]] || continue
    # Alternate which build goes first, so that neither always follows the other.
    order=(old new)
    ((r % 2 == 0)) && order=(new old)
    for which in "${order[@]}"; do
      bin=$old
      [[ $which == new ]] && bin=$new
      echo "ab_compare: round $r $name $which" >&2
      # shellcheck disable=SC2086
      TLC_NODE=process "$mpiexec" -n "$procs" "$bin" $args --csv >"$out/$name.$which.$r.csv"
    done
  done
done

python3 - "$out" "$rounds" <<'PY'
import csv, glob, os, statistics, sys
from collections import defaultdict

out, rounds = sys.argv[1], int(sys.argv[2])

def load(path):
    with open(path) as f:
        rows = [r for r in csv.DictReader(line for line in f if not line.startswith("#"))]
    # One line per size and implementation: keyed by what they measure and their size.
    table = defaultdict(dict)
    for r in rows:
        table[(r["collective"], int(r["bytes"]))][r["impl"]] = r
    return table

# Every figure as tlc's time relative to a baseline of the same run (lower is better), so that
# the machine's state, which moves all of a run's times together, drops out.
def normalized(impls):
    got = {}
    for impl, r in impls.items():
        try:
            x = float(r["ratio"])
        except (TypeError, ValueError):
            continue
        if x > 0:
            got["tlc/" + impl] = 1 / x
    return got

names = sorted({os.path.basename(p).split(".")[0] for p in glob.glob(f"{out}/*.csv")})
print(f"# new/old of each time relative to its in-run baseline, median over {rounds} rounds")
print(f"# (1.00: unchanged; above: the new build is slower; CSV in {out})")
for name in names:
    ratios = defaultdict(lambda: defaultdict(list))  # metric -> row key -> [new/old per round]
    metrics = []
    for r in range(1, rounds + 1):
        o, n = load(f"{out}/{name}.old.{r}.csv"), load(f"{out}/{name}.new.{r}.csv")
        for key in sorted(set(o) & set(n)):
            a, b = normalized(o[key]), normalized(n[key])
            for m in b:
                if m in a:
                    ratios[m][key].append(b[m] / a[m])
                    if m not in metrics:
                        metrics.append(m)
    print(f"\n## {name}\n")
    print("| bytes | " + " | ".join(metrics) + " |")
    print("|---:|" + "---:|" * len(metrics))
    keys = sorted({k for m in metrics for k in ratios[m]}, key=lambda k: (k[0] != name.split("_", 1)[1], k))
    for k in keys:
        cells = [f"{statistics.median(ratios[m][k]):.2f}" if ratios[m][k] else "" for m in metrics]
        label = str(k[1]) if k[0] == name.split("_", 1)[1] else f"{k[0]} {k[1]}"
        print(f"| {label} | " + " | ".join(cells) + " |")
PY
