#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The stats file is written through a temporary file that nobody can
# plant in advance: with symbolic links to a victim file at the old fixed
# temporary name (PATH.tmp) and at other guessable names, in a directory
# anyone may write to, the victim stays intact, the links stay links, and
# the stats file is still written (a regular file, mode 0644) and kept up
# to date.
. "$(dirname "$0")/../lib.sh"

ns_setup
require_cmd iptables
in_b iptables -A INPUT -p udp -j NFQUEUE --queue-num 0
mkdir -m 1777 "$TMP/shared"
echo "precious" >"$TMP/victim"
for n in stats.tmp .stats.tmp stats.new stats~ .stats.swp stats.tmp.0; do
	ln -s "$TMP/victim" "$TMP/shared/$n"
done
conf=$(conf_file nfqd.conf <<EOF
options {
	queues 1;
	stats-file "$TMP/shared/stats";
	stats-interval 1;
	control-socket "$TMP/nfqd.sock";
}
EOF
)
start_nfqd "$NS_B" "$conf"
wait_bound "$NS_B" 0
send_udp "$NS_A" 192.0.2.2 7
# Wait for a rewrite that counts the 7 packets (column 10).
end=$(deadline "$WAIT_SECONDS")
while before "$end"; do
	[ -f "$TMP/shared/stats" ] && [ "$(awk '{ print $10 }' "$TMP/shared/stats")" = 7 ] && break
	sleep 0.1
done
[ "$(awk '{ print $10 }' "$TMP/shared/stats" 2>/dev/null)" = 7 ] \
	|| fail "the stats file was not written: $(cat "$TMP/shared/stats" 2>&1)"
[ -L "$TMP/shared/stats" ] && fail "the stats file is a symbolic link"
[ "$(stat -c %a "$TMP/shared/stats")" = 644 ] \
	|| fail "stats file mode $(stat -c %a "$TMP/shared/stats"), want 644"
[ "$(cat "$TMP/victim")" = precious ] || fail "the victim was overwritten: $(head -2 "$TMP/victim")"
for n in stats.tmp .stats.tmp stats.new stats~ .stats.swp stats.tmp.0; do
	[ -L "$TMP/shared/$n" ] || fail "$n is no longer a symbolic link"
done
stop_nfqd
left=$(find "$TMP/shared" -type f)
[ -z "$left" ] || fail "files left behind: $left"
log "ok: planted links ignored, victim intact, stats written"
