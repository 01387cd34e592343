#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# -m spills the salvage lists too: a directory's salvaged entries and
# their names (repair/dirfix.c), the entries its rewrite drops, and an
# attr fork's salvaged xattrs with their names and values
# (repair/attrfix.c, libfs/write/attr_salvage.c) are vectors of the
# run's spill context, as the scan's lists are.
#
# A kernel-populated image (mkfs.xfs, loop mount, python): /big, a node
# directory of 30,000 entries (files and a few subdirectories), and /x,
# a file with 3,000 xattrs in a node fork.  xfs_db -x damages a leaf
# block of /big (its magic: the data blocks are intact, so every entry
# is salvaged) and /x's dabtree node (its count: the leaves are intact).
# The damaged image is repaired three ways:
#  (a) without -m;
#  (b) under the least cap -m accepts (the figure its refusal of -m 1
#      names, below the all-in-memory one), spilling to --spill-dir: -v must say that
#      both salvaged lists are in files ("Spilled: the salvaged entry
#      list of inode N, 30010 entries ..., is in a file"), which is how
#      the spill is detected; nothing may be left in --spill-dir;
#  (c) the same cap with --spill-dir on a 1 MiB tmpfs, where no file
#      can be made (the free space check fails: ENOSPC): every list
#      stays in memory, the run completes, and its warning names the
#      spill directory, not the image.
# All three must print the same (the memory lines and warnings aside)
# and leave the same image byte for byte; that image must be clean for
# xfs_repair -n (6.1, and 7.2 where it is there), and the tree the
# kernel then shows (treerec.py: every path, mode, size, content,
# nlink, time and xattr) must be the tree before the damage.
. "$XK_SRCDIR/tests/scripts/lib.sh"
need_xfsprogs
[ "$(id -u)" -eq 0 ] || skip "populating the image needs root (loop mount)"
command -v python3 >/dev/null || skip "python3 not installed"
TREEREC="$XK_SRCDIR/tests/scripts/treerec.py"
NFILES=30000 NSUB=10 NXATTR=3000

img="$T/base.img"
mkfs_xfs_image "$img" 512m || { echo "mkfs.xfs: $(cat "$T/mkfs.out")" >&2; exit 99; }
loop_mount "$img" || exit 99
mkdir "$MNT/big"
touch "$MNT/x"
python3 - "$MNT" "$NFILES" "$NSUB" "$NXATTR" <<'EOF' || { echo "populating failed" >&2; exit 99; }
import os, sys
root, nfiles, nsub, nxattr = sys.argv[1], *map(int, sys.argv[2:])
big = os.open(root + "/big", os.O_RDONLY)
for i in range(nfiles):
    os.close(os.open("f%d" % i, os.O_CREAT | os.O_WRONLY, 0o644, dir_fd=big))
for i in range(nsub):
    os.mkdir("sub%d" % i, dir_fd=big)
    with open("%s/big/sub%d/in" % (root, i), "w") as f:
        f.write("sub %d\n" % i)
for i in range(nxattr):
    os.setxattr(root + "/x", "user.xattr_%d" % i, b"value %d" % i)
EOF
BIG=$(stat -c %i "$MNT/big") X=$(stat -c %i "$MNT/x")
python3 "$TREEREC" record "$MNT" >"$T/tree.base"
loop_umount
nbig=$((NFILES + NSUB))

# /big's second leaf-space block (the first is the node root) and /x's
# dabtree root (attr block 0).
bsize=$(db_get "$img" "sb 0" blocksize)
leaf0=$(((1 << 35) / bsize))
leaf=$(xfs_db -r -c "inode $BIG" -c bmap "$img" |
	awk -v l="$leaf0" '$3 > l { print $3; exit }')
[ -n "$leaf" ] || { echo "no leaf block found in /big" >&2; exit 99; }
D="$T/d.img"
cp --sparse=always "$img" "$D"
xfs_db -x -c "inode $BIG" -c "dblock $leaf" -c "write -d lhdr.info.hdr.magic 0x1234" \
	-c "inode $X" -c "ablock 0" -c "write -d hdr.count 0" "$D" >"$T/db.out" 2>&1
xfs_repair -n "$D" >"$T/xr.d" 2>&1
grep -q "directory inode $BIG" "$T/xr.d" ||
	{ echo "xfs_repair -n does not see /big's damage: $(cat "$T/db.out") $(tail -3 "$T/xr.d")" >&2; exit 99; }

"$REPAIR" -n --no-progress -m 1 "$D" >"$T/m1.out" 2>&1
low=$(sed -n 's/.*needs at least \([0-9]*\) MiB with its extent records spilled.*/\1/p' "$T/m1.out")
high=$(sed -n 's/.*(\([0-9]*\) MiB all in memory.*/\1/p' "$T/m1.out")
if [ -z "$low" ] || [ -z "$high" ] || [ "$low" -ge "$high" ]; then
	fail "-m 1 named no figures to spill between ('$low' '$high'): $(tail -2 "$T/m1.out")"
	finish
fi
# The least accepted: below the all-in-memory figure, so lists spill.
cap=$low
mkdir "$T/spill" "$T/tiny"
strip_mem() {
	grep -v -e '^Memory: ' -e '^Spilled: ' -e '^xfskit-repair: warning: ' "$1"
}

cp --sparse=always "$D" "$T/a.img"
cp --sparse=always "$D" "$T/b.img"
"$REPAIR" --no-progress -v -o threads=2 "$T/a.img" >"$T/a.out" 2>&1; rca=$?
"$REPAIR" --no-progress -v -o threads=2 -m "$cap" --spill-dir "$T/spill" \
	"$T/b.img" >"$T/b.out" 2>&1; rcb=$?
[ $rca -eq 0 ] && [ $rcb -eq 0 ] ||
	fail "repair: exit $rca without -m, $rcb with -m $cap: $(tail -3 "$T/b.out")"
grep -q "^Rewrote directory $BIG (/big) from $nbig salvaged entries" "$T/a.out" ||
	fail "/big was not rewritten from its $nbig entries: $(grep -i "directory $BIG" "$T/a.out" | head -3)"

# (b) Both salvaged lists in files, with their counts; nothing left.
# (The names of /x's xattrs, 57 KiB, fit the heap's share of a pool.)
if grep -q "^Spilled: the salvaged entry list of inode $BIG, $nbig entries (.*), is in a file; their names (.*) \(partly \)\?in files\.$" "$T/b.out" &&
   grep -q "^Spilled: the salvaged xattr list of inode $X, $NXATTR entries (.*), is in a file; their names (.*) .*\.$" "$T/b.out"; then
	pass "-m $cap: /big's $nbig salvaged entries with their names and /x's $NXATTR salvaged xattrs were in files"
else
	fail "salvaged lists not spilled: $(grep '^Spilled\|^Memory' "$T/b.out")"
fi
grep -q "^Spilled: the salvaged" "$T/a.out" && fail "the run without -m spilled: $(grep '^Spilled' "$T/a.out")"
[ -z "$(ls -A "$T/spill")" ] || fail "files left in the spill directory: $(ls -A "$T/spill")"

# (c) No room for the spill files: all in memory, said so, same result.
if mount -t tmpfs -o size=1m none "$T/tiny"; then
	cp --sparse=always "$D" "$T/c.img"
	"$REPAIR" --no-progress -v -o threads=2 -m "$cap" --spill-dir "$T/tiny" \
		"$T/c.img" >"$T/c.out" 2>&1; rcc=$?
	umount "$T/tiny"
	if [ $rcc -eq 0 ] &&
	   grep -q "^xfskit-repair: warning: [0-9]* moves of records to files in $T/tiny failed; those stayed in memory$" "$T/c.out" &&
	   grep -q "^Spilled: the salvaged entry list of inode $BIG, $nbig entries (.*), is in memory" "$T/c.out" &&
	   ! grep -i "no space" "$T/c.out" | grep -q "c.img"; then
		pass "spill directory full: the lists stayed in memory, the warning names $T/tiny"
	else
		fail "spill directory full: exit $rcc: $(grep -i 'warning\|space\|^Spilled: the salv' "$T/c.out" | head -4)"
	fi
	strip_mem "$T/c.out" >"$T/c.cmp"
	same_image "$T/a.img" "$T/c.img" ||
		fail "the image repaired with a full spill directory differs from the one repaired without -m"
else
	echo "note: no tmpfs here; the full spill directory case is left out" >&2
	strip_mem "$T/a.out" >"$T/c.cmp"
fi

strip_mem "$T/a.out" >"$T/a.cmp"
strip_mem "$T/b.out" >"$T/b.cmp"
if same_image "$T/a.cmp" "$T/b.cmp" && same_image "$T/a.cmp" "$T/c.cmp"; then
	pass "the three runs print the same ($(wc -l <"$T/a.cmp") lines with -v)"
else
	fail "outputs differ: $(diff "$T/a.cmp" "$T/b.cmp" | head -5) $(diff "$T/a.cmp" "$T/c.cmp" | head -5)"
fi
if same_image "$T/a.img" "$T/b.img"; then
	pass "repairs with the salvage lists spilled and in memory leave the same image"
else
	fail "the image repaired under -m $cap differs from the one repaired without it"
fi

if xfs_repair_clean "$T/b.img" "$T/b.xr"; then
	pass "xfs_repair -n finds the repaired image clean"
	loop_mount "$T/b.img" || finish
	python3 "$TREEREC" record "$MNT" >"$T/tree.b"
	loop_umount
	if same_image "$T/tree.base" "$T/tree.b"; then
		pass "the repaired tree is the tree before the damage ($(wc -l <"$T/tree.b") paths, every xattr)"
	else
		fail "the repaired tree differs from the tree before the damage: $(diff "$T/tree.base" "$T/tree.b" | head -5)"
	fi
else
	fail "xfs_repair -n after repair under -m $cap: $(cat "$T/b.xr")"
fi
finish
