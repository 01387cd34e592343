#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Log replay on a filesystem with the metadata directory tree (mkfs.xfs
# 7.2 -m metadir=1): the kernel runs a workload (directories, files, a
# hard link, a removal, an xattr) and is shut down with the log forced,
# leaving the log dirty.  On one copy the kernel replays it at mount; on
# another xfskit-repair replays it offline.  Ours must exit 0, leave an
# image xfs_repair 7.2 -n calls clean, and equal the kernel's replay:
# the same tree (paths, types, modes, sizes, links, contents, xattrs)
# and the same superblock and AG header counters (read by xfs_db 7.2).
. "$XK_SRCDIR/tests/scripts/lib.sh"
. "$XK_SRCDIR/tests/scripts/log_lib.sh"
need_xfs72
[ "$(id -u)" -eq 0 ] || skip "making dirty logs needs root (loop mount)"
command -v xfs_io >/dev/null 2>&1 || skip "xfs_io is not installed"

img="$T/dirty.img"
truncate -s 320m "$img"
xfs72 mkfs.xfs -q -f -m metadir=1 "$img" >"$T/mkfs.out" 2>&1 ||
	skip "mkfs.xfs 7.2 cannot make -m metadir=1: $(head -2 "$T/mkfs.out")"
loop_mount "$img" || finish
m=$MNT
mkdir -p "$m/x/y"
for i in $(seq 1 40); do echo "$i" >"$m/x/f$i"; done
sync
ln "$m/x/f1" "$m/x/y/h"
rm "$m/x/f2"
for i in $(seq 41 70); do echo "$i" >"$m/x/y/g$i"; done
setfattr -n user.a -v b "$m/x/f3" 2>/dev/null
xfs_io -x -c 'shutdown -f' "$m"
loop_umount_busy || finish

# headers IMG: the counters of the superblock and every AGF/AGI.  With
# LOOSE set, the AGF's space in all (free, AGFL, btree blocks) rather
# than each and its longest extent: ours then finished at replay what
# the kernel does at mount (inodes on the unlinked lists freed, as the
# kernel's inode GC had not done before the shutdown), through the
# builder, which rebuilds the AG indexes in shapes of its own.
headers() {
	local n i cmds=(-c 'sb 0' -c 'p icount ifree fdblocks')
	n=$(xfs72 xfs_db -r -c 'sb 0' -c 'p agcount' "$1" | awk '{print $3}')
	for ((i = 0; i < n; i++)); do
		if [ -n "${LOOSE:-}" ]; then
			cmds+=(-c "agf $i" -c 'p freeblks flcount btreeblks')
		else
			cmds+=(-c "agf $i" -c 'p freeblks longest flcount btreeblks')
		fi
		cmds+=(-c "agi $i" -c 'p count freecount unlinked')
	done
	xfs72 xfs_db -r "${cmds[@]}" "$1" | awk -v loose="${LOOSE:-}" '
		loose != "" && /^(freeblks|flcount|btreeblks) = / {
			s += $3
			if ($1 == "btreeblks") { print "agf space = " s; s = 0 }
			next
		}
		{ print }'
}

cp --sparse=always "$img" "$T/ours.img"
"$REPAIR" "$T/ours.img" >"$T/ours.out" 2>&1 ||
	{ fail "our replay exits $?: $(tail -3 "$T/ours.out")"; finish; }
grep -q "Replayed the log" "$T/ours.out" ||
	fail "the log was not dirty, or we did not say we replayed it: $(head -3 "$T/ours.out")"
LOOSE=
grep -q "Replayed the log: .*; .* \(finished\|freed\)" "$T/ours.out" && LOOSE=1
xfs72 xfs_repair -n "$T/ours.img" >"$T/ours.x72" 2>&1 ||
	{ fail "after our replay xfs_repair 7.2 -n is not clean: $(grep -v '^Phase\|^  *-' "$T/ours.x72" | head -3)"; finish; }

loop_mount "$img" || finish
record_tree "$MNT" >"$T/kernel.tree"
loop_umount
headers "$img" >"$T/kernel.hdr"
headers "$T/ours.img" >"$T/ours.hdr"
loop_mount "$T/ours.img" || finish
record_tree "$MNT" >"$T/ours.tree"
loop_umount

cmp -s "$T/kernel.tree" "$T/ours.tree" ||
	fail "the tree after our replay differs from the kernel's: $(diff "$T/kernel.tree" "$T/ours.tree" | head -4)"
cmp -s "$T/kernel.hdr" "$T/ours.hdr" ||
	fail "the header counters after our replay differ from the kernel's: $(diff "$T/kernel.hdr" "$T/ours.hdr" | head -4)"
pass "replay of $(sed -n 's/.*Replayed the log: \(.*\)\.$/\1/p' "$T/ours.out") equal to the kernel's ($(wc -l <"$T/ours.tree") tree lines, $(wc -l <"$T/ours.hdr") counters${LOOSE:+, AG space in all})"
finish
