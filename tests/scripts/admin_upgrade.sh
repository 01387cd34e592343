#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# xfskit-admin -O finobt=1 and -O reflink=1, which no xfs_admin can do,
# on images mkfs.xfs made without the feature and the host kernel
# populated (files made and deleted, so chunks have free inodes): the
# result has the feature bit, xfs_repair -n 6.1 and 7.2 find it clean,
# its free inode btree holds the records xfs_repair 7.2 rebuilds, the
# kernel holds back at mount the per-AG reservation growth xfskit-admin
# printed (statfs's free blocks against the superblock's), the
# kernel mounts it and runs a workload on it (reflinked copies after
# reflink=1) without an error, and it is clean again after.  Refusals
# write nothing (strace sees no write call): an AG too full for the
# kernel's per-AG reservation (the message gives the blocks needed), a
# root inode the new btree roots would leave where xfs_repair does not
# expect it, a mounted filesystem.  A crash mid-upgrade leaves the
# NEEDSREPAIR mark xfs_repair completes; -z's undo file restores the
# image byte for byte.  With the rmapbt, both upgrades are clean too.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/admin_lib.sh"

# --- finobt=1 (with inobtcount=1, which needs it) ---
FI="$T/fi.img"
mkimg "$FI" 128m -l size=16m -m finobt=0,inobtcount=0
populate "$FI"
cp --sparse=always "$FI" "$T/fi0.img" || exit 99
kernel_resv "$FI"
r0=$KRESV
if "$ADMIN" -O finobt=1,inobtcount=1 "$FI" >"$T/k.out" 2>&1; then
	v=$(xfs_db -r -c version "$FI")
	case "$v" in
	*FINOBT*INOBTCNT*) pass "finobt=1,inobtcount=1: xfs_db shows FINOBT and INOBTCNT" ;;
	*) fail "finobt=1,inobtcount=1: xfs_db's version: $v" ;;
	esac
	if clean "$FI" "finobt=1"; then
		pass "finobt=1: xfs_repair -n 6.1 and 7.2 clean"
		repaired72 "$FI" "$T/fi72.img" "finobt=1"
		fino_recs "$FI" >"$T/fino.k"
		fino_recs "$T/fi72.img" >"$T/fino.72"
		if ! grep -q '^recs\[\|:\[' "$T/fino.k"; then
			fail "finobt=1: no free inode btree record at all: $(head -5 "$T/fino.k")"
		elif diff "$T/fino.72" "$T/fino.k" >"$T/fino.diff"; then
			pass "finobt=1: the free inode btrees hold the records xfs_repair 7.2 rebuilds ($(grep -c '^AG' "$T/fino.k") AGs)"
		else
			fail "finobt=1: free inode btree records differ from xfs_repair 7.2's rebuild: $(head -6 "$T/fino.diff")"
		fi
		resv_checked "$FI" "finobt=1" "$r0"
		workload "$FI" "finobt=1"
	fi
else
	fail "finobt=1,inobtcount=1: $(cat "$T/k.out")"
fi

undo_and_crash "$T/fi0.img" finobt 2 12

# --- reflink=1 ---
RF="$T/rf.img"
mkimg "$RF" 128m -l size=16m -m reflink=0
populate "$RF"
kernel_resv "$RF"
r0=$KRESV
if "$ADMIN" -O reflink=1 "$RF" >"$T/k.out" 2>&1; then
	case "$(xfs_db -r -c version "$RF")" in
	*REFLINK*) pass "reflink=1: xfs_db shows REFLINK" ;;
	*) fail "reflink=1: xfs_db's version: $(xfs_db -r -c version "$RF")" ;;
	esac
	[ "$(db_get "$RF" "agf 1" refcntlevel)" = 1 ] &&
		[ "$(db_get "$RF" "agf 1" refcntblocks)" = 1 ] ||
		fail "reflink=1: AG 1's refcount btree: level $(db_get "$RF" "agf 1" refcntlevel), $(db_get "$RF" "agf 1" refcntblocks) blocks"
	clean "$RF" "reflink=1" && pass "reflink=1: xfs_repair -n 6.1 and 7.2 clean" &&
		resv_checked "$RF" "reflink=1" "$r0" &&
		workload "$RF" "reflink=1" reflink
else
	fail "reflink=1: $(cat "$T/k.out")"
fi

# --- with the rmapbt: the new trees' blocks get their owners' records
# (xfs_repair checks every reverse mapping against what it observes) ---
for f in finobt reflink; do
	if [ $f = reflink ]; then m=rmapbt=1,reflink=0; else m=rmapbt=1,finobt=0,inobtcount=0; fi
	mkimg "$T/k.img" 96m -l size=16m -m $m
	populate "$T/k.img"
	if ! "$ADMIN" -O $f=1 "$T/k.img" >"$T/k.out" 2>&1; then
		fail "rmapbt, $f=1: $(cat "$T/k.out")"
	elif clean "$T/k.img" "rmapbt, $f=1"; then
		pass "rmapbt, $f=1: xfs_repair -n 6.1 and 7.2 clean"
	fi
done

# --- refusals ---
# Without finobt and reflink the root inode sits where xfs_repair
# expects it for such a filesystem, one alignment step lower than for
# one with either.
mkimg "$T/k.img" 64m -m finobt=0,inobtcount=0,reflink=0
unchanged "finobt=1 moving the expected root" 1 "root directory at inode" -O finobt=1 "$T/k.img"

# An AG that cannot keep what the kernel reserves at mount: filesystems
# without the feature filled by the kernel with its reserve pool emptied.
for f in reflink finobt; do
	if [ $f = reflink ]; then m=reflink=0; else m=finobt=0,inobtcount=0; fi
	mkimg "$T/full.img" 1g -m $m -d agcount=2 -l size=16m
	fill_ags "$T/full.img"
	unchanged "$f=1 on full AGs" 1 "AG [0-9]+ lacks space: .* [0-9]+ more blocks" -O $f=1 "$T/full.img"
done

# Mounted.
cp --sparse=always "$T/fi0.img" "$T/k.img" || exit 99
if loop_mount "$T/k.img"; then
	MOUNTED=1 unchanged "mounted, finobt=1" 2 "mounted" -O finobt=1 "$T/k.img"
	loop_umount || fail "umount failed"
fi

finish
