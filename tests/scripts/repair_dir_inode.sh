#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A directory inode lost or wrong while its blocks survive, on an rmapbt
# filesystem populated by the kernel:
#  - the root inode zeroed (a leaf-format root of 300 names, a
#    subdirectory under it): ours rebuilds the root's block map from
#    the rmapbt, its size with it, and every entry stays in place;
#    xfs_repair makes a new empty root and sends the names to
#    /lost+found.  After ours xfs_repair -n is clean, the kernel walks
#    the tree, and ours keeps at least what xfs_repair keeps in place
#    (all of it);
#  - a leaf directory's size set below and above the end of its data
#    blocks (the kernel keeps it there; xfs_repair does not look):
#    our -n reports it, our repair sets it back, xfs_repair -n is clean
#    and every entry is in place.
. "$XK_SRCDIR/tests/scripts/lib.sh"
. "$XK_SRCDIR/tests/scripts/repair_lib.sh"
need_xfsprogs
[ "$(id -u)" -eq 0 ] || skip "populating and walking images needs root (loop mount)"

img="$T/base.img"
truncate -s 320m "$img"
mkfs.xfs -q -f -m rmapbt=1 "$img" || { fail "mkfs.xfs"; finish; }
loop_mount "$img" || finish
for i in $(seq 300); do echo "$i" >"$MNT/file_with_a_longer_name_$i"; done
mkdir "$MNT/sub"
for i in $(seq 400); do echo "s$i" >"$MNT/sub/entry_name_$i"; done
entries "$MNT" >"$T/tree.base"
sub=$(stat -c %i "$MNT/sub")
loop_umount
total=$(wc -l <"$T/tree.base")
[ "$(db_get "$img" "inode 128" core.format)" = "2 (extents)" ] ||
	{ fail "the root is not in extents format"; finish; }
root_sector=$(xfs_db -r -c "inode 128" -c stack "$img" |
	sed -n 's/.*byte offset \([0-9]*\),.*/\1/p' | head -1)
[ -n "$root_sector" ] || { fail "cannot locate the root inode"; finish; }

# case NAME: repair $T/c.img with ours, a copy with xfs_repair; compare.
case_check() {
	local name=$1 rc xr ours theirs kern
	cp --sparse=always "$T/c.img" "$T/x.img"
	"$REPAIR" "$T/c.img" >"$T/ours.out" 2>&1; rc=$?
	[ $rc -eq 0 ] || fail "$name: xfskit-repair exit $rc: $(tail -3 "$T/ours.out")"
	xfs_repair -n "$T/c.img" >"$T/xrn.out" 2>&1; xr=$?
	if [ $xr -ne 0 ]; then
		fail "$name: xfs_repair -n after ours: $(grep -v '^Phase\|^  *-\|host filesystem\|sector size' "$T/xrn.out" | head -5)"
		return
	fi
	kern=$(walk "$T/c.img" "$T/tree.ours")
	[ -z "$kern" ] || fail "$name: kernel walk: $kern"
	ours=$(preserved "$T/tree.ours")
	theirs=$(xfs_repair_kept "$T/x.img")
	echo "$name: entries in place of $total: ours $ours, xfs_repair $theirs"
	[ "$ours" -ge "$theirs" ] || fail "$name: ours keeps $ours, xfs_repair $theirs"
	[ "$ours" -eq "$total" ] && pass "$name: every entry in place" ||
		fail "$name: ours keeps $ours of $total in place"
}

cp --sparse=always "$img" "$T/c.img"
dd if=/dev/zero of="$T/c.img" bs=512 seek=$((root_sector / 512)) count=1 \
	conv=notrunc status=none
case_check "root inode zeroed"
grep -q "Rebuilt a fork of inode 128" "$T/ours.out" ||
	fail "root inode zeroed: no rebuild of the root's map reported: $(head -3 "$T/ours.out")"

dsize=$(db_get "$img" "inode $sub" core.size)
for bad in 4096 $((dsize + 8192)); do
	cp --sparse=always "$img" "$T/c.img"
	xfs_db -x -c "inode $sub" -c "write -d core.size $bad" "$T/c.img" >/dev/null
	if "$REPAIR" -n "$T/c.img" >"$T/n.out" 2>&1 ||
	   ! grep -q "size $bad, but its data blocks end at $dsize" "$T/n.out"; then
		fail "size $bad: our -n does not report it: $(head -3 "$T/n.out")"
	fi
	case_check "directory size $bad (data ends at $dsize)"
done
finish
