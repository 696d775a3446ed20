#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# nfqd started without -c while the default config file did not exist
# runs the built-in config; once that file exists, a reload loads it (and
# says so) instead of the built-in config again. The default path is the
# build's (/etc/nfqd/nfqd.conf): nfqd runs in a mount namespace of its own
# whose /etc is an overlay writing into $TMP, and whose /run is a tmpfs,
# so the host's files are never touched.
. "$(dirname "$0")/../lib.sh"

ns_setup
require_cmd unshare nsenter
grep -qw overlay /proc/filesystems || skip "no overlay file system"
defconf=$("$NFQD" -h | sed -n 's/.*(default \([^;]*\);.*/\1/p')
[ -n "$defconf" ] || fail "nfqd -h names no default config"
# The overlay goes on the nearest directory above the config's that
# exists (a build's own prefix may have no etc yet: make distcheck).
etc=$(dirname "$(dirname "$defconf")")
while [ ! -d "$etc" ]; do etc=$(dirname "$etc"); done
[ "$etc" != / ] || skip "no directory above $defconf for the overlay"
mkdir -p "$TMP/up" "$TMP/work"
ip netns exec "$NS_B" unshare -m --propagation private sh -c '
	mount -t overlay overlay -o "lowerdir=$1,upperdir=$2,workdir=$3" "$1" &&
	mount -t tmpfs nfqd-test /run && rm -f "$4" && exec "$5"' sh \
	"$etc" "$TMP/up" "$TMP/work" "$defconf" "$NFQD" >"$TMP/nfqd.log" 2>&1 &
NFQD_PID=$!
# -r -w: nfqd's root and directory too (setns() into a mount namespace
# leaves a chroot, as on a CI machine that runs the suite in one).
in_mnt() { nsenter -t "$NFQD_PID" -m -n -r -w "$@"; }
ctl() { in_mnt "$NFQD_CTL" -s /run/nfqd/nfqd.sock "$@"; }
wait_bound "$NS_B" 0
end=$(deadline "$WAIT_SECONDS")
until ctl status >/dev/null 2>&1; do
	before "$end" || fail "no control socket: $(cat "$TMP/nfqd.log")"
	sleep 0.05
done
ctl -j status | grep -q '"config_state": *"built-in"' ||
	fail "not the built-in config: $(ctl -j status)"

in_mnt sh -c 'mkdir -p "$(dirname "$1")" && cat >"$1"' sh "$defconf" <<EOF
options {
	queues 5-5;
	control-socket "/run/nfqd/nfqd.sock";
}
EOF
out=$(ctl reload 2>&1) || fail "reload failed: $out"
st=$(ctl -j status)
echo "$st" | grep -q '"config_state": *"file"' ||
	fail "the reload ignored the new $defconf: $st"
wait_bound "$NS_B" 5
grep -q "config $defconf exists now: loaded instead of the built-in config" \
	"$TMP/nfqd.log" || fail "the reload did not say so: $(cat "$TMP/nfqd.log")"
stop_nfqd
log "ok: a reload loaded $defconf, created after the start"
