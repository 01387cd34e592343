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
need_xfsprogs
need_xfs72
[ "$(id -u)" -eq 0 ] || skip "the kernel populates and checks the images: needs root"
command -v strace >/dev/null 2>&1 || skip "strace is not installed (it proves that refusals write nothing)"

ADMIN="$XK_BUILDDIR/admin/xfskit-admin"
UNDO="$XK_BUILDDIR/repair/xfskit-undo"

mkimg() {
	TEST_DIR=1 TEST_DEV=1 QA_CHECK_FS=1 mkfs_xfs_image "$@" ||
		{ echo "mkfs.xfs $*: $(cat "$T/mkfs.out")" >&2; exit 99; }
}

# populate IMG: files in two directories, every third one deleted again
# (free inodes in used chunks), one 4 MiB file.
populate() {
	loop_mount "$1" || exit 99
	mkdir "$MNT/a" "$MNT/b" || exit 99
	for i in $(seq 1 300); do
		: >"$MNT/a/f$i"
		echo "$i" >"$MNT/b/g$i"
	done
	rm -f "$MNT"/a/f*3 "$MNT"/b/g*5
	head -c 4m /dev/urandom >"$MNT/data"
	loop_umount || exit 99
}

# clean IMG NAME: xfs_repair -n 6.1 and 7.2 find IMG clean.
clean() {
	xfs_repair_clean "$1" "$T/rep.out" ||
		{ fail "$2: $(cat "$T/rep.out")"; return 1; }
}

# fino_recs IMG: every AG's free inode btree records, as xfs_db dumps them.
fino_recs() {
	local a agc
	agc=$(db_get "$1" "sb 0" agcount)
	for a in $(seq 0 $((agc - 1))); do
		echo "AG $a"
		xfs_db -r -c "agi $a" -c "addr free_root" -c btdump "$1" 2>&1 |
			grep -E '^recs\[|^[0-9]+:\['
	done
}

# kernel_resv IMG: KRESV = the blocks the kernel holds back from statfs's
# free count at mount beyond the superblock's free count after unmount: its
# per-AG reservations plus what does not change with them (the reserve
# pool, the set-aside; the free space btrees stay one block here).
kernel_resv() {
	local bfree
	loop_mount "$1" || exit 99
	bfree=$(python3 -c 'import os, sys; print(os.statvfs(sys.argv[1]).f_bfree)' "$MNT")
	loop_umount || exit 99
	KRESV=$(($(db_get "$1" "sb 0" fdblocks) - bfree))
}

# resv_checked IMG NAME BEFORE: the reservation growth xfskit-admin
# printed is what the kernel now holds back more than BEFORE.
resv_checked() {
	local line after before want got
	line=$(grep '^Per-AG btree reservations at mount:' "$T/k.out")
	after=$(echo "$line" | sed -n 's/.*: \([0-9]*\) blocks (\([0-9]*\) before)$/\1/p')
	before=$(echo "$line" | sed -n 's/.*: \([0-9]*\) blocks (\([0-9]*\) before)$/\2/p')
	[ -n "$after" ] && [ -n "$before" ] ||
		{ fail "$2: no reservation line: $(cat "$T/k.out")"; return 1; }
	want=$((after - before))
	kernel_resv "$1"
	got=$((KRESV - $3))
	[ "$got" = "$want" ] &&
		pass "$2: the kernel reserves $got more blocks at mount, as xfskit-admin computed ($before -> $after)" ||
		fail "$2: the kernel reserves $got more blocks at mount, xfskit-admin computed $want ($before -> $after)"
}

# workload IMG NAME [reflink]: mount, make and delete many files (and a
# reflinked copy), unmount; no kernel error, clean after.
workload() {
	local since
	since=$(dmesg | wc -l)
	loop_mount "$1" || return 1
	mkdir "$MNT/w" || fail "$2: mkdir on the mounted result"
	for i in $(seq 1 1000); do : >"$MNT/w/n$i"; done
	rm -f "$MNT"/w/n*[02468] "$MNT"/a/f1*
	if [ "${3:-}" = reflink ]; then
		cp --reflink=always "$MNT/data" "$MNT/data.clone" ||
			fail "$2: cp --reflink=always fails on the upgraded filesystem"
		cmp -s "$MNT/data" "$MNT/data.clone" ||
			fail "$2: the reflinked copy differs"
		echo changed | dd of="$MNT/data.clone" conv=notrunc status=none
	fi
	[ "$(find "$MNT/w" -type f | wc -l)" = 500 ] ||
		fail "$2: the workload's files are not all there"
	loop_umount || { fail "$2: umount failed"; return 1; }
	errs=$(xfs_kernel_errors "$since")
	[ -z "$errs" ] || fail "$2: kernel errors: $errs"
	clean "$1" "$2, after the kernel's workload" &&
		pass "$2: the kernel mounted it, ran the workload${3:+ with a reflinked copy}, clean after"
}

# unchanged NAME RC PATTERN ARGS... IMG: xfskit-admin exits RC saying
# PATTERN and makes no write call.
unchanged() {
	local name=$1 want=$2 pat=$3
	shift 3
	refused_unwritten "$name" "$want" "$pat" "${*: -1}" "$ADMIN" "$@"
}

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
		# xfs_repair 7.2's own rebuild of the free inode btrees.
		cp --sparse=always "$FI" "$T/fi72.img" || exit 99
		xfs72 xfs_repair "$T/fi72.img" >"$T/r.out" 2>&1 ||
			fail "finobt=1: xfs_repair 7.2: $(tail -3 "$T/r.out")"
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

# -z: the undo file takes the upgrade back byte for byte.
cp --sparse=always "$T/fi0.img" "$T/k.img" || exit 99
"$ADMIN" -z "$T/u.undo" -O finobt=1 "$T/k.img" >"$T/k.out" 2>&1 ||
	fail "-z finobt=1: $(cat "$T/k.out")"
same_image "$T/k.img" "$T/fi0.img" && fail "-z finobt=1: the run changed nothing"
"$UNDO" "$T/u.undo" "$T/k.img" >"$T/u.out" 2>&1 || fail "xfskit-undo: $(cat "$T/u.out")"
same_image "$T/k.img" "$T/fi0.img" &&
	pass "-z finobt=1: xfskit-undo restores the image byte for byte" ||
	fail "-z finobt=1: after xfskit-undo the image differs from the original"

# A crash among the upgrade's writes (after the NEEDSREPAIR mark, among
# the rebuilt blocks) leaves the mark, and xfs_repair 7.2 completes it.
for n in 2 12; do
	cp --sparse=always "$T/fi0.img" "$T/k.img" || exit 99
	crash_completed "crash before write $n" "$n" "$T/k.img" \
		"$ADMIN" -O finobt=1 "$T/k.img"
done

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
	loop_mount "$T/full.img" || exit 99
	xfs_io -x -c "resblks 0" "$MNT" >/dev/null || fail "resblks 0 refused"
	i=0
	for sz in 64m 4m 256k 4k; do
		while xfs_io -f -c "falloc 0 $sz" "$MNT/fill$i" 2>/dev/null; do i=$((i + 1)); done
	done
	loop_umount || exit 99
	unchanged "$f=1 on full AGs" 1 "AG [0-9]+ lacks space: .* [0-9]+ more blocks" -O $f=1 "$T/full.img"
done

# Mounted.
cp --sparse=always "$T/fi0.img" "$T/k.img" || exit 99
if loop_mount "$T/k.img"; then
	MOUNTED=1 unchanged "mounted, finobt=1" 2 "mounted" -O finobt=1 "$T/k.img"
	loop_umount || fail "umount failed"
fi

finish
