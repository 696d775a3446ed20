#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# completion.sh - the bash completions of contrib/completion, loaded the
# way bash-completion loads them (by command name, from a completions
# directory), in a real bash: commands, sub-commands, each command's
# options, files after -c and -o, sockets and directories after -s; every
# option and command the programs' --help lists is offered. Then a real
# Tab in an interactive bash in tmux.
. "$TOP_SRCDIR/tests/lib.sh"

require_cmd bash tmux pkg-config
BC_DIR=$(pkg-config --variable=completionsdir bash-completion 2>/dev/null)
BC_MAIN="${BC_DIR%/completions}/bash_completion"
[ -n "$BC_DIR" ] && [ -f "$BC_MAIN" ] || skip "needs bash-completion"

# A user completions directory holding ours, as installed.
mkdir -p "$TMP/user/completions" "$TMP/files/confdir" "$TMP/bin"
cp "$TOP_SRCDIR/contrib/completion/nfqd" "$TOP_SRCDIR/contrib/completion/nfqd-ctl" \
	"$TOP_SRCDIR/contrib/completion/nfqd-rules" "$TMP/user/completions/"
NFQD_RULES=${NFQD_RULES:-$TOP_BUILDDIR/contrib/nfqd-rules}
ln -s "$NFQD" "$TMP/bin/nfqd"
ln -s "$NFQD_CTL" "$TMP/bin/nfqd-ctl"
touch "$TMP/files/nfqd.conf" "$TMP/files/notes.txt" "$TMP/files/sock.txt"
"${PY:-python3}" -c 'import socket, sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])' \
	"$TMP/files/sock.0" || fail "cannot make a socket file"

cat >"$TMP/driver.bash" <<'DRIVER'
# Print the completions bash would offer for the line "$1" (cursor at
# its end), one per line, sorted.
source "$BC_MAIN"
cd "$TMP/files"
complete_line() {
	local line=$1 spec fn
	COMP_LINE=$line
	COMP_POINT=${#line}
	read -ra COMP_WORDS <<<"$line"
	[[ $line == *' ' ]] && COMP_WORDS+=('')
	COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
	COMPREPLY=()
	# Like bash: no spec yet, the default loader finds ours by name.
	spec=$(complete -p "${COMP_WORDS[0]}" 2>/dev/null) ||
		{ _completion_loader "${COMP_WORDS[0]}"; spec=$(complete -p "${COMP_WORDS[0]}"); }
	fn=${spec#*-F }
	fn=${fn%% *}
	"$fn" "${COMP_WORDS[0]}" "${COMP_WORDS[COMP_CWORD]}" \
		"${COMP_WORDS[COMP_CWORD - 1]}"
	printf '%s\n' "${COMPREPLY[@]}" | sort | tr '\n' ' ' | sed 's/ $//'
}
# Input lines: "LINE => [...]" or just LINE.
while IFS= read -r line; do
	line=${line%% => *}
	printf '%s => [%s]\n' "$line" "$(complete_line "$line")"
done
DRIVER

# "line => [expected completions]"
cat >"$TMP/cases" <<'CASES'
nfqd-ctl st => [stats status]
nfqd-ctl  => [counters reload rules set sets stats status top]
nfqd-ctl counters  => [reset]
nfqd-ctl counters reset  => []
nfqd-ctl set  => [add delete flush list]
nfqd-ctl set a => [add]
nfqd-ctl -j r => [reload rules]
nfqd-ctl -s /x st => [stats status]
nfqd-ctl top -- => [--batch --delay --help --iterations --socket --version]
nfqd-ctl top -j => []
nfqd-ctl -j top -d  => [0.5 1 10 2 5]
nfqd-ctl stats --p => [--prometheus]
nfqd-ctl status -o => [-o]
nfqd-ctl sets -o => [-o]
nfqd-ctl sets -- => [--help --json --output --socket --version]
nfqd-ctl stats -w => [-w]
nfqd-ctl top -d  => [0.5 1 10 2 5]
nfqd-ctl -s so => [sock.0]
nfqd-ctl -s con => [confdir]
nfqd-ctl stats --prometheus -o no => [notes.txt]
nfqd -c n => [nfqd.conf notes.txt]
nfqd -c c => [confdir]
nfqd - => [--check --config --debug --dump --help --version -V -c -d -h -t]
nfqd --c => [--check --config]
nfqd -t  => []
nfqd-rules  => [install remove show]
nfqd-rules -n s => [show]
nfqd-rules install  => []
nfqd-rules -c n => [nfqd.conf notes.txt]
nfqd-rules --no- => [--no-bypass --no-fanout]
CASES
BC_MAIN="$BC_MAIN" TMP="$TMP" BASH_COMPLETION_USER_DIR="$TMP/user" \
	bash "$TMP/driver.bash" <"$TMP/cases" >"$TMP/got" 2>"$TMP/driver.err" ||
	fail "driver failed: $(cat "$TMP/driver.err")"
[ ! -s "$TMP/driver.err" ] || fail "bash errors: $(cat "$TMP/driver.err")"
diff -u "$TMP/cases" "$TMP/got" || fail "completions differ (- expected, + got)"
log "$(wc -l <"$TMP/cases") completions as expected"

# Every command and option the programs document is offered.
"$NFQD_CTL" --help | awk '/^commands:/ { c = 1; next } /^exit/ { c = 0 }
	c && /^  [a-z]/ { print $1 }' | sort -u >"$TMP/help-cmds"
echo "nfqd-ctl  " | BC_MAIN="$BC_MAIN" TMP="$TMP" BASH_COMPLETION_USER_DIR="$TMP/user" \
	bash "$TMP/driver.bash" | sed 's/.*=> \[//; s/\]$//' | tr ' ' '\n' | sort -u >"$TMP/comp-cmds"
diff -u "$TMP/help-cmds" "$TMP/comp-cmds" || fail "nfqd-ctl commands: --help vs completion"
for prog in nfqd nfqd-ctl nfqd-rules; do
	bin=$NFQD
	[ $prog = nfqd-ctl ] && bin=$NFQD_CTL
	[ $prog = nfqd-rules ] && bin=$NFQD_RULES
	"$bin" --help | grep -o -- '--[a-z][a-z0-9-]*\|\B-[a-zA-Z0-9]\b' | sort -u >"$TMP/help-opts"
	printf '%s -\n%s --\n%s stats -\n%s top -\n' $prog $prog $prog $prog |
		BC_MAIN="$BC_MAIN" TMP="$TMP" BASH_COMPLETION_USER_DIR="$TMP/user" \
		bash "$TMP/driver.bash" | sed 's/.*=> \[//; s/\]$//' | tr ' ' '\n' |
		sort -u >"$TMP/comp-opts"
	missing=$(comm -23 "$TMP/help-opts" "$TMP/comp-opts")
	[ -z "$missing" ] || fail "$prog --help lists options the completion lacks: $missing"
done

# A real Tab, in an interactive bash in a terminal.
T="tmux -S $TMP/tmux.sock"
$T new-session -d -s comp -x 120 -y 20 \
	"env BASH_COMPLETION_USER_DIR=$TMP/user PATH=$TMP/bin:$PATH PS1='comp\$ ' bash --norc --noprofile -i" \
	|| fail "tmux new-session"
at_exit "$T kill-server"
# Wait ($WAIT_SECONDS s at most) until the pane has a line matching $1.
pane_has() {
	local end
	end=$(deadline "$WAIT_SECONDS")
	while before "$end"; do
		$T capture-pane -p -t comp | grep -q -- "$1" && return 0
		sleep 0.1
	done
	$T capture-pane -p -t comp
	fail "no line matching '$1' in the terminal after $WAIT_SECONDS s"
}
# The last prompt line is "comp$ $1" (tmux drops trailing blanks).
line_is() {
	local end want="comp\$ $1"

	want=${want% }
	end=$(deadline "$WAIT_SECONDS")
	while before "$end"; do
		[ "$($T capture-pane -p -t comp | grep '^comp\$' | tail -n 1)" = "$want" ] && return 0
		sleep 0.1
	done
	$T capture-pane -p -t comp
	fail "command line is not '$1' after $WAIT_SECONDS s"
}
# Type only once bash is reading its line, and after the sourcing is
# done: keys sent while bash was still starting or sourcing were echoed
# by the terminal before the prompt (a busy machine made the line
# "nfqd-ctl coun   comp$ nfqd-ctl counters"). An empty prompt alone does
# not say the sourcing is done (it is also the first prompt); the line
# the sourcing command prints last does.
line_is ""
$T send-keys -t comp "source $BC_MAIN; echo sourced-\$?" Enter
pane_has '^sourced-0$'
line_is ""
$T send-keys -t comp "nfqd-ctl coun" Tab
line_is "nfqd-ctl counters"
$T send-keys -t comp Tab
line_is "nfqd-ctl counters reset"
$T send-keys -t comp C-u "nfqd --con" Tab
line_is "nfqd --config"
log "ok"
