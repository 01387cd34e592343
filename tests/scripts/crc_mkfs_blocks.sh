#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Our CRC32c and the XFS checksum rule agree with real blocks written by
# mkfs.xfs: superblock, AGF, AGI, AGFL and each btree root, at two block
# and sector sizes.  The block locations come from xfs_db, not from us.
. "$XK_SRCDIR/tests/scripts/lib.sh"
need_xfsprogs
CK="$XK_BUILDDIR/tests/tools/xk_cksum"

check_block() {
	name=$1 off=$2 len=$3 crcoff=$4
	if out=$("$CK" "$img" "$off" "$len" "$crcoff"); then
		pass "$label $name: $out"
	else
		fail "$label $name at byte $off: $out"
	fi
}

for opts in "-b size=4096 -s size=512 -m rmapbt=1" "-b size=1024 -s size=1024"; do
	label="[$opts]"
	img="$T/img"
	# shellcheck disable=SC2086
	mkfs_xfs_image "$img" 512m $opts || { fail "mkfs.xfs $opts"; continue; }
	bs=$(db_get "$img" "sb 0" blocksize)
	ss=$(db_get "$img" "sb 0" sectsize)
	agblocks=$(db_get "$img" "sb 0" agblocks)
	check_block sb 0 "$ss" 224
	check_block agf "$ss" "$ss" 216
	check_block agi $((2 * ss)) "$ss" 312
	check_block agfl $((3 * ss)) "$ss" 32
	# Secondary superblock of AG 1.
	check_block sb1 $((agblocks * bs)) "$ss" 224
	for f in bnoroot cntroot refcntroot rmaproot; do
		b=$(db_get "$img" "agf 0" "$f")
		[ -n "$b" ] && [ "$b" != 0 ] || continue
		check_block "$f" $((b * bs)) "$bs" 52
	done
	for f in root free_root; do
		b=$(db_get "$img" "agi 0" "$f")
		[ -n "$b" ] && [ "$b" != 0 ] || continue
		check_block "agi $f" $((b * bs)) "$bs" 52
	done
	# And a corrupted copy must be caught.
	printf '\x01' | dd of="$img" bs=1 seek=$((ss + 100)) conv=notrunc 2>/dev/null
	if "$CK" "$img" "$ss" "$ss" 216 >/dev/null; then
		fail "$label flipped AGF byte not detected"
	else
		pass "$label flipped AGF byte detected"
	fi
done
finish
