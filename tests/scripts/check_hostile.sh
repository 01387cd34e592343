#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Hostile metadata, written with xfs_db -x (checksums kept valid so the
# structural code has to cope): pointers that loop back to their own
# tree, impossible heights and counts, forks that claim more than they
# hold, directory cycles.  Each must end with findings (exit 1) within a
# time limit, never a crash (sanitizers abort with 99) or a hang.
. "$XK_SRCDIR/tests/scripts/lib.sh"
. "$XK_SRCDIR/tests/scripts/populate.sh"
need_xfsprogs

img="$T/img"
mkfs_xfs_image "$img" 600m -m rmapbt=1,reflink=1 -d agcount=2 || exit 99
loop_mount "$img" || finish
populate_all_formats "$MNT" || fail "populate"
# Multi-level free space and rmap trees in AG 0.
xfs_io -f -c "pwrite -b 1m 0 60m" "$MNT/frag" >/dev/null
seq 0 2 15359 | awk '{ print "fpunch " $1 * 4096 " 4096" }' | xfs_io "$MNT/frag" >/dev/null
loop_umount || { fail "umount"; finish; }
"$REPAIR" -n "$img" >/dev/null 2>&1 || { fail "base image not clean"; finish; }
ag=$(db_get "$img" "agf 0" bnolevel)

hostile() {
	name=$1
	shift
	cp --sparse=always "$img" "$T/h"
	if ! xfs_db -x "$@" "$T/h" >"$T/db.out" 2>&1 || grep -qi "bad\|invalid\|unknown" "$T/db.out"; then
		fail "$name: xfs_db could not make the case: $(head -3 "$T/db.out")"
		return
	fi
	timeout 600 "$REPAIR" -n "$T/h" >"$T/out" 2>&1
	rc=$?
	if [ $rc -eq 1 ]; then
		pass "$name: $(grep -v '^Primary\|^Using' "$T/out" | head -1 | cut -c1-150)"
	elif [ $rc -eq 124 ]; then
		fail "$name: still running after 600 s (a hang)"
	else
		fail "$name: exit $rc: $(head -c 1500 "$T/out")"
	fi
}

[ "${ag:-1}" -ge 2 ] || fail "the bnobt did not grow to two levels"
hostile "bnobt child named twice" -c "agf 0" -c "addr bnoroot" -c "write -d ptrs[2] $(xfs_db -r -c 'agf 0' -c 'addr bnoroot' -c 'print ptrs[1]' "$img" | sed 's/.* = //')"
[ "$(db_get "$img" "agf 0" rmaplevel)" -ge 2 ] || fail "the rmapbt did not grow to two levels"
hostile "rmapbt child is its root" -c "agf 0" -c "addr rmaproot" -c "write -d ptrs[1] $(db_get "$img" "agf 0" rmaproot)"
hostile "bnobt height 9" -c "agf 0" -c "write -d bnolevel 9"
hostile "inobt height huge" -c "agi 0" -c "write -d level 4000000000"
hostile "cntbt numrecs 65535" -c "agf 0" -c "addr cntroot" -c "write -d numrecs 65535"
hostile "dir node points at itself" -c "path /node" -c "dblock 8388608" -c "write -d nbtree[0].before 8388608"
hostile "dir entry loops to an ancestor" -c "path /sf" -c "write -d u3.sfdir3.list[0].inumber.i4 $(db_get "$img" "sb 0" rootino)"
hostile "inode claims 4 billion extents" -c "path /extents" -c "write -d core.nextents 4294967295"
hostile "bmbt root huge numrecs" -c "path /bmbt" -c "write -d u3.bmbt.numrecs 65535"
hostile "attr fork offset past the inode" -c "path /attrs/leaf" -c "write -d core.forkoff 255"
hostile "inobt chunk beyond the AG" -c "agi 1" -c "addr root" -c "write -d recs[1].startino 4294967232"
hostile "AGFL full of garbage" -c "agf 1" -c "write -d flcount 4000" -c "write -d fllast 4000"
hostile "superblock agcount 1000" -c "sb 0" -c "write -d agcount 1000"
hostile "every AG header wrecked" -c "agf 0" -c "write -d magicnum 0" -c "agi 0" -c "write -d magicnum 0" -c "agf 1" -c "write -d magicnum 0" -c "agi 1" -c "write -d magicnum 0"
finish
