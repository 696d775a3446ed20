# SPDX-License-Identifier: GPL-2.0-or-later
# tests/bench/names.gp - the names phase's drains (names.csv): per packet
# kind, the floor and nfqd with the 1,000,000-name policy side by side
# (medians; whiskers: min-max), nfqd's ratio to the floor above its bar.
# gnuplot -e "dir='DIR'".
set terminal svg size 1000,560 dynamic font "sans,12" background rgb "white"
set output dir."/names.svg"
set datafile separator ","
set datafile columnheaders
set title "Names: drain of a backlog, 1,000,000-name set (median of runs; whiskers: min-max)" noenhanced
set ylabel "packets/s"
set format y "%.1s%c"
set yrange [0:*]
set offsets 0, 0, graph 0.1, 0
set grid ytics
set style fill solid 0.85 border -1
set boxwidth 0.35
set xtics noenhanced nomirror
set key top right
f = dir."/names.csv"
stats f using 4 nooutput
set xrange [-0.6:STATS_records - 0.4]
plot f using ($0 - 0.19):4:xtic(2) with boxes lc rgb "#4477aa" title "floor (no-work batched)", \
     f using ($0 - 0.19):4:9:10 with yerrorbars lc rgb "black" pt -1 notitle, \
     f using ($0 + 0.19):5 with boxes lc rgb "#ee7733" title "nfqd, names policy", \
     f using ($0 + 0.19):5:11:12 with yerrorbars lc rgb "black" pt -1 notitle, \
     f using ($0 + 0.19):12:(sprintf("%sx (target %s)", strcol(6), strcol(7))) with labels offset 0,0.8 notitle
