#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# kernel_rules.sh - nfqd knows whether kernel rules feed each hook its
# policy judges: "nfqd-ctl status" says per hook whether a rule queues its
# packets to nfqd's queues (read from the kernel's nf_tables ruleset:
# iptables-nft's NFQUEUE behind a jump; not one to another queue) and
# when its last packet came ("no packet seen" until one does); a reload
# whose new policy uses a hook no kernel rule queues from succeeds with a
# warning naming "nfqd-rules install", in the JSON answer, the text answer
# and the log (by SIGHUP: in the log); after nfqd-rules install the hook
# is covered and a reload is quiet; a start with unfed hooks warns.
. "$TOP_SRCDIR/tests/lib.sh"
. "$TOP_SRCDIR/tests/integration/ctl_lib.sh"

NFQD_RULES=${NFQD_RULES:-$TOP_BUILDDIR/contrib/nfqd-rules}
ns_setup
sink_setup
require_cmd iptables nft
SOCK="$TMP/nfqd.sock"
write_conf() {	# extra hook block on stdin
	{
		cat <<EOF2
options {
	queues { 0 };
	stats-file "$TMP/stats";
	control-socket "$SOCK";
}
hook input { udp dport 9 drop; }
EOF2
		cat
	} >"$TMP/nfqd.conf"
}
echo | write_conf
# Input is fed through a chain of our own, as nfqd-rules does it.
in_b iptables -t mangle -N FEED || fail "iptables -N"
in_b iptables -t mangle -A FEED -p udp -j NFQUEUE --queue-num 0 || fail "iptables NFQUEUE"
in_b iptables -t mangle -A INPUT -j FEED || fail "iptables jump"
start_nfqd "$NS_B" "$TMP/nfqd.conf"
wait_bound "$NS_B" 0
wait_file "$SOCK"

hook_field() {	# HOOK FIELD: from nfqd-ctl -j status
	ctl -j status | "$PY" -c 'import json, sys
h = [h for h in json.load(sys.stdin)["hooks"] if h["hook"] == sys.argv[1]]
print(json.dumps(h[0][sys.argv[2]]) if h else "absent")' "$1" "$2"
}
grep -q "start: hook" "$TMP/nfqd.log" && fail "a start warning although input is fed: $(cat "$TMP/nfqd.log")"
[ "$(hook_field input kernel_rules)" = true ] || fail "input: kernel_rules $(hook_field input kernel_rules): $(ctl -j status)"
[ "$(hook_field input last_packet)" = null ] || fail "input: a packet before any was sent"
[ "$(hook_field output kernel_rules)" = absent ] || fail "output listed though the policy has no output rules"
ctl status >"$TMP/status.txt" || fail "status"
grep -q "^hook input *kernel rules yes (ipv4), no packet seen$" "$TMP/status.txt" \
	|| fail "status text: $(cat "$TMP/status.txt")"
send_udp_to "$NS_A" 192.0.2.2 5 9
wait_stats_field "$TMP/stats" 0 10 5
seen=$(hook_field input last_packet)
[ "$seen" -ge 0 ] 2>/dev/null && [ "$seen" -lt 60 ] || fail "input last_packet '$seen' after traffic"
ctl status | grep -q "^hook input *kernel rules yes (ipv4), last packet [0-9]*s ago$" \
	|| fail "status text after traffic: $(ctl status)"
log "status: $(ctl status | grep '^hook')"

# A reload that starts using hook output, which no rule feeds.
printf 'hook output { udp dport 6100 drop; }\n' | write_conf
ctl -j reload >"$TMP/reload.json" 2>"$TMP/reload.err" || fail "reload failed: $(cat "$TMP/reload.json" "$TMP/reload.err")"
json_check "$TMP/reload.json" '
w = d["warnings"]
assert len(w) == 1, w
assert w[0].startswith("hook output: ") and "nfqd-rules install" in w[0], w' \
	|| fail "reload warnings"
printf 'hook output { udp dport 6101 drop; }\n' | write_conf
ctl reload >"$TMP/reload.txt" 2>"$TMP/reload.err" || fail "text reload failed"
grep -q "^reloaded: generation 3$" "$TMP/reload.txt" || fail "reload text: $(cat "$TMP/reload.txt")"
grep -q "^nfqd-ctl: warning: hook output: .*run: nfqd-rules install" "$TMP/reload.err" \
	|| fail "no warning on stderr: $(cat "$TMP/reload.err")"
grep -q "warning: control: reload: hook output: .*nfqd-rules install" "$TMP/nfqd.log" \
	|| fail "no warning in the log: $(cat "$TMP/nfqd.log")"
[ "$(hook_field output kernel_rules)" = false ] || fail "output: kernel_rules $(hook_field output kernel_rules)"
ctl status | grep -q "^hook output *kernel rules NONE (run nfqd-rules install), no packet seen$" \
	|| fail "status text: $(ctl status)"
log "reload: $(cat "$TMP/reload.err")"
# A reload by SIGHUP logs the same warning.
printf 'hook output { udp dport 6102 drop; }\n' | write_conf
kill -HUP "$NFQD_PID"
end=$(deadline "$WAIT_SECONDS")
until grep -q "warning: reload: hook output: .*nfqd-rules install" "$TMP/nfqd.log" || ! before "$end"; do
	sleep 0.05
done
grep -q "warning: reload: hook output: .*nfqd-rules install" "$TMP/nfqd.log" \
	|| fail "no warning after SIGHUP: $(tail -3 "$TMP/nfqd.log")"

# A rule queueing output to another queue is not nfqd's. (nft's own
# "queue" statement is read too, but this kernel may lack nft_queue.)
in_b iptables -A OUTPUT -p udp --dport 7 -j NFQUEUE --queue-num 5 || fail "iptables queue 5"
[ "$(hook_field output kernel_rules)" = false ] || fail "a rule to queue 5 counted as ours"
in_b iptables -D OUTPUT -p udp --dport 7 -j NFQUEUE --queue-num 5

# nfqd-rules install covers it; the next reload is quiet.
in_b env NFQD="$NFQD" "$NFQD_RULES" -4 -c "$TMP/nfqd.conf" install || fail "nfqd-rules install"
[ "$(hook_field output kernel_rules)" = true ] || fail "output not covered after nfqd-rules install"
ctl -j reload >"$TMP/reload2.json" 2>"$TMP/reload2.err" || fail "reload"
json_check "$TMP/reload2.json" 'assert d["warnings"] == [], d' || fail "warnings after install"
[ ! -s "$TMP/reload2.err" ] || fail "stderr after install: $(cat "$TMP/reload2.err")"
in_b "$TOP_BUILDDIR/tests/bench/nfqd-gen" -q -d 192.0.2.1 -n 3 -p 6101 || fail "generator"
end=$(deadline "$WAIT_SECONDS")
while [ "$(hook_field output last_packet)" = null ] && before "$end"; do
	sleep 0.1
done
[ "$(hook_field output last_packet)" != null ] || fail "output packets not seen"
log "after nfqd-rules install: $(ctl status | grep '^hook' | tr '\n' ';')"
stop_nfqd

# A start with hooks no rule feeds warns too, for each.
in_b iptables -t mangle -F FEED
in_b env NFQD="$NFQD" "$NFQD_RULES" -4 -c "$TMP/nfqd.conf" remove || fail "nfqd-rules remove"
start_nfqd "$NS_B" "$TMP/nfqd.conf"
wait_bound "$NS_B" 0
wait_file "$SOCK"
end=$(deadline "$WAIT_SECONDS")
until grep -q "warning: start: hook input: no kernel rule" "$TMP/nfqd.log" || ! before "$end"; do
	sleep 0.05
done
grep -q "warning: start: hook input: no kernel rule" "$TMP/nfqd.log" \
	|| fail "no start warning for hook input: $(cat "$TMP/nfqd.log")"
grep -q "warning: start: hook output: no kernel rule" "$TMP/nfqd.log" \
	|| fail "no start warning for hook output: $(cat "$TMP/nfqd.log")"
log "$(grep 'start: hook' "$TMP/nfqd.log")"
stop_nfqd
log "ok"
