# SPDX-License-Identifier: GPL-2.0-or-later
# tests/bench/latency.gp - probe latency percentiles vs offered load, one
# line per consumer, one panel per percentile (latency.csv: medians over
# the repetitions; the p99 panel's bars span their min and max). gnuplot
# -e "dir='DIR'".
set terminal svg size 1300,520 dynamic font "sans,12" background rgb "white"
set output dir."/latency.svg"
set datafile separator ","
set datafile columnheaders
set multiplot layout 1,3 title "Latency through the queue vs offered load (10/50/90% of each consumer's live capacity; open symbols: offered rate short of the target)" noenhanced
set xlabel "offered packets/s"
set ylabel "µs"
set logscale y
set format y "%g"
set format x "%.0s%c"
set xtics rotate by -35 left
set grid xtics ytics
set key below horizontal
f = dir."/latency.csv"
sel(c, v) = strcol(1) eq c ? v : NaN
pt(c) = strcol(6) eq "yes" ? 6 : 7
do for [col in "10 12 13"] {
	n = int(col)
	set title (n == 10 ? "p50" : n == 12 ? "p99 (bars: min-max of the repetitions)" : "p99.9")
	if (n == 12) {
		plot f using (sel("none", $5)):12:16:17:(pt(0)) with yerrorlines pt variable lc rgb "#777777" lw 2 title "no queue", \
		     f using (sel("ref", $5)):12:16:17:(pt(0)) with yerrorlines pt variable lc rgb "#aaaaaa" lw 2 title "classic", \
		     f using (sel("floor", $5)):12:16:17:(pt(0)) with yerrorlines pt variable lc rgb "#4477aa" lw 2 title "floor", \
		     f using (sel("nfqd", $5)):12:16:17:(pt(0)) with yerrorlines pt variable lc rgb "#ee7733" lw 2 title "nfqd"
	} else {
		plot f using (sel("none", $5)):n:(pt(0)) with linespoints pt variable lc rgb "#777777" lw 2 title "no queue", \
		     f using (sel("ref", $5)):n:(pt(0)) with linespoints pt variable lc rgb "#aaaaaa" lw 2 title "classic", \
		     f using (sel("floor", $5)):n:(pt(0)) with linespoints pt variable lc rgb "#4477aa" lw 2 title "floor", \
		     f using (sel("nfqd", $5)):n:(pt(0)) with linespoints pt variable lc rgb "#ee7733" lw 2 title "nfqd"
	}
}
unset multiplot
