#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# An inode cluster written by the repair with slots no check judged:
# repair/fix.c settle_cluster makes them valid free inodes first, else
# the cluster's write verifier refuses the write and the repair stops
# half-way ("metadata is corrupt while repairing"; found by bench/reasm's
# meta5 case, which this reproduces in a few CPU seconds).
#
# The slots: a block of free inodes that the inode btrees' record calls
# a hole (a sparse chunk's holemask), zeroed.  A hole is not allocated,
# so the scan does not read it; but the block lies inside the inode
# cluster of the chunk's first inodes, and an inode there gets a fix (a
# wrong link count), so the cluster is written, zeroed slots included.
# Ours must: make those slots valid free inodes (its report says so, one
# line each: the path runs), complete in one run, leave xfs_repair -n
# 6.1 and 7.2 clean, and keep every entry (the damage lost none), so at
# least what xfs_repair keeps.  xfs_repair 6.1 and 7.2 themselves stop
# here at that write verifier ("File system metadata writeout failed",
# again on every run): they keep nothing clean.
. "$XK_SRCDIR/tests/scripts/lib.sh"
. "$XK_SRCDIR/tests/scripts/repair_lib.sh"
need_xfsprogs
[ "$(id -u)" -eq 0 ] || skip "populating and walking images needs root (loop mount)"

img="$T/base.img"
# The first chunk full (the root, the realtime inodes, /d and 60 files:
# the kernel wants at least one chunk's worth of inodes), the second
# holding 24: whole blocks of 8 (512-byte inodes, 4 KiB blocks), the
# next block free.
files_image "$img" 84 -i sparse=1
total=$TOTAL

# The geometry, from the image: the chunk's record, the block after the
# last inode in use, and the inode cluster (v5: 8 KiB times the inode
# size over 256 bytes) that block must lie in.
last=$(ino_of "$img" /d/f84)
ipb=$(db_get "$img" "sb 0" inopblock)
isize=$(db_get "$img" "sb 0" inodesize)
bsize=$(db_get "$img" "sb 0" blocksize)
# rec_of IMG TREE: "INDEX FIELDS" of the record of TREE (root, the inobt;
# free_root, the finobt) holding $last (a one-level tree).
rec_of() {
	xfs_db -r -c "agi 0" -c "addr $2" -c "print recs" "$1" 2>/dev/null |
		awk -v ino="$last" '/^[0-9]+:\[/ {
			i = substr($0, 1, index($0, ":") - 1)
			r = substr($0, index($0, "[") + 1); sub(/\]$/, "", r)
			split(r, f, ",")
			if (f[1] <= ino && ino < f[1] + 64) print i, r }'
}
read -r n rec < <(rec_of "$img" root)
IFS=, read -r start holemask count freecount free <<<"$rec"
read -r fn frec < <(rec_of "$img" free_root)
[ "$frec" = "$rec" ] || { echo "finobt record [$frec], inobt's [$rec]" >&2; exit 99; }
rel=$((last + 1 - start))
cluster_blocks=$((8192 * isize / 256 / bsize))
if [ "$holemask" != 0 ] || [ "$count" != 64 ] || [ $((rel % ipb)) != 0 ] ||
   [ $((rel / ipb)) -ge "$cluster_blocks" ] || [ $((rel + ipb)) -gt 64 ]; then
	echo "unexpected geometry: record ${n:-none} [$rec], last inode $last, $ipb inodes a block, clusters of $cluster_blocks blocks" >&2
	exit 99
fi
[ $(( (free >> rel) & ((1 << ipb) - 1) )) = $(((1 << ipb) - 1)) ] ||
	{ echo "inodes $((last + 1))+$ipb are not all free: free mask $free" >&2; exit 99; }

# The hole: one holemask bit per 4 inodes, in both inode btrees and the
# AGI's counts (the record stays consistent: its holes are free).
hole=$(( ((1 << (ipb / 4)) - 1) << (rel / 4) ))
dmg=$T/dmg.img
cp --sparse=always "$img" "$dmg"
for r in "root $n" "free_root $fn"; do
	set -- $r
	xfs_db -x -c "agi 0" -c "addr $1" -c "write recs[$2].holemask $hole" \
		-c "write recs[$2].count $((count - ipb))" \
		-c "write recs[$2].freecount $((freecount - ipb))" "$dmg" >/dev/null 2>&1
done
agi_count=$(db_get "$img" "agi 0" count)
agi_free=$(db_get "$img" "agi 0" freecount)
xfs_db -x -c "agi 0" -c "write count $((agi_count - ipb))" \
	-c "write freecount $((agi_free - ipb))" "$dmg" >/dev/null 2>&1
# A fix in the same cluster: /d/f84's link count.
xfs_db -x -c "inode $last" -c "write core.nlinkv2 5" "$dmg" >/dev/null 2>&1
[ "$(db_get "$dmg" "inode $last" core.nlinkv2)" = 5 ] || { echo "link count not written" >&2; exit 99; }
[ "$(xfs_db -r -c "agi 0" -c "addr free_root" -c "print recs[$fn].holemask" "$dmg" 2>/dev/null |
	sed -n 's/.* = //p')" = "$(printf '%#x' $hole)" ] || { echo "holemask not written" >&2; exit 99; }
# Then the hole's block, zeroed (its inodes were free).
daddr=$(xfs_db -r -c "convert inode $((last + 1)) daddr" "$dmg" | sed 's/.*(\([0-9]*\)).*/\1/')
dd if=/dev/zero of="$dmg" bs=512 seek="$daddr" count=$((bsize / 512)) conv=notrunc status=none

cp --sparse=always "$dmg" "$T/ours.img"
cp --sparse=always "$dmg" "$T/theirs.img"
"$REPAIR" "$T/ours.img" >"$T/ours.out" 2>&1
rc=$?
settled=$(grep -c 'made a valid free inode, its core being no inode' "$T/ours.out")
if [ "$settled" -ne "$ipb" ]; then
	fail "$settled of the $ipb zeroed slots made valid free inodes (exit $rc): $(repair_own "$T/ours.out" | tail -3 | tr '\n' ' ')"
else
	pass "the zeroed slots made valid free inodes before the cluster was written ($settled)"
fi
if [ $rc -ne 0 ] || grep -q 'could not be repaired\|stays marked NEEDSREPAIR' "$T/ours.out"; then
	fail "xfskit-repair exit $rc: $(repair_own "$T/ours.out" | tail -3 | tr '\n' ' ')"
else
	pass "xfskit-repair completed in one run (exit 0)"
fi
if xfs_repair_clean "$T/ours.img" "$T/xr.clean"; then
	pass "xfs_repair -n clean after ours"
else
	fail "xfs_repair -n after ours: $(tr '\n' ' ' <"$T/xr.clean" | cut -c1-300)"
fi
errs=$(walk "$T/ours.img" "$T/tree.ours")
[ -z "$errs" ] || fail "the kernel after ours: $errs"
ours=$(preserved "$T/tree.ours")
theirs=$(xfs_repair_kept "$T/theirs.img")
grep -q 'metadata writeout failed' "$T/xr.out" &&
	echo "xfs_repair 6.1: $(grep -m1 'metadata writeout failed' "$T/xr.out")"
if [ "$ours" -ge "$theirs" ] && [ "$ours" -eq "$total" ]; then
	pass "entries kept in place: ours $ours, xfs_repair $theirs (of $total)"
else
	fail "entries kept in place: ours $ours, xfs_repair $theirs (of $total)"
fi
finish
