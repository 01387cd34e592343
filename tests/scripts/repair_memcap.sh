#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# -m MB and --direct.  A cap below what the model (doc/memory.md) needs is
# refused at once with the figure needed and exit 4, writing nothing; a
# cap that fits is honoured (the buffer cache shrinks to fit, -v says
# so) and the verdict is the same as without it.  --direct checks a loop
# block device through O_DIRECT with the same verdict and output.
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

"$REPAIR" -n -P -m 1 "$T/a.img" >"$T/m1.out" 2>&1; rc=$?
if [ $rc -eq 4 ] && grep -q "needs at least [0-9]* MiB .*-m 1 is not enough" "$T/m1.out"; then
	pass "-m 1 refused with the figure needed: $(grep -o 'needs at least [0-9]* MiB' "$T/m1.out")"
else
	fail "-m 1: exit $rc: $(cat "$T/m1.out")"
fi
need=$(sed -n 's/.*needs at least \([0-9]*\) MiB.*/\1/p' "$T/m1.out")
"$REPAIR" -n -P -v -m "$need" "$T/a.img" >"$T/mn.out" 2>&1; rc=$?
[ $rc -eq 0 ] && grep -q "^Memory: about .* of the $need allowed" "$T/mn.out" &&
	pass "-m $need (the figure given) is accepted and the check is clean" ||
	fail "-m $need: exit $rc: $(head -5 "$T/mn.out")"
"$REPAIR" -n -P -m x "$T/a.img" >/dev/null 2>&1; rc=$?
[ $rc -eq 3 ] || fail "-m x: exit $rc, expected 3"
[ "$(cksum <"$T/a.img")" = "$before" ] || fail "the image changed"

# --direct on a block device: same output as through the page cache.
if [ "$(id -u)" -eq 0 ] && dev=$(losetup -f --show "$T/a.img" 2>/dev/null); then
	"$REPAIR" -n -P -v "$dev" >"$T/buf.out" 2>&1; r1=$?
	"$REPAIR" -n -P -v --direct -t 2 "$dev" >"$T/dir.out" 2>&1; r2=$?
	losetup -d "$dev"
	[ $r1 -eq 0 ] && [ $r2 -eq 0 ] && cmp -s "$T/buf.out" "$T/dir.out" &&
		pass "--direct on $dev: same clean output as buffered" ||
		fail "--direct: exit $r1/$r2: $(diff "$T/buf.out" "$T/dir.out" | head -5)"
else
	echo "note: no loop device here; --direct not exercised" >&2
fi
finish
