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
# What bison and flex generate (a release tarball carries it) is neither
# a source nor documentation.
generated='src/parser\.[ch]\|src/scanner\.c'
# A release carries its own documentation: nothing may point outside it.
hits=$(cd "$top" && grep -rlE 'interface\.md|\.\./shared|/work/' \
	--include='*.[chly]' --include='*.sh' --include='*.md' \
	--include='*.[58]' --include='*.am' --include='*.ac' --include='*.in' \
	--include='*.py' --include='*.conf' --include='*.txt' --include='*.log' \
	--include='*.csv' --include='*.svg' src include man docs tests contrib \
	systemd README.md Makefile.am configure.ac 2>/dev/null |
	grep -v '^tests/docs/modules.sh$' | grep -v -x "$generated")
if [ -n "$hits" ]; then
	echo "FAIL: these files refer to documents outside the repository:"
	echo "$hits"
	fail=1
fi
# Every source, header, grammar and script carries its licence (COPYING).
unlicensed=$(cd "$top" && find src include tests contrib systemd man docs \
	.ci autogen.sh configure.ac Makefile.am -type f \
	\( -name '*.[chly]' -o -name '*.sh' -o -name '*.py' -o -name '*.in' \
	   -o -name '*.[58]' -o -name '*.gp' -o -name '*.dot' -o -name '*.am' \
	   -o -name '*.ac' -o -perm -u+x \) \
	! -path '*/corpus/*' ! -path '*/regressions/*' 2>/dev/null |
	grep -v -x "$generated" |
	while read -r f; do
		head -n 3 "$f" | grep -q 'SPDX-License-Identifier: GPL-2.0-or-later' ||
			echo "$f"
	done)
if [ -n "$unlicensed" ]; then
	echo "FAIL: no SPDX-License-Identifier line in the first three lines of:"
	echo "$unlicensed"
	fail=1
fi
[ $fail -eq 0 ] && echo "ok: no include cycle, module graph current, docs self-contained, every source licensed"
exit $fail
