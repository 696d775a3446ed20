#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# nfqd_rules.sh - contrib/nfqd-rules against real iptables-nft in namespace
# B: --dry-run changes nothing; install twice leaves one set of rules
# (and, with nothing to change, keeps their counters);
# rules it did not make (in the same built-in chains, before its jump)
# survive install and remove; a hook dropped from the config loses its
# chains; remove leaves nothing of its own; clear errors. Then the point
# of it: with nfqd running "tcp dport 5001 bypass accept", a TCP transfer
# of megabytes to port 5001 (IPv4 and IPv6) puts fewer than 10 packets in
# nfqd's queues, while every packet of a transfer to port 5002 reaches
# nfqd.
. "$TOP_SRCDIR/tests/lib.sh"
. "$TOP_SRCDIR/tests/integration/ctl_lib.sh"

NFQD_RULES=${NFQD_RULES:-$TOP_BUILDDIR/contrib/nfqd-rules}
[ -x "$NFQD_RULES" ] || fail "$NFQD_RULES not built"
ns_setup
require_cmd iptables ip6tables iptables-restore ip6tables-restore ss

SOCK="$TMP/nfqd.sock"
CONF=$(conf_file nfqd.conf <<EOF
options {
	queues 2;
	stats-file "$TMP/stats";
	control-socket "$SOCK";
}
hook input {
	meta l4proto ipv6-icmp accept;	# neighbour discovery, MLD
	tcp dport 5001 bypass accept;
	tcp dport 5002 accept;
}
EOF
)
rules() { in_b "$NFQD_RULES" -c "$CONF" "$@"; }

# Every rule of both families in the tables nfqd-rules uses (no counters).
snapshot() {
	local ipt t
	for ipt in iptables ip6tables; do
		for t in mangle security; do
			echo "# $ipt -t $t"
			in_b $ipt -w -t $t -S
		done
	done
}
# Lines of the snapshot matching $1.
count() { snapshot | grep -c -- "$1"; }

# Rules that are not ours, in the same built-in chains: they count the
# packets of each flow (no target: they let every packet go on).
for ipt in iptables ip6tables; do
	in_b $ipt -t mangle -A INPUT -p tcp --dport 5001 || fail "$ipt foreign rule"
	in_b $ipt -t mangle -A INPUT -p tcp --dport 5002 || fail "$ipt foreign rule"
	in_b $ipt -t security -A INPUT -p udp --dport 9 -j ACCEPT || fail "$ipt foreign rule"
done
snapshot >"$TMP/pristine"

# --dry-run: the commands, nothing done.
out=$(rules --dry-run install) || fail "dry-run install: $out"
snapshot | cmp -s - "$TMP/pristine" || fail "--dry-run install changed the rules"
echo "$out" | grep -q -- "-j NFQUEUE --queue-balance 0:1 --queue-cpu-fanout --queue-bypass" \
	|| fail "dry-run has no NFQUEUE rule: $out"
echo "$out" | grep -q -- "-m connmark --mark 0x40000000/0x40000000 -j ACCEPT" \
	|| fail "dry-run has no connmark accept: $out"
echo "$out" | grep -q -- "-j CONNMARK --or-mark 0x40000000" \
	|| fail "dry-run has no mark save: $out"
log "dry-run prints $(echo "$out" | wc -l) lines, changes nothing"
out=$(rules -n -4 --no-bypass --no-fanout install) || fail "dry-run: $out"
echo "$out" | grep -q -- "-j NFQUEUE --queue-balance 0:1\$" || fail "--no-bypass --no-fanout: $out"
echo "$out" | grep -q ip6tables && fail "-4 made ip6tables rules: $out"
out=$(rules -n -6 install) || fail "dry-run: $out"
echo "$out" | grep -q '^iptables' && fail "-6 made iptables rules: $out"
printf 'hook prerouting { tcp dport 1 drop; }\n' >"$TMP/pre.conf"
out=$(in_b "$NFQD_RULES" -n -c "$TMP/pre.conf" install 2>&1) || fail "prerouting: $out"
echo "$out" | grep -q "warning: hook prerouting: not handled" || fail "no warning for prerouting: $out"
echo "$out" | grep -q -- "-j NFQUEUE" && fail "rules for prerouting: $out"
# A config that matches names balances by flow hash (a connection whose
# packets several CPUs handle would change queues with the fanout, and
# its name would never be seen), says so, and --fanout overrides it.
# The same words in a string or a comment are no names match.
cat >"$TMP/names.conf" <<EOF
options { queues 2; }
set blocked { type ipv4_addr; elements = { 192.0.2.9 }; }
hook input {
	ip saddr @blocked drop;	# not: tls sni "x"
	iifname "tls sni" drop;
}
EOF
out=$(in_b "$NFQD_RULES" -n -4 -c "$TMP/names.conf" install 2>&1) || fail "no names: $out"
echo "$out" | grep -q -- "--queue-balance 0:1 --queue-cpu-fanout" ||
	fail "a config without names match lost the fanout: $out"
for m in 'dns qname "a.example"' 'dns qtype aaaa' 'tls sni ".example"' \
	'tls ech' 'http host "a.example"'; do
	printf 'options { queues 2; }\nhook input { meta mark 0x1 %s drop; }\n' "$m" >"$TMP/names.conf"
	out=$(in_b "$NFQD_RULES" -n -4 -c "$TMP/names.conf" install 2>&1) || fail "$m: $out"
	echo "$out" | grep -q -- "-j NFQUEUE --queue-balance 0:1 --queue-bypass" ||
		fail "$m: not balanced by flow hash: $out"
	echo "$out" | grep -q "matches names (dns, tls, http).*--fanout puts it back" ||
		fail "$m: no word on the flow hash: $out"
	out=$(in_b "$NFQD_RULES" -n -4 --fanout -c "$TMP/names.conf" install 2>&1) || fail "$m: $out"
	echo "$out" | grep -q -- "--queue-balance 0:1 --queue-cpu-fanout" ||
		fail "$m: --fanout did not put the fanout back: $out"
done
log "names matches: flow hash by default, --fanout overrides"

# Every valid config of the tree is read right: the chains it makes (in
# "TABLE:HOOK" form; security holds the mark save of a hook that bypasses).
while read -r f want; do
	out=$(in_b env NFQD="$NFQD" "$NFQD_RULES" -4 -n -c "$TOP_SRCDIR/$f" install 2>&1) || {
		# Its set files are not where it says, or this kernel's
		# NFQUEUE cannot feed its ct state: only the parse, then.
		echo "$out" | grep -q -e ": cannot read /" \
			-e "which this kernel does not provide" || fail "$f: $out"
		out=$(in_b env NFQD=true "$NFQD_RULES" -4 -n -c "$TOP_SRCDIR/$f" install 2>&1) ||
			fail "$f: $out"
	}
	got=$(echo "$out" | awk '/^\*/ { t = substr($0, 2) }
		/^-A [A-Z]+ -j NFQD-/ { printf "%s%s:%s", sep, t, $2; sep = " " }')
	[ "$got" = "${want#-}" ] || fail "$f: chains '$got', want '${want#-}': $out"
done <<EOF
contrib/examples/bulk-bypass.conf mangle:FORWARD security:FORWARD
contrib/examples/icmp-ratelimit.conf mangle:INPUT
contrib/examples/ips-blocklist.conf mangle:INPUT mangle:FORWARD
contrib/examples/router.conf mangle:FORWARD
contrib/nfqd.conf.example -
tests/conf/all.conf mangle:OUTPUT security:OUTPUT
tests/conf/example.conf mangle:INPUT
EOF
log "the example configs give the chains they should"

# The rules nfqd-rules(8) shows for its example are what it makes.
printf 'options { queues 0-3; }\nhook forward { tcp dport 5201 bypass accept; }\n' \
	>"$TMP/fwd.conf"
awk '/, that is$/ { on = 1; next } on && /^\.fi/ { exit }
	on && /^iptables/ { gsub(/\\-/, "-"); gsub(/\\e/, "\\"); print }
	on && /^ / { gsub(/\\-/, "-"); print }' "$TOP_BUILDDIR/man/nfqd-rules.8" |
	sed -e ':a' -e '/\\$/N; s/\\\n *//; ta' |
	sed -E 's/^iptables -t ([a-z]+) -N (.*)/\1 :\2 - [0:0]/; s/^iptables -t ([a-z]+) /\1 /' \
	>"$TMP/man-rules"
in_b env NFQD="$NFQD" "$NFQD_RULES" -4 -n -c "$TMP/fwd.conf" install |
	awk '/^\*/ { t = substr($0, 2); next } /^[-:]/ { print t, $0 }' >"$TMP/dry-rules"
[ -s "$TMP/man-rules" ] || fail "no example rules found in nfqd-rules.8"
diff -u "$TMP/man-rules" "$TMP/dry-rules" >&2 || fail "nfqd-rules.8's example differs from what it makes"

# install, twice: one set of rules, after the foreign ones.
out=$(rules install 2>&1) || fail "install: $out"
snapshot >"$TMP/once"
out=$(rules install 2>&1) || fail "second install: $out"
snapshot | cmp -s - "$TMP/once" || {
	snapshot | diff -u "$TMP/once" - >&2
	fail "a second install changed the rules"
}
[ "$(count ' -j NFQUEUE ')" -eq 2 ] || fail "$(count ' -j NFQUEUE ') NFQUEUE rules, want 2: $(cat "$TMP/once")"
[ "$(count '-m connmark --mark 0x40000000/0x40000000 -j ACCEPT')" -eq 2 ] || fail "connmark accept rules: $(cat "$TMP/once")"
[ "$(count '-j CONNMARK')" -eq 2 ] || fail "mark save rules: $(cat "$TMP/once")"
[ "$(count '^-A INPUT -j NFQD-INPUT$')" -eq 4 ] || fail "jumps: $(cat "$TMP/once")"
for ipt in iptables ip6tables; do
	[ "$(in_b $ipt -t mangle -S INPUT | tail -n 1)" = "-A INPUT -j NFQD-INPUT" ] \
		|| fail "$ipt: the jump is not the last rule of mangle INPUT"
	[ "$(in_b $ipt -t mangle -S INPUT | grep -c -- '--dport 500[12]')" -eq 2 ] \
		|| fail "$ipt: foreign rules lost"
done
grep -v NFQD "$TMP/once" | diff -u "$TMP/pristine" - >&2 || fail "install changed rules that are not its own"
rules show >"$TMP/show" || fail "show failed"
grep -q -- "NFQUEUE --queue-balance 0:1" "$TMP/show" || fail "show: $(cat "$TMP/show")"
log "install twice: one set of rules ($(grep -c NFQD "$TMP/once") lines), foreign rules kept"

# A hook that leaves the config loses its chains; another hook gets them.
CONF2=$(conf_file out.conf <<EOF
options { queues 3-3; }
hook output { policy drop; }
EOF
)
in_b "$NFQD_RULES" -c "$CONF2" install || fail "install of out.conf"
[ "$(count NFQD-INPUT)" -eq 0 ] || fail "NFQD-INPUT left after its hook left the config"
[ "$(count '^-A NFQD-OUTPUT -j NFQUEUE --queue-num 3 --queue-bypass$')" -eq 2 ] \
	|| fail "out.conf: $(snapshot)"
[ "$(count CONNMARK)" -eq 0 ] || fail "connmark rules for a config without bypass"
rules install || fail "install"
snapshot | cmp -s - "$TMP/once" || fail "install after a config change differs from the first"

# remove: nothing of ours left, the rest as it was; twice is fine.
rules remove || fail "remove"
snapshot | cmp -s - "$TMP/pristine" || {
	snapshot | diff -u "$TMP/pristine" - >&2
	fail "remove did not restore the rules as they were"
}
rules remove || fail "second remove"
log "remove leaves the foreign rules only"

# Errors name the problem and the fix, and change nothing.
expect_error() {	# PATTERN ARGS...: fails with PATTERN on stderr
	local pat=$1 out
	shift
	out=$(in_b "$@" 2>&1 >/dev/null) && fail "succeeded: $*"
	echo "$out" | grep -q -- "$pat" || fail "$*: error '$out' lacks '$pat'"
	snapshot | cmp -s - "$TMP/pristine" || fail "$*: failed but changed rules"
}
expect_error "$TMP/none.conf: cannot read the config file (no such file)" \
	"$NFQD_RULES" -c "$TMP/none.conf" install
printf 'options { queues { 0, 2 }; }\nhook input { drop; }\n' >"$TMP/gap.conf"
expect_error "not contiguous" env NFQD=true "$NFQD_RULES" -c "$TMP/gap.conf" install
printf 'options { queues lots; }\nhook input { drop; }\n' >"$TMP/bad.conf"
expect_error "cannot read \"queues lots\"" env NFQD=true "$NFQD_RULES" -c "$TMP/bad.conf" install
# With nfqd at hand, its checker judges the file first.
expect_error "bad.conf:1:18" env NFQD="$NFQD" "$NFQD_RULES" -c "$TMP/bad.conf" install
expect_error "install the iptables package" env IPTABLES=/nonexistent/iptables \
	"$NFQD_RULES" -c "$CONF" install
log "errors: config unreadable, queues, invalid config, no iptables"

# The point: bypassed flows leave the queue.
rules install || fail "install"
start_nfqd "$NS_B" "$CONF"
wait_bound "$NS_B" 0 1
wait_file "$SOCK"

# Packets nfqd received, summed over the queues.
judged() {
	ctl -j stats | "$PY" -c 'import json, sys
print(sum(q["packets"] for q in json.load(sys.stdin)["queues"]))'
}
# Hits of rule $1 (1-based) of hook input.
hits() {
	ctl -j rules | "$PY" -c 'import json, sys
h = [h for h in json.load(sys.stdin)["hooks"] if h["hook"] == "input"][0]
print(h["rules"][int(sys.argv[1]) - 1]["packets"])' "$1"
}
# Packets to port $2 counted by the foreign rule of command $1.
seen() {
	in_b "$1" -t mangle -L INPUT -v -x -n | awk -v p="dpt:$2" '$0 ~ p { print $1 }'
}

# Send $3 bytes over TCP from A to B's address $1, port $2; prints what B
# received.
transfer() {
	in_b "$PY" -c '
import socket, sys
addr, port = sys.argv[1], int(sys.argv[2])
s = socket.socket(socket.AF_INET6 if ":" in addr else socket.AF_INET)
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind((addr, port))
s.listen(1)
s.settimeout(30)
c, _ = s.accept()
n = 0
while True:
    b = c.recv(65536)
    if not b:
        break
    n += len(b)
print(n)
' "$1" "$2" >"$TMP/received" &
	local server=$! end
	bg_pid $server
	end=$(deadline "$WAIT_SECONDS")
	until in_b ss -ltn | grep -q ":$2 "; do
		kill -0 $server 2>/dev/null || fail "the server on port $2 exited"
		before "$end" || fail "the server on port $2 did not listen in $WAIT_SECONDS s"
		sleep 0.1
	done
	in_a "$PY" -c '
import socket, sys
s = socket.create_connection((sys.argv[1], int(sys.argv[2])), timeout=30)
s.sendall(b"x" * int(sys.argv[3]))
s.close()
' "$1" "$2" "$3" || fail "transfer to $1 port $2 failed"
	wait $server
	cat "$TMP/received"
}

BYTES=4000000
for dst in 192.0.2.2 2001:db8::2; do
	ipt=iptables
	case $dst in *:*) ipt=ip6tables ;; esac
	p0=$(judged) i0=$(hits 1) b0=$(hits 2) s0=$(seen $ipt 5001)
	got=$(transfer $dst 5001 $BYTES)
	[ "$got" = $BYTES ] || fail "$dst port 5001: B received $got of $BYTES bytes"
	queued=$(($(judged) - p0 - ($(hits 1) - i0)))
	flow=$(($(seen $ipt 5001) - s0))
	log "$dst port 5001 (bypassed): $flow packets, nfqd saw $queued (bypass rule hits $(($(hits 2) - b0)))"
	[ "$flow" -ge 20 ] || fail "only $flow packets in the transfer"
	[ "$queued" -lt 10 ] || fail "nfqd saw $queued packets of a bypassed flow of $flow"
	[ $(($(hits 2) - b0)) -ge 1 ] || fail "the bypass rule never matched"
done

s0=$(seen iptables 5002) h0=$(hits 3)
got=$(transfer 192.0.2.2 5002 $BYTES)
[ "$got" = $BYTES ] || fail "port 5002: B received $got of $BYTES bytes"
# The last ACKs may still be on their way: wait for the counts to agree.
end=$(deadline "$WAIT_SECONDS")
while before "$end"; do
	flow=$(($(seen iptables 5002) - s0)) judged5002=$(($(hits 3) - h0))
	[ "$flow" -eq "$judged5002" ] && break
	sleep 0.1
done
log "port 5002 (not bypassed): $flow packets, nfqd saw $judged5002"
[ "$flow" -ge 20 ] || fail "only $flow packets in the transfer"
[ "$judged5002" -eq "$flow" ] || fail "nfqd saw $judged5002 of the $flow packets of a flow that is not bypassed"

# An install that changes nothing changes nothing, counters included: the
# rules keep the packets they counted. A packet still on its way (the
# transfer's last ACK, seen once under make -j12 check) may add to them
# between the two shows: the same rules, and no count lower.
rules show >"$TMP/show1" || fail "show"
grep -q -- '-c [1-9][0-9]* [0-9]* -j NFQUEUE' "$TMP/show1" || fail "no NFQUEUE counts after traffic: $(cat "$TMP/show1")"
rules install || fail "install over itself"
rules show >"$TMP/show2" || fail "show"
awk 'function counts(l, c) {
		if (!match(l, /-c [0-9]+ [0-9]+ /))
			return 0
		split(substr(l, RSTART + 3, RLENGTH - 4), c, " ")
		return 1
	}
	NR == FNR { a[FNR] = $0; n = FNR; next }
	{
		r1 = a[FNR]; r2 = $0
		h1 = counts(r1, c1); h2 = counts(r2, c2)
		gsub(/-c [0-9]+ [0-9]+ /, "-c N N ", r1)
		gsub(/-c [0-9]+ [0-9]+ /, "-c N N ", r2)
		if (r1 != r2 || h1 != h2 || (h1 && (c2[1] < c1[1] || c2[2] < c1[2]))) {
			print "before: " a[FNR] "\nafter:  " $0 > "/dev/stderr"
			bad = 1
		}
	}
	END { exit bad || FNR != n }' "$TMP/show1" "$TMP/show2" ||
	{ diff -u "$TMP/show1" "$TMP/show2" >&2; fail "an install with nothing to change reset the counters"; }
log "install again: counters kept ($(grep -c -- '-c ' "$TMP/show2") rules)"

stop_nfqd
rules remove || fail "remove"
snapshot | cmp -s - "$TMP/pristine" || fail "remove after traffic left rules"
log "ok"
