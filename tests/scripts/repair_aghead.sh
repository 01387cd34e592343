#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Every AG's first MiB zeroed but its superblock (bench/reasm's aghead,
# small): the AG headers, the btree roots, the first inode chunks (the
# root directory's among them) and the start of the internal log are
# gone.
#  - The log: a zeroed log's head is 0:0, so every metadata LSN is ahead
#    of it.  As xfs_repair, ours -n says the log would be formatted
#    (exit 1) and ours formats it past the newest metadata LSN; before,
#    ours left it zeroed and xfs_repair -n found the metadata ahead of it.
#  - The inode chunks: no live directory names them any more, but the
#    directory blocks outside the zeroed MiB do; found through the
#    device scan, their files come back (under /lost+found, in the
#    directory rebuilt from those blocks), those of a directory whose
#    own inode was lost (/d0) included.  xfs_repair finds none.
#    Before, ours found none either.
#  - Trust: a directory removed before the damage left its blocks and
#    its freed inode chunks on disk, looking live; none of its files may
#    come back (its blocks' owner is on disk, free: they are stale).
# After ours, xfs_repair -n is clean and the repaired image mounts and
# reads back: every file kept has the content of a file of the tree.
. "$XK_SRCDIR/tests/scripts/lib.sh"
. "$XK_SRCDIR/tests/scripts/repair_lib.sh"
need_xfsprogs
[ "$(id -u)" -eq 0 ] || skip "populating and walking images needs root (loop mount)"

img="$T/base.img"
mkfs_xfs_image "$img" 512m || { fail "mkfs.xfs: $(cat "$T/mkfs.out")"; finish; }
loop_mount "$img" || finish
# Four directories (/d0 of 2,400 entries, the others of 800), one file
# in ten with data; each file's content names it, so that a file found
# anywhere is known.  Then, by
# the directory rotor, /gone lands in AG 2, past the log (outside the
# zeroed MiB): its 400 files are written back (unmounted), then removed
# in another mount, which frees their chunks whole without writing them
# again: its blocks and chunks stay on disk looking live.
for d in 0 1 2 3; do
	mkdir "$MNT/d$d"
	for i in $(seq $((d ? 800 : 2400))); do
		if [ $((i % 10)) = 0 ]; then
			{ echo "d$d/f$i"; head -c 6000 /dev/zero; } >"$MNT/d$d/f$i"
		else
			echo "d$d/f$i" >"$MNT/d$d/f$i"
		fi
	done
done
mkdir "$MNT/e0" "$MNT/e1" "$MNT/gone"
for i in $(seq 400); do echo "gone $i" >"$MNT/gone/g$i"; done
gone=$(stat -c %i "$MNT/gone")
loop_umount || finish
loop_mount "$img" || finish
rm -rf "$MNT/gone"
loop_umount || finish
walk "$img" "$T/tree.base" >/dev/null || { fail "walking the base image"; finish; }

agcount=$(db_get "$img" "sb 0" agcount)
agblocks=$(db_get "$img" "sb 0" agblocks)
bsize=$(db_get "$img" "sb 0" blocksize)
for ((ag = 0; ag < agcount; ag++)); do
	dd if=/dev/zero of="$img" bs=512 seek=$((ag * agblocks * bsize / 512 + 1)) \
		count=2047 conv=notrunc status=none
done

# The trust case is there: the removed directory's blocks survive.
"$DB" -r -c "scan -t dir3-data -o $gone" "$img" 2>/dev/null | grep -q ' ok$' ||
	{ echo "no block of the removed directory $gone outside the zeroed MiB" >&2; exit 99; }

cp --sparse=always "$img" "$T/ours.img"
cp --sparse=always "$img" "$T/theirs.img"

# -n: the zeroed log is a finding, as for xfs_repair -n.
"$REPAIR" -n "$T/ours.img" >"$T/ours-n.out" 2>&1
rc=$?
if [ "$rc" -eq 1 ] && grep -q "^Would format log to cycle" "$T/ours-n.out"; then
	pass "-n: the zeroed log would be formatted (exit 1)"
else
	fail "-n exit $rc: $(grep -i 'log' "$T/ours-n.out" | head -3)"
fi

ours_repaired "$T/ours.img" "$T/ours.out"
grep -q "^Format log to cycle" "$T/ours.out" ||
	fail "the zeroed log was not formatted: $(grep -i 'log' "$T/ours.out" | head -3)"

xfs_repair "$T/theirs.img" >"$T/theirs.out" 2>&1 ||
	xfs_repair -L "$T/theirs.img" >>"$T/theirs.out" 2>&1
LOOP_MOUNT_QUIET=1 walk "$T/theirs.img" "$T/tree.theirs" >/dev/null || true
errs=$(walk "$T/ours.img" "$T/tree.ours") || { fail "the repaired image does not mount"; finish; }
[ -z "$errs" ] || fail "kernel errors walking the repaired image: $errs"
ours=$(files_kept "$T/tree.base" "$T/tree.ours")
theirs=$(files_kept "$T/tree.base" "$T/tree.theirs")
total=$(awk -F '\t' '$2 == "f"' "$T/tree.base" | wc -l)
# Before this fix ours found no chunk here, as xfs_repair.
if [ "$ours" -gt 0 ] && [ "$ours" -ge "$theirs" ]; then
	pass "files read back with their content: ours $ours, xfs_repair $theirs (of $total)"
else
	fail "files read back with their content: ours $ours, xfs_repair $theirs (of $total)"
fi
# /d0 (the first directory: its inode in the root's zeroed chunk) grew
# past AG 0's first MiB: its later blocks name files whose chunks
# survive; those blocks' owner is gone, which says nothing against them.
d0=$(files_kept <(grep '^\./d0/' "$T/tree.base") "$T/tree.ours")
if [ "$d0" -gt 0 ]; then
	pass "files of /d0, whose inode was lost, found through its blocks: $d0"
else
	fail "no file of /d0 found, though blocks of it name them"
fi
# No removed file came back (a file kept whose data blocks were in the
# zeroed MiB reads back as other content: that is no trust failure).
mkdir "$T/gone"
for i in $(seq 400); do echo "gone $i" >"$T/gone/g$i"; done
(cd "$T/gone" && sha256sum -- *) | cut -d' ' -f1 | sort -u >"$T/gone.sums"
back=$(LC_ALL=C comm -12 "$T/gone.sums" <(contents "$T/tree.ours" | sort -u) | wc -l)
other=$(LC_ALL=C comm -13 <(contents "$T/tree.base" | sort -u) <(contents "$T/tree.ours" | sort -u) | wc -l)
# Those, for the log: path and the first bytes read back.
LC_ALL=C comm -13 <(contents "$T/tree.base" | sort -u) <(contents "$T/tree.ours" | sort -u) |
	head -5 | while read -r h; do
		awk -F '\t' -v h="$h" '$3 == h { print "other content: " $1 }' "$T/tree.ours"
	done >&2
if [ "$back" -eq 0 ]; then
	pass "no removed file came back ($other file(s) kept with other content: data zeroed)"
else
	fail "$back removed file(s) came back"
fi
finish
