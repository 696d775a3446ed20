#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Start-up failures exit 1 with exactly one clear line: a queue bound by another
# process, no CAP_NET_ADMIN, a -c file that does not exist. The daemon
# already running keeps working. nfqd -t refuses what a start refuses (a
# control socket or stats file whose directory cannot be made, a socket
# path too long, a match the kernel's NFQUEUE cannot feed); without
# CAP_NET_ADMIN over the network namespace, which the start needs, it
# warns that it could not ask the kernel.
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

# A config "nfqd -t" accepts starts: what the start refuses, -t refuses.
badconf() {
	conf_file "$1" <<EOF
options {
	${5:-queues 2};
	stats-file "${3:-$TMP/$1.stats}";
	control-socket "${2:-$TMP/$1.sock}";
}
${4:-}
EOF
}
t_refuses() {
	local conf=$1 want=$2 out
	out=$(ip netns exec "$NS_B" "$NFQD" -t -c "$conf" 2>&1) &&
		fail "nfqd -t accepted $(basename "$conf"): $out"
	echo "$out" | grep -qF "$want" ||
		fail "nfqd -t $(basename "$conf"): no \"$want\" in: $out"
	log "-t refuses as expected: $out"
}
long=$TMP/$(printf 'x%.0s' $(seq 120)).sock
c=$(badconf sockdir.conf /proc/nonexist/x.sock)
expect_fail 'control-socket "/proc/nonexist/x.sock": cannot create its directory' "$NFQD" -c "$c"
t_refuses "$c" 'control-socket "/proc/nonexist/x.sock": cannot create its directory'
c=$(badconf socklong.conf "$long")
expect_fail "too long" "$NFQD" -c "$c"
t_refuses "$c" "too long"
c=$(badconf statsdir.conf "" /proc/nonexist/stats9)
expect_fail 'stats-file "/proc/nonexist/stats9": cannot create its directory' "$NFQD" -c "$c"
t_refuses "$c" 'stats-file "/proc/nonexist/stats9": cannot create its directory'
# A start that fails after the control socket listens removes it, and
# the stats file: as a user with CAP_NET_ADMIN only (no root: the
# directory checks are root's view) and a stats directory /proc refuses.
mkdir -m 777 "$TMP/s9"
c=$(badconf stale.conf "$TMP/s9/nfqd9.sock" /proc/nonexist/stats9 "" "queues 5-5")
out=$(timeout 10 ip netns exec "$NS_B" setpriv --reuid=65534 \
	--regid=65534 --clear-groups --inh-caps=+net_admin \
	--ambient-caps=+net_admin "$NFQD" -c "$c" 2>&1) &&
	fail "a stats file in /proc/nonexist started: $out"
echo "$out" | grep -qF "stats: cannot create the directory of" ||
	fail "stale.conf: $out"
[ -e "$TMP/s9/nfqd9.sock" ] && fail "a failed start left its control socket"
# ... and one whose workers do not start (no thread to be had), after the
# stats file was written.
require_cmd cc
cc -shared -fPIC -O2 -o "$TMP/threadfail.so" \
	"$TOP_SRCDIR/tests/integration/threadfail_shim.c" -ldl -lpthread ||
	fail "cannot build the shim"
: >"$TMP/fail"
c=$(badconf nothread.conf "" "" "" "queues 5-5")
out=$(timeout 10 ip netns exec "$NS_B" env THREADFAIL_FILE="$TMP/fail" \
	LD_PRELOAD="$(san_preload "$TMP/threadfail.so")" "$NFQD" -c "$c" 2>&1) &&
	fail "nfqd started without threads: $out"
for f in "$TMP/nothread.conf.sock" "$TMP/nothread.conf.stats"; do
	[ -e "$f" ] && fail "a failed start left $f: $out"
done
log "a failed start removed its socket and stats file: $out"
# ct state: refused by -t exactly when the start refuses it (this kernel's
# CONFIG_NETFILTER_NETLINK_GLUE_CT).
# Queue 3 is bound: a kernel with ct state refuses the start too.
c=$(badconf ct.conf "" "" "hook forward { ct state new accept; }" "queues 3-3")
if out=$(timeout 10 ip netns exec "$NS_B" "$NFQD" -c "$c" 2>&1); then
	fail "ct.conf: the start did not stop: $out"
fi
if echo "$out" | grep -qF "ct state needs conntrack attributes"; then
	t_refuses "$c" "ct state needs conntrack attributes"
else
	ip netns exec "$NS_B" "$NFQD" -t -c "$c" >/dev/null 2>&1 ||
		fail "ct.conf: the kernel has ct state, -t refused it"
fi
# Without CAP_NET_ADMIN -t cannot ask the kernel: it warns, the start checks.
chmod 644 "$c"
noadmin="cannot ask the kernel whether NFQUEUE provides what this rule needs (no CAP_NET_ADMIN over this network namespace): the start checks it"
out=$(ip netns exec "$NS_B" setpriv --reuid=65534 --regid=65534 \
	--clear-groups --inh-caps=-all --bounding-set=-all \
	"$NFQD" -t -c "$c" 2>&1) ||
	fail "ct.conf: -t without CAP_NET_ADMIN refused it: $out"
echo "$out" | grep -qF "$noadmin" ||
	fail "ct.conf: -t without CAP_NET_ADMIN did not warn: $out"
# Root of a user namespace of its own has CAP_NET_ADMIN there but none
# over this network namespace, whose kernel refuses its every queue
# message (EPERM): -t warns as above (it did not read that EPERM as a
# feature the kernel has), and the start refuses for the capability.
if unshare --user --map-root-user true 2>/dev/null; then
	out=$(ip netns exec "$NS_B" unshare --user --map-root-user \
		"$NFQD" -t -c "$c" 2>&1) ||
		fail "ct.conf: -t in a user namespace refused it: $out"
	echo "$out" | grep -qF "$noadmin" ||
		fail "ct.conf: -t in a user namespace did not warn: $out"
	expect_fail "no CAP_NET_ADMIN over this network namespace" \
		unshare --user --map-root-user "$NFQD" -c "$c"
else
	# A chroot (unshare(2): EPERM) or a container's seccomp filter
	# forbids them: the rest of the test holds there too.
	log "no user namespaces here (unshare --user fails): -t as root of one not checked"
fi

kill -0 "$NFQD_PID" || fail "first nfqd died"
in_a ping -c 3 -i 0.1 -W 2 -q 192.0.2.2 >/dev/null \
	|| fail "traffic through the first nfqd stopped"
stop_nfqd
log "ok"
