#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The builder's edits (what finishing a BUI, CUI or EFI does) against the
# kernel doing the same operation: on a reflinked pair of files, unmap
# the copy's blocks (the kernel: punch), map part of it back onto the
# original's blocks with a refcount increase (the kernel: reflink), then
# unmap the original (its blocks are freed).  After each step
# xfs_repair -n must find our image clean and the free block and inode
# counters must equal the kernel's.  With and without the rmapbt
# (refcounts derived from reverse mappings, or the records edited).
. "$XK_SRCDIR/tests/scripts/lib.sh"
need_xfsprogs
EDIT="$XK_BUILDDIR/tests/tools/xk_bld_edit"

inum() { # IMG NAME: inode number of /NAME
	local root
	root=$(db_get "$1" "sb 0" rootino)
	xfs_db -r -c "inode $root" -c ls "$1" | awk -v n="$2" '$(NF-1)==n {print $2}'
}

# unmap_all IMG INO: our unmap of every data extent of INO.
unmap_all() {
	xfs_db -r -c "inode $2" -c bmap "$1" |
	sed -n 's/^data offset \([0-9]*\) startblock \([0-9]*\) .* count \([0-9]*\) flag.*/\1 \2 \3/p' |
	while read -r off fsb len; do
		"$EDIT" "$1" unmap "$2" "$off" "$fsb" "$len" || echo "unmap failed"
	done
}

counters() { xfs_db -r -c "sb 0" -c "print fdblocks icount ifree" "$1" | tr '\n' ' '; }

compare() { # STEP
	if ! xfs_repair -n "$T/o.img" >"$T/xr.out" 2>&1; then
		fail "$feat $1: xfs_repair -n: $(grep -iv '^ *-\|^phase\|host\|sector size' "$T/xr.out" | head -8)"
		return 1
	fi
	"$REPAIR" -n "$T/o.img" >"$T/kr.out" 2>&1 ||
		fail "$feat $1: xfskit-repair -n: $(head -5 "$T/kr.out")"
	if [ "$(counters "$T/o.img")" = "$(counters "$T/k.img")" ]; then
		pass "$feat $1: clean, counters equal the kernel's ($(counters "$T/o.img"))"
	else
		fail "$feat $1: counters: ours $(counters "$T/o.img"), kernel $(counters "$T/k.img")"
	fi
}

for feat in rmapbt=0,reflink=1 rmapbt=1,reflink=1; do
	mkfs_xfs_image "$T/k.img" 320M -m "$feat" || { fail "mkfs.xfs"; continue; }
	loop_mount "$T/k.img" || break
	# Three extents: written with holes between, then the holes filled.
	xfs_io -f -c "pwrite -q 0 512k" -c "pwrite -q 1m 512k" -c fsync \
		-c "pwrite -q 512k 512k" -c "pwrite -q 1536k 512k" "$MNT/f"
	cp --reflink=always "$MNT/f" "$MNT/r"
	loop_umount
	cp --sparse=always "$T/k.img" "$T/o.img"
	fi_=$(inum "$T/o.img" f) ri=$(inum "$T/o.img" r)
	[ -n "$fi_" ] && [ -n "$ri" ] || { fail "$feat: inode numbers of f and r"; continue; }

	# 1. The copy's blocks unmapped: shared blocks go back to count 1.
	[ -n "$(unmap_all "$T/o.img" "$ri")" ] && fail "$feat: unmap of the copy"
	[ "$(db_get "$T/o.img" "inode $ri" core.nblocks)" = 0 ] ||
		fail "$feat: the copy still has $(db_get "$T/o.img" "inode $ri" core.nblocks) blocks"
	loop_mount "$T/k.img" && xfs_io -c "fpunch 0 2m" "$MNT/r" && loop_umount
	compare "unmap of a reflinked copy" || continue

	# 2. Part of the copy mapped back onto the original (BUI + CUI).
	fsb=$(xfs_db -r -c "inode $fi_" -c bmap "$T/o.img" |
	      sed -n 's/^data offset 0 startblock \([0-9]*\) .*/\1/p')
	"$EDIT" "$T/o.img" map "$ri" 0 "$fsb" 64 &&
		"$EDIT" "$T/o.img" refc inc "$fsb" 64 || fail "$feat: map"
	bs=$(db_get "$T/o.img" "sb 0" blocksize)
	loop_mount "$T/k.img" &&
		xfs_io -c "reflink $MNT/f 0 0 $((64 * bs))" "$MNT/r" >/dev/null &&
		loop_umount
	compare "remap onto the original" || continue

	# 3. The original unmapped: all but the 64 shared blocks are freed.
	[ -n "$(unmap_all "$T/o.img" "$fi_")" ] && fail "$feat: unmap of the original"
	loop_mount "$T/k.img" && xfs_io -c "fpunch 0 2m" "$MNT/f" && loop_umount
	compare "unmap of the original" || continue

	# The result is valid for the kernel too, with the same content.
	loop_mount "$T/k.img" && sha256sum <"$MNT/r" >"$T/k.sum" && loop_umount
	if loop_mount "$T/o.img"; then
		[ "$(stat -c %b "$MNT/f")" = 0 ] || fail "$feat: f still has blocks"
		[ "$(sha256sum <"$MNT/r")" = "$(cat "$T/k.sum")" ] &&
			pass "$feat: the copy reads the same as the kernel's" ||
			fail "$feat: the copy's content differs from the kernel's"
		loop_umount
	fi
done
finish
