#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# xfs_repair's phase lines, which scripts and fstests read: on the same
# clean and damaged images, xfskit-repair prints the lines xfs_repair
# 6.1 and 7.2 print in column one ("Phase N - ...", "done", "No modify
# flag set, ..."), in their order and on their streams, and its words
# for a wrong link count and a wrong entry file type; a clean repair
# run twice prints the same (fstests xfs/031); and the fstests hook
# XFS_REPAIR_FAIL_AFTER_PHASE=N kills both with exit status 137 after the
# same phase line, having written nothing more.
. "$(dirname "$0")/lib.sh"
need_xfsprogs
have_xfs72 || true

# The lines that start in column one, without xfs_repair's remarks about
# an image file's host geometry, and without the summary line that ends
# our report (lib.sh turns it on; repair_fstests checks it).
col1() {
	grep -v '^[[:space:]]\|^$\|host filesystem geometry\|^Repair may fail\|^the image and the host' "$1" |
		grep -v '^\(clean\|clean after [0-9]* changes\{0,1\}\|repaired\|corrupt\|not repaired\|not checked in full\)[:;] .*\(blocks used\|btrees are damaged)\)$'
}
# The phase lines alone (the findings differ between the tools).
phases() {
	grep '^Phase [1-7] - \|^done$\|^No modify flag set' "$1"
}
# run TOOL OUT SRC [ARGS...]: TOOL ARGS on a copy of image SRC: its
# stdout in OUT.1, stderr in OUT.2; then, on a fresh copy, both in order
# in OUT; the exit status in $rc.
run() {
	local tool=$1 out=$2 src=$3 cmd
	shift 3
	case $tool in
	ours) cmd=("$REPAIR") ;;
	61) cmd=(xfs_repair) ;;
	72) cmd=("$XFS72" xfs_repair) ;;
	esac
	cp --sparse=always "$src" "$T/work.img"
	"${cmd[@]}" "$@" "$T/work.img" >"$out.1" 2>"$out.2"
	rc=$?
	cp --sparse=always "$src" "$T/work.img"
	"${cmd[@]}" "$@" "$T/work.img" >"$out" 2>&1
}
oracles() { echo 61; [ "${XK_HAVE72:-0}" = 1 ] && echo 72; }

IMG=$T/clean.img
mkfs_xfs_image "$IMG" 300m || { cat "$T/mkfs.out" >&2; exit 99; }

# compare LABEL SRC P FILTER: each tool with -n and without on a copy
# of image SRC (outputs $T/P<tool><mode>); the lines FILTER keeps and
# the exit status must be xfs_repair's.
compare() {
	local label=$1 src=$2 p=$3 filter=$4 mode v args
	for mode in -n repair; do
		args=()
		[ "$mode" = -n ] && args=(-n)
		for v in $(oracles) ours; do
			run "$v" "$T/$p$v$mode" "$src" "${args[@]}"
			echo "$rc" >"$T/$p$v$mode.rc"
			$filter "$T/$p$v$mode" >"$T/$p$v$mode.f"
		done
		for v in $(oracles); do
			if diff "$T/$p$v$mode.f" "$T/${p}ours$mode.f" >"$T/d" &&
			   cmp -s "$T/$p$v$mode.rc" "$T/${p}ours$mode.rc"; then
				pass "$label, $mode: the $(wc -l <"$T/${p}ours$mode.f") lines ($filter) and exit status ($(cat "$T/${p}ours$mode.rc")) of xfs_repair $v"
			else
				fail "$label, $mode: lines ($filter) or exit status ($(cat "$T/${p}ours$mode.rc"), xfs_repair $v: $(cat "$T/$p$v$mode.rc")) differ from xfs_repair $v's (< theirs, > ours):"$'\n'"$(cat "$T/d")"
			fi
		done
	done
}

# A clean image: every column-one line equal, -n and repair.
compare clean "$IMG" "" col1
for mode in -n repair; do
	# The streams: phase lines on stderr, "skipping phase 5" on stdout.
	for s in 1 2; do
		col1 "$T/61$mode.$s" >"$T/61.s"
		col1 "$T/ours$mode.$s" >"$T/ours.s"
		diff "$T/61.s" "$T/ours.s" >"$T/d" ||
			fail "clean, $mode: on $( [ $s = 1 ] && echo stdout || echo stderr), the lines differ from xfs_repair 6.1's:"$'\n'"$(cat "$T/d")"
	done
	# The steps (indented lines), the realtime one included (xfs_repair
	# 6.1 and 7.2 print it with or without a realtime volume).
	# xfs_repair's threads print a run of "- agno = N" lines in any
	# order (seen under load): each run is compared in AG order.
	for v in 61 ours; do
		# Each line keyed by its run (and the AG number in a run of
		# agno lines), sorted on that, the key then dropped.
		grep '^        - ' "$T/$v$mode" | awk '
			/^        - agno = [0-9]+$/ { if (!inrun) r++; inrun = 1
				printf "%d %d\t%s\n", r, $4, $0; next }
			{ inrun = 0; r++; printf "%d 0\t%s\n", r, $0 }' |
			sort -s -k1,1n -k2,2n | cut -f2- >"$T/$v.steps"
	done
	diff "$T/61.steps" "$T/ours.steps" >"$T/d" &&
		pass "clean, $mode: the $(wc -l <"$T/ours.steps") step lines of xfs_repair 6.1" ||
		fail "clean, $mode: step lines differ from xfs_repair 6.1's (< theirs, > ours):"$'\n'"$(cat "$T/d")"
done

# fstests xfs/031: a repair run again prints the same column-one lines.
cp --sparse=always "$IMG" "$T/c.img"
"$REPAIR" "$T/c.img" >"$T/r1" 2>&1
"$REPAIR" "$T/c.img" >"$T/r2" 2>&1
col1 "$T/r1" >"$T/r1.c"
col1 "$T/r2" >"$T/r2.c"
cmp -s "$T/r1.c" "$T/r2.c" && grep -qx done "$T/r1.c" &&
	pass "clean: two repairs print the same $(wc -l <"$T/r1.c") column-one lines, ending in done" ||
	fail "clean: two repairs differ: $(diff "$T/r1.c" "$T/r2.c" | head -5)"

# A damaged image: AG 1's free block count and the root's link count.
# The findings are our own; the phase lines are xfs_repair's.
root=$(xfs_db -c "sb 0" -c "p rootino" "$IMG" | awk '{print $3}')
cp --sparse=always "$IMG" "$T/dmg.img"
xfs_db -x -c "agf 1" -c "write -d freeblks 7" -c "inode $root" \
	-c "write -d core.nlinkv2 9" "$T/dmg.img" >/dev/null 2>&1
compare damaged "$T/dmg.img" d phases
# same_words LABEL PATTERN THEIRS OURS: the lines matching PATTERN (one
# of xfs_repair's messages) are there and equal.
same_words() {
	grep "$2" "$3" >"$T/n61"
	grep "$2" "$4" >"$T/nours"
	[ -s "$T/n61" ] && cmp -s "$T/n61" "$T/nours" &&
		pass "$1: '$(cat "$T/nours")' as xfs_repair 6.1" ||
		fail "$1: '$(cat "$T/nours")' differs from xfs_repair 6.1's '$(cat "$T/n61")'"
}
# xfs_repair's words for the link count, as fstests filters them.
for mode in -n repair; do
	same_words "damaged, $mode" 'nlinks from' "$T/d61$mode" "$T/dours$mode"
done
# A directory entry's file type: xfs_repair's words for it, -n and not.
printf 'proto\n0 0\nd--755 0 0\nf1 ---644 0 0 /dev/null\n$\n$\n' >"$T/proto"
mkfs_xfs_image "$T/ft.img" 300m -p "$T/proto" || { cat "$T/mkfs.out" >&2; exit 99; }
xfs_db -x -c "inode $root" -c "write -d u3.sfdir3.list[0].filetype 5" \
	"$T/ft.img" >/dev/null 2>&1
for mode in -n repair; do
	args=()
	[ "$mode" = -n ] && args=(-n)
	run 61 "$T/ft61" "$T/ft.img" "${args[@]}"
	run ours "$T/ftours" "$T/ft.img" "${args[@]}"
	same_words "ftype, $mode" 'ftype mismatch' "$T/ft61" "$T/ftours"
done
# Our findings are printed between the phase lines, before the last.
grep -n '^AGF' "$T/dours-n" | head -1 | cut -d: -f1 >"$T/at"
last=$(grep -n '^No modify flag set, skipping filesystem' "$T/dours-n" | cut -d: -f1)
[ -s "$T/at" ] && [ -n "$last" ] && [ "$(cat "$T/at")" -lt "$last" ] &&
	grep -q 'link count 9' "$T/dours-n" &&
	grep -q '^[0-9]* problems found' "$T/dours-n" &&
	pass "damaged, -n: our findings and count among the phase lines" ||
	fail "damaged, -n: findings not where expected:"$'\n'"$(head -40 "$T/dours-n")"

# XFS_REPAIR_FAIL_AFTER_PHASE=N: killed (137) after phase N's line(s),
# as xfs_repair; up to phase 6 nothing of the repair is written; at 7
# the repair is complete but "done" is never printed.
for n in 2 4 5 7; do
	for mode in -n repair; do
		args=()
		[ "$mode" = -n ] && args=(-n)
		cp --sparse=always "$T/dmg.img" "$T/f61.img"
		cp --sparse=always "$T/dmg.img" "$T/fours.img"
		# (In subshells: bash would report each kill on stderr.)
		rc61=$( (XFS_REPAIR_FAIL_AFTER_PHASE=$n xfs_repair "${args[@]}" \
			"$T/f61.img" >"$T/f61" 2>&1; echo $?) 2>/dev/null)
		rc=$( (XFS_REPAIR_FAIL_AFTER_PHASE=$n "$REPAIR" "${args[@]}" \
			"$T/fours.img" >"$T/fours" 2>&1; echo $?) 2>/dev/null)
		phases "$T/f61" >"$T/f61.ph"
		phases "$T/fours" >"$T/fours.ph"
		what="XFS_REPAIR_FAIL_AFTER_PHASE=$n, $mode"
		if [ $rc -ne 137 ] || [ $rc61 -ne 137 ]; then
			fail "$what: exit $rc (xfs_repair 6.1: $rc61), expected 137: $(tail -3 "$T/fours")"
			continue
		fi
		diff "$T/f61.ph" "$T/fours.ph" >"$T/d" ||
			{ fail "$what: phase lines differ from xfs_repair 6.1's (< theirs, > ours):"$'\n'"$(cat "$T/d")"; continue; }
		if [ "$mode" = -n ] || [ $n -lt 7 ]; then
			same_image "$T/dmg.img" "$T/fours.img" ||
				{ fail "$what: the image changed"; continue; }
			pass "$what: killed (137) after xfs_repair's last line '$(tail -1 "$T/fours.ph")', nothing written"
		else
			xfs_repair_clean "$T/fours.img" "$T/xr.out" ||
				{ fail "$what: the repair is not complete: $(cat "$T/xr.out")"; continue; }
			pass "$what: killed (137) after the repair, before done; xfs_repair -n clean"
		fi
	done
done
# Values xfs_repair ignores are ignored.
for v in abc 0 8; do
	cp --sparse=always "$IMG" "$T/c.img"
	XFS_REPAIR_FAIL_AFTER_PHASE=$v "$REPAIR" -n "$T/c.img" >"$T/o" 2>&1
	rc=$?
	[ $rc -eq 0 ] || fail "XFS_REPAIR_FAIL_AFTER_PHASE=$v: exit $rc, expected 0 (ignored, as xfs_repair)"
done
pass "XFS_REPAIR_FAIL_AFTER_PHASE=abc, 0, 8: ignored, as xfs_repair"
finish
