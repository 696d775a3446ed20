# SPDX-License-Identifier: GPL-2.0-or-later
# tests/bench/tcp.gp - TCP throughput through each consumer, queue GSO
# flag on and off, and the flow bypass (tcp.csv). gnuplot -e "dir='DIR'".
set terminal svg size 1000,560 dynamic font "sans,12" background rgb "white"
set output dir."/tcp.svg"
set datafile separator ","
set datafile columnheaders
set title "TCP (iperf3) through the queue (median; whiskers: min-max)" noenhanced
set ylabel "Gbit/s"
set yrange [0:*]
set offsets 0, 0, graph 0.08, 0
set grid ytics
set style fill solid 0.85 border -1
set boxwidth 0.7
set xtics rotate by -30 left noenhanced nomirror
set bmargin 7
set key below horizontal
color(g) = g eq "yes" ? 0xee7733 : g eq "no" ? 0x4477aa : 0x777777
name(c, g) = g eq "-" ? c : c.", gso ".g
f = dir."/tcp.csv"
stats f using 4 nooutput
set xrange [-0.6:STATS_records - 0.4]
plot f using 0:4:(color(strcol(2))):xtic(name(strcol(1), strcol(2))) with boxes lc rgb variable notitle, \
     f using 0:4:5:6 with yerrorbars lc rgb "black" pt -1 notitle, \
     f using 0:6:(sprintf("%.2f", $4)) with labels offset 0,0.8 notitle, \
     NaN with boxes lc rgb "#777777" title "no queue", \
     NaN with boxes lc rgb "#ee7733" title "queue, gso yes", \
     NaN with boxes lc rgb "#4477aa" title "queue, gso no"
