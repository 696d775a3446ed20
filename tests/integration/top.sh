#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# top.sh - "nfqd-ctl top" in a real terminal (a detached tmux session)
# against nfqd carrying traffic: per-queue rates above zero and the
# busiest rule first; a resize redraws for the new size; a stopped daemon
# is reported while top keeps running, and rows come back when it is
# started again; q quits with status 0 and the terminal restored; so do
# SIGTERM and Ctrl-C (dying of the signal); without a terminal top refuses
# (exit 2) unless -b, whose frames carry the same rates.
. "$TOP_SRCDIR/tests/lib.sh"
. "$TOP_SRCDIR/tests/integration/ctl_lib.sh"

require_cmd tmux
ns_setup
sink_setup
require_cmd iptables
in_b iptables -A INPUT -p udp -j NFQUEUE --queue-balance 0:1 \
	|| fail "iptables NFQUEUE rule"

SOCK="$TMP/nfqd.sock"
# 15 rules, so how many fit depends on the terminal's height; the last
# one long, so the width cuts it.
rules=""
for p in $(seq 7001 7013); do
	rules="$rules
    udp dport $p drop;"
done
CONF=$(conf_file nfqd.conf <<EOF
options {
    queues 2;
    stats-file "$TMP/stats";
    control-socket "$SOCK";
}
hook input {
    policy accept;
    udp dport 9 drop;$rules
    udp dport 5000-5100 accept;
    ip saddr 192.0.2.99 tcp dport { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22 } drop;
}
EOF
)
N_RULE_ROWS=17	# 16 rules and the policy
start_nfqd "$NS_B" "$CONF"
wait_bound "$NS_B" 0 1
wait_file "$SOCK"

# Steady traffic from many sources (--queue-balance hashes addresses, so
# both queues get some), paced so as not to starve the machine.
srcs=$(add_sources)
gen="$TOP_BUILDDIR/tests/bench/nfqd-gen"
[ -x "$gen" ] || fail "generator $gen not built"
(
	while :; do
		in_a "$gen" -q -d 192.0.2.2 -n 1000 -r 1000 -p 5000 -S "$srcs" \
			|| sleep 0.2
	done
) &
bg_pid $!

# Our own tmux server, killed when the test ends.
T="tmux -S $TMP/tmux.sock"
$T new-session -d -s top -x 160 -y 40 "env PS1='prompt\$ ' sh" \
	|| fail "tmux new-session"
at_exit "$T kill-server"
screen() { $T capture-pane -p -t top >"$TMP/screen"; }
alt_on() { $T display-message -p -t top '#{alternate_on}'; }

# Wait ($WAIT_SECONDS s at most) until check $2 holds on the captured
# screen.
wait_screen() {
	local end
	end=$(deadline "$WAIT_SECONDS")
	while before "$end"; do
		screen
		"$2" && return 0
		sleep 0.1
	done
	cat "$TMP/screen"
	fail "$1"
}

# Queue rows (two) with packets/s above zero.
rows_busy() {
	[ "$(awk '$1 ~ /^[0-9]+$/ && NF >= 12 && $3 != "0" && $3 != "-"' \
		"$TMP/screen" | wc -l)" -eq 2 ]
}
rule_rows() { grep -c '^input ' "$TMP/screen"; }

# Run top in the terminal's shell; its exit status and whether the
# terminal settings came back are printed after it. The wrapper catches
# SIGINT (so a Ctrl-C does not end it too) and records top's pid.
cat >"$TMP/run-top.sh" <<EOF
trap true INT
s=\$(stty -g)
sh -c 'echo \$\$ >"$TMP/top.pid"; exec "$NFQD_CTL" -s "$SOCK" top -d 0.5'
rc=\$?
same=no
[ "\$(stty -g)" = "\$s" ] && same=yes
echo "top-exit=\$rc stty-same=\$same"
EOF
run_top() {
	$T send-keys -t top "clear; sh $TMP/run-top.sh" Enter
}
exited() { grep -q '^top-exit=' "$TMP/screen"; }

run_top
wait_screen "no rates above zero for both queues" rows_busy
[ "$(alt_on)" = 1 ] || fail "top did not switch to the alternate screen"
sed -n 4p "$TMP/screen" | grep -q '^QUEUE CPU *PKT/S' || fail "heading not on line 4"
grep -q '^input  *[0-9]*  *[1-9][0-9.]*[kM]* .*udp dport 5000-5100 accept' \
	"$TMP/screen" || fail "the busy rule is not shown with hits/s"
[ "$(grep '^input ' "$TMP/screen" | head -n 1 | awk '{ print $NF }')" = accept ] \
	|| fail "the busiest rule is not first"
[ "$(rule_rows)" -eq $N_RULE_ROWS ] || fail "$(rule_rows) rule rows on 40 lines, want $N_RULE_ROWS"
grep -q '21, 22 } drop$' "$TMP/screen" || fail "long rule cut on 160 columns"
log "160x40: $(rule_rows) rule rows"

# Smaller: 20 lines leave room for 11 rules (2 header lines, a blank, 4
# table lines, a blank, the rules' heading); 100 columns cut the long rule.
$T resize-window -t top -x 100 -y 20 || fail "tmux resize-window"
small() {
	[ "$(rule_rows)" -eq 11 ] && [ "$(wc -l <"$TMP/screen")" -eq 20 ] &&
	[ "$(grep -c '^QUEUE CPU' "$TMP/screen")" -eq 1 ] &&
	sed -n 4p "$TMP/screen" | grep -q '^QUEUE CPU' &&
	grep '^input .*tcp dport' "$TMP/screen" | awk '{ exit !(length($0) == 100) }'
}
wait_screen "no clean redraw at 100x20" small
# Both queue rows, with rates: a frame may show a queue at 0 pkt/s for a
# second in which a loaded machine kept the generator from the CPU.
small_busy() { small && rows_busy; }
wait_screen "queue rows lost on resize" small_busy
log "100x20: $(rule_rows) rule rows"
$T resize-window -t top -x 160 -y 40
big() { [ "$(rule_rows)" -eq $N_RULE_ROWS ] && grep -q '21, 22 } drop$' "$TMP/screen"; }
wait_screen "no redraw back at 160x40" big

# The daemon goes away: top says so and keeps trying.
stop_nfqd
unreachable() { grep -q 'cannot reach nfqd' "$TMP/screen"; }
wait_screen "no 'cannot reach' message" unreachable
! grep -q '^QUEUE' "$TMP/screen" || fail "stale rows shown without a daemon"
kill -0 "$(cat "$TMP/top.pid")" 2>/dev/null || fail "top exited without its daemon"
sleep 1.2
screen
unreachable || fail "the message went away without a daemon"
log "daemon stopped: $(grep 'cannot reach' "$TMP/screen")"
start_nfqd "$NS_B" "$CONF"
wait_bound "$NS_B" 0 1
wait_screen "rows did not come back after a restart" rows_busy
log "daemon back: rows again"

# q: exit 0, alternate screen left, terminal settings as before.
$T send-keys -t top q
wait_screen "top did not exit on q" exited
grep -q '^top-exit=0 stty-same=yes' "$TMP/screen" \
	|| fail "after q: $(grep top-exit "$TMP/screen")"
[ "$(alt_on)" = 0 ] || fail "alternate screen still on after q"
$T send-keys -t top 'echo alive-$((40 + 2))' Enter
alive() { grep -q '^alive-42' "$TMP/screen"; }
wait_screen "the shell is not usable after top" alive

# SIGTERM and Ctrl-C: the terminal restored, then death by the signal.
for how in TERM C-c; do
	rm -f "$TMP/top.pid"
	run_top
	wait_screen "top did not start again" rows_busy
	if [ $how = TERM ]; then
		kill -TERM "$(cat "$TMP/top.pid")"
		want=143
	else
		$T send-keys -t top C-c
		want=130
	fi
	wait_screen "top did not exit on $how" exited
	grep -q "^top-exit=$want stty-same=yes" "$TMP/screen" \
		|| fail "after $how: $(grep top-exit "$TMP/screen")"
	[ "$(alt_on)" = 0 ] || fail "alternate screen still on after $how"
done
log "q, SIGTERM and Ctrl-C restore the terminal"

# Without a terminal: refused, unless batch mode.
"$NFQD_CTL" -s "$SOCK" top </dev/null >"$TMP/notty.out" 2>"$TMP/notty.err"
rc=$?
[ $rc -eq 2 ] || fail "top without a terminal exited $rc, want 2"
grep -q 'needs a terminal' "$TMP/notty.err" || fail "message: $(cat "$TMP/notty.err")"
[ ! -s "$TMP/notty.out" ] || fail "top without a terminal wrote to stdout"
"$NFQD_CTL" -s "$SOCK" top -b -n 2 -d 0.5 >"$TMP/batch.out" </dev/null \
	|| fail "top -b failed"
[ "$(grep -c '^QUEUE CPU' "$TMP/batch.out")" -eq 2 ] || fail "top -b -n 2: $(cat "$TMP/batch.out")"
[ "$(awk '$1 ~ /^[0-9]+$/ && NF >= 12 && $3 != "0" && $3 != "-"' "$TMP/batch.out" | wc -l)" -eq 4 ] \
	|| fail "top -b rows without rates: $(cat "$TMP/batch.out")"
[ "$(grep -c '^input ' "$TMP/batch.out")" -eq $((2 * N_RULE_ROWS)) ] \
	|| fail "top -b does not list every rule"
log "ok"
