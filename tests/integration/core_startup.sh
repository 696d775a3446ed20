#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Start-up failures exit 1 with exactly one clear line: a queue bound by another
# process, no CAP_NET_ADMIN, a -c file that does not exist. The daemon
# already running keeps working.
. "$(dirname "$0")/../lib.sh"

ns_setup
require_cmd iptables ping setpriv
in_b iptables -A INPUT -p icmp -j NFQUEUE --queue-num 3

mkconf() {
	conf_file "$1" <<EOF
options {
	queues 3-3;
	stats-file "$TMP/$1.stats";
	control-socket "$TMP/$1.sock";
}
EOF
}
conf1=$(mkconf one.conf)
conf2=$(mkconf two.conf)
start_nfqd "$NS_B" "$conf1"
wait_bound "$NS_B" 3

expect_fail() {
	local want=$1 out rc
	shift
	out=$(timeout 10 ip netns exec "$NS_B" "$@" 2>&1)
	rc=$?
	[ $rc -eq 1 ] || fail "$* exited $rc, want 1; output: $out"
	echo "$out" | grep -qF "$want" || fail "$*: no \"$want\" in: $out"
	[ "$(echo "$out" | wc -l)" -eq 1 ] || fail "$*: not one line: $out"
	log "refused as expected: $(echo "$out" | grep -F "$want")"
}

expect_fail "queue 3: bind failed: already bound by another process" \
	"$NFQD" -c "$conf2"
chmod 755 "$TMP"	# readable for the unprivileged run
expect_fail "no CAP_NET_ADMIN" \
	setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all \
	--bounding-set=-all "$NFQD" -c "$conf2"
expect_fail "$TMP/missing.conf" "$NFQD" -c "$TMP/missing.conf"

kill -0 "$NFQD_PID" || fail "first nfqd died"
in_a ping -c 3 -i 0.1 -W 2 -q 192.0.2.2 >/dev/null \
	|| fail "traffic through the first nfqd stopped"
stop_nfqd
log "ok"
