#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# prometheus.sh - the textfile collector set-up in contrib/: the units pass
# "systemd-analyze verify"; the service's own command line (its
# Environment= and ExecStart=, variables overridden as a drop-in would)
# writes a file promtool accepts, replaced whole, with nfqd_up 1 and the
# counters under traffic; with nfqd gone it writes nfqd_up 0 and exits 3,
# which the unit counts as success. The Grafana dashboard is JSON whose
# queries parse (promtool check rules) and name only metrics nfqd-ctl
# writes.
. "$TOP_SRCDIR/tests/lib.sh"
. "$TOP_SRCDIR/tests/integration/ctl_lib.sh"

require_cmd promtool systemd-analyze
UNIT_IN="$TOP_SRCDIR/contrib/prometheus/nfqd-prometheus.service.in"
TIMER="$TOP_SRCDIR/contrib/prometheus/nfqd-prometheus.timer"
DASH="$TOP_SRCDIR/contrib/grafana/nfqd.json"

# The units, with the service pointing at this build's nfqd-ctl.
mkdir -p "$TMP/units"
sed "s|@sbindir@|$(dirname "$NFQD_CTL")|g" "$UNIT_IN" >"$TMP/units/nfqd-prometheus.service"
cp "$TIMER" "$TMP/units/"
systemd-analyze verify --man=no "$TMP/units/nfqd-prometheus.service" \
	"$TMP/units/nfqd-prometheus.timer" || fail "systemd-analyze verify"
grep -qx 'Environment=NFQD_PROM_FILE=/var/lib/prometheus/node-exporter/nfqd.prom' \
	"$UNIT_IN" || fail "default textfile path changed"
grep -qx 'SuccessExitStatus=3' "$UNIT_IN" || fail "exit 3 is a failure of the unit"

ns_setup
sink_setup
queue_rule_setup 0
SOCK="$TMP/nfqd.sock"
CONF=$(conf_file nfqd.conf <<EOF2
options {
    queues { 0 };
    stats-file "$TMP/stats";
    control-socket "$SOCK";
}
hook input {
    policy accept;
    udp dport 9 drop;
    udp dport 5000 log prefix "five k: " accept;
}
EOF2
)
start_nfqd "$NS_B" "$CONF"
wait_bound "$NS_B" 0
wait_file "$SOCK"
send_udp_to "$NS_A" 192.0.2.2 300 9
send_udp_to "$NS_A" 192.0.2.2 200 5000
wait_stats_field "$TMP/stats" 0 10 500

# Run the service's ExecStart= as systemd would: Environment= values,
# overridden for this test, then ${VAR} replaced.
run_service() {
	local line
	line=$(sed -n 's/^ExecStart=//p' "$TMP/units/nfqd-prometheus.service")
	line=$(echo "$line" | sed -e "s|\${NFQD_SOCKET}|$SOCK|g" \
		-e "s|\${NFQD_PROM_FILE}|$TMP/textfile/nfqd.prom|g")
	case $line in *'$'*) fail "unexpanded variable in: $line" ;; esac
	log "ExecStart: $line"
	in_b sh -c "umask 022; $line"
}
mkdir -p "$TMP/textfile"
echo "nfqd_stale 1" >"$TMP/textfile/nfqd.prom"
run_service || fail "the service's command failed"
[ "$(ls "$TMP/textfile")" = nfqd.prom ] || fail "stray files: $(ls "$TMP/textfile")"
[ "$(stat -c %a "$TMP/textfile/nfqd.prom")" = 644 ] || fail "mode $(stat -c %a "$TMP/textfile/nfqd.prom")"
promtool check metrics <"$TMP/textfile/nfqd.prom" || fail "promtool rejects the textfile"
grep -qx 'nfqd_up 1' "$TMP/textfile/nfqd.prom" || fail "no nfqd_up 1"
grep -qx 'nfqd_packets_total{queue="0"} 500' "$TMP/textfile/nfqd.prom" || fail "packets wrong"
grep -q '^nfqd_rule_packets_total{hook="input",index="1",rule="udp dport 9 drop"} 300$' \
	"$TMP/textfile/nfqd.prom" || fail "rule hits wrong"
# Quotes in a rule's text are escaped in its label.
grep -q '^nfqd_rule_packets_total{hook="input",index="2",rule="udp dport 5000 log prefix \\"five k: \\" accept"} 200$' \
	"$TMP/textfile/nfqd.prom" || fail "rule label not escaped: $(grep 'index="2"' "$TMP/textfile/nfqd.prom")"
! grep -q nfqd_stale "$TMP/textfile/nfqd.prom" || fail "old file not replaced"

# The dashboard against this real output.
"$PY" "$TOP_SRCDIR/tests/integration/dashboard_check.py" "$DASH" \
	"$TMP/dashboard-rules.json" <"$TMP/textfile/nfqd.prom" \
	|| fail "dashboard names metrics nfqd-ctl does not write"
promtool check rules "$TMP/dashboard-rules.json" \
	|| fail "a dashboard query does not parse"

# nfqd gone: nfqd_up 0, nothing stale, exit 3 (a success for the unit).
stop_nfqd
run_service
rc=$?
[ $rc -eq 3 ] || fail "without nfqd the service's command exited $rc, want 3"
grep -qx 'nfqd_up 0' "$TMP/textfile/nfqd.prom" || fail "no nfqd_up 0"
! grep -q nfqd_packets_total "$TMP/textfile/nfqd.prom" || fail "stale counters"
promtool check metrics <"$TMP/textfile/nfqd.prom" || fail "promtool rejects the down file"

# No node_exporter (its textfile directory missing): the unit's
# ExecCondition= skips the run with one line naming the directory (exit 1:
# skipped, not failed); with the directory there it lets the run go.
run_condition() {
	local line
	line=$(sed -n 's/^ExecCondition=//p' "$TMP/units/nfqd-prometheus.service" |
		sed -e 's/\$\$/$/g' -e 's/%%/%/g')
	[ -n "$line" ] || fail "no ExecCondition= in the unit"
	NFQD_PROM_FILE=$1 eval "$line"
}
out=$(run_condition "$TMP/no-exporter/textfile/nfqd.prom" 2>&1)
rc=$?
[ $rc -eq 1 ] || fail "condition without the directory exited $rc, want 1 (skip)"
[ "$(echo "$out" | wc -l)" -eq 1 ] || fail "condition said more than one line: $out"
echo "$out" | grep -qF "directory $TMP/no-exporter/textfile does not exist" \
	|| fail "condition does not name the directory: $out"
log "skip line: $out"
out=$(run_condition "$TMP/textfile/nfqd.prom" 2>&1) || fail "condition refused an existing directory: $out"
[ -z "$out" ] || fail "condition spoke with the directory there: $out"
# nfqd-ctl itself names the missing directory, not its temporary file.
"$NFQD_CTL" -s "$SOCK" stats --prometheus -o "$TMP/no-exporter/nfqd.prom" 2>"$TMP/o.err"
grep -qF "cannot write $TMP/no-exporter/nfqd.prom: directory $TMP/no-exporter: No such file or directory" \
	"$TMP/o.err" || fail "-o into a missing directory: $(cat "$TMP/o.err")"
! grep -q 'XXXXXX\|nfqd.prom\.' "$TMP/o.err" || fail "names the temporary file: $(cat "$TMP/o.err")"
log "ok"
