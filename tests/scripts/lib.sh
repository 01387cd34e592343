# SPDX-License-Identifier: GPL-2.0-or-later
# Shared helpers for the scripted image tests.  Each test sources this,
# works in its own scratch directory, and exits 0 (pass), 1 (fail),
# 77 (skip, with the reason on stderr) or 99 (hard error).

set -u
export TZ=UTC LC_ALL=C
# A sanitizer report must fail the test, never pass for an expected code.
export ASAN_OPTIONS="exitcode=99:detect_leaks=1"
export UBSAN_OPTIONS="halt_on_error=1:exitcode=99:print_stacktrace=1"

: "${XK_BUILDDIR:?run through make check}"
REPAIR="$XK_BUILDDIR/repair/xfskit-repair"
MKFS="$XK_BUILDDIR/mkfs/xfskit-mkfs"
DB="$XK_BUILDDIR/db/xfskit-db"

T=$(mktemp -d "${TMPDIR:-/tmp}/xk-test.XXXXXX")
MNT=""
LOOP_MOUNTED=0
FAILS=0

cleanup() {
	if [ "$LOOP_MOUNTED" = 1 ] && [ -n "$MNT" ]; then
		umount "$MNT" 2>/dev/null || umount -l "$MNT" 2>/dev/null
	fi
	rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 99' INT TERM

fail() {
	echo "FAIL: $*" >&2
	FAILS=$((FAILS + 1))
}

pass() {
	echo "ok: $*"
}

skip() {
	echo "SKIP: $*" >&2
	exit 77
}

finish() {
	if [ "$FAILS" -ne 0 ]; then
		echo "$FAILS check(s) failed" >&2
		exit 1
	fi
	exit 0
}

need_xfsprogs() {
	for p in mkfs.xfs xfs_db xfs_repair; do
		command -v "$p" >/dev/null 2>&1 ||
			skip "$p is not installed (scripts/deps installs xfsprogs)"
	done
}

# The second oracle: xfsprogs from Debian's unstable suite (7.2 today),
# run through scripts/xfsprogs-sid.  Tests that need it call need_xfs72,
# which skips with the reason where the tree could not be made.
XFS72="${XK_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/scripts/xfsprogs-sid"
need_xfs72() {
	"$XFS72" dir >/dev/null 2>&1 ||
		skip "no xfsprogs tree from Debian unstable (scripts/xfsprogs-sid setup, as root, makes it)"
	echo "oracle: $("$XFS72" xfs_repair -V) from Debian unstable"
}
xfs72() {
	"$XFS72" "$@"
}

# Mount an image read-write at $MNT; skip the test where loop mounting
# is not permitted.  Only images that should be valid come here.
loop_mount() {
	MNT="$T/mnt"
	mkdir -p "$MNT"
	if [ "$(id -u)" -ne 0 ]; then
		skip "loop mounting needs root"
	fi
	if ! mount -o loop "$1" "$MNT" 2>"$T/mount.err"; then
		if grep -qiE 'permission|not permitted|no such device|unknown filesystem' "$T/mount.err"; then
			skip "loop mount not permitted here: $(cat "$T/mount.err")"
		fi
		fail "mount of $1 failed: $(cat "$T/mount.err")"
		return 1
	fi
	LOOP_MOUNTED=1
	# Which loop device: kernel log lines name it ("XFS (loop3): ...").
	LOOP_DEV=$(findmnt -n -o SOURCE --target "$MNT")
	LOOP_DEV=${LOOP_DEV##*/}
}

# xfs_kernel_errors SINCE: XFS errors the kernel logged after line SINCE of
# dmesg about the last device loop_mount used (tests run in parallel, and
# some shut their own filesystems down on purpose).
xfs_kernel_errors() {
	dmesg | tail -n +"$(($1 + 1))" |
		grep -F "XFS (${LOOP_DEV:-none})" |
		grep -iE 'corrupt|error|fail|shut'
}

loop_umount() {
	umount "$MNT" && LOOP_MOUNTED=0
}

# A fresh sparse image made by mkfs.xfs with the given options.
mkfs_xfs_image() {
	img=$1 size=$2
	shift 2
	rm -f "$img"
	truncate -s "$size" "$img" || return 1
	mkfs.xfs -q -f "$@" "$img" >"$T/mkfs.out" 2>&1
}

# Read a field of an image with xfs_db; prints the value.
db_get() {
	img=$1 cmd=$2 field=$3
	xfs_db -r -c "$cmd" -c "print $field" "$img" 2>/dev/null |
		sed -n "s/^$field = //p"
}
