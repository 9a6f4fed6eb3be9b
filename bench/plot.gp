# Plots a tlc-bench CSV (--out PREFIX writes PREFIX.csv): one panel per collective, the time of
# each baseline over tlc's (> 1: tlc is faster) against the size, and the fraction of the
# memory-bandwidth bound tlc reaches.
#
#   gnuplot -e "csv='results.csv'; png='results.png'; names='bcast reduce allreduce'" bench/plot.gp
#
# names: the collectives to draw, in order (barrier has one size and no curve; leave it out).
# title: optional first line of the figure title.
if (!exists("csv") || !exists("png") || !exists("names")) {
  print "usage: gnuplot -e \"csv='F.csv'; png='F.png'; names='allreduce ...'\" plot.gp"
  exit status 2
}
if (!exists("title")) title = "tlc against its baselines"

set datafile separator ","
set terminal pngcairo size 1600,900 font ",10"
set output png

n = words(names)
cols = (n <= 3) ? n : ((n <= 8) ? 4 : 5)
rows = int((n + cols - 1) / cols)
set multiplot layout rows, cols title title."\nbaseline time / tlc time (above the grey line tlc is faster); bound: fraction of the memory-bandwidth bound tlc reaches" font ",12"

set logscale x 2
set logscale y 10
set xtics ("8" 8, "64" 64, "512" 512, "4K" 4096, "32K" 32768, "256K" 262144, "2M" 2097152, \
           "16M" 16777216) rotate by -30
set yrange [0.01:100]
set format y "%g"
set grid ytics xtics lc rgb "#dddddd"
set key top left font ",8" box opaque
# The rows of one collective and implementation: columns 1 collective, 2 bytes, 9 impl, 18 ratio.
rows_of(c, impl) = sprintf("< awk -F, '$1 == \"%s\" && $9 == \"%s\" && $18 != \"-\"' '%s'", c, impl, csv)

do for [i = 1:n] {
  coll = word(names, i)
  set title coll font ",12" noenhanced
  set xlabel "bytes per rank"
  plot rows_of(coll, "mpi") using 2:18 with linespoints lw 2 pt 7 ps 0.6 lc rgb "#1f77b4" title "MPI", \
       rows_of(coll, "master") using 2:18 with linespoints lw 2 pt 5 ps 0.6 lc rgb "#d62728" title "master-only", \
       rows_of(coll, "bound") using 2:18 with linespoints lw 1 dt 2 pt 2 ps 0.6 lc rgb "#2ca02c" title "bound reached", \
       1 with lines lw 2 lc rgb "#888888" notitle
}
unset multiplot
