#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Damage to a classic realtime volume's metadata, on a filesystem with
# realtime files (rt_lib.sh) from mkfs.xfs 6.1 and one from 7.2, held to
# xfs_repair -n -r:
#  - a zeroed bitmap word, a zeroed summary block, the bitmap inode's
#    size halved, the summary inode's size doubled, a realtime file's
#    extent moved past sb_rblocks, the bitmap inode's mode zeroed,
#    sb_frextents off by 5:
#  1. xfs_repair -n -r (the version that made the image) detects it, and
#     so does xfskit-repair -n -r (exit 1, the finding named);
#  2. xfskit-repair -r repairs it (exit 0), and then xfs_repair -n -r 6.1
#     and 7.2 and xfskit-repair -n -r find nothing; the bitmap inode is
#     in use and a regular file (never freed while the superblock names
#     it); the realtime files are still there;
#  3. without -r, xfskit-repair refuses to write (exit 5, nothing
#     written), naming the realtime volume.
. "$XK_SRCDIR/tests/scripts/lib.sh"
. "$XK_SRCDIR/tests/scripts/rt_lib.sh"
need_xfsprogs
have_xfs72 || true
base=$T/base.img
rt=$T/rt.img
d=$T/d.img

# damage NAME: apply the damage NAME to $d.
damage() {
	local off
	case $1 in
	bitmap-word)
		off=$(rt_block "$d" 129 0) || return 1
		dd if=/dev/zero of="$d" bs=1 seek=$((off + 400)) count=4 conv=notrunc status=none ;;
	summary-zeroed)
		off=$(rt_block "$d" 130 0) || return 1
		dd if=/dev/zero of="$d" bs=4096 seek=$((off / 4096)) count=1 conv=notrunc status=none ;;
	bitmap-size)
		$PRE xfs_db -x -c "inode 129" -c "write core.size 4096" "$d" ;;
	summary-size)
		$PRE xfs_db -x -c "inode 130" -c "write core.size 8192" "$d" ;;
	extent-past-rblocks)
		$PRE xfs_db -x -c "inode 132" -c "write u3.bmx[0].startblock 65530" "$d" ;;
	bitmap-mode-0)
		$PRE xfs_db -x -c "inode 129" -c "write core.mode 0" "$d" ;;
	frextents)
		$PRE xfs_db -x -c "sb 0" -c "write frextents $(($(db_get "$d" "sb 0" frextents) - 5))" "$d" ;;
	esac >/dev/null 2>&1
}

# finding NAME: what xfskit-repair -n -r must say about it.
finding() {
	case $1 in
	bitmap-word) echo "discrepancy in bitmap at dblock 0x0 words 0x64-0x64" ;;
	summary-zeroed) echo "discrepancy in summary at dblock 0x0" ;;
	bitmap-size) echo "realtime bitmap inode 129 has bad size 4096 (should be 8192)" ;;
	summary-size) echo "realtime summary inode 130 has bad size 8192 (should be 4096)" ;;
	extent-past-rblocks) echo "realtime extent at offset 0, block 65530, length 25 is not valid" ;;
	bitmap-mode-0) echo "realtime bitmap inode 129 is free" ;;
	frextents) echo "sb_frextents [0-9]*, counted [0-9]*" ;;
	esac
}

cases="bitmap-word summary-zeroed bitmap-size summary-size extent-past-rblocks bitmap-mode-0 frextents"
for v in 6.1 7.2; do
	if [ "$v" = 7.2 ] && ! have_xfs72; then
		continue
	fi
	PRE=$(rt_oracle "$v")
	if ! rt_image "$v" "$base" "$rt"; then
		fail "mkfs.xfs $v with realtime files: $(cat "$T/rt_why")"
		continue
	fi
	# 7.2's default features are beyond 6.1: only 7.2 judges its images.
	list=$cases
	[ "$v" = 7.2 ] && list="bitmap-word bitmap-mode-0"
	for c in $list; do
		name="$v $c"
		cp --sparse=always "$base" "$d"
		if ! damage "$c"; then
			fail "$name: could not damage the image"
			continue
		fi
		$PRE xfs_repair -n -r "$rt" "$d" >"$T/o.out" 2>&1
		orc=$?
		"$REPAIR" -n -r "$rt" "$d" >"$T/n.out" 2>&1
		rc=$?
		if [ $orc -eq 0 ]; then
			fail "$name: xfs_repair $v -n -r finds nothing: the damage did not take"
		elif [ $rc -eq 1 ] && grep -q "$(finding "$c")" "$T/n.out"; then
			pass "$name: detected as xfs_repair $v does: $(grep -m1 "$(finding "$c")" "$T/n.out" | cut -c1-140)"
		else
			fail "$name: xfskit-repair -n -r exit $rc, wanted 1 and '$(finding "$c")': $(head -6 "$T/n.out")"
		fi
		# 3. Without -r nothing is written.
		if [ "$c" = bitmap-word ]; then
			before=$(image_state "$d" "$rt")
			"$REPAIR" "$d" >"$T/x.out" 2>&1
			rc=$?
			if [ $rc -eq 5 ] && grep -q "refusing to change anything: the realtime volume" "$T/x.out" &&
			   [ "$(image_state "$d" "$rt")" = "$before" ]; then
				pass "$name: repair without -r refused (exit 5), nothing written"
			else
				fail "$name: repair without -r: exit $rc: $(head -4 "$T/x.out")"
			fi
		fi
		"$REPAIR" -r "$rt" "$d" >"$T/r.out" 2>&1
		rc=$?
		[ $rc -eq 0 ] || fail "$name: xfskit-repair -r exit $rc: $(tail -5 "$T/r.out")"
		if [ "$v" = 6.1 ]; then
			rt_clean "$d" "$rt" "$T/c.out"
		else
			xfs72 xfs_repair -n -r "$rt" "$d" >"$T/c.out" 2>&1
		fi && pass "$name: xfs_repair -n -r clean after our repair" ||
			fail "$name: after our repair: $(cat "$T/c.out")"
		"$REPAIR" -n -r "$rt" "$d" >"$T/n2.out" 2>&1 ||
			fail "$name: xfskit-repair -n -r after the repair: $(head -4 "$T/n2.out")"
		mode=$(db_get "$d" "inode 129" core.mode)
		[ "$mode" = 0100000 ] ||
			fail "$name: the bitmap inode's mode is $mode after the repair"
		for ino in 131 132; do
			[ "$(db_get "$d" "inode $ino" core.realtime)" = 1 ] ||
				fail "$name: realtime file $ino lost"
		done
	done
done
finish
