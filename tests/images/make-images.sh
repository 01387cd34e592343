#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Make the golden images under tests/images/NAME/ and their expected
# outputs, as e2fsprogs' tests/f_* hold them:
#   image.xz  a small damaged filesystem, xz-compressed
#   descr     one line: what is damaged
#   expect.0  what xfskit-repair -n prints (and its exit status)
#   expect.1  what the first xfskit-repair prints (and its exit status)
#   expect.2  what the second xfskit-repair prints: must be clean
# tests/scripts/golden.sh checks them, with neither root nor xfsprogs.
#
#   tests/images/make-images.sh [-b BUILDDIR] [--regen-expect] [NAME...]
#
# Every image comes from one base: xfskit-mkfs -p of a tree generated
# here (every directory format, extents and a bmbt, xattrs in short form,
# leaf and remote values, inline and remote symlinks), with a fixed UUID
# and SOURCE_DATE_EPOCH, so the same tools give byte-identical images;
# each case then applies fixed xfskit-db -x edits or a seeded blocktrash.
# Only our own tools make them.  The one exception is "log", a log left
# dirty by the kernel (xfs_io -x -c 'shutdown -f' on a loop mount of the
# healthy base, as root): the kernel's bytes are not reproducible, so
# that image is kept as committed unless named on the command line.
#
# Where xfsprogs is installed, every image is cross-checked: xfs_repair -n
# (6.1, and 7.2 where scripts/xfsprogs-sid has it) must flag it as
# damaged, and must find it clean after our repair; the table is printed
# and a disagreement fails the run.
#
# --regen-expect rewrites only the expect.* files from the current tools
# over the committed images (run it after the repair output changes, and
# read the diff before committing it).
set -u
export TZ=UTC LC_ALL=C
# Our own report, as the tests see it (lib.sh): the default output is
# xfs_repair's lines alone.
export XFSKIT_REPAIR_REPORT=1
top=$(cd "$(dirname "$0")/../.." && pwd)
dir="$top/tests/images"
build="${XK_BUILDDIR:-$top/build-test}"
regen=""
only=()
while [ $# -gt 0 ]; do
	case $1 in
	-b) build=$2; shift 2 ;;
	--regen-expect) regen=1; shift ;;
	-h|--help) sed -n '3,29p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	-*) echo "usage: $0 [-b BUILDDIR] [--regen-expect] [NAME...]" >&2; exit 2 ;;
	*) only+=("$1"); shift ;;
	esac
done
REPAIR="$build/repair/xfskit-repair"
MKFS="$build/mkfs/xfskit-mkfs"
DB="$build/db/xfskit-db"
for t in "$REPAIR" "$MKFS" "$DB"; do
	[ -x "$t" ] || { echo "$t: not built (-b BUILDDIR)" >&2; exit 2; }
done
W=$(mktemp -d "${TMPDIR:-/tmp}/xk-images.XXXXXX")
MNT=""
trap '[ -n "$MNT" ] && umount "$MNT" 2>/dev/null; rm -rf "$W"' EXIT
UUID=5eed1e55-0019-4c0d-a9e5-601de71a9e50
export SOURCE_DATE_EPOCH=1764806400	# 2025-12-04 00:00:00 UTC
errors=0

# The expected-output filter: the image's path, which differs per run.
# xfs_repair's lines and our summary line are left out as golden.sh
# leaves them: by lib.sh's repair_own itself (lib.sh as a whole is for
# tests, so only that function is taken from it).
eval "$(sed -n '/^repair_own() {$/,/^}$/p' "$top/tests/scripts/lib.sh")"
filter() {
	sed "s|$1|IMAGE|g" | repair_own
}

# run_expect IMG OUT ARGS...: xfskit-repair ARGS on IMG, filtered, and
# its exit status as the last line.
run_expect() {
	local img=$1 out=$2 rc
	shift 2
	"$REPAIR" "$@" "$img" >"$W/run.out" 2>&1
	rc=$?
	{ filter "$img" <"$W/run.out"; echo "exit status: $rc"; } >"$out"
}

# expects NAME IMG: write expect.0, .1, .2 of the case from IMG (which
# the runs modify).
expects() {
	local d="$dir/$1" img=$2
	run_expect "$img" "$d/expect.0" -n
	run_expect "$img" "$d/expect.1"
	run_expect "$img" "$d/expect.2"
	tail -1 "$d/expect.2" | grep -qx 'exit status: 0' || {
		echo "$1: the second repair is not clean:" >&2
		cat "$d/expect.2" >&2
		errors=$((errors + 1))
	}
}

# A deterministic tree: every directory format, data fork and xattr
# format the repair walks.  File contents are short text lines.
make_tree() {
	local s=$1 i
	mkdir -p "$s"/{sf,blk,leaf,node,data,xa,ln,orph,deep/a/b/c}
	for i in 1 2 3; do echo "short form $i" >"$s/sf/f$i"; done
	for i in $(seq 1 24); do echo "block $i" >"$s/blk/entry_$i"; done
	for i in $(seq 1 300); do : >"$s/leaf/leaf_directory_entry_$i"; done
	for i in $(seq 1 1200); do : >"$s/node/node_directory_entry_$i"; done
	for i in $(seq 1 40); do echo "orphan $i" >"$s/orph/orphan_file_$i"; done
	mkdir "$s/orph/subdir"
	echo "below" >"$s/orph/subdir/file"
	echo "deep" >"$s/deep/a/b/c/file"
	seq 1 200 >"$s/data/small"
	# Data every other 4 KiB: 6 extents, then 80 (a bmbt).
	for i in $(seq 0 5); do
		printf 'extent %d\n' "$i" |
			dd of="$s/data/multi" bs=4096 seek=$((2 * i)) conv=notrunc status=none
	done
	for i in $(seq 0 79); do
		printf 'btree extent %d\n' "$i" |
			dd of="$s/data/btree" bs=4096 seek=$((2 * i)) conv=notrunc status=none
	done
	seq 1 20000 >"$s/data/contig"
	echo "xattrs" >"$s/xa/sf"
	setfattr -n user.one -v 1 "$s/xa/sf"
	setfattr -n user.two -v 22 "$s/xa/sf"
	echo "xattrs" >"$s/xa/leaf"
	for i in $(seq 1 12); do
		setfattr -n "user.attribute_$i" -v "$(printf 'v%.0s' $(seq 1 200))$i" "$s/xa/leaf"
	done
	echo "xattrs" >"$s/xa/remote"
	setfattr -n user.big -v "$(printf 'r%.0s' $(seq 1 3600))" "$s/xa/remote"
	ln -s "../data/small" "$s/ln/short"
	ln -s "$(printf 'long_symlink_target/%.0s' $(seq 1 40))end" "$s/ln/long"
	# Fixed times everywhere (mkfs clamps to SOURCE_DATE_EPOCH anyway).
	find "$s" -exec touch -h -d "@$SOURCE_DATE_EPOCH" {} +
}

make_base() {
	make_tree "$W/src"
	rm -f "$W/base.img"
	truncate -s 40m "$W/base.img"
	"$MKFS" -q -f --unsupported -m uuid=$UUID -d agcount=2 -L golden \
		-p "$W/src,uid=0,gid=0" "$W/base.img" >"$W/mkfs.out" 2>&1 || {
		echo "xfskit-mkfs failed: $(cat "$W/mkfs.out")" >&2
		exit 1
	}
	"$REPAIR" -n "$W/base.img" >"$W/base.chk" 2>&1 || {
		echo "the base image is not clean: $(head "$W/base.chk")" >&2
		exit 1
	}
}

# The cases: NAME|description|xfskit-db -x commands (";"-separated).
CASES=(
	"inode-nlink|a regular file's link count too high|path /data/small;write -d core.nlinkv2 7"
	"inode-mode|an unknown file type in a file's mode|path /sf/f2;write -d core.mode 0170644"
	"inode-flags|the realtime flag without a realtime device, and a directory-only flag on a file|path /blk/entry_3;write -d core.realtime 1;path /blk/entry_4;write -d core.nosymlinks 1"
	"inode-blocks|a file's block count wrong|path /data/multi;write -d core.nblocks 99"
	"data-extent|a data extent starting beyond the filesystem|path /data/multi;write -d u3.bmx[2].startblock 4000000"
	"data-order|a file's data extents overlapping in file offset|path /data/multi;write -d u3.bmx[3].startoff 2"
	"bmbt|a bmbt leaf's records out of order|path /data/btree;addr u3.bmbt.ptrs[1];write -d recs[3].startoff 2"
	"dir-shortform|a short-form directory entry pointing at a free inode|path /sf;write -d u3.sfdir3.list[1].inumber.i4 @FREEINO"
	"dir-block|a block directory's entry with a bad name length|path /blk;dblock 0;write -d bu[5].namelen 0"
	"dir-leaf|a leaf directory's hash index out of order|path /leaf;dblock @LEAF;write -d lents[3].hashval 1"
	"dir-node|a node directory's interior node with a bad hash|path /node;dblock @LEAF;write -d nbtree[1].hashval 1"
	"dir-data|a directory data block with a bad magic: its entries are kept in place (its header names the block and the directory), as xfs_repair keeps them|path /orph;dblock 0;write -d bhdr.hdr.magic 0"
	"attr-shortform|a short-form xattr header counting too many entries|path /xa/sf;write -d a.sfattr.hdr.count 5"
	"attr-leaf|an xattr leaf block's entry count too high|path /xa/leaf;ablock 0;write -d hdr.count 200"
	"attr-remote|an xattr's remote value block with a bad magic|path /xa/remote;ablock 1;write -d hdr.magic 0"
	"symlink-inline|an inline symlink's size zero|path /ln/short;write -d core.size 0"
	"symlink-remote|a remote symlink block with a bad magic|path /ln/long;dblock 0;write -d magic 0"
	"sb-counters|the superblock's inode and free block counters wrong|sb 0;write -d icount 64;write -d fdblocks 5"
	"sb-secondary|a secondary superblock's geometry wrong|sb 1;write -d agblocks 1234"
	"agf|AGF 1's free block count and longest extent wrong|agf 1;write -d freeblks 99;write -d longest 7"
	"agi|AGI 0's inode counts wrong|agi 0;write -d count 4096;write -d freecount 999"
	"agfl|AGF 0's free list count beyond its indices|agf 0;write -d flcount 9"
	"bnobt|a free-space-by-block record's length wrong|agf 1;addr bnoroot;write -d recs[1].blockcount 3"
	"cntbt|the free-space-by-size btree root's level wrong|agf 0;addr cntroot;write -d level 1"
	"inobt|an inode btree record's free mask wrong|agi 0;addr root;write -d recs[1].free 0xffffffffffffffff"
	"finobt|a free inode btree record's count wrong|agi 0;addr free_root;write -d recs[1].freecount 1"
	"rmapbt|a reverse mapping's owner wrong|agf 0;addr rmaproot;write -d recs[4].owner 123456"
	"refcountbt|a record in an empty refcount btree|agf 1;addr refcntroot;write -d numrecs 1"
	"blocktrash|random bits flipped in 12 metadata blocks|blocktrash -s 19 -n 12 -x 1 -y 64"
)

# expand CMDS: @FSB:PATH:N is the start block of PATH's extent N;
# @FREEINO a free inode of the root's chunk; @LEAF the directory leaf
# (or node) block's file offset in blocks (32 GiB / block size).
expand() {
	local c=$1 img=$2 v p n bs
	while [[ $c == *@FSB:* ]]; do
		v=${c#*@FSB:}; v=${v%%;*}
		p=${v%%:*}; n=${v##*:}
		bs=$("$DB" -r -c "path $p" -c "print u3.bmx[$n].startblock" "$img" |
			sed -n 's/.* = //p')
		c=${c/@FSB:$v/$bs}
	done
	if [[ $c == *@FREEINO* ]]; then
		v=$("$DB" -r -c "agi 0" -c "print newino" "$img" | sed -n 's/.* = //p')
		c=${c//@FREEINO/$((v + 60))}
	fi
	if [[ $c == *@LEAF* ]]; then
		bs=$("$DB" -r -c "sb 0" -c "print blocksize" "$img" | sed -n 's/.* = //p')
		c=${c//@LEAF/$((32 * 1024 * 1024 * 1024 / bs))}
	fi
	printf '%s' "$c"
}

# damage NAME CMDS IMG: apply the edits; every command must succeed.
damage() {
	local args=() cmd
	IFS=';' read -r -a cmds <<<"$(expand "$2" "$3")"
	for cmd in "${cmds[@]}"; do args+=(-c "$cmd"); done
	"$DB" -x "${args[@]}" "$3" >"$W/db.out" 2>&1 || {
		echo "$1: xfskit-db edits failed: $(cat "$W/db.out")" >&2
		return 1
	}
}

# The dirty log: the kernel writes to the healthy base and is shut down
# with its log forced, so its changes are only in the log.
make_log() {
	local img=$1
	[ "$(id -u)" -eq 0 ] || { echo "log: needs root (loop mount)" >&2; return 1; }
	command -v xfs_io >/dev/null || { echo "log: needs xfs_io" >&2; return 1; }
	MNT="$W/mnt"
	mkdir -p "$MNT"
	mount -o loop "$img" "$MNT" || { MNT=""; return 1; }
	mkdir "$MNT/logged"
	for i in $(seq 1 40); do echo "logged $i" >"$MNT/logged/f$i"; done
	mv "$MNT/blk/entry_1" "$MNT/logged/moved"
	rm -f "$MNT"/leaf/leaf_directory_entry_1?
	setfattr -n user.logged -v yes "$MNT/xa/sf"
	ln -s logged "$MNT/logged_link"
	xfs_io -x -c 'shutdown -f' "$MNT"
	umount "$MNT"
	MNT=""
}

# crosscheck NAME IMG: xfs_repair -n flags IMG, and is clean after our
# repair of a copy.  Prints one table row.
crosscheck() {
	local name=$1 img=$2 before after b72 a72
	command -v xfs_repair >/dev/null || return 0
	xfs_repair -n "$img" >"$W/xr.before" 2>&1
	before=$?
	cp --sparse=always "$img" "$W/x.img"
	"$REPAIR" "$W/x.img" >/dev/null 2>&1
	xfs_repair -n "$W/x.img" >"$W/xr.after" 2>&1
	after=$?
	printf '%-16s xfs_repair 6.1 -n: damaged image exit %d, after xfskit-repair exit %d' \
		"$name" "$before" "$after"
	if "$top/scripts/xfsprogs-sid" dir >/dev/null 2>&1; then
		"$top/scripts/xfsprogs-sid" xfs_repair -n "$img" >/dev/null 2>&1
		b72=$?
		"$top/scripts/xfsprogs-sid" xfs_repair -n "$W/x.img" >"$W/xr72.after" 2>&1
		a72=$?
		printf '; 7.2: %d, %d' "$b72" "$a72"
		[ "$b72" != 0 ] || { echo "$name: xfs_repair 7.2 -n finds the damaged image clean" >&2; errors=$((errors + 1)); }
		[ "$a72" = 0 ] || { echo "$name: xfs_repair 7.2 -n after our repair: $(grep -v '^Phase\|^  *-' "$W/xr72.after" | head -5)" >&2; errors=$((errors + 1)); }
	fi
	echo
	if [ "$before" = 0 ]; then
		echo "$name: xfs_repair -n finds the damaged image clean" >&2
		errors=$((errors + 1))
	fi
	if [ "$after" != 0 ]; then
		echo "$name: xfs_repair -n after our repair: $(grep -v '^Phase\|^  *-\|geometry\|sector size mismatch\|host filesystem' "$W/xr.after" | head -5)" >&2
		errors=$((errors + 1))
	fi
}

wanted() {
	[ ${#only[@]} -eq 0 ] && return 0
	local o
	for o in "${only[@]}"; do [ "$o" = "$1" ] && return 0; done
	return 1
}

if [ -n "$regen" ]; then
	for d in "$dir"/*/; do
		name=$(basename "$d")
		wanted "$name" || continue
		[ -f "$d/image.xz" ] || continue
		xz -dc "$d/image.xz" >"$W/img"
		expects "$name" "$W/img"
		echo "$name: expect.* rewritten"
	done
	exit $((errors > 0))
fi

make_base
echo "base: $(sha256sum <"$W/base.img" | cut -c1-16) (sha256 prefix of the undamaged image)"
for c in "${CASES[@]}"; do
	IFS='|' read -r name descr cmds <<<"$c"
	wanted "$name" || continue
	img="$W/$name.img"
	cp --sparse=always "$W/base.img" "$img"
	damage "$name" "$cmds" "$img" || { errors=$((errors + 1)); continue; }
	mkdir -p "$dir/$name"
	echo "$descr" >"$dir/$name/descr"
	xz -6 -T1 -c "$img" >"$dir/$name/image.xz"
	crosscheck "$name" "$img"
	expects "$name" "$img"
done
# The kernel's log only when asked by name (its bytes change each time).
if [ ${#only[@]} -gt 0 ] && wanted log; then
	img="$W/log.img"
	cp --sparse=always "$W/base.img" "$img"
	if make_log "$img"; then
		mkdir -p "$dir/log"
		echo "a log the kernel left dirty (shut down with the log forced after a workload)" >"$dir/log/descr"
		xz -6 -T1 -c "$img" >"$dir/log/image.xz"
		crosscheck log "$img"
		expects log "$img"
	else
		errors=$((errors + 1))
	fi
fi
[ "$errors" -eq 0 ] || { echo "$errors error(s)" >&2; exit 1; }
echo "images in $dir: $(ls -d "$dir"/*/ | wc -l)"
