#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Realtime metadata inodes with no usable blocks, and a realtime extent
# two files claim, on a filesystem with realtime files (rt_lib.sh) made
# by mkfs.xfs 6.1 (and 7.2 for some), held to xfs_repair 7.2 -r:
#  - the bitmap or summary inode cleared (mode, extents, size, blocks
#    zeroed: what a free inode looks like), both cleared, the summary
#    inode's 512 bytes zeroed (xfs/033's damage), or the bitmap inode's
#    only extent pointed past the data device;
#  - inode 132's realtime extent moved onto inode 131's.
#  1. xfs_repair -n -r finds it, and so does xfskit-repair -n -r (exit 1);
#  2. xfskit-repair -r repairs it (exit 0); then xfs_repair -n -r 7.2
#     (and 6.1 on 6.1's images) and xfskit-repair -n -r find nothing; the
#     bitmap and summary inodes are regular files in use of the right
#     size (never left free while the superblock names them);
#  3. we keep at least the files xfs_repair 7.2 -r keeps from the same
#     image: both realtime files, or for the shared extent inode 131 with
#     its data (132, met second, is cleared by both).
. "$XK_SRCDIR/tests/scripts/lib.sh"
. "$XK_SRCDIR/tests/scripts/rt_lib.sh"
need_xfsprogs
need_xfs72
base=$T/base.img
rt=$T/rt.img
rt2=$T/rt2.img
d=$T/d.img
x=$T/x.img

clear_ino() {
	$PRE xfs_db -x -c "inode $1" -c "write core.mode 0" \
		-c "write core.nextents 0" -c "write core.size 0" \
		-c "write core.nblocks 0" "$d"
}

# damage NAME: apply the damage NAME to $d.
damage() {
	case $1 in
	bitmap-cleared) clear_ino 129 ;;
	summary-cleared) clear_ino 130 ;;
	both-cleared) clear_ino 129 && clear_ino 130 ;;
	summary-zeroed)
		off=$(xfs_db -r -c "convert ino 130 byte" "$d" | sed -n 's/.*(\([0-9]*\)).*/\1/p')
		[ -n "$off" ] || return 1
		dd if=/dev/zero of="$d" bs=1 seek="$off" count=512 conv=notrunc status=none ;;
	bitmap-fork-lost)
		$PRE xfs_db -x -c "inode 129" \
			-c "write u3.bmx[0].startblock 9999999" "$d" ;;
	shared-extent)
		$PRE xfs_db -x -c "inode 132" -c "write u3.bmx[0].startblock 100" "$d" ;;
	esac >/dev/null 2>&1
}

# The root's entries, sorted (what a repair kept).
entries() {
	xfs_db -r -c "inode 128" -c "print u3.sfdir3.list" "$1" 2>/dev/null |
		sed -n 's/.*\.name = "\(.*\)"/\1/p' | sort | tr '\n' ' '
}

for v in 6.1 7.2; do
	PRE=$(rt_oracle "$v")
	if ! rt_image "$v" "$base" "$rt"; then
		fail "mkfs.xfs $v with realtime files: $(cat "$T/rt_why")"
		continue
	fi
	list="bitmap-cleared summary-cleared both-cleared summary-zeroed bitmap-fork-lost shared-extent"
	[ "$v" = 7.2 ] && list="bitmap-cleared shared-extent"
	for c in $list; do
		name="$v $c"
		cp --sparse=always "$base" "$d"
		cp --sparse=always "$rt" "$rt2"
		if ! damage "$c"; then
			fail "$name: could not damage the image"
			continue
		fi
		xfs72 xfs_repair -n -r "$rt" "$d" >"$T/o.out" 2>&1
		orc=$?
		"$REPAIR" -n -r "$rt" "$d" >"$T/n.out" 2>&1
		rc=$?
		if [ $orc -eq 0 ]; then
			fail "$name: xfs_repair 7.2 -n -r finds nothing: the damage did not take"
		elif [ $rc -eq 1 ]; then
			pass "$name: detected: $(grep -m1 -i "realtime\|rt " "$T/n.out" | cut -c1-140)"
		else
			fail "$name: xfskit-repair -n -r exit $rc, wanted 1: $(head -6 "$T/n.out")"
		fi
		# What xfs_repair 7.2 keeps, on a copy.
		cp --sparse=always "$d" "$x"
		xfs72 xfs_repair -r "$rt2" "$x" >"$T/x.out" 2>&1 ||
			fail "$name: xfs_repair 7.2 -r exit $?: $(tail -3 "$T/x.out")"
		"$REPAIR" -r "$rt" "$d" >"$T/r.out" 2>&1
		rc=$?
		[ $rc -eq 0 ] || fail "$name: xfskit-repair -r exit $rc: $(tail -5 "$T/r.out")"
		if xfs72 xfs_repair -n -r "$rt" "$d" >"$T/c.out" 2>&1; then
			pass "$name: xfs_repair 7.2 -n -r clean after our repair"
		else
			fail "$name: xfs_repair 7.2 -n -r after our repair: $(grep -v '^ *-\|^Phase\|geometry\|sector size' "$T/c.out" | head -8)"
		fi
		if [ "$v" = 6.1 ] && ! rt_clean "$d" "$rt" "$T/c.out"; then
			fail "$name: xfs_repair 6.1 -n -r after our repair: $(head -8 "$T/c.out")"
		fi
		"$REPAIR" -n -r "$rt" "$d" >"$T/n2.out" 2>&1 ||
			fail "$name: xfskit-repair -n -r after the repair: $(head -4 "$T/n2.out")"
		for ino in 129 130; do
			mode=$(db_get "$d" "inode $ino" core.mode)
			size=$(db_get "$d" "inode $ino" core.size)
			want=$(db_get "$base" "inode $ino" core.size)
			[ "$mode" = 0100000 ] && [ "$size" = "$want" ] ||
				fail "$name: inode $ino has mode $mode size $size after the repair, wanted 0100000 and $want"
		done
		ours=$(entries "$d") theirs=$(entries "$x")
		for e in $theirs; do
			case " $ours " in
			*" $e "*) ;;
			*) fail "$name: xfs_repair 7.2 keeps /$e, we do not (ours: $ours)" ;;
			esac
		done
		[ "$(db_get "$d" "inode 131" core.realtime)" = 1 ] ||
			fail "$name: realtime file 131 lost"
		if [ "$c" = shared-extent ]; then
			# 131's data is what it was.
			[ "$(db_get "$d" "inode 131" "u3.bmx[0]")" = "$(db_get "$base" "inode 131" "u3.bmx[0]")" ] ||
				fail "$name: inode 131's extent changed"
			pass "$name: kept /$ours, xfs_repair 7.2 /$theirs"
		else
			[ "$(db_get "$d" "inode 132" core.realtime)" = 1 ] ||
				fail "$name: realtime file 132 lost"
			pass "$name: bitmap and summary inodes in use, files kept: $ours"
		fi
	done
done
finish
