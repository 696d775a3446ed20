#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# stats_watch.sh - "nfqd-ctl stats -w": under traffic, every interval a
# rates table (text) or one JSON document a line (-j) with the counters,
# "rates" above zero and the measured "interval"; -n stops after COUNT
# intervals; "counters reset" in the middle gives no negative rate; a
# daemon that cannot be reached at the start is exit 3.
. "$TOP_SRCDIR/tests/lib.sh"
. "$TOP_SRCDIR/tests/integration/ctl_lib.sh"

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
}
EOF2
)
start_nfqd "$NS_B" "$CONF"
wait_bound "$NS_B" 0
wait_file "$SOCK"

gen="$TOP_BUILDDIR/tests/bench/nfqd-gen"
[ -x "$gen" ] || fail "generator $gen not built"
# Paced traffic, half of it to the drop rule's port.
(
	while :; do
		in_a "$gen" -q -d 192.0.2.2 -n 500 -r 1000 -p 9 -P 2 || sleep 0.2
	done
) &
bg_pid $!
wait_stats_nonzero() {
	local end
	end=$(deadline "$WAIT_SECONDS")
	while before "$end"; do
		[ "$(awk '$1 == 0 { print $10 }' "$TMP/stats" 2>/dev/null)" -gt 0 ] 2>/dev/null && return 0
		sleep 0.1
	done
	fail "no traffic reached nfqd"
}
wait_stats_nonzero

# Text: a heading and a row per interval, time-stamped.
ctl stats -w 0.5 -n 3 >"$TMP/watch.txt" || fail "stats -w failed"
cat "$TMP/watch.txt"
[ "$(grep -c 'QUEUE CPU *PKT/S' "$TMP/watch.txt")" -eq 3 ] || fail "not 3 tables"
awk '$2 == 0 { n++; if ($4 == "0" || $4 == "-" || $6 == "0" || $7 == "0") bad++ }
     END { exit !(n == 3 && !bad) }' "$TMP/watch.txt" \
	|| fail "rows without packets, accepted and dropped rates above zero"
grep -q '^[0-9][0-9]:[0-9][0-9]:[0-9][0-9]  ' "$TMP/watch.txt" || fail "no time stamps"

# JSON lines.
ctl -j stats -w 0.5 -n 3 >"$TMP/watch.json" || fail "stats -w -j failed"
[ "$(wc -l <"$TMP/watch.json")" -eq 3 ] || fail "not 3 JSON lines: $(cat "$TMP/watch.json")"
"$PY" - "$TMP/watch.json" <<'PY' || fail "JSON lines wrong"
import json, sys
prev = None
for line in open(sys.argv[1]):
    d = json.loads(line)
    assert 0.3 < d["interval"] < 5, d["interval"]
    assert d["time"] > 1e9, d
    q = d["queues"][0]
    r = q["rates"]
    for k in ("packets", "bytes", "accepted", "dropped", "batches"):
        assert r[k] > 0, (k, r)
    for k in ("other", "enobufs", "errors", "incomplete", "orphans",
              "queue_dropped", "user_dropped"):
        assert k in r, (k, r)
    assert r["packets_per_batch"] >= 1, r
    assert q["packets"] > 0 and "queue_total" in q, q
    if prev is not None:
        # The rate is the counters' growth over the client's interval.
        want = (q["packets"] - prev["packets"]) / d["interval"]
        assert abs(r["packets"] - want) <= 0.01 * want + 1, (r, want)
    prev = q
print("# stats_watch.sh: %s" % line.strip()[:160])
PY

# Counters reset while watching: the counters go down, no rate is negative.
# The reset comes once the watcher has shown two samples (not after a
# sleep: a slow start would put every sample after the reset), and 20
# samples (6 s) leave the reset time to land before the last.
ip netns exec "$NS_B" "$NFQD_CTL" -s "$SOCK" -j stats -w 0.3 -n 20 >"$TMP/reset.json" &
watcher=$!
bg_pid $watcher
end=$(deadline "$WAIT_SECONDS")
while [ "$(wc -l <"$TMP/reset.json")" -lt 2 ] && before "$end"; do
	kill -0 $watcher 2>/dev/null || break
	sleep 0.05
done
[ "$(wc -l <"$TMP/reset.json")" -ge 2 ] || fail "stats -w showed no two samples: $(cat "$TMP/reset.json")"
ctl counters reset || fail "counters reset failed"
wait $watcher || fail "stats -w across a reset failed"
"$PY" - "$TMP/reset.json" <<'PY' || fail "rates across a counters reset"
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
assert len(lines) == 20, len(lines)
went_down = False
for prev, d in zip(lines, lines[1:]):
    q, p = d["queues"][0], prev["queues"][0]
    went_down |= q["packets"] < p["packets"]
    for k in ("packets", "bytes", "accepted", "dropped", "batches"):
        assert q["rates"][k] >= 0, (k, q)
    for k, v in q["rates"].items():
        assert v is None or v >= 0, (k, v, q)
assert went_down, "the reset did not show"
print("# stats_watch.sh: rates across a reset all >= 0")
PY

# Usage errors and an absent daemon.
ctl stats -n 2 >/dev/null 2>&1; [ $? -eq 2 ] || fail "-n without -w is not a usage error"
ctl stats -w 0 >/dev/null 2>&1; [ $? -eq 2 ] || fail "-w 0 is not a usage error"
ctl stats -w 1 --prometheus >/dev/null 2>&1; [ $? -eq 2 ] || fail "-w with --prometheus accepted"
"$NFQD_CTL" -s "$TMP/absent.sock" stats -w 0.5 -n 1 2>"$TMP/absent.err"
rc=$?
[ $rc -eq 3 ] || fail "stats -w on an absent socket exited $rc, want 3"
grep -q 'absent.sock' "$TMP/absent.err" || fail "message: $(cat "$TMP/absent.err")"
stop_nfqd
log "ok"
