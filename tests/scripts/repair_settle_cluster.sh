#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# An inode cluster written by the repair with slots no check judged:
# repair/fix.c settle_cluster makes them valid free inodes first, else
# the cluster's write verifier refuses the write and the repair stops
# half-way ("metadata is corrupt while repairing"; found by bench/reasm's
# meta5 case, which this reproduces in a few CPU seconds).
#
# The slots: free inodes that the inode btrees' record calls a hole (a
# sparse chunk's holemask), zeroed: a whole block of them, then half a
# block (one holemask bit).  A hole is not allocated,
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

# hole_case NAME N: a copy whose first N free inodes after $last (4: a
# holemask bit covering half a block; $ipb: the whole block) are a hole in
# both inode btrees and the AGI's counts (the record stays consistent: its
# holes are free), zeroed, with /d/f84's link count wrong (a fix in the
# same cluster); then the checks above.
hole_case() {
	local name=$1 nh=$2 hole dmg r daddr rc settled errs ours theirs
	hole=$(( ((1 << (nh / 4)) - 1) << (rel / 4) ))
	dmg=$T/$name.img
	cp --sparse=always "$img" "$dmg"
	for r in "root $n" "free_root $fn"; do
		set -- $r
		xfs_db -x -c "agi 0" -c "addr $1" -c "write recs[$2].holemask $hole" \
			-c "write recs[$2].count $((count - nh))" \
			-c "write recs[$2].freecount $((freecount - nh))" "$dmg" >/dev/null 2>&1
	done
	xfs_db -x -c "agi 0" -c "write count $((agi_count - nh))" \
		-c "write freecount $((agi_free - nh))" "$dmg" >/dev/null 2>&1
	xfs_db -x -c "inode $last" -c "write core.nlinkv2 5" "$dmg" >/dev/null 2>&1
	[ "$(db_get "$dmg" "inode $last" core.nlinkv2)" = 5 ] ||
		{ echo "$name: link count not written" >&2; exit 99; }
	[ "$(xfs_db -r -c "agi 0" -c "addr free_root" -c "print recs[$fn].holemask" "$dmg" 2>/dev/null |
		sed -n 's/.* = //p')" = "$(printf '%#x' $hole)" ] ||
		{ echo "$name: holemask not written" >&2; exit 99; }
	daddr=$(xfs_db -r -c "convert inode $((last + 1)) daddr" "$dmg" | sed 's/.*(\([0-9]*\)).*/\1/')
	dd if=/dev/zero of="$dmg" bs=512 seek="$daddr" count=$((nh * isize / 512)) conv=notrunc status=none

	cp --sparse=always "$dmg" "$T/theirs.img"
	"$REPAIR" "$dmg" >"$T/ours.out" 2>&1
	rc=$?
	settled=$(grep -c 'made a valid free inode, its core being no inode' "$T/ours.out")
	if [ "$settled" -ne "$nh" ]; then
		fail "$name: $settled of the $nh zeroed slots made valid free inodes (exit $rc): $(repair_own "$T/ours.out" | tail -3 | tr '\n' ' ')"
	else
		pass "$name: the zeroed slots made valid free inodes before the cluster was written ($settled)"
	fi
	if [ $rc -ne 0 ] || grep -q 'could not be repaired\|stays marked NEEDSREPAIR' "$T/ours.out"; then
		fail "$name: xfskit-repair exit $rc: $(repair_own "$T/ours.out" | tail -3 | tr '\n' ' ')"
	else
		pass "$name: xfskit-repair completed in one run (exit 0)"
	fi
	if xfs_repair_clean "$dmg" "$T/xr.clean"; then
		pass "$name: xfs_repair -n clean after ours"
	else
		fail "$name: xfs_repair -n after ours: $(tr '\n' ' ' <"$T/xr.clean" | cut -c1-300)"
	fi
	errs=$(walk "$dmg" "$T/tree.ours")
	[ -z "$errs" ] || fail "$name: the kernel after ours: $errs"
	ours=$(preserved "$T/tree.ours")
	theirs=$(xfs_repair_kept "$T/theirs.img")
	grep -q 'metadata writeout failed' "$T/xr.out" &&
		echo "$name: xfs_repair 6.1: $(grep -m1 'metadata writeout failed' "$T/xr.out")"
	if [ "$ours" -ge "$theirs" ] && [ "$ours" -eq "$total" ]; then
		pass "$name: entries kept in place: ours $ours, xfs_repair $theirs (of $total)"
	else
		fail "$name: entries kept in place: ours $ours, xfs_repair $theirs (of $total)"
	fi
}

agi_count=$(db_get "$img" "agi 0" count)
agi_free=$(db_get "$img" "agi 0" freecount)
hole_case block "$ipb"
# Half the block: its other inodes are still in use by the record, so the
# block is (the rebuild once freed it with the bit at its start, and
# every pass then found it both free and in use).
hole_case half 4
finish
