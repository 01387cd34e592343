#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Repair fidelity: single-field corruptions that xfs_repair repairs
# without losing the file must be repaired by xfskit-repair without
# losing it either, and detected by our -n wherever xfs_repair -n
# detects them.
#
# Two images with fixed content: one made by xfskit-mkfs -p from a
# tree of 200 small files in 10 directories (issue 20's reproduction),
# one made by mkfs.xfs and populated by the kernel with every on-disk
# format (populate.sh).  Each case is an xfs_db -x edit of a copy.  For
# each case:
#  - detection: when xfs_repair -n exits non-zero, ours -n must too;
#  - one copy repaired by xfskit-repair, one by xfs_repair (run again
#    while it still finds something, as an administrator would);
#  - after ours, xfs_repair -n (6.1, and 7.2 when scripts/xfsprogs-sid
#    has a tree: the images have no parent pointers) exits 0 and only
#    then the kernel mounts the image and walks the tree without an XFS
#    error;
#  - ours keeps at least as many entries (path, type and content
#    identical to the recorded tree, and on the kernel image the xattrs
#    of /attrs, name and value) as xfs_repair keeps (where ours keeps
#    them all xfs_repair cannot keep more: its copy is repaired only
#    under XK_TEST_LONG=1, and the table shows "-").
# Cases: extent counters, block count, extent offsets beyond 2^63 bytes,
# next_unlinked, fork offset, size and project id of one file, its attr
# fork format without an attr fork (0: the kernel takes it, xfs_repair
# does not); an unwritten directory extent, a short-form entry's file type, a free
# index entry, an attr leaf's usedbytes, an attr node's sibling
# pointer and an attr node's hashes (out of order: xfs_repair corrects
# them and keeps every xattr, and so must we); the superblock's LSN, inprogress, bad_features2, versionnum,
# feature fields and rootino; the root inode lost (fstests xfs/033), and
# the realtime bitmap and summary inodes of a filesystem without a
# realtime volume (xfs/033: left free, the kernel shut down); inode flag
# bits and fork formats no feature of the filesystem defines (xfs_repair
# 7.2 clears the file for the metadata flag; ours keeps it); the reflink
# flag of a file that shares blocks cleared (xfs_repair sets it again).
# The side-by-side table is printed; a case where ours is worse fails.
. "$XK_SRCDIR/tests/scripts/lib.sh"
. "$XK_SRCDIR/tests/scripts/populate.sh"
. "$XK_SRCDIR/tests/scripts/repair_lib.sh"
need_xfsprogs
[ "$(id -u)" -eq 0 ] || skip "walking images needs root (loop mount)"
X72=0 NCASE=0
if "$XFS72" dir >/dev/null 2>&1; then
	X72=1
	echo "second oracle: $(xfs72 xfs_repair -V)"
fi

row() {
	printf '%-22s %-7s %-7s %-7s %-6s %-6s %-6s %7s %7s\n' "$@"
}

# base_small: issue 20's tree, made into $img by xfskit-mkfs -p.
base_small() {
	local src="$T/small"
	rm -rf "$src" "$img"
	for i in $(seq 200); do
		mkdir -p "$src/d$((i % 10))"
		echo "file $i" >"$src/d$((i % 10))/f$i"
	done
	truncate -s 512M "$img"
	"$MKFS" -q -p "$src" "$img" || return 1
	walk "$img" "$T/tree.base" >/dev/null
}

# base_kernel OPTS: mkfs.xfs OPTS, populated by the kernel.
base_kernel() {
	rm -f "$img"
	truncate -s 300m "$img"
	mkfs.xfs -q -f "$@" "$img" || return 1
	loop_mount "$img" || return 1
	populate_all_formats "$MNT" || fail "populate"
	attrs_xattrs "$MNT" >"$T/xattrs.base"
	loop_umount
	dig_holes "$img"
	walk "$img" "$T/tree.base" >/dev/null
}

# xattrs_same FILE: the number of xattrs recorded in FILE by walk
# (WALK_XATTRS) that are identical to those in $T/xattrs.base.
xattrs_same() {
	LC_ALL=C comm -12 "$T/xattrs.base" "$1" | wc -l
}

# run_case NAME|CMDS: CMDS are xfs_db commands separated by ';'.
run_case() {
	local name=${1%%|*} cmds=${1#*|} c args=() rc det xdet
	local xr x72=- kern=- ours=0 theirs
	IFS=';' read -ra cl <<<"$cmds"
	for c in "${cl[@]}"; do args+=(-c "$c"); done
	cp --sparse=always "$img" "$T/c.img"
	xfs_db -x "${args[@]}" "$T/c.img" >"$T/db.out" 2>&1
	if same_image "$img" "$T/c.img"; then
		fail "$name: xfs_db changed nothing: $(head -3 "$T/db.out")"
		return
	fi
	cp --sparse=always "$T/c.img" "$T/x.img"
	NCASE=$((NCASE + 1))
	leak_check_sampled "$NCASE"
	"$REPAIR" -n "$T/c.img" >"$T/ours-n.out" 2>&1; det=$?
	xfs_repair -n "$T/c.img" >"$T/xr-n.out" 2>&1; xdet=$?
	"$REPAIR" "$T/c.img" >"$T/ours.out" 2>&1; rc=$?
	xfs_repair -n "$T/c.img" >"$T/xrn.out" 2>&1; xr=$?
	if [ "$X72" = 1 ]; then
		xfs72 xfs_repair -n "$T/c.img" >"$T/x72n.out" 2>&1; x72=$?
	fi
	# The kernel image: xattrs count as entries too.
	local WALK_XATTRS=
	[ -s "$T/xattrs.base" ] && WALK_XATTRS="$T/xattrs.now"
	if [ $xr -eq 0 ] && [ "$x72" != 1 ]; then
		kern=$(walk "$T/c.img" "$T/tree.ours")
		[ -z "$kern" ] && kern=ok
		ours=$(preserved "$T/tree.ours")
		[ -n "$WALK_XATTRS" ] && [ "$kern" = ok ] &&
			ours=$((ours + $(xattrs_same "$WALK_XATTRS")))
	fi
	if theirs_needed "$ours" "$TOTAL"; then
		rm -f "$T/xattrs.now"
		theirs=$(xfs_repair_kept "$T/x.img")
		[ -n "$WALK_XATTRS" ] && [ "$theirs" -gt 0 ] &&
			theirs=$((theirs + $(xattrs_same "$WALK_XATTRS")))
	else
		theirs=-
	fi
	row "$name" "-n $det" "-n $xdet" "exit $rc" "xr $xr" "x72 $x72" \
	    "$kern" "$ours" "$theirs"
	if [ $xdet -ne 0 ] && [ $det -eq 0 ]; then
		fail "$name: xfs_repair -n finds $(grep -m1 -iE 'would|bad|invalid|corrupt' "$T/xr-n.out"); our -n calls it clean"
	fi
	[ $rc -eq 0 ] || fail "$name: xfskit-repair exit $rc: $(tail -3 "$T/ours.out")"
	[ $xr -eq 0 ] || fail "$name: xfs_repair -n after ours: $(grep -v 'host filesystem\|sector size\|^Phase\|^  *- ' "$T/xrn.out" | head -4)"
	[ "$x72" = 1 ] && fail "$name: xfs_repair 7.2 -n after ours: $(grep -v 'host filesystem\|sector size\|^Phase\|^  *- ' "$T/x72n.out" | head -4)"
	[ "$kern" = ok ] || fail "$name: kernel walk: $kern"
	[ "$theirs" = - ] || [ "$ours" -ge "$theirs" ] ||
		fail "$name: ours keeps $ours entries, xfs_repair $theirs: $(LC_ALL=C comm -13 "$T/tree.ours" "$T/tree.theirs" | head -3 | tr '\t\n' ' ')"
}

# header TITLE: sets TOTAL, the entries and xattrs recorded.
header() {
	TOTAL=$(( $(wc -l <"$T/tree.base") + $(cat "$T/xattrs.base" 2>/dev/null | wc -l) ))
	echo "$1: $(wc -l <"$T/tree.base") entries and" \
	     "$(cat "$T/xattrs.base" 2>/dev/null | wc -l) xattrs recorded"
	row case ours xfs_rep ours "after:" "after:" kernel kept:us kept:xr
}

img="$T/small.img"
base_small || { fail "xfskit-mkfs -p"; finish; }
f1=$(ino_of "$img" /d1/f1)
[ -n "$f1" ] || { fail "no inode for /d1/f1"; finish; }
header "xfskit-mkfs -p image"
for c in \
	"naextents-ones|inode $f1;fuzz -d core.naextents ones" \
	"nextents-ones|inode $f1;fuzz -d core.nextents ones" \
	"naextents-add|inode $f1;fuzz -d core.naextents add" \
	"nblocks-ones|inode $f1;fuzz -d core.nblocks ones" \
	"extent-max-offset|inode $f1;write -d u3.bmx[0].startoff 17944029765304320" \
	"next-unlinked|inode $f1;write -d next_unlinked 65535" \
	"forkoff-ones|inode $f1;fuzz -d core.forkoff ones" \
	"size-ones|inode $f1;fuzz -d core.size ones" \
	"projid-ones|inode $f1;fuzz -d core.projid_lo ones" \
	"aformat-zero-nofork|inode $f1;write -d core.aformat 0"; do
	run_case "$c"
done

img="$T/kernel.img"
base_kernel || { fail "populating the mkfs.xfs image"; finish; }
header "mkfs.xfs image populated by the kernel"
declare -A INO
for p in sf leaf node attrs/leaf attrs/node small reflinked; do
	INO[$p]=$(ino_of "$img" "/$p")
done
root=$(db_get "$img" "sb 0" rootino)
for c in \
	"dir-extent-unwritten|inode ${INO[leaf]};write -d u3.bmx[0].extentflag 1" \
	"sfdir-ftype-zero|inode ${INO[sf]};write -d u3.sfdir3.list[0].filetype 0" \
	"sb-lsn-top-bit|sb 0;write -d lsn 0x8000000000000010" \
	"sb-bad-features2|sb 0;write -d bad_features2 0" \
	"sb-inprogress|sb 0;write -d inprogress 255" \
	"node-free-bests|inode ${INO[node]};dblock 16777216;write -d fbests[1] 7" \
	"attr-leaf-usedbytes|inode ${INO[attrs/leaf]};ablock 0;write -d hdr.usedbytes 1" \
	"attr-node-usedbytes|inode ${INO[attrs/node]};ablock 2;write -d hdr.usedbytes 100" \
	"attr-node-forw|inode ${INO[attrs/node]};ablock 1;write -d hdr.info.hdr.forw 99999" \
	"attr-node-hash-zero|inode ${INO[attrs/node]};ablock 0;write -d btree[1].hashval 0" \
	"attr-node-hash-ones|inode ${INO[attrs/node]};ablock 0;write -d btree[1].hashval 0xffffffff" \
	"sb-versionnum-bit|sb 0;fuzz -d versionnum firstbit" \
	"sb-versionnum-low|sb 0;write -d versionnum 0xb4a4" \
	"sb-rocompat-ones|sb 0;fuzz -d features_ro_compat ones" \
	"sb-incompat-bit|sb 0;fuzz -d features_incompat lastbit" \
	"sb-rootino-random|sb 0;fuzz -d rootino random" \
	"sb-rootino-zero|sb 0;write -d rootino 0" \
	"root-mode-zero|inode $root;write -d core.mode 0" \
	"root-core-zeroed|inode $root;write -d core.magic 0;write -d core.mode 0;write -d core.format 0" \
	"root-mode-random|inode $root;fuzz -d core.mode random" \
	"rbm-core-zeroed|inode $((root + 1));write -d core.magic 0;write -d core.mode 0;write -d core.version 0" \
	"rsum-mode-zero|inode $((root + 2));write -d core.mode 0" \
	"flags-bit15|inode ${INO[small]};write -d core.flags 0x8000" \
	"flags2-metadata|inode ${INO[small]};write -d v3.flags2 0x28" \
	"flags2-bit10|inode ${INO[small]};write -d v3.flags2 0x408" \
	"format-unknown|inode ${INO[small]};write -d core.format 5" \
	"aformat-unknown|inode ${INO[attrs/leaf]};write -d core.aformat 5" \
	"reflink-flag-cleared|inode ${INO[reflinked]};write -d v3.reflink 0"; do
	run_case "$c"
done
# Inode flag bits and fork formats no feature of this filesystem defines
# (every format change that adds them comes with a superblock feature
# bit, which is refused as unsupported): damage, as xfs_repair 6.1 and
# 7.2 call them; our -n names the bits or the format, never "clean".
for c in "flags 0x8000 not allowed|write -d core.flags 0x8000" \
	 "flags2: metadata flag without the metadir feature|write -d v3.flags2 0x28" \
	 "flags2: unknown bits 0x400|write -d v3.flags2 0x408" \
	 "data fork format 5 is not valid|write -d core.format 5"; do
	cp --sparse=always "$img" "$T/c.img"
	xfs_db -x -c "inode ${INO[small]}" -c "${c#*|}" "$T/c.img" >/dev/null 2>&1
	if "$REPAIR" -n "$T/c.img" >"$T/ours-n.out" 2>&1 ||
	   ! grep -q "(inode ${INO[small]}): .*${c%%|*}" "$T/ours-n.out"; then
		fail "${c#*|}: our -n does not name it ('${c%%|*}'): $(head -2 "$T/ours-n.out")"
	else
		pass "${c#*|}: our -n names it: ${c%%|*}"
	fi
done
finish
