#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# sets_cmd.sh - "nfqd-ctl sets" lists every named set with its type,
# element count, approximate memory and file ("-" / null for a set given
# inline), and its runtime counters, as a table and with -j as JSON; a
# 200000-element file set is counted whole, and a 20000-name domain set's
# memory is what its table, names and filter hold (not 32 bytes a name).
. "$TOP_SRCDIR/tests/lib.sh"
. "$TOP_SRCDIR/tests/integration/ctl_lib.sh"

ns_setup
SOCK="$TMP/nfqd.sock"
awk 'BEGIN { for (i = 0; i < 200000; i++)
	printf "10.%d.%d.%d\n", int(i / 65536), int(i / 256) % 256, i % 256 }' \
	>"$TMP/big.txt"
awk 'BEGIN { for (i = 0; i < 20000; i++)
	printf "0.0.0.0 host%d.zone%d.example\n", i, i % 97 }' >"$TMP/names.txt"
CONF=$(conf_file nfqd.conf <<EOF2
options {
	queues { 0 };
	copy-range 4096;
	stats-file "$TMP/stats";
	control-socket "$SOCK";
}
set few { type inet_service; flags interval; elements = { 22, 80-90, 443 }; }
set big { type ipv4_addr; file "big.txt"; }
set names { type domain; file "names.txt"; }
set ifs { type ifname; elements = { "lo", "wg*", "veth*", "wg*" }; }
hook input { ip saddr @big drop; tcp dport @few accept; dns qname @names drop;
	iifname @ifs udp dport 9999 drop; }
EOF2
)
start_nfqd "$NS_B" "$CONF"
wait_bound "$NS_B" 0
wait_file "$SOCK"

ctl -j sets >"$TMP/sets.json" || fail "sets -j exited $?"
# The static part as the config has it; no runtime element yet, so every
# runtime counter is 0 and memory is 32 bytes a static element plus the
# (empty) runtime table's own few hundred bytes.
json_check "$TMP/sets.json" "
s = d['sets']
assert [x['name'] for x in s] == ['few', 'big', 'names', 'ifs'], s
# An ifname set counts its wildcards (once each) with its names.
want = {'few': ('inet_service', 3, None), 'big': ('ipv4_addr', 200000, 'big.txt'),
        'names': ('domain', 20000, 'names.txt'), 'ifs': ('ifname', 3, None)}
for x in s:
    t, n, f = want[x['name']]
    assert (x['type'], x['elements'], x['static_elements'], x['file']) == \
        (t, n, n, f), x
    if t == 'domain':
        # 65536 slots of 8 bytes, the names, a filter of 64 KiB.
        assert 40 * n < x['memory'] < 100 * n, x
    else:
        assert n * 32 <= x['memory'] < n * 32 + 4096, x
    for k in ('runtime_elements', 'adds', 'deletes', 'expiries',
              'table_full', 'timeout'):
        assert x[k] == 0, (k, x)
    # An ifname set has no runtime elements: no runtime table.
    assert x['size'] == (0 if t == 'ifname' else 65536), x
    assert x['timeout_flag'] is False, x
assert d['limits'] == [], d
" || fail "sets JSON"

ctl sets >"$TMP/sets.txt" || fail "sets exited $?"
# The same values as a table; memory as nfqd-ctl shows it (K above 10K).
"$PY" -c '
import json, sys
d = json.load(open(sys.argv[1]))
fmt = "%-16s %-12s %9s %9s %9s %7s %9s %9s %9s %6s  %s"
print(fmt % ("set", "type", "elements", "runtime", "size", "memory", "adds",
             "deletes", "expiries", "full", "source"))
for x in d["sets"]:
    m = x["memory"]
    m = "%dM" % (m >> 20) if m >= 10 << 20 else \
        "%dK" % (m >> 10) if m >= 10 << 10 else "%d" % m
    print(fmt % (x["name"], x["type"], x["elements"], 0, x["size"], m, 0, 0,
                 0, 0, x["file"] or "config"))
    assert x["source"] == (x["file"] or "config"), x
' "$TMP/sets.json" >"$TMP/want.txt"
diff -u "$TMP/want.txt" "$TMP/sets.txt" || fail "sets text"
grep -q '^big  *ipv4_addr  *200000  *0  *65536  *6250K .* big.txt$' \
	"$TMP/sets.txt" || fail "sets text: the big set's row"
log "$(cat "$TMP/sets.txt")"

# Extra words are a usage error (2), as for every other command.
ctl sets extra >/dev/null 2>&1
rc=$?
[ "$rc" -eq 2 ] || fail "sets extra exited $rc, want 2"
stop_nfqd
