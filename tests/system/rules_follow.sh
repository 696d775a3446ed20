#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# rules_follow.sh - the kernel rules follow nfqd under a real systemd:
# without nfqd-rules.service, a reload whose policy starts using hook
# output succeeds but warns, in the journal, naming "nfqd-rules install",
# and nfqd-ctl status says the hook has no rules and no packet; with
# nfqd-rules.service enabled (one command), a reload adding hook output
# installs its rules first (no warning, the hook's packets judged), and
# after a reboot of the container the rules are back and traffic is
# judged, and a log statement's lines are in the journal with fields
# (NFQD_VERDICT, NFQD_SRC, NFQD_DPT, ...). Also: nfqd-prometheus.service skips with one line where
# node_exporter's directory is missing.
. "$(dirname "$0")/lib.sh"

RULES="$NFQD_SBINDIR/nfqd-rules"
sys_setup

# Input only: udp 9 dropped by nfqd, anything else accepted.
conf_input() {
	sys_write_conf <<'EOC'
options { queues 0-1; }
hook input { udp dport 9 drop; }
EOC
}
# The same, and hook output dropping udp 6100.
conf_output() {
	sys_write_conf <<'EOC'
options { queues 0-1; }
hook input { udp dport 9 drop; }
hook output { udp dport 6100 log prefix "out " drop; }
EOC
}
# After nfqd: count and drop what it let through, per port.
sink() {
	in_c nft -f - <<'NFT' || fail "nft sink"
table inet sink {
	chain in {
		type filter hook input priority 100; policy accept;
		udp dport 9 counter drop
		udp dport 10 counter drop
		udp dport 6100 counter drop
	}
}
NFT
}
# Packets the sink saw for port $1.
delivered() {
	in_c nft list chain inet sink in | awk -v p="dport $1 " '
		index($0, p) { for (i = 1; i <= NF; i++) if ($i == "packets") print $(i + 1) }'
}
send() { in_c nfqd-gen -d 127.0.0.1 -n "$2" -p "$1" -q || fail "generator"; }
# Wait (30 s) until the sink saw $2 packets for port $1.
wait_delivered() {
	local end
	end=$(deadline 30)
	while before "$end"; do
		[ "$(delivered "$1")" = "$2" ] && return 0
		sleep 0.1
	done
	fail "port $1: $(delivered "$1") delivered, want $2"
}
hook_line() { ctl_c status | grep "^hook $1 "; }
mangle() { in_c iptables -w -t mangle -S | grep NFQD; }

# --- without the unit: the reload warns
conf_input
in_c "$RULES" install || fail "nfqd-rules install"
in_c systemctl start nfqd || fail "systemctl start nfqd"
wait_active
sink
send 9 20
send 10 20
wait_delivered 10 20
[ "$(delivered 9)" = 0 ] || fail "port 9: $(delivered 9) of 20 delivered, nfqd drops them"
conf_output
since=$(in_c date '+%Y-%m-%d %H:%M:%S.%6N')
in_c systemctl reload nfqd || fail "systemctl reload nfqd failed"
in_c journalctl -u nfqd --since "$since" --no-pager -o cat >"$TMP/j1"
sed 's/^/#   /' "$TMP/j1"
grep -q "^control: reload: hook output: no kernel rule queues its packets.*run: nfqd-rules install" "$TMP/j1" \
	|| fail "no warning from nfqd in the journal"
grep -q "^nfqd-ctl: warning: hook output: .*nfqd-rules install" "$TMP/j1" \
	|| fail "the reload's answer (nfqd-ctl) is not in the journal"
in_c journalctl -u nfqd --since "$since" -p warning --no-pager -o cat | grep -q "hook output" \
	|| fail "the warning is not at priority warning"
send 6100 20
wait_delivered 6100 20
hook_line output | grep -q "kernel rules NONE (run nfqd-rules install), no packet seen" \
	|| fail "status: $(ctl_c status)"
log "without nfqd-rules.service: reload warned; output: 20/20 delivered unjudged; $(hook_line output)"

# --- with the unit: a reload installs the new hook's rules first
in_c "$RULES" remove || fail "nfqd-rules remove"
conf_input
in_c systemctl enable nfqd-rules.service nfqd.service >/dev/null 2>&1 \
	|| fail "systemctl enable nfqd-rules.service"
pid=$(unit_prop MainPID)
sys_restart || fail "systemctl restart nfqd"
wait_active "$pid"
[ "$(in_c systemctl is-active nfqd-rules.service)" = active ] \
	|| fail "nfqd-rules.service not started with nfqd: $(in_c systemctl status nfqd-rules --no-pager)"
mangle | grep -q -- "-A INPUT -j NFQD-INPUT" || fail "no input rules after the start: $(mangle)"
mangle | grep -q OUTPUT && fail "output rules for an input-only config: $(mangle)"
conf_output
# To the microsecond: the first section's warning may be of this very
# second, and must not count here.
since=$(in_c date '+%Y-%m-%d %H:%M:%S.%6N')
in_c systemctl reload nfqd || fail "systemctl reload nfqd failed"
mangle | grep -q -- "-A OUTPUT -j NFQD-OUTPUT" || fail "the reload did not install the output rules: $(mangle)"
in_c journalctl -u nfqd -u nfqd-rules --since "$since" --no-pager -o cat >"$TMP/j2"
sed 's/^/#   /' "$TMP/j2"
grep -q "hook output" "$TMP/j2" && fail "a warning although nfqd-rules.service installed the rules"
base=$(delivered 6100)
send 6100 20
send 10 20
wait_delivered 10 40
[ "$(delivered 6100)" = "$base" ] || fail "port 6100: $(($(delivered 6100) - base)) of 20 delivered after the reload"
hook_line output | grep -q "kernel rules yes (ipv4 ipv6), last packet" || fail "status: $(ctl_c status)"
log "with nfqd-rules.service: reload installed NFQD-OUTPUT, no warning; output: 0/20 delivered; $(hook_line output)"

# --- reboot: the rules are back, traffic is judged
sys_reboot
wait_active
[ "$(in_c systemctl is-active nfqd-rules.service)" = active ] || fail "nfqd-rules.service not active after the reboot"
mangle >"$TMP/rules"
sed 's/^/#   /' "$TMP/rules"
grep -q -- "-A INPUT -j NFQD-INPUT" "$TMP/rules" || fail "input rules not back after the reboot"
grep -q -- "-A OUTPUT -j NFQD-OUTPUT" "$TMP/rules" || fail "output rules not back after the reboot"
sink
send 9 20
send 6100 20
send 10 20
wait_delivered 10 20
[ "$(delivered 9)" = 0 ] || fail "after the reboot port 9: $(delivered 9) of 20 delivered"
[ "$(delivered 6100)" = 0 ] || fail "after the reboot port 6100: $(delivered 6100) of 20 delivered"
ctl_c -j rules | grep -q '"packets": 20' || fail "no rule counted 20 hits: $(ctl_c rules)"
log "after the reboot: rules back, port 9 0/20, port 6100 0/20, port 10 20/20 delivered"
# The log statement's lines carry journal fields (native protocol).
end=$(deadline "$WAIT_SECONDS")
while before "$end"; do
	in_c journalctl -u nfqd NFQD_DPT=6100 --no-pager -o json >"$TMP/fields.json"
	[ -s "$TMP/fields.json" ] && break
	sleep 0.1
done
head -n 1 "$TMP/fields.json" | /usr/bin/python3 -c '
import json, sys
d = json.loads(sys.stdin.readline())
want = {"NFQD_HOOK": "output", "NFQD_RULE": "1", "NFQD_VERDICT": "drop",
        "NFQD_SRC": "127.0.0.1", "NFQD_DST": "127.0.0.1", "NFQD_PROTO": "17",
        "NFQD_DPT": "6100", "PRIORITY": "6", "_SYSTEMD_UNIT": "nfqd.service"}
bad = {k: d.get(k) for k in want if d.get(k) != want[k]}
assert not bad and d["MESSAGE"].startswith("out hook output rule 1 ") \
    and d["MESSAGE"].endswith(" VERDICT=drop") and "NFQD_SPT" in d, (bad, d)
print("#   " + " ".join("%s=%s" % (k, d[k]) for k in sorted(d) if k.startswith("NFQD_")))
' || fail "journal fields of a log line: $(head -n 1 "$TMP/fields.json")"
log "$(ctl_c status | grep '^hook' | tr '\n' ';')"

# --- nfqd-prometheus.service without node_exporter: skipped, not failed
in_c systemctl start nfqd-prometheus.service
[ "$(in_c systemctl show -P Result nfqd-prometheus.service)" = success ] \
	|| fail "nfqd-prometheus.service: $(in_c systemctl status nfqd-prometheus --no-pager)"
[ "$(in_c systemctl is-failed nfqd-prometheus.service)" != failed ] || fail "nfqd-prometheus.service failed"
end=$(deadline "$WAIT_SECONDS")
while before "$end"; do	# the journal may take a moment
	in_c journalctl -u nfqd-prometheus --no-pager -o cat >"$TMP/promj"
	grep -q "Skipped\|Finished\|Deactivated" "$TMP/promj" && break
	sleep 0.1
done
sed 's/^/#   /' "$TMP/promj"
grep "^nfqd-prometheus: skipped" "$TMP/promj" >"$TMP/prom"
[ "$(wc -l <"$TMP/prom")" -eq 1 ] || fail "skip lines: $(in_c journalctl -u nfqd-prometheus --no-pager -o cat)"
grep -q "directory /var/lib/prometheus/node-exporter does not exist" "$TMP/prom" || fail "skip line: $(cat "$TMP/prom")"
log "nfqd-prometheus: $(cat "$TMP/prom")"
log "ok"
