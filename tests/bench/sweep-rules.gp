# SPDX-License-Identifier: GPL-2.0-or-later
# tests/bench/sweep-rules.gp - nfqd throughput vs rule count, log x
# (sweep-rules.csv). gnuplot -e "dir='DIR'".
set terminal svg size 900,520 dynamic font "sans,12" background rgb "white"
set output dir."/sweep-rules.svg"
set datafile separator ","
set datafile columnheaders
set title "nfqd drain throughput vs rules (N that miss, then the matching one)" noenhanced
set xlabel "rules in the policy"
set ylabel "packets/s"
set logscale x
set xrange [0.7:15000]
set format y "%.1s%c"
set yrange [0:*]
set grid xtics ytics
set key bottom left
f = dir."/sweep-rules.csv"
plot f using 1:4:5:6 with yerrorlines lw 2 pt 7 lc rgb "#ee7733" title "nfqd (median; min-max)", \
     f using 1:8 with lines dt 2 lc rgb "#ee7733" title "nfqd, empty policy", \
     f using 1:9 with lines dt 3 lw 2 lc rgb "#4477aa" title "floor (no-work batched)"
