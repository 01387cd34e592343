#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Undo files that cannot lie:
#  1. the undo file runs out of space (a tiny tmpfs) during a repair and
#     during -L: the run stops with a message naming the undo file, not
#     the image; no write reaches the image after the failed undo write
#     (strace); xfskit-undo then restores the image byte for byte;
#  2. xfskit-undo verifies before it writes: onto a copy of the image as
#     it was before the run (not the state the run left) it refuses,
#     naming the first range that differs, and writes nothing; -n lists
#     what it would restore and writes nothing; -f applies anyway; onto
#     the repaired image it restores the original byte for byte.
. "$XK_SRCDIR/tests/scripts/lib.sh"
need_xfsprogs
UNDO="$XK_BUILDDIR/repair/xfskit-undo"
[ "$(id -u)" -eq 0 ] || skip "the tiny tmpfs needs root"
command -v strace >/dev/null 2>&1 || skip "strace is not installed"
sum() { md5sum <"$1"; }

# A populated image with damaged AG 1 headers: repair rewrites them and
# rebuilds the AG's btrees, several blocks.
mkdir -p "$T/src"
for i in $(seq 60); do
	mkdir -p "$T/src/d$((i % 6))"
	echo "file $i" >"$T/src/d$((i % 6))/f$i"
done
truncate -s 512M "$T/base.img"
"$MKFS" -q -p "$T/src" "$T/base.img" >"$T/mkfs.out" 2>&1 ||
	{ fail "xfskit-mkfs: $(cat "$T/mkfs.out")"; finish; }
xfs_db -x -c 'agf 1' -c 'write -d freeblks 7' -c 'write -d longest 3' \
	-c 'agi 1' -c 'write -d freecount 9' "$T/base.img" >/dev/null 2>&1 ||
	{ fail "xfs_db could not damage the image"; finish; }
xfs_repair -n "$T/base.img" >/dev/null 2>&1 &&
	{ fail "xfs_repair -n finds the damaged image clean"; finish; }

# Did any write reach the image after the first failed undo write?
# strace -f output: "pid syscall(fd, ...) = result".
writes_after_failure() {
	local trace=$1 img=$2 undo=$3
	awk -v img="\"$img\"" -v undo="\"$undo\"" '
	/openat\(/ {
		split($0, a, ", ")
		r = $0
		sub(/.* = /, "", r)
		if (a[2] == img && r ~ /^[0-9]+$/) ifd[r] = 1
		if (a[2] == undo && r ~ /^[0-9]+$/) ufd = r
		next
	}
	/ENOSPC/ && ufd != "" && index($0, "(" ufd ",") { failed = 1; next }
	failed && /pwrite64\(|pwritev|write\(/ {
		fd = $0
		sub(/^[^(]*\(/, "", fd)
		sub(/,.*/, "", fd)
		r = $0
		sub(/.* = /, "", r)
		if ((fd in ifd) && r !~ /^-1/) n++
	}
	END { print failed + 0, n + 0 }' "$trace"
}

mkdir -p "$T/tiny"
mount -t tmpfs -o size=16k tmpfs "$T/tiny" ||
	skip "cannot mount a tmpfs"
trap 'umount "$T/tiny" 2>/dev/null; cleanup' EXIT

for mode in repair zero-log; do
	rm -f "$T/tiny/u.undo"
	cp --sparse=always "$T/base.img" "$T/s.img"
	before=$(sum "$T/s.img")
	opts=""
	[ $mode = zero-log ] && opts="-L"
	# LeakSanitizer cannot run under ptrace.
	ASAN_OPTIONS=exitcode=99:detect_leaks=0 strace -f -qq -e trace=openat,pwrite64,pwritev,pwritev2,write \
		-o "$T/trace" "$REPAIR" $opts -z "$T/tiny/u.undo" "$T/s.img" \
		>"$T/r.out" 2>&1
	rc=$?
	if [ $rc -eq 1 ] &&
	   grep -q "no space left while saving the old contents of the device to the undo file $T/tiny/u.undo: stopping" "$T/r.out" &&
	   ! grep -q "s.img: No space left" "$T/r.out"; then
		pass "$mode: ENOSPC on the undo file stops the run (exit $rc), the message names the undo file"
	else
		fail "$mode: exit $rc, the undo file's ENOSPC not named: $(head -5 "$T/r.out")"
	fi
	set -- $(writes_after_failure "$T/trace" "$T/s.img" "$T/tiny/u.undo")
	if [ "$1" != 1 ]; then
		fail "$mode: strace shows no ENOSPC on the undo file"
	elif [ "$2" != 0 ]; then
		fail "$mode: $2 write(s) reached the image after the undo file failed"
	else
		pass "$mode: no write reached the image after the undo file failed"
	fi
	"$UNDO" "$T/tiny/u.undo" "$T/s.img" >"$T/u.out" 2>&1; rc=$?
	if [ $rc -eq 0 ] && [ "$(sum "$T/s.img")" = "$before" ]; then
		pass "$mode: xfskit-undo restores the image byte for byte ($(tail -1 "$T/u.out"))"
	else
		fail "$mode: xfskit-undo exit $rc: $(cat "$T/u.out"); restored: $([ "$(sum "$T/s.img")" = "$before" ] && echo yes || echo no)"
	fi
done

# 2. Verify before writing.
cp --sparse=always "$T/base.img" "$T/s.img"
cp --sparse=always "$T/base.img" "$T/clean.img"
orig=$(sum "$T/base.img")
"$REPAIR" -z "$T/u.undo" "$T/s.img" >"$T/r.out" 2>&1 ||
	fail "repair -z: exit $?: $(head -5 "$T/r.out")"
repaired=$(sum "$T/s.img")
[ "$repaired" != "$orig" ] || fail "repair changed nothing: the test proves nothing"
"$UNDO" "$T/u.undo" "$T/clean.img" >"$T/u.out" 2>&1; rc=$?
if [ $rc -ne 0 ] && grep -qE "are not what the run left|is not the one the run left" "$T/u.out" &&
   [ "$(sum "$T/clean.img")" = "$orig" ]; then
	pass "undo onto the pre-run copy refused, nothing written: $(head -1 "$T/u.out" | cut -c1-150)"
else
	fail "undo onto the pre-run copy: exit $rc: $(cat "$T/u.out")"
fi
"$UNDO" -n "$T/u.undo" "$T/s.img" >"$T/n.out" 2>&1; rc=$?
nrec=$(grep -c "^would restore" "$T/n.out")
if [ $rc -eq 0 ] && [ "$nrec" -gt 0 ] && [ "$(sum "$T/s.img")" = "$repaired" ]; then
	pass "-n lists $nrec records and writes nothing"
else
	fail "-n: exit $rc, $nrec records listed: $(tail -3 "$T/n.out")"
fi
"$UNDO" -f "$T/u.undo" "$T/clean.img" >"$T/f.out" 2>&1; rc=$?
[ $rc -eq 0 ] && pass "-f applies without the checks" ||
	fail "-f: exit $rc: $(cat "$T/f.out")"
"$UNDO" "$T/u.undo" "$T/s.img" >"$T/u.out" 2>&1; rc=$?
if [ $rc -eq 0 ] && [ "$(sum "$T/s.img")" = "$orig" ]; then
	pass "undo onto the repaired image restores it byte for byte"
else
	fail "undo onto the repaired image: exit $rc: $(cat "$T/u.out")"
fi
# Applied once, the image no longer holds the after-state: refused.
"$UNDO" "$T/u.undo" "$T/s.img" >"$T/u2.out" 2>&1 &&
	fail "a second undo onto the restored image was not refused"
finish
