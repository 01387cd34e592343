#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Hands off mounted filesystems.  With an image loop-mounted read-write,
# through the loop device AND through the image file behind it, every
# writing tool refuses, naming the mount point, and never opens the
# target for writing (strace: no successful open with O_RDWR/O_WRONLY,
# so nothing can have been written): xfskit-repair (with and without -n,
# as xfs_repair refuses -n on a writable mount), -L, xfskit-db -x,
# xfskit-mkfs with and without -f, xfskit-undo, fsck.xfskit,
# xfskit-mdrestore.  xfskit-db without -x and xfskit-metadump run, with
# a warning, read-only.  The same after the live filesystem was shut down
# with its log dirty (the case where a replay would write into it).  A
# read-only mount may be checked with -n, with a warning, and is never
# repaired.
. "$XK_SRCDIR/tests/scripts/lib.sh"
need_xfsprogs
command -v strace >/dev/null 2>&1 || skip "strace is not installed"
command -v xfs_io >/dev/null 2>&1 || skip "xfs_io is not installed"
UNDO="$XK_BUILDDIR/repair/xfskit-undo"
FSCK="$XK_BUILDDIR/fsck/fsck.xfskit"
export XK_REPAIR="$REPAIR"
MD="$XK_BUILDDIR/db/xfskit-metadump"
MR="$XK_BUILDDIR/db/xfskit-mdrestore"

mkfs_xfs_image "$T/img" 512M || { fail "mkfs.xfs failed"; finish; }
# For xfskit-mdrestore and xfskit-undo: inputs that are valid by
# themselves, so only the mount can be the reason they refuse.
cp --sparse=always "$T/img" "$T/other"
"$MD" "$T/other" "$T/md" >/dev/null 2>&1 || fail "metadump of an unmounted image failed"
"$REPAIR" -z "$T/u.undo" "$T/other" >/dev/null 2>&1 || fail "repair -z of an unmounted image failed"

# Did the command open $1 for writing (successfully)?
opened_for_write() {
	grep -F "\"$1\"" "$T/trace" | grep -E 'O_RDWR|O_WRONLY' |
		grep -vE '= -1 ' | grep -q .
}

# LeakSanitizer cannot run under ptrace, hence detect_leaks=0 below.
# refused WHAT TARGET CMD...: refused, naming $MNT, TARGET never opened
# for writing.
refused() {
	local what=$1 target=$2 rc
	shift 2
	ASAN_OPTIONS=exitcode=99:detect_leaks=0 strace -f -qq -e trace=open,openat -o "$T/trace" "$@" >"$T/out" 2>&1 </dev/null
	rc=$?
	if [ $rc -eq 0 ]; then
		fail "$what on $target: not refused (exit 0): $(head -3 "$T/out")"
	elif [ $rc -ge 99 ]; then
		fail "$what on $target: exit $rc: $(head -5 "$T/out")"
	elif ! grep -qF "$MNT" "$T/out"; then
		fail "$what on $target: exit $rc without naming $MNT: $(head -3 "$T/out")"
	elif opened_for_write "$target"; then
		fail "$what on $target: refused, but opened it for writing"
	else
		pass "$what on $target: refused (exit $rc): $(grep -F "$MNT" "$T/out" | head -1 | cut -c1-140)"
	fi
}

# allowed WHAT TARGET CMD...: runs (exit 0) with a warning naming $MNT,
# TARGET never opened for writing.
allowed() {
	local what=$1 target=$2 rc
	shift 2
	ASAN_OPTIONS=exitcode=99:detect_leaks=0 strace -f -qq -e trace=open,openat -o "$T/trace" "$@" >"$T/out" 2>&1 </dev/null
	rc=$?
	if [ $rc -ne 0 ] || ! grep -q "warning.*$MNT" "$T/out"; then
		fail "$what on $target: exit $rc: $(head -3 "$T/out")"
	elif opened_for_write "$target"; then
		fail "$what on $target: opened it for writing"
	else
		pass "$what on $target: read-only with a warning"
	fi
}

writers() {
	local t=$1
	refused "xfskit-repair" "$t" "$REPAIR" "$t"
	refused "xfskit-repair -n" "$t" "$REPAIR" -n "$t"
	refused "xfskit-repair -L" "$t" "$REPAIR" -L "$t"
	refused "xfskit-db -x write" "$t" "$DB" -x -c 'sb 0' -c 'write -d dblocks 1' "$t"
	refused "xfskit-mkfs -f" "$t" "$MKFS" -f "$t"
	refused "xfskit-mkfs" "$t" "$MKFS" "$t"
	refused "xfskit-undo" "$t" "$UNDO" "$T/u.undo" "$t"
	refused "fsck.xfskit -y" "$t" "$FSCK" -y "$t"
	refused "xfskit-mdrestore" "$t" "$MR" "$T/md" "$t"
}

loop_mount "$T/img" || finish
mkdir "$MNT/d" && echo data >"$MNT/d/f" && sync
dev=/dev/$LOOP_DEV
for t in "$T/img" "$dev"; do
	writers "$t"
	allowed "xfskit-db (no -x)" "$t" "$DB" -c 'sb 0' -c 'print dblocks' "$t"
	allowed "xfskit-metadump" "$t" "$MD" "$t" "$T/md2"
done
# Another name for the same file (a hard link) is the same file.
ln "$T/img" "$T/img.link"
refused "xfskit-repair -L (hard link)" "$T/img.link" "$REPAIR" -L "$T/img.link"

# A live filesystem shut down with its log dirty: no replay into it.
echo more >"$MNT/d/g"
xfs_io -x -c 'shutdown -f' "$MNT" || fail "xfs_io shutdown failed"
for t in "$T/img" "$dev"; do
	refused "xfskit-repair (dirty log, live)" "$t" "$REPAIR" "$t"
	refused "fsck.xfskit -p (dirty log, live)" "$t" "$FSCK" -p "$t"
done
loop_umount_quiet() { umount "$MNT" 2>/dev/null || { sleep 1; umount "$MNT"; }; }
loop_umount_quiet && LOOP_MOUNTED=0

# Read-only mount of a clean image.
mkfs_xfs_image "$T/ro" 512M || { fail "mkfs.xfs failed"; finish; }
mount -o loop,ro "$T/ro" "$MNT" || { fail "mount -o ro failed"; finish; }
LOOP_MOUNTED=1
allowed "xfskit-repair -n (read-only mount)" "$T/ro" "$REPAIR" -n "$T/ro"
refused "xfskit-repair (read-only mount)" "$T/ro" "$REPAIR" "$T/ro"
refused "xfskit-db -x (read-only mount)" "$T/ro" "$DB" -x -c 'sb 0' "$T/ro"
umount "$MNT" && LOOP_MOUNTED=0
finish
