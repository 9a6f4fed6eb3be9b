#!/usr/bin/env python3
"""Plots tlc-bench CSV output (tlc-bench --csv > run.csv) as a PNG.

usage: plot_bench.py run.csv [more.csv ...] [-o out.png]

Size sweeps give two panels: time per call against bytes per thread (tlc, raw MPI, master-only)
and the time ratios tlc/mpi and tlc/master. Several files, or concatenated runs in one file, are
told apart by their collective/processes/threads/skew columns. Barrier runs give a bar chart.
"""
import argparse
import csv
import sys


def load(paths):
    runs = {}  # (collective, processes, threads, lanes, skew) -> rows
    for path in paths:
        with open(path, newline="") as f:
            for row in csv.DictReader(f):
                # A header line repeats when CSVs of several runs are concatenated.
                if row["collective"] == "collective":
                    continue
                key = (row["collective"], row["processes"], row["threads"], row["lanes"],
                       row["skew_us"])
                runs.setdefault(key, []).append(row)
    return runs


def label(key):
    collective, processes, threads, lanes, skew = key
    text = f"{collective} {processes}x{threads}t"
    if lanes not in ("", "1"):
        text += f" {lanes} lanes"
    if skew not in ("", "0"):
        text += f" skew {skew}us"
    return text


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("csv", nargs="+", help="tlc-bench --csv output")
    parser.add_argument("-o", "--output", default="tlc-bench.png", help="PNG to write")
    args = parser.parse_args()

    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("plot_bench.py: matplotlib is not installed (pip install matplotlib); "
              "no plot written", file=sys.stderr)
        return 1

    runs = load(args.csv)
    if not runs:
        print("plot_bench.py: no rows in " + ", ".join(args.csv), file=sys.stderr)
        return 1

    sized = {k: v for k, v in runs.items() if int(v[0]["bytes"]) > 0}
    if sized:
        fig, (ax_time, ax_ratio) = plt.subplots(2, 1, sharex=True, figsize=(8, 8))
        for key, rows in sized.items():
            x = [int(r["bytes"]) for r in rows]
            for column, style in (("tlc_us", "-o"), ("mpi_us", "--"), ("master_us", ":s")):
                ax_time.plot(x, [float(r[column]) for r in rows], style, markersize=3,
                             label=f"{label(key)} {column[:-3]}")
            for column, style in (("tlc/mpi", "--"), ("tlc/master", "-s")):
                ax_ratio.plot(x, [float(r[column]) for r in rows], style, markersize=3,
                              label=f"{label(key)} {column}")
        ax_time.set(xscale="log", yscale="log", ylabel="time per call [us]")
        ax_ratio.axhline(1.0, color="grey", linewidth=0.8)
        ax_ratio.set(xscale="log", yscale="log", xlabel="bytes per thread buffer",
                     ylabel="time ratio (< 1: tlc faster)")
        ax_time.legend(fontsize="small")
        ax_ratio.legend(fontsize="small")
        for ax in (ax_time, ax_ratio):
            ax.grid(True, which="both", alpha=0.3)
    else:
        fig, ax = plt.subplots(figsize=(8, 4))
        names = []
        values = []
        for key, rows in runs.items():
            for column in ("tlc_us", "mpi_us", "master_us"):
                names.append(f"{label(key)}\n{column[:-3]}")
                values.append(float(rows[-1][column]))
        ax.bar(names, values)
        ax.set(yscale="log", ylabel="time per call [us]")
    fig.tight_layout()
    fig.savefig(args.output, dpi=120)
    print(f"plot_bench.py: wrote {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
