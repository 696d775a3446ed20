#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# stats.sh - the stats file, "nfqd-ctl stats" and "rules" count exactly:
# N packets sent, M of them matching a drop rule, give N received, N-M
# accepted, M dropped and M hits on the rule everywhere; columns 1-9 of the
# file equal the kernel's line; the file is never seen half-written; the
# Prometheus output parses, passes "promtool check metrics" and carries
# the per-rule counters; "-o FILE" replaces FILE whole, and says nfqd_up 0
# when the daemon is gone; "counters reset" zeroes nfqd's counters.
. "$TOP_SRCDIR/tests/lib.sh"
. "$TOP_SRCDIR/tests/integration/ctl_lib.sh"

require_cmd promtool

N=1000
M=137
ns_setup
sink_setup
queue_rule_setup 0

STATS="$TMP/run/stats"
SOCK="$TMP/run/nfqd.sock"
# The config with hook input's rules $1 (its path).
write_conf() {
	conf_file nfqd.conf <<EOF
options {
    queues { 0 };
    stats-file "$STATS";
    stats-interval 1;
    control-socket "$SOCK";
}
hook input {
    policy accept;
$1
}
EOF
}
CONF=$(write_conf '    udp dport 9 drop;')
start_nfqd "$NS_B" "$CONF"
wait_bound "$NS_B" 0
wait_file "$SOCK"
wait_file "$STATS"

send_udp_to "$NS_A" 192.0.2.2 $((N - M)) 5000
send_udp_to "$NS_A" 192.0.2.2 "$M" 9
wait_stats_field "$STATS" 0 10 "$N"
# Columns 1-9 of the file are the kernel's line at the last write: wait
# (a writer's interval or more, on a loaded machine) until the file holds
# the settled kernel line too.
kcols() { awk '{ print $1, $2, $3, $4, $5, $6, $7, $8, $9 }'; }
end=$(deadline "$WAIT_SECONDS")
while before "$end"; do
	[ "$(awk '$1 == 0' "$STATS" | kcols)" = "$(kqueue_line "$NS_B" 0 | kcols)" ] && break
	sleep 0.1
done

line=$(awk '$1 == 0' "$STATS")
log "stats file: $line"
[ "$(echo "$line" | wc -w)" -eq 25 ] || fail "stats line has not 25 fields: $line"
set -- $line
[ "${10}" -eq "$N" ] || fail "packets ${10}, want $N"
[ "${11}" -eq $((N * 46)) ] || fail "bytes ${11}, want $((N * 46))"
[ "${12}" -eq $((N - M)) ] || fail "accepted ${12}, want $((N - M))"
[ "${13}" -eq "$M" ] || fail "dropped ${13}, want $M"
[ "${14}" -eq 0 ] || fail "other ${14}, want 0"
[ "${16}" -eq 0 ] && [ "${17}" -eq 0 ] || fail "enobufs/errors not 0: $line"
[ "${15}" -ge 1 ] || fail "batches ${15}"
[ "${19}" -eq 0 ] && [ "${20}" -eq 0 ] || fail "incomplete/orphans not 0: $line"
# Columns 21-25, the flow table for names: no name rule, no flows.
[ "${21}${22}${23}${24}${25}" = 00000 ] || fail "flow/name columns not 0: $line"
kfile=$(echo "$line" | awk '{ print $1, $2, $3, $4, $5, $6, $7, $8, $9 }')
kline=$(kqueue_line "$NS_B" 0 | awk '{ print $1, $2, $3, $4, $5, $6, $7, $8, $9 }')
log "kernel line: $kline"
[ "$kfile" = "$kline" ] || fail "columns 1-9 '$kfile' differ from the kernel's '$kline'"
# Same formatting too, so tools that read the kernel file read this one.
kraw=$(kqueue_line "$NS_B" 0)
[ "$(printf '%s\n' "$line" | cut -c1-${#kraw})" = "$kraw" ] \
	|| fail "columns 1-9 not formatted as the kernel's: '$line' vs '$kraw'"
[ "$(wait_sink_udp $((N - M)))" -eq $((N - M)) ] || fail "sink saw $(sink_udp_packets), want $((N - M))"

# The same through the control socket, JSON.
ctl -j stats >"$TMP/stats.json" || fail "nfqd-ctl stats -j failed"
json_check "$TMP/stats.json" "
q = d['queues'][0]
assert len(d['queues']) == 1, d
assert q['queue'] == 0 and q['packets'] == $N, q
assert q['accepted'] == $((N - M)) and q['dropped'] == $M, q
assert q['bytes'] == $((N * 46)) and q['other'] == 0, q
k = '$kline'.split()
assert q['queue_total'] == int(k[2]) and q['queue_dropped'] == int(k[5]), (q, k)
assert q['user_dropped'] == int(k[6]) and q['id_sequence'] == int(k[7]), (q, k)
assert q['incomplete'] == 0 and q['orphans'] == 0, q
for key in ('cpu', 'batches', 'enobufs', 'errors'):
    assert key in q, key
" || fail "stats JSON wrong"

ctl -j rules >"$TMP/rules.json" || fail "nfqd-ctl rules -j failed"
json_check "$TMP/rules.json" "
assert d['generation'] == 1, d
hooks = {h['hook']: h for h in d['hooks']}
assert list(hooks) == ['prerouting', 'input', 'forward', 'output', 'postrouting'], list(hooks)
h = hooks['input']
assert h['policy'] == 'accept' and h['policy_packets'] == $((N - M)), h
r = h['rules'][0]
assert len(h['rules']) == 1 and r['index'] == 1, h
assert r['rule'] == 'udp dport 9 drop', r
assert r['packets'] == $M and r['bytes'] == $((M * 46)), r
" || fail "rules JSON wrong"

# Text forms.
ctl stats >"$TMP/stats.txt" || fail "nfqd-ctl stats failed"
head -n 1 "$TMP/stats.txt" | grep -q '^queue cpu *packets' || fail "stats header: $(head -n 1 "$TMP/stats.txt")"
awk 'NR == 2 { exit !($1 == 0 && $3 == '"$N"') }' "$TMP/stats.txt" || fail "stats row: $(cat "$TMP/stats.txt")"
ctl rules | grep -q "udp dport 9 drop" || fail "rules text lacks the rule"

# Prometheus exposition parses and carries the counters.
ctl stats --prometheus >"$TMP/prom.txt" || fail "nfqd-ctl stats --prometheus failed"
"$PY" "$TOP_SRCDIR/tests/integration/prom_check.py" nfqd_packets_total \
	nfqd_dropped_total nfqd_kernel_queue_length nfqd_up \
	nfqd_kernel_queue_dropped_total nfqd_kernel_user_dropped_total \
	nfqd_incomplete_total nfqd_orphans_total nfqd_rule_packets_total \
	nfqd_rule_bytes_total nfqd_policy_packets_total <"$TMP/prom.txt" \
	|| fail "Prometheus output invalid: $(cat "$TMP/prom.txt")"
promtool check metrics <"$TMP/prom.txt" || fail "promtool rejects the output"
prom_has() {
	grep -qxF "$1" "$TMP/prom.txt" || fail "no line '$1' in: $(cat "$TMP/prom.txt")"
}
prom_has "nfqd_up 1"
prom_has "nfqd_packets_total{queue=\"0\"} $N"
prom_has "nfqd_dropped_total{queue=\"0\"} $M"
prom_has "# TYPE nfqd_kernel_queue_dropped_total counter"
prom_has "nfqd_kernel_queue_dropped_total{queue=\"0\"} $(echo "$kline" | awk '{ print $6 }')"
prom_has "nfqd_rule_packets_total{hook=\"input\",index=\"1\",rule=\"udp dport 9 drop\"} $M"
prom_has "nfqd_rule_bytes_total{hook=\"input\",index=\"1\",rule=\"udp dport 9 drop\"} $((M * 46))"
prom_has "nfqd_policy_packets_total{hook=\"input\"} $((N - M))"
prom_has "nfqd_policy_generation 1"

# -o: the same text, in a file replaced whole, readable by others.
mkdir -p "$TMP/textfile"
(umask 022 && ctl stats --prometheus -o "$TMP/textfile/nfqd.prom") \
	|| fail "stats --prometheus -o failed"
[ "$(stat -c %a "$TMP/textfile/nfqd.prom")" = 644 ] || fail "mode $(stat -c %a "$TMP/textfile/nfqd.prom")"
[ "$(ls "$TMP/textfile")" = nfqd.prom ] || fail "stray files: $(ls "$TMP/textfile")"
grep -qxF "nfqd_packets_total{queue=\"0\"} $N" "$TMP/textfile/nfqd.prom" \
	|| fail "-o file: $(cat "$TMP/textfile/nfqd.prom")"
promtool check metrics <"$TMP/textfile/nfqd.prom" || fail "promtool rejects the -o file"

# A reader in a tight loop never sees a partial file, while traffic flows.
"$PY" - "$STATS" <<'EOF' &
import sys, time
path, end, reads = sys.argv[1], time.monotonic() + 3.5, 0
while time.monotonic() < end:
    with open(path) as f:
        data = f.read()
    lines = data.split("\n")
    if not data.endswith("\n") or len(lines) != 2 or len(lines[0].split()) != 25:
        print("partial stats file seen: %r" % data)
        sys.exit(1)
    reads += 1
print("# stats.sh: %d whole reads" % reads)
EOF
reader=$!
bg_pid $reader
send_udp_to "$NS_A" 192.0.2.2 3000 5000
sleep 1
send_udp_to "$NS_A" 192.0.2.2 3000 5000
wait $reader || fail "a reader saw a partial stats file"
wait_stats_field "$STATS" 0 10 $((N + 6000))
[ -z "$(ls "$TMP/run" | grep -v -e '^stats$' -e '^nfqd.sock$')" ] || fail "stray files: $(ls "$TMP/run")"

# counters reset: nfqd's counters to zero, the kernel's untouched.
ctl counters reset || fail "counters reset failed"
ctl -j stats >"$TMP/stats2.json" || fail "stats after reset"
json_check "$TMP/stats2.json" "
q = d['queues'][0]
assert q['packets'] == 0 and q['accepted'] == 0 and q['dropped'] == 0, q
assert q['id_sequence'] >= $((N + 6000)), q
" || fail "counters not reset"
ctl -j rules >"$TMP/rules2.json"
json_check "$TMP/rules2.json" "
h = [h for h in d['hooks'] if h['hook'] == 'input'][0]
assert h['rules'][0]['packets'] == 0 and h['policy_packets'] == 0, h
" || fail "rule counters not reset"
send_udp_to "$NS_A" 192.0.2.2 5 9
wait_stats_field "$STATS" 0 13 5

# A reload goes on counting the rules whose text it keeps (one series in
# rules, top and Prometheus); a rule of a new text starts at 0.
write_conf '    udp dport 10 drop;
    udp dport 9 drop;' >/dev/null
ctl reload >/dev/null || fail "reload failed"
send_udp_to "$NS_A" 192.0.2.2 2 9
wait_stats_field "$STATS" 0 13 7
ctl -j rules >"$TMP/rules3.json"
json_check "$TMP/rules3.json" "
h = [h for h in d['hooks'] if h['hook'] == 'input'][0]
r = {x['rule']: x for x in h['rules']}
assert r['udp dport 9 drop']['packets'] == 7, h
assert r['udp dport 9 drop']['bytes'] == 7 * 46, h
assert r['udp dport 10 drop']['packets'] == 0, h
" || fail "rule counters not kept by a reload: $(cat "$TMP/rules3.json")"

stop_nfqd
[ ! -e "$STATS" ] || fail "stats file left after exit"
[ ! -e "$SOCK" ] || fail "control socket left after exit"

# With the daemon gone, -o leaves nfqd_up 0 alone (no stale counters).
ctl stats --prometheus -o "$TMP/textfile/nfqd.prom" 2>/dev/null
rc=$?
[ $rc -eq 3 ] || fail "stats --prometheus -o without a daemon exited $rc, want 3"
grep -qx "nfqd_up 0" "$TMP/textfile/nfqd.prom" || fail "no nfqd_up 0: $(cat "$TMP/textfile/nfqd.prom")"
! grep -q nfqd_packets_total "$TMP/textfile/nfqd.prom" || fail "stale counters kept"
promtool check metrics <"$TMP/textfile/nfqd.prom" || fail "promtool rejects the down file"
[ "$(ls "$TMP/textfile")" = nfqd.prom ] || fail "stray files: $(ls "$TMP/textfile")"
ctl stats --prometheus >"$TMP/down.txt" 2>/dev/null
[ $? -eq 3 ] && [ ! -s "$TMP/down.txt" ] || fail "stdout output without a daemon"
log "ok"
