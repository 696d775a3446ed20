#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# ctl.sh - nfqd-ctl's commands, options, outputs and exit statuses
# (nfqd-ctl(8)): status (the config's absolute path), reload (good, bad,
# SIGHUP, a queue another process holds), rules, usage
# errors (2), an unreachable daemon (3), the socket's mode and removal.
. "$TOP_SRCDIR/tests/lib.sh"
. "$TOP_SRCDIR/tests/integration/ctl_lib.sh"

ns_setup
STATS="$TMP/run/stats"
SOCK="$TMP/run/nfqd.sock"
write_conf() {
	conf_file nfqd.conf <<EOF
options {
    queues { ${QUEUES:-0, 1} };
    stats-file "$STATS";
    control-socket "$SOCK";
}
hook input {
    $1
}
EOF
}
CONF=$(write_conf "udp dport 9 drop;")
# Started with a relative path: status shows it absolute.
cd "$TMP" || fail "cd $TMP"
start_nfqd "$NS_B" "$(basename "$CONF")"
cd - >/dev/null || fail "cd back"
wait_bound "$NS_B" 0 1
wait_file "$SOCK"

[ "$(stat -c %a "$SOCK")" = 600 ] || fail "socket mode $(stat -c %a "$SOCK"), want 600"
[ "$(stat -c %u "$SOCK")" = 0 ] || fail "socket not owned by root"

# status
ctl -j status >"$TMP/status.json" || fail "status -j failed"
json_check "$TMP/status.json" "
assert d['pid'] == $NFQD_PID, d
assert d['config'] == '$CONF', d
assert d['generation'] == 1 and d['queues'] == [0, 1], d
assert isinstance(d['uptime'], int) and 0 <= d['uptime'] < 60, d
assert isinstance(d['version'], str) and d['version'], d
" || fail "status JSON wrong"
ctl status >"$TMP/status.txt" || fail "status failed"
grep -q "^pid: *$NFQD_PID\$" "$TMP/status.txt" || fail "status text: $(cat "$TMP/status.txt")"
grep -q "^queues: *0 1\$" "$TMP/status.txt" || fail "status text: $(cat "$TMP/status.txt")"
# Global options may follow the command.
ctl status -j | "$PY" -c 'import json, sys; json.load(sys.stdin)' \
	|| fail "'status -j' is not JSON"

# A good reload: generation 2, the new rule in place.
write_conf "udp dport 7 drop; tcp dport 23 drop;" >/dev/null
ctl -j reload >"$TMP/reload.json" || fail "reload failed: $(cat "$TMP/reload.json")"
# No kernel rule feeds this test's queues: the reload says so (kernel_rules.sh).
json_check "$TMP/reload.json" "assert d['generation'] == 2 and [w[:12] for w in d['warnings']] == ['hook input: '], d" || fail "reload JSON"
ctl -j rules >"$TMP/rules.json" || fail "rules -j failed"
json_check "$TMP/rules.json" "
assert d['generation'] == 2, d
h = [h for h in d['hooks'] if h['hook'] == 'input'][0]
assert [r['rule'] for r in h['rules']] == ['udp dport 7 drop', 'tcp dport 23 drop'], h
assert [r['index'] for r in h['rules']] == [1, 2], h
" || fail "rules after reload"
ctl reload | grep -q "generation 3" || fail "text reload output"

# A bad reload: exit 1, FILE:LINE:COL: message, the policy kept.
write_conf "udp dport 7 drop; tcp dport nonsense drop;" >/dev/null
ctl -j reload >"$TMP/bad.json"
rc=$?
[ $rc -eq 1 ] || fail "bad reload exited $rc, want 1"
json_check "$TMP/bad.json" "
import re
assert re.match(r'^' + re.escape('$CONF') + r':[0-9]+:[0-9]+: .+', d['error']), d
" || fail "bad reload JSON: $(cat "$TMP/bad.json")"
ctl reload 2>"$TMP/bad.txt" >/dev/null
[ $? -eq 1 ] || fail "bad reload (text) did not exit 1"
grep -q "^$CONF:[0-9]*:[0-9]*: " "$TMP/bad.txt" || fail "bad reload text: $(cat "$TMP/bad.txt")"
ctl -j status >"$TMP/status2.json"
json_check "$TMP/status2.json" "assert d['generation'] == 3, d" || fail "generation moved on a bad reload"
kill -0 "$NFQD_PID" || fail "nfqd died on a bad reload"

# SIGHUP reloads too.
write_conf "udp dport 8 drop;" >/dev/null
kill -HUP "$NFQD_PID"
end=$(deadline "$WAIT_SECONDS")
until ctl -j status | grep -q '"generation": 4' || ! before "$end"; do
	sleep 0.1
done
ctl -j status | grep -q '"generation": 4' || fail "SIGHUP did not reload"

# A reload that cannot bind a queue another process holds says so, as a
# start does (core_startup.sh), and keeps the running policy.
other=$(conf_file other.conf <<EOF
options {
    queues 50-50;
    stats-file "$TMP/other.stats";
    control-socket "$TMP/other.sock";
}
EOF
)
ip netns exec "$NS_B" "$NFQD" -c "$other" >"$TMP/other.log" 2>&1 &
other_pid=$!
bg_pid $other_pid
wait_bound "$NS_B" 50
QUEUES="0, 1, 50" write_conf "udp dport 8 drop;" >/dev/null
out=$(ctl reload 2>&1) && fail "a reload bound queue 50, held by another nfqd: $out"
echo "$out" | grep -qF "queue 50: bind failed: already bound by another process (Operation not permitted): stop that process (another nfqd?) or take the queue out of \"queues\"" ||
	fail "reload of a held queue: $out"
log "reload of a held queue: $out"
# By SIGHUP: the queue's error, and one line that the reload failed with
# it; the generation kept.
before=$(wc -l <"$TMP/nfqd.log")
kill -HUP "$NFQD_PID"
end=$(deadline "$WAIT_SECONDS")
until tail -n +$((before + 1)) "$TMP/nfqd.log" | grep -q "reload failed" ||
		! before "$end"; do
	sleep 0.1
done
sleep 0.2
tail -n +$((before + 1)) "$TMP/nfqd.log" >"$TMP/hup.log"
grep -qxF "nfqd: error: reload failed, keeping generation 4: queue 50: bind failed: already bound by another process (Operation not permitted): stop that process (another nfqd?) or take the queue out of \"queues\"" "$TMP/hup.log" ||
	fail "SIGHUP onto a held queue: $(cat "$TMP/hup.log")"
[ "$(grep -c "reload failed" "$TMP/hup.log")" = 1 ] ||
	fail "SIGHUP onto a held queue: not one line saying so: $(cat "$TMP/hup.log")"
ctl -j status | grep -q '"generation": 4' || fail "a failed SIGHUP reload changed the generation"
kill -TERM $other_pid && wait $other_pid
write_conf "udp dport 8 drop;" >/dev/null

# A large answer (5000 rules, about 400 KiB of JSON) is written out in
# pieces as the client reads.
many=$(seq 10000 14999 | sed 's/.*/tcp dport & counter drop;/' | tr '\n' ' ')
write_conf "$many" >/dev/null
ctl reload >/dev/null || fail "reload with 5000 rules failed"
ctl -j rules >"$TMP/many.json" || fail "rules -j with 5000 rules failed"
json_check "$TMP/many.json" "
h = [h for h in d['hooks'] if h['hook'] == 'input'][0]
assert len(h['rules']) == 5000 and h['rules'][4999]['index'] == 5000, len(h['rules'])
" || fail "5000 rules not all listed"
[ "$(ctl rules | wc -l)" -ge 5006 ] || fail "rules text not complete"

# counters reset answers OK, quietly.
[ -z "$(ctl counters reset)" ] || fail "counters reset printed something"

# Usage errors: 2.
for args in "" "bogus" "counters" "counters zero" "status extra" \
	"stats --bogus" "rules --prometheus" "stats --prometheus -j" "-x status"; do
	# shellcheck disable=SC2086
	ctl $args >/dev/null 2>&1
	rc=$?
	[ $rc -eq 2 ] || fail "'nfqd-ctl $args' exited $rc, want 2"
done
in_b "$NFQD_CTL" -s >/dev/null 2>&1
[ $? -eq 2 ] || fail "-s without a path did not exit 2"
"$NFQD_CTL" -h | grep -q "counters reset" || fail "-h"
"$NFQD_CTL" --help >/dev/null || fail "--help exit status"

# Unreachable: 3, naming the socket and the reason.
in_b "$NFQD_CTL" -s "$TMP/nope.sock" status 2>"$TMP/unreach.txt"
rc=$?
[ $rc -eq 3 ] || fail "unreachable daemon: exit $rc, want 3"
grep -q "$TMP/nope.sock.*No such file or directory" "$TMP/unreach.txt" \
	|| fail "unreachable message: $(cat "$TMP/unreach.txt")"
grep -qF "is nfqd running? (systemctl status nfqd)" "$TMP/unreach.txt" \
	|| fail "unreachable message says not what to do: $(cat "$TMP/unreach.txt")"
# With -j, one JSON document on stdout all the same: {"error": reason}.
in_b "$NFQD_CTL" -s "$TMP/nope.sock" -j status >"$TMP/unreach.json" 2>/dev/null
rc=$?
[ $rc -eq 3 ] || fail "unreachable daemon, -j: exit $rc, want 3"
"$PY" -c 'import json, sys
e = json.load(open(sys.argv[1]))["error"]
assert sys.argv[2] in e and "is nfqd running?" in e, e' \
	"$TMP/unreach.json" "$TMP/nope.sock" ||
	fail "unreachable daemon, -j: stdout is not {\"error\": ...}: $(cat "$TMP/unreach.json")"
in_b "$NFQD_CTL" -s "$TMP/nope.sock" -j set list x >"$TMP/unreach.json" 2>/dev/null
[ $? -eq 3 ] || fail "unreachable daemon, -j set: not exit 3"
"$PY" -c 'import json, sys; json.load(open(sys.argv[1]))["error"]' \
	"$TMP/unreach.json" || fail "unreachable daemon, -j set: $(cat "$TMP/unreach.json")"
# A socket nobody listens on.
"$PY" -c 'import socket, sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])' "$TMP/dead.sock"
in_b "$NFQD_CTL" -s "$TMP/dead.sock" status 2>"$TMP/dead.txt"
[ $? -eq 3 ] || fail "dead socket: not exit 3"
grep -q "Connection refused.*is nfqd running?" "$TMP/dead.txt" || fail "dead socket message: $(cat "$TMP/dead.txt")"

# A second daemon must not steal a live socket.
CONF2=$(conf_file nfqd2.conf <<EOF
options {
    queues { 5 };
    stats-file "$TMP/run2/stats";
    control-socket "$SOCK";
}
EOF
)
in_b "$NFQD" -c "$CONF2" >"$TMP/nfqd2.log" 2>&1
[ $? -eq 1 ] || fail "a second daemon on the same socket did not exit 1"
ctl status >/dev/null || fail "the first daemon lost its socket"

stop_nfqd
[ ! -e "$SOCK" ] || fail "socket left after exit"
[ ! -e "$STATS" ] || fail "stats file left after exit"
in_b "$NFQD_CTL" -s "$SOCK" status 2>/dev/null
[ $? -eq 3 ] || fail "stopped daemon: not exit 3"
log "ok"
