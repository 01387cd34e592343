#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# xfskit-mkfs -p PROTOFILE against mkfs.xfs -p PROTOFILE: one protofile
# describing the test tree (files, directories, symlinks, devices, FIFOs,
# setuid/setgid modes, owners; the format has no xattrs, hard links or
# times) goes through both; xfs_repair -n is clean on ours and the kernel
# shows the same tree record for both images (times left out: both tools
# stamp the build time).  Also: ownership override, the parser's
# refusals, and a protofile error leaving the device untouched.
. "$XK_SRCDIR/tests/scripts/lib.sh"
. "$XK_SRCDIR/tests/scripts/mkfs_populate_lib.sh"
need_xfsprogs

pop_make_tree
SRC="$TM/src"
$TREC protofile "$SRC" >"$T/proto" || fail "writing the protofile"
# mkfs.xfs 6.1 writes remote symlinks the kernel reads as corrupt
# (EUCLEAN): its protofile keeps only inline ones.
$TREC protofile "$SRC" 300 >"$T/proto.short" || fail "writing the protofile"

truncate -s 1g "$T/ours" "$T/theirs"
"$MKFS" -f -q -p "$T/proto" "$T/ours" >"$T/mkfs.out" 2>&1 ||
	fail "xfskit-mkfs -p protofile failed: $(cat "$T/mkfs.out")"
mkfs.xfs -f -q -p "$T/proto.short" "$T/theirs" >"$T/mkfsxfs.out" 2>&1 ||
	fail "mkfs.xfs -p protofile failed: $(cat "$T/mkfsxfs.out")"
pop_repair_clean "$T/ours" "protofile image"

if loop_mount "$T/theirs"; then
	$TREC record "$MNT" --no-times >"$T/theirs.rec"
	loop_umount
	loop_mount "$T/ours" || finish
	$TREC record "$MNT" --no-times | grep -v '^links/long' >"$T/ours.rec"
	for l in long1020 long801; do
		[ "$(readlink "$MNT/links/$l")" = "$(readlink "$SRC/links/$l")" ] ||
			fail "the remote symlink links/$l differs"
	done
	loop_umount
	pop_same_record "$T/theirs.rec" "$T/ours.rec" \
		"xfskit-mkfs vs mkfs.xfs, same protofile"
	[ "$(wc -l <"$T/ours.rec")" -gt 500 ] ||
		fail "the protofile image holds too few paths"
fi

# uid=/gid= override every owner.
rm -f "$T/own"
truncate -s 1g "$T/own"
"$MKFS" -f -q -p "$T/proto,uid=4321,gid=8765" "$T/own" >"$T/mkfs.out" 2>&1 ||
	fail "-p proto,uid=,gid= failed: $(cat "$T/mkfs.out")"
if loop_mount "$T/own"; then
	n=$(find "$MNT" \( ! -uid 4321 -o ! -gid 8765 \) | wc -l)
	[ "$n" -eq 0 ] && pass "uid=/gid= override every owner" ||
		fail "$n paths escaped the uid=/gid= override"
	loop_umount
fi

# Parser refusals: each must fail before the device is written.
bad() {
	printf '%s\n' "$2" >"$T/bad.proto"
	rm -f "$T/bad.img"
	truncate -s 512m "$T/bad.img"
	if "$MKFS" -f -q -p "$T/bad.proto" "$T/bad.img" >"$T/bad.out" 2>&1; then
		fail "protofile with $1 was accepted"
	elif ! grep -q "$3" "$T/bad.out"; then
		fail "protofile with $1: unexpected message: $(cat "$T/bad.out")"
	elif [ "$(stat -c %b "$T/bad.img")" -ne 0 ]; then
		fail "protofile with $1: the device was written"
	else
		pass "protofile with $1 refused: $(head -1 "$T/bad.out" | cut -c1-120)"
	fi
}
bad "a bad type" 'boot 0 0 d--755 0 0 f x--644 0 0 /etc/hostname $ $' "bad file type"
bad "a bad setuid flag" 'boot 0 0 d--755 0 0 f -x-644 0 0 /etc/hostname $' "setuid"
bad "a non-octal mode" 'boot 0 0 d--755 0 0 f ---648 0 0 /etc/hostname $' "permissions"
bad "a missing file" 'boot 0 0 d--755 0 0 f ---644 0 0 /nonexistent/x $' "cannot read"
bad "a truncated file" 'boot 0 0 d--755 0 0 sub d--755 0 0' "ends where"
bad "a file root" 'boot 0 0 ---644 0 0 /etc/hostname' "root must be a directory"
bad "a duplicate name" 'boot 0 0 d--755 0 0 a p--644 0 0 a p--644 0 0 $' "twice"
bad "a bad uid" 'boot 0 0 d--755 x 0 $' "bad number"
bad "a 256-byte name" "boot 0 0 d--755 0 0 $(head -c 256 /dev/zero | tr '\0' n) p--644 0 0 \$" "longer than 255"
bad "a bad device number" 'boot 0 0 d--755 0 0 c c--644 0 0 5000 1 $' "bad number"

# Comments and the man page's layout are accepted.
cat >"$T/ok.proto" <<'PROTO'
/stand/diskboot
4872 110
d--777 3 1
usr     d--777 3 1
sh      ---755 3 1 /etc/hostname
ken     d--755 6 1
	$
b0      b--644 3 1 0 0
c0      c--644 3 1 0 0
fifo    p--644 3 1
slink   l--644 3 1 /a/symbolic/link
:  This is a comment line
$
$
PROTO
rm -f "$T/ok.img"
truncate -s 512m "$T/ok.img"
"$MKFS" -f -q -p "$T/ok.proto" "$T/ok.img" >"$T/ok.out" 2>&1 &&
	pass "the man page's example protofile" ||
	fail "the man page's example protofile: $(cat "$T/ok.out")"
pop_repair_clean "$T/ok.img" "man page protofile"
finish
