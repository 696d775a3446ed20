#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# set_runtime.sh - runtime set elements (nfqd-ctl(8) SETS, nfqd.conf(5)
# RUNTIME ELEMENTS): "set add" drops a source from its next packets,
# "timeout" expires on time, "set delete" and "set flush" let it pass
# again, "set list" shows origins, "sets" counts, bulk loads from
# standard input, errors exit 1 with one line, and a reload keeps the
# runtime elements of a set that keeps its type and drops the others.
. "$TOP_SRCDIR/tests/lib.sh"
. "$TOP_SRCDIR/tests/integration/ctl_lib.sh"

ns_setup
sink_setup
queue_rule_setup 0
SOCK="$TMP/nfqd.sock"
write_conf() {
	conf_file nfqd.conf <<EOF
options {
    queues 1;
    stats-file "$TMP/stats";
    control-socket "$SOCK";
    ${2:-}
}
$1
hook input {
    ip saddr @blocked drop;
    udp dport @ports drop;
}
EOF
}
SETS='set blocked { type ipv4_addr; flags timeout; size 200000; }
set ports { type inet_service; elements = { 7 }; }
set spare { type ipv4_addr; }
set tiny { type ipv4_addr; size 2; }'
CONF=$(write_conf "$SETS")
start_nfqd "$NS_B" "$CONF"
wait_bound "$NS_B" 0
wait_file "$SOCK"

# Packets nfqd has dropped (its stats); wait until they are $1.
nfqd_dropped() {
	ctl -j stats | "$PY" -c 'import json, sys; print(sum(q["dropped"] for q in json.load(sys.stdin)["queues"]))'
}
wait_dropped() {
	local n=0
	until [ "$(nfqd_dropped)" -ge "$1" ]; do
		n=$((n + 1)); [ $n -lt 100 ] || fail "nfqd dropped $(nfqd_dropped), want $1"
		sleep 0.1
	done
}

# $1 datagrams from A to port 9: how many reach the sink.
passed() {
	local before after
	before=$(sink_udp_packets)
	send_udp_to "$NS_A" 192.0.2.2 "$1" 9
	# Every datagram is judged before the stats say so.
	after=$(wait_sink_udp $((before + $1)))
	echo $((after - before))
}
[ "$(passed 5)" = 5 ] || fail "packets dropped before any runtime element"

ctl set add blocked 192.0.2.1 >"$TMP/add.txt" || fail "set add failed: $(cat "$TMP/add.txt")"
grep -q "^set blocked: 1 added, 0 already present$" "$TMP/add.txt" || fail "add text: $(cat "$TMP/add.txt")"
# Dropped from the first packet sent after the answer.
before=$(sink_udp_packets)
dropped=$(nfqd_dropped)
send_udp_to "$NS_A" 192.0.2.2 5 9
wait_dropped $((dropped + 5))
[ "$(sink_udp_packets)" = "$before" ] || fail "a packet from an added source passed"

ctl -j set list blocked >"$TMP/list.json" || fail "set list failed"
json_check "$TMP/list.json" "
assert d['set'] == 'blocked' and d['type'] == 'ipv4_addr', d
assert d['elements'] == [{'element': '192.0.2.1', 'origin': 'runtime', 'expires': None}], d
" || fail "set list JSON"
ctl -j set list ports >"$TMP/list.json" || fail "set list ports failed"
json_check "$TMP/list.json" "
assert d['elements'] == [{'element': '7', 'origin': 'config', 'expires': None}], d
" || fail "set list of a config element"

ctl -j set delete blocked 192.0.2.1 192.0.2.99 >"$TMP/del.json" || fail "set delete failed"
json_check "$TMP/del.json" "assert d['deleted'] == 1 and d['absent'] == 1, d" || fail "delete JSON"
[ "$(passed 3)" = 3 ] || fail "packets dropped after the delete"

# A timeout: dropped at once, passing again once it has run out.
ctl set add blocked 192.0.2.1 timeout 4s >/dev/null || fail "set add with timeout failed"
before=$(sink_udp_packets)
dropped=$(nfqd_dropped)
send_udp_to "$NS_A" 192.0.2.2 3 9
ctl -j set list blocked >"$TMP/list.json"
json_check "$TMP/list.json" "
e = d['elements'][0]
assert e['origin'] == 'runtime' and 0 < e['expires'] <= 4, d
" || fail "time left"
wait_dropped $((dropped + 3))
[ "$(sink_udp_packets)" = "$before" ] || fail "a packet passed during the timeout"
n=0
while [ "$(passed 1)" != 1 ]; do
	n=$((n + 1))
	[ $n -lt 100 ] || fail "element did not expire within 4 s + 10 s"
	sleep 0.1
done
log "expired after the timeout"
# The sweeper frees it and counts the expiry.
n=0
until ctl -j sets | "$PY" -c '
import json, sys
d = {s["name"]: s for s in json.load(sys.stdin)["sets"]}
sys.exit(0 if d["blocked"]["expiries"] == 1 and d["blocked"]["runtime_elements"] == 0 else 1)'; do
	n=$((n + 1)); [ $n -lt 50 ] || fail "expiry not counted: $(ctl -j sets)"
	sleep 0.1
done

# Errors: exit 1 with one line, nothing changed.
for args in "add nosuch 192.0.2.1" "add spare 192.0.2.1 timeout 1s" \
	    "add blocked 10.0.0.0/8" "add blocked not-an-address" \
	    "delete ports 7" "add blocked 192.0.2.5 timeout 1y" \
	    "add blocked 2001:db8::1"; do
	# shellcheck disable=SC2086
	ctl set $args >"$TMP/out" 2>"$TMP/err" && fail "set $args succeeded"
	[ $? -eq 1 ] || fail "set $args: exit status not 1"
	[ "$(wc -l <"$TMP/err")" = 1 ] || fail "set $args: $(cat "$TMP/err")"
	log "set $args: $(cat "$TMP/err")"
done
ctl set frob blocked >/dev/null 2>&1; [ $? -eq 2 ] || fail "bad subcommand: not a usage error"
ctl -j set add blocked 192.0.2.7 bad-one >"$TMP/err.json" && fail "partly bad add succeeded"
json_check "$TMP/err.json" "assert 'bad-one' in d['error'], d" || fail "error JSON"
ctl -j sets >"$TMP/sets.json" || fail "sets failed"
json_check "$TMP/sets.json" "
d = {s['name']: s for s in d['sets']}
b = d['blocked']
assert b['type'] == 'ipv4_addr' and b['runtime_elements'] == 0, b
assert b['adds'] == 2 and b['deletes'] == 1 and b['expiries'] == 1, b
assert b['size'] == 200000 and b['file'] is None, b
assert d['ports']['static_elements'] == 1 and d['ports']['elements'] == 1, d
assert d['spare']['size'] == 65536, d
" || fail "sets JSON"
ctl sets >"$TMP/sets.txt" || fail "sets text"
grep -q "^blocked  *ipv4_addr " "$TMP/sets.txt" || fail "sets text: $(cat "$TMP/sets.txt")"

# Bulk from standard input: 100000 addresses, in several requests.
"$PY" -c '
for i in range(100000):
    print("10.%d.%d.%d" % (i >> 16, (i >> 8) & 255, i & 255))
' >"$TMP/bulk.txt"
echo 192.0.2.1 >>"$TMP/bulk.txt"
in_b "$NFQD_CTL" -s "$SOCK" -j set add blocked - <"$TMP/bulk.txt" >"$TMP/bulk.json" \
	|| fail "bulk add failed: $(cat "$TMP/bulk.json")"
json_check "$TMP/bulk.json" "assert d['added'] == 100001 and d['requests'] > 1, d" || fail "bulk JSON"
[ "$(passed 2)" = 0 ] || fail "the last address of a bulk load passes"
ctl stats --prometheus >"$TMP/prom.txt" || fail "stats --prometheus"
grep -q '^nfqd_set_runtime_elements{set="blocked"} 100001$' "$TMP/prom.txt" || fail "prometheus: $(grep nfqd_set "$TMP/prom.txt")"
grep -q '^nfqd_set_adds_total{set="blocked"} 100003$' "$TMP/prom.txt" || fail "prometheus adds: $(grep nfqd_set_adds "$TMP/prom.txt")"
grep -q '^# TYPE nfqd_set_expiries_total counter$' "$TMP/prom.txt" || fail "prometheus types"
head -n 50000 "$TMP/bulk.txt" | in_b "$NFQD_CTL" -s "$SOCK" set delete blocked - \
	>"$TMP/bulkdel.txt" || fail "bulk delete failed"
grep -q "50000 deleted" "$TMP/bulkdel.txt" || fail "bulk delete: $(cat "$TMP/bulkdel.txt")"

# A reload keeps them (same type), even with a new size.
CONF=$(write_conf "$(echo "$SETS" | sed 's/size 200000/size 300000/')")
ctl reload >/dev/null || fail "reload failed"
[ "$(passed 2)" = 0 ] || fail "runtime element lost by a reload"
ctl -j sets >"$TMP/sets.json"
json_check "$TMP/sets.json" "
d = {s['name']: s for s in d['sets']}
assert d['blocked']['runtime_elements'] == 50001 and d['blocked']['size'] == 300000, d
" || fail "sets after reload"
ctl set flush blocked | grep -q "set blocked: 50001 deleted" || fail "flush"
[ "$(passed 2)" = 2 ] || fail "dropped after flush"

# A changed type drops them, with a line in the log.
ctl set add spare 192.0.2.1 >/dev/null || fail "add to spare"
CONF=$(write_conf "$(echo "$SETS" | sed 's/set spare { type ipv4_addr; }/set spare { type inet_service; }/')")
ctl reload >/dev/null || fail "reload (type change) failed"
n=0
until grep -q "set spare: type changed: 1 runtime elements dropped" "$TMP/nfqd.log"; do
	n=$((n + 1)); [ $n -lt 50 ] || fail "no log line for the dropped elements: $(cat "$TMP/nfqd.log")"
	sleep 0.1
done

# A runtime element with a config element's value: its delete works (the
# value stays in the config); the config element alone cannot be deleted.
ctl set add ports 7 >"$TMP/out" || fail "add of a config value: $(cat "$TMP/out")"
grep -q "^set ports: 1 added" "$TMP/out" || fail "add of a config value: $(cat "$TMP/out")"
ctl -j set delete ports 7 >"$TMP/del.json" 2>&1 || fail "delete of a runtime element with a config value: $(cat "$TMP/del.json")"
json_check "$TMP/del.json" "assert d['deleted'] == 1 and d['absent'] == 0, d" || fail "delete JSON (config value)"
ctl set delete ports 7 >/dev/null 2>&1 && fail "config element deleted"
ctl -j set list ports >"$TMP/list.json" || fail "set list ports failed"
json_check "$TMP/list.json" "
assert d['elements'] == [{'element': '7', 'origin': 'config', 'expires': None}], d
" || fail "config element gone after the runtime delete"

# An add refused part-way (the set full) changes nothing, not even the
# set's counters.
ctl set add tiny 192.0.2.1 >/dev/null || fail "add to tiny"
ctl set add tiny 192.0.2.2 192.0.2.3 >/dev/null 2>&1 && fail "an add past the size succeeded"
ctl -j sets >"$TMP/sets.json" || fail "sets failed"
json_check "$TMP/sets.json" "
t = {s['name']: s for s in d['sets']}['tiny']
assert t['runtime_elements'] == 1 and t['adds'] == 1 and t['deletes'] == 0, t
" || fail "a refused add changed the counters: $(cat "$TMP/sets.json")"
ctl set flush tiny >/dev/null || fail "flush tiny"

# A restart keeps them: saved at stop, restored at start (and the file
# removed), with the time they had left.
ctl set add blocked 192.0.2.1 >/dev/null || fail "add before restart"
ctl set add blocked 192.0.2.50 timeout 1h >/dev/null || fail "add before restart"
stop_nfqd
[ -f "$TMP/sets.state" ] || fail "no state file at stop: $(cat "$TMP/nfqd.log")"
grep -q "saved 2 runtime elements" "$TMP/nfqd.log" || fail "no save log line"
start_nfqd "$NS_B" "$CONF"
wait_bound "$NS_B" 0
wait_file "$SOCK"
grep -q "restored 2 runtime elements" "$TMP/nfqd.log" || fail "not restored: $(cat "$TMP/nfqd.log")"
[ ! -e "$TMP/sets.state" ] || fail "state file left after start"
ctl -j set list blocked >"$TMP/list.json"
json_check "$TMP/list.json" "
e = {x['element']: x for x in d['elements']}
assert e['192.0.2.1']['expires'] is None and e['192.0.2.1']['origin'] == 'runtime', d
assert 3500 < e['192.0.2.50']['expires'] <= 3600, d
" || fail "elements after restart"
[ "$(passed 2)" = 0 ] || fail "restored element does not drop"

# set-state-file none: nothing saved.
CONF=$(write_conf "$SETS" "set-state-file none;")
ctl reload >/dev/null || fail "reload with set-state-file none"
stop_nfqd
[ ! -e "$TMP/sets.state" ] || fail "state saved with set-state-file none"
log "ok"
