#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# -m MB and --direct.  A cap below what the model (doc/memory.md) needs is
# refused at once with the figure needed and exit 1, writing nothing; a
# cap that fits is honoured (the buffer cache shrinks to fit, -v says
# so) and the verdict is the same as without it.  --direct checks a loop
# block device through O_DIRECT with the same verdict and output.
#
# Spilling: on an rmapbt filesystem with 160,000 file extents and as
# many free extents (files punched every other block by the kernel), a
# cap just over the first of the two figures the refusal names (with
# the extent records spilled, and all in memory) must give the same
# output as an unlimited run and as a run holding everything in memory
# with the same small cache, and leave no file in --spill-dir; a cap
# below the spilled figure is still refused.  (The peak RSS each gives
# is measured by bench/memcap, not asserted here.)  Repair under such a
# cap fixes a damaged copy and xfs_repair -n then finds it clean.
. "$XK_SRCDIR/tests/scripts/lib.sh"
need_xfsprogs

mkfs_xfs_image "$T/a.img" 512M || { fail "mkfs.xfs"; finish; }
if loop_mount "$T/a.img"; then
	for d in $(seq 1 20); do
		mkdir "$MNT/d$d" && (cd "$MNT/d$d" && seq -f 'f%g' 1 500 | xargs touch)
	done
	loop_umount
fi
before=$(cksum <"$T/a.img")

"$REPAIR" -n --no-progress -m 1 "$T/a.img" >"$T/m1.out" 2>&1; rc=$?
if [ $rc -eq 1 ] && grep -q "needs at least [0-9]* MiB .*-m 1 is not enough" "$T/m1.out"; then
	pass "-m 1 refused with the figure needed: $(grep -o 'needs at least [0-9]* MiB' "$T/m1.out")"
else
	fail "-m 1: exit $rc: $(cat "$T/m1.out")"
fi
need=$(sed -n 's/.*needs at least \([0-9]*\) MiB.*/\1/p' "$T/m1.out")
"$REPAIR" -n --no-progress -v -m "$need" "$T/a.img" >"$T/mn.out" 2>&1; rc=$?
[ $rc -eq 0 ] && grep -q "^Memory: about .* of the $need allowed" "$T/mn.out" &&
	pass "-m $need (the figure given) is accepted and the check is clean" ||
	fail "-m $need: exit $rc: $(head -5 "$T/mn.out")"
"$REPAIR" -n --no-progress -m x "$T/a.img" >/dev/null 2>&1; rc=$?
[ $rc -eq 1 ] || fail "-m x: exit $rc, expected 1 (usage, as xfs_repair)"
[ "$(cksum <"$T/a.img")" = "$before" ] || fail "the image changed"

# --direct on a block device: same output as through the page cache.
if [ "$(id -u)" -eq 0 ] && dev=$(losetup -f --show "$T/a.img" 2>/dev/null); then
	"$REPAIR" -n --no-progress -v "$dev" >"$T/buf.out" 2>&1; r1=$?
	"$REPAIR" -n --no-progress -v --direct -o threads=2 "$dev" >"$T/dir.out" 2>&1; r2=$?
	losetup -d "$dev"
	[ $r1 -eq 0 ] && [ $r2 -eq 0 ] && same_image "$T/buf.out" "$T/dir.out" &&
		pass "--direct on $dev: same clean output as buffered" ||
		fail "--direct: exit $r1/$r2: $(diff "$T/buf.out" "$T/dir.out" | head -5)"
else
	echo "note: no loop device here; --direct not exercised" >&2
fi

# Spilling.  The image: 8 files of 20,000 one-block extents with a free
# block between each, spread over 16 AGs.
S="$T/s.img"
mkfs_xfs_image "$S" 2G -K -m rmapbt=1 -d agcount=16 || { fail "mkfs.xfs"; finish; }
loop_mount "$S" || finish
for d in $(seq 1 8); do
	mkdir "$MNT/d$d"
	{ echo "falloc 0 $((40000 * 4096))"
	  seq 0 19999 | awk '{ printf "fpunch %d 4096\n", (2 * $1 + 1) * 4096 }'
	} | xfs_io -f "$MNT/d$d/f" >/dev/null &
done
wait
loop_umount
xfs_repair -n "$S" >"$T/s.xr" 2>&1 || fail "xfs_repair -n on the spill image: $(tail -3 "$T/s.xr")"
mkdir "$T/spill"

# What the output says apart from the memory lines.
strip_mem() { grep -v -e '^Memory: ' -e '^Spilled: ' "$1"; }

"$REPAIR" -n --no-progress -v -o threads=2 "$S" >"$T/s.full" 2>&1; rc=$?
[ $rc -eq 0 ] || fail "unlimited check of the spill image: exit $rc: $(tail -3 "$T/s.full")"
"$REPAIR" -n --no-progress -o threads=2 -m 1 --spill-dir "$T/spill" "$S" >"$T/s.m1" 2>&1; rc=$?
low=$(sed -n 's/.*needs at least \([0-9]*\) MiB with its extent records spilled.*/\1/p' "$T/s.m1")
high=$(sed -n 's/.*(\([0-9]*\) MiB all in memory.*/\1/p' "$T/s.m1")
if [ $rc -ne 1 ] || [ -z "$low" ] || [ -z "$high" ] || [ "$high" -le $((low + 4)) ]; then
	fail "-m 1 on the spill image: exit $rc, figures '$low' '$high': $(cat "$T/s.m1")"
	finish
fi
pass "-m 1 refused: $low MiB needed with spilling, $high MiB all in memory"
small=$((low + 1))

"$REPAIR" -n --no-progress -o threads=2 -m $((low - 1)) --spill-dir "$T/spill" "$S" >"$T/s.below" 2>&1; rc=$?
[ $rc -eq 1 ] && grep -q "needs at least $low MiB .*-m $((low - 1)) is not enough" "$T/s.below" &&
	pass "-m $((low - 1)), under the part that cannot spill, is refused" ||
	fail "-m $((low - 1)): exit $rc: $(cat "$T/s.below")"

"$REPAIR" -n --no-progress -v -o threads=2 -m "$high" --spill-dir "$T/spill" "$S" \
	>"$T/s.mem" 2>&1; rc=$?
[ $rc -eq 0 ] && grep -q "^Memory: about .* of the $high allowed (cache" "$T/s.mem" ||
	fail "-m $high (all in memory): exit $rc: $(grep -v '^Phase\|^  ' "$T/s.mem" | head -5)"
"$REPAIR" -n --no-progress -v -o threads=2 -m "$small" --spill-dir "$T/spill" "$S" \
	>"$T/s.small" 2>&1; rc=$?
files=$(sed -n 's/^Spilled: \([0-9]*\) vectors to files.*/\1/p' "$T/s.small")
if [ $rc -eq 0 ] && grep -q "^Memory: about .* of the $small allowed, the extent records .* spilled to $T/spill" "$T/s.small" &&
   [ "${files:-0}" -gt 0 ]; then
	pass "-m $small spilled $files vectors to $T/spill"
else
	fail "-m $small: exit $rc: $(grep -v '^Phase\|^  ' "$T/s.small" | head -5)"
fi
strip_mem "$T/s.full" >"$T/s.full.cmp"
strip_mem "$T/s.small" >"$T/s.small.cmp"
strip_mem "$T/s.mem" >"$T/s.mem.cmp"
same_image "$T/s.full.cmp" "$T/s.small.cmp" && same_image "$T/s.full.cmp" "$T/s.mem.cmp" &&
	pass "spilled, in-memory and unlimited runs print the same ($(wc -l <"$T/s.full.cmp") lines)" ||
	fail "outputs differ: unlimited vs spilled: $(diff "$T/s.full.cmp" "$T/s.small.cmp" | head -5); unlimited vs all in memory: $(diff "$T/s.full.cmp" "$T/s.mem.cmp" | head -5)"
[ -z "$(ls -A "$T/spill")" ] || fail "files left in the spill directory: $(ls -A "$T/spill")"
# Repair under the cap: an AGF free-block count made wrong.
cp --sparse=always "$S" "$T/d.img"
xfs_db -x -c "agf 3" -c "write -d freeblks 1234" "$T/d.img" >/dev/null 2>&1
xfs_repair -n "$T/d.img" >/dev/null 2>&1 && fail "the damage to AGF 3 was not seen by xfs_repair -n"
"$REPAIR" --no-progress -o threads=2 -m "$small" --spill-dir "$T/spill" "$T/d.img" >"$T/d.out" 2>&1; rc=$?
xfs_repair -n "$T/d.img" >"$T/d.xr" 2>&1; xr=$?
[ $rc -eq 0 ] && [ $xr -eq 0 ] && grep -q "spilled to $T/spill" "$T/d.out" &&
	pass "repair under -m $small (spilled) fixed AGF 3; xfs_repair -n is clean" ||
	fail "repair under -m $small: exit $rc, xfs_repair -n $xr: $(tail -5 "$T/d.out") $(tail -3 "$T/d.xr")"
[ -z "$(ls -A "$T/spill")" ] || fail "files left in the spill directory after repair"
finish
