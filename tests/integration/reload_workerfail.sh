#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A reload whose new queue's worker cannot start (a preloaded shim makes
# pthread_create fail) fails as a whole: the error names the queue, the
# generation stays, and the new queue is not left bound (packets for it
# are not held by a queue nobody reads). Then the same reload succeeds.
. "$(dirname "$0")/../lib.sh"

ns_setup
require_cmd cc
cc -shared -fPIC -O2 -o "$TMP/threadfail.so" \
	"$TOP_SRCDIR/tests/integration/threadfail_shim.c" -ldl -lpthread \
	|| fail "cannot build the shim"
write_conf() {
	(flood_options "$1"; echo 'hook input { policy accept; }') \
		>"$TMP/nfqd.conf.new" && mv "$TMP/nfqd.conf.new" "$TMP/nfqd.conf"
}
write_conf 1
ip netns exec "$NS_B" env LD_PRELOAD="$(san_preload "$TMP/threadfail.so")" THREADFAIL_FILE="$TMP/fail" \
	"$NFQD" -c "$TMP/nfqd.conf" >"$TMP/nfqd.log" 2>&1 &
NFQD_PID=$!
wait_bound "$NS_B" 0
ctl() { "$NFQD_CTL" -s "$TMP/nfqd.sock" "$@"; }
end=$(deadline "$WAIT_SECONDS")
until ctl status >/dev/null 2>&1 || ! before "$end"; do sleep 0.05; done
write_conf 2
touch "$TMP/fail"
out=$(ctl reload 2>&1) && fail "reload succeeded although queue 1's worker could not start"
log "refused: $out"
echo "$out" | grep -q "queue 1: worker did not start" \
	|| fail "the error does not name queue 1's worker: $out"
[ -z "$(kqueue_line "$NS_B" 1)" ] || fail "queue 1 left bound after the failed reload"
ctl -j status | tr -d ' \n' | grep -q '"generation":1,' \
	|| fail "generation changed: $(ctl status)"
rm "$TMP/fail"
ctl reload >/dev/null || fail "reload failed without the shim's failure"
wait_bound "$NS_B" 0 1
stop_nfqd
log "ok: a worker that cannot start fails the reload and binds nothing"
