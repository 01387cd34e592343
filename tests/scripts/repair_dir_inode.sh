#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A directory inode lost or wrong while its blocks survive, on
# filesystems populated by the kernel (a leaf-format root of 300 names,
# a subdirectory of 400 under it):
#  - the root inode zeroed, with the rmapbt: ours rebuilds the root's
#    block map from it, its size with it; without the rmapbt (mkfs.xfs
#    defaults, every inode slot in use): ours rebuilds the root from
#    the blocks the device scan finds naming it as owner.  Every entry
#    stays in place both times; xfs_repair makes a new empty root and
#    sends the names to /lost+found.  After ours xfs_repair -n is
#    clean, the kernel walks the tree, and ours keeps at least what
#    xfs_repair keeps in place;
#  - the same without the scan (-o scan=never), every inode slot in
#    use: /lost+found goes in a new inode chunk (as xfs_repair's does),
#    and every file is kept there;
#  - a directory lost with its entry (its inode zeroed, its parent's
#    entry naming inode 0), without the rmapbt: the blocks neither free
#    nor in use make ours scan the device, which finds the blocks that
#    name the lost inode; it comes back under /lost+found with every
#    child named as before (xfs_repair: each child in /lost+found by
#    number);
#  - a leaf directory's size set below and above the end of its data
#    blocks (the kernel keeps it there; xfs_repair does not look):
#    our -n reports it, our repair sets it back, xfs_repair -n is clean
#    and every entry is in place.
. "$XK_SRCDIR/tests/scripts/lib.sh"
. "$XK_SRCDIR/tests/scripts/repair_lib.sh"
need_xfsprogs
[ "$(id -u)" -eq 0 ] || skip "populating and walking images needs root (loop mount)"

# make_base IMG MKFS_OPTS...: the tree above; every inode slot used
# when FILL=1.  Sets total, sub and root_sector; tree in $T/tree.base.
make_base() {
	local img=$1 free
	shift
	rm -f "$img"
	truncate -s 320m "$img"
	mkfs.xfs -q -f "$@" "$img" || { fail "mkfs.xfs $*"; return 1; }
	loop_mount "$img" || return 1
	for i in $(seq 300); do echo "$i" >"$MNT/file_with_a_longer_name_$i"; done
	mkdir "$MNT/sub"
	for i in $(seq 400); do echo "s$i" >"$MNT/sub/entry_name_$i"; done
	loop_umount
	if [ "${FILL:-0}" = 1 ]; then
		free=$(db_get "$img" "sb 0" ifree)
		loop_mount "$img" || return 1
		for i in $(seq "$free"); do : >"$MNT/sub/fill_$i"; done
		loop_umount
		[ "$(db_get "$img" "sb 0" ifree)" = 0 ] ||
			{ fail "could not use every inode slot"; return 1; }
	fi
	loop_mount "$img" || return 1
	entries "$MNT" >"$T/tree.base"
	sub=$(stat -c %i "$MNT/sub")
	loop_umount
	total=$(wc -l <"$T/tree.base")
	[ "$(db_get "$img" "inode 128" core.format)" = "2 (extents)" ] ||
		{ fail "the root is not in extents format"; return 1; }
	root_sector=$(xfs_db -r -c "inode 128" -c stack "$img" |
		sed -n 's/.*byte offset \([0-9]*\),.*/\1/p' | head -1)
	[ -n "$root_sector" ] || { fail "cannot locate the root inode"; return 1; }
}

# case_check NAME [OPTS]: repair $T/c.img with ours (OPTS), a copy with
# xfs_repair; compare.  IN_PLACE=0: every file kept, in /lost+found.
case_check() {
	local name=$1 rc xr ours theirs kern
	shift
	cp --sparse=always "$T/c.img" "$T/x.img"
	"$REPAIR" "$@" "$T/c.img" >"$T/ours.out" 2>&1; rc=$?
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
	if [ "${IN_PLACE:-1}" = 0 ]; then
		local files kept
		files=$(contents "$T/tree.base" | wc -l)
		kept=$(files_kept "$T/tree.base" "$T/tree.ours")
		[ "$kept" -eq "$files" ] &&
			pass "$name: all $files files kept ($ours entries in place)" ||
			fail "$name: ours keeps $kept of $files files"
	elif [ "$ours" -eq "$total" ]; then
		pass "$name: every entry in place"
	else
		fail "$name: ours keeps $ours of $total in place"
	fi
}

# zero_root: $T/c.img, a copy of $img with the root inode zeroed.
zero_root() {
	cp --sparse=always "$img" "$T/c.img"
	dd if=/dev/zero of="$T/c.img" bs=512 seek=$((root_sector / 512)) \
		count=1 conv=notrunc status=none
}

img="$T/base.img"
make_base "$img" -m rmapbt=1 || finish

zero_root
case_check "root inode zeroed (rmapbt)"
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

img="$T/full.img"
FILL=1 make_base "$img" || finish
zero_root
case_check "root inode zeroed (no rmapbt, every slot in use)"
grep -q "Rebuilt directory 128 (/) from .* found by the device scan" "$T/ours.out" ||
	fail "root from the scan: not reported: $(grep -v disconnected "$T/ours.out" | head -3)"
zero_root
IN_PLACE=0 case_check "root inode zeroed, -o scan=never (every slot in use)" -o scan=never
grep -q "in a new inode chunk" "$T/ours.out" ||
	fail "scan=never: /lost+found not in a new chunk: $(grep -v disconnected "$T/ours.out" | tail -3)"

# A directory lost with its entry.
img="$T/unnamed.img"
truncate -s 320m "$img"
mkfs.xfs -q -f "$img" || { fail "mkfs.xfs"; finish; }
loop_mount "$img" || finish
mkdir "$MNT/a" "$MNT/a/sub"
for i in $(seq 30); do echo "$i" >"$MNT/a/f$i"; done
for i in $(seq 300); do echo "s$i" >"$MNT/a/sub/entry_long_name_$i"; done
entries "$MNT" >"$T/tree.base"
sub=$(stat -c %i "$MNT/a/sub")
loop_umount
total=$(wc -l <"$T/tree.base")
slot=$(xfs_db -r -c "path /a" -c "dblock 0" -c print "$img" |
	sed -n 's/^bu\[\([0-9]*\)\].name = "sub"$/\1/p')
off=$(xfs_db -r -c "inode $sub" -c stack "$img" |
	sed -n 's/.*byte offset \([0-9]*\),.*/\1/p' | head -1)
if [ -z "$slot" ] || [ -z "$off" ]; then
	fail "cannot locate /a/sub's entry ($slot) or inode ($off)"
	finish
fi
cp --sparse=always "$img" "$T/c.img"
xfs_db -x -c "path /a" -c "dblock 0" -c "write -d bu[$slot].inumber 0" \
	"$T/c.img" >/dev/null
dd if=/dev/zero of="$T/c.img" bs=512 seek=$((off / 512)) count=1 \
	conv=notrunc status=none
IN_PLACE=0 case_check "directory lost with its entry"
if loop_mount "$T/c.img"; then
	named=$(ls "$MNT/lost+found/$sub" 2>/dev/null | grep -c '^entry_long_name_')
	loop_umount
	[ "$named" = 300 ] &&
		pass "lost directory: /lost+found/$sub holds its 300 names" ||
		fail "lost directory: /lost+found/$sub holds $named of its 300 names"
else
	fail "lost directory: the repaired image does not mount"
fi
finish
