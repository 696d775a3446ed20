#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# sets_cmd.sh - "nfqd-ctl sets" lists every named set with its type,
# element count, approximate memory and file ("-" / null for a set given
# inline), as a table and with -j as JSON; a 200000-element file set is
# counted whole.
. "$TOP_SRCDIR/tests/lib.sh"
. "$TOP_SRCDIR/tests/integration/ctl_lib.sh"

ns_setup
SOCK="$TMP/nfqd.sock"
awk 'BEGIN { for (i = 0; i < 200000; i++)
	printf "10.%d.%d.%d\n", int(i / 65536), int(i / 256) % 256, i % 256 }' \
	>"$TMP/big.txt"
CONF=$(conf_file nfqd.conf <<EOF2
options {
	queues { 0 };
	stats-file "$TMP/stats";
	control-socket "$SOCK";
}
set few { type inet_service; flags interval; elements = { 22, 80-90, 443 }; }
set big { type ipv4_addr; file "big.txt"; }
hook input { ip saddr @big drop; tcp dport @few accept; }
EOF2
)
start_nfqd "$NS_B" "$CONF"
wait_bound "$NS_B" 0
wait_file "$SOCK"

ctl -j sets >"$TMP/sets.json" || fail "sets -j exited $?"
json_check "$TMP/sets.json" "assert d == {'sets': [
    {'name': 'few', 'type': 'inet_service', 'elements': 3,
     'static_elements': 3, 'memory': 96, 'file': None},
    {'name': 'big', 'type': 'ipv4_addr', 'elements': 200000,
     'static_elements': 200000, 'memory': 6400000, 'file': 'big.txt'}]}" ||
	fail "sets JSON"

ctl sets >"$TMP/sets.txt" || fail "sets exited $?"
{
	printf '%-16s %-12s %9s %7s  %s\n' set type elements memory file
	printf '%-16s %-12s %9s %7s  %s\n' few inet_service 3 96 -
	printf '%-16s %-12s %9s %7s  %s\n' big ipv4_addr 200000 6250K big.txt
} >"$TMP/want.txt"
diff -u "$TMP/want.txt" "$TMP/sets.txt" || fail "sets text"
log "$(cat "$TMP/sets.txt")"

# Extra words are a usage error (2), as for every other command.
ctl sets extra >/dev/null 2>&1
rc=$?
[ "$rc" -eq 2 ] || fail "sets extra exited $rc, want 2"
stop_nfqd
