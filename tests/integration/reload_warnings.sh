#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# reload_warnings.sh - warnings reach the log at start and on reload (at
# warning level, each once), and do not stop either: a rule an earlier
# rule hides is logged with its FILE:LINE:COL and the reload goes ahead.
# A reload that goes ahead reports the warnings to nfqd-ctl too; one
# that fails, only its errors, not the warnings of the same file.
. "$TOP_SRCDIR/tests/lib.sh"
. "$TOP_SRCDIR/tests/integration/ctl_lib.sh"

SOCK="$TMP/nfqd.sock"
# The config with the rules $1 (one per line) in hook input, then $2.
write_conf() {
	cat >"$TMP/nfqd.conf" <<EOF2
options {
	queues 1;
	stats-file "$TMP/stats";
	control-socket "$SOCK";
}
hook input {
$1
}
${2:-}
EOF2
}
# Wait ($WAIT_SECONDS s at most) until the log has a line matching $1.
wait_log() {
	local end
	end=$(deadline "$WAIT_SECONDS")
	while before "$end"; do
		grep -q "$1" "$TMP/nfqd.log" && return 0
		sleep 0.05
	done
	fail "no log line like '$1': $(cat "$TMP/nfqd.log")"
}

ns_setup
# A kernel rule feeds hook input: no warning about the kernel's side.
queue_rule_setup 0
write_conf '	udp dport 9 accept;
	udp dport 9 drop;'
start_nfqd "$NS_B" "$TMP/nfqd.conf"
wait_bound "$NS_B" 0
wait_file "$SOCK"
want="^nfqd: warning: $TMP/nfqd.conf:8:2: rule \"udp dport 9 drop\" can never match"
wait_log "$want"
[ "$(grep -c 'can never match' "$TMP/nfqd.log")" -eq 1 ] ||
	fail "start: not one warning: $(cat "$TMP/nfqd.log")"

# A reload with a new hidden rule: it goes ahead, the warning is logged.
write_conf '	accept;
	udp dport 53 drop;'
ctl -j reload >"$TMP/reload.json" || fail "reload failed: $(cat "$TMP/reload.json")"
json_check "$TMP/reload.json" "assert d == {'generation': 2, 'warnings': [
    '$TMP/nfqd.conf:8:2: warning: rule \\\"udp dport 53 drop\\\" can never match: the rule at line 7 (\\\"accept\\\") takes every packet first']}, d" ||
	fail "reload JSON: $(cat "$TMP/reload.json")"
wait_log "^nfqd: warning: $TMP/nfqd.conf:8:2: rule \"udp dport 53 drop\" can never match: the rule at line 7 (\"accept\") takes every packet first"
# In text, the warning says "warning" once.
ctl reload >/dev/null 2>"$TMP/reload.err" || fail "text reload failed"
grep -qx "nfqd-ctl: $TMP/nfqd.conf:8:2: warning: rule \"udp dport 53 drop\" can never match: .*" "$TMP/reload.err" ||
	fail "text reload warning: $(cat "$TMP/reload.err")"

# A bad reload (a bad set file): the error goes to nfqd-ctl, the warning
# of the same file does not.
echo "not-an-address" >"$TMP/bad.txt"
write_conf '	accept;
	udp dport 53 drop;' "set s { type ipv4_addr; file \"$TMP/bad.txt\"; }"
ctl -j reload >"$TMP/bad.json" && fail "a bad reload passed"
json_check "$TMP/bad.json" "
assert len(d['errors']) == 1, d
assert d['errors'][0].startswith('$TMP/bad.txt:1:1: '), d
" || fail "bad reload JSON: $(cat "$TMP/bad.json")"
json_check "$(ctl -j status >"$TMP/st.json"; echo "$TMP/st.json")" \
	"assert d['generation'] == 3, d" || fail "a bad reload moved on"
stop_nfqd
log "ok"
