# Plots a tlc-bench --overlap CSV (--out PREFIX writes PREFIX.csv): per collective, on the left
# the overlap % (OSU's) of tlc's nonblocking call, MPI everywhere's and the master-only
# pattern's against the size; on the right tlc's persistent and nonblocking start + wait over its
# blocking call (below 1: faster than blocking).
#
#   gnuplot -e "csv='overlap.csv'; png='overlap.png'; names='allreduce bcast alltoall'" \
#           bench/plot_overlap.gp
#
# names: the collectives to draw, in order. title: optional first line of the figure title.
if (!exists("csv") || !exists("png") || !exists("names")) {
  print "usage: gnuplot -e \"csv='F.csv'; png='F.png'; names='allreduce ...'\" plot_overlap.gp"
  exit status 2
}
if (!exists("title")) title = "tlc-bench --overlap"

set datafile separator ","
n = words(names)
set terminal pngcairo noenhanced size 1400,(n * 420 + 80) font ",10"
set output png
set multiplot layout n, 2 title title."\nleft: overlap % = 100 (t_comm + t_compute - t_total) / t_comm, at least 0 (OSU); right: tlc's time per call over its blocking call" font ",12"

set logscale x 2
set xrange [4:33554432]
set xtics ("8" 8, "64" 64, "512" 512, "4K" 4096, "32K" 32768, "256K" 262144, "2M" 2097152, \
           "16M" 16777216) rotate by -30
set grid ytics xtics lc rgb "#dddddd"
set key font ",9" box opaque
set xlabel "bytes per rank"
# The rows of one collective and implementation: columns 1 collective, 2 bytes, 3 impl,
# 7 overlap %, 8 ratio.
rows_of(c, impl, col) = sprintf("< awk -F, '$1 == \"%s\" && $3 == \"%s\" && $%d != \"-\"' '%s'", c, impl, col, csv)

do for [i = 1:n] {
  coll = word(names, i)
  set title coll." overlap" font ",12" noenhanced
  unset logscale y
  set yrange [-5:105]
  set ylabel "overlap %"
  set key top left
  # Drawn largest first, so that curves on top of each other (at 0 %) stay visible.
  plot rows_of(coll, "master", 7) using 2:7 with linespoints lw 2 pt 5 ps 1.6 lc rgb "#d62728" title "master-only", \
       rows_of(coll, "mpi", 7) using 2:7 with linespoints lw 2 pt 9 ps 1.3 lc rgb "#1f77b4" title "MPI everywhere", \
       rows_of(coll, "tlc", 7) using 2:7 with linespoints lw 2 pt 7 ps 0.8 lc rgb "#2ca02c" title "tlc i".coll
  set title coll." persistent and nonblocking over blocking" font ",12" noenhanced
  set logscale y 2
  set yrange [0.125:256]
  set ytics ("1/8" 0.125, "1/4" 0.25, "1/2" 0.5, "1" 1, "2" 2, "4" 4, "8" 8, "16" 16, "32" 32, \
             "64" 64, "128" 128, "256" 256)
  set ylabel "time / blocking time"
  set key top right
  plot rows_of(coll, "persistent", 8) using 2:8 with linespoints lw 2 pt 7 ps 0.8 lc rgb "#9467bd" title "persistent start + wait", \
       rows_of(coll, "nonblocking", 8) using 2:8 with linespoints lw 2 dt 2 pt 6 ps 0.8 lc rgb "#2ca02c" title "nonblocking start + wait", \
       1 with lines lw 2 lc rgb "#888888" notitle
  unset ytics
  set ytics
}
unset multiplot
