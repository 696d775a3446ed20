#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# conf_dump.sh - golden config dumps. For every tests/conf/NAME.conf,
# what "nfqd -t --dump" prints (the normalised config, or the errors and
# warnings with their source lines and carets) must equal NAME.dump; and
# the dump of every valid config there and in contrib/examples, loaded
# again, must dump the same. After a deliberate change of the output,
# regenerate the golden files with
#   make check TESTS=tests/integration/conf_dump.sh REGEN_DUMPS=1
# and review the diff. Needs no namespace: nfqd -t binds nothing.
. "$TOP_SRCDIR/tests/lib.sh"

CONF="$TOP_SRCDIR/tests/conf"
# A copy where /etc/nfqd/ is the configs' own directory (example.conf's
# set file is tests/conf/blocked.txt), named relatively so that messages
# name the file as the golden file does.
mkdir -p "$TMP/conf"
cp "$CONF"/*.conf "$CONF"/*.txt "$TMP/conf/"
sed -i 's|"/etc/nfqd/|"|' "$TMP"/conf/*.conf
n=0
cd "$TMP/conf" || fail "cd $TMP/conf"
for conf in *.conf; do
	name=${conf%.conf}
	"$NFQD" -t --dump -c "$conf" >"$TMP/$name.out" 2>&1
	echo "exit $?" >>"$TMP/$name.out"
	if [ "${REGEN_DUMPS:-}" = 1 ]; then
		cp "$TMP/$name.out" "$CONF/$name.dump" ||
			fail "cannot write $CONF/$name.dump"
		log "regenerated $name.dump"
	fi
	[ -f "$CONF/$name.dump" ] ||
		fail "$conf has no golden $name.dump (REGEN_DUMPS=1)"
	diff -u "$CONF/$name.dump" "$TMP/$name.out" ||
		fail "$conf: nfqd -t --dump differs from $name.dump (- golden, + now)"
	n=$((n + 1))
done
cd "$TMP" || fail "cd $TMP"
log "$n golden dumps match"

# Round trip: a dump loads, and dumps the same, with no diagnostic.
mkdir -p "$TMP/etc"
cp "$TOP_SRCDIR"/contrib/examples/*.conf "$TOP_SRCDIR"/contrib/examples/*.txt \
	"$TMP/etc/"
sed -i "s|/etc/nfqd/|$TMP/etc/|g" "$TMP"/etc/*.conf
r=0
for conf in "$TMP"/conf/*.conf "$TMP"/etc/*.conf; do
	name=$(basename "$conf" .conf)
	"$NFQD" -t --dump -c "$conf" >"$TMP/$name.1" 2>/dev/null || continue
	"$NFQD" -t --dump -c "$TMP/$name.1" >"$TMP/$name.2" 2>"$TMP/$name.err" ||
		fail "$name: its dump does not load: $(cat "$TMP/$name.err")"
	cmp -s "$TMP/$name.1" "$TMP/$name.2" ||
		fail "$name: the dump of its dump differs: $(diff -u "$TMP/$name.1" "$TMP/$name.2")"
	r=$((r + 1))
done
[ $r -ge 6 ] || fail "only $r configs round-tripped"
log "ok: $r dumps load back to the same dump"

# Every option appears in the dump, defaults included (nfqd(8)): those
# nfqd knows are the ones its "unknown option" error lists. user and
# control-group have no value by default (stay root, mode 0600).
printf 'options { no-such-option 1; }\n' >"$TMP/unknown.conf"
names=$("$NFQD" -t -c "$TMP/unknown.conf" 2>&1 |
	sed -n 's/.*unknown option.*expected one of: //p' | tr -d ',')
[ -n "$names" ] || fail "no option list in the unknown-option error"
: >"$TMP/empty.conf"
"$NFQD" -t --dump -c "$TMP/empty.conf" >"$TMP/empty.dump" 2>&1 ||
	fail "an empty config does not dump: $(cat "$TMP/empty.dump")"
for o in $names; do
	case $o in user|control-group) continue ;; esac
	grep -q "^	$o " "$TMP/empty.dump" ||
		fail "option $o is missing from the dump of an empty config: $(cat "$TMP/empty.dump")"
done
log "ok: every option with a default appears in the dump"
