# SPDX-License-Identifier: GPL-2.0-or-later
# tests/bench/sweep-sets.gp - nfqd throughput vs set size, hash and prefix
# sets, log x (sweep-sets.csv). gnuplot -e "dir='DIR'".
set terminal svg size 900,520 dynamic font "sans,12" background rgb "white"
set output dir."/sweep-sets.svg"
set datafile separator ","
set datafile columnheaders
set title "nfqd drain throughput vs set size (ip saddr @set accept)" noenhanced
set xlabel "elements in the set"
set ylabel "packets/s"
set logscale x
set format x "10^{%L}"
set format y "%.1s%c"
set yrange [0:*]
set grid xtics ytics
set key bottom left
f = dir."/sweep-sets.csv"
sel(k, v) = strcol(1) eq k ? v : NaN
plot f using (sel("hash", $2)):4:5:6 with yerrorlines lw 2 pt 7 lc rgb "#ee7733" title "hash set (addresses)", \
     f using (sel("prefix", $2)):4:5:6 with yerrorlines lw 2 pt 5 lc rgb "#228833" title "interval set (prefixes)", \
     f using (sel("hash", $2)):8 with lines dt 2 lc rgb "#777777" title "empty policy"
