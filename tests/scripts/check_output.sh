#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# How xfskit-repair -n reports: the --json document parses and carries
# the same findings as the text output (count, checks, inode numbers);
# exit codes are 0 clean / 1 corrupt / 4 operational; -n never changes a
# byte of the image; the output does not depend on -o threads=N; progress appears on
# a terminal and not with --no-progress.
. "$XK_SRCDIR/tests/scripts/lib.sh"
need_xfsprogs
command -v python3 >/dev/null || skip "python3 is needed to parse JSON (scripts/deps installs it)"

img="$T/img"
mkfs_xfs_image "$img" 400m -m rmapbt=1 || exit 99
"$REPAIR" -n --json "$img" >"$T/clean.json"; rc=$?
[ $rc -eq 0 ] || fail "clean image: exit $rc"
python3 - "$T/clean.json" <<'PY' || fail "clean JSON is wrong: $(cat "$T/clean.json")"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["problem_count"] == 0 and d["problems"] == [] and d["exit_status"] == 0
assert d["mode"] == "check" and d["tool"] == "xfskit-repair"
PY
pass "clean image: JSON says no problems, exit 0"

# xfs_repair's command lines (fstests' and administrators'): the same
# exit status from both tools on the clean image, for every set.
cp --sparse=always "$img" "$T/opt.img"
n=0
while IFS= read -r opts; do
	# shellcheck disable=SC2086
	xfs_repair $opts "$T/opt.img" >/dev/null 2>&1; want=$?
	# shellcheck disable=SC2086
	"$REPAIR" $opts "$T/opt.img" >"$T/opt.out" 2>&1; got=$?
	[ "$got" = "$want" ] ||
		fail "xfs_repair $opts: exit $want, ours $got: $(head -3 "$T/opt.out")"
	n=$((n + 1))
done <<'OPTS'
-n
-n -f
-n -f -o ag_stride=32 -t 1
-n -P
-n -t 60
-n -o bhash=1024
-n -o bhash=64,ag_stride=4
-n -o phase2_threads=2
-n -o force_geometry
-n -v
-n -e
-f -o ag_stride=8
-Z
-n -o bogus=1
-n -t
-n -L
-V
OPTS
pass "xfs_repair's exit status for $n of its command lines"

# Two corruptions: a wrong link count and a wrong AGF counter.
root=$(db_get "$img" "sb 0" rootino)
xfs_db -x -c "inode $root" -c "write -d core.nlinkv2 7" -c "agf 1" -c "write -d freeblks 5" "$img" >/dev/null 2>&1
sum=$(image_state "$img")
"$REPAIR" -n "$img" >"$T/text" 2>&1; trc=$?
"$REPAIR" -n --json "$img" >"$T/bad.json" 2>"$T/err"; jrc=$?
[ "$(image_state "$img")" = "$sum" ] || fail "-n changed the image"
[ $trc -eq 1 ] && [ $jrc -eq 1 ] || fail "corrupt image: exits $trc/$jrc, expected 1"
ntext=$(grep -cE '^[a-zA-Z].*: .* at daddr|^[a-zA-Z].*: inode' "$T/text")
python3 - "$T/bad.json" "$root" "$ntext" <<'PY' || fail "JSON findings wrong: $(cat "$T/bad.json")"
import json, sys
d = json.load(open(sys.argv[1])); root = int(sys.argv[2]); ntext = int(sys.argv[3])
assert d["exit_status"] == 1 and d["problem_count"] == len(d["problems"])
assert d["problem_count"] == ntext, (d["problem_count"], ntext)
checks = {(p["check"], p.get("ino"), p.get("agno")) for p in d["problems"]}
assert ("nlink", root, None) in checks, checks
assert any(p["check"] in ("freeblks", "longest") and p.get("agno") == 1 for p in d["problems"]), checks
for p in d["problems"]:
    assert p["message"] and p["problem"] and "structure" in p
PY
pass "corrupt image: JSON and text agree ($ntext findings)"

# The same findings in the same order whatever the number of threads.
for t in 2 3 5; do
	"$REPAIR" -n -o threads=$t "$img" >"$T/text.$t" 2>&1
	cmp -s "$T/text" "$T/text.$t" || fail "-o threads=$t output differs from the default's"
done
"$REPAIR" -n -o threads=1 "$img" >"$T/text.1" 2>&1
same_image "$T/text" "$T/text.1" || fail "-o threads=1 output differs from the default's"
"$REPAIR" -n -o threads=0 "$img" >/dev/null 2>&1; rc=$?
[ $rc -eq 1 ] && grep -q "threads" <("$REPAIR" -n -o threads=0 "$img" 2>&1) ||
	fail "-o threads=0: exit $rc, expected 1 (usage, as xfs_repair)"
pass "output identical with 1, 2, 3 and 5 threads"

# Operational errors: exit 1 (xfs_repair's runtime error), JSON still a document.
head -c 1048576 /dev/zero >"$T/zero"
"$REPAIR" -n --json "$T/zero" >"$T/err.json" 2>/dev/null; rc=$?
[ $rc -eq 1 ] || fail "all-zero device: exit $rc, expected 1"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["exit_status"]==1 and d["error"]' "$T/err.json" ||
	fail "error JSON wrong: $(cat "$T/err.json")"
pass "operational error: exit 1 with an error document"

# Progress on a terminal (script(1) gives a pty), none with --no-progress.
if command -v script >/dev/null; then
	script -qec "$REPAIR -n $img" /dev/null >"$T/tty" 2>&1
	grep -q "Phase 3" "$T/tty" || fail "no progress on a terminal: $(cat -v "$T/tty" | head -5)"
	# The inode scan's meter: its share never goes back, and it ends
	# at 100% of the chunks it announced.
	pcts=$(tr '\r' '\n' <"$T/tty" |
		sed -n 's/.*Phase 3 - inode chunks: \([0-9]*\)% (\([0-9]*\)\/\([0-9]*\)).*/\1 \2 \3/p')
	if [ -n "$pcts" ] && echo "$pcts" | awk '
		$1 < p || $2 < d || $2 > $3 { bad = 1 } { p = $1; d = $2 }
		END { exit bad || p != 100 }'; then
		pass "the inode scan's meter rises to 100% ($(echo "$pcts" | wc -l) draws)"
	else
		fail "the inode scan's meter: $(echo "$pcts" | tr '\n' ' ')"
	fi
	script -qec "$REPAIR -n --no-progress $img" /dev/null >"$T/tty" 2>&1
	# (xfs_repair's phase lines stay: they are lines, not a meter.)
	grep -q "inode chunks: \|"$'\033'"\[K" "$T/tty" &&
		fail "--no-progress still shows progress: $(cat -v "$T/tty" | head -5)"
	grep -q "problems found" "$T/tty" || fail "no verdict on a terminal"
	pass "progress shown on a terminal, not with --no-progress"
fi
finish
