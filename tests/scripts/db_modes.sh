#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# xfskit-db's ways of being driven: -c commands in order, commands from
# a pipe, JSON output (-j) checked with a JSON parser against xfs_db's
# values, help for every command, and the interactive mode through a
# pseudo-terminal (tmux): prompt, history recall and tab completion of
# command and field names.  The interactive part skips without tmux.
. "$(dirname "$0")/lib.sh"
need_xfsprogs

IMG="$T/a.img"
TEST_DIR=1 TEST_DEV=1 QA_CHECK_FS=1 mkfs_xfs_image "$IMG" 64m ||
	fail "mkfs.xfs failed: $(cat "$T/mkfs.out")"
magic=$(db_get "$IMG" sb magicnum)
icount=$(db_get "$IMG" sb icount)
[ -n "$magic" ] && [ -n "$icount" ] || fail "xfs_db cannot read the image"

# -c runs in order; the same commands through a pipe print the same.
out1=$("$DB" -r -c "sb 0" -c "print magicnum" -c "agf 1" -c "print seqno" "$IMG")
out2=$(printf 'sb 0\nprint magicnum\nagf 1\nprint seqno\n' | "$DB" -r "$IMG")
[ "$out1" = "$(printf 'magicnum = %s\nseqno = 1' "$magic")" ] ||
	fail "-c output: $out1"
[ "$out1" = "$out2" ] || fail "pipe output differs from -c: $out2"
printf 'sb\nfrobnicate\nprint icount\n' | "$DB" -r "$IMG" >"$T/out" 2>"$T/err" &&
	fail "a failing command in a pipe did not make the exit status non-zero"
grep -q "^icount = $icount$" "$T/out" || fail "pipe input stopped at an error"

# JSON: one object per command, fields as xfs_db prints them.
if command -v python3 >/dev/null; then
	"$DB" -r -j -c sb -c "print magicnum icount" -c "nosuch" "$IMG" \
		>"$T/json" 2>"$T/err"
	python3 - "$T/json" "$magic" "$icount" <<'PY' || fail "bad JSON output: $(cat "$T/json")"
import json, sys
lines = open(sys.argv[1]).read().splitlines()
objs = [json.loads(l) for l in lines]
assert len(objs) == 3, objs
assert objs[0]["ok"] is True and objs[0]["command"] == "sb"
f = objs[1]["fields"]
assert f["magicnum"] == sys.argv[2] and f["icount"] == sys.argv[3], f
assert objs[2]["ok"] is False
assert any("not found" in o.get("error", "") for o in objs[2]["output"])
PY
	pass "JSON output parses and carries xfs_db's values"
else
	echo "python3 missing: JSON not parsed"
fi

# help: the list and every command's own entry.
"$DB" -r -c help "$IMG" >"$T/help" || fail "help failed"
n=0
for cmd in $(awk '{ print $1 }' "$T/help"); do
	"$DB" -r -c "help $cmd" "$IMG" | grep -q "^$cmd " ||
		fail "help $cmd does not describe $cmd"
	n=$((n + 1))
done
[ "$n" -ge 30 ] || fail "help lists only $n commands"
# Every command is in the man page.
for cmd in $(awk '{ print $1 }' "$T/help"); do
	grep -q "^\.BI\? \"\?$cmd\( \|$\)" "$XK_SRCDIR/man/xfskit-db.8" ||
		fail "man page lacks $cmd"
done

# Interactive, through tmux.
command -v tmux >/dev/null || { echo "tmux missing: interactive part skipped"; finish; }
SOCK="xkdb$$"
tm() { tmux -L "$SOCK" "$@"; }
trap 'tm kill-server 2>/dev/null; cleanup' EXIT
# Wait until the pane shows a pattern (up to ~2 min: a sanitizer
# build on a loaded machine can take seconds to print a prompt).
wait_for() {
	for _ in $(seq 1 1200); do
		tm capture-pane -p -t xk >"$T/pane" 2>/dev/null
		grep -q -- "$1" "$T/pane" && return 0
		sleep 0.1
	done
	return 1
}
tm new-session -d -s xk -x 160 -y 50 \
	"env ASAN_OPTIONS=$ASAN_OPTIONS $DB -r -p xktest $IMG; echo DB-EXITED-\$?; sleep 30" ||
	{ echo "tmux cannot start a session: interactive part skipped"; finish; }
wait_for "xktest>" || fail "no prompt: $(cat "$T/pane")"
tm send-keys -t xk "sb 1" Enter
tm send-keys -t xk "print magicnum" Enter
wait_for "magicnum = $magic" || fail "interactive print: $(cat "$T/pane")"
# History: Up recalls "print magicnum".
tm send-keys -t xk Up Enter
for _ in $(seq 1 1200); do
	tm capture-pane -p -t xk >"$T/pane"
	[ "$(grep -c "^magicnum = " "$T/pane")" -ge 2 ] && break
	sleep 0.1
done
[ "$(grep -c "^magicnum = " "$T/pane")" -ge 2 ] ||
	fail "history recall did not rerun the command: $(cat "$T/pane")"
# Completion: "pri<Tab>" completes the command, "ico<Tab>" the field.
tm send-keys -t xk "sb 0" Enter
tm send-keys -t xk "pri" Tab "ico" Tab Enter
wait_for "^icount = $icount" || fail "tab completion: $(cat "$T/pane")"
grep -q "xktest> print icount" "$T/pane" ||
	fail "completed line not shown: $(cat "$T/pane")"
tm send-keys -t xk "quit" Enter
wait_for "DB-EXITED-0" || fail "quit did not exit 0: $(cat "$T/pane")"
pass "interactive: prompt, history recall, completion, quit"
finish
