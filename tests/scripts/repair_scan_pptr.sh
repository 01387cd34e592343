#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The device scan's rebuilds on a parent-pointer, metadir filesystem
# (mkfs.xfs 7.2 -m rmapbt=0,metadir=1: its default parent=1; without
# rmapbt, so that lost maps come from the scan, not from the rmapbt).
# The kernel writes a directory in node form whose bmbt lies between
# file blocks, 40 hard links to one of its files from a second
# directory, and a file whose data and attr forks are both bmbts (its
# attr fork holding its 41 parent pointers beside user xattrs with
# remote values).  Each case damages a copy with xfs_db 7.2 (our -n
# says what the scan would rebuild and writes nothing); xfs_repair 7.2
# repairs another copy.  After ours, xfs_repair 7.2 -n is clean, the
# kernel mounts it, the parent pointers it reports (GETPARENTS) are
# exactly the tree's entries, and we keep at least what 7.2 keeps:
#   dir:   the directory's bmbt root points nowhere: its own map back
#          from its leaves, its names and its children's pointers as
#          they were (7.2 clears it: its children to /lost+found);
#   dirino: the directory's inode zeroed: rebuilt from its blocks in
#          the same inode, a new generation, its children's pointers
#          set to it (7.2: its children to /lost+found);
#   attr:  the file's two bmbt roots point nowhere: both maps back from
#          their leaves, its parent pointers and xattrs with them (7.2
#          clears the file);
#   meta:  as dirino, and one entry of the directory's first block
#          rewritten (CRC right) to name the metadata directory's root:
#          a user directory never names a metadata inode, so the scan's
#          rebuild leaves that entry out (said so), the metadata tree
#          keeps its own, and the file it named goes to /lost+found.
. "$XK_SRCDIR/tests/scripts/lib.sh"
need_xfs72
[ "$(id -u)" -eq 0 ] || skip "populating images needs root (loop mount)"
command -v python3 >/dev/null || skip "python3 is not installed"
GP="$XK_BUILDDIR/tests/tools/xk_getparents"
[ -x "$GP" ] || skip "xk_getparents not built (make check builds it)"
EXPECT="python3 $XK_SRCDIR/tests/scripts/pptr_expect.py"
FORKS="python3 $XK_SRCDIR/tests/scripts/scan_forks.py"

base=$T/base.img
truncate -s 320m "$base"
xfs72 mkfs.xfs -q -f -m rmapbt=0,metadir=1 -i size=512 "$base" >"$T/mkfs.out" 2>&1 ||
	{ fail "mkfs.xfs 7.2: $(cat "$T/mkfs.out")"; finish; }
loop_mount "$base" || finish
# 200 data blocks, 120 xattrs (60 left), 40 links to each of two files.
$FORKS populate "$MNT" 200 120 40 || fail "populate"
ino_frag=$(stat -c %i "$MNT/frag")
ino_both=$(stat -c %i "$MNT/both")
tree() { $FORKS tree "$1"; }
tree "$MNT" | grep -v '^lost+found' >"$T/orig.tree"
loop_umount || finish
xfs72 xfs_repair -n "$base" >"$T/xr0" 2>&1 || { fail "not clean before the damage: $(tail -5 "$T/xr0")"; finish; }
dig_holes "$base"
for q in "$ino_frag core.format" "$ino_both core.format" "$ino_both core.aformat"; do
	[ "$(xfs72 xfs_db -r -c "inode ${q% *}" -c "print ${q#* }" "$base" | sed 's/.* = //')" = "3 (btree)" ] ||
		{ fail "inode ${q% *}: ${q#* } is not a bmbt"; finish; }
done

bad_root() {
	xfs72 xfs_db -x -c "inode $2" -c "write $3.ptrs[1] 123456" "$1" >/dev/null
}
dmg_dir() { bad_root "$1" "$ino_frag" u3.bmbt; }
dmg_attr() { bad_root "$1" "$ino_both" u3.bmbt && bad_root "$1" "$ino_both" a.bmbt; }
# The directory's inode, every byte (one sector: -i size=512).
dmg_dirino() {
	local off
	off=$(xfs72 xfs_db -r -c "inode $ino_frag" -c stack "$1" | sed -n 's/.*byte offset \([0-9]*\), length 512.*/\1/p')
	[ -n "$off" ] && dd if=/dev/zero of="$1" bs=512 seek=$((off / 512)) count=1 conv=notrunc status=none
}
# dirino, after one entry of the first block is made to name the
# metadata root (the file it named, frag/r00_..._0001, loses its entry).
dmg_meta() {
	local m
	m=$(xfs72 xfs_db -r -c "sb 0" -c "print metadirino" "$1" | sed 's/.* = //')
	xfs72 xfs_db -x -c "inode $ino_frag" -c "dblock 0" -c "write du[3].inumber $m" "$1" >/dev/null &&
		dmg_dirino "$1"
}

# kept TREE: entries of the original found in TREE (same content).
kept() {
	grep -cxFf "$T/orig.tree" "$1"
}

# run_case NAME DAMAGE-FN [LOST]: damage a copy, repair it with 7.2 and
# ours; ours must keep all but LOST (0) entries in place.
run_case() {
	local st lost=${3:-0}
	name=$1 D=$T/$1
	mkdir -p "$D"
	cp --sparse=always "$base" "$D/damaged.img" || return 1
	$2 "$D/damaged.img" || { fail "[$name] damage"; return 1; }
	# -n says what the scan would rebuild, and writes nothing.
	before=$(image_state "$D/damaged.img")
	"$REPAIR" -n "$D/damaged.img" >"$D/n.out" 2>&1
	st=$?
	[ $st = 1 ] || fail "[$name] -n on the damaged image: exit $st: $(tail -3 "$D/n.out")"
	[ "$(image_state "$D/damaged.img")" = "$before" ] || fail "[$name] -n wrote to the image"
	grep -q "would rebuild " "$D/n.out" || fail "[$name] -n does not say what the scan would rebuild"
	cp --sparse=always "$D/damaged.img" "$D/xr72.img"
	cp --sparse=always "$D/damaged.img" "$D/ours.img"
	xfs72 xfs_repair "$D/xr72.img" >"$D/xr72.out" 2>&1 || xfs72 xfs_repair "$D/xr72.img" >>"$D/xr72.out" 2>&1 ||
		echo "note: [$name] xfs_repair 7.2 failed twice: $(tail -3 "$D/xr72.out")"
	"$REPAIR" "$D/ours.img" >"$D/ours.out" 2>&1
	st=$?
	[ $st = 0 ] || { fail "[$name] xfskit-repair: exit $st: $(tail -5 "$D/ours.out")"; return 1; }
	xfs72 xfs_repair -n "$D/ours.img" >"$D/ours.n72" 2>&1 ||
		{ fail "[$name] xfs_repair 7.2 -n after ours: $(grep -v '^Phase\|^  *-' "$D/ours.n72" | tail -5)"; return 1; }
	xr72_kept=-
	if xfs72 xfs_repair -n "$D/xr72.img" >/dev/null 2>&1 && loop_mount "$D/xr72.img"; then
		tree "$MNT" | grep -v '^lost+found' >"$D/xr72.tree"
		loop_umount || return 1
		xr72_kept=$(kept "$D/xr72.tree")
	fi
	mark=$(kmsg_mark)
	loop_mount "$D/ours.img" || return 1
	tree "$MNT" | grep -v '^lost+found' >"$D/ours.tree"
	"$GP" "$MNT" >"$D/gp" || fail "[$name] GETPARENTS failed"
	$EXPECT tree "$MNT" >"$D/want"
	$EXPECT gp "$D/gp" >"$D/got"
	loop_umount || return 1
	xfs_kernel_errors "$mark" >"$D/kerr" && fail "[$name] the kernel reported XFS errors: $(head -3 "$D/kerr")"
	cmp -s "$D/want" "$D/got" ||
		fail "[$name] parent pointers are not the tree's entries: $(diff "$D/want" "$D/got" | head -4)"
	ours_kept=$(kept "$D/ours.tree")
	total=$(wc -l <"$T/orig.tree")
	[ "$xr72_kept" = - ] || [ "$ours_kept" -ge "$xr72_kept" ] ||
		fail "[$name] xfs_repair 7.2 keeps $xr72_kept, ours $ours_kept"
	[ "$ours_kept" = "$((total - lost))" ] ||
		fail "[$name] ours keeps $ours_kept of $total: $(diff "$T/orig.tree" "$D/ours.tree" | head -4)"
	return 0
}

run_case dir dmg_dir &&
	grep -q "^Rebuilt a fork of inode $ino_frag (/frag): its block map, from [0-9]* bmbt leaves" "$D/ours.out" &&
	pass "[dir] /frag's map back from its leaves, parent pointers as they were: $ours_kept of $total in place (xfs_repair 7.2: $xr72_kept)" ||
	fail "[dir] /frag's map was not given back from its leaves: $(grep -i frag "$D/ours.out" | head -3)"
run_case dirino dmg_dirino &&
	grep -q "^Rebuilt directory $ino_frag (/frag) from [0-9]* blocks found by the device scan" "$D/ours.out" &&
	pass "[dirino] /frag rebuilt from its blocks, its children's pointers set to it: $ours_kept of $total in place (xfs_repair 7.2: $xr72_kept)" ||
	fail "[dirino] /frag was not rebuilt from its blocks: $(grep -i "$ino_frag\|frag" "$D/ours.out" | head -3)"
run_case attr dmg_attr &&
	grep -q "^Rebuilt a fork of inode $ino_both (.*): its attr fork map, from [0-9]* bmbt leaves" "$D/ours.out" &&
	pass "[attr] /both's two maps back, its 41 parent pointers and xattrs with them: $ours_kept of $total in place (xfs_repair 7.2: $xr72_kept)" ||
	fail "[attr] /both's attr fork map was not given back: $(grep -i "$ino_both" "$D/ours.out" | head -3)"
run_case meta dmg_meta 1 &&
	grep -q "^Rebuilt directory $ino_frag (/frag) from [0-9]* blocks found by the device scan (799 entries" "$D/ours.out" &&
	grep -q "directory $ino_frag: 1 entry naming metadata inodes left out" "$D/ours.out" &&
	! grep -q "r00_a_longish_directory_entry_name_0001" "$D/ours.tree" &&
	pass "[meta] /frag rebuilt from its blocks without the entry naming the metadata root: $ours_kept of $total in place (xfs_repair 7.2: $xr72_kept)" ||
	fail "[meta] the entry naming the metadata root was not left out: $(grep -i "$ino_frag\|metadata" "$D/ours.out" | head -3)"
finish
