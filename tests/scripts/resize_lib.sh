# SPDX-License-Identifier: GPL-2.0-or-later
# What the xfskit-resize tests (resize.sh, resize_shrink.sh) share, with
# what they need to run (skipping without it); sourced after lib.sh.
need_xfsprogs
have_xfs72 || true
[ "$(id -u)" -eq 0 ] || skip "the growfs oracle and the mount cases need root"
command -v xfs_growfs >/dev/null 2>&1 || skip "xfs_growfs is not installed"
command -v strace >/dev/null 2>&1 || skip "strace is not installed (it proves that refusals write nothing)"

RESIZE="$XK_BUILDDIR/resize/xfskit-resize"
UNDO="$XK_BUILDDIR/repair/xfskit-undo"

# db_cmds IMG: run each line of stdin (| separates commands) with print,
# LSN and CRC lines left out (the kernel stamps its log's LSN).
db_cmds() {
	local img=$1 line args=()
	while IFS= read -r line; do
		IFS='|' read -ra parts <<<"$line"
		for c in "${parts[@]}"; do args+=(-c "$c"); done
		args+=(-c print)
	done
	xfs_db -r "${args[@]}" "$img" 2>&1 | grep -vE '^(lsn|crc) = '
}

# unchanged NAME RC ARGS...: xfskit-resize exits RC with a message and
# the image stays what it was (no write call at all, seen by strace;
# with MOUNTED set the content is not compared: the kernel may write).
unchanged() {
	local name=$1 want=$2
	shift 2
	refused_unwritten "$name" "$want" "" "$T/k.img" "$RESIZE" "$@" "$T/k.img"
}

# crash_at N NW ARGS...: xfskit-resize ARGS on $T/k.img, killed before its
# Nth write of NW, leaves the NEEDSREPAIR mark of its first write on the
# primary, and xfs_repair 7.2 makes the filesystem clean.
crash_at() {
	local n=$1 nw=$2
	shift 2
	crash_completed "crash after $n of $nw writes" "$n" "$T/k.img" \
		"$RESIZE" "$@" "$T/k.img"
}

# mount_checked NAME IMG: xfs_repair -n (6.1 and 7.2) must call IMG clean,
# then the kernel mounts it; non-zero when either fails.  KLOG_SINCE is
# the kernel log's length before the mount, for umount_checked.
mount_checked() {
	if ! xfs_repair_clean "$2" "$T/rep.out"; then
		fail "$1: not clean: $(cat "$T/rep.out")"
		return 1
	fi
	pass "$1: xfs_repair -n clean"
	KLOG_SINCE=$(kmsg_mark)
	loop_mount "$2"
}

# umount_checked NAME: unmount; no new XFS error in the kernel log.
umount_checked() {
	loop_umount || fail "$1: umount failed"
	[ -z "$(xfs_kernel_errors "$KLOG_SINCE")" ] ||
		fail "$1: kernel errors: $(xfs_kernel_errors "$KLOG_SINCE" | head -2)"
}
