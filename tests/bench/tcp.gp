# tests/bench/tcp.gp - TCP throughput through each consumer, queue GSO
# flag on and off, and the flow bypass (tcp.csv). gnuplot -e "dir='DIR'".
set terminal svg size 900,520 dynamic font "sans,12" background rgb "white"
set output dir."/tcp.svg"
set datafile separator ","
set datafile columnheaders
set title "TCP (iperf3) through the queue (median; whiskers: min-max)" noenhanced
set ylabel "Gbit/s"
set yrange [0:*]
set grid ytics
set style fill solid 0.85 border -1
set boxwidth 0.7
set xtics noenhanced nomirror
set key off
color(g) = g eq "yes" ? 0xee7733 : g eq "no" ? 0x4477aa : 0x777777
name(c, g) = g eq "-" ? c : c."\ngso ".g
f = dir."/tcp.csv"
plot f using 0:4:(color(strcol(2))):xtic(name(strcol(1), strcol(2))) with boxes lc rgb variable, \
     f using 0:4:5:6 with yerrorbars lc rgb "black" pt -1, \
     f using 0:6:(sprintf("%.2f", $4)) with labels offset 0,0.8
