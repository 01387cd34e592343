#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# -m spills the inode and directory entry lists as well as the extent
# records.  On an image of about 200,000 inodes and as many entries
# (built by xfskit-mkfs -p from a protofile; xfs_repair -n must find it
# clean), a check under a cap just over the figure the refusal names
# must:
#  (a) move both lists to files: -v says so, with entry counts equal to
#      the superblock's inodes in use (xfs_db) and to the entries the
#      protofile made;
#  (b) print what the run without -m prints (the memory lines aside),
#      and leave no file in --spill-dir;
#  (c) a cap that holds everything in memory runs too (the peak RSS of
#      the three runs is measured by bench/memcap, not asserted here).
# Then a damaged copy (a wrong link count, a directory whose block is
# destroyed so that its files go to /lost+found, a wrong AGF counter)
# is repaired with and without the cap: the same output, the same
# image byte for byte, and xfs_repair -n finds it clean.
. "$XK_SRCDIR/tests/scripts/lib.sh"
need_xfsprogs

# 40 directories of 5,000 empty files, and four small ones (x0..x3:
# 100 files and a subdirectory with 20) for the damage.
: >"$T/empty"
awk -v E="$T/empty" 'BEGIN {
	print "/dev/null"; print "0 0"; print "d--755 0 0"
	for (d = 0; d < 40; d++) {
		print "d" d " d--755 0 0"
		for (f = 0; f < 5000; f++) print "f" f " ---644 0 0 " E
		print "$"
	}
	for (d = 0; d < 4; d++) {
		print "x" d " d--755 0 0"
		for (f = 0; f < 100; f++) print "g" f " ---644 0 0 " E
		print "sub d--755 0 0"
		for (f = 0; f < 20; f++) print "h" f " ---644 0 0 " E
		print "$"
		print "$"
	}
	print "$"
}' >"$T/tree.proto"
# Entries other than "." and "..": every line naming an entry.
entries=$(awk 'NR > 3 && $1 != "$"' "$T/tree.proto" | wc -l)
I="$T/l.img"
"$MKFS" -q -f -d agcount=4,size=2g -p "$T/tree.proto" "$I" >"$T/mkfs.out" 2>&1 ||
	{ fail "xfskit-mkfs -p: $(tail -3 "$T/mkfs.out")"; finish; }
xfs_repair -n "$I" >"$T/xr.out" 2>&1 || fail "xfs_repair -n on the image: $(tail -3 "$T/xr.out")"
icount=$(db_get "$I" "sb 0" icount)
ifree=$(db_get "$I" "sb 0" ifree)
inuse=$((icount - ifree))
[ "$inuse" -gt 100000 ] || { fail "only $inuse inodes in use"; finish; }
mkdir "$T/spill"

strip_mem() { grep -v -e '^Memory: ' -e '^Spilled: ' "$1"; }

"$REPAIR" -n --no-progress -v -o threads=2 "$I" >"$T/full.out" 2>&1; rc=$?
[ $rc -eq 0 ] || fail "check without -m: exit $rc: $(tail -3 "$T/full.out")"
"$REPAIR" -n --no-progress -o threads=2 "$I" >"$T/full.q" 2>&1

"$REPAIR" -n --no-progress -o threads=2 -m 1 --spill-dir "$T/spill" "$I" >"$T/m1.out" 2>&1; rc=$?
low=$(sed -n 's/.*needs at least \([0-9]*\) MiB with its extent records spilled to .* along with its inode and directory entry lists.*/\1/p' "$T/m1.out")
high=$(sed -n 's/.*(\([0-9]*\) MiB all in memory.*/\1/p' "$T/m1.out")
if [ $rc -ne 1 ] || [ -z "$low" ] || [ -z "$high" ]; then
	fail "-m 1: exit $rc: $(cat "$T/m1.out")"
	finish
fi
# The lists are (32 + 24) bytes an inode in the model, half as much
# again at the peak: the two figures must be that far apart at least.
lists_mib=$((inuse * 56 / 1048576))
[ $((high - low)) -ge "$lists_mib" ] &&
	pass "-m 1 refused: $low MiB with the lists spilled, $high MiB all in memory ($inuse inodes)" ||
	fail "-m 1: $low MiB spilled vs $high MiB in memory: the lists ($lists_mib MiB) are not in the difference"
small=$((low + 2))

"$REPAIR" -n --no-progress -v -o threads=2 -m "$small" --spill-dir "$T/spill" "$I" \
	>"$T/small.out" 2>&1; rc=$?
[ $rc -eq 0 ] || fail "-m $small: exit $rc: $(grep -v '^Phase\|^  ' "$T/small.out" | head -5)"
# (a) Both lists in files, with the oracles' counts.
grep -q "^Memory: about .* of the $small allowed, the extent records and the inode and entry lists .* spilled to $T/spill" "$T/small.out" ||
	fail "-m $small did not choose spilling: $(grep '^Memory' "$T/small.out")"
if grep -q "^Spilled: the inode list, $inuse entries (.*), is in a file\.$" "$T/small.out" &&
   grep -q "^Spilled: the directory entry list, $entries entries (.*), is in a file\.$" "$T/small.out"; then
	pass "-m $small: the inode list ($inuse, as xfs_db counts) and the entry list ($entries, as the protofile made) are in files"
else
	fail "lists not spilled as expected ($inuse inodes, $entries entries): $(grep '^Spilled' "$T/small.out")"
fi
# (b) The same findings and output.
strip_mem "$T/full.out" >"$T/full.cmp"
strip_mem "$T/small.out" >"$T/small.cmp"
"$REPAIR" -n --no-progress -o threads=2 -m "$small" --spill-dir "$T/spill" "$I" >"$T/small.q" 2>&1
strip_mem "$T/small.q" >"$T/small.qcmp"
same_image "$T/full.cmp" "$T/small.cmp" && same_image "$T/full.q" "$T/small.qcmp" &&
	pass "spilled and unlimited runs print the same ($(wc -l <"$T/full.cmp") lines with -v)" ||
	fail "outputs differ: $(diff "$T/full.cmp" "$T/small.cmp" | head -5) $(diff "$T/full.q" "$T/small.qcmp" | head -3)"
[ -z "$(ls -A "$T/spill")" ] || fail "files left in the spill directory: $(ls -A "$T/spill")"

# (c) Everything in memory with the cache the cap leaves (-m at the
# all-in-memory figure): the same output.
"$REPAIR" -n --no-progress -v -o threads=2 -m "$high" --spill-dir "$T/spill" "$I" \
	>"$T/high.out" 2>&1; rc=$?
strip_mem "$T/high.out" >"$T/high.cmp"
[ $rc -eq 0 ] && grep -q "^Memory: about .* of the $high allowed (cache" "$T/high.out" &&
	same_image "$T/full.cmp" "$T/high.cmp" &&
	pass "-m $high holds everything in memory and prints what the unlimited run prints" ||
	fail "-m $high (all in memory): exit $rc: $(grep '^Memory' "$T/high.out") $(diff "$T/full.cmp" "$T/high.cmp" | head -5)"
# Repair under the cap.  Damage: a file's link count, the block of the
# directory x1 (its 101 entries go to /lost+found), AGF 2's free count.
D="$T/d.img"
cp --sparse=always "$I" "$D"
ino_of() {
	xfs_db -r -c "path $2" -c "print v3.inumber" "$1" 2>/dev/null |
		sed -n 's/^v3.inumber = //p'
}
file_ino=$(ino_of "$D" /d5/f77)
dir_ino=$(ino_of "$D" /x1)
if [ -z "$file_ino" ] || [ -z "$dir_ino" ]; then
	fail "cannot find the inodes to damage ('$file_ino' '$dir_ino')"
	finish
fi
# x1's entries fit one directory block: zero it.
fsb=$(xfs_db -r -c "inode $dir_ino" -c "bmap" "$D" |
	sed -n 's/^data offset 0 startblock \([0-9]*\) .*/\1/p')
daddr=$(xfs_db -r -c "convert fsblock ${fsb:-x} daddr" "$D" 2>/dev/null |
	sed -n 's/.*(\([0-9]*\))$/\1/p')
bsize=$(db_get "$D" "sb 0" blocksize)
if [ -z "$daddr" ] || [ -z "$bsize" ]; then
	fail "cannot find x1's directory block ('$fsb' '$daddr')"
	finish
fi
dd if=/dev/zero of="$D" bs=512 seek="$daddr" count=$((bsize / 512)) \
	conv=notrunc status=none
xfs_db -x -c "inode $file_ino" -c "write core.nlinkv2 3" \
	-c "agf 2" -c "write -d freeblks 1234" "$D" >/dev/null 2>&1
xfs_repair -n "$D" >/dev/null 2>&1 && fail "xfs_repair -n does not see the damage"
cp --sparse=always "$D" "$T/e.img"
"$REPAIR" --no-progress -v -o threads=2 "$T/e.img" >"$T/e.out" 2>&1; rc1=$?
"$REPAIR" --no-progress -v -o threads=2 -m "$small" --spill-dir "$T/spill" "$D" >"$T/d.out" 2>&1; rc2=$?
xfs_repair -n "$D" >"$T/d.xr" 2>&1; xr=$?
strip_mem "$T/d.out" >"$T/d.cmp"
strip_mem "$T/e.out" >"$T/e.cmp"
if [ $rc1 -eq 0 ] && [ $rc2 -eq 0 ] && [ $xr -eq 0 ] && same_image "$T/d.cmp" "$T/e.cmp" &&
   grep -q "^Spilled: the inode list, .* is in a file" "$T/d.out" &&
   grep -q "^Spilled: the directory entry list, .* is in a file" "$T/d.out"; then
	pass "repair with the lists spilled: $(grep -c '' "$T/e.cmp") lines as without -m, xfs_repair -n clean"
else
	fail "repair: exit $rc1 without -m, $rc2 with -m $small, xfs_repair -n $xr: $(diff "$T/d.cmp" "$T/e.cmp" | head -5) $(tail -3 "$T/d.xr")"
fi
# The repaired trees as the kernel sees them (the images differ in
# the times the repair stamps).
tree() {
	loop_mount "$1" || return 1
	(cd "$MNT" && find . -printf '%p %i %n %y %m %s\n' | sort) >"$2"
	loop_umount
}
if [ "$(id -u)" -eq 0 ]; then
	if tree "$D" "$T/d.tree" && tree "$T/e.img" "$T/e.tree" &&
	   same_image "$T/d.tree" "$T/e.tree"; then
		pass "the kernel sees the same tree in both repaired images ($(wc -l <"$T/d.tree") paths)"
	else
		fail "the repaired trees differ: $(diff "$T/d.tree" "$T/e.tree" 2>&1 | head -5)"
	fi
	n=$(grep -c '^\./lost+found/[^/ ]* ' "$T/d.tree")
	[ "$n" -eq 101 ] && pass "/lost+found holds x1's 101 entries" ||
		fail "/lost+found holds $n entries, x1's 101 expected"
else
	echo "note: not root; the repaired trees are not compared by the kernel" >&2
fi
[ -z "$(ls -A "$T/spill")" ] || fail "files left in the spill directory after repair"
finish
