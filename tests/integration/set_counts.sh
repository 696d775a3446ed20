#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# set_counts.sh - every named set's element count (distinct values plus
# merged intervals, those of its file too) is in "nfqd-ctl rules" (JSON
# and text) and in the log line of a reload, so that a reload that read
# a truncated set file shows it.
. "$TOP_SRCDIR/tests/lib.sh"
. "$TOP_SRCDIR/tests/integration/ctl_lib.sh"

ns_setup
SOCK="$TMP/nfqd.sock"
seq 1 12 | sed 's/^/10.0.0./' >"$TMP/many.txt"
CONF=$(conf_file nfqd.conf <<EOF2
options {
	queues { 0 };
	stats-file "$TMP/stats";
	control-socket "$SOCK";
}
set many { type ipv4_addr; file "many.txt"; }
set few { type inet_service; flags interval; elements = { 22, 80-90, 443 }; }
set one { type inet_service; elements = { 53 }; }
hook input { ip saddr @many drop; tcp dport @few accept; udp dport @one accept; }
EOF2
)
start_nfqd "$NS_B" "$CONF"
wait_bound "$NS_B" 0
wait_file "$SOCK"
ctl -j rules >"$TMP/rules.json" || fail "rules"
json_check "$TMP/rules.json" "assert d['sets'] == [
    {'set': 'many', 'elements': 12}, {'set': 'few', 'elements': 3},
    {'set': 'one', 'elements': 1}], d['sets']" || fail "rules JSON sets"
ctl rules >"$TMP/rules.txt" || fail "rules text"
grep -qx "set many: 12 elements" "$TMP/rules.txt" || fail "rules text: $(cat "$TMP/rules.txt")"
grep -qx "set one: 1 element" "$TMP/rules.txt" || fail "rules text: $(cat "$TMP/rules.txt")"

seq 1 20 | sed 's/^/10.0.1./' >>"$TMP/many.txt"
ctl reload >/dev/null 2>&1 || fail "reload"
grep -q "reloaded $CONF: generation 2, 1 queues, sets: many 32 elements, few 3 elements, one 1 element$" \
	"$TMP/nfqd.log" || fail "reload log line: $(grep reloaded "$TMP/nfqd.log")"
log "$(grep reloaded "$TMP/nfqd.log")"
stop_nfqd
