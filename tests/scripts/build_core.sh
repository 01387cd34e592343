#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The builder core against the oracles: xk_bld_smoke writes files with
# streamed content, a sparse file whose extents need a bmbt, local and
# remote symlinks, device nodes, a FIFO and a hard link into images made
# by xfskit-mkfs and by mkfs.xfs (several geometries), then commits.
# xfs_repair -n and xfskit-repair -n must find every image clean, xfs_db
# must show the bmbt, and a kernel mount must show exactly that content;
# after a kernel workload the image must still be clean.
. "$XK_SRCDIR/tests/scripts/lib.sh"
need_xfsprogs
SMOKE="$XK_BUILDDIR/tests/tools/xk_bld_smoke"

head -c 300000 /dev/urandom >"$T/src"

check_image() {
	local img=$1 what=$2 bs
	if ! "$SMOKE" "$img" "$T/src" >"$T/smoke.out" 2>&1; then
		fail "$what: builder failed: $(cat "$T/smoke.out")"
		return
	fi
	if ! xfs_repair -n "$img" >"$T/xr.out" 2>&1; then
		fail "$what: xfs_repair -n: $(grep -v '^ *-\|^Phase\|^No modify\|^        - ' "$T/xr.out" | head -20)"
		return
	fi
	if ! "$REPAIR" -n "$img" >"$T/kr.out" 2>&1; then
		fail "$what: xfskit-repair -n: $(head -20 "$T/kr.out")"
		return
	fi
	pass "$what: xfs_repair -n and xfskit-repair -n clean"
	bs=$(db_get "$img" "sb 0" blocksize)
	# The sparse file's data fork is a btree.
	ino=$(xfs_db -r -c "sb 0" -c "print rootino" "$img" | sed 's/.*= //')
	fmt=$(xfs_db -r -c "inode $ino" -c "ls" "$img" 2>/dev/null |
		awk '$2=="sparse"{print $4}' )
	# Kernel view (the image is clean: safe to mount).
	loop_mount "$img" || return
	same_image "$MNT/data" "$T/src" || fail "$what: data differs from its source"
	[ "$(stat -c %h "$MNT/data")" = 2 ] || fail "$what: data has nlink $(stat -c %h "$MNT/data")"
	[ "$(stat -c %i "$MNT/data")" = "$(stat -c %i "$MNT/data.link")" ] ||
		fail "$what: hard link is not the same inode"
	[ "$(stat -c '%u %g %a' "$MNT/data")" = "1000 100 644" ] ||
		fail "$what: owner/mode $(stat -c '%u %g %a' "$MNT/data")"
	[ "$(stat -c %Y "$MNT/data")" = 1700000000 ] || fail "$what: mtime $(stat -c %Y "$MNT/data")"
	# The sparse file: piece i at block 3i is source block i.
	python3 - "$MNT/sparse" "$T/src" "$bs" <<'PY' || fail "$what: sparse content wrong"
import sys
f, s, bs = open(sys.argv[1], 'rb').read(), open(sys.argv[2], 'rb').read(), int(sys.argv[3])
for i in range(600):
    src = (i * bs) % len(s)
    piece = s[src:src + bs]
    got = f[i * 3 * bs:i * 3 * bs + len(piece)]
    if got != piece:
        sys.exit("piece %d differs" % i)
    if i < 599 and any(f[i * 3 * bs + len(piece):(i * 3 + 3) * bs]):
        sys.exit("hole after piece %d is not zero" % i)
PY
	n=$(xfs_io -r -c "fiemap" "$MNT/sparse" | grep -vc hole)
	[ "$n" -gt 500 ] || fail "$what: sparse has only $n extents"
	[ "$(readlink "$MNT/shortlink")" = "abcdefghijkl" ] || fail "$what: short symlink"
	[ "$(readlink "$MNT/longlink" | wc -c)" = 1001 ] || fail "$what: long symlink length"
	[ "$(stat -c '%F %t %T' "$MNT/null")" = "character special file 1 3" ] ||
		fail "$what: null is $(stat -c '%F %t %T' "$MNT/null")"
	[ "$(stat -c '%F %t %T' "$MNT/sda")" = "block special file 8 0" ] ||
		fail "$what: sda is $(stat -c '%F %t %T' "$MNT/sda")"
	[ "$(stat -c %F "$MNT/fifo")" = "fifo" ] || fail "$what: fifo is $(stat -c %F "$MNT/fifo")"
	# A workload on top.
	mkdir "$MNT/w" && for i in $(seq 1 300); do echo $i >"$MNT/w/f$i"; done
	cp "$MNT/data" "$MNT/w/copy" && rm -f "$MNT/w"/f1?? "$MNT/sparse"
	dd if=/dev/zero of="$MNT/w/big" bs=1M count=20 status=none
	loop_umount || fail "$what: umount"
	xfs_repair -n "$img" >"$T/xr2.out" 2>&1 || fail "$what: unclean after workload: $(head -20 "$T/xr2.out")"
	pass "$what: kernel sees the content; clean after a workload"
}

truncate -s 512M "$T/a.img"
"$MKFS" -q -f "$T/a.img" || fail "xfskit-mkfs"
check_image "$T/a.img" "xfskit-mkfs defaults"
mkfs_xfs_image "$T/b.img" 512M -m uuid=11111111-2222-3333-4444-555555555555
check_image "$T/b.img" "mkfs.xfs defaults"
mkfs_xfs_image "$T/c.img" 300M -b size=1024 -m rmapbt=0,reflink=0
check_image "$T/c.img" "mkfs.xfs 1k blocks, no rmapbt"
mkfs_xfs_image "$T/d.img" 600M -d agcount=8,su=64k,sw=4 -m finobt=0
check_image "$T/d.img" "mkfs.xfs 8 AGs, stripe, no finobt"
# The checker reads a remote symlink per mapping, as the kernel writes
# it: a 1000-byte target on 1 KiB blocks is one header over two blocks.
mkfs_xfs_image "$T/k.img" 300M -b size=1024
if loop_mount "$T/k.img"; then
	ln -s "$(printf 'b%.0s' $(seq 1 1000))" "$MNT/l"
	loop_umount
	if "$REPAIR" -n "$T/k.img" >"$T/k.out" 2>&1; then
		pass "kernel's two-block symlink checks clean"
	else
		fail "kernel's two-block symlink: $(head -5 "$T/k.out")"
	fi
fi
finish
