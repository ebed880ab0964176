# Plots a `bf16fp32 bench --csv` file: one panel per (N, K), microseconds per call against M on
# log-log axes, one line per backend (baseline and auto included) plus the floor F (GPU runs).
# usage: gnuplot -e "csv='docs/bench-h200.csv'; png='docs/bench-h200.png'" tools/plot-bench.gp
# Needs awk; the CSV columns are those written by tools/bench.c (shape=2, n=3, k=4, m=5,
# backend=6, us_per_call=7, floor_us=11).

if (!exists("csv")) csv = 'docs/bench-h200.csv'
if (!exists("png")) png = 'docs/bench-h200.png'
if (!exists("title")) title = 'bf16fp32 bench: '.csv

# "label:N:K" per distinct (N, K), and the backends, in file order.
shapes = system(sprintf("awk -F, 'NR > 1 && !seen[$3 \":\" $4]++ { printf \"%%s:%%s:%%s \", $2, $3, $4 }' '%s'", csv))
backends = system(sprintf("awk -F, 'NR > 1 && !seen[$6]++ { printf \"%%s \", $6 }' '%s'", csv))
mode = system(sprintf("awk -F, 'NR == 2 { printf \"%%s\", $1 }' '%s'", csv))
n = words(shapes)
if (n == 0) { print "plot-bench.gp: no data rows in ".csv; exit }

cols = (n <= 3) ? n : ceil(sqrt(n))
rows = ceil(1.0 * n / cols)
set terminal pngcairo size 520 * cols, 400 * rows + 40 font ",10"
set output png
set datafile separator whitespace
set logscale xy
set grid xtics ytics mxtics mytics lc rgb "#dddddd"
set xlabel "M (tokens)"
set ylabel "us per call"
set key bottom right font ",8" spacing 0.9 opaque
set format x "%g"
set format y "%g"
set multiplot layout rows, cols title title font ",13"

field(s, i) = (i == 1) ? s[1:strstrt(s, ":") - 1] : \
              (i == 2) ? (t = s[strstrt(s, ":") + 1:], t[1:strstrt(t, ":") - 1]) : \
              (t = s[strstrt(s, ":") + 1:], t[strstrt(t, ":") + 1:])
series(N, K, b) = sprintf("< awk -F, '$3 == %s && $4 == %s && $6 == \"%s\" && $7 != \"\" { print $5, $7 }' '%s' | sort -g", N, K, b, csv)
floor_of(N, K) = sprintf("< awk -F, '$3 == %s && $4 == %s && $11 != \"\" && !seen[$5]++ { print $5, $11 }' '%s' | sort -g", N, K, csv)

do for [i = 1:n] {
  s = word(shapes, i)
  L = field(s, 1)
  N = field(s, 2)
  K = field(s, 3)
  set title sprintf("%s  (N=%s, K=%s)", L, N, K)
  if (mode eq "gpu") {
    plot for [b in backends] series(N, K, b) using 1:2 with linespoints pt 7 ps 0.5 lw 1.5 title b, \
         floor_of(N, K) using 1:2 with lines dt 2 lw 2 lc rgb "black" title "floor F"
  } else {
    plot for [b in backends] series(N, K, b) using 1:2 with linespoints pt 7 ps 0.5 lw 1.5 title b
  }
}
unset multiplot
