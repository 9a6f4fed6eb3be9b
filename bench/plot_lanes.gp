# Heat map of a tlc-bench --lanes-sweep CSV (--out PREFIX writes PREFIX.csv): per collective, the
# time per rank buffer of a process (time / t) of every configuration (t threads per process, l
# lanes, the column key tT_lL) at every size, over the fastest configuration's at that size
# (1 = the fastest; green to red up to 2x and beyond).
#
#   gnuplot -e "csv='sweep.csv'; png='sweep.png'; names='allreduce'" bench/plot_lanes.gp
#
# title: optional first line of the figure title.
if (!exists("csv") || !exists("png") || !exists("names")) {
  print "usage: gnuplot -e \"csv='F.csv'; png='F.png'; names='allreduce ...'\" plot_lanes.gp"
  exit status 2
}
if (!exists("title")) title = "tlc-bench --lanes-sweep"

n = words(names)
set terminal pngcairo size 900, 520 * n font ",10"
set output png
set multiplot layout n, 1 title title."\ntime / t (a process of t threads moves t rank buffers) over the fastest configuration's at that size (1 = fastest)" font ",12"

# CSV columns: 1 collective, 2 bytes, 9 impl (the configuration tT_lL), 11 time_us.
# One line "config_index size_index ratio" per measured cell.
cells(c) = sprintf("< awk -F, -v c='%s' '$1 == c && $2 + 0 == $2 { s = $2; if (!(s in seen)) { seen[s] = 1; size[++ns] = s } if (!($9 in cs)) { cs[$9] = 1; cfg[++nc] = $9 } split($9, part, \"_\"); v = $11 / (substr(part[1], 2) + 0); t[s, $9] = v; if (!(s in best) || v < best[s]) best[s] = v } END { for (i = 1; i <= nc; i++) for (j = 1; j <= ns; j++) if ((size[j], cfg[i]) in t) print i - 1, j - 1, t[size[j], cfg[i]] / best[size[j]] }' '%s'", c, csv)
configs_of(c) = system(sprintf("awk -F, -v c='%s' '$1 == c && $2 + 0 == $2 && !($9 in s) { s[$9] = 1; printf \"%%s \", $9 }' '%s'", c, csv))
sizes_of(c) = system(sprintf("awk -F, -v c='%s' '$1 == c && $2 + 0 == $2 && !($2 in s) { s[$2] = 1; printf \"%%s \", $2 }' '%s'", c, csv))
label(b) = (b >= 1048576) ? sprintf("%d MiB", b / 1048576) : ((b >= 1024) ? sprintf("%d KiB", b / 1024) : sprintf("%d B", b))

set palette defined (1 "#1a9850", 1.15 "#a6d96a", 1.4 "#fee08b", 1.7 "#fc8d59", 2 "#d73027")
set cbrange [1:2]
set cblabel "(time / t) / fastest"
set xlabel "threads per process (t) and lanes (l)"
set ylabel "bytes per rank"
unset key

do for [p = 1:n] {
  coll = word(names, p)
  cfgs = configs_of(coll)
  szs = sizes_of(coll)
  set title coll font ",12" noenhanced
  set xtics () noenhanced
  do for [i = 1:words(cfgs)] { set xtics add (word(cfgs, i) i - 1) }
  set ytics ()
  do for [j = 1:words(szs)] { set ytics add (label(int(word(szs, j))) j - 1) }
  set xrange [-0.5:words(cfgs) - 0.5]
  set yrange [-0.5:words(szs) - 0.5]
  plot cells(coll) using 1:2:3 with image, \
       cells(coll) using 1:2:(sprintf("%.2f", $3)) with labels font ",8" noenhanced
}
unset multiplot
