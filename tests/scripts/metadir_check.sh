#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Filesystems with the metadata directory tree (mkfs.xfs 7.2 -m
# metadir=1, incompat feature 0x100), without a realtime volume, against
# xfs_repair 7.2 and the host kernel.
#
# An image made by mkfs.xfs 7.2 -m metadir=1 and populated by the kernel
# (short-form and block directories, hard links, a symlink, an xattr):
#  - xfs_repair 7.2 -n and our -n find it clean, fresh and populated,
#    and our -n writes nothing;
#  - damage to the metadata tree made with xfs_db 7.2 (a metadata
#    inode's flag, metafile type, owner, mandatory flags, link count;
#    an entry of the metadata root naming a user inode; a user directory
#    naming a metadata inode): where xfs_repair 7.2 -n finds it, our -n
#    does too, and our repair either leaves an image xfs_repair 7.2 -n
#    calls clean or refuses and writes nothing (same bytes); a link
#    count alone (of the metadata root or of /rtgroups) and the
#    metadata root's ".." naming another directory (which 7.2 -n lets
#    pass) must be repaired: the count xfs_repair 7.2 -n names, ".."
#    naming the root itself, the metadata tree kept and the kernel
#    mounting and walking the result without an error (xfs_repair 7.2
#    itself rebuilds the tree and drops the empty /rtgroups);
#  - damage to the user tree (a file's mode zeroed, a block directory's
#    entry naming no inode): our repair exits 0, xfs_repair 7.2 -n finds
#    the result clean, the metadata tree (xfs_db 7.2 ls -m)
#    is unchanged, and the kernel mounts and walks it without an error.
. "$XK_SRCDIR/tests/scripts/lib.sh"
. "$XK_SRCDIR/tests/scripts/repair_lib.sh"
need_xfs72
[ "$(id -u)" -eq 0 ] || skip "populating images needs root (loop mount)"

base="$T/base.img"
metadir72_image "$base"

# check_clean NAME IMG: both checkers find IMG clean, and ours writes
# nothing to it.
check_clean() {
	local sum
	xfs72 xfs_repair -n "$2" >"$T/$1.x72" 2>&1 ||
		fail "$1: xfs_repair 7.2 -n rejects it: $(grep -v '^Phase\|^  *-' "$T/$1.x72" | head -3)"
	sum=$(image_state "$2")
	"$REPAIR" -n "$2" >"$T/$1.n" 2>&1 ||
		fail "$1: our -n finds problems (exit $?): $(head -5 "$T/$1.n")"
	[ "$(image_state "$2")" = "$sum" ] || fail "$1: our -n changed the image"
}
sum=$(image_state "$base")
"$REPAIR" -n "$base" >"$T/fresh.n" 2>&1 ||
	fail "fresh: our -n finds problems on mkfs.xfs 7.2's image: $(head -5 "$T/fresh.n")"
[ "$(image_state "$base")" = "$sum" ] || fail "fresh: our -n changed the image"

loop_mount "$base" || finish
m=$MNT
mkdir -p "$m/d1/d2" "$m/blk"
echo one >"$m/d1/f"
ln "$m/d1/f" "$m/d1/d2/hard"
ln -s target "$m/d1/sym"
echo xa >"$m/d1/xattr_file"
setfattr -n user.colour -v blue "$m/d1/xattr_file" 2>/dev/null
for i in $(seq 1 200); do echo "blk $i" >"$m/blk/file_$i"; done
ino() { stat -c %i "$m/$1"; }
d1=$(ino d1) blk=$(ino blk) f=$(ino d1/f)
entries "$m" >"$T/tree.base"
loop_umount
check_clean populated "$base"

mdir=$(xfs72 xfs_db -r -c "sb 0" -c "print metadirino" "$base" | sed 's/.* = //')
# The metadata root's first entry (rtgroups, a metadata directory).
sub=$(xfs72 xfs_db -r -c "inode $mdir" -c "print u3.sfdir3.list[0].inumber.i4" "$base" | sed 's/.* = //')
case "$mdir$sub" in
*[!0-9]*|"") fail "no metadata tree in the image (metadirino '$mdir', first entry '$sub')"; finish ;;
esac
metadir72_tree "$base" >"$T/mtree.base"
rootino=$(xfs72 xfs_db -r -c "sb 0" -c "print rootino" "$base" | sed 's/.* = //')
rcount=$(xfs72 xfs_db -r -c "inode $d1" -c "print u3.sfdir3.hdr.count" "$base" | sed 's/.* = //')

# name|xfs_db commands; metadata-tree damage first, then user-tree damage.
# The cases of the same kind beyond the first few run with XK_TEST_LONG=1.
meta_cases="
meta-flag-cleared|inode $sub|write -d v3.metadata 0
meta-nlink|inode $sub|write -d core.nlinkv2 5
meta-root-nlink|inode $mdir|write -d core.nlinkv2 1
meta-root-dotdot|inode $mdir|write -d u3.sfdir3.hdr.parent.i4 $rootino
meta-names-user|inode $mdir|write -d u3.sfdir3.list[0].inumber.i4 $f
user-names-meta|inode $d1|write -d u3.sfdir3.list[0].inumber.i4 $sub
"
user_cases="
file-cleared|inode $f|write -d core.mode 0
blk-entry|inode $blk|dblock 0|write -d du[5].inumber 4000000
"
if [ "${XK_TEST_LONG:-0}" = 1 ]; then
	meta_cases="$meta_cases
meta-type|inode $sub|write -d core.metatype 5
meta-uid|inode $mdir|write -d core.uid 7
meta-flags|inode $sub|write -d core.immutable 0
meta-root-zeroed|inode $mdir|write -d core.mode 0
"
	user_cases="$user_cases
entry-lost|inode $d1|write -d u3.sfdir3.hdr.count $((rcount - 1))
"
fi

# meta_repair_kept NAME IMG: after a repair of a link count or of the
# metadata root's "..": the count is the one xfs_repair 7.2 -n named,
# ".." names the root itself, the metadata tree is as it was, and the
# kernel mounts and walks the filesystem without an error.
meta_repair_kept() {
	local name=$1 img=$2 ino want got errs
	case $name in
	*-nlink)
		read -r ino want < <(sed -n 's/.*would have reset inode \([0-9]*\) nlinks from [0-9]* to \([0-9]*\).*/\1 \2/p' "$T/$name.x72n" | head -1)
		if [ -z "$want" ]; then
			fail "$name: xfs_repair 7.2 -n did not name a link count: $(grep -v '^Phase\|^  *-' "$T/$name.x72n" | head -3)"
			return
		fi
		got=$(xfs72 xfs_db -r -c "inode $ino" -c "print core.nlinkv2" "$img" | sed 's/.* = //')
		[ "$got" = "$want" ] ||
			fail "$name: inode $ino has link count $got after our repair, xfs_repair 7.2 -n wanted $want" ;;
	*-dotdot)
		got=$(xfs72 xfs_db -r -c "inode $mdir" -c "print u3.sfdir3.hdr.parent.i4" "$img" | sed 's/.* = //')
		[ "$got" = "$mdir" ] ||
			fail "$name: \"..\" of the metadata root names $got after our repair" ;;
	esac
	metadir72_tree "$img" >"$T/$name.mtree"
	cmp -s "$T/mtree.base" "$T/$name.mtree" ||
		fail "$name: the metadata tree changed: $(diff "$T/mtree.base" "$T/$name.mtree" | head -4)"
	errs=$(walk "$img" "$T/$name.tree")
	[ -z "$errs" ] || fail "$name: the kernel: $errs"
	cmp -s "$T/tree.base" "$T/$name.tree" ||
		fail "$name: the user tree changed: $(diff "$T/tree.base" "$T/$name.tree" | head -4)"
}

meta_case() {
	local name=$1 img="$T/$1.img" sum rc
	damage72 "$name" "$2" "$base" "$img" || return
	xfs72 xfs_repair -n "$img" >"$T/$name.x72n" 2>&1
	local x72=$?
	"$REPAIR" -n "$img" >"$T/$name.n" 2>&1
	rc=$?
	if [ $x72 != 0 ] && [ $rc = 0 ]; then
		fail "$name: our -n finds nothing where xfs_repair 7.2 -n does: $(grep -v '^Phase\|^  *-' "$T/$name.x72n" | head -3)"
		return
	fi
	sum=$(image_state "$img")
	"$REPAIR" "$img" >"$T/$name.r" 2>&1
	rc=$?
	if [ $rc = 0 ]; then
		if ! xfs72 xfs_repair -n "$img" >"$T/$name.after" 2>&1; then
			fail "$name: after our repair (exit 0) xfs_repair 7.2 -n is not clean: $(grep -v '^Phase\|^  *-' "$T/$name.after" | head -3)"
			return
		fi
		case $name in *-nlink|*-dotdot) meta_repair_kept "$name" "$img" ;; esac
		pass "$name: 7.2 -n exit $x72; repaired"
	elif case $name in *-nlink|*-dotdot) true ;; *) false ;; esac; then
		fail "$name: a metadata inode's link count or the metadata root's \"..\" was not repaired (exit $rc): $(tail -3 "$T/$name.r")"
	elif [ "$(image_state "$img")" != "$sum" ]; then
		fail "$name: our repair failed (exit $rc) but wrote to the image: $(tail -2 "$T/$name.r")"
	elif ! grep -q "metadata directory tree is damaged" "$T/$name.r"; then
		fail "$name: our repair failed (exit $rc) without saying why: $(tail -3 "$T/$name.r")"
	else
		pass "$name: 7.2 -n exit $x72; ours found it and refused, nothing written"
	fi
}

user_case() {
	local name=$1 img="$T/$1.img" rc errs
	damage72 "$name" "$2" "$base" "$img" || return
	xfs72 xfs_repair -n "$img" >"$T/$name.x72n" 2>&1 &&
		{ fail "$name: the damage is not damage to xfs_repair 7.2 -n"; return; }
	"$REPAIR" -n "$img" >"$T/$name.n" 2>&1 &&
		{ fail "$name: our -n finds nothing where xfs_repair 7.2 -n does"; return; }
	"$REPAIR" "$img" >"$T/$name.r" 2>&1
	rc=$?
	[ $rc = 0 ] || { fail "$name: our repair exits $rc: $(tail -3 "$T/$name.r")"; return; }
	if ! xfs72 xfs_repair -n "$img" >"$T/$name.after" 2>&1; then
		fail "$name: after our repair xfs_repair 7.2 -n is not clean: $(grep -v '^Phase\|^  *-' "$T/$name.after" | head -3)"
		return
	fi
	metadir72_tree "$img" >"$T/$name.mtree"
	cmp -s "$T/mtree.base" "$T/$name.mtree" ||
		fail "$name: the metadata tree changed: $(diff "$T/mtree.base" "$T/$name.mtree" | head -4)"
	errs=$(walk "$img" "$T/$name.tree")
	[ -z "$errs" ] || { fail "$name: the kernel: $errs"; return; }
	pass "$name: repaired, clean for xfs_repair 7.2, metadata tree kept, $(preserved "$T/$name.tree") of $(wc -l <"$T/tree.base") entries kept"
}

while IFS='|' read -r name cmds; do
	[ -n "$name" ] && meta_case "$name" "$cmds"
done <<<"$meta_cases"
while IFS='|' read -r name cmds; do
	[ -n "$name" ] && user_case "$name" "$cmds"
done <<<"$user_cases"
finish
