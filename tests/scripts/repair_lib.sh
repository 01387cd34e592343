# SPDX-License-Identifier: GPL-2.0-or-later
# Sourced by the repair tests after lib.sh: recording a mounted tree,
# walking an image through the kernel, and counting what a repair kept.

# entries MNT: one line per entry: path, type, content (sha256 for files,
# target for symlinks), sorted.  A file of 64 MiB or more is recorded by
# its size: a repair may keep a damaged (sparse, huge) size, and hashing
# exabytes of holes would never end; no recorded tree has such a file.
entries() {
	(cd "$1" && {
		find . -xdev ! -type f -printf '%p\t%y\t%l\n'
		find . -xdev -type f -size +65535k -printf '%p\tf\tsize:%s\n'
		find . -xdev -type f -size -65536k -print0 |
			xargs -0 -r sha256sum 2>/dev/null |
			sed 's/^\([0-9a-f]*\)  \(.*\)$/\2\tf\t\1/'
	} | LC_ALL=C sort)
}

# entries_xattrs DIR: every entry of the tree at DIR (as entries) and every
# xattr (file, name, value in hex), one a line, sorted.
entries_xattrs() {
	{
		entries "$1"
		(cd "$1" && getfattr -h -d -m - -e hex -R . 2>/dev/null) |
			awk '/^# file: / { f = $3; next } /=/ { print "xattr " f " " $0 }'
	} | sort
}

# walk IMG OUT: mount a copy of IMG, record its entries in OUT, unmount;
# prints the new XFS errors of the kernel log, if any.  With WALK_XATTRS
# set to a file, the xattrs (name=value) of the entries under /attrs go
# there too, sorted, from the same mount.
walk() {
	local before
	cp --sparse=always "$1" "$T/walk.img"
	before=$(kmsg_mark)
	if ! loop_mount "$T/walk.img"; then
		: >"$2"
		[ -n "${WALK_XATTRS:-}" ] && : >"$WALK_XATTRS"
		echo "mount failed"
		return 1
	fi
	entries "$MNT" >"$2"
	[ -n "${WALK_XATTRS:-}" ] && attrs_xattrs "$MNT" >"$WALK_XATTRS"
	loop_umount
	rm -f "$T/walk.img"
	xfs_kernel_errors "$before" | head -3
}

# attrs_xattrs MNT: every xattr (name=value) of the entries under
# MNT/attrs, sorted.
attrs_xattrs() {
	(cd "$1" && getfattr -h -d -m - -- attrs/* 2>/dev/null) |
		grep = | LC_ALL=C sort
}

# preserved TREE: entries of TREE identical (path, type, content) to the
# recorded $T/tree.base.
preserved() {
	LC_ALL=C comm -12 "$T/tree.base" "$1" | wc -l
}

# contents TREE: the content hashes of the regular files of a tree
# recorded by entries, sorted (a multiset: one line per file).
contents() {
	awk -F '\t' '$2 == "f" { print $3 }' "$1" | LC_ALL=C sort
}

# files_kept BASE TREE: files of BASE whose content is found anywhere in
# TREE (under any name, /lost+found included), each found file counted
# once.
files_kept() {
	LC_ALL=C comm -12 <(contents "$1") <(contents "$2") | wc -l
}

# damaged_image IMG: a 320 MiB rmapbt image populated by the kernel with
# every format (populate.sh, needs root), then damaged so that a repair
# takes every path of the engine over several passes: a data fork's
# extent count zeroed (rebuilt from the rmapbt), a block directory entry
# naming no inode (rewritten), a short-form directory freed (its entries
# go to a new /lost+found), AG 0's inobt root destroyed (AG btrees
# rebuilt) and an inode's magic (the inode scan salvages it).
damaged_image() {
	local img=$1 sf block extents small
	rm -f "$img"
	truncate -s 320m "$img"
	mkfs.xfs -q -f -m rmapbt=1 "$img" || { fail "mkfs.xfs failed"; return 1; }
	loop_mount "$img" || return 1
	populate_all_formats "$MNT" || fail "populate"
	sf=$(stat -c %i "$MNT/sf") block=$(stat -c %i "$MNT/block")
	extents=$(stat -c %i "$MNT/extents") small=$(stat -c %i "$MNT/small")
	loop_umount
	xfs_db -x -c "inode $extents" -c "write -d core.nextents 0" \
		-c "inode $block" -c "dblock 0" \
		-c "write -d bu[5].inumber 4000000" \
		-c "inode $sf" -c "write -d core.mode 0" \
		-c "agi 0" -c "addr root" -c "write -d magic 0" \
		-c "inode $small" -c "write -d core.magic 0" \
		"$img" >"$T/db.out" 2>&1 ||
		{ fail "xfs_db could not damage the image: $(head -3 "$T/db.out")"; return 1; }
}

# stop_outcome NAME SRC IMG UNDO ERR CAUSE: a run that exited 1 having
# stopped on an operational error (its stderr in ERR) must say so with
# CAUSE (an extended regex), and leave IMG byte-identical to SRC: as it
# was when it says nothing was written, else once xfskit-undo applied
# UNDO.  Sets OUTCOME to "untouched" or "undone"; fails otherwise.
stop_outcome() {
	local name=$1 src=$2 img=$3 undo=$4 err=$5 cause=$6 msg
	OUTCOME=failed
	msg=$(grep -m1 ': stopping' "$err")
	if [ -z "$msg" ]; then
		fail "$name: exit 1 without saying it stopped: $(tail -3 "$err")"
		return
	fi
	grep -Eq "^xfskit-repair: .*: ($cause) while .*: stopping" "$err" ||
		fail "$name: the message does not give the cause ($cause): $msg"
	if grep -q 'stopping before any change was written' "$err"; then
		same_image "$img" "$src" && OUTCOME=untouched ||
			fail "$name: says nothing was written, yet the image changed: $msg"
	elif "$XK_BUILDDIR/repair/xfskit-undo" "$undo" "$img" >"$T/u.out" 2>&1 &&
	     same_image "$img" "$src"; then
		OUTCOME=undone
	else
		fail "$name: stopped after writing, and the undo file does not restore the image: $msg $(cat "$T/u.out")"
	fi
}

# theirs_needed OURS TOTAL: whether xfs_repair's result on a copy must
# be measured to judge a case where ours kept OURS of TOTAL entries.
# When ours kept everything xfs_repair cannot keep more, so it is
# measured only under long_tests (for the full table).
theirs_needed() {
	[ "$1" -lt "$2" ] || long_tests
}

# xfs_repair_admin IMG: repair IMG with xfs_repair 6.1 as an
# administrator would (again while it still finds something; -L when it
# asks); 0 when xfs_repair -n then calls it clean.  Its output is in
# $T/xr.out.
xfs_repair_admin() {
	xfs_repair "$1" >"$T/xr.out" 2>&1 ||
		xfs_repair -L "$1" >>"$T/xr.out" 2>&1
	xfs_repair -n "$1" >/dev/null 2>&1 ||
		xfs_repair "$1" >>"$T/xr.out" 2>&1
	xfs_repair -n "$1" >/dev/null 2>&1
}

# kept IMG OUT: the entries and xattrs of IMG (entries_xattrs) into OUT,
# from a mounted copy; empty when the kernel refuses it, which is left
# to the caller's comparison (xfs_repair's own result may be refused:
# its LSNs ahead of the log).  Only images xfs_repair -n calls clean
# come here.
kept() {
	cp --sparse=always "$1" "$T/k.img"
	: >"$2"
	MNT="$T/mnt"
	mkdir -p "$MNT"
	if mount -o loop "$T/k.img" "$MNT" 2>/dev/null; then
		LOOP_MOUNTED=1
		entries_xattrs "$MNT" >"$2"
		loop_umount
	fi
	rm -f "$T/k.img"
}

# files_image IMG N [MKFS_OPTS...]: IMG a 320 MiB filesystem made by
# mkfs.xfs with MKFS_OPTS and filled through a loop mount with /d/f1 ..
# /d/fN ("file I" each); its tree recorded in $T/tree.base, its entry
# count in TOTAL.  Exits 99 when any step fails.
files_image() {
	local img=$1 n=$2 i
	shift 2
	mkfs_xfs_image "$img" 320m "$@" || { echo "mkfs.xfs failed" >&2; exit 99; }
	loop_mount "$img" || exit 99
	mkdir "$MNT/d"
	for i in $(seq "$n"); do echo "file $i" >"$MNT/d/f$i"; done
	loop_umount || exit 99
	walk "$img" "$T/tree.base" >/dev/null || { echo "walking $img" >&2; exit 99; }
	TOTAL=$(wc -l <"$T/tree.base")
}

# ino_of IMG PATH: the inode number of PATH in IMG (xfs_db).
ino_of() {
	xfs_db -r -c "path $2" -c "inode" "$1" 2>/dev/null |
		sed -n 's/^current inode number is \([0-9]*\).*/\1/p'
}

# xfs_repair_kept IMG: IMG repaired by xfs_repair_admin, then, when
# xfs_repair -n calls it clean, walked into $T/tree.theirs; prints the
# entries preserved, 0 when it is not clean.
xfs_repair_kept() {
	if xfs_repair_admin "$1"; then
		walk "$1" "$T/tree.theirs" >/dev/null
		preserved "$T/tree.theirs"
	else
		echo 0
	fi
}

# damage72 NAME CMDS SRC DST: DST a copy of SRC damaged by xfs_db 7.2 -x
# running CMDS, xfs_db commands separated by '|'; when xfs_db fails or
# complains, NAME fails and the status is 1.
damage72() {
	local args=() c parts
	IFS='|' read -ra parts <<<"$2"
	for c in "${parts[@]}"; do args+=(-c "$c"); done
	cp --sparse=always "$3" "$4"
	if ! xfs72 xfs_db -x "${args[@]}" "$4" >"$T/$1.db" 2>&1 ||
	   grep -qi 'error\|invalid\|not found\|bad' "$T/$1.db"; then
		fail "$1: xfs_db 7.2 could not damage the image: $(head -3 "$T/$1.db")"
		return 1
	fi
}

# metadir72_image IMG: a new 320 MiB filesystem with the metadata
# directory tree made by mkfs.xfs 7.2 in IMG; the test skips where 7.2
# cannot make one.
metadir72_image() {
	truncate -s 320m "$1"
	xfs72 mkfs.xfs -q -f -m metadir=1 "$1" >"$T/mkfs.out" 2>&1 ||
		skip "mkfs.xfs 7.2 cannot make -m metadir=1: $(head -2 "$T/mkfs.out")"
}

# metadir72_tree IMG: the metadata tree's root and /rtgroups as xfs_db
# 7.2 lists them.
metadir72_tree() {
	xfs72 xfs_db -r -c "ls -m /" -c "ls -m /rtgroups" "$1" 2>&1
}

# ours_repaired IMG OUT: xfskit-repair on IMG (its output in OUT) must
# complete in one run (exit 0 or 4), else the test fails and finishes;
# then xfs_repair -n (6.1, and 7.2 where it is) must find IMG clean.
ours_repaired() {
	local rc
	"$REPAIR" "$1" >"$2" 2>&1
	rc=$?
	if [ "$rc" -ne 0 ] && [ "$rc" -ne 4 ]; then
		fail "xfskit-repair exit $rc: $(grep -v '^ *-\|^Phase' "$2" | tail -2)"
		finish
	fi
	pass "xfskit-repair completed in one run (exit $rc)"
	if xfs_repair_clean "$1" "$T/xr.out"; then
		pass "xfs_repair -n clean after ours"
	else
		fail "xfs_repair -n after ours: $(grep -v '^ *-\|^Phase' "$T/xr.out" | head -3)"
	fi
}
