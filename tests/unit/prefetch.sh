#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# prefetch.sh - the memory the look-ahead asks for is asked for: the
# built nfqd has prefetch instructions in the functions that exist to
# issue them. A prefetch has no effect a compiler must keep, and GCC 12
# at -O2 deleted every call of flow.c's prefetch_bucket() (its mod/ref
# analysis found the static function free of side effects), so the flow
# bucket was never asked for while the code and README said it was;
# nothing else notices: only the drains get slower. With -flto it also
# deleted every call of domset_prefetch() and flow_ahead_bucket() (the
# out-of-line part of flow_ahead_line()), which only prefetch (now
# noipa: BIGMEM_PREFETCH_ONLY): so those must also be called from
# somewhere. The look-ahead's steps now note addresses in a list that
# bigmem_fetch() asks for: it too only prefetches.
set -u
nfqd=${NFQD:?}
command -v objdump >/dev/null || { echo "FAIL: needs objdump (binutils)"; exit 1; }
# x86 only: the mnemonics below (prefetcht0, call, jmp) are x86's.
case $(uname -m) in
x86_64 | i?86) insn='prefetch' ;;
*)
	echo "# prefetch: no check written for $(uname -m)'s instructions"
	exit 77
	;;
esac
# FUNCTION:MIN prefetch instructions in its body (exported functions: a
# static one may be inlined away under another name; flow_ahead_bucket's
# two become one where the compiler merges their equal tails).
want="flow_ahead_bucket:1 domset_prefetch:3 bigmem_fetch:1"
# Functions that only prefetch: some instruction calls or jumps to them.
called="flow_ahead_bucket domset_prefetch bigmem_fetch"
objdump -d --no-show-raw-insn "$nfqd" |
awk -v insn="$insn" -v want="$want" -v called="$called" '
	/^[0-9a-f]+ <[^>]+>:$/ { fn = $2; gsub(/[<>:]/, "", fn); next }
	$2 ~ "^" insn { n[fn]++ }
	$2 ~ /^(callq?|jmpq?)$/ && $NF ~ /^<[^+>]*>$/ {
		t = $NF; gsub(/[<>]/, "", t); calls[t]++
	}
	END {
		bad = 0
		split(called, c, " ")
		for (i in c) {
			got = (c[i] in calls) ? calls[c[i]] : 0
			printf "# %s: called from %d places\n", c[i], got
			if (!got) {
				printf "FAIL: nothing calls %s: were its calls " \
				       "deleted as having no effect?\n", c[i]
				bad = 1
			}
		}
		split(want, w, " ")
		for (i in w) {
			split(w[i], f, ":")
			got = (f[1] in n) ? n[f[1]] : 0
			printf "# %s: %d prefetch instructions (at least %d)\n",
				f[1], got, f[2]
			if (got < f[2]) {
				printf "FAIL: %s has %d prefetch instructions, " \
				       "wants %d: did the compiler drop them?\n",
				       f[1], got, f[2]
				bad = 1
			}
		}
		exit bad
	}'
