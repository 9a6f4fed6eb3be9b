#!/usr/bin/env bash
# A/B of two builds of tlc-bench on this machine: the measurements a restructuring must keep
# (README sweep, --intra, --algorithms), each case run by the old and the new build in turn,
# round after round, so that the machine's drift falls on both alike. Prints, per case and size,
# the median over rounds of new/old for every time column (tlc, and each forced algorithm), and
# the same for MPI's own time, which neither build changes: its spread is the noise floor.
#
#   bash bench/ab_compare.sh OLD_BUILD_DIR NEW_BUILD_DIR [ROUNDS] [OUT_DIR]
#
# OLD/NEW_BUILD_DIR: build trees holding bench/tlc-bench. ROUNDS: default 3. OUT_DIR: where the
# CSV of every run goes (default: a new directory under /tmp). Needs python3 for the table.
# AB_CASES=sweep,intra,algorithms picks the case families (default: all three).
set -euo pipefail

if [[ $# -lt 2 ]]; then
  sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//' >&2
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
cases=${AB_CASES:-sweep,intra,algorithms}

# name|processes|tlc-bench arguments (each run adds --csv)
all_cases=(
  "sweep_allreduce|2|--collective allreduce --min-size 8 --max-size 64M"
  "intra_allreduce|2|--intra --threads 2 --collective allreduce --min-size 8 --max-size 16M"
  "intra_bcast|2|--intra --threads 2 --collective bcast --min-size 8 --max-size 16M"
  "intra_allgather|2|--intra --threads 2 --collective allgather --min-size 8 --max-size 16M"
  "intra_alltoall|2|--intra --threads 2 --collective alltoall --min-size 8 --max-size 16M"
  "algorithms_allreduce|2|--algorithms --threads 1 --collective allreduce --min-size 8 --max-size 64M"
  "algorithms_allgather|2|--algorithms --threads 1 --collective allgather --min-size 8 --max-size 64M"
)

for ((r = 1; r <= rounds; ++r)); do
  for entry in "${all_cases[@]}"; do
    IFS='|' read -r name procs args <<<"$entry"
    [[ ",$cases," == *",${name%%_*},"* ]] || continue
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
    # Rows are keyed by what they measure and their size (--intra adds barrier rows).
    return {(r["collective"], int(r["bytes"])): r for r in rows}

names = sorted({os.path.basename(p).split(".")[0] for p in glob.glob(f"{out}/*.csv")})
print(f"# new/old, median over {rounds} rounds (CSV in {out})")
for name in names:
    ratios = defaultdict(lambda: defaultdict(list))  # column -> bytes -> [ratio per round]
    columns = []
    for r in range(1, rounds + 1):
        o, n = load(f"{out}/{name}.old.{r}.csv"), load(f"{out}/{name}.new.{r}.csv")
        for size in sorted(set(o) & set(n)):
            for col in n[size]:
                if not col.endswith("_us") or col not in o[size]:
                    continue
                try:
                    a, b = float(o[size][col]), float(n[size][col])
                except ValueError:
                    continue
                if a > 0:
                    ratios[col][size].append(b / a)
                    if col not in columns:
                        columns.append(col)
    print(f"\n## {name}\n")
    print("| bytes | " + " | ".join(c[:-3] for c in columns) + " |")
    print("|---:|" + "---:|" * len(columns))
    sizes = sorted({s for c in columns for s in ratios[c]})
    for s in sizes:
        cells = [f"{statistics.median(ratios[c][s]):.2f}" if ratios[c][s] else "" for c in columns]
        label = str(s[1]) if s[0] == name.split("_", 1)[1] else f"{s[0]} {s[1]}"
        print(f"| {label} | " + " | ".join(cells) + " |")
PY
