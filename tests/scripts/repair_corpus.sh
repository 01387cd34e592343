#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# xfskit-repair against xfs_repair on a corruption corpus.
#
# A filesystem populated by the kernel with every on-disk format has its
# tree recorded (path, type, content hash or symlink target).  Then:
#  - repairing the clean image changes nothing (byte comparison);
#  - for every case (xfs_db -x corruptions: fuzzed fields, trashed blocks
#    with fixed seeds, over every metadata type) one copy is repaired by
#    xfskit-repair and another by xfs_repair.  Ours must leave an image
#    that xfs_repair -n finds clean, that a second run of ours finds
#    clean (idempotent), and that the kernel mounts and walks without a
#    new XFS error in the kernel log (only after xfs_repair -n said it
#    is clean: corrupt images are never mounted).  The entries preserved
#    (same path, type and content as recorded) are counted for both
#    tools; the side-by-side table is printed and a case where ours
#    preserves fewer fails (xfs_repair's count is "-" where ours kept
#    every entry: it cannot keep more; XK_TEST_LONG=1 measures it too);
#  - the undo file restores the image byte for byte (every third case:
#    the undo tests proper are repair_undo_safety.sh and repair_faults.sh);
#  - the rmap cases (a data fork zeroed, a bmbt block destroyed, a
#    directory's block map zeroed): ours restores every entry from the
#    reverse mappings, xfs_repair does not;
#  - a few cases again on the default mkfs.xfs geometry (no rmapbt).
# Cases that xfskit-repair does not repair yet are listed as "not yet
# repaired" (run them with XK_REPAIR_PENDING=1); they are not asserted.
. "$XK_SRCDIR/tests/scripts/lib.sh"
. "$XK_SRCDIR/tests/scripts/populate.sh"
. "$XK_SRCDIR/tests/scripts/repair_lib.sh"
need_xfsprogs
UNDO="$XK_BUILDDIR/repair/xfskit-undo"
[ "$(id -u)" -eq 0 ] || skip "populating and walking images needs root (loop mount)"

# xattrs_under DIR: every xattr (name and value) of the files in DIR.
xattrs_under() {
	(cd "$1" && getfattr -h -d -m - -- * 2>/dev/null)
}

# xattrs_kept IMG: "same" when IMG's attrs/ has the recorded xattrs.
xattrs_kept() {
	cp --sparse=always "$1" "$T/attr.img"
	loop_mount "$T/attr.img" || { echo "mount failed"; return; }
	if xattrs_under "$MNT/attrs" | cmp -s - "$T/attrs.base"; then
		echo same
	else
		echo differ
	fi
	loop_umount
	rm -f "$T/attr.img"
}

# make_base OPTS: a populated image at $img, its tree in $T/tree.base,
# the inode numbers of a few entries in INO, and the first bmbt leaf of
# the bmbt-format file in leaf_daddr.
declare -A INO
make_base() {
	rm -f "$img"
	truncate -s 300m "$img"
	mkfs.xfs -q -f "$@" "$img" || return 1
	loop_mount "$img" || return 1
	populate_all_formats "$MNT" || fail "populate"
	entries "$MNT" >"$T/tree.base"
	xattrs_under "$MNT/attrs" >"$T/attrs.base"
	for p in . sf sf/a block leaf node small extents bmbt sparse \
		 links/short links/long attrs/leaf attrs/node attrs/remote \
		 attrs/btree; do
		INO[$p]=$(stat -c %i "$MNT/$p")
	done
	loop_umount
	dig_holes "$img"
	total=$(wc -l <"$T/tree.base")
	bsize=$(db_get "$img" "sb 0" blocksize)
	leaf=$(xfs_db -r -c "inode ${INO[bmbt]}" -c "print u3.bmbt.ptrs[1]" \
		"$img" | sed -n 's/^u3.bmbt.ptrs\[1\] = //p')
	leaf_daddr=$(($(xfs_db -r -c "convert fsb $leaf daddr" "$img" |
		awk '{print $1}')))
	[ "$leaf_daddr" -gt 0 ] || { fail "no bmbt leaf found ($leaf)"; return 1; }
	xfs_repair -n "$img" >/dev/null 2>&1 ||
		{ fail "base image not clean for xfs_repair"; return 1; }
}

img="$T/base.img"
make_base -m rmapbt=1 || finish

# (a) A clean image: nothing changes.
cp --sparse=always "$img" "$T/clean.img"
if "$REPAIR" "$T/clean.img" >"$T/clean.out" 2>&1 && same_image "$img" "$T/clean.img"; then
	pass "clean image: exit 0, not one byte changed"
else
	fail "clean image: $(head -5 "$T/clean.out")"
fi

# Cases: name|xfs_db commands separated by ';'.
CASES=(
	"sb0-magic|sb 0;write -d magicnum 0"
	"sb0-rootino|sb 0;write -d rootino 0"
	"sb2-agcount|sb 2;write -d agcount 9"
	"agf-freeblks|agf 0;write -d freeblks 5"
	"agi-root|agi 0;write -d root 1"
	"agfl-bno|agfl 0;write -d bno[0] 99999"
	"bnobt-trash|agf 0;addr bnoroot;blocktrash -s 11 -n 64 -x 1 -y 8 -z -o 56"
	"cntbt-magic|agf 0;addr cntroot;write -d magic 0"
	"inobt-magic|agi 0;addr root;write -d magic 0"
	"finobt-magic|agi 0;addr free_root;write -d magic 0"
	"rmapbt-trash|agf 0;addr rmaproot;blocktrash -s 12 -n 64 -x 1 -y 8 -z -o 56"
	"refcbt-magic|agf 0;addr refcntroot;write -d magic 0"
	"inode-magic|inode ${INO[small]};write -d core.magic 0"
	"inode-mode|inode ${INO[extents]};write -d core.mode 0170777"
	"inode-nlink|inode ${INO[small]};write -d core.nlinkv2 7"
	"inode-nblocks|inode ${INO[extents]};write -d core.nblocks 3"
	"sfdir-inumber|inode ${INO[sf]};write -d u3.sfdir3.list[0].inumber.i4 4000000"
	"extent-range|inode ${INO[extents]};write -d u3.bmx[0].startblock 9999999"
	"sfdir-free|inode ${INO[sf]};write -d core.mode 0"
	"block-dotdot|inode ${INO[block]};dblock 0;write -d bu[1].inumber ${INO[sf]}"
	"blockdir-inumber|inode ${INO[block]};dblock 0;write -d bu[5].inumber 4000000"
	"leafdir-namelen|inode ${INO[leaf]};dblock 0;write -d du[5].namelen 0"
	"nodedir-namelen|inode ${INO[node]};dblock 0;write -d du[3].namelen 0"
	"symlink-remote|inode ${INO[links/long]};dblock 0;write -d magic 0"
	"attr-leaf-magic|inode ${INO[attrs/leaf]};ablock 0;write -d hdr.info.hdr.magic 0"
)
# Maps lost with the rmapbt intact: ours must restore everything.
RMAP_CASES=(
	"rmap-fork-zeroed|inode ${INO[extents]};write -d core.nextents 0"
	"rmap-bmbt-leaf|@zero $leaf_daddr $((bsize / 512))"
	"rmap-dir-map|inode ${INO[leaf]};write -d core.nextents 0"
)
# Inode rules xfs_repair has beyond the kernel's verifier (found by the
# blocktrash seeds; here on fixed fields).
CASES+=(
	"inode-realtime|inode ${INO[bmbt]};write core.realtime 1"
	"inode-unlinked|inode ${INO[small]};write -d next_unlinked 4294967280"
	"inode-dirflag|inode ${INO[small]};write core.nosymlinks 1"
	"inode-flagbit|inode ${INO[small]};write -d core.flags 32768"
	"inode-nsec|inode ${INO[small]};write -d v3.bigtime 0;write -d core.mtime.nsec 2000000000"
)
# Random damage over all metadata (xfs_db blocktrash after blockget picks
# 16 metadata blocks of any type and randomizes up to 64 bits in each).
for seed in 300 314; do
	CASES+=("blocktrash-$seed|blockget;blocktrash -s $seed -n 16 -x 1 -y 64 -3")
done
# Attr fork maps lost with the rmapbt intact: ours restores every xattr.
ATTR_RMAP_CASES=(
	"rmap-attr-extent|inode ${INO[attrs/leaf]};write -d a.bmx[0].startblock 9999999"
	"rmap-attr-bmbt|inode ${INO[attrs/btree]};write -d a.bmbt.ptrs[1] 9999999"
)
# AG headers destroyed (in 512-byte units: AGF, AGI, AGFL are sectors
# 1-3 of an AG): with the inobt and the rmapbt both lost, the inode
# chunks are found through the directory entries that name them.
s=$(($(db_get "$img" "sb 0" sectsize) / 512))
ag1=$(($(db_get "$img" "sb 0" agblocks) * bsize / 512))
CASES+=(
	"ag0-headers-zeroed|@zero $s $((3 * s))"
	"ag1-headers-zeroed|@zero $((ag1 + s)) $((3 * s))"
	"agi0-zeroed|@zero $((2 * s)) $s"
	"agf0-zeroed|@zero $s $s"
)
# Not repaired yet: listed, run only with XK_REPAIR_PENDING=1.
PENDING=(
)

row() {
	printf '%-18s %-9s %-9s %-8s %-7s %8s %8s\n' "$@"
}

NCASE=0
run_case() {
	local name=${1%%|*} cmds=${1#*|} c args=() rc xr kern ours theirs m0 undo=()
	IFS=';' read -ra cl <<<"$cmds"
	for c in "${cl[@]}"; do args+=(-c "$c"); done
	cp --sparse=always "$img" "$T/c.img"
	if [ "${cmds%% *}" = "@zero" ]; then
		read -r _ c n <<<"$cmds"
		dd if=/dev/zero of="$T/c.img" bs=512 seek="$c" count="$n" \
			conv=notrunc status=none
	else
		xfs_db -x "${args[@]}" "$T/c.img" >"$T/db.out" 2>&1
	fi
	if same_image "$img" "$T/c.img"; then
		fail "$name: xfs_db changed nothing: $(head -3 "$T/db.out")"
		return
	fi
	cp --sparse=always "$T/c.img" "$T/x.img"
	NCASE=$((NCASE + 1))
	leak_check_sampled "$NCASE"
	if [ $((NCASE % 3)) = 1 ]; then
		cp --sparse=always "$T/c.img" "$T/orig.img"
		rm -f "$T/undo"
		undo=(-z "$T/undo")
	fi
	"$REPAIR" "${undo[@]}" "$T/c.img" >"$T/ours.out" 2>&1; rc=$?
	xfs_repair -n "$T/c.img" >"$T/xrn.out" 2>&1; xr=$?
	ours=0 kern=-
	if [ $xr -eq 0 ]; then
		kern=$(walk "$T/c.img" "$T/tree.ours")
		[ -z "$kern" ] && kern=ok
		ours=$(preserved "$T/tree.ours")
	fi
	# (the rmap cases compare with xfs_repair's count whatever ours is)
	if [ -n "${WANT_THEIRS:-}" ] || theirs_needed "$ours" "$total"; then
		theirs=$(xfs_repair_kept "$T/x.img")
	else
		theirs=-
	fi
	row "$name" "exit $rc" "xr-n $xr" "$kern" "" "$ours" "$theirs"
	KEPT_OURS=$ours KEPT_THEIRS=$theirs
	[ $rc -eq 0 ] || fail "$name: xfskit-repair exit $rc: $(tail -3 "$T/ours.out")"
	[ $xr -eq 0 ] || fail "$name: xfs_repair -n after ours: $(grep -v 'host filesystem\|sector size\|^Phase\|^  *- ' "$T/xrn.out" | head -5)"
	[ "$kern" = ok ] || fail "$name: kernel walk: $kern"
	[ "$theirs" = - ] || [ "$ours" -ge "$theirs" ] ||
		fail "$name: ours preserves $ours entries, xfs_repair $theirs"
	# The second run must find nothing and write nothing: any write
	# moves the image's modification time (ns), so reading the whole
	# image again is not needed.
	m0=$(stat -c %.9Y "$T/c.img")
	if ! "$REPAIR" "$T/c.img" >"$T/again.out" 2>&1 ||
	   [ "$(stat -c %.9Y "$T/c.img")" != "$m0" ] ||
	   repair_own "$T/again.out" | grep -q .; then
		fail "$name: second run not clean or it wrote: $(repair_own "$T/again.out" | head -3)"
	fi
	# RESULT: our repaired image, kept from the undo test below.
	RESULT=$T/c.img
	if [ ${#undo[@]} -gt 0 ]; then
		cp --sparse=always "$T/c.img" "$T/once.img"
		RESULT=$T/once.img
	fi
	if [ ${#undo[@]} -gt 0 ] &&
	   { ! "$UNDO" "$T/undo" "$T/c.img" >"$T/u.out" 2>&1 ||
	     ! same_image "$T/c.img" "$T/orig.img"; }; then
		fail "$name: the undo file does not restore the image: $(cat "$T/u.out")"
	fi
}

echo "entries recorded: $total"
row case ours xfs_repair kernel "" "kept:us" "kept:xr"
for c in "${CASES[@]}"; do
	run_case "$c"
done
for c in "${RMAP_CASES[@]}"; do
	WANT_THEIRS=1 run_case "$c"
	if [ "$KEPT_OURS" -eq "$total" ] && [ "$KEPT_THEIRS" -lt "$total" ]; then
		pass "${c%%|*}: ours restores all $total entries from the rmapbt, xfs_repair keeps $KEPT_THEIRS"
	else
		fail "${c%%|*}: ours keeps $KEPT_OURS of $total, xfs_repair $KEPT_THEIRS (ours must keep all, xfs_repair fewer)"
	fi
done
for c in "${ATTR_RMAP_CASES[@]}"; do
	WANT_THEIRS=1 run_case "$c"
	# RESULT: our result; x.img: xfs_repair's (both pass xfs_repair -n).
	ours="not clean" theirs="not clean"
	[ "$KEPT_OURS" -gt 0 ] && ours=$(xattrs_kept "$RESULT")
	[ "$KEPT_THEIRS" -gt 0 ] && theirs=$(xattrs_kept "$T/x.img")
	if [ "$ours" = same ]; then
		pass "${c%%|*}: ours restores every xattr from the rmapbt (xfs_repair: $theirs)"
	else
		fail "${c%%|*}: ours lost xattrs ($ours; xfs_repair: $theirs)"
	fi
done
# The default mkfs.xfs geometry (reflink without rmapbt): the rebuild
# must derive the refcountbt from the sharing it observed.
make_base || finish
echo "default mkfs.xfs options (rmapbt=0, reflink=1): $total entries"
for c in "agf-bnoroot|agf 1;write -d bnoroot 0" \
	 "refcbt-magic|agf 0;addr refcntroot;write -d magic 0" \
	 "ag0-headers-zeroed|@zero $s $((3 * s))" \
	 "blocktrash-511|blockget;blocktrash -s 511 -n 16 -x 1 -y 64 -3"; do
	run_case "$c"
done
for c in "${PENDING[@]}"; do
	if [ -n "${XK_REPAIR_PENDING:-}" ]; then
		run_case "$c"
	else
		echo "not yet repaired: ${c%%|*}"
	fi
done
finish
