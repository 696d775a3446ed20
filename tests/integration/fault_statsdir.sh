#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The stats file's directory goes wrong while nfqd runs: removed, made
# read-only, full. The mounts (small tmpfs over $TMP/sd) are made inside
# nfqd's own mount namespace (the one ip netns exec gave it), so nothing
# outside the test sees them and they go when nfqd exits. In every case
# nfqd keeps judging (200 probes: every one judged by the policy, nothing
# lost), logs a failure to write once per episode, not every interval,
# and writes the file again as soon as it can; a full disk keeps no
# temporary file. A removed directory is made again at the next
# rewrite, without a failure.
. "$(dirname "$0")/../lib.sh"
. "$TOP_SRCDIR/tests/integration/fault_lib.sh"

require_cmd nsenter mount umount
ns_setup
fault_setup
SD="$TMP/sd"
conf=$(conf_file nfqd.conf <<EOF
options {
	queues 1;
	stats-file "$SD/stats";
	stats-interval 1;
	control-socket "$TMP/nfqd.sock";
}
$FAULT_POLICY
EOF
)
start_nfqd "$NS_B" "$conf"
wait_bound "$NS_B" 0

# Run in nfqd's mount namespace.
# -r: nfqd's root (in a chroot, entering the mount namespace alone would
# put the command at the host's /).
in_mnt() { nsenter -t "$NFQD_PID" -m -r "$@"; }
failures() { grep -c "stats: cannot write $SD/stats" "$TMP/nfqd.log"; }
recoveries() { grep -c "stats: writing $SD/stats again" "$TMP/nfqd.log"; }

# Wait ($WAIT_SECONDS s at most) until the stats file, as nfqd sees it,
# counts every packet nfqd has judged (column 10).
wait_stats_current() {
	local end want got
	end=$(deadline "$WAIT_SECONDS")
	while before "$end"; do
		want=$(nq packets)
		got=$(in_mnt awk '{ print $10 }' "$SD/stats" 2>/dev/null)
		[ "$got" = "$want" ] && return 0
		sleep 0.1
	done
	fail "$1: the stats file says ${got:-nothing}, nfqd judged $want"
}

# Wait ($WAIT_SECONDS s at most) until command $1 prints $2.
wait_for() {
	local end
	end=$(deadline "$WAIT_SECONDS")
	while before "$end"; do
		[ "$($1)" = "$2" ] && return 0
		sleep 0.1
	done
	fail "$3: $1 is $($1), want $2"
}

# 200 probes (ports 9 and 10 in turn): every one judged, none lost.
probes() {
	snap p0
	send_udp "$NS_A" 192.0.2.2 200 -q -p 9 -P 2
	settle
	snap p1
	account p0 p1 "$1"
	[ "$D_ipt" -eq 200 ] || fail "$1: $D_ipt of 200 reached the queue"
	[ "$D_ac" -eq 100 ] && [ "$D_dr" -eq 100 ] \
		|| fail "$1: $D_ac accepted, $D_dr dropped, want 100 and 100"
	[ $((D_qd + D_ud + D_pass)) -eq 0 ] || fail "$1: packets lost or unjudged"
}

probes "stats directory in place"
wait_stats_current "start"

# 1. Removed: made again at the next rewrite.
rm -rf "$SD"
probes "stats directory removed"
wait_stats_current "directory removed"
[ "$(failures)" = 0 ] || fail "a removed directory logged a failure"

# 2. Read-only: one failure logged, however many intervals pass.
in_mnt mount -t tmpfs -o size=1m,mode=0755 nfqd-test "$SD" || fail "mount tmpfs"
in_mnt mount -o remount,ro "$SD" || fail "remount ro"
probes "stats directory read-only"
wait_for failures 1 "read-only"
sleep 3
probes "stats directory read-only, 3 s on"
[ "$(failures)" = 1 ] || fail "read-only: $(failures) failures logged, want 1"
in_mnt mount -o remount,rw "$SD" || fail "remount rw"
wait_for recoveries 1 "writable again"
wait_stats_current "writable again"

# 3. Full: a 16 KiB tmpfs filled by a file.
in_mnt umount "$SD" || fail "umount"
in_mnt mount -t tmpfs -o size=16k,mode=0755 nfqd-test "$SD" || fail "mount small tmpfs"
in_mnt dd if=/dev/zero of="$SD/fill" bs=4k 2>/dev/null
probes "stats directory full"
wait_for failures 2 "full"
sleep 3
probes "stats directory full, 3 s on"
[ "$(failures)" = 2 ] || fail "full: $(failures) failures logged, want 2"
left=$(in_mnt find "$SD" -name '.stats.*')
[ -z "$left" ] || fail "full: temporary files left behind: $left"
in_mnt rm -f "$SD/fill"
wait_for recoveries 2 "space again"
wait_stats_current "space again"

grep "stats:" "$TMP/nfqd.log" | while read -r line; do log "nfqd: $line"; done
stop_nfqd
log "ok"
