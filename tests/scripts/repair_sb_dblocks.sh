#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The primary superblock's size lowered (sb 0 dblocks, the secondaries
# untouched) by most of the last AG, which holds file data.  Every
# secondary says the filesystem is larger, by blocks its AG count covers
# and the device holds: the primary lost blocks.  Ours must take the
# secondaries' size, as xfs_repair outvotes the primary, rather than
# write the short size into every secondary and cut the last AG short
# (which lost the data in the cut blocks before):
#  - our -n finds it (exit 1) and writes nothing;
#  - our repair exits 0, the primary's size is the original again,
#    xfs_repair -n 6.1 and 7.2 are clean, and every file reads back with
#    its content;
#  - xfs_repair 6.1 restores the same size (the oracle's verdict).
. "$XK_SRCDIR/tests/scripts/lib.sh"
. "$XK_SRCDIR/tests/scripts/repair_lib.sh"
need_xfsprogs
[ "$(id -u)" -eq 0 ] || skip "populating images needs root (loop mount)"

base="$T/base.img"
mkfs_xfs_image "$base" 320m -d agcount=4 || { fail "mkfs.xfs: $(cat "$T/mkfs.out")"; finish; }
loop_mount "$base" || finish
# New directories go round the AGs, their files' data with them.
for i in $(seq 0 7); do
	mkdir "$MNT/d$i"
	for j in 0 1; do
		head -c 3M /dev/urandom >"$MNT/d$i/f$j"
	done
done
loop_umount
walk "$base" "$T/tree.base" >/dev/null || { fail "walking the base"; finish; }
size=$(db_get "$base" sb dblocks)
agblocks=$(db_get "$base" sb agblocks)
# Most of the last AG cut: the data its directories hold is in the cut.
cut=$((agblocks * 9 / 10))
img="$T/d.img"
cp --sparse=always "$base" "$img"
xfs_db -x -c "sb 0" -c "write -d dblocks $((size - cut))" "$img" >/dev/null 2>&1
free=$(db_get "$img" "agf 3" freeblks)
[ "$free" -lt "$cut" ] ||
	{ fail "the last AG has $free free blocks, the cut is $cut: no data in it"; finish; }

sum=$(image_state "$img")
"$REPAIR" -n "$img" >"$T/n.out" 2>&1
rc=$?
if [ $rc -ne 1 ]; then
	fail "-n: exit $rc, expected 1: $(repair_own "$T/n.out" | tail -3)"
elif [ "$(image_state "$img")" != "$sum" ]; then
	fail "-n changed the image"
else
	pass "-n finds the lowered size (exit 1) and writes nothing"
fi

cp --sparse=always "$img" "$T/xr.img"
xfs_repair "$T/xr.img" >"$T/xr61.out" 2>&1 || xfs_repair "$T/xr.img" >>"$T/xr61.out" 2>&1
xr_size=$(db_get "$T/xr.img" sb dblocks)

"$REPAIR" "$img" >"$T/r.out" 2>&1
rc=$?
[ $rc -eq 0 ] || { fail "repair: exit $rc: $(repair_own "$T/r.out" | tail -3)"; finish; }
got=$(db_get "$img" sb dblocks)
if [ "$got" != "$size" ]; then
	fail "after ours the primary says $got blocks, the filesystem has $size (xfs_repair 6.1 leaves $xr_size)"
elif [ "$(xfs_db -r -c "sb 3" -c "print dblocks" "$img" | sed 's/.* = //')" != "$size" ]; then
	fail "after ours the last secondary does not say $size"
else
	pass "ours restores the size from the secondaries ($size blocks; xfs_repair 6.1: $xr_size)"
fi
if xfs_repair_clean "$img" "$T/clean"; then
	pass "xfs_repair -n clean after ours"
else
	fail "xfs_repair -n after ours: $(cat "$T/clean")"
fi
errs=$(walk "$img" "$T/tree.ours")
if [ -n "$errs" ]; then
	fail "the kernel on ours: $errs"
elif ! cmp -s "$T/tree.base" "$T/tree.ours"; then
	fail "the files after ours differ: $(diff "$T/tree.base" "$T/tree.ours" | head -4)"
else
	pass "every file reads back with its content ($(wc -l <"$T/tree.base") entries)"
fi
finish
