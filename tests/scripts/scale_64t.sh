#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Scale: a sparse 64 TiB filesystem with 128 AGs (the host's ext4 cannot
# hold a 64 TiB file, so it lives on a loop-mounted XFS scratch
# filesystem).  xfskit-mkfs formats it, the kernel puts files in every
# AG (directories rotate over the AGs), and then xfs_repair -n and
# xfskit-repair -n must both find it clean; our check's time and peak
# memory are printed beside xfs_repair's, and our memory must stay
# within the documented model (doc/memory.md): a few MiB beyond the
# buffer cache, whatever the size of the filesystem.
. "$XK_SRCDIR/tests/scripts/lib.sh"
need_xfsprogs
[ "$(id -u)" -eq 0 ] || skip "needs root for the scratch loop mount"
[ -x /usr/bin/time ] || skip "needs /usr/bin/time (scripts/deps)"

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
/usr/bin/time -f "%e %M" -o "$T/t.xr" xfs_repair -n "$big" >"$T/xr.out" 2>&1 ||
	fail "xfs_repair -n on 64 TiB: $(grep -v '^ *-\|^Phase' "$T/xr.out" | head -5)"
/usr/bin/time -f "%e %M" -o "$T/t.us" "$REPAIR" -n -P "$big" >"$T/us.out" 2>&1 ||
	fail "xfskit-repair -n on 64 TiB: $(head -5 "$T/us.out")"
read -r xw xm <"$T/t.xr"
read -r uw um <"$T/t.us"
echo "64 TiB, 128 AGs: xfs_repair -n ${xw}s ${xm} KiB, xfskit-repair -n ${uw}s ${um} KiB"
# Model: per-AG state is a few KiB here; the cache is 32 MiB per thread.
threads=$(nproc)
limit=$(( (threads * 32 + 64) * 1024 ))
[ "$um" -le "$limit" ] && pass "peak memory ${um} KiB within the model (${limit} KiB)" ||
	fail "peak memory ${um} KiB above the model's ${limit} KiB"
finish
