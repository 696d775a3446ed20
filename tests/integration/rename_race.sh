#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# rename_race.sh - a packet the kernel queued after an interface rename was
# acknowledged is judged under the new name, never the old one (issue 17,
# item 1). The router B forwards from A (its link "GOOD") to the sink C;
# nfqd judges the forward hook with
#     udp dport 3000 accept                  (markers: read no name)
#     iifname "BAD" udp dport 2000 drop      (counts GOOD-time packets
#                                             judged under the old "BAD")
#     iifname "BAD" drop
# A's client renames the link GOOD <-> BAD 100 times with "ip link set"
# and right after each acknowledgement sends a burst: to port 1000 while
# the name is BAD (all must be dropped), to port 2000 while it is GOOD
# (none may meet the second rule; a packet whose name nfqd cannot be sure
# of would be incomplete, and dropped by incomplete-verdict drop; but each
# worker reads the rename from its own rtnetlink socket before judging,
# so none is: incomplete must stay 0). Then a marker
# to port 3000, whose echo from the sink says every packet before it was
# judged (one queue, judged in order). An nft chain before the queue
# counts the same packets the same way as the reference: nft judges none
# under the old name either.
# Checked: the sink got no port-1000 packet, nfqd's second rule counted
# none, nft's reference counters are 0, and port-2000 packets did pass.
. "$TOP_SRCDIR/tests/lib.sh"
. "$TOP_SRCDIR/tests/integration/ctl_lib.sh"

NS_C="nfqd-$$-c"
SOCK="$TMP/nfqd.sock"
RENAMES=${RENAMES:-100}
BURST=${BURST:-10}

race_cleanup() {
	local rc=$?
	ip netns del "$NS_C" 2>/dev/null
	(exit $rc)
	cleanup
}
trap race_cleanup EXIT

require_root
require_cmd ip iptables nft
in_c() { ip netns exec "$NS_C" "$@"; }

# A (va 192.0.2.1) -- (GOOD 192.0.2.2) B (vout 198.51.100.1) -- C (vin
# 198.51.100.2)
ns_setup
ip netns add "$NS_C" || fail "netns add $NS_C"
ip link add vout netns "$NS_B" type veth peer name vin netns "$NS_C" ||
	fail "veth B-C"
in_b ip link set vb name GOOD || fail "rename vb"
in_b ip addr add 198.51.100.1/24 dev vout
in_c ip addr add 198.51.100.2/24 dev vin
in_c ip link set lo up
in_b ip link set vout up
in_c ip link set vin up
in_a ip route add 198.51.100.0/24 via 192.0.2.2
in_c ip route add 192.0.2.0/24 via 198.51.100.1
in_b sysctl -qw net.ipv4.ip_forward=1
in_b iptables -A FORWARD -j NFQUEUE --queue-num 0 || fail "NFQUEUE rule"
# The reference: nft at an earlier priority than the queue rule.
in_b nft -f - <<'NFT' || fail "nft reference"
table inet ref {
	chain reffw {
		type filter hook forward priority -10; policy accept;
		iifname "BAD" udp dport 2000 counter
		iifname "GOOD" udp dport 1000 counter
		udp dport { 1000, 2000 } counter
	}
}
NFT

CONF=$(conf_file nfqd.conf <<EOF
options {
	queues { 0 };
	control-socket "$SOCK";
}
hook forward {
	policy accept;
	udp dport 3000 accept;
	iifname "BAD" udp dport 2000 drop;
	iifname "BAD" drop;
}
EOF
)

# The sink: counts ports 1000 and 2000, answers a marker with the counts.
cat >"$TMP/sink.py" <<'EOF'
import select, socket
socks = {}
for port in (1000, 2000, 3000):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind(("198.51.100.2", port))
    socks[s.fileno()] = (port, s)
count = {1000: 0, 2000: 0}
while True:
    r, _, _ = select.select([s for _, s in socks.values()], [], [])
    for s in r:
        port, _ = socks[s.fileno()]
        data, peer = s.recvfrom(2048)
        if port == 3000:
            s.sendto(b"%d %d" % (count[1000], count[2000]), peer)
        else:
            count[port] += 1
EOF
ip netns exec "$NS_C" "$PY" "$TMP/sink.py" &
bg_pid $!

# The client: rename, burst, marker; prints the sink's last counts.
cat >"$TMP/client.py" <<'EOF'
import socket, subprocess, sys
ns_b, renames, burst = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
dst = "198.51.100.2"
data = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
mark = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
mark.bind(("192.0.2.1", 3000))
mark.settimeout(0.2)


def marker():
    """The sink's counts, once every packet sent before was judged."""
    for _ in range(100):
        mark.sendto(b"m", (dst, 3000))
        try:
            return mark.recv(100).decode()
        except socket.timeout:
            pass
    sys.exit("no answer to the marker in 20 s")


marker()
cur = "GOOD"
sent = {1000: 0, 2000: 0}
for i in range(renames):
    new = "BAD" if cur == "GOOD" else "GOOD"
    # Returns after the kernel's acknowledgement.
    subprocess.run(["ip", "-n", ns_b, "link", "set", cur, "name", new],
                   check=True)
    cur = new
    port = 1000 if cur == "BAD" else 2000
    for k in range(burst):
        data.sendto(b"%d" % i, (dst, port))
    sent[port] += burst
    counts = marker()
print(sent[1000], sent[2000], counts)
EOF

start_nfqd "$NS_B" "$CONF"
wait_bound "$NS_B" 0
wait_file "$SOCK"

# The kernel queues the rename's notification before it acknowledges the
# rename: checked here on a socket of our own, as nfqd's sees it.
in_b "$PY" - <<'EOF' >"$TMP/queued.out" || fail "notification check failed"
import select, socket, subprocess
s = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, socket.NETLINK_ROUTE)
s.bind((0, 1))  # RTMGRP_LINK
queued = 0
for old, new in (("GOOD", "tmp0"), ("tmp0", "GOOD")) * 10:
    while select.select([s], [], [], 0)[0]:
        s.recv(65536)
    subprocess.run(["ip", "link", "set", old, "name", new], check=True)
    queued += bool(select.select([s], [], [], 0)[0])
print(queued)
EOF
log "rename notification queued at the acknowledgement: $(cat "$TMP/queued.out") of 20"
[ "$(cat "$TMP/queued.out")" = 20 ] ||
	fail "the kernel acknowledged a rename before queueing its notification"

in_a "$PY" "$TMP/client.py" "$NS_B" "$RENAMES" "$BURST" >"$TMP/client.out" ||
	fail "client failed: $(cat "$TMP/client.out")"
read -r sent_bad sent_good got_bad got_good <"$TMP/client.out"
log "sent $sent_bad while BAD, $sent_good while GOOD; sink got $got_bad and $got_good"

ctl -j rules >"$TMP/rules.json" || fail "nfqd-ctl -j rules"
ctl -j stats >"$TMP/stats.json" || fail "nfqd-ctl -j stats"
old_bad=$("$PY" -c '
import json, sys
d = json.load(open(sys.argv[1]))
h = [h for h in d["hooks"] if h["hook"] == "forward"][0]
print(h["rules"][1]["packets"])' "$TMP/rules.json") || fail "rules JSON"
incomplete=$("$PY" -c '
import json, sys
print(json.load(open(sys.argv[1]))["queues"][0]["incomplete"])' \
	"$TMP/stats.json") || fail "stats JSON"
ref=$(in_b nft list chain inet ref reffw | awk '/counter/ {
	for (i = 1; i <= NF; i++) if ($i == "packets") printf "%s ", $(i + 1) }')
log "nfqd: $old_bad GOOD-time packets judged as BAD, $got_bad BAD-time" \
	"packets accepted as GOOD, $incomplete incomplete; nft reference" \
	"(old-name BAD, old-name GOOD, all): $ref"

set -- $ref
[ "$1" = 0 ] && [ "$2" = 0 ] ||
	fail "nft itself judged packets under the old name: $ref"
[ "$3" = $((sent_bad + sent_good)) ] ||
	fail "nft saw $3 of $((sent_bad + sent_good)) packets"
[ "$got_bad" = 0 ] ||
	fail "$got_bad packets sent after GOOD->BAD was acknowledged were accepted under the old name GOOD"
[ "$old_bad" = 0 ] ||
	fail "$old_bad packets sent after BAD->GOOD was acknowledged were dropped under the old name BAD"
[ "$got_good" -gt 0 ] || fail "no packet passed while the name was GOOD"
[ "$incomplete" = 0 ] ||
	fail "$incomplete packets judged incomplete: a worker did not learn a rename from its own rtnetlink socket before judging"
stop_nfqd
exit 0
