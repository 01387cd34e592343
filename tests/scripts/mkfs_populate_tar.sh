#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# xfskit-mkfs -p ARCHIVE: GNU tar archives (pax format, with xattrs,
# POSIX ACLs and sparse files) of the test tree, plain and compressed
# with gzip, xz and zstd.  For each, xfs_repair -n is clean and the
# kernel's tree record of the image equals the source's (times with
# nanoseconds included; sockets left out: tar does not archive them).
# Then a damaged archive must fail with a message and leave no valid
# superblock behind.
. "$XK_SRCDIR/tests/scripts/lib.sh"
. "$XK_SRCDIR/tests/scripts/mkfs_populate_lib.sh"
need_xfsprogs

pop_make_tree --whole-negative
SRC="$TM/src"
$TREC record "$SRC" | grep -v '^special/sock ' >"$T/src.rec"
sed -i '/^links\/outside /s/ nlink=2 / nlink=1 /' "$T/src.rec"

tar_opts="--format=posix --xattrs --xattrs-include=* --acls --sparse
	--numeric-owner -C $SRC"
# shellcheck disable=SC2086
tar $tar_opts -cf "$T/t.tar" . 2>"$T/tar.err"
# tar skips sockets with a warning; anything else is an error.
if grep -v 'socket ignored' "$T/tar.err" | grep -q . || [ ! -s "$T/t.tar" ]; then
	fail "tar failed: $(cat "$T/tar.err")"
	finish
fi
archives=t.tar
# Each compressor that is installed (scripts/deps installs them all).
if command -v gzip >/dev/null; then
	gzip -c "$T/t.tar" >"$T/t.tar.gz" && archives="$archives t.tar.gz"
fi
if command -v xz >/dev/null; then
	xz -T1 -c "$T/t.tar" >"$T/t.tar.xz" && archives="$archives t.tar.xz"
fi
if command -v zstd >/dev/null; then
	zstd -q -c "$T/t.tar" >"$T/t.tar.zst" && archives="$archives t.tar.zst"
fi
[ "$archives" = t.tar ] && echo "note: no compressor installed; plain tar only"

for a in $archives; do
	rm -f "$T/img"
	truncate -s 1g "$T/img"
	if ! "$MKFS" -f -q -p "$T/$a" "$T/img" >"$T/mkfs.out" 2>&1; then
		fail "xfskit-mkfs -p $a failed: $(head -5 "$T/mkfs.out")"
		continue
	fi
	pop_repair_clean "$T/img" "$a"
	loop_mount "$T/img" || continue
	$TREC record "$MNT" >"$T/img.rec"
	loop_umount
	pop_same_record "$T/src.rec" "$T/img.rec" "source vs $a"
done

# A truncated archive: an error naming the archive, a non-zero exit,
# and an image without a valid primary superblock.
head -c 200000 "$T/t.tar" >"$T/cut.tar"
rm -f "$T/img"
truncate -s 1g "$T/img"
if "$MKFS" -f -q -p "$T/cut.tar" "$T/img" >"$T/cut.out" 2>&1; then
	fail "a truncated archive was accepted"
else
	grep -q "cut.tar" "$T/cut.out" &&
		pass "truncated archive refused: $(head -1 "$T/cut.out" | cut -c1-150)" ||
		fail "truncated archive: no message naming it: $(cat "$T/cut.out")"
	magic=$(od -An -tx1 -N4 "$T/img" | tr -d ' ')
	[ "$magic" = 00000000 ] && pass "the half-built image has no superblock magic" ||
		fail "the half-built image still has magic $magic"
fi
finish
