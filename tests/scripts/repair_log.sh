#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# xfskit-repair and the log, on logs the kernel left dirty:
#  -n: one finding (the log is dirty, with what replay would write), no
#      spurious findings (the check sees the filesystem as replay leaves
#      it; xfs_repair -n only warns it may show some), image unchanged;
#  no -n: the log is replayed, after which xfs_repair -n is clean and the
#      kernel mounts the image and shows the tree the kernel's own replay
#      shows; -z records an undo file that xfskit-undo uses to restore
#      the image byte for byte;
#  a log that cannot be replayed offline: exit 2, nothing written;
#  -L: the log is zeroed, and our verdict on the result agrees with
#      xfs_repair -n's;
#  metadata stamped beyond the log head is reported.
. "$XK_SRCDIR/tests/scripts/lib.sh"
. "$XK_SRCDIR/tests/scripts/log_lib.sh"
need_xfsprogs
need_log_tools
UNDO="$XK_BUILDDIR/repair/xfskit-undo"

# Creates, renames across directories and xattrs, nothing freed: no
# intent items that only the kernel can finish, whatever the timing.
work() {
	mkdir -p "$1/d" "$1/e"
	(cd "$1/d" && touch $(seq -f "f%g" 1 300))
	sync
	for i in $(seq 1 100); do mv "$1/d/f$i" "$1/e/g$i"; done
	mkdir "$1/e/sub"
	setfattr -n user.x -v y "$1/e/g1" 2>/dev/null || true
}
dirty_image "$T/dirty" work -m rmapbt=0,reflink=0 || finish
sum() { md5sum <"$1"; }

# -n
before=$(sum "$T/dirty")
"$REPAIR" -n "$T/dirty" >"$T/n.out" 2>&1; rc=$?
[ "$(sum "$T/dirty")" = "$before" ] || fail "-n changed the image"
n=$(repair_own "$T/n.out" | grep -c .)
if [ $rc -eq 1 ] && grep -q "^the log is dirty: .*replay would write" "$T/n.out" &&
   [ "$n" -eq 2 ]; then
	pass "-n: dirty log reported alone ($(head -1 "$T/n.out" | cut -c1-100)...)"
else
	fail "-n on a dirty log: exit $rc:"$'\n'"$(head -20 "$T/n.out")"
fi

# Replay, with an undo file; compare with the kernel's replay.
cp --sparse=always "$T/dirty" "$T/ours"
cp --sparse=always "$T/dirty" "$T/kernel"
"$REPAIR" -z "$T/undo" "$T/ours" >"$T/r.out" 2>&1; rc=$?
if [ $rc -eq 0 ] && grep -q "Replayed the log" "$T/r.out"; then
	pass "replay: $(grep Replayed "$T/r.out")"
else
	fail "repair on a dirty log: exit $rc: $(cat "$T/r.out")"
fi
if xfs_repair -n "$T/ours" >"$T/xr.out" 2>&1; then
	pass "xfs_repair -n clean after our replay"
	"$REPAIR" -n "$T/ours" >/dev/null 2>&1 || fail "our -n not clean after our replay"
	loop_mount "$T/kernel" || finish
	record_tree "$MNT" >"$T/tree.kernel"
	loop_umount
	# Mount a copy: the kernel writes at mount, and the undo file below
	# must find the image exactly as our replay left it.
	cp --sparse=always "$T/ours" "$T/ours.mnt"
	loop_mount "$T/ours.mnt" || finish
	record_tree "$MNT" >"$T/tree.ours"
	loop_umount
	rm -f "$T/ours.mnt"
	if same_image "$T/tree.kernel" "$T/tree.ours"; then
		pass "tree after our replay equals the kernel's ($(wc -l <"$T/tree.ours") lines)"
	else
		fail "trees differ: $(diff "$T/tree.kernel" "$T/tree.ours" | head -10)"
	fi
else
	fail "xfs_repair -n after our replay: $(head -20 "$T/xr.out")"
fi
"$UNDO" "$T/undo" "$T/ours" >"$T/u.out" 2>&1 || fail "xfskit-undo: $(cat "$T/u.out")"
[ "$(sum "$T/ours")" = "$before" ] && pass "undo file restores the image byte for byte" ||
	fail "after xfskit-undo the image differs from before the replay"

# An unlinked-but-open file left on the AGI lists: the replay frees it
# as the kernel does at mount; -n reports only the dirty log.
held() {
	mkdir -p "$1/h"
	echo data >"$1/h/open"
	sleep 1000 <"$1/h/open" &
	HOLDER=$!
	sleep 0.2
	rm -f "$1/h/open"
}
if dirty_image "$T/held" held; then
	"$REPAIR" -n "$T/held" >"$T/hn.out" 2>&1; rc=$?
	grep -q "the log is dirty" "$T/hn.out" && ! grep -v "log is dirty\|problem found\|problems found" "$T/hn.out" | grep -q "is bad\|wrong\|missing" ||
		fail "-n on a log with an unlinked inode: exit $rc: $(head -5 "$T/hn.out")"
	"$REPAIR" "$T/held" >"$T/h.out" 2>&1; rc=$?
	if [ $rc -eq 0 ] && xfs_repair -n "$T/held" >/dev/null 2>&1; then
		pass "unlinked-open inode: replayed, freed, xfs_repair -n clean"
	else
		fail "unlinked-open inode: exit $rc: $(cat "$T/h.out")"
	fi
fi

# -L: zero the log; our verdict on what is left agrees with xfs_repair's.
cp --sparse=always "$T/dirty" "$T/zeroed"
"$REPAIR" -L "$T/zeroed" >"$T/L.out" 2>&1
grep -q "Log zeroed" "$T/L.out" || fail "-L: $(cat "$T/L.out")"
xfs_repair -n "$T/zeroed" >/dev/null 2>&1; xr=$?
"$REPAIR" -n "$T/zeroed" >/dev/null 2>&1; us=$?
[ $((xr != 0)) -eq $((us != 0)) ] && pass "-L: verdicts agree (xfs_repair $xr, ours $us)" ||
	fail "-L: xfs_repair -n exits $xr, we exit $us"
# -n -L: as xfs_repair, accepted; -L has no effect, nothing is written.
cp --sparse=always "$T/zeroed" "$T/nl.img"
"$REPAIR" -n -L "$T/nl.img" >/dev/null 2>"$T/nl.err"; rc=$?
[ $rc -eq $us ] && grep -q "no effect with -n" "$T/nl.err" &&
	same_image "$T/nl.img" "$T/zeroed" ||
	fail "-n -L: exit $rc (plain -n: $us), image changed or no note: $(cat "$T/nl.err")"

# Metadata from the future: an AGF stamped far beyond the log head.
cp --sparse=always "$T/ours" "$T/future"
xfs_db -x -c "agf 1" -c "write -d lsn 0x7fff000000000010" "$T/future" >/dev/null 2>&1
# As xfs_repair: not damage to the AGF, but a log to format past it.
"$REPAIR" -n "$T/future" >"$T/f.out" 2>&1; rc=$?
xfs_repair -n "$T/future" >"$T/f61.out" 2>&1; xrc=$?
want=$(grep '^Maximum metadata LSN\|^Would format log' "$T/f61.out")
[ $rc -eq 1 ] && [ $xrc -eq 1 ] && [ -n "$want" ] &&
	[ "$want" = "$(grep '^Maximum metadata LSN\|^Would format log' "$T/f.out")" ] &&
	grep -q "^metadata is ahead of the log: " "$T/f.out" &&
	! grep -q "^AGF is bad" "$T/f.out" &&
	pass "LSN beyond the log head: xfs_repair 6.1's lines and exit status, the AGF not called bad" ||
	fail "future LSN: exit $rc (xfs_repair 6.1: $xrc): $(repair_own "$T/f.out" | head -3); xfs_repair 6.1: $want"
finish
