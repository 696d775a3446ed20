#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The man pages' examples work as written: every config example (a .nf
# block starting with options, set, hook or a comment) passes "nfqd -t",
# and the repeat example of nfqd.conf(5) runs for real with the iptables
# rule shown beside it: each packet is judged once, handed back marked,
# and not queued again.
. "$(dirname "$0")/../lib.sh"

# nfqd.8 and nfqd.conf.5 are made from man/*.in with the configured paths.
MAN=$TOP_BUILDDIR/man
# Print the .nf/.fi blocks of man page $1 with roff escapes undone, each
# followed by a line "@@".
blocks() {
	awk '/^\.nf/ { on = 1; next } /^\.fi/ { if (on) print "@@"; on = 0; next }
		on && !/^\./ { gsub(/\\-/, "-"); gsub(/\\\\/, "\\"); print }' "$1"
}
n=0
for page in "$MAN"/nfqd.conf.5 "$MAN"/nfqd.8 "$TOP_SRCDIR"/man/nfqd-ctl.8; do
	blocks "$page" >"$TMP/blocks"
	i=0
	: >"$TMP/ex"
	while IFS= read -r line; do
		if [ "$line" != "@@" ]; then
			echo "$line" >>"$TMP/ex"
			continue
		fi
		i=$((i + 1))
		# A config begins "options {", "set NAME {", "hook NAME {" or a
		# comment ("set  type  elements" is the head of a table).
		if ! grep -m1 -v '^[[:space:]]*$' "$TMP/ex" |
			grep -qE '^[[:space:]]*(options[[:space:]]*[{]|(set|hook)[[:space:]]+[^[:space:]]+[[:space:]]*[{]|#)'; then
			: >"$TMP/ex"
			continue
		fi
		# A placeholder (\fI...\fR) is a syntax outline, not an example.
		if grep -q '\\f' "$TMP/ex"; then : >"$TMP/ex"; continue; fi
		# A set's element file is read by "nfqd -t": one is made.
		sed -i -E "s|^([[:space:]]*)file \"[^\"]*\"|\1file \"$TMP/setfile\"|" "$TMP/ex"
		echo "198.51.100.7" >"$TMP/setfile"
		# "nfqd -t" checks that option user and control-group exist:
		# the example's names are for the host it describes; here
		# ones that exist stand in for them.
		sed -i -E "s/^([[:space:]]*)user \"[^\"]*\"/\1user \"nobody\"/; s/^([[:space:]]*)control-group \"[^\"]*\"/\1control-group \"$(id -gn nobody)\"/" "$TMP/ex"
		out=$(nfqd_check "$TMP/ex") ||
			fail "$(basename "$page") example $i: nfqd -t: $out"
		log "$(basename "$page") example $i: $out"
		n=$((n + 1))
		: >"$TMP/ex"
	done <"$TMP/blocks"
done
[ "$n" -gt 0 ] || fail "no config example found"

# The repeat example, for real.
rule=$(blocks "$MAN/nfqd.conf.5" | grep -m1 'repeat;')
ipt=$(blocks "$MAN/nfqd.conf.5" | grep -m1 '^iptables .*NFQUEUE')
[ -n "$rule" ] || fail "no repeat rule in nfqd.conf(5)"
[ -n "$ipt" ] || fail "no iptables rule shown for the repeat example"
port=$(echo "$rule" | sed -n 's/.*udp dport \([0-9]*\).*/\1/p')
[ -n "$port" ] || fail "the repeat example matches no udp port: $rule"
log "repeat example: '$rule' with '$ipt'"
ns_setup
sink_setup
require_cmd iptables
# shellcheck disable=SC2086
in_b $ipt || fail "the example's iptables rule failed: $ipt"
conf=$(conf_file repeat.conf <<EOF
options {
	queues 1;
	stats-file "$TMP/stats";
	control-socket "$TMP/nfqd.sock";
}
hook input {
	${rule%%#*}
}
EOF
)
start_nfqd "$NS_B" "$conf"
wait_bound "$NS_B" 0
send_udp "$NS_A" 192.0.2.2 100 -p "$port"
wait_sink_udp 100 >/dev/null
sleep 0.5	# not a wait: a looping packet would keep coming back meanwhile
[ "$(sink_udp_packets)" = 100 ] || fail "the sink saw $(sink_udp_packets) of 100"
stop_nfqd
packets=$(final_counter packets)
other=$(final_counter other)
log "100 sent: judged $packets times, $other repeat verdicts"
[ "$packets" = 100 ] || fail "100 packets were judged $packets times"
[ "$other" = 100 ] || fail "$other repeat verdicts, want 100"
log "ok: $n config examples pass nfqd -t; repeat judges each packet once"
