#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Images written by the kernel: format with mkfs.xfs, loop-mount, run a
# workload that grows every per-AG btree past one level (fragmented free
# space, tens of thousands of reverse mappings, shared extents, many inode
# chunks with holes), unmount.  xfs_repair -n (6.1, and 7.2 where
# scripts/xfsprogs-sid has it) must find it clean (sanity of the
# oracles), and so must we; the multi-level trees prove the walker
# handled real interior nodes.
. "$XK_SRCDIR/tests/scripts/lib.sh"
need_xfsprogs
have_xfs72 || true

img="$T/kimg"
mkfs_xfs_image "$img" 1g -m rmapbt=1,reflink=1 -d agcount=2 || exit 99
loop_mount "$img" || finish

# Fragment free space: allocate 200 MiB, punch every other block.
xfs_io -f -c "pwrite -b 1m 0 200m" "$MNT/frag" >/dev/null || fail "pwrite"
seq 0 2 51199 | awk '{ print "fpunch " $1 * 4096 " 4096" }' |
	xfs_io "$MNT/frag" >/dev/null || fail "fpunch"
# Share every one of those extents: refcount records by the thousand.
cp --reflink=always "$MNT/frag" "$MNT/frag.clone" || fail "reflink copy"
# Inode chunks: 20000 inodes in one directory (so in one AG: more than a
# leaf of inobt records), then every third removed (finobt entries).
mkdir "$MNT/many" "$MNT/d1"
(cd "$MNT/many" && touch $(seq -f "f%g" 1 20000)) || fail "touch"
(cd "$MNT/many" && rm -f $(seq -f "f%g" 1 3 20000)) || fail "rm"
# A little of everything else.
for i in $(seq 1 50); do
	echo "content $i" >"$MNT/d1/data$i"
	ln -s "d1/data$i" "$MNT/link$i"
done
if command -v setfattr >/dev/null; then
	setfattr -n user.small -v hello "$MNT/d1/data1"
	setfattr -n user.big -v "$(head -c 3000 /dev/zero | tr '\0' x)" "$MNT/d1/data2"
fi
loop_umount || { fail "umount"; finish; }

if ! xfs_repair_clean "$img" "$T/xfs_repair.out"; then
	fail "xfs_repair -n does not find the kernel's image clean:"$'\n'"$(cat "$T/xfs_repair.out")"
fi
if out=$("$REPAIR" -n -v "$img" 2>&1); then
	pass "xfskit-repair -n: kernel image clean"
else
	fail "xfskit-repair -n on the kernel's image:"$'\n'"$out"
fi

# Every tree kind must have been taller than one level somewhere.
for t in "agf:bnolevel:bnobt" "agf:rmaplevel:rmapbt" "agf:refcntlevel:refcountbt" "agi:level:inobt"; do
	IFS=: read -r hdr field name <<<"$t"
	max=0
	for ag in 0 1; do
		l=$(db_get "$img" "$hdr $ag" "$field")
		[ "${l:-0}" -gt "$max" ] && max=$l
	done
	if [ "$max" -ge 2 ]; then
		blocks=$(printf '%s\n' "$out" | sed -n "s/.* - AG [01] $name: \([0-9]*\) blocks.*/\1/p" | sort -n | tail -1)
		if [ "${blocks:-0}" -gt 1 ]; then
			pass "$name: $max levels, walked $blocks blocks"
		else
			fail "$name has $max levels but we walked ${blocks:-0} blocks"
		fi
	else
		fail "workload did not grow $name past one level (got $max)"
	fi
done
finish
