#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The example config (installed as nfqd.conf by make install) is valid as
# installed and with every setting uncommented, and shows every option
# that nfqd.conf(5) documents.
. "$(dirname "$0")/../lib.sh"

example="$TOP_SRCDIR/contrib/nfqd.conf.example"
man="$TOP_BUILDDIR/man/nfqd.conf.5"

out=$("$NFQD" -t -c "$example" 2>&1) || fail "as installed: $out"
[ "$out" = "config OK" ] || fail "as installed: $out"

# A "#" followed by something other than a space or the end marks a setting.
# "nfqd -t" checks that the users and groups named exist: the example's
# "nfqd" becomes one this host has.
sed -e 's/^#\([^ ]\)/\1/' \
	-e "s/^\([[:space:]]*\)user \"[^\"]*\"/\1user \"nobody\"/" \
	-e "s/^\([[:space:]]*\)control-group \"[^\"]*\"/\1control-group \"$(id -gn nobody)\"/" \
	"$example" >"$TMP/uncommented.conf"
out=$("$NFQD" -t -c "$TMP/uncommented.conf" 2>&1) || fail "uncommented: $out"
[ "$out" = "config OK" ] || fail "uncommented: $out"
grep -q '^hook input' "$TMP/uncommented.conf" || fail "no example policy"

# Option names: the first word after each .TP of the OPTIONS BLOCK section.
options=$(awk '/^\.SH OPTIONS BLOCK/ { on = 1; next } /^\.SH/ { on = 0 }
	on && tp { print $2 } { tp = on && $0 == ".TP" }' "$man")
[ "$(echo "$options" | wc -w)" -ge 18 ] || fail "read only '$options' from $man"
for o in $options; do
	grep -q "^#	$o " "$example" || fail "option $o is not in the example config"
done
log "ok: valid as installed and uncommented; all $(echo "$options" | wc -w) options shown"
