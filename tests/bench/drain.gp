# SPDX-License-Identifier: GPL-2.0-or-later
# tests/bench/drain.gp - bar chart of drain throughput per scenario
# (drain.csv: median bars, min-max error bars). gnuplot -e "dir='DIR'".
set terminal svg size 1100,600 dynamic font "sans,12" background rgb "white"
set output dir."/drain.svg"
set datafile separator ","
set datafile columnheaders
set title "Drain throughput per consumer (median of runs; whiskers: min-max)" noenhanced
set ylabel "packets/s"
set format y "%.1s%c"
set yrange [0:*]
set offsets 0, 0, graph 0.08, 0
set grid ytics
set style fill solid 0.85 border -1
set boxwidth 0.7
set xtics rotate by -35 left noenhanced nomirror
set bmargin 8
set key top right
color(k) = k eq "ref" ? 0xaaaaaa : k eq "floor" ? 0x4477aa : 0xee7733
f = dir."/drain.csv"
stats f using 6 nooutput
set xrange [-0.6:STATS_records - 0.4]
plot f using 0:6:(color(strcol(3))):xtic(1) with boxes lc rgb variable notitle, \
     f using 0:6:7:8 with yerrorbars lc rgb "black" pt -1 notitle, \
     f using 0:8:(sprintf("%.0fk", $6 / 1000)) with labels offset 0,0.8 notitle, \
     NaN with boxes lc rgb "#aaaaaa" title "classic consumer", \
     NaN with boxes lc rgb "#4477aa" title "floor (no-work batched)", \
     NaN with boxes lc rgb "#ee7733" title "nfqd"
