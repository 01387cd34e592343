#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# xfskit-admin -O parent=1 where the last version refused: a filesystem
# with a metadata directory tree (mkfs.xfs 7.2 -m metadir=1 -n
# parent=0), and local symlinks too long to share their inode with an
# attr fork (their target moves out to a remote block first, as the
# kernel moves it).  The oracle is xfs_repair 7.2 run on a copy given the
# PARENT bit alone: it adds every pointer the tree calls for.
#
# On a metadir image the host kernel populated (short-form and block
# directories, hard links, an xattr, local symlinks of 296, 297, 320 and
# 336 bytes, a remote one, hard-linked symlinks whose pointers end in a
# leaf, a device), and on mkfs.xfs 6.1 images made from a prototype (no
# attr forks; symlinks of 296 and 320 bytes, and of 808, 809 and 848 in
# 1024-byte inodes; entries with 100- and 200-byte names):
# - every parent pointer (child, parent, generation, name; symlinks
#   and devices included) is one xfs_repair 7.2 adds, and none is
#   missing;
# - the metadata tree's files carry theirs as mkfs.xfs 7.2 -n parent=1
#   writes them (/rtgroups: its name, the tree's root and that root's
#   generation, short form).  xfs_repair 7.2 cannot be the oracle
#   there: on any run it makes the metadata tree anew (new generations)
#   and drops an empty /rtgroups, which ours keeps as mkfs.xfs 7.2 and
#   the kernel make it;
# - a symlink of 297 bytes or more (809 in 1024-byte inodes) has its
#   target in one remote block (extents, one block), as with 7.2; one of
#   296 (808) stays local; every inode's fork offset, formats and
#   extent count are 7.2's;
# - xfs_repair 7.2 -n and xfskit-repair -n are clean (xfs_repair 6.1
#   knows neither feature); the kernel mounts the result, every path
#   reads back the same (inodes, links, sizes, content, symlink targets,
#   xattrs), its parent pointers walk up to the tree's paths, and a
#   workload runs without a kernel error, clean again after it.
# On the metadir image, -z's undo file restores it byte for byte and a
# crash mid-upgrade leaves the mark xfs_repair 7.2 completes.  Realtime
# groups stay refused, naming the realtime volume.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/admin_lib.sh"
. "$(dirname "$0")/admin_parent_lib.sh"

db72() {
	xfs72 xfs_db -r "$@" 2>/dev/null
}

mk72() {
	rm -f "$1"
	truncate -s 300m "$1" || exit 99
	TEST_DIR=1 TEST_DEV=1 QA_CHECK_FS=1 xfs72 mkfs.xfs -q -f "${@:2}" "$1" >"$T/mkfs.out" 2>&1 ||
		skip "mkfs.xfs 7.2 ${*:2}: $(head -2 "$T/mkfs.out")"
}

# A symlink target of N bytes.
target() {
	printf "t%0$(($1 - 1))d" 0
}

# pptrs IMG INO...: the parent pointers of each inode (short-form attr
# forks, or one leaf), as xfs_db 7.2 prints them: child, parent,
# generation, name.
pptrs() {
	local img=$1 i args=() largs=()
	shift
	for i in "$@"; do
		args+=(-c "inode $i" -c "print v3.inumber core.aformat" -c "print a.sfattr")
	done
	db72 "${args[@]}" "$img" >"$T/pp.sf"
	for i in $(awk '/^v3.inumber = / { c = $3 } /^core.aformat = 2 / { print c }' "$T/pp.sf"); do
		largs+=(-c "inode $i" -c "print v3.inumber" -c "ablock 0" -c "print nvlist")
	done
	{ cat "$T/pp.sf"; [ ${#largs[@]} -eq 0 ] || db72 "${largs[@]}" "$img"; } | awk '
		/^v3.inumber = / { c = $3 }
		/\.name = / { n = $0; sub(/^[^"]*"/, "", n); sub(/"$/, "", n) }
		/\.parent_dir\.inumber = / { p = $3 }
		/\.parent_dir\.gen = / { printf "%s %s 0x%x %s\n", c, p, $3, n }' |
		sort
}

# same_pointers OURS R72 NAME MIN: every inode of the tree (the kernel's
# find on OURS) has the pointers xfs_repair 7.2 added, and those alone;
# 7.2's copy has them too.
same_pointers() {
	loop_mount "$1" || exit 99
	(cd "$MNT" && find . -mindepth 1 -printf '%i\n' | sort -un) >"$T/inos"
	loop_umount || exit 99
	# shellcheck disable=SC2046
	pptrs "$1" $(cat "$T/inos") >"$T/ours"
	# shellcheck disable=SC2046
	pptrs "$2" $(cat "$T/inos") >"$T/theirs"
	if [ "$(wc -l <"$T/add72")" -lt "$4" ]; then
		fail "$3: xfs_repair 7.2 added $(wc -l <"$T/add72") parent pointers, fewer than the tree's $4"
	elif ! diff "$T/add72" "$T/ours" >"$T/pp.diff"; then
		fail "$3: the parent pointers (>) differ from those xfs_repair 7.2 adds (<): $(head -6 "$T/pp.diff")"
	elif ! diff "$T/theirs" "$T/ours" >"$T/pp.diff"; then
		fail "$3: the parent pointers (>) differ from xfs_repair 7.2's result's (<): $(head -6 "$T/pp.diff")"
	else
		pass "$3: the $(wc -l <"$T/ours") parent pointers of $(wc -l <"$T/inos") inodes (child, parent, generation, name) are those xfs_repair 7.2 adds"
	fi
}

# symlink_shapes IMG NAME...: format, size, blocks of each /NAME.
symlink_shapes() {
	local img=$1 n
	shift
	for n in "$@"; do
		echo "$n $(db72 -c "path /$n" -c "print core.format core.size core.nblocks" "$img" |
			sed 's/^[^=]* = //' | cut -d' ' -f1 | tr '\n' ' ')"
	done
}

# work_meta: create, rename, link, unlink, a new long symlink, in the
# metadir image's tree.
work_meta() {
	mkdir w
	for i in $(seq 1 50); do : >"w/n$i"; done
	for i in $(seq 1 20); do mv "w/n$i" "blk/moved_$i"; done
	ln sf/a w/link_a
	mv sym320 w/sym320
	ln -s "$(target 330)" w/newsym
	rm -f blk/f1* w/n3*
}

# upgraded IMG NAME MIN WANT LINK...: xfskit-admin -O parent=1 on IMG
# and xfs_repair 7.2 on a copy given the PARENT bit: both -n clean, the
# pointers those 7.2 adds (at least MIN), the symlinks LINK... shaped as
# with 7.2 and as WANT says (name format size blocks/...), the tree read
# back the same.  Fails (non-zero) when the upgrade did.
upgraded() {
	local img=$1 name=$2 min=$3 want=$4 shapes s72
	shift 4
	cp --sparse=always "$img" "$img.0" || exit 99
	walk "$img" "$T/walk.before"
	if ! "$ADMIN" -O parent=1 "$img" >"$T/k.out" 2>&1; then
		fail "$name: $(cat "$T/k.out")"
		return 1
	fi
	clean72 "$img" "$name"
	upgrade72 "$img.0" "$img.72" "$name" &&
		same_pointers "$img" "$img.72" "$name" "$min" &&
		same_forks "$img" "$img.72" "$name"
	shapes=$(symlink_shapes "$img" "$@" | tr '\n' '/')
	s72=$(symlink_shapes "$img.72" "$@" | tr '\n' '/')
	[ "$shapes" = "$s72" ] && [ "$shapes" = "$want" ] &&
		pass "$name: the symlinks (name format size blocks) are shaped as with 7.2: a target too long to share its inode with the attr fork in one remote block ($shapes)" ||
		fail "$name: symlink shapes (name format size blocks) '$shapes', xfs_repair 7.2's '$s72', want '$want'"
	walk "$img" "$T/walk.after"
	diff "$T/walk.before" "$T/walk.after" >"$T/walk.diff" &&
		pass "$name: the tree reads back the same ($(wc -l <"$T/walk.after") paths: inodes, links, content, symlink targets, xattrs)" ||
		fail "$name: the tree changed: $(head -6 "$T/walk.diff")"
}

# --- a metadata directory tree, populated by the kernel ---
IMG="$T/md.img"
mk72 "$IMG" -m metadir=1 -n parent=0
loop_mount "$IMG" || exit 99
(
set -e
cd "$MNT"
mkdir sf blk
: >sf/a
for i in $(seq 1 60); do : >"blk/f$i"; done
ln sf/a blk/link_a
ln sf/a link_a
echo data >xa
setfattr -n user.k -v v xa
for n in 296 297 320 336 400; do ln -s "$(target $n)" "sym$n"; done
# Hard-linked symlinks: pointers that end in a leaf (the fork moving back
# to its default), and three that share the inode with a 250-byte target.
ln -s "$(target 100)" hs
for i in 1 2 3 4 5; do ln -P hs "hs_link_with_a_rather_long_name_${i}_$(printf '%030d' 0)"; done
ln -s "$(target 250)" ws
ln -P ws ws2
ln -P ws ws3
mknod dev c 1 3
) || exit 99
loop_umount || exit 99
shapes=$(symlink_shapes "$IMG" sym296 sym297 sym320 sym336 sym400 | tr '\n' '/')
[ "$shapes" = "sym296 1 296 0 /sym297 1 297 0 /sym320 1 320 0 /sym336 1 336 0 /sym400 2 400 1 /" ] ||
	fail "the kernel's symlinks are not local up to 336 bytes and remote beyond: $shapes"
if upgraded "$IMG" "metadir, parent=1" 81 \
	"sym296 1 296 0 /sym297 2 297 1 /sym320 2 320 1 /sym336 2 336 1 /sym400 2 400 1 /" \
	sym296 sym297 sym320 sym336 sym400; then
	# The metadata tree: /rtgroups named by its root, as mkfs.xfs 7.2
	# -n parent=1 writes it.
	mdir=$(db72 -c "sb 0" -c "print metadirino" "$IMG" | sed 's/.* = //')
	rtg=$(db72 -c "path -m /rtgroups" -c "print v3.inumber" "$IMG" | sed 's/.* = //')
	mgen=$(db72 -c "inode $mdir" -c "print core.gen" "$IMG" | sed 's/.* = //')
	got=$(pptrs "$IMG" "$rtg")
	want=$(printf '%s %s 0x%x rtgroups' "$rtg" "$mdir" "$mgen")
	mk72 "$T/p72.img" -m metadir=1 -n parent=1
	f72=$(db72 -c "path -m /rtgroups" -c "print core.forkoff core.aformat a.sfattr.hdr.count" "$T/p72.img" | tr '\n' ' ')
	fk=$(db72 -c "path -m /rtgroups" -c "print core.forkoff core.aformat a.sfattr.hdr.count" "$IMG" | tr '\n' ' ')
	[ -n "$rtg" ] && [ "$got" = "$want" ] && [ "$fk" = "$f72" ] &&
		pass "metadir, parent=1: /rtgroups has its pointer ($got), its attr fork as mkfs.xfs 7.2 -n parent=1 makes it ($fk)" ||
		fail "metadir, parent=1: /rtgroups: pointer '$got', want '$want'; fork '$fk', mkfs.xfs 7.2's '$f72'"
	pointers_are_tree "$IMG" "metadir, parent=1" 66
	pptr_workload "$IMG" "metadir, parent=1" work_meta
	clean72 "$IMG" "metadir, parent=1, after the kernel's workload"
	pointers_are_tree "$IMG" "metadir, parent=1, after the kernel's workload" 90
fi
undo_and_crash "$IMG.0" parent 3

# --- long local symlinks in inodes without an attr fork: a mkfs.xfs
# 6.1 prototype image (kernel-made inodes here may have an attr fork) ---
{
	printf 'boot\n0 0\nd--755 0 0\n'
	printf 'sf d--755 0 0\n a ---644 0 0 /dev/null\n$\n'
	printf 'sym296 l--777 0 0 %s\n' "$(target 296)"
	printf 'sym320 l--777 0 0 %s\n' "$(target 320)"
	printf 'short l--777 0 0 sf/a\n'
	# Names of 100 and 200 bytes: pointers too large for the fork to go
	# where the data fork would keep its room; the kernel then puts it
	# at its default, and a 250-byte target moves out (the fork moving
	# up after that only for the pointer the default room cannot hold).
	printf 'D%099d d--755 0 0\n' 0
	for i in $(seq 10 22); do printf ' e%s ---644 0 0 /dev/null\n' "$i"; done
	printf '$\nF%099d ---644 0 0 /dev/null\n' 0
	printf 'S%099d l--777 0 0 %s\n' 0 "$(target 250)"
	printf 'S%0199d l--777 0 0 %s\n$\n' 0 "$(target 250)"
} >"$T/proto"
mkimg "$T/pr.img" 96m -l size=16m -p "$T/proto"
[ "$(db_get "$T/pr.img" "path /sym320" core.forkoff)" = 0 ] &&
	[ "$(db_get "$T/pr.img" "path /sym320" core.format)" = "1 (local)" ] ||
	fail "the prototype's 320-byte symlink is not local without an attr fork: the case is not made"
upgraded "$T/pr.img" "long symlinks, parent=1" 9 \
	"sym296 1 296 0 /sym320 2 320 1 /short 1 4 0 /" sym296 sym320 short

# The same in 1024-byte inodes (2 KiB blocks): the bound is 808 bytes.
{
	printf 'boot\n0 0\nd--755 0 0\n'
	for n in 808 809 848; do printf 'sym%s l--777 0 0 %s\n' "$n" "$(target "$n")"; done
	printf '$\n'
} >"$T/proto"
mkimg "$T/pr1k.img" 96m -i size=1024 -b size=2048 -l size=16m -p "$T/proto"
upgraded "$T/pr1k.img" "long symlinks in 1024-byte inodes, parent=1" 3 \
	"sym808 1 808 0 /sym809 2 809 1 /sym848 2 848 1 /" sym808 sym809 sym848

# --- still refused: realtime groups (xfskit-admin takes no realtime
# device), with nothing written ---
rm -f "$T/rt.dev" && truncate -s 64m "$T/rt.dev" || exit 99
mk72 "$T/rt.img" -m metadir=1 -n parent=0 -r rtdev="$T/rt.dev",size=64m
unchanged "metadir with realtime groups, parent=1" 1 "realtime volume .* not supported" -O parent=1 "$T/rt.img"

finish
