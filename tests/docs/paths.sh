#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# paths.sh - every path a man page or a unit names is the configured one:
# the templates (man/*.in, systemd/*.in, contrib/prometheus/*.in) name no
# install directory of their own (/usr/local/..., /usr/sbin/...), and what
# make generates from them names this build's directories, with no
# placeholder left.
set -u
top=${TOP_SRCDIR:?}
build=${TOP_BUILDDIR:?}
fail=0
bad() { echo "FAIL: $*"; fail=1; }

templates="$top/man/nfqd.8.in $top/man/nfqd-rules.8.in $top/man/nfqd.conf.5.in
$top/systemd/nfqd.service.in $top/systemd/nfqd-rules.service.in
$top/contrib/prometheus/nfqd-prometheus.service.in"
generated="$build/man/nfqd.8 $build/man/nfqd-rules.8 $build/man/nfqd.conf.5
$build/systemd/nfqd.service $build/systemd/nfqd-rules.service
$build/contrib/prometheus/nfqd-prometheus.service"

for f in $templates; do
	hits=$(grep -n -E '/usr/(local/)?(s?bin|lib/systemd|share/doc)|/etc/nfqd' "$f")
	[ -z "$hits" ] || bad "$f names an install path instead of a @placeholder@:
$hits"
done
for f in $generated; do
	[ -s "$f" ] || { bad "$f was not generated"; continue; }
	hits=$(grep -n -E '@(sbindir|sysconfdir|systemdsystemunitdir|exampledir|docdir)@' "$f")
	[ -z "$hits" ] || bad "$f keeps a placeholder:
$hits"
done
# The pages name this build's directories.
need() {
	grep -qF -- "$2" "$1" || bad "$(basename "$1") does not name $2"
}
need "$build/man/nfqd.8" "$NFQD_UNITDIR/nfqd.service"
need "$build/man/nfqd.8" "$NFQD_UNITDIR/nfqd\\-rules.service"
need "$build/man/nfqd.8" "$NFQD_EXAMPLESDIR/nfqd.conf.example"
need "$build/man/nfqd.8" "$NFQD_SYSCONFDIR/nfqd/nfqd.conf"
need "$build/man/nfqd-rules.8" "$NFQD_SBINDIR/nfqd\\-rules install"
need "$build/man/nfqd-rules.8" "$NFQD_UNITDIR/nfqd\\-rules.service"
need "$build/man/nfqd.conf.5" "$NFQD_EXAMPLESDIR"
need "$build/systemd/nfqd-rules.service" "ExecStart=$NFQD_SBINDIR/nfqd-rules"
need "$build/systemd/nfqd-rules.service" "ExecReload=$NFQD_SBINDIR/nfqd-rules"
need "$build/systemd/nfqd.service" "ExecStart=$NFQD_SBINDIR/nfqd"
[ $fail -eq 0 ] && echo "ok: man pages and units name the configured paths"
exit $fail
