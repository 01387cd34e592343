#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# An inode cluster zeroed across used and free inodes, with AG 0's inode
# btree root: our repair completes in one run, xfs_repair -n is clean
# after it, and it keeps at least the entries xfs_repair 6.1 keeps.
# (bench/reasm's "5% of metadata zeroed" made repair stop on clusters
# written with free slots left zero, fixed in repair/fix.c
# settle_cluster; this case does not reach that path:
# repair_settle_cluster.sh does.)
. "$XK_SRCDIR/tests/scripts/lib.sh"
. "$XK_SRCDIR/tests/scripts/repair_lib.sh"
need_xfsprogs
[ "$(id -u)" -eq 0 ] || skip "populating and walking images needs root (loop mount)"

img="$T/base.img"
truncate -s 512m "$img"
mkfs.xfs -q -f "$img" || { fail "mkfs.xfs failed"; finish; }
loop_mount "$img" || finish
mkdir "$MNT/d" "$MNT/e"
for i in $(seq 40); do echo "file $i" >"$MNT/d/f$i"; done
echo kept >"$MNT/e/g"
loop_umount || finish
walk "$img" "$T/tree.base" >/dev/null || { fail "walking the base image"; finish; }

# The whole inode cluster holding /d/f40 (as the device scan lists it):
# the last files' inodes, /e's, and the chunk's free inodes after them.
ino=$(ino_of "$img" /d/f40)
off=$(xfs_db -r -c "convert inode $ino byte" "$img" | sed 's/.*(\([0-9]*\)).*/\1/')
read -r cdaddr clen < <("$DB" -r -c 'scan -t inodes' "$img" |
	awk -v b=$((off / 512)) 'NR > 1 && $2 <= b && b < $2 + $3 / 512 { print $2, $3 }')
[ -n "$clen" ] || { echo "no inode cluster found holding inode $ino" >&2; exit 99; }
[ "$(db_get "$img" "agi 0" freecount)" -gt 0 ] ||
	{ echo "the chunk has no free inode" >&2; exit 99; }
dd if=/dev/zero of="$img" bs=512 seek="$cdaddr" count=$((clen / 512)) conv=notrunc status=none
# And AG 0's inode btree root: the chunks are then found another way, and
# every inode of them is judged as if in use (phase_ag.c).
root=$(db_get "$img" "agi 0" root)
bsize=$(db_get "$img" "sb 0" blocksize)
dd if=/dev/zero of="$img" bs="$bsize" seek="$root" count=1 conv=notrunc status=none

cp --sparse=always "$img" "$T/ours.img"
cp --sparse=always "$img" "$T/theirs.img"
ours_repaired "$T/ours.img" "$T/ours.out"
walk "$T/ours.img" "$T/tree.ours" >/dev/null
ours=$(preserved "$T/tree.ours")
theirs=$(xfs_repair_kept "$T/theirs.img")
if [ "$ours" -ge "$theirs" ]; then
	pass "entries kept in place: ours $ours, xfs_repair $theirs (of $(wc -l <"$T/tree.base"))"
else
	fail "entries kept in place: ours $ours, fewer than xfs_repair's $theirs"
fi
finish
