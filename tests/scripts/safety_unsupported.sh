#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Never call clean what was not checked, never write what is not
# understood.  Filesystems with a realtime volume whose device is not
# given (-r; rt_*.sh test it given; made by mkfs.xfs 6.1 and 7.2,
# healthy, with a zeroed realtime bitmap, with the bitmap inode's mode
# zeroed) and with an external log whose device is not given (-l;
# extlog.sh tests it given):
#  - xfskit-repair -n names what it did not check and exits 5 (never 0,
#    never "No problems found"; 1 when it found a problem elsewhere);
#    --json lists it under not_checked;
#  - xfskit-repair (also -L) refuses, exit 5, and writes nothing (the
#    images' checksums before and after);
#  - an external log is named as such, not as a bad primary superblock;
#  - fsck.xfskit does not call it clean (exit 4) and writes nothing.
# No image here is mounted.
. "$XK_SRCDIR/tests/scripts/lib.sh"
need_xfsprogs
FSCK="$XK_BUILDDIR/fsck/fsck.xfskit"
export XK_REPAIR="$REPAIR"
sum() { image_state "$@"; }

# check_case NAME WHAT-PATTERN -n-EXIT DATA-IMAGE [OTHER-IMAGES...]: -n
# exits 5 when the supported part is clean, 1 when it is not.  $WHY: the
# reason -n gives (default: not supported).
check_case() {
	local name=$1 pat=$2 nexit=$3 img=$4 before rc
	shift 3
	before=$(sum "$@")
	"$REPAIR" -n "$img" >"$T/n.out" 2>&1; rc=$?
	if [ $rc -eq "$nexit" ] && grep -q "$pat.* was not checked: ${WHY:-xfskit does not support}" "$T/n.out" &&
	   ! grep -q "No problems found" "$T/n.out" &&
	   ! grep -qi "primary superblock is bad" "$T/n.out"; then
		pass "$name: -n exit $rc: $(grep "was not checked" "$T/n.out" | head -1 | cut -c1-120)"
	else
		fail "$name: -n exit $rc: $(head -8 "$T/n.out")"
	fi
	grep -i "claimed" "$T/n.out" && fail "$name: -n counts blocks it does not understand"
	"$REPAIR" -n --json "$img" >"$T/j.out" 2>/dev/null; rc=$?
	if [ $rc -eq "$nexit" ] && python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["exit_status"] == int(sys.argv[2]) and d["not_checked"], d
' "$T/j.out" "$nexit" 2>"$T/j.err"; then
		pass "$name: --json exit_status $nexit with not_checked"
	else
		fail "$name: --json exit $rc: $(head -c 600 "$T/j.out") $(cat "$T/j.err")"
	fi
	for opt in "" -L; do
		"$REPAIR" $opt "$img" >"$T/r.out" 2>&1; rc=$?
		if [ $rc -eq 5 ] && grep -q "refusing to change anything: .*$pat" "$T/r.out"; then
			pass "$name: repair $opt refused (exit 5)"
		else
			fail "$name: repair $opt: exit $rc: $(head -5 "$T/r.out")"
		fi
	done
	"$FSCK" -y "$img" >"$T/f.out" 2>&1; rc=$?
	[ $rc -eq 4 ] && pass "$name: fsck.xfskit -y: not clean (exit 4)" ||
		fail "$name: fsck.xfskit -y: exit $rc: $(head -5 "$T/f.out")"
	[ "$(sum "$@")" = "$before" ] && pass "$name: nothing written" ||
		fail "$name: the image changed"
}

rt_cases() {
	local v=$1 mk=$2 d=$T/d$1.img r=$T/rt$1.img rbm blk off
	local WHY="give its device with -r RTDEV"
	rm -f "$d" "$r"
	truncate -s 1g "$d"
	truncate -s 256m "$r"
	if ! $mk -q -f -r rtdev="$r",size=256m -d file,name="$d",size=1g \
	     >"$T/mkfs.out" 2>&1; then
		fail "mkfs.xfs $v -r rtdev: $(cat "$T/mkfs.out")"
		return
	fi
	check_case "realtime ($v, healthy)" "realtime volume" 5 "$d" "$d" "$r"
	# Zero the realtime bitmap's first block.
	rbm=$(db_get "$d" "sb 0" rbmino)
	blk=$(xfs_db -r -c "inode $rbm" -c bmap "$d" 2>/dev/null |
		sed -n 's/.*startblock \([0-9]*\) .*/\1/p' | head -1)
	off=$(xfs_db -r -c "convert fsb $blk byte" "$d" 2>/dev/null |
		sed -n 's/.*(\([0-9]*\)).*/\1/p')
	if [ -n "$off" ]; then
		dd if=/dev/zero of="$d" bs=4096 seek=$((off / 4096)) count=1 conv=notrunc 2>/dev/null
		check_case "realtime ($v, zeroed bitmap)" "realtime volume" 5 "$d" "$d" "$r"
	else
		fail "realtime ($v): cannot find the bitmap block (inode $rbm, block '$blk')"
	fi
	# A real finding besides: -n exit 1, still naming what it skipped.
	xfs_db -x -c "inode $rbm" -c "write -d core.mode 0" "$d" >/dev/null 2>&1
	check_case "realtime ($v, bitmap inode mode 0)" "realtime volume" 1 "$d" "$d" "$r"
}

rt_cases 6.1 mkfs.xfs
if "$XFS72" dir >/dev/null 2>&1; then
	rt_cases 7.2 "$XFS72 mkfs.xfs"
else
	echo "SKIP: no xfsprogs 7.2 tree: realtime images from mkfs.xfs 7.2 not tested" >&2
fi

# External log.
truncate -s 1g "$T/e.img"
truncate -s 64m "$T/l.img"
if mkfs.xfs -q -f -l logdev="$T/l.img",size=64m "$T/e.img" >"$T/mkfs.out" 2>&1; then
	WHY="give its device with -l LOGDEV" check_case "external log, no -l" \
		"external device that was not given" 5 "$T/e.img" "$T/e.img" "$T/l.img"
else
	fail "mkfs.xfs -l logdev: $(cat "$T/mkfs.out")"
fi
finish
