# SPDX-License-Identifier: GPL-2.0-or-later
# tests/integration/ctl_lib.sh - helpers shared by the observability and
# control tests (stats.sh, ctl.sh, ctl_badclients.sh, fault_ctlstorm.sh);
# sourced after tests/lib.sh.

# The system python starts fastest and has the distribution's packages
# (prometheus_client, if installed).
if [ -x /usr/bin/python3 ]; then PY=/usr/bin/python3; else PY=python3; fi
require_cmd python3

CTL_PY="$TOP_SRCDIR/tests/integration/ctl_client.py"

# nfqd-ctl against the test's socket ($SOCK), run in namespace B.
ctl() { in_b "$NFQD_CTL" -s "$SOCK" "$@"; }

# In namespace B, queue every UDP packet arriving for input to queue $1
# (the sink from sink_setup counts and drops what nfqd accepts).
queue_rule_setup() {
	require_cmd iptables
	in_b iptables -A INPUT -p udp -j NFQUEUE --queue-num "$1" \
		|| fail "iptables NFQUEUE rule"
}

# Wait ($WAIT_SECONDS s at most) for file $1 to exist.
wait_file() {
	local end
	end=$(deadline "$WAIT_SECONDS")
	while before "$end"; do
		[ -e "$1" ] && return 0
		kill -0 "$NFQD_PID" 2>/dev/null || fail "nfqd exited"
		sleep 0.05
	done
	[ -e "$1" ] || fail "$1 did not appear within $WAIT_SECONDS s"
}

# Send $3 UDP datagrams of 18 payload bytes (46-byte IPv4 packets) from
# namespace $1 to $2 port $4: the generator if built, else python3.
send_udp_to() {
	local gen="$TOP_BUILDDIR/tests/bench/nfqd-gen"
	if [ -x "$gen" ]; then
		ip netns exec "$1" "$gen" -q -d "$2" -n "$3" -p "$4" \
			|| fail "generator failed"
		return
	fi
	ip netns exec "$1" "$PY" -c '
import socket, sys
dst, n, port = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
for i in range(n):
    s.sendto(b"x" * 18, (dst, port))
' "$2" "$3" "$4" || fail "sending failed"
}

# Wait ($WAIT_SECONDS s at most) until field $3 of queue $2's line in
# stats file $1 equals $4.
wait_stats_field() {
	local end v=
	end=$(deadline "$WAIT_SECONDS")
	while before "$end"; do
		v=$(awk -v q="$2" -v f="$3" '$1 == q { print $f }' "$1" 2>/dev/null)
		[ "$v" = "$4" ] && return 0
		sleep 0.1
	done
	fail "stats file field $3 of queue $2 is '$v', want $4: $(cat "$1")"
}

# Check JSON file $1 with python assertions $2 (the document is "d").
json_check() {
	"$PY" -c '
import json, sys
d = json.load(open(sys.argv[1]))
try:
    exec(sys.argv[2])
except AssertionError as e:
    print("# JSON check failed: %s" % (e,))
    print("# document: %s" % json.dumps(d))
    sys.exit(1)
' "$1" "$2"
}
