#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Bad input gets a one-line error and a non-zero exit, never a crash:
# garbage, an empty file, a truncated image, a v4 filesystem, hostile
# superblock values, wrong options.
. "$XK_SRCDIR/tests/scripts/lib.sh"
need_xfsprogs

# expect CODE PATTERN -- command...
expect() {
	code=$1 pat=$2 name=$3
	shift 3
	out=$("$@" 2>&1)
	rc=$?
	if [ "$rc" -ne "$code" ]; then
		fail "$name: exit $rc, expected $code: $out"
	elif ! printf '%s\n' "$out" | grep -qE "$pat"; then
		fail "$name: message does not match /$pat/: $out"
	else
		pass "$name"
	fi
}

head -c 1048576 /dev/urandom >"$T/garbage"
expect 1 "not an XFS filesystem" garbage "$REPAIR" -n "$T/garbage"
: >"$T/empty"
expect 1 "too small to hold a superblock" empty "$REPAIR" -n "$T/empty"
expect 1 "No such file" missing "$REPAIR" -n "$T/nonexistent"
expect 1 "" directory "$REPAIR" -n "$T"

mkfs_xfs_image "$T/good" 300m || exit 99
cp --sparse=always "$T/good" "$T/trunc"
truncate -s 100m "$T/trunc"
expect 1 "truncated image" truncated "$REPAIR" -n "$T/trunc"

if mkfs_xfs_image "$T/v4" 300m -m crc=0 2>/dev/null; then
	expect 1 "only v5" v4 "$REPAIR" -n "$T/v4"
else
	echo "note: mkfs.xfs cannot make v4 here; v4 case not run"
fi

# Hostile values written into the primary superblock with xfs_db: the
# primary is reported bad, naming the field, and the check goes on with
# the secondary of AG 1, as xfs_repair does.
hostile() {
	name=$1 pat=$2
	shift 2
	cp --sparse=always "$T/good" "$T/h"
	xfs_db -x -c "sb 0" "$@" "$T/h" >/dev/null 2>&1 ||
		{ fail "xfs_db could not write $name"; return; }
	expect 1 "primary superblock is bad.*($pat)" "hostile $name" "$REPAIR" -n "$T/h"
	printf '%s\n' "$out" | grep -q "Using the secondary superblock of AG 1" ||
		fail "hostile $name: the secondary of AG 1 was not used: $out"
}
hostile agcount-0 "agcount" -c "write -d agcount 0"
hostile agcount-huge "agcount|dblocks" -c "write -d agcount 4294967295"
hostile agblocks-0 "agblocks" -c "write -d agblocks 0"
hostile blocksize "blocksize" -c "write -d blocksize 3000"
hostile blocklog "blocklog" -c "write -d blocklog 250"
hostile sectsize "sectsize" -c "write -d sectsize 0"
hostile inodesize "inodesize" -c "write -d inodesize 77"
hostile dblocks-huge "dblocks" -c "write -d dblocks 18446744073709551615"
hostile dblocks-0 "dblocks" -c "write -d dblocks 0"
hostile logstart "log" -c "write -d logstart 18446744073709551"
hostile logblocks "log" -c "write -d logblocks 4294967295"
hostile agblklog "agblklog" -c "write -d agblklog 63"
hostile magic "not an XFS" -c "write -d magicnum 0x12345678"
# An unknown incompatible feature is not damage: refuse, do not guess.
cp --sparse=always "$T/good" "$T/h"
xfs_db -x -c "sb 0" -c "write -d features_incompat 0x40000000" "$T/h" >/dev/null 2>&1
# Not damage and not understood: named as not checked, exit 5 (issue 20).
expect 5 "incompatible feature bits 0x40000000\) was not checked" \
	"unknown incompat feature" "$REPAIR" -n "$T/h"
expect 5 "refusing to change anything" "unknown incompat feature, repair" \
	"$REPAIR" "$T/h"
# Every superblock wiped: no secondary to fall back on.
cp --sparse=always "$T/good" "$T/h"
for ag in 3 2 1 0; do
	xfs_db -x -c "sb $ag" -c "write -d magicnum 0" "$T/h" >/dev/null 2>&1
done
expect 1 "no good secondary" "all superblocks gone" "$REPAIR" -n "$T/h"
hostile dirblklog "dirblklog" -c "write -d dirblklog 200"

# Options.
expect 1 "Usage" no-device "$REPAIR" -n
expect 1 "Usage" bad-option "$REPAIR" -n -Q "$T/good"
expect 1 "more than one" two-devices "$REPAIR" -n "$T/good" "$T/good"
expect 0 "version" version "$REPAIR" -V
# Without -n, a clean filesystem with a clean log is left byte for byte
# as it was.
sum1=$(image_state "$T/good")
"$REPAIR" "$T/good" >"$T/out" 2>&1; rc=$?
[ $rc -eq 0 ] || fail "repair of a clean image: exit $rc: $(cat "$T/out")"
[ "$(image_state "$T/good")" = "$sum1" ] && pass "repair of a clean image changes nothing" ||
	fail "repair changed a clean image"
expect 1 "does not go with it" n-and-z "$REPAIR" -n -z "$T/u.undo" "$T/good"
expect 1 "does not go with it" n-and-e "$REPAIR" -n -e "$T/good"
finish
