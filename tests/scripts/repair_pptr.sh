#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Repair of parent-pointer filesystems (mkfs.xfs 7.2's default -n
# parent=1), against xfs_repair 7.2.
#
# One image is made by mkfs.xfs 7.2 and populated by the kernel: short
# form directories, a block directory of 200 files, a file with hard
# links in two directories, a file whose parent pointers fill a leaf
# block (80 links), a file with a user xattr beside its pointer.  Cases,
# each on a copy damaged with xfs_db 7.2 (never mounted while damaged):
# parent pointers themselves (generations in short form, beside a user
# xattr and in a leaf block; a name, a directory changed, one removed),
# and damage whose repair changes the tree (a short-form entry lost: its
# file to /lost+found; a block directory's entry naming no inode: the
# directory rewritten; a hard-linked file's inode zeroed: its entries
# removed; a block directory's inode zeroed: rebuilt from the device
# scan's blocks, its 200 files in place (7.2: to /lost+found); the root's inode zeroed: a new root, everything to
# /lost+found; a symlink's magic zeroed, in a cluster with pointers
# around it: no pointer called wrong; the only entry of a directory,
# naming a directory, lost).  For each:
#  - where xfs_repair 7.2 -n finds parent pointers wrong, our -n does too;
#  - xfskit-repair exits 0, then xfs_repair 7.2 -n and our -n find the
#    image clean;
#  - the kernel mounts and walks it without an XFS error, and the parent
#    pointers it reports (GETPARENTS) are exactly the tree's entries,
#    and the user xattr beside a parent pointer is still there;
#  - we keep at least as many files (path, type, content) as xfs_repair
#    7.2 keeps on a copy, and at least as many file contents anywhere;
#  - a file or directory whose entry is lost but whose parent pointer
#    survives is back in its place, not in /lost+found (xfs_repair 7.2
#    moves it there), and the repair says so.
. "$XK_SRCDIR/tests/scripts/lib.sh"
. "$XK_SRCDIR/tests/scripts/repair_lib.sh"
need_xfs72
[ "$(id -u)" -eq 0 ] || skip "populating and walking images needs root (loop mount)"
command -v python3 >/dev/null 2>&1 || skip "python3 is not installed"
command -v setfattr >/dev/null 2>&1 || skip "setfattr is not installed (attr package)"
GP="$XK_BUILDDIR/tests/tools/xk_getparents"
[ -x "$GP" ] || skip "xk_getparents not built (make check builds it)"
EXPECT="python3 $XK_SRCDIR/tests/scripts/pptr_expect.py"

base="$T/base.img"
truncate -s 320m "$base"
xfs72 mkfs.xfs -q -f -n parent=1 "$base" >"$T/mkfs.out" 2>&1 ||
	{ fail "mkfs.xfs 7.2 -n parent=1: $(cat "$T/mkfs.out")"; finish; }
loop_mount "$base" || finish
m=$MNT
mkdir -p "$m/d1/d2" "$m/blk" "$m/many" "$m/sub/inner"
echo one >"$m/d1/f"
ln "$m/d1/f" "$m/d1/d2/hard"
ln -s target "$m/d1/sym"
echo xa >"$m/d1/xattr_file"
setfattr -n user.colour -v blue "$m/d1/xattr_file"
for i in $(seq 1 200); do echo "blk $i" >"$m/blk/file_$i"; done
echo many >"$m/many/0"
for i in $(seq 1 80); do ln "$m/many/0" "$m/many/link_number_$i"; done
echo inner >"$m/sub/inner/x"
ino() { stat -c %i "$m/$1"; }
root=$(ino .) d1=$(ino d1) blk=$(ino blk) f=$(ino d1/f) xf=$(ino d1/xattr_file)
many=$(ino many/0) sym=$(ino d1/sym) sub=$(ino sub)
"$GP" "$m" >"$T/base.gp" || fail "GETPARENTS failed on the kernel's tree"
$EXPECT tree "$m" >"$T/base.want"
$EXPECT gp "$T/base.gp" >"$T/base.got"
entries "$m" >"$T/tree.base"
loop_umount
cmp -s "$T/base.want" "$T/base.got" ||
	fail "the kernel's own tree: GETPARENTS differs from the entries: $(diff "$T/base.want" "$T/base.got" | head -3)"
xfs72 xfs_repair -n "$base" >"$T/base.x72" 2>&1 ||
	{ fail "xfs_repair 7.2 -n rejects the populated image: $(grep -v '^Phase\|^  *-' "$T/base.x72" | head -3)"; finish; }
"$REPAIR" -n "$base" >"$T/base.chk" 2>&1 ||
	fail "our check rejects the kernel-populated parent-pointer image: $(head -3 "$T/base.chk")"

# The short-form attr fork of $f: "f" in d1, "hard" in d2.
sfa="a.sfattr.list"
pp_field() {	# pp_field INODE NAME: the index of the pointer NAME
	xfs72 xfs_db -r -c "inode $1" -c "print a" "$base" 2>/dev/null |
		sed -n "s/^$sfa\[\([0-9]*\)\]\.name = \"$2\"$/\1/p"
}
fi=$(pp_field "$f" f) hi=$(pp_field "$f" hard) xi=$(pp_field "$xf" xattr_file)
[ -n "$fi" ] && [ -n "$hi" ] && [ -n "$xi" ] ||
	{ fail "the parent pointers of inodes $f and $xf are not in short form as expected"; finish; }
# The size of $f's attr fork with its first pointer only (header 4
# bytes, entry 3 + name + 12-byte value): the second is dropped.
keep=$((4 + 3 + $( [ "$fi" = 0 ] && echo 1 || echo 4) + 12))
# d1's entry count (short form): the last one is dropped.
rcount=$(xfs72 xfs_db -r -c "inode $d1" -c "print u3.sfdir3.hdr.count" "$base" | sed 's/.* = //')

# name|xfs_db commands
cases="
pp-gens|inode $f|write -d $sfa[$fi].parent_dir.gen 12345|inode $xf|write -d $sfa[$xi].parent_dir.gen 7|inode $many|ablock 0|write -d nvlist[3].parent_dir.gen 7
pp-name|inode $f|write -d $sfa[$fi].name \"g\"
pp-dir|inode $f|write -d $sfa[$hi].parent_dir.inumber $root
pp-removed|inode $f|write -d a.sfattr.hdr.count 1|write -d a.sfattr.hdr.totsize $keep
entry-lost|inode $d1|write -d u3.sfdir3.hdr.count $((rcount - 1))
blk-entry|inode $blk|dblock 0|write -d du[5].inumber 4000000
file-cleared|inode $f|write -d core.mode 0
dir-zeroed|inode $blk|write -d core.mode 0
root-zeroed|inode $root|write -d core.mode 0
sym-magic|inode $sym|write -d core.magic 0
dir-lost|inode $sub|write -d u3.sfdir3.hdr.count 0
"
# Cases whose damage leaves every parent pointer right: our -n must not
# call any wrong (a bad inode once hid its cluster-mates' pointers from
# the pointer check, which then reported their entries' pointers
# missing).
PPTR_RIGHT="sym-magic"
# Cases whose lost entry's parent pointer still names its place: ours
# puts the entry back there (xfs_repair 7.2: to /lost+found); the path
# that must be back after ours.
declare -A HOME=([entry-lost]=d1/xattr_file [dir-lost]=sub/inner/x)

# xfs_repair 7.2 -n's lines for parent pointers found wrong (not those
# its own planned fixes would delete, "unlinked ino N parent pointers").
X72_PPTR='(add missing|remove bad|update) ino [0-9]+ parent pointer'

one_case() {
	local name=$1 cmds=$2 ours="$T/$name.ours" theirs="$T/$name.theirs"
	local args=() c err gp since kept_o kept_t files_o files_t xa
	IFS='|' read -ra parts <<<"$cmds"
	for c in "${parts[@]}"; do args+=(-c "$c"); done
	cp --sparse=always "$base" "$ours"
	if ! xfs72 xfs_db -x "${args[@]}" "$ours" >"$T/$name.db" 2>&1 ||
	   grep -qi 'error\|invalid\|not found\|bad' "$T/$name.db"; then
		fail "$name: xfs_db 7.2 could not damage the image: $(head -3 "$T/$name.db")"
		return
	fi
	cp --sparse=always "$ours" "$theirs"
	xfs72 xfs_repair -n "$ours" >"$T/$name.x72n" 2>&1
	if [ $? = 0 ]; then
		fail "$name: the damage is not damage to xfs_repair 7.2 -n"
		return
	fi
	"$REPAIR" -n "$ours" >"$T/$name.n" 2>&1
	if [ $? = 0 ]; then
		fail "$name: our -n finds nothing where xfs_repair 7.2 -n does: $(grep -v '^Phase\|^  *-' "$T/$name.x72n" | head -3)"
	elif grep -Eq "$X72_PPTR" "$T/$name.x72n" &&
	     ! grep -q '^parent pointer is wrong' "$T/$name.n"; then
		fail "$name: xfs_repair 7.2 -n reports parent pointers, ours does not: $(head -3 "$T/$name.n")"
	elif [[ " $PPTR_RIGHT " == *" $name "* ]] &&
	     grep -q '^parent pointer is wrong' "$T/$name.n"; then
		fail "$name: our -n calls right parent pointers wrong: $(grep -m2 '^parent pointer is wrong' "$T/$name.n")"
	fi
	if ! "$REPAIR" "$ours" >"$T/$name.rep" 2>&1; then
		fail "$name: xfskit-repair failed: $(tail -3 "$T/$name.rep")"
		return
	fi
	if ! xfs72 xfs_repair -n "$ours" >"$T/$name.after" 2>&1; then
		fail "$name: after our repair xfs_repair 7.2 -n says: $(grep -v '^Phase\|^  *-\|host filesystem\|the host' "$T/$name.after" | head -4)"
		return
	fi
	"$REPAIR" -n "$ours" >"$T/$name.n2" 2>&1 ||
		fail "$name: after our repair our -n says: $(head -3 "$T/$name.n2")"
	since=$(kmsg_mark)
	loop_mount "$ours" || return
	gp=ok
	"$GP" "$MNT" >"$T/$name.gp" || gp="GETPARENTS failed"
	$EXPECT tree "$MNT" >"$T/$name.want"
	$EXPECT gp "$T/$name.gp" >"$T/$name.got"
	entries "$MNT" >"$T/$name.tree"
	if [ -n "${HOME[$name]:-}" ]; then
		if [ ! -e "$MNT/${HOME[$name]}" ]; then
			fail "$name: /${HOME[$name]} is not back in its place by its parent pointer"
		elif ! grep -q "^Returned inode .* by its parent pointer" "$T/$name.rep"; then
			fail "$name: /${HOME[$name]} is back but the repair did not say so"
		fi
	fi
	xa=$(getfattr --only-values -n user.colour "$MNT/d1/xattr_file" 2>/dev/null)
	[ ! -e "$MNT/d1/xattr_file" ] || [ "$xa" = blue ] ||
		fail "$name: d1/xattr_file lost its user xattr beside its parent pointer (now \"$xa\")"
	loop_umount
	err=$(xfs_kernel_errors "$since" | head -3)
	[ -n "$err" ] && fail "$name: the kernel logged errors on our repair: $err"
	if [ "$gp" != ok ] || ! cmp -s "$T/$name.want" "$T/$name.got"; then
		fail "$name: GETPARENTS after our repair differs from the tree: $gp $(diff "$T/$name.want" "$T/$name.got" | head -4)"
	fi
	xfs72 xfs_repair "$theirs" >"$T/$name.xr" 2>&1 ||
		xfs72 xfs_repair -L "$theirs" >>"$T/$name.xr" 2>&1
	if ! xfs72 xfs_repair -n "$theirs" >/dev/null 2>&1; then
		: >"$T/$name.ttree"
	else
		walk "$theirs" "$T/$name.ttree" >/dev/null
	fi
	kept_o=$(preserved "$T/$name.tree") kept_t=$(preserved "$T/$name.ttree")
	files_o=$(files_kept "$T/tree.base" "$T/$name.tree")
	files_t=$(files_kept "$T/tree.base" "$T/$name.ttree")
	if [ "$kept_o" -lt "$kept_t" ] || [ "$files_o" -lt "$files_t" ]; then
		fail "$name: we keep $kept_o entries ($files_o file contents), xfs_repair 7.2 keeps $kept_t ($files_t)"
	else
		pass "$name: repaired, clean to xfs_repair 7.2 -n, GETPARENTS equals the tree ($(wc -l <"$T/$name.want") inodes); kept $kept_o entries, $files_o contents (xfs_repair 7.2: $kept_t, $files_t)"
	fi
	rm -f "$ours" "$theirs"
}

while IFS='|' read -r name cmds; do
	[ -n "$name" ] || continue
	one_case "$name" "$cmds"
done <<<"$cases"
finish
