#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# modules.sh - the architecture claims of docs/architecture.md, from the
# source: no include cycle between modules of different families, the
# committed module graph (docs/modules.dot) is the one the includes give,
# and no file refers to a document outside the repository.
set -u
top=${TOP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
fail=0

if ! python3 "$top/docs/modgraph.py" --check "$top"; then
	echo "FAIL: include cycle (see above); docs/architecture.md, Modules"
	fail=1
fi
if ! python3 "$top/docs/modgraph.py" "$top" | diff -u "$top/docs/modules.dot" -; then
	echo "FAIL: docs/modules.dot is stale: run make docs and commit it"
	fail=1
fi
# The files of the project: what git tracks in a checkout, the list
# "make dist" wrote in a release (tests/docs/dist-files), never what a
# build made (an in-tree build puts programs and objects next to the
# sources).
files=$(mktemp) || exit 99
trap 'rm -f "$files"' EXIT
if [ -e "$top/.git" ]; then
	if ! command -v git >/dev/null 2>&1; then
		echo "FAIL: $top is a git checkout but there is no git: install git"
		exit 1
	fi
	if ! git -C "$top" ls-files >"$files"; then
		echo "FAIL: git ls-files failed in $top (see above)"
		exit 1
	fi
elif [ -f "$top/tests/docs/dist-files" ]; then
	cp "$top/tests/docs/dist-files" "$files"
else
	echo "FAIL: $top is neither a git checkout nor a release (no tests/docs/dist-files, written by make dist)"
	exit 1
fi
# Files only (a deleted file git still tracks is not there), without the
# fuzz inputs (binary by nature).
project_files() {
	while read -r f; do
		case $f in */corpus/* | */regressions/*) continue ;; esac
		[ -f "$top/$f" ] && echo "$f"
	done <"$files"
}

# A release carries its own documentation: nothing may point outside it.
# By rule, not by one machine's name for it: a path climbing out of the
# tree to its sibling directory of shared notes; an absolute path (two
# components or more, where a path starts: after a blank, an opening
# quote, "=", "(", ":", a troff font escape ...) whose first component is
# neither a standard system directory, nor a directory of the tree (the
# path is spelt from a prefix: "$TOP_SRCDIR"/contrib/...), nor the
# project's own directory under a prefix (SYSCONFDIR "/nfqd/..."), nor a
# placeholder (/path/to, /nonexistent); a Markdown document (by its file
# name) the tree does not have.
# /org/...: D-Bus object paths (/org/freedesktop/systemd1), not files.
system='bin boot dev etc lib lib32 lib64 libexec media mnt opt org proc run sbin srv sys tmp usr var'
allowed="$system $(sed 's|/.*||' "$files" | sort -u | tr '\n' ' ') nfqd path nonexistent"
start='(^|[[:space:]=(,;|:{[]|(^|[[:space:]=(])["'"'"'`]|\\f[A-Z(]|\\f\[[A-Z]*\])'
hits=$(cd "$top" && project_files | tr '\n' '\0' |
	xargs -0 grep -IHoE -e '[.][.]/shared' -e '[A-Za-z0-9_.-]+[.]md\b' \
		-e "$start/[A-Za-z0-9_.+-]+(/[A-Za-z0-9_.+-]+)+" |
	awk -v allowed="$allowed" -v names="$files" '
	BEGIN {
		n = split(allowed, a, " ")
		for (i = 1; i <= n; i++) ok[a[i]] = 1
		while ((getline f < names) > 0) {
			sub(/.*\//, "", f)
			doc[f] = 1
		}
	}
	{
		i = index($0, ":")
		file = substr($0, 1, i - 1)
		m = substr($0, i + 1)
		if (m ~ /[.]md$/ && m !~ /\//) {
			if (!(m in doc)) print file ": " m
			next
		}
		sub(/^[^.\/]*/, "", m)
		if (m ~ /^[.][.]\//) { print file ": " m; next }
		split(m, c, "/")
		if (!(c[2] in ok)) print file ": " m
	}')
if [ -n "$hits" ]; then
	echo "FAIL: these files refer to documents outside the repository:"
	echo "$hits"
	fail=1
fi
# What bison and flex generate (a release tarball carries it) is neither
# a source nor documentation.
generated='src/parser\.[ch]\|src/scanner\.c'
# Every source, header, grammar and script carries its licence (COPYING).
unlicensed=$(cd "$top" && project_files | grep -v -x "$generated" |
	while read -r f; do
		case $f in
		*.[chly] | *.sh | *.py | *.in | *.[58] | *.gp | *.dot | *.am | *.ac) ;;
		*) [ -x "$f" ] || continue ;;
		esac
		echo "$f"
	done | tr '\n' '\0' | xargs -0 awk '
	FNR <= 3 && /SPDX-License-Identifier: GPL-2.0-or-later/ { ok[FILENAME] = 1 }
	END { for (i = 1; i < ARGC; i++) if (!(ARGV[i] in ok)) print ARGV[i] }')
if [ -n "$unlicensed" ]; then
	echo "FAIL: no SPDX-License-Identifier line in the first three lines of:"
	echo "$unlicensed"
	fail=1
fi
[ $fail -eq 0 ] && echo "ok: no include cycle, module graph current, docs self-contained, every source licensed"
exit $fail
