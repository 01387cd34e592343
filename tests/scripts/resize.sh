#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# xfskit-resize against the kernel's growfs: two copies of one mkfs.xfs
# image are extended to the same size; one is grown by xfs_growfs on the
# host kernel (loop mount), the other by xfskit-resize.  The primary
# superblock, every secondary (but its free block count, the kernel's
# in-core count of the moment), and the AGF, AGI, AGFL and btree roots of
# the grown last AG and of every new AG must print the same in xfs_db,
# LSNs and CRCs aside (the kernel stamps the LSN of its log; we write no
# log).  Cases: 6.1 defaults with new AGs only, rmapbt+reflink with the
# last AG growing and new AGs, and a kernel-populated image with
# two-level free-space btrees where only the last AG grows.  Each result
# is clean for xfs_repair -n 6.1 and 7.2 and the kernel mounts it and
# fills the new space with a file.  -n writes nothing (strace); -z's undo
# file restores the image byte for byte; a run killed between two writes
# leaves NEEDSREPAIR, which xfs_repair 7.2 completes; a loop device grows
# as the image file does; a shrink to one AG (shrinking has its own
# test, resize_shrink.sh), a size beyond the device, a tail too small for
# an AG, a mounted image, a dirty log and a NEEDSREPAIR mark are refused
# with the image unchanged; an external log is refused.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/resize_lib.sh"

# db_dump IMG CMDS...: xfs_db prints of the commands, LSN and CRC lines
# left out (the kernel stamps its log's LSN on what it writes).
db_dump() {
	local img=$1 args=() c
	shift
	for c in "$@"; do
		args+=(-c "$c" -c "print")
	done
	xfs_db -r "${args[@]}" "$img" 2>&1 | grep -vE '^(lsn|crc) = '
}

# grown_cmds OLD_AGCOUNT NEW_AGCOUNT ROOTS: the headers of the old last
# AG and of every new AG, with their btree roots (and free-space leaves).
grown_cmds() {
	local a r n i
	for a in $(seq $(($1 - 1)) $(($2 - 1))); do
		printf '%s\n' "agf $a" "agi $a" "agfl $a"
		for r in bno cnt $3; do
			printf '%s\n' "agf $a|addr ${r}root"
		done
		# The leaves of two-level free-space btrees.
		for r in bno cnt; do
			[ "$(db_get "$IMG_G" "agf $a" ${r}level)" = 2 ] || continue
			n=$(xfs_db -r -c "agf $a" -c "addr ${r}root" -c "print numrecs" \
				"$IMG_G" | sed -n 's/^numrecs = //p')
			for i in $(seq 1 "$n"); do
				printf '%s\n' "agf $a|addr ${r}root|addr ptrs[$i]"
			done
		done
		printf '%s\n' "agi $a|addr root"
		[ "$(db_get "$IMG_G" "agi $a" free_root)" = "" ] ||
			printf '%s\n' "agi $a|addr free_root"
	done
}


# compare NAME ORIG SIZE ROOTS: grow copies of ORIG extended to SIZE
# with xfs_growfs and with xfskit-resize; compare, check, mount, fill.
compare() {
	local name=$1 orig=$2 size=$3 roots=$4 oag nag a d
	IMG_G="$T/g.img" IMG_R="$T/r.img"
	cp --sparse=always "$orig" "$IMG_G" && cp --sparse=always "$orig" "$IMG_R" &&
		truncate -s "$size" "$IMG_G" "$IMG_R" || { echo "copy failed" >&2; exit 99; }
	oag=$(db_get "$orig" "sb 0" agcount)
	loop_mount "$IMG_G" || return
	xfs_growfs "$MNT" >"$T/growfs.out" 2>&1 || fail "$name: xfs_growfs: $(tail -1 "$T/growfs.out")"
	loop_umount || fail "$name: umount failed"
	if ! "$RESIZE" "$IMG_R" >"$T/r.out" 2>&1; then
		fail "$name: xfskit-resize failed: $(cat "$T/r.out")"
		return
	fi
	nag=$(db_get "$IMG_G" "sb 0" agcount)
	[ "$nag" -gt "$oag" ] || [ "$(db_get "$IMG_G" "agf $((oag - 1))" length)" != \
		"$(db_get "$orig" "agf $((oag - 1))" length)" ] ||
		{ echo "$name: the kernel did not grow it" >&2; exit 99; }
	d=$(diff <(db_dump "$IMG_G" "sb 0") <(db_dump "$IMG_R" "sb 0") | head -6)
	[ -z "$d" ] && pass "$name: primary superblock equal to xfs_growfs's (agcount $oag -> $nag)" ||
		fail "$name: primary superblock differs from xfs_growfs's: $d"
	grown_cmds "$oag" "$nag" "$roots" >"$T/cmds"
	d=$(diff <(db_cmds "$IMG_G" <"$T/cmds") <(db_cmds "$IMG_R" <"$T/cmds") | head -6)
	[ -z "$d" ] && pass "$name: AGF, AGI, AGFL and roots of AGs $((oag - 1))-$((nag - 1)) equal to xfs_growfs's" ||
		fail "$name: AG headers differ from xfs_growfs's: $d"
	for a in $(seq 1 $((nag - 1))); do echo "sb $a"; done >"$T/cmds"
	d=$(diff <(db_cmds "$IMG_G" <"$T/cmds" | grep -v '^fdblocks = ') \
		<(db_cmds "$IMG_R" <"$T/cmds" | grep -v '^fdblocks = ') | head -6)
	[ -z "$d" ] && pass "$name: secondary superblocks 1-$((nag - 1)) equal to xfs_growfs's but for fdblocks" ||
		fail "$name: secondary superblocks differ from xfs_growfs's: $d"
	checked "$name" "$IMG_R" "$(db_get "$orig" "sb 0" fdblocks)"
}

# checked NAME IMG OLD_FDBLOCKS: clean for xfs_repair -n; the kernel
# mounts it and allocates a file larger than the old free space (with
# AFTER_FILL set, xfs_repair 6.1 -n checks the result of that too).
checked() {
	local name=$1 img=$2 oldfree=$3 bs avail
	mount_checked "$name" "$img" || return
	bs=$(stat -f -c %S "$MNT")
	avail=$(stat -f -c %a "$MNT")
	if [ "$avail" -le "$oldfree" ]; then
		fail "$name: the mounted filesystem offers $avail blocks, no more than the $oldfree before"
	elif ! fallocate -l $(((avail - 256) * bs)) "$MNT/fill" 2>"$T/fa.err" ||
	     ! echo tail >>"$MNT/fill"; then
		fail "$name: filling the new space failed: $(cat "$T/fa.err")"
	else
		pass "$name: the kernel allocates $(((avail - 256) * bs >> 20)) MiB, more than the $((oldfree * bs >> 20)) MiB free before"
	fi
	umount_checked "$name"
	[ -z "${AFTER_FILL:-}" ] || xfs_repair -n "$img" >"$T/rep.out" 2>&1 ||
		fail "$name: not clean for xfs_repair 6.1 after the fill: $(grep -v '^Phase\|^  *-' "$T/rep.out" | tail -3)"
}

# 6.1 defaults: four full AGs, eleven new ones (the last partial).
mkfs_xfs_image "$T/a.img" 300M || { echo "mkfs.xfs failed" >&2; exit 99; }
compare "defaults, new AGs" "$T/a.img" 700M "ino"

# rmapbt+reflink, a partial last AG: it grows, then new AGs follow.
mkfs_xfs_image "$T/c.img" 300M -m rmapbt=1,reflink=1 -d agsize=128m ||
	{ echo "mkfs.xfs failed" >&2; exit 99; }
AFTER_FILL=1 compare "rmapbt+reflink, last AG and new AGs" "$T/c.img" 600M "ino rmap refcnt"

# Kernel-populated: 1200 one-block files in each AG, every other one
# deleted, so each AG's bnobt and cntbt have two levels; only the last
# AG grows, its last free extent merged with the new space in place.
mkfs_xfs_image "$T/p.img" 300M -d agsize=128m || { echo "mkfs.xfs failed" >&2; exit 99; }
loop_mount "$T/p.img" || finish
for d in 1 2 3; do
	mkdir "$MNT/d$d"
	for i in $(seq 1 1200); do echo x >"$MNT/d$d/f$i"; done
done
sync -f "$MNT"
rm -f "$MNT"/d?/f*[13579]
loop_umount || fail "umount failed"
[ "$(db_get "$T/p.img" "agf 2" bnolevel)" = 2 ] && [ "$(db_get "$T/p.img" "agf 2" cntlevel)" = 2 ] ||
	{ echo "the populated image's AG 2 free-space btrees do not have 2 levels" >&2; exit 99; }
compare "populated, 2-level free-space btrees, only the last AG grows" "$T/p.img" 350M "ino"

cp --sparse=always "$T/c.img" "$T/k.img" && truncate -s 600M "$T/k.img"
unchanged "-n" 0 -n
grep -q "^AG 2 grows from 11264 to 32768 blocks" "$T/k.out" && grep -q "agcount=5" "$T/k.out" ||
	fail "-n: the plan printed is not the expected one: $(cat "$T/k.out")"
unchanged "shrink to one AG" 3 -D 30000
grep -q "a filesystem keeps at least 2" "$T/k.err" || fail "shrink to one AG: message: $(cat "$T/k.err")"
unchanged "-D beyond the device" 1 -D 153601
unchanged "-D bad" 2 -D 12q
cp --sparse=always "$T/a.img" "$T/k.img" && truncate -s 700M "$T/k.img"
# 4 whole AGs of 19200 blocks and 40: too few for a fifth AG.
unchanged "tail under 64 blocks" 0 -D $((4 * 19200 + 40))
grep -q "unchanged" "$T/k.out" || fail "tail under 64 blocks: $(cat "$T/k.out")"

# -D with a suffix, and -z: xfskit-undo takes the grow back.
cp --sparse=always "$T/k.img" "$T/before.img"
"$RESIZE" -z "$T/u.undo" -D 500m "$T/k.img" >"$T/k.out" 2>&1 || fail "-z -D 500m: $(cat "$T/k.out")"
[ "$(db_get "$T/k.img" "sb 0" dblocks)" = 128000 ] ||
	fail "-D 500m: dblocks $(db_get "$T/k.img" "sb 0" dblocks), expected 128000"
same_image "$T/k.img" "$T/before.img" && fail "-z: the run changed nothing"
"$UNDO" "$T/u.undo" "$T/k.img" >"$T/u.out" 2>&1 || fail "xfskit-undo: $(cat "$T/u.out")"
same_image "$T/k.img" "$T/before.img" && pass "-z: xfskit-undo restores the image byte for byte" ||
	fail "-z: after xfskit-undo the image differs from the original"

# A crash (killed before its Nth write: among the new AG headers, before
# the final primary) leaves the NEEDSREPAIR mark of the first write on
# the primary, and xfs_repair 7.2 makes the filesystem clean.
cp --sparse=always "$T/c.img" "$T/k.img" && truncate -s 600M "$T/k.img"
ASAN_OPTIONS="$ASAN_OPTIONS:detect_leaks=0" \
strace -f -qq -e trace=pwrite64,pwritev,pwritev2 -o "$T/strace" "$RESIZE" "$T/k.img" >/dev/null 2>&1 ||
	fail "counting the writes: the run failed"
nw=$(grep -c pwrite "$T/strace")
if have_xfs72 >/dev/null 2>&1; then
	for n in $((nw / 2)) $((nw - 1)); do
		cp --sparse=always "$T/c.img" "$T/k.img" && truncate -s 600M "$T/k.img"
		crash_at "$n" "$nw"
	done
fi
# A run cut that way is refused (this run's guard would clear its mark).
cp --sparse=always "$T/c.img" "$T/k.img" && truncate -s 600M "$T/k.img"
LIBXFS_DEBUG_WRITE_CRASH=ddev=2 "$RESIZE" "$T/k.img" >/dev/null 2>&1
unchanged "NEEDSREPAIR" 1
grep -q "marked as needing repair" "$T/k.err" || fail "NEEDSREPAIR: $(cat "$T/k.err")"

# A block device (loop): grown to the size it has, only once its size
# is re-read (losetup -c), and byte for byte as the same image file.
cp --sparse=always "$T/c.img" "$T/dev.img" && cp --sparse=always "$T/c.img" "$T/file.img" &&
	truncate -s 600M "$T/file.img" || { echo "copy failed" >&2; exit 99; }
if LDEV=$(losetup -f --show "$T/dev.img" 2>"$T/lo.err"); then
	truncate -s 600M "$T/dev.img"
	"$RESIZE" "$LDEV" >"$T/d1.out" 2>&1; rc1=$?
	losetup -c "$LDEV" && "$RESIZE" "$LDEV" >"$T/d2.out" 2>&1; rc2=$?
	losetup -d "$LDEV"
	"$RESIZE" "$T/file.img" >/dev/null 2>&1 || fail "block device: growing the file copy failed"
	if [ "$rc1" != 0 ] || ! grep -q "unchanged" "$T/d1.out"; then
		fail "block device before losetup -c: exit $rc1: $(cat "$T/d1.out")"
	elif [ "$rc2" != 0 ]; then
		fail "block device: exit $rc2: $(cat "$T/d2.out")"
	elif ! same_image "$T/dev.img" "$T/file.img"; then
		fail "block device: the result differs from the image file's"
	else
		pass "block device: unchanged until losetup -c, then grown as the image file is"
	fi
else
	echo "note: no loop device ($(cat "$T/lo.err")): block device case left out" >&2
fi

# An external log: resize takes no log device, so it refuses, naming the
# log and not an option it does not have.
truncate -s 300M "$T/k.img" && truncate -s 64M "$T/klog.img" &&
mkfs.xfs -q -f -l logdev="$T/klog.img" "$T/k.img" && truncate -s 600M "$T/k.img" ||
	{ echo "mkfs.xfs -l logdev failed" >&2; exit 99; }
refused_unwritten "external log" 1 "the log \(on an external device.*takes no device" \
	"$T/k.img" "$RESIZE" "$T/k.img"
grep -q -- "-l LOGDEV" "$T/k.err" && fail "external log: the message offers an option resize lacks: $(cat "$T/k.err")"
rm -f "$T/klog.img"

# Mounted, then a dirty log (left by a shutdown): refused, exit 2.
cp --sparse=always "$T/c.img" "$T/k.img" && truncate -s 600M "$T/k.img"
if loop_mount "$T/k.img"; then
	MOUNTED=1 unchanged "mounted" 2
	echo data >"$MNT/f" && sync -f "$MNT/f"
	xfs_io -x -c "shutdown -f" "$MNT" || fail "shutdown failed"
	loop_umount || fail "umount failed"
	unchanged "dirty log" 2
fi
finish
