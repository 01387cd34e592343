#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Directories that only name each other: /x holds y and a file g, y
# holds a file f.  xfs_db makes y's entry for f name x instead (a cycle
# x -> y -> x) and the root's entry for x name an inode not in use, so
# the cycle hangs from nothing and f from nothing.  xfs_repair moves x to
# /lost+found (dropping y's entry for it) and f too; xfskit-repair must
# exit 0, leave an image xfs_repair -n and a second run of ours find
# clean, and give the same tree and contents as xfs_repair's.  A second
# case makes the cycle from two directories of one more level, so that
# the lowest inode of the cycle is not the one its old parent named.  A
# third case orphans a file whose name in /lost+found (its inode number)
# is already taken by another file there: both tools name it "INO.1".
. "$XK_SRCDIR/tests/scripts/lib.sh"
. "$XK_SRCDIR/tests/scripts/repair_lib.sh"
need_xfsprogs
[ "$(id -u)" -eq 0 ] || skip "populating and walking images needs root (loop mount)"

# sf_slot IMG DIR NAME: the list index of NAME in short-form DIR.
sf_slot() {
	xfs_db -r -c "inode $2" -c "print u3.sfdir3" "$1" |
		sed -n "s/^u3.sfdir3.list\[\([0-9]*\)\].name = \"$3\"$/\1/p"
}

run() { # name
	local name=$1 rc xr again kern
	cp --sparse=always "$T/cy.img" "$T/ours.img"
	cp --sparse=always "$T/cy.img" "$T/theirs.img"
	"$REPAIR" "$T/ours.img" >"$T/ours.out" 2>&1; rc=$?
	xfs_repair -n "$T/ours.img" >"$T/xrn.out" 2>&1; xr=$?
	"$REPAIR" -n "$T/ours.img" >"$T/again.out" 2>&1; again=$?
	xfs_repair "$T/theirs.img" >/dev/null 2>&1
	[ $rc -eq 0 ] || { fail "$name: xfskit-repair exit $rc: $(tail -3 "$T/ours.out")"; return; }
	[ $xr -eq 0 ] || { fail "$name: xfs_repair -n after ours: $(grep -v '^Phase\|^  *-' "$T/xrn.out" | head -3)"; return; }
	[ $again -eq 0 ] || fail "$name: second run not clean: $(head -3 "$T/again.out")"
	kern=$(walk "$T/ours.img" "$T/tree.ours")
	xfs_repair -n "$T/theirs.img" >/dev/null 2>&1 ||
		{ fail "$name: xfs_repair's own result is not clean"; return; }
	walk "$T/theirs.img" "$T/tree.theirs" >/dev/null
	[ -z "$kern" ] || fail "$name: kernel walk: $kern"
	if same_image "$T/tree.ours" "$T/tree.theirs"; then
		pass "$name: the same tree as xfs_repair's ($(wc -l <"$T/tree.ours") entries)"
	else
		fail "$name: trees differ: $(diff "$T/tree.theirs" "$T/tree.ours" | head -4)"
	fi
}

img="$T/c.img"
mkfs_xfs_image "$img" 300m || finish
loop_mount "$img" || finish
mkdir -p "$MNT/x/y" "$MNT/keep" "$MNT/p/q/r" "$MNT/lost+found" "$MNT/s"
echo hello >"$MNT/x/y/f"
echo data >"$MNT/x/g"
echo deep >"$MNT/p/q/r/h"
echo lone >"$MNT/s/o"
X=$(stat -c %i "$MNT/x") Y=$(stat -c %i "$MNT/x/y")
P=$(stat -c %i "$MNT/p") Q=$(stat -c %i "$MNT/p/q") R=$(stat -c %i "$MNT/p/q/r")
S=$(stat -c %i "$MNT/s") O=$(stat -c %i "$MNT/s/o")
echo squatter >"$MNT/lost+found/$O"
loop_umount

# Case 1: y's entry f names x; the root's entry for x names nothing.
cp --sparse=always "$img" "$T/cy.img"
fy=$(sf_slot "$img" "$Y" f) rx=$(sf_slot "$img" 128 x)
xfs_db -x -c "inode $Y" -c "write u3.sfdir3.list[$fy].inumber.i4 $X" \
	-c "write u3.sfdir3.list[$fy].filetype 2" \
	-c "inode 128" -c "write u3.sfdir3.list[$rx].inumber.i4 4000000" \
	"$T/cy.img" >/dev/null
run two-dir-cycle

# Case 2: r's entry h names q (cycle q -> r -> q below p); p's entry
# for q names nothing.
cp --sparse=always "$img" "$T/cy.img"
hr=$(sf_slot "$img" "$R" h) qp=$(sf_slot "$img" "$P" q)
xfs_db -x -c "inode $R" -c "write u3.sfdir3.list[$hr].inumber.i4 $Q" \
	-c "write u3.sfdir3.list[$hr].filetype 2" \
	-c "inode $P" -c "write u3.sfdir3.list[$qp].inumber.i4 4000000" \
	"$T/cy.img" >/dev/null
run nested-cycle

# Case 3: s's entry for o names nothing; /lost+found already has "$O".
cp --sparse=always "$img" "$T/cy.img"
os=$(sf_slot "$img" "$S" o)
xfs_db -x -c "inode $S" -c "write u3.sfdir3.list[$os].inumber.i4 4000000" \
	"$T/cy.img" >/dev/null
run name-taken
grep -q "lost+found/$O\.1	f" "$T/tree.ours" ||
	fail "name-taken: no /lost+found/$O.1 in our tree"
finish
