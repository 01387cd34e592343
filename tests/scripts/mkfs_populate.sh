#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# xfskit-mkfs -p DIR over a tree with every case: directories of 0, 5,
# 500 and 50,000 entries (XK_POPULATE_QUICK=1 leaves the last out), sparse and
# many-extent files, hard links (one with a link outside the tree),
# xattrs in every format, trusted/security names, POSIX ACLs, long
# symlinks, devices, FIFOs, sockets, odd modes and owners, nanosecond
# times before 1970 and after 2038.  Oracles: xfs_repair -n exits 0; the
# kernel's view of the image gives the source's tree record (atime
# excluded: reading moves it); the kernel then takes a workload and
# xfs_repair -n stays clean.  Last, with SOURCE_DATE_EPOCH and a fixed
# UUID two runs give byte-identical images.
. "$XK_SRCDIR/tests/scripts/lib.sh"
. "$XK_SRCDIR/tests/scripts/mkfs_populate_lib.sh"
need_xfsprogs

big=--big
[ "${XK_POPULATE_QUICK:-0}" = 1 ] && big=""
pop_make_tree $big
SRC="$TM/src"

$TREC record "$SRC" --ctime >"$T/src.rec" || fail "recording the source"
# links/outside has a second link outside the tree: the image has one.
sed -i '/^links\/outside /s/ nlink=2 / nlink=1 /' "$T/src.rec"

truncate -s 1g "$T/img"
if ! "$MKFS" -f -q -p "$SRC" "$T/img" >"$T/mkfs.out" 2>&1; then
	fail "xfskit-mkfs -p failed: $(cat "$T/mkfs.out")"
	finish
fi
pop_repair_clean "$T/img" "populated"

if loop_mount "$T/img"; then
	$TREC record "$MNT" --ctime >"$T/img.rec"
	pop_same_record "$T/src.rec" "$T/img.rec" "source vs kernel mount"
	# Holes stay holes; 40 extents need a bmbt.
	b=$(stat -c %b "$MNT/sparse/holes")
	[ "$b" -le 64 ] && pass "sparse/holes keeps its holes ($b sectors for 3 MiB)" ||
		fail "sparse/holes takes $b sectors: holes were filled"
	ext_ino=$(stat -c %i "$MNT/sparse/extents")
	d500_ino=$(stat -c %i "$MNT/d500")
	# A kernel workload on the built image.
	(
		set -e
		cd "$MNT"
		mkdir new
		for i in $(seq 1 300); do echo "$i" >"new/f$i"; done
		rm -f d500/entry_with_a_longer_name_00[0-4]*
		mv d5/f1 d500/moved
		mv new/f7 d5/renamed
		setfattr -n user.added -v yes attrs/many
		setfattr -x user.attribute_number_5 attrs/many
		setfattr -n user.more -v "$(head -c 3000 /dev/zero | tr '\0' m)" attrs/one
		echo appended >>sparse/extents
		ln links/h1 new/h4
		rm links/h2
		ln -s "$(head -c 900 /dev/zero | tr '\0' s)" new/longlink
		rm -rf empty special/fifo
		dd if=/dev/urandom of=sparse/holes bs=4k seek=100 count=3 \
			conv=notrunc status=none
	) || fail "the kernel workload failed"
	loop_umount || fail "unmount failed"
	pop_repair_clean "$T/img" "after the kernel workload"
	f=$(db_get "$T/img" "inode $ext_ino" core.format)
	case $f in
	3*) pass "sparse/extents is a bmbt ($f)" ;;
	*) fail "sparse/extents has format $f, not a bmbt" ;;
	esac
	f=$(db_get "$T/img" "inode $d500_ino" core.format)
	case $f in
	2*|3*) pass "d500 is a block-based directory ($f)" ;;
	*) fail "d500 has format $f" ;;
	esac
fi

# Reproducible: same tree, same UUID, SOURCE_DATE_EPOCH: same bytes.
for i in 1 2; do
	rm -f "$T/r$i"
	truncate -s 1g "$T/r$i"
	SOURCE_DATE_EPOCH=1700000000 "$MKFS" -f -q \
		-m uuid=0b4c9a9e-93b8-4c58-9f2d-3e5d1c1a7f00 -p "$SRC" \
		"$T/r$i" >"$T/mkfs$i.out" 2>&1 ||
		fail "reproducible run $i failed: $(cat "$T/mkfs$i.out")"
done
if same_image "$T/r1" "$T/r2"; then
	pass "two SOURCE_DATE_EPOCH runs are byte-identical"
else
	fail "two SOURCE_DATE_EPOCH runs differ: $(cmp "$T/r1" "$T/r2" | head -1)"
fi
pop_repair_clean "$T/r1" "reproducible image"
# ... and the epoch is what decides: another one gives other bytes.
rm -f "$T/r2"
truncate -s 1g "$T/r2"
SOURCE_DATE_EPOCH=1700000001 "$MKFS" -f -q \
	-m uuid=0b4c9a9e-93b8-4c58-9f2d-3e5d1c1a7f00 -p "$SRC" "$T/r2" \
	>/dev/null 2>&1 || fail "the run with another epoch failed"
if same_image "$T/r1" "$T/r2"; then
	fail "SOURCE_DATE_EPOCH is ignored: another epoch gave the same image"
else
	pass "another SOURCE_DATE_EPOCH gives another image"
fi
finish
