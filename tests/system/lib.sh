# SPDX-License-Identifier: GPL-2.0-or-later
# tests/system/lib.sh - the installed nfqd under a real systemd: a minimal
# Debian tree of the host's release with systemd and the libraries nfqd
# links (debootstrap, cached), "make install DESTDIR=" into a fresh copy of
# it, booted with systemd-nspawn --boot in a network namespace of its own,
# driven with systemctl and journalctl inside.
#
# The host's network and firewall are never touched: the container has
# --private-network, and iptables/nft run inside it. The container is shut
# down and its tree removed on any exit.
#
# Environment:
#   NFQD_SYSTEM_CACHE   where the pristine tree is kept
#                       (default /var/cache/nfqd-system)
#   NFQD_SYSTEM_MIRROR  Debian mirror for debootstrap (default: the host's
#                       apt source for Debian, else deb.debian.org)
#   NFQD_SYSTEM_SUITE   the release to boot (default: the host's)
#   NFQD_SYSTEM_TESTS   "off" skips these tests, even in CI (contrib/test.sh
#                       sets it for make distcheck, whose temporary prefix
#                       is not a layout a system boots)

. "$(dirname "$0")/../lib.sh" || exit 99
# Never go on without a scratch directory: the tree is unpacked under it.
[ -d "${TMP:-}" ] || { echo "no scratch directory" >&2; exit 99; }

# The host's release (the binaries under test are built against it).
SYS_SUITE=${NFQD_SYSTEM_SUITE:-$(. /etc/os-release && echo "${VERSION_CODENAME:-}")}
SYS_SUITE=${SYS_SUITE:-bookworm}
SYS_PKGS="systemd,systemd-sysv,dbus,iproute2,iptables,nftables"
SYS_CACHE=${NFQD_SYSTEM_CACHE:-/var/cache/nfqd-system}
SYS_ROOT="$TMP/root"
SYS_MACHINE="nfqd-sys-$$"
SYS_PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
NSPAWN_PID=
INIT_PID=
# Exit status of fail(): tests expected to fail (XFAIL_TESTS) set 99 until
# their pending check, so that a broken harness is an ERROR, not an XFAIL.
FAIL_RC=1

fail() {
	echo "FAIL: $TEST_NAME: $*" >&2
	if [ -n "$INIT_PID" ]; then
		echo "--- journal of nfqd.service (last 40 lines) ---" >&2
		in_c journalctl -u nfqd --no-pager -n 40 >&2 2>&1
	fi
	exit "$FAIL_RC"
}

skip() {
	if [ "${CI:-}" = true ]; then
		FAIL_RC=99
		fail "skipped in CI: $*"
	fi
	echo "SKIP: $TEST_NAME: $*" >&2
	exit 77
}

sys_cleanup() {
	local rc=$?

	set +e
	sys_shutdown
	(exit $rc)
	cleanup
}
trap sys_cleanup EXIT

# Run a command inside the container (all its namespaces, its root).
# -r -w: the container's root and working directory, named. Entering the
# mount namespace alone sets the root to the top of that namespace's
# mount tree: the container's on a plain host, but in a chroot the
# host's own / (the chroot is no root of any namespace), where systemctl
# finds no /run/systemd/system and says "offline".
in_c() {
	nsenter -a -r -w -t "$INIT_PID" env -i PATH="$SYS_PATH" SYSTEMD_COLORS=0 \
		SYSTEMD_PAGER= LANG=C "$@"
}

sys_require() {
	[ "${NFQD_SYSTEM_TESTS:-on}" = off ] && {
		echo "SKIP: $TEST_NAME: NFQD_SYSTEM_TESTS=off" >&2
		exit 77
	}
	[ "$(id -u)" -eq 0 ] || skip "needs root"
	require_cmd debootstrap systemd-nspawn nsenter flock tar
	# systemd-nspawn needs the cgroup hierarchy; a chroot that bound
	# /sys without its submounts has none.
	mountpoint -q /sys/fs/cgroup ||
		fail "/sys/fs/cgroup is not mounted, so systemd-nspawn cannot boot a container (in a chroot: mount --rbind /sys DIR/sys, not --bind)"
	case ${NFQD_SBINDIR:-} in
	/usr/sbin|/usr/local/sbin) ;;
	*) skip "nfqd's sbindir '${NFQD_SBINDIR:-}' is not /usr/sbin or /usr/local/sbin" ;;
	esac
}

# The host's Debian mirror: first deb822 or one-line source for Debian
# that is not the security archive.
sys_mirror() {
	local m

	if [ -n "${NFQD_SYSTEM_MIRROR:-}" ]; then
		echo "$NFQD_SYSTEM_MIRROR"
		return
	fi
	m=$(cat /etc/apt/sources.list.d/*.sources 2>/dev/null | awk '
		/^URIs:/ && $2 ~ /\/debian\/?$/ { print $2; exit }')
	[ -n "$m" ] || m=$(cat /etc/apt/sources.list \
		/etc/apt/sources.list.d/*.list 2>/dev/null | awk '
		$1 == "deb" && $2 ~ /\/debian\/?$/ { print $2; exit }')
	echo "${m:-http://deb.debian.org/debian}"
}

# The Debian packages that hold the shared libraries nfqd and nfqd-ctl
# are linked with, comma-separated: a new dependency is installed in the
# tree without anyone having to list it here.
sys_runtime_pkgs() {
	local lib p pkgs=

	for lib in $(ldd "$TOP_BUILDDIR/nfqd" "$TOP_BUILDDIR/nfqd-ctl" \
			| awk '/=> \// { print $3 }' | sort -u); do
		p=$(dpkg -S "$lib" 2>/dev/null \
			|| dpkg -S "$(readlink -f "$lib")" 2>/dev/null \
			|| dpkg -S "/usr$lib" 2>/dev/null) \
			|| { echo "no Debian package holds $lib" >&2; return 1; }
		pkgs="$pkgs ${p%%:*}"
	done
	echo $pkgs | tr ' ' '\n' | sort -u | paste -sd, -
}

# Set SYS_TARBALL to the pristine tree's tarball, making it first if
# needed (one per suite and package list). Concurrent tests wait for one
# another on the cache's lock.
sys_cache() {
	local key tarball work mirror runtime

	runtime=$(sys_runtime_pkgs) || fail "cannot find nfqd's runtime packages"
	SYS_PKGS="$SYS_PKGS,$runtime"
	key=$(echo "$SYS_SUITE $SYS_PKGS" | sha256sum | cut -c1-12)
	tarball="$SYS_CACHE/$SYS_SUITE-$key.tar"
	mkdir -p "$SYS_CACHE" || fail "cannot create $SYS_CACHE"
	exec 8>"$SYS_CACHE/lock"
	flock 8
	if [ ! -s "$tarball" ]; then
		mirror=$(sys_mirror)
		work=$(mktemp -d "$SYS_CACHE/build.XXXXXX")
		log "debootstrap $SYS_SUITE from $mirror into $SYS_CACHE (once)"
		log "with $SYS_PKGS"
		if ! debootstrap --variant=minbase --include="$SYS_PKGS" \
				"$SYS_SUITE" "$work/root" "$mirror" \
				>"$work/debootstrap.log" 2>&1; then
			tail -n 20 "$work/debootstrap.log" >&2
			rm -rf "$work"
			flock -u 8
			skip "debootstrap $SYS_SUITE from $mirror failed"
		fi
		tar -C "$work/root" -cf "$tarball.tmp" . \
			&& mv "$tarball.tmp" "$tarball" \
			|| fail "cannot write $tarball"
		rm -rf "$work"
	fi
	flock -u 8
	exec 8>&-
	SYS_TARBALL=$tarball
}

# A fresh tree with nfqd installed by "make install DESTDIR=".
sys_install() {
	local unit

	sys_cache
	mkdir "$SYS_ROOT" && tar -C "$SYS_ROOT" -xf "$SYS_TARBALL" \
		|| fail "cannot unpack $SYS_TARBALL"
	env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL \
		make -s -C "$TOP_BUILDDIR" install DESTDIR="$SYS_ROOT" \
		>"$TMP/install.log" 2>&1 \
		|| { cat "$TMP/install.log" >&2; fail "make install failed"; }
	unit="$NFQD_UNITDIR/nfqd.service"
	[ -f "$SYS_ROOT$unit" ] || fail "make install did not install $unit"
	# A unit dir outside systemd's search path (--with-systemdsystemunitdir)
	# is for the admin to link; do it for them.
	case $NFQD_UNITDIR in
	/usr/lib/systemd/system|/usr/local/lib/systemd/system) ;;
	/lib/systemd/system) ;;
	*) cp "$SYS_ROOT$unit" "$SYS_ROOT/etc/systemd/system/" \
		&& log "$NFQD_UNITDIR: not searched, unit copied to /etc" ;;
	esac
	# The traffic generator, for tests that send packets inside.
	install -m 755 "$TOP_BUILDDIR/tests/bench/nfqd-gen" \
		"$SYS_ROOT/usr/local/bin/nfqd-gen" || fail "no generator"
}

# The container's PID 1, once it runs systemd: nspawn's first child only
# sets up the container; PID 1 is the child in another PID namespace.
sys_init_pid() {
	local c kids

	kids=$(cat "/proc/$NSPAWN_PID/task/$NSPAWN_PID/children" 2>/dev/null)
	for c in $kids; do
		[ "$(readlink "/proc/$c/ns/pid")" != "$(readlink /proc/self/ns/pid)" ] \
			&& [ "$(cat "/proc/$c/comm" 2>/dev/null)" = systemd ] \
			&& echo "$c" && return
	done
}

# Boot the tree; wait until systemd has finished starting up.
sys_boot() {
	local end state

	systemd-nspawn -q -D "$SYS_ROOT" --boot --register=no --keep-unit \
		--private-network -M "$SYS_MACHINE" >"$TMP/console.log" 2>&1 &
	NSPAWN_PID=$!
	end=$(deadline 60)
	while before "$end"; do
		INIT_PID=$(sys_init_pid)
		[ -n "$INIT_PID" ] && break
		kill -0 "$NSPAWN_PID" 2>/dev/null \
			|| { cat "$TMP/console.log" >&2; fail "systemd-nspawn exited"; }
		sleep 0.1
	done
	[ -n "$INIT_PID" ] || fail "the container's init did not appear"
	# is-system-running needs the system bus socket: wait for PID 1 first.
	# A boot on a loaded machine takes a while: 180 s at most.
	end=$(deadline 180)
	while before "$end"; do
		state=$(in_c systemctl is-system-running 2>/dev/null)
		case $state in
		running|degraded) break ;;
		esac
		sleep 0.2
	done
	case $state in
	running) ;;
	degraded)
		log "degraded: $(in_c systemctl --failed --no-legend | tr '\n' ' ')" ;;
	*)
		tail -n 30 "$TMP/console.log" >&2
		fail "boot did not finish (state '$state')" ;;
	esac
	log "booted systemd $(in_c systemctl --version | awk 'NR == 1 { print $2 }')"
}

# Orderly shutdown (SIGTERM makes nspawn ask the container's systemd to
# power off); SIGKILL to the container's init if it takes over 30 s.
sys_shutdown() {
	local i

	[ -n "$NSPAWN_PID" ] || return 0
	kill -TERM "$NSPAWN_PID" 2>/dev/null
	end=$(deadline 30)
	while kill -0 "$NSPAWN_PID" 2>/dev/null && before "$end"; do
		sleep 0.1
	done
	if kill -0 "$NSPAWN_PID" 2>/dev/null; then
		echo "# $TEST_NAME: container did not stop in 30 s: killing it" >&2
		[ -n "$INIT_PID" ] && kill -KILL "$INIT_PID" 2>/dev/null
		sleep 1
		kill -KILL "$NSPAWN_PID" 2>/dev/null
	fi
	wait "$NSPAWN_PID" 2>/dev/null
	NSPAWN_PID=
	INIT_PID=
	rm -rf "$SYS_ROOT"
}

# Everything up to a booted container with nfqd installed (not started).
sys_setup() {
	sys_require
	sys_install
	sys_boot
}

# Write stdin as the config nfqd reads by default.
sys_write_conf() {
	mkdir -p "$SYS_ROOT$NFQD_SYSCONFDIR/nfqd"
	cat >"$SYS_ROOT$NFQD_SYSCONFDIR/nfqd/nfqd.conf"
}

ctl_c() { in_c "$NFQD_SBINDIR/nfqd-ctl" "$@"; }

# A property of nfqd.service ("systemctl show -P").
unit_prop() { in_c systemctl show -P "$1" nfqd; }

# Wait (10 s at most) until the cgroup of the unit's last instance is
# gone. systemd 252 in a container can fail a start that comes while
# that cgroup is still being removed (status 219/CGROUP, "Failed to kill
# control group ... Input/output error" in its journal), which says
# nothing of nfqd; every start that follows a stop waits for it.
sys_wait_cgroup_gone() {
	local end
	end=$(deadline 10)
	while in_c test -d /sys/fs/cgroup/system.slice/nfqd.service &&
		[ "$(unit_prop ActiveState)" != active ] && before "$end"; do
		sleep 0.1
	done
}

# "systemctl restart nfqd". A restart's start can meet the cgroup race
# above (status 219/CGROUP) with no moment between its stop and its start
# for a test to wait in; then Restart=on-failure starts nfqd again, the
# queues kept in the file descriptor store as after a crash, and the
# caller's wait_active waits for that. Any other failure fails.
sys_restart() {
	local since
	since=$(in_c date '+%Y-%m-%d %H:%M:%S.%6N')
	in_c systemctl restart nfqd && return 0
	sys_cgroup_race "$since" || return 1
	log "restart: its start failed with 219/CGROUP (the container's cgroup race); Restart=on-failure starts nfqd again"
}

# True if a start of nfqd since journal time $1 failed with that race
# (the unit's journal, 5 s at most for the line; not ExecMainStatus,
# which the next start, Restart=on-failure's, resets).
sys_cgroup_race() {
	local end
	end=$(deadline 5)
	while before "$end"; do
		in_c journalctl -u nfqd --since "$1" --no-pager -o cat |
			grep -q 'status=219/CGROUP' && return 0
		sleep 0.2
	done
	return 1
}

# The policy generation that nfqd-ctl reports.
generation() {
	ctl_c -j status | sed -n 's/.*"generation": *\([0-9]*\).*/\1/p'
}

# Wait (30 s at most) until nfqd.service is active with a main PID other
# than $1 and answers nfqd-ctl.
wait_active() {
	local old=${1:-} end pid

	end=$(deadline 30)
	while before "$end"; do
		pid=$(unit_prop MainPID)
		if [ "$(unit_prop ActiveState)" = active ] && [ "$pid" != 0 ] \
				&& [ "$pid" != "$old" ] && ctl_c status >/dev/null 2>&1; then
			return 0
		fi
		sleep 0.1
	done
	fail "nfqd.service not active with a new main PID after 30 s" \
		"(state $(unit_prop ActiveState), pid $pid)"
}

# Inside the container: UDP to 127.0.0.1 goes through NFQUEUE 0-1 (no
# --queue-bypass: no daemon, no delivery), and an nft chain at a later
# priority counts what nfqd let through, marked 0x10 or not, and drops it.
SYS_SRCS=127.0.0.1,127.0.0.2,127.0.0.3,127.0.0.4,127.0.0.5,127.0.0.6
sys_flood_setup() {
	in_c iptables -A INPUT -i lo -p udp -j NFQUEUE --queue-balance 0:1 \
		|| fail "iptables NFQUEUE rule"
	in_c nft -f - <<'NFT' || fail "nft sink"
table inet sink {
	chain in {
		type filter hook input priority 100; policy accept;
		meta l4proto udp meta mark 0x10 counter drop
		meta l4proto udp counter drop
	}
}
NFT
}

# The flood: one-second runs of the generator at $1 packets a second, one
# after another, until $TMP/stop exists; $TMP/sent gets the count (each
# run sends all of its packets or fails).
sys_flood() {
	local rate=$1 n=0

	while [ ! -e "$TMP/stop" ]; do
		in_c nfqd-gen -d 127.0.0.1 -n "$rate" -r "$rate" -S "$SYS_SRCS" -q \
			|| { echo "generator failed after $n" >"$TMP/sent"; return 1; }
		n=$((n + rate))
	done
	echo "$n" >"$TMP/sent"
}

# "MARKED UNMARKED": UDP packets the sink has seen.
sink_counts() {
	in_c nft list chain inet sink in | awk '/counter/ {
		for (i = 1; i <= NF; i++) if ($i == "packets") c = c $(i + 1) " "
	} END { sub(/ $/, "", c); print c }'
}

# Wait (30 s at most) until the sink counts "$1".
wait_sink() {
	local end

	end=$(deadline 30)
	while before "$end"; do
		[ "$(sink_counts)" = "$1" ] && return 0
		sleep 0.1
	done
	return 1
}

# Send $1 datagrams to 127.0.0.1 port ${2:-9} from the six sources
# (--queue-balance hashes addresses: several sources use both queues).
send_c() {
	in_c nfqd-gen -d 127.0.0.1 -n "$1" -p "${2:-9}" -S "$SYS_SRCS" -q \
		|| fail "generator"
}

# Sum of stats file column $1 (nfqd's counters: 10 packets, 13 dropped).
stats_sum() {
	in_c awk -v c="$1" '{ s += $c } END { print s + 0 }' /run/nfqd/stats \
		2>/dev/null
}

# Reboot the container: an orderly power-off (its tree kept), then a boot
# of the same tree in a new network namespace (no rule, no queue left).
sys_reboot() {
	local end

	kill -TERM "$NSPAWN_PID" 2>/dev/null
	end=$(deadline 30)
	while kill -0 "$NSPAWN_PID" 2>/dev/null && before "$end"; do
		sleep 0.1
	done
	kill -0 "$NSPAWN_PID" 2>/dev/null && fail "the container did not power off in 30 s"
	wait "$NSPAWN_PID" 2>/dev/null
	NSPAWN_PID=
	INIT_PID=
	sys_boot
}
