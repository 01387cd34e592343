#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Bad input to xfskit-mkfs: every invalid option, conflicting options, an
# existing filesystem without -f, an unwritable target, a device too
# small.  Each must print a clear message naming the problem, exit
# non-zero, and leave the target untouched (checksummed before and after).
. "$XK_SRCDIR/tests/scripts/lib.sh"
need_xfsprogs

IMG="$T/target.img"
truncate -s 1g "$IMG"
head -c 65536 /dev/urandom | dd of="$IMG" conv=notrunc status=none
# What a write anywhere changes: the modification time (ns), the
# size and the data held (lib.sh image_state).
state() {
	image_state "$1"
}
SUM=$(state "$IMG")

# expect PATTERN -- options...: exit 1, message matches, image unchanged.
expect() {
	leak_check_next
	local pat=$1 out rc
	shift
	out=$("$MKFS" "$@" 2>&1)
	rc=$?
	if [ "$rc" -ne 1 ]; then
		fail "'$*': exit $rc, expected 1: $out"
	elif ! printf '%s\n' "$out" | grep -qE "$pat"; then
		fail "'$*': message does not match /$pat/: $out"
	elif [ "$(state "$IMG")" != "$SUM" ]; then
		fail "'$*': the target was written"
	else
		pass "'$*' refused: $(printf '%s' "$out" | head -1)"
	fi
}

expect "power of 2" -f -b size=3000 "$IMG"
expect "Value is too large" -f -b size=131072 "$IMG"
expect "Minimum block size for CRC" -f -b size=512 "$IMG"
expect "illegal suffix" -f -b size=4q "$IMG"
expect "V4 filesystems are deprecated" -f -m crc=0 "$IMG"
expect "Cannot specify both -d agcount and -d agsize" \
	-f -d agcount=4,agsize=256m "$IMG"
expect "Value is too small" -f -d agcount=0 "$IMG"
expect "not recognized as number" -f -d agcount=many "$IMG"
expect "Unit suffixes are not allowed" -f -d agcount=4k "$IMG"
expect "agsize \\(.*\\) not a multiple of fs blk size" \
	-f -d agsize=100000000 "$IMG"
expect "agsize \\(.* blocks\\) too big, data area" -f -d agsize=2g "$IMG"
expect "Value is too small" -f -d size=1m "$IMG"
expect "both data sunit and data swidth" -f -d sunit=8 "$IMG"
expect "both data su and data sw" -f -d su=64k "$IMG"
expect "Cannot specify both -d su and -d sunit" -f -d su=64k,sunit=8 "$IMG"
expect "not a multiple of the block size" -f -d su=3k,sw=2 "$IMG"
expect "must be a multiple of the stripe unit" \
	-f -d sunit=16,swidth=24 "$IMG"
expect "Value is too large" -f -i size=4096 "$IMG"
expect "Minimum inode size for CRCs" -f -i size=256 "$IMG"
expect "illegal inode size" -f -b size=1024 -i size=1024 "$IMG"
expect "Value is too large" -f -i maxpct=101 "$IMG"
expect "Inodes always aligned" -f -i align=0 "$IMG"
expect "inode btree counters not supported without finobt" \
	-f -m finobt=0,inobtcount=1 "$IMG"
expect "unknown option -m nrext64" -f -m nrext64=1 "$IMG"
expect "unknown option -m bogus" -f -m bogus=1 "$IMG"
expect "Not a valid UUID" -f -m uuid=not-a-uuid "$IMG"
expect "Value is too small" -f -l size=1m "$IMG"
expect "Log size must be at least 64MB" -f -l size=32m "$IMG"
expect "internal log size .* too large" -f -l size=300m "$IMG"
expect "V2 logs are required" -f -l version=1 "$IMG"
expect "no log subvolume or external log" -f -l internal=0 "$IMG"
expect "Error accessing specified device" -f -l logdev="$T/no-such-log" "$IMG"
expect "log stripe unit .* must be a multiple of the block size" \
	-f -l su=6k "$IMG"
expect "log ag number .* too large" -f -l agnum=9 "$IMG"
expect "Cannot disable ftype" -f -n ftype=0 "$IMG"
expect "Only version 2" -f -n version=1 "$IMG"
expect "illegal directory block size" -f -b size=8192 -n size=4096 "$IMG"
expect "block size .* cannot be smaller than sector size" \
	-f -b size=2048 -s size=4096 "$IMG"
expect "longer than 12 bytes" -f -L thirteen_char "$IMG"
expect "respecified" -f -b size=1k -b size=2k "$IMG"
expect "unknown option -z" -f -z "$IMG"
expect "extra arguments" -f "$IMG" "$IMG"
expect "no device name" -f
expect "Filesystem must have at least 2 superblocks" -f -d agcount=1 "$IMG"
expect "Filesystem must be larger than 300MB" -f -d size=200m "$IMG"
expect "could not open the configuration file" \
	-f -c options="$T/missing.cfg" "$IMG"
printf '[metadata]\ncrc=0\n' >"$T/v4.cfg"
expect "V4 filesystems are deprecated" -f -c options="$T/v4.cfg" "$IMG"
printf '[bogus]\nx=1\n' >"$T/bad.cfg"
expect "invalid config file option" -f -c options="$T/bad.cfg" "$IMG"

# An existing filesystem is refused without -f, naming what was found.
mkfs_xfs_image "$T/xfs.img" 512m || fail "mkfs.xfs failed"
XSUM=$(image_state "$T/xfs.img")
out=$("$MKFS" "$T/xfs.img" 2>&1)
rc=$?
if [ "$rc" -ne 1 ] || ! printf '%s' "$out" |
	grep -q "appears to contain an existing filesystem (xfs)"; then
	fail "existing xfs without -f: exit $rc: $out"
elif [ "$(image_state "$T/xfs.img")" != "$XSUM" ]; then
	fail "existing xfs without -f: the image was written"
else
	pass "existing filesystem refused without -f"
fi
# ... and overwritten with it.
if ! "$MKFS" -q -f "$T/xfs.img" >"$T/out" 2>&1 ||
	! xfs_repair -n "$T/xfs.img" >/dev/null 2>&1; then
	fail "-f over an existing filesystem: $(cat "$T/out")"
else
	pass "-f overwrites an existing filesystem"
fi

# Unwritable targets and a device too small.
out=$("$MKFS" -q -f -d size=1g "$T/nodir/new.img" 2>&1)
[ $? -eq 1 ] && [ ! -e "$T/nodir" ] && printf '%s' "$out" | grep -q "No such file" &&
	pass "missing directory refused" || fail "missing directory: $out"
out=$("$MKFS" -q -f /dev/null 2>&1)
[ $? -eq 1 ] && printf '%s' "$out" | grep -q "neither a regular file nor a block device" &&
	pass "character device refused" || fail "/dev/null: $out"
truncate -s 10m "$T/small.img"
out=$("$MKFS" -q -f "$T/small.img" 2>&1)
[ $? -eq 1 ] && printf '%s' "$out" | grep -q "too small" &&
	[ "$(stat -c %s "$T/small.img")" = 10485760 ] &&
	! xfs_db -r -c 'sb 0' -c 'print magicnum' "$T/small.img" 2>/dev/null | grep -q 0x58465342 &&
	pass "10 MiB device refused" || fail "small device: $out"
# -N writes nothing even where it would succeed.
"$MKFS" -N -f "$IMG" >"$T/out" 2>&1 && grep -q "^meta-data=" "$T/out" &&
	[ "$(state "$IMG")" = "$SUM" ] &&
	pass "-N writes nothing" ||
	fail "-N: $(cat "$T/out")"
finish
