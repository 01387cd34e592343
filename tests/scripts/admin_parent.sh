#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# xfskit-admin -O parent=1, which no other tool can do (xfs_repair 7.2's
# -c does not know it), on an image mkfs.xfs 6.1 made with its defaults
# and the host kernel populated: directories in every format (short
# form, block, leaf, node), hard links across directories, a file with
# 201 links (its pointers need a node attr fork), files with xattrs in
# short-form and leaf attr forks, a directory with xattrs, a symlink and
# a device.  The result has the PARENT bit,
# xfs_repair 7.2 -n and xfskit-repair -n find it clean, the tree reads back the same (names,
# inodes, link counts, content, xattrs), and the kernel's parent
# pointers (xfs_io 7.2 parent -p, which walks them up to the root by
# handle: inode and generation) name every path of the tree and are
# those xfs_repair 7.2 adds to a copy of the original given the PARENT
# bit alone; the kernel then runs a workload (create, rename, link,
# unlink) without an error, and it is clean again, its pointers still
# the tree's.  The same on a filesystem mkfs.xfs populated from a
# prototype, whose inodes have no attr fork (a short-form directory
# filling its inode becomes a block, files the kernel fragmented get
# their data fork narrowed as the kernel narrows it: 20 extents become a
# btree, a bmbt root of 20 records gains a level, one of 12 moves; every
# fork placed and shaped as in xfs_repair 7.2's upgrade), and
# with the reverse-mapping btree (already there, or added in the same
# run).  Refusals write nothing: a filesystem too full for the new attr
# blocks (the message gives the blocks missing; freed, the upgrade is
# done), a link count off, a log too small for the new feature set, a
# dirty log, a mounted filesystem.  (Metadir filesystems and local
# symlinks filling their inode: admin_parent_meta.sh.)
# -z's undo file restores the image byte for byte; a crash mid-upgrade
# leaves the NEEDSREPAIR mark xfs_repair 7.2 completes.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/admin_lib.sh"
. "$(dirname "$0")/admin_parent_lib.sh"

REPAIR="$XK_BUILDDIR/repair/xfskit-repair"

# tree IMG: every directory entry's format plus links, and xattrs.
tree() {
	loop_mount "$1" || exit 99
	(
	set -e
	cd "$MNT"
	mkdir sf blk leaf node xdir
	: >sf/a
	: >sf/b
	for i in $(seq 1 40); do : >"blk/file_with_a_longer_name_$i"; done
	for i in $(seq 1 400); do : >"leaf/f$i"; done
	for i in $(seq 1 3000); do : >"node/entry_number_$i"; done
	mkdir -p blk/sub/deeper
	echo content >blk/sub/deeper/file
	ln sf/a blk/link_a
	ln sf/a leaf/link_a2
	ln blk/sub/deeper/file node/link_deep
	echo many >many
	for i in $(seq 1 200); do ln many "node/many_$i"; done
	: >xl
	setfattr -n user.one -v 1 xl
	: >xleaf
	for i in $(seq 1 50); do setfattr -n "user.k$i" -v "value-$i-$(printf '%040d' "$i")" xleaf; done
	for i in $(seq 1 30); do setfattr -n "user.d$i" -v "dir-value-$(printf '%040d' "$i")" xdir; done
	setfattr -n user.remote -v "$(head -c 6000 /dev/zero | tr '\0' r)" sf/b
	ln -s sf/a sym
	mknod dev c 1 3
	) || exit 99
	loop_umount || exit 99
}

# formats IMG: the directories are in the formats the test is about
# (short form: local; block: one extent below the leaf offset; leaf:
# a leaf block, no free index; node: a free index block).
formats() {
	local d f bm
	for d in sf blk leaf node; do
		f=$(xfs_db -r -c "path /$d" -c "print core.format" "$1" | sed -n 's/.* = [0-9] (\(.*\))/\1/p')
		bm=$(xfs_db -r -c "path /$d" -c "bmap" "$1")
		case "$d:$f" in
		sf:local) ;;
		blk:extents) [ "$(echo "$bm" | wc -l)" = 1 ] || return 1 ;;
		leaf:extents) echo "$bm" | grep -q 'offset 8388608 ' &&
			! echo "$bm" | grep -q 'offset 16777216 ' || return 1 ;;
		node:extents|node:btree) echo "$bm" | grep -q 'offset 16777216 ' || return 1 ;;
		*) return 1 ;;
		esac
	done
}

# work_pp: create, rename (within and across directories), link and
# unlink in the kernel-populated tree.
work_pp() {
	mkdir w
	for i in $(seq 1 300); do : >"w/n$i"; done
	for i in $(seq 1 100); do mv "w/n$i" "node/moved_$i"; done
	for i in $(seq 101 150); do mv "w/n$i" "w/renamed_$i"; done
	for i in $(seq 1 100); do ln "leaf/f$i" "w/l$i"; done
	rm -f node/many_1* leaf/f2* w/n2*
	mv blk/sub w/sub
	ln many sf/many_again
}

# kernel_pptrs IMG OUT: every parent pointer of the files and directories
# as the kernel reads them (xfs_io 7.2 parent), one per line: child,
# parent, parent generation, name; sorted.
kernel_pptrs() {
	local args=() f
	loop_mount "$1" || exit 99
	(cd "$MNT" && find . -mindepth 1 \( -type f -o -type d \) -printf '%i %P\n' |
		sort -un -k1,1 | cut -d' ' -f2-) >"$T/ino.out"
	while IFS= read -r f; do
		args+=(-c "open $MNT/$f" -c stat -c parent -c close)
	done <"$T/ino.out"
	xfs72 xfs_io -r "${args[@]}" 2>&1 |
		awk '/^stat.ino = / { c = $3 } /^p_ino / { p = $3 } /^p_gen / { g = $3 }
		     /^p_name / { n = $0; sub(/^p_name *= "/, "", n); sub(/"$/, "", n)
				  printf "%s %s 0x%x %s\n", c, p, g, n }' | sort >"$2"
	loop_umount || exit 99
}

# pointers_as_72 ORIG OURS NAME: xfs_repair 7.2, run on a copy of ORIG
# given the PARENT bit alone, adds every pointer the tree calls for;
# those of the files and directories are the ones the kernel reads on
# OURS.
pointers_as_72() {
	upgrade72 "$1" "$T/r72.img" "$3" || return 1
	kernel_pptrs "$2" "$T/pp.ours"
	cut -d' ' -f1 "$T/pp.ours" | sort -u >"$T/pp.children"
	join "$T/pp.children" "$T/add72" | sort >"$T/pp.72"
	if [ "$(wc -l <"$T/pp.72")" -lt 3000 ] || ! diff "$T/pp.72" "$T/pp.ours" >"$T/pp.diff"; then
		fail "$3: the parent pointers (>) differ from those xfs_repair 7.2 adds (<): $(head -6 "$T/pp.diff")"
	else
		pass "$3: the $(wc -l <"$T/pp.ours") parent pointers of files and directories (child, parent, generation, name) are those xfs_repair 7.2 adds to a copy given the PARENT bit ($(wc -l <"$T/add72") with symlinks and devices)"
	fi
}

IMG="$T/pp.img"
mkimg "$IMG" 128m -l size=16m
tree "$IMG"
formats "$IMG" && pass "the directories are short form, block, leaf and node" ||
	fail "the directories are not in the intended formats"
cp --sparse=always "$IMG" "$T/pp0.img" || exit 99
walk "$IMG" "$T/walk.before"
if "$ADMIN" -O parent=1 "$IMG" >"$T/k.out" 2>&1; then
	grep -q '^Adding parent pointers to filesystem.$' "$T/k.out" ||
		fail "parent=1: no announcement: $(cat "$T/k.out")"
	v=$(xfs72 xfs_db -r -c version "$IMG")
	case "$v" in
	*ATTR,*PARENT*) pass "parent=1: xfs_db 7.2 shows ATTR and PARENT" ;;
	*) fail "parent=1: xfs_db 7.2's version: $v" ;;
	esac
	clean72 "$IMG" "parent=1"
	walk "$IMG" "$T/walk.after"
	diff "$T/walk.before" "$T/walk.after" >"$T/walk.diff" &&
		pass "parent=1: the tree reads back the same ($(wc -l <"$T/walk.after") paths: inodes, links, content, xattrs)" ||
		fail "parent=1: the tree changed: $(head -6 "$T/walk.diff")"
	pointers_are_tree "$IMG" "parent=1" 3600
	pointers_as_72 "$T/pp0.img" "$IMG" "parent=1" &&
		same_forks "$IMG" "$T/r72.img" "parent=1"
	pptr_workload "$IMG" "parent=1" work_pp
	clean72 "$IMG" "parent=1, after the kernel's workload"
	pointers_are_tree "$IMG" "parent=1, after the kernel's workload" 3600
	"$ADMIN" -O parent=1 "$IMG" >"$T/k.out" 2>&1 &&
		grep -q '^Filesystem already has parent pointers.$' "$T/k.out" &&
		pass "parent=1 again: already there" ||
		fail "parent=1 again: $(cat "$T/k.out")"
else
	fail "parent=1: $(cat "$T/k.out")"
fi

undo_and_crash "$T/pp0.img" parent 2 10

# --- inodes without an attr fork: a filesystem mkfs.xfs populated from
# a prototype (no security module gives its inodes one), with a
# short-form, a block and a leaf directory, a local symlink, a device ---
proto() {
	local i
	echo x >"$T/src"
	printf 'boot\n0 0\nd--755 0 0\n'
	printf 'sf d--755 0 0\n a ---644 0 0 %s\n b ---644 0 0 %s\n$\n' "$T/src" "$T/src"
	echo 'blk d--755 0 0'
	for i in $(seq 1 40); do echo " file_with_a_longer_name_$i ---644 0 0 $T/src"; done
	echo '$'
	echo 'leaf d--755 0 0'
	for i in $(seq 1 400); do echo " f$i ---644 0 0 $T/src"; done
	echo '$'
	# 12 entries of 16 bytes: a short form an attr fork cannot share
	# the inode with (the upgrade makes it a block, as the kernel would).
	echo 'full d--755 0 0'
	for i in $(seq 10 21); do echo " entry_with_name_$i ---644 0 0 $T/src"; done
	echo '$'
	echo "f20 ---644 0 0 $T/src"
	echo "f4790 ---644 0 0 $T/src"
	echo "ffit ---644 0 0 $T/src"
	echo 'sym l--777 0 0 sf/a'
	echo 'dev c--644 0 0 1 3'
	echo '$'
}

# fragment IMG: the kernel writes every other block of the prototype's
# files f20, f4790 and ffit (existing inodes keep having no attr fork):
# 20 extents in the inode, a bmbt root of 20 records, one of 12; their
# hashes go to $T/frag.sums.
fragment() {
	local f n args
	loop_mount "$1" || exit 99
	for f in f20:15 f4790:2400 ffit:1440; do
		args=()
		for n in $(seq 0 $((${f#*:} - 1))); do args+=(-c "pwrite -q $((n * 8))k 4k"); done
		xfs_io "${args[@]}" "$MNT/${f%:*}" || exit 99
	done
	(cd "$MNT" && sha256sum f20 f4790 ffit) >"$T/frag.sums" || exit 99
	loop_umount || exit 99
}

# root_shape IMG FILE: format, fork offset, extents, root records, level.
root_shape() {
	echo "$(db_get "$1" "path /$2" core.format | cut -d' ' -f1)" \
	     "$(db_get "$1" "path /$2" core.forkoff)" \
	     "$(db_get "$1" "path /$2" core.nextents)" \
	     "$(db_get "$1" "path /$2" u3.bmbt.numrecs)" \
	     "$(db_get "$1" "path /$2" u3.bmbt.level)"
}
proto >"$T/proto"
mkimg "$T/pr.img" 96m -l size=16m -p "$T/proto"
[ "$(db_get "$T/pr.img" "inode $(db_get "$T/pr.img" "sb 0" rootino)" core.forkoff)" = 0 ] ||
	fail "the prototype's root has an attr fork: the case is not made"
fragment "$T/pr.img"
# Beyond the room beside an attr fork (296 bytes): 19 to 21 extents, a
# root of 19 or 20 records; within it, a root of at most 18.
shapes="$(root_shape "$T/pr.img" f20)/$(root_shape "$T/pr.img" f4790)/$(root_shape "$T/pr.img" ffit)"
echo "$shapes" | awk -F/ '{ split($1, a, " "); split($2, b, " "); split($3, c, " ")
	exit !(a[1] == 2 && a[2] == 0 && a[3] >= 19 && a[3] <= 21 &&
	       b[1] == 3 && b[2] == 0 && b[4] >= 19 && b[5] == 1 &&
	       c[1] == 3 && c[2] == 0 && c[4] >= 2 && c[4] <= 18 && c[5] == 1) }' ||
	fail "the fragmented files are not as the test needs them (format forkoff extents records level): $shapes"
[ "$(db_get "$T/pr.img" "path /full" core.format)" = "1 (local)" ] &&
	[ "$(db_get "$T/pr.img" "path /full" core.size)" -gt 296 ] ||
	fail "the full short-form directory is not short form beyond 296 bytes"
cp --sparse=always "$T/pr.img" "$T/pr0.img" || exit 99
if "$ADMIN" -O parent=1 "$T/pr.img" >"$T/k.out" 2>&1; then
	upgrade72 "$T/pr0.img" "$T/pr72.img" "parent=1, inodes without an attr fork" &&
		same_forks "$T/pr.img" "$T/pr72.img" "parent=1, inodes without an attr fork"
	[ "$(db_get "$T/pr.img" "path /full" core.format)" = "2 (extents)" ] &&
		pass "parent=1: the short-form directory filling its inode became a block" ||
		fail "parent=1: the full short-form directory is $(db_get "$T/pr.img" "path /full" core.format)"
	after="$(root_shape "$T/pr.img" f20)/$(root_shape "$T/pr.img" f4790)/$(root_shape "$T/pr.img" ffit)"
	after72="$(root_shape "$T/pr72.img" f20)/$(root_shape "$T/pr72.img" f4790)/$(root_shape "$T/pr72.img" ffit)"
	[ "$after" = "$after72" ] && echo "$shapes/$after" | awk -F/ '{ split($3, c, " "); split($4, a, " "); split($5, b, " ")
		split($6, d, " ")
		exit !(a[1] == 3 && a[5] == 1 &&
		       b[1] == 3 && b[4] == 1 && b[5] == 2 &&
		       d[1] == 3 && d[4] == c[4] && d[5] == 1) }' &&
		pass "parent=1: the extents became a btree, the large root gained a level, the small one moved, as with xfs_repair 7.2 (before: $shapes; after: $after)" ||
		fail "parent=1: the narrowed data forks (format forkoff extents records level), before: $shapes; after: $after; xfs_repair 7.2's: $after72"
	clean72 "$T/pr.img" "parent=1, inodes without an attr fork"
	pointers_are_tree "$T/pr.img" "parent=1, inodes without an attr fork" 450
	# The kernel reads the narrowed files back, grows the directories,
	# links, renames and unlinks across directories, extends the files.
	since=$(kmsg_mark)
	loop_mount "$T/pr.img" || exit 99
	(cd "$MNT" && sha256sum -c --quiet "$T/frag.sums") >"$T/sums.out" 2>&1 &&
		pass "parent=1: the kernel reads the narrowed files' content back" ||
		fail "parent=1: the narrowed files' content: $(head -3 "$T/sums.out")"
	(
	set -e
	cd "$MNT"
	for f in f20 f4790 ffit; do xfs_io -c "pwrite -q 40m 4k" "$f"; done
	for i in $(seq 1 60); do : >"sf/new_entry_$i"; done
	for i in $(seq 1 30); do : >"full/more_$i"; done
	rm -f full/entry_with_name_1*
	ln leaf/f1 sf/link_f1
	mv blk/file_with_a_longer_name_1 sf/moved
	rm -f leaf/f2* sf/b
	echo more >>sf/a
	) || fail "parent=1, inodes without an attr fork: the workload failed"
	loop_umount || exit 99
	errs=$(xfs_kernel_errors "$since")
	[ -z "$errs" ] || fail "parent=1, inodes without an attr fork: kernel errors: $errs"
	clean72 "$T/pr.img" "parent=1, inodes without an attr fork, after the kernel's workload"
	pointers_are_tree "$T/pr.img" "parent=1, inodes without an attr fork, after the kernel's workload" 390
else
	fail "parent=1, inodes without an attr fork: $(cat "$T/k.out")"
fi

# With the reverse-mapping btree (the attr blocks get their records):
# added in the same run to the kernel-populated image, and on a
# prototype filesystem made with it.
cp --sparse=always "$T/pp0.img" "$T/k.img" || exit 99
if "$ADMIN" -O rmapbt=1,parent=1 "$T/k.img" >"$T/k.out" 2>&1; then
	clean72 "$T/k.img" "rmapbt=1,parent=1 in one run"
else
	fail "rmapbt=1,parent=1 in one run: $(cat "$T/k.out")"
fi
mkimg "$T/k.img" 96m -l size=16m -m rmapbt=1 -p "$T/proto"
if "$ADMIN" -O parent=1 "$T/k.img" >"$T/k.out" 2>&1; then
	clean72 "$T/k.img" "parent=1 with the rmapbt, inodes without an attr fork"
else
	fail "parent=1 with the rmapbt, inodes without an attr fork: $(cat "$T/k.out")"
fi

# A link count that is not the number of entries naming the inode (a
# directory entry the listing would miss looks the same): run repair
# first.
proto >"$T/proto"
mkimg "$T/k.img" 96m -l size=16m -p "$T/proto"
ino=$(xfs_db -r -c "path /sf" -c "print u3.sfdir3.list[0].inumber.i4" "$T/k.img" | sed -n 's/.* = //p')
[ -n "$ino" ] && xfs_db -x -c "inode $ino" -c "write core.nlinkv2 3" "$T/k.img" >/dev/null || exit 99
unchanged "parent=1, a link count off" 1 "inode $ino: its link count is not the number of directory entries naming it: .*run xfskit-repair first" -O parent=1 "$T/k.img"

# --- refusals ---
# Too little free space for the new attr blocks: a file with 2000 links
# of 200-byte names needs about 120, 40 local symlinks of 320 bytes one
# each for their targets; every AG filled by the kernel, its
# reserve pool emptied.  Once the fill files give back what the message
# says is missing, the upgrade is done.
mkimg "$T/full.img" 1g -d agcount=2 -l size=16m
loop_mount "$T/full.img" || exit 99
python3 - "$MNT" <<'PY' || exit 99
import os, sys
m = sys.argv[1]
open(m + "/many", "w").write("many\n")
for d in range(4):
    os.mkdir("%s/d%d" % (m, d))
    for i in range(500):
        os.link(m + "/many", "%s/d%d/%0200d" % (m, d, i))
# Local symlinks filling their inodes: a block each for their targets.
for i in range(40):
    os.symlink("t" * 320, "%s/sym%d" % (m, i))
PY
loop_umount || exit 99
fill_ags "$T/full.img"
unchanged "parent=1 on a full filesystem" 1 "not enough free space .* need [1-9][0-9]* more blocks" -O parent=1 "$T/full.img"
need=$(sed -n 's/.* need \([0-9]*\) more blocks.*/\1/p' "$T/k.err")
if [ -n "$need" ]; then
	loop_mount "$T/full.img" || exit 99
	# The smallest fill files first (4 KiB each, then 256 KiB).
	ls -S -r "$MNT" | grep '^fill' | python3 -c '
import os, sys
left = int(sys.argv[2]) * 4096
for n in sys.stdin.read().split():
    if left <= 0:
        break
    p = os.path.join(sys.argv[1], n)
    left -= os.stat(p).st_blocks * 512
    os.unlink(p)' "$MNT" "$need"
	loop_umount || exit 99
	"$ADMIN" -O parent=1 "$T/full.img" >"$T/k.out" 2>&1 &&
		xfs72 xfs_repair -n "$T/full.img" >"$T/r72.out" 2>&1 &&
		pass "parent=1 after freeing the $need blocks the refusal named: done, xfs_repair 7.2 -n clean" ||
		fail "parent=1 after freeing the $need blocks the refusal named: $(cat "$T/k.out") $(grep -v '^Phase\|^  *-' "$T/r72.out" | head -3)"
fi

# A log too small for the largest transaction with parent pointers
# (mkfs.xfs 6.1's default log of a 96 MiB filesystem).
# The figure is mkfs.xfs 7.2's minimum for the same features and size.
mkimg "$T/k.img" 96m
unchanged "parent=1, log too small" 1 "log too small .* need [0-9]+ blocks, have [0-9]+" -O parent=1 "$T/k.img"
need=$(sed -n 's/.* need \([0-9]*\) blocks, have.*/\1/p' "$T/k.err")
rm -f "$T/m72.img" && truncate -s 96m "$T/m72.img" || exit 99
min72=$(TEST_DIR=1 TEST_DEV=1 QA_CHECK_FS=1 xfs72 mkfs.xfs -f -q -n parent=1 -m rmapbt=0 \
	-i nrext64=0,exchange=0 -l size=600b "$T/m72.img" 2>&1 | sed -n 's/.*minimum size is \([0-9]*\) blocks.*/\1/p')
[ -n "$need" ] && [ "$need" = "$min72" ] &&
	pass "parent=1, log too small: $need blocks needed, mkfs.xfs 7.2's minimum with parent pointers" ||
	fail "parent=1, log too small: $need blocks needed, mkfs.xfs 7.2's minimum is '$min72'"

# A dirty log (left by a shutdown): exit 2, as for the other upgrades.
cp --sparse=always "$T/pp0.img" "$T/k.img" || exit 99
if loop_mount "$T/k.img"; then
	echo data >"$MNT/dirty" && sync -f "$MNT/dirty"
	xfs_io -x -c "shutdown -f" "$MNT" || fail "shutdown failed"
	loop_umount || fail "umount failed"
	unchanged "parent=1, dirty log" 2 "log" -O parent=1 "$T/k.img"
fi

# Mounted.
cp --sparse=always "$T/pp0.img" "$T/k.img" || exit 99
if loop_mount "$T/k.img"; then
	MOUNTED=1 unchanged "mounted, parent=1" 2 "mounted" -O parent=1 "$T/k.img"
	loop_umount || fail "umount failed"
fi

finish
