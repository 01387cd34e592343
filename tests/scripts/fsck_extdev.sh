#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# fsck.xfskit on filesystems with an external log (mkfs.xfs -l logdev=)
# or a realtime volume (-r rtdev=): fsck(8) passes only the data device,
# so the others come from the device's fstab entry ($LIBMOUNT_FSTAB, as
# fsck(8) reads it), held to xfs_repair -n -l / -r:
#  1. no entry: not checked (exit 4), the message says how to name the
#     device, nothing written;
#  2. an entry by UUID= with logdev=: clean (exit 0) where xfs_repair -n
#     -l is; by LABEL=, with a damaged counter: -p corrects it (exit 1)
#     and xfs_repair -n -l is clean after;
#  3. an entry by another spelling of the path with rtdev=, on a lost
#     realtime bitmap inode: -n finds it (exit 4), -y repairs it (exit 1)
#     and xfs_repair 7.2 -n -r is clean after;
#  4. an entry naming another filesystem's log: exit 8, the UUID
#     mismatch named, not one byte written in -y (image_state);
#  5. --logdev= on the command line wins over the entry;
#  6. loop block devices named in the entry (data and log): fsck -p
#     corrects a counter, xfs_repair -n -l is clean and the host kernel
#     mounts it with -o logdev=; a log it leaves dirty (shutdown -f) is
#     left by -n (exit 0, said) and replayed by -p on the log device,
#     the new entries there after, xfs_repair -n -l clean.
. "$XK_SRCDIR/tests/scripts/lib.sh"
. "$XK_SRCDIR/tests/scripts/rt_lib.sh"
need_xfsprogs
need_xfs72

FSCK="$XK_BUILDDIR/fsck/fsck.xfskit"
export XK_REPAIR="$REPAIR"
[ -x "$FSCK" ] || skip "fsck.xfskit is not built"
export LIBMOUNT_FSTAB=$T/fstab

# run_fsck NAME EXPECTED ARGS...: run it and compare its exit status.
run_fsck() {
	local name=$1 want=$2 got
	shift 2
	got=$("$FSCK" "$@" >"$T/fsck.out" 2>&1; echo $?)
	[ "$got" = "$want" ] && pass "$name: fsck.xfskit $* -> $got" ||
		fail "$name: fsck.xfskit $* exited $got, expected $want: $(cat "$T/fsck.out")"
}

# mkext DATA LOG [OPTS...]: mkfs.xfs 6.1 with an external 64 MiB log.
mkext() {
	local d=$1 l=$2
	shift 2
	rm -f "$d" "$l"
	truncate -s 80m "$l"
	mkfs.xfs -q "$@" -l logdev="$l",size=64m -d file,name="$d",size=512m
}

d=$T/d.img l=$T/l.img d2=$T/d2.img l2=$T/l2.img
mkext "$d" "$l" -L extlbl || fail "mkfs.xfs -l logdev= failed"
mkext "$d2" "$l2" || fail "mkfs.xfs -l logdev= (second) failed"
xfs_repair -n -l "$l" "$d" >"$T/x.out" 2>&1 ||
	fail "xfs_repair -n -l finds the fresh image dirty: $(tail -3 "$T/x.out")"

# 1. No entry.
echo "# nothing here" >"$LIBMOUNT_FSTAB"
before=$(image_state "$d" "$l")
run_fsck "no entry" 4 -y "$d"
grep -q "name the device with --logdev=" "$T/fsck.out" ||
	fail "no entry: the message does not say how to name the log: $(cat "$T/fsck.out")"
[ "$(image_state "$d" "$l")" = "$before" ] || fail "no entry: the image changed"

# 2. UUID= and LABEL=.
uuid=$(db_get "$d" "sb 0" uuid)
printf 'UUID=%s /srv xfs defaults,logdev=%s,noatime 0 2\n' "$uuid" "$l" >"$LIBMOUNT_FSTAB"
run_fsck "UUID=" 0 -n "$d"
printf '/dev/nothing / xfs defaults 0 1\nLABEL=extlbl /srv xfs logdev=%s 0 2\n' "$l" >"$LIBMOUNT_FSTAB"
xfs_db -x -l "$l" -c "sb 0" -c "write -d fdblocks 12345" "$d" >/dev/null 2>&1
xfs_repair -n -l "$l" "$d" >/dev/null 2>&1 && fail "LABEL=: the damage did not take"
run_fsck "LABEL=" 1 -p "$d"
xfs_repair -n -l "$l" "$d" >"$T/x.out" 2>&1 &&
	pass "LABEL=: xfs_repair -n -l clean after fsck -p" ||
	fail "LABEL=: xfs_repair -n -l after fsck -p: $(grep -v '^Phase\|^  *-' "$T/x.out" | tail -4)"

# 4. Another filesystem's log, named in the entry.
printf '%s /srv xfs logdev=%s 0 2\n' "$d2" "$l" >"$LIBMOUNT_FSTAB"
xfs_db -x -l "$l2" -c "sb 0" -c "write -d fdblocks 12345" "$d2" >/dev/null 2>&1
before=$(image_state "$d2" "$l" "$l2")
run_fsck "wrong log" 8 -y "$d2"
grep -q "not this filesystem's log" "$T/fsck.out" ||
	fail "wrong log: the mismatch is not named: $(cat "$T/fsck.out")"
[ "$(image_state "$d2" "$l" "$l2")" = "$before" ] &&
	pass "wrong log: nothing written" || fail "wrong log: an image changed"
# 5. The command line wins.
run_fsck "--logdev" 1 -y --logdev="$l2" "$d2"
xfs_repair -n -l "$l2" "$d2" >/dev/null 2>&1 ||
	fail "--logdev: xfs_repair -n -l finds damage after fsck -y"

# 6. Block devices, as at boot: the entry names the data loop device and
#    the log's; after fsck -p the kernel mounts it with those options.
DLOOP="" LLOOP=""
trap 'umount "$T/mnt" 2>/dev/null; for x in $DLOOP $LLOOP; do losetup -d "$x"; done; cleanup' EXIT
if [ "$(id -u)" -eq 0 ] && DLOOP=$(losetup -f --show "$d2") &&
   LLOOP=$(losetup -f --show "$l2"); then
	printf '%s /srv xfs defaults,logdev=%s 0 2\n' "$DLOOP" "$LLOOP" >"$LIBMOUNT_FSTAB"
	xfs_db -x -l "$LLOOP" -c "sb 0" -c "write -d fdblocks 12345" "$DLOOP" >/dev/null 2>&1
	run_fsck "block devices" 1 -p "$DLOOP"
	if xfs_repair -n -l "$LLOOP" "$DLOOP" >"$T/x.out" 2>&1; then
		mkdir -p "$T/mnt"
		if mount -o "logdev=$LLOOP" "$DLOOP" "$T/mnt" 2>"$T/mount.err"; then
			mkdir "$T/mnt/dir" && echo hello >"$T/mnt/f" &&
				xfs_io -x -c "shutdown -f" "$T/mnt" && umount "$T/mnt" &&
				pass "block devices: mounted with -o logdev=, written, shut down (log left dirty)" ||
				fail "block devices: writing, shutting down or unmounting failed"
		else
			fail "block devices: mount -o logdev= after fsck -p: $(cat "$T/mount.err")"
		fi
		# The dirty external log: -n leaves it, -p replays it there.
		run_fsck "dirty log" 0 -n "$DLOOP"
		grep -q "the log is dirty" "$T/fsck.out" ||
			fail "dirty log: -n does not say the log is dirty: $(cat "$T/fsck.out")"
		run_fsck "dirty log" 0 -p "$DLOOP"
		grep -q "replayed the log" "$T/fsck.out" ||
			fail "dirty log: -p did not replay it: $(cat "$T/fsck.out")"
		if ! xfs_repair -n -l "$LLOOP" "$DLOOP" >"$T/x.out" 2>&1; then
			fail "dirty log: xfs_repair -n -l after fsck -p: $(tail -4 "$T/x.out")"
		elif mount -o "logdev=$LLOOP" "$DLOOP" "$T/mnt" 2>"$T/mount.err"; then
			[ -d "$T/mnt/dir" ] && [ -e "$T/mnt/f" ] &&
				pass "dirty log: replayed by fsck -p, what the log held is there" ||
				fail "dirty log: /dir or /f missing after the replay: $(ls "$T/mnt")"
			umount "$T/mnt"
		else
			fail "dirty log: mount after fsck -p: $(cat "$T/mount.err")"
		fi
	else
		fail "block devices: xfs_repair -n -l after fsck -p: $(tail -4 "$T/x.out")"
	fi
	losetup -d "$DLOOP" "$LLOOP" && DLOOP="" LLOOP=""
else
	echo "note: no loop devices: the block device case is not run"
fi

# 3. A realtime volume, its path spelled another way.
rt=$T/rt.img
if rt_image 6.1 "$d" "$rt"; then
	xfs_db -x -c "inode 129" -c "write core.mode 0" -c "write core.nextents 0" \
		"$d" >/dev/null 2>&1
	printf '%s/./d.img /srv xfs rw,rtdev=%s 0 2\n' "$T" "$rt" >"$LIBMOUNT_FSTAB"
	run_fsck "rtdev=" 4 -n "$d"
	grep -q "realtime bitmap inode 129 is free" "$T/fsck.out" ||
		fail "rtdev=: the lost bitmap inode is not named: $(cat "$T/fsck.out")"
	run_fsck "rtdev=" 1 -y "$d"
	xfs72 xfs_repair -n -r "$rt" "$d" >"$T/x.out" 2>&1 &&
		pass "rtdev=: xfs_repair 7.2 -n -r clean after fsck -y" ||
		fail "rtdev=: xfs_repair 7.2 -n -r after fsck -y: $(grep -v '^Phase\|^  *-' "$T/x.out" | tail -4)"
else
	fail "mkfs.xfs 6.1 with realtime files: $(cat "$T/rt_why")"
fi
finish
