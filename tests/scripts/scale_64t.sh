#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Scale: a sparse 64 TiB filesystem with 128 AGs (the host's ext4 cannot
# hold a 64 TiB file, so it lives on a loop-mounted XFS scratch
# filesystem).  xfskit-mkfs formats it, the kernel puts files in every
# AG (directories rotate over the AGs), and then xfs_repair -n and
# xfskit-repair -n must both find it clean.  (Time and peak memory
# beside xfs_repair's, against the model of doc/memory.md, are measured
# by bench/memcap -s, not asserted here.)
. "$XK_SRCDIR/tests/scripts/lib.sh"
need_xfsprogs
[ "$(id -u)" -eq 0 ] || skip "needs root for the scratch loop mount"

truncate -s 2G "$T/scratch.img"
mkfs.xfs -q -f "$T/scratch.img" || { fail "mkfs.xfs scratch"; finish; }
SCR="$T/scratch"
mkdir -p "$SCR"
if ! mount -o loop "$T/scratch.img" "$SCR" 2>"$T/m.err"; then
	skip "loop mount not permitted here: $(cat "$T/m.err")"
fi
# lib.sh's cleanup removes $T; unmount the big image then the scratch.
trap 'umount "$T/mnt" 2>/dev/null; umount "$SCR" 2>/dev/null; rm -rf "$T"' EXIT

big="$SCR/64t.img"
truncate -s 64T "$big" || { fail "cannot make a 64 TiB sparse file"; finish; }
if ! "$MKFS" -q -f -d agcount=128 "$big" >"$T/mkfs.out" 2>&1; then
	fail "xfskit-mkfs 64 TiB: $(cat "$T/mkfs.out")"
	finish
fi
[ "$(db_get "$big" "sb 0" agcount)" = 128 ] || fail "agcount is not 128"
if loop_mount "$big"; then
	for d in $(seq 1 128); do
		mkdir "$MNT/d$d" && for f in 1 2 3 4 5 6 7 8; do
			echo "$d/$f" >"$MNT/d$d/f$f"
		done
	done
	dd if=/dev/zero of="$MNT/d1/big" bs=1M count=64 status=none
	ags=$(for d in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16; do
		xfs_io -c "bmap" "$MNT/d$d/f1" | awk 'NR==2 {print $3}'; done |
		sort -u | wc -l)
	loop_umount
	[ "$ags" -gt 1 ] && pass "files spread over several AGs" ||
		fail "every file landed in one AG"
fi
xfs_repair -n "$big" >"$T/xr.out" 2>&1 &&
	pass "xfs_repair -n finds the 64 TiB filesystem clean" ||
	fail "xfs_repair -n on 64 TiB: $(grep -v '^ *-\|^Phase' "$T/xr.out" | head -5)"
"$REPAIR" -n --no-progress "$big" >"$T/us.out" 2>&1 &&
	pass "xfskit-repair -n finds the 64 TiB filesystem clean" ||
	fail "xfskit-repair -n on 64 TiB: $(head -5 "$T/us.out")"
finish
