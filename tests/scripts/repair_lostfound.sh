#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# xfskit-repair's /lost+found at scale and its rewrite of directories
# that carry extended attributes, against xfs_repair.
#
# One image is populated through the kernel: a directory of 2000 files,
# one of 12, one of 300 subdirectories (a file in each), and three
# directories of 300 files with xattrs: a short-form attr fork, an
# extent list (a 3000-byte value and 40 more names), a btree (remote
# values interleaved with another file's blocks).  Each file has content
# of its own.  Cases, each on a copy corrupted with xfs_db or dd (never
# mounted while corrupt):
#  - few-orphans: the 12-file directory's blocks zeroed: /lost+found is
#    made short form and filled in place;
#  - big-orphans: every block of the 2000-file directory zeroed, so all
#    2000 files become orphans (far more than a short-form /lost+found
#    holds: /lost+found and the root are rewritten by the builder);
#  - lf-exists: the subdirectory case again on the repaired image of
#    big-orphans, whose /lost+found of 2000 entries is rewritten;
#  - dir-orphans: the same for the directory of 300 subdirectories
#    (reconnected directories get ".." = /lost+found, and /lost+found a
#    link count of 2 + 300);
#  - xattr-sf-dir, -blk-dir, -bt-dir: a data block entry of a directory with
#    xattrs broken, so the directory is rewritten; its xattrs must
#    survive (getfattr before and after, on kernel mounts), an attr
#    fork in blocks on the same blocks;
#  - root-block: on a second image whose root is in block form, 500
#    orphans: /lost+found is created and the root rewritten.
# For each case one copy is repaired by xfskit-repair and one by
# xfs_repair.  Ours must exit 0, leave an image xfs_repair -n finds
# clean and a second xfskit-repair -n finds clean, that the kernel
# mounts and walks without an XFS error in its log, and keep at least as
# many files (found anywhere with identical content, /lost+found
# included) as xfs_repair keeps.
. "$XK_SRCDIR/tests/scripts/lib.sh"
. "$XK_SRCDIR/tests/scripts/repair_lib.sh"
need_xfsprogs
[ "$(id -u)" -eq 0 ] || skip "populating and walking images needs root (loop mount)"
command -v setfattr >/dev/null && command -v getfattr >/dev/null ||
	skip "setfattr/getfattr are not installed (attr package)"

img="$T/base.img"
mkfs_xfs_image "$img" 320m || { fail "mkfs.xfs: $(cat "$T/mkfs.out")"; finish; }
loop_mount "$img" || finish
m=$MNT
mkdir "$m/big" "$m/dirs" "$m/few" "$m/xa_sf" "$m/xa_blk" "$m/xa_bt"
for i in $(seq 1 2000); do echo "big file $i" >"$m/big/f$i"; done
for i in $(seq 1 12); do echo "few file $i" >"$m/few/a_file_$i"; done
for i in $(seq 1 300); do
	mkdir "$m/dirs/d$i"
	echo "subdir file $i" >"$m/dirs/d$i/inside"
done
for d in xa_sf xa_blk xa_bt; do
	for i in $(seq 1 300); do
		echo "$d file $i" >"$m/$d/file_number_$i"
	done
done
setfattr -n user.colour -v blue "$m/xa_sf"
setfattr -n trusted.t -v x "$m/xa_sf"
setfattr -n user.big -v "$(head -c 3000 /dev/zero | tr '\0' v)" "$m/xa_blk"
for i in $(seq 1 40); do
	setfattr -n "user.name_$i" -v "value_$i" "$m/xa_blk"
done
# 60 remote values, every other one removed: the holes between their
# ranges of the attr fork's offsets leave 30 extents, too many for the
# inode (btree format), whatever blocks the allocator chose.
python3 - "$m/xa_bt" <<'PY'
import os, sys
for i in range(1, 61):
    os.setxattr(sys.argv[1], "user.v%d" % i, b"a" * 5000)
for i in range(2, 61, 2):
    os.removexattr(sys.argv[1], "user.v%d" % i)
PY
entries "$m" >"$T/tree.base"
declare -A INO ATTRS
for d in big dirs few xa_sf xa_blk xa_bt; do
	INO[$d]=$(stat -c %i "$m/$d")
	ATTRS[$d]=$(getfattr -d -m - -h "$m/$d" 2>/dev/null | grep -v '^# file')
done
loop_umount
declare -A AMAP
for d in xa_blk xa_bt; do
	AMAP[$d]=$(xfs_db -r -c "inode ${INO[$d]}" -c "bmap -a" "$img")
done
files=$(contents "$T/tree.base" | wc -l)
fmts=$(for d in xa_sf xa_blk xa_bt; do
	db_get "$img" "inode ${INO[$d]}" core.aformat
done | tr '\n' /)
[ "$fmts" = "1 (local)/2 (extents)/3 (btree)/" ] ||
	fail "attr fork formats are $fmts, not local, extents, btree"
xfs_repair -n "$img" >/dev/null 2>&1 || fail "base image not clean for xfs_repair"
bsize=$(db_get "$img" "sb 0" blocksize)

# zero_dir IMG INO: zero every block the directory's data fork maps.
zero_dir() {
	local sb cnt d n=0
	while read -r sb cnt; do
		d=$(xfs_db -r -c "convert fsb $sb daddr" "$1" | awk '{print $1}')
		dd if=/dev/zero of="$1" bs=512 seek=$((d)) \
			count=$((cnt * bsize / 512)) conv=notrunc status=none
		n=$((n + 1))
	done < <(xfs_db -r -c "inode $2" -c "bmap" "$1" |
		 sed -n 's/^data offset [0-9]* startblock \([0-9]*\) .* count \([0-9]*\) .*/\1 \2/p')
	[ "$n" -gt 0 ]
}

# attrs_of IMG DIR: the xattrs of DIR on a kernel mount of a copy of IMG.
attrs_of() {
	cp --sparse=always "$1" "$T/attr.img"
	loop_mount "$T/attr.img" || return 1
	getfattr -d -m - -h "$MNT/$2" 2>/dev/null | grep -v '^# file'
	loop_umount
	rm -f "$T/attr.img"
}

row() {
	printf '%-14s %-8s %-8s %-8s %-10s %9s %9s\n' "$@"
}

# run_case NAME DIR CORRUPTION...: CORRUPTION is "zero" or xfs_db
# commands; the case starts from $from (the base image by default), its
# files are counted against $base (the base image's tree by default).
run_case() {
	local name=$1 dir=$2 rc xr kern ours theirs again=clean args=() c
	shift 2
	cp --sparse=always "${from:-$img}" "$T/c.img"
	if [ "$1" = zero ]; then
		zero_dir "$T/c.img" "${INO[$dir]}" || fail "$name: no blocks to zero"
	else
		for c in "$@"; do args+=(-c "$c"); done
		xfs_db -x "${args[@]}" "$T/c.img" >"$T/db.out" 2>&1
	fi
	if same_image "${from:-$img}" "$T/c.img"; then
		fail "$name: the corruption changed nothing: $(head -3 "$T/db.out")"
		return
	fi
	cp --sparse=always "$T/c.img" "$T/x.img"
	"$REPAIR" "$T/c.img" >"$T/ours.out" 2>&1; rc=$?
	xfs_repair -n "$T/c.img" >"$T/xrn.out" 2>&1; xr=$?
	ours=0 kern=- REPAIRED=0
	if [ $xr -eq 0 ]; then
		REPAIRED=1
		kern=$(walk "$T/c.img" "$T/tree.ours")
		[ -z "$kern" ] && kern=ok
		ours=$(files_kept "${base:-$T/tree.base}" "$T/tree.ours")
	fi
	xfs_repair "$T/x.img" >"$T/xr.out" 2>&1
	xfs_repair -n "$T/x.img" >/dev/null 2>&1 ||
		xfs_repair "$T/x.img" >>"$T/xr.out" 2>&1
	theirs=0
	if xfs_repair -n "$T/x.img" >/dev/null 2>&1; then
		walk "$T/x.img" "$T/tree.theirs" >/dev/null
		theirs=$(files_kept "${base:-$T/tree.base}" "$T/tree.theirs")
	fi
	if ! "$REPAIR" -n "$T/c.img" >"$T/again.out" 2>&1 ||
	   repair_own "$T/again.out" | grep -q .; then
		again=dirty
	fi
	row "$name" "exit $rc" "xr-n $xr" "$again" "$kern" "$ours" "$theirs"
	[ $rc -eq 0 ] || fail "$name: xfskit-repair exit $rc: $(tail -3 "$T/ours.out")"
	[ $xr -eq 0 ] || fail "$name: xfs_repair -n after ours: $(grep -v 'host filesystem\|sector size\|^Phase\|^  *- ' "$T/xrn.out" | head -5)"
	[ "$again" = clean ] || fail "$name: second run (-n) not clean: $(repair_own "$T/again.out" | head -3)"
	[ "$kern" = ok ] || fail "$name: kernel walk: $kern"
	[ "$ours" -ge "$theirs" ] || fail "$name: ours keeps $ours files, xfs_repair $theirs"
	KEPT=$ours
}

echo "files recorded: $files"
row case ours "xr -n" "again" kernel "kept:us" "kept:xr"

# A few orphans: a short-form /lost+found made and filled in place.
run_case few-orphans few zero
n=$(grep -c '^\./lost+found/[0-9]*	f	' "$T/tree.ours")
[ "$n" -eq 12 ] && pass "few-orphans: 12 files under /lost+found" ||
	fail "few-orphans: $n files under /lost+found, 12 expected"
[ "$(db_get "$T/c.img" "path /lost+found" core.format)" = "1 (local)" ] ||
	fail "few-orphans: /lost+found is not short form"

run_case big-orphans big zero
cp --sparse=always "$T/c.img" "$T/lf.img"
# Every file of the directory is in /lost+found under its inode number.
n=$(grep -c '^\./lost+found/[0-9]*	f	' "$T/tree.ours")
[ "$n" -ge 2000 ] && pass "big-orphans: $n files reconnected under /lost+found" ||
	fail "big-orphans: $n files under /lost+found, 2000 expected"
# Each name is the inode number it names (xfs_db ls: offset, ino, type, hash, length, name).
bad=$(xfs_db -r -c "path /lost+found" -c "ls" "$T/c.img" |
	awk '$6 ~ /^[0-9]+$/ && $2 != $6' | wc -l)
[ "$bad" -eq 0 ] || fail "big-orphans: $bad /lost+found names are not their inode number"
case "$(db_get "$T/c.img" "path /lost+found" core.format)" in
"2 (extents)"|"3 (btree)") ;;
*) fail "big-orphans: /lost+found is not in blocks" ;;
esac

run_case dir-orphans dirs zero
n=$(grep -c '^\./lost+found/[0-9]*/inside	f	' "$T/tree.ours")
[ "$n" -eq 300 ] && pass "dir-orphans: 300 directories reconnected with their files" ||
	fail "dir-orphans: $n directories with their file under /lost+found, 300 expected"
nl=$(xfs_db -r -c "path /lost+found" -c "print core.nlinkv2" "$T/c.img" |
	sed -n 's/^core.nlinkv2 = //p')
[ "$nl" = 302 ] && pass "dir-orphans: /lost+found link count 302" ||
	fail "dir-orphans: /lost+found link count $nl, 302 expected"

# Again on the repaired image, whose /lost+found is now a node-form
# directory of 2000 entries: it is salvaged and the new orphans added.
from="$T/lf.img" run_case lf-exists dirs zero
n=$(grep -c '^\./lost+found/[0-9]*	f	' "$T/tree.ours")
nd=$(grep -c '^\./lost+found/[0-9]*/inside	f	' "$T/tree.ours")
[ "$n" -ge 2000 ] && [ "$nd" -eq 300 ] &&
	pass "lf-exists: /lost+found keeps its $n files and gains 300 directories" ||
	fail "lf-exists: /lost+found has $n files and $nd directories (2000, 300 expected)"

for d in xa_sf xa_blk xa_bt; do
	run_case "xattr-${d#xa_}-dir" "$d" "inode ${INO[$d]}" "dblock 0" \
		"write -d du[3].namelen 0"
	grep -q "Rewrote directory ${INO[$d]}" "$T/ours.out" ||
		fail "xattr-${d#xa_}-dir: directory ${INO[$d]} was not rewritten: $(tail -3 "$T/ours.out")"
	# Only an image xfs_repair -n calls clean goes to the kernel.
	got=
	[ "$REPAIRED" = 1 ] && got=$(attrs_of "$T/c.img" "$d")
	if [ -n "${ATTRS[$d]}" ] && [ "$got" = "${ATTRS[$d]}" ]; then
		pass "xattr-${d#xa_}-dir: the directory's xattrs survive ($(echo "$got" | grep -c =) names)"
	else
		fail "xattr-${d#xa_}-dir: xattrs differ after repair: $(echo "$got" | head -3 | cut -c1-80)"
	fi
	# An attr fork in blocks keeps its very blocks.
	if [ -n "${AMAP[$d]:-}" ]; then
		[ "$(xfs_db -r -c "inode ${INO[$d]}" -c "bmap -a" "$T/c.img")" = "${AMAP[$d]}" ] &&
			pass "xattr-${d#xa_}-dir: attr fork extents unchanged" ||
			fail "xattr-${d#xa_}-dir: attr fork extents moved"
	fi
done

# A root in block form gaining /lost+found: the root is rewritten too.
img2="$T/root.img"
mkfs_xfs_image "$img2" 320m || { fail "mkfs.xfs: $(cat "$T/mkfs.out")"; finish; }
loop_mount "$img2" || finish
for i in $(seq 1 150); do echo "root file $i" >"$MNT/root_file_$i"; done
mkdir "$MNT/sub"
for i in $(seq 1 500); do echo "sub file $i" >"$MNT/sub/f$i"; done
entries "$MNT" >"$T/tree.root"
INO[sub]=$(stat -c %i "$MNT/sub")
loop_umount
[ "$(db_get "$img2" "inode $(db_get "$img2" "sb 0" rootino)" core.format)" != "1 (local)" ] ||
	fail "root-block: the root is short form"
from="$img2" base="$T/tree.root" run_case root-block sub zero
grep -q "Created /lost+found" "$T/ours.out" &&
	[ "$(grep -c '^\./lost+found/[0-9]*	f	' "$T/tree.ours")" -eq 500 ] &&
	pass "root-block: /lost+found created in a block-form root, 500 files in it" ||
	fail "root-block: $(tail -3 "$T/ours.out")"
finish
