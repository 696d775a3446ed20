#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# install.sh - "make install DESTDIR=" puts the documentation in place
# (docs/reliability.md too), the installed examples pass "nfqd -t" where
# they are installed (their set files found next to them, from any working
# directory), and "make uninstall" leaves nothing of nfqd's behind: no
# file, no empty directory of its own.
. "$TOP_SRCDIR/tests/lib.sh"

D="$TMP/dest"
mk() {
	env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL \
		make -s -C "$TOP_BUILDDIR" "$@" DESTDIR="$D" >"$TMP/make.log" 2>&1 \
		|| { cat "$TMP/make.log" >&2; fail "make $*"; }
}
mk install
for f in README.md reliability.md architecture.md control-protocol.md \
	performance.md stats-file.md; do
	[ -f "$D$NFQD_DOCDIR/$f" ] || fail "make install did not install $NFQD_DOCDIR/$f"
done
[ -f "$D$NFQD_UNITDIR/nfqd-rules.service" ] || fail "no nfqd-rules.service installed"

# The installed examples, checked where they are, from elsewhere.
n=0
for conf in "$D$NFQD_EXAMPLESDIR"/*.conf "$D$NFQD_EXAMPLESDIR"/nfqd.conf.example; do
	# nfqd_check: a kernel without ct state's NFQUEUE attributes
	# refuses router.conf at start, and so at nfqd -t.
	out=$(cd / && NFQD="$D$NFQD_SBINDIR/nfqd" nfqd_check "$conf") \
		|| fail "installed $(basename "$conf") fails nfqd -t: $out"
	n=$((n + 1))
done
log "$n installed examples pass nfqd -t from $NFQD_EXAMPLESDIR"
# ips-blocklist.conf really reads the installed lists.
out=$("$D$NFQD_SBINDIR/nfqd" -t --dump -c "$D$NFQD_EXAMPLESDIR/ips-blocklist.conf" 2>&1)
echo "$out" | grep -q "192.0.2.66" || fail "ips-blocklist.conf did not read the installed blocklist-v4.txt: $out"

mk uninstall
# What is left, but the directories of the prefix itself (make distcheck's
# prefix has "nfqd" in its name), with the prefix cut off.
prefix=${NFQD_SBINDIR%/sbin}
left=$(find "$D" -mindepth 1 | sed "s|^$D||" | sort | while read -r p; do
	case $prefix/ in "$p"/*) continue ;; esac
	echo "${p#"$prefix"}"
done | grep nfqd)
[ -z "$left" ] || fail "make uninstall left: $left"
log "make uninstall left nothing of nfqd's ($(find "$D" -type f | wc -l) files, $(find "$D" -depth -type d -empty | wc -l) empty shared dirs remain)"
