#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Log lines under the journal: when stderr is the stream JOURNAL_STREAM
# names (device:inode), every line starts with its syslog priority (<3>
# error, <4> warning, <6> info, <7> debug) instead of "nfqd: LEVEL: ",
# worker lines (a log statement) included; otherwise the text prefix stays.
. "$(dirname "$0")/../lib.sh"

ns_setup
require_cmd iptables
in_b iptables -A INPUT -p udp -j NFQUEUE --queue-num 0
conf=$(conf_file nfqd.conf <<EOF
options {
	queues 1;
	stats-file "$TMP/stats";
	control-socket "$TMP/nfqd.sock";
}
hook input {
	udp dport 9 log prefix "jr " accept;
}
EOF
)

# One run with JOURNAL_STREAM=$1 (empty: that of the log file itself).
run() {
	local i js=$1
	: >"$TMP/nfqd.log"
	[ -n "$js" ] || js=$(stat -c %d:%i "$TMP/nfqd.log")
	JOURNAL_STREAM=$js start_nfqd "$NS_B" "$conf" -d
	wait_bound "$NS_B" 0
	send_udp "$NS_A" 192.0.2.2 5
	end=$(deadline "$WAIT_SECONDS")
	until grep -q "jr hook input" "$TMP/nfqd.log" || ! before "$end"; do
		sleep 0.05
	done
	# A failed reload logs errors.
	echo "hook input { udp dport 9 acept; }" >"$TMP/bad.conf"
	cp "$conf" "$TMP/good.conf"
	cp "$TMP/bad.conf" "$conf"
	kill -HUP "$NFQD_PID"
	end=$(deadline "$WAIT_SECONDS")
	until grep -q "reload failed" "$TMP/nfqd.log" || ! before "$end"; do
		sleep 0.05
	done
	cp "$TMP/good.conf" "$conf"
	stop_nfqd
}

run ""
cp "$TMP/nfqd.log" "$TMP/journal.log"
for p in '<3>reload failed' '<6>started: ' '<6>jr hook input rule' '<7>queue 0: worker started'; do
	grep -qF "$p" "$TMP/journal.log" || fail "no line starting '$p' under the journal"
done
bad=$(grep -vE '^<[3467]>' "$TMP/journal.log" | head -3)
[ -z "$bad" ] || fail "lines without a priority under the journal: $bad"
grep -q "nfqd: info:" "$TMP/journal.log" && fail "the text prefix is repeated under the journal"

# JOURNAL_STREAM inherited, but stderr is another file: plain text.
run 1:1
grep -q "^nfqd: info: started: " "$TMP/nfqd.log" || fail "no plain text line without the journal"
grep -q "^nfqd: info: jr hook input rule" "$TMP/nfqd.log" || fail "no plain worker line without the journal"
grep -qE '^<[0-9]>' "$TMP/nfqd.log" && fail "priorities without the journal"
log "ok: priorities under the journal, plain text otherwise"
