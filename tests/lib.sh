# SPDX-License-Identifier: GPL-2.0-or-later
# tests/lib.sh - shared helpers for nfqd's integration tests.
#
# Every test builds its own network namespaces (names carry the test's PID,
# so tests may run in parallel) and removes them on any exit. Nothing here
# touches the host's own namespace or firewall.
#
# Topology made by ns_setup:
#   $NS_A (sender, 192.0.2.1 / 2001:db8::1, veth "va")
#     <-> $NS_B (nfqd host, 192.0.2.2 / 2001:db8::2, veth "vb")
# Exit code 77 means "skipped"; under CI=true a skip is a failure.

set -u

# The system's programs first: a python3 from a version manager (pyenv
# shims) costs a second per start and lacks Debian's python3-scapy.
PATH=/usr/sbin:/usr/bin:/sbin:/bin:$PATH

NFQD=${NFQD:-$(pwd)/nfqd}
NFQD_CTL=${NFQD_CTL:-$(pwd)/nfqd-ctl}
TOP_SRCDIR=${TOP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
TOP_BUILDDIR=${TOP_BUILDDIR:-$(pwd)}

TEST_NAME=$(basename "$0" .sh)
NS_A="nfqd-$$-a"
NS_B="nfqd-$$-b"
TMP=$(mktemp -d "/tmp/nfqd-test.$TEST_NAME.XXXXXX")
NFQD_PID=
_BG_PIDS=

log() { echo "# $TEST_NAME: $*"; }

# Deadlines are in seconds of the clock, not in rounds of a loop, and
# generous: on a loaded machine (tests/README.md, "Under load") a round
# that forks ip or awk can take a second. WAIT_SECONDS is the default.
WAIT_SECONDS=${WAIT_SECONDS:-30}
# Print the time $1 seconds from now (dash has no $SECONDS).
deadline() { echo $(($(date +%s) + $1)); }
# True while deadline $1 is in the future.
before() { [ "$(date +%s)" -lt "$1" ]; }

# Sanitizer builds (tests/README.md): every program the test runs writes
# its sanitizer reports to $TMP/san/, whatever it does with its stderr,
# and cleanup fails the test if one is there. A test that expects a
# program to fail cannot mistake a report for that failure. The directory
# is open to all: some programs run as nobody.
SAN_DIR=$TMP/san
mkdir -p "$SAN_DIR"
if [ "${SAN_MODE:-none}" != none ]; then
	chmod 711 "$TMP"
	chmod 1777 "$SAN_DIR"
fi
ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}log_path=$SAN_DIR/report"
UBSAN_OPTIONS="${UBSAN_OPTIONS:+$UBSAN_OPTIONS:}log_path=$SAN_DIR/report"
TSAN_OPTIONS="${TSAN_OPTIONS:+$TSAN_OPTIONS:}log_path=$SAN_DIR/report"
export ASAN_OPTIONS UBSAN_OPTIONS TSAN_OPTIONS

# The LD_PRELOAD list for running nfqd with shim $1: in a sanitizer build
# the sanitizer's runtime must come first in the process (ASan refuses to
# start otherwise), so it goes before the shim.
san_preload() {
	local rt
	rt=$(ldd "$NFQD" | awk '/lib[at]san\.so/ { print $3; exit }')
	echo "${rt:+$rt:}$1"
}

# Fail unless the sanitizers stayed silent: report files in $SAN_DIR, or
# a report in a log the test kept (a program run with its own options).
san_check() {
	local f bad=0
	for f in "$SAN_DIR"/report.*; do
		[ -e "$f" ] || continue
		echo "FAIL: $TEST_NAME: sanitizer report $(basename "$f"):" >&2
		cat "$f" >&2
		bad=1
	done
	for f in "$TMP"/*.log; do
		[ -e "$f" ] || continue
		if grep -qE 'ERROR: (AddressSanitizer|LeakSanitizer)|runtime error:|WARNING: ThreadSanitizer' "$f"; then
			echo "FAIL: $TEST_NAME: sanitizer report in $(basename "$f"):" >&2
			grep -A30 -E 'ERROR: (AddressSanitizer|LeakSanitizer)|runtime error:|WARNING: ThreadSanitizer' "$f" >&2
			bad=1
		fi
	done
	return $bad
}

fail() {
	echo "FAIL: $TEST_NAME: $*" >&2
	if [ -s "$TMP/nfqd.log" ]; then
		echo "--- nfqd log (last 30 lines) ---" >&2
		tail -n 30 "$TMP/nfqd.log" >&2
	fi
	exit 1
}

skip() {
	if [ "${CI:-}" = true ]; then
		echo "FAIL: $TEST_NAME: skipped in CI: $*" >&2
		exit 1
	fi
	echo "SKIP: $TEST_NAME: $*" >&2
	exit 77
}

# A process still in the test's namespaces once its own were killed and
# waited for leaked (started in the background through a function, say):
# kill it and fail, so that no test leaves nfqd running after it.
ns_leftovers() {
	local left end
	end=$(deadline 10)
	while :; do
		left=$(ip netns pids "$NS_A" 2>/dev/null; ip netns pids "$NS_B" 2>/dev/null)
		[ -z "$left" ] && return 0
		before "$end" || break
		sleep 0.1
	done
	echo "FAIL: processes left in the test's namespaces:" >&2
	ps -o pid,args -p "$(echo $left | tr ' ' ,)" >&2
	kill -KILL $left 2>/dev/null
	return 1
}

# The state letter (R, S, T, Z ...) of child $1 of this shell, or
# nothing once it is gone: a background process the test has waited for
# is gone, and on a busy machine its PID soon names another program,
# perhaps another test's (PIDs wrap at kernel.pid_max).
child_state() {
	awk -v me=$$ '/^State:/ { s = $2 } /^PPid:/ { p = $2 }
		END { if (p == me) print s }' "/proc/$1/status" 2>/dev/null
}

# True if PID $1 is still a child of this shell: cleanup signals only its
# own children.
own_child() { [ -n "$(child_state "$1")" ]; }

# Stop the test's own background processes "$@": SIGTERM, and SIGCONT to
# one that is stopped (SIGSTOP) so that it sees the SIGTERM. Never to
# one that runs: a SIGCONT discards a SIGSTOP that is queued but not yet
# delivered, and a sanitizer build's leak check at exit attaches to its
# own threads with exactly such a SIGSTOP; it then waits for a stop that
# never comes, for ever. One still running after $WAIT_SECONDS s is
# killed (SIGKILL), its threads' kernel wait channels are printed, and
# the function returns 1: a hung program is a quick failure, not a
# suite that runs out of time.
stop_children() {
	local p s mine= end rc=0
	for p in "$@"; do
		own_child "$p" && mine="$mine $p" && kill "$p" 2>/dev/null
	done
	end=$(deadline "$WAIT_SECONDS")
	for p in $mine; do
		while s=$(child_state "$p") && [ -n "$s" ] && [ "$s" != Z ]; do
			[ "$s" = T ] && kill -CONT "$p" 2>/dev/null
			before "$end" || break
			sleep 0.05
		done
		if [ -n "$s" ] && [ "$s" != Z ]; then
			echo "FAIL: pid $p ($(cat "/proc/$p/comm" 2>/dev/null)) still runs" \
				"$WAIT_SECONDS s after SIGTERM; killed. Its threads wait in:" \
				"$(cat /proc/"$p"/task/*/wchan 2>/dev/null | tr '\0' ' ')" >&2
			kill -KILL "$p" 2>/dev/null
			rc=1
		fi
		wait "$p" 2>/dev/null
	done
	return $rc
}

cleanup() {
	local rc=$?
	set +e
	eval "${_AT_EXIT:-}"
	stop_children $NFQD_PID $_BG_PIDS || rc=1
	ns_leftovers || rc=1
	ip netns del "$NS_A" 2>/dev/null
	ip netns del "$NS_B" 2>/dev/null
	san_check || rc=1
	if [ $rc -eq 0 ] || [ -z "${KEEP_TMP:-}" ]; then
		rm -rf "$TMP"
	fi
	exit $rc
}
trap cleanup EXIT
trap 'echo "FAIL: $TEST_NAME: interrupted (SIGINT)" >&2; exit 1' INT
# make check runs each test under timeout(1) (TEST_TIMEOUT in
# Makefile.am), which sends SIGTERM to its whole process group.
trap 'echo "FAIL: $TEST_NAME: terminated (SIGTERM; make check gives a test ${TEST_TIMEOUT:-?} s)" >&2; exit 1' TERM

require_root() {
	[ "$(id -u)" -eq 0 ] || skip "needs root (network namespaces)"
	if ! _err=$(ip netns add "nfqd-$$-probe" 2>&1); then
		# In a chroot whose root is no mount point "ip netns" cannot
		# make its mount namespace: name that and the cure.
		mountpoint -q / || _err="$_err; / is not a mount point (a chroot?): bind-mount the root onto itself first (mount --bind DIR DIR, then chroot DIR)"
		skip "cannot create network namespaces ($_err)"
	fi
	ip netns del "nfqd-$$-probe"
}

require_cmd() {
	for c in "$@"; do
		command -v "$c" >/dev/null 2>&1 || skip "needs $c"
	done
}

# Run a command inside namespace A or B. Not for a command put in the
# background: that is a subshell, and killing $! leaves the command
# running (start it with ip netns exec; ns_leftovers catches the slip).
in_a() { ip netns exec "$NS_A" "$@"; }
in_b() { ip netns exec "$NS_B" "$@"; }

ns_setup() {
	require_root
	require_cmd ip
	ip netns add "$NS_A" || fail "netns add $NS_A"
	ip netns add "$NS_B" || fail "netns add $NS_B"
	ip link add va netns "$NS_A" type veth peer name vb netns "$NS_B" \
		|| fail "veth"
	in_a ip link set lo up
	in_b ip link set lo up
	in_a ip addr add 192.0.2.1/24 dev va
	in_b ip addr add 192.0.2.2/24 dev vb
	in_a ip addr add 2001:db8::1/64 dev va nodad
	in_b ip addr add 2001:db8::2/64 dev vb nodad
	in_a ip link set va up
	in_b ip link set vb up
	# Static neighbours: no ARP/ND traffic to confuse packet counts.
	local mac_a mac_b
	mac_a=$(in_a cat /sys/class/net/va/address)
	mac_b=$(in_b cat /sys/class/net/vb/address)
	in_a ip neigh replace 192.0.2.2 lladdr "$mac_b" dev va nud permanent
	in_b ip neigh replace 192.0.2.1 lladdr "$mac_a" dev vb nud permanent
	in_a ip -6 neigh replace 2001:db8::2 lladdr "$mac_b" dev va nud permanent
	in_b ip -6 neigh replace 2001:db8::1 lladdr "$mac_a" dev vb nud permanent
}

# The kernel's /proc line for queue $2 in namespace $1 (empty if unbound).
kqueue_line() {
	ip netns exec "$1" awk -v q="$2" '$1 == q' /proc/net/netfilter/nfnetlink_queue
}

# Field $3 (1-based, kernel numbering) of queue $2's line in namespace $1.
kqueue_field() {
	kqueue_line "$1" "$2" | awk -v f="$3" '{ print $f }'
}

# Wait until queues "$2..." are bound in namespace $1 ($WAIT_SECONDS s
# at most).
wait_bound() {
	local ns=$1 q end
	shift
	end=$(deadline "$WAIT_SECONDS")
	while before "$end"; do
		local all=1
		for q in "$@"; do
			[ -n "$(kqueue_line "$ns" "$q")" ] || all=0
		done
		[ $all -eq 1 ] && return 0
		if [ -n "$NFQD_PID" ] && ! kill -0 "$NFQD_PID" 2>/dev/null; then
			fail "nfqd exited before binding queues $*"
		fi
		sleep 0.05
	done
	fail "queues $* not bound after $WAIT_SECONDS s"
}

# Start nfqd in namespace $1 with config file $2 (or "" for none) and
# extra arguments; output goes to $TMP/nfqd.log; sets NFQD_PID.
start_nfqd() {
	local ns=$1 conf=$2
	shift 2
	if [ -n "$conf" ]; then
		ip netns exec "$ns" "$NFQD" -c "$conf" "$@" >"$TMP/nfqd.log" 2>&1 &
	else
		ip netns exec "$ns" "$NFQD" "$@" >"$TMP/nfqd.log" 2>&1 &
	fi
	NFQD_PID=$!
}

# Stop nfqd with SIGTERM and check it exits 0 within $WAIT_SECONDS s.
stop_nfqd() {
	[ -n "$NFQD_PID" ] || return 0
	kill -TERM "$NFQD_PID" 2>/dev/null
	local end
	end=$(deadline "$WAIT_SECONDS")
	while before "$end"; do
		kill -0 "$NFQD_PID" 2>/dev/null || break
		sleep 0.05
	done
	kill -0 "$NFQD_PID" 2>/dev/null && fail "nfqd did not exit within $WAIT_SECONDS s of SIGTERM"
	wait "$NFQD_PID"
	local rc=$?
	NFQD_PID=
	[ $rc -eq 0 ] || fail "nfqd exited $rc after SIGTERM"
}

# Wait ($WAIT_SECONDS s at most) until strace (or any tracer) is attached
# to every thread or process "$@": a sleep would leave a slow strace
# unattached when the test goes on, and the test would trace nothing.
wait_traced() {
	local t end
	end=$(deadline "$WAIT_SECONDS")
	for t in "$@"; do
		while ! awk '/^TracerPid:/ { exit $2 == 0 }' "/proc/$t/status" 2>/dev/null; do
			before "$end" || fail "no tracer attached to $t after $WAIT_SECONDS s"
			sleep 0.05
		done
	done
}

# Remember a background PID for cleanup.
bg_pid() { _BG_PIDS="$_BG_PIDS $1"; }

# Run the shell command $1 when the test ends, before its children are
# signalled: for a server that is no child of the test's shell (tmux's
# server daemonizes), which cleanup would otherwise leave running.
at_exit() { _AT_EXIT="${_AT_EXIT:-}$1
"; }

# "nfqd -t -c $1", printing its output: succeeds when it says "config
# OK", or refuses the config only for an NFQUEUE feature this kernel
# lacks (ct state without CONFIG_NETFILTER_NETLINK_GLUE_CT), which a start
# refuses too; that refusal is printed after "config OK, but: ".
nfqd_check() {
	local out
	out=$("$NFQD" -t -c "$1" 2>&1) && { echo "$out"; return 0; }
	echo "$out" | grep -v "which this kernel does not provide" | grep -q . &&
		{ echo "$out"; return 1; }
	echo "config OK, but: $out"
}

# Write a config file from stdin to $TMP/$1 and print its path. Stats and
# control socket paths default into $TMP so tests never touch /run.
conf_file() {
	cat >"$TMP/$1"
	echo "$TMP/$1"
}

# A UDP/ICMP sink in namespace B: an nft chain at a later input priority
# that counts and drops what nfqd accepted (so no socket needs to listen).
sink_setup() {
	require_cmd nft
	in_b nft -f - <<'NFT' || fail "nft sink"
table inet nfqdsink {
	chain in {
		type filter hook input priority 100; policy accept;
		meta l4proto udp counter drop
		meta l4proto icmp counter accept
		meta l4proto ipv6-icmp counter accept
	}
}
NFT
}

# Packets counted by the sink's udp rule.
sink_udp_packets() {
	in_b nft list chain inet nfqdsink in | awk '/udp counter/ { for (i = 1; i <= NF; i++) if ($i == "packets") print $(i + 1) }'
}

# Wait ($WAIT_SECONDS s at most) until the sink has counted $1 UDP
# packets; print the count it has then. Packets still in flight on a
# loaded machine are waited for, a count that went past $1 is not.
wait_sink_udp() {
	_end=$(deadline "$WAIT_SECONDS")
	while [ "$(sink_udp_packets)" -lt "$1" ] && before "$_end"; do
		sleep 0.1
	done
	sink_udp_packets
}

# Send $3 UDP datagrams from namespace $1 to $2 with the generator
# (tests/bench/nfqd-gen; default destination port 9, one source port per
# source address: pass -S A,B,... for several flows, -P N for N ports).
send_udp() {
	local ns=$1 dst=$2 count=$3
	shift 3
	local gen="$TOP_BUILDDIR/tests/bench/nfqd-gen"
	[ -x "$gen" ] || fail "generator $gen not built"
	ip netns exec "$ns" "$gen" -d "$dst" -n "$count" "$@" \
		|| fail "generator failed"
}

# Sum of counter $1 ("packets", "accepted", ...) over the "queue N:
# stopped:" lines nfqd logs when it exits.
final_counter() {
	awk -v k="$1" '/stopped: packets/ {
		for (i = 1; i <= NF; i++) if ($i == k) s += $(i + 1)
	} END { print s + 0 }' "$TMP/nfqd.log"
}

# Give namespace A the addresses 192.0.2.10-25 besides 192.0.2.1 and
# print them comma-separated (for nfqd-gen -S): --queue-balance hashes
# addresses only, so many sources are what spreads flows over queues.
add_sources() {
	local i srcs=192.0.2.1
	for i in $(seq 10 25); do
		in_a ip addr add 192.0.2.$i/24 dev va
		srcs="$srcs,192.0.2.$i"
	done
	echo "$srcs"
}

# The options block of the flood tests: $1 queues (default 2), room for a
# flood ($2 queue-maxlen, default 65536; $3 rcvbuf, default 64M), stats
# file and control socket in $TMP.
flood_options() {
	cat <<EOF
options {
	queues ${1:-2};
	queue-maxlen ${2:-65536};
	rcvbuf ${3:-64M};
	stats-file "$TMP/stats";
	control-socket "$TMP/nfqd.sock";
}
EOF
}
