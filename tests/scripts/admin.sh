#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# xfskit-admin against xfs_admin 6.1 and 7.2 (7.2's script run with 7.2's
# xfs_db and xfs_repair): on two copies of one mkfs.xfs image, the same
# options must leave every superblock copy byte-identical (and, for
# inobtcount, the same AGI block counts), exit with the same status and
# print the same result lines; each result is clean for xfs_repair -n
# 6.1 (where it knows the features) and 7.2 and mounts on the host
# kernel.  -C writes xfs_admin 7.2's configuration file.  Refusals: a
# mounted image (no write system call at all, seen by strace), a dirty
# log, bad options and a garbage image, each with the image unchanged;
# a crash during an inobtcount upgrade, a label or a UUID change leaves a
# NEEDSREPAIR mark xfs_repair completes, and a marked image is refused;
# -z records an undo file xfskit-undo applies.
. "$(dirname "$0")/lib.sh"
need_xfsprogs
need_xfs72
[ "$(id -u)" -eq 0 ] || skip "the mount cases need root"

ADMIN="$XK_BUILDDIR/admin/xfskit-admin"
UNDO="$XK_BUILDDIR/repair/xfskit-undo"

# xfs_admin 7.2 is a shell script running xfs_db and xfs_repair from
# PATH: give it 7.2's.
mkdir -p "$T/bin72"
for t in xfs_db xfs_repair xfs_io xfs_spaceman; do
	printf '#!/bin/sh\nexec "%s" %s "$@"\n' "$XFS72" "$t" >"$T/bin72/$t"
	chmod +x "$T/bin72/$t"
done
ADMIN72="$(xfs72 dir)/usr/sbin/xfs_admin"
xfs_admin61() { xfs_admin "$@"; }
xfs_admin72() { PATH="$T/bin72:$PATH" sh "$ADMIN72" "$@"; }

# Small images (mkfs.xfs allows them under fstests' variables).  The
# default 64 MiB log (1368 blocks) is too small for nrext64 (4049 blocks
# on this geometry, for xfs_repair 7.2 as for us): SMALL keeps it, the
# others get a 16 MiB log.
mkimg() {
	TEST_DIR=1 TEST_DEV=1 QA_CHECK_FS=1 mkfs_xfs_image "$@" ||
		{ echo "mkfs.xfs $*: $(cat "$T/mkfs.out")" >&2; exit 99; }
}
BASE="$T/base.img"
mkimg "$BASE" 96m -l size=16m
# Without the features xfs_admin can add (6.1's default has inobtcount
# and bigtime, not nrext64 or exchange).
OLD="$T/old.img"
mkimg "$OLD" 96m -l size=16m -m inobtcount=0,bigtime=0
SMALL="$T/small.img"
mkimg "$SMALL" 64m -m inobtcount=0
AGB=$(db_get "$BASE" "sb 0" agblocks)
AGC=$(db_get "$BASE" "sb 0" agcount)
BSZ=$(db_get "$BASE" "sb 0" blocksize)
SSZ=$(db_get "$BASE" "sb 0" sectsize)
[ "$AGC" -ge 2 ] || { echo "need secondaries, got $AGC AGs" >&2; exit 99; }

# sbs_differ A B: the AGs whose superblock sectors differ.
sbs_differ() {
	local a
	for a in $(seq 0 $((AGC - 1))); do
		cmp -s <(dd if="$1" bs="$SSZ" skip=$((a * AGB * BSZ / SSZ)) count=1 2>/dev/null) \
		       <(dd if="$2" bs="$SSZ" skip=$((a * AGB * BSZ / SSZ)) count=1 2>/dev/null) ||
			printf ' %s' "$a"
	done
}

# agi_counts IMG: every AGI's inode btree block counts.
agi_counts() {
	local a
	for a in $(seq 0 $((AGC - 1))); do
		xfs_db -r -c "agi $a" -c "print ino_blocks fino_blocks" "$1" |
			tr '\n' ' '
	done
}

# The result lines both print (xfs_admin's runs of xfs_repair add
# progress lines, and it names itself).
result_lines() {
	grep -E '^(label|new label|UUID|new UUID|Clearing log|writing all|Adding|Filesystem already|Lazy|Cannot disable|unwritten|Version 2|.*projid32bit)' "$1" |
		sed 's/^xfs_admin: /xfskit-admin: /'
}

# checked IMG NAME VERSIONS: xfs_repair -n clean for each version given
# (61 and/or 72), then a mount and unmount on the host kernel.
checked() {
	local img=$1 name=$2 v
	for v in $3; do
		if [ "$v" = 61 ]; then
			xfs_repair -n "$img" >"$T/r.out" 2>&1
		else
			xfs72 xfs_repair -n "$img" >"$T/r.out" 2>&1
		fi || { fail "$name: xfs_repair $v -n: $(grep -v '^Phase\|^  *-' "$T/r.out" | head -5)"; return 1; }
	done
	loop_mount "$img" || return 1
	touch "$MNT/written" || fail "$name: cannot write on the mounted result"
	loop_umount || { fail "$name: umount failed"; return 1; }
	return 0
}

# same_as VERSION NAME SRC ARGS...: xfs_admin VERSION and xfskit-admin
# with ARGS on two copies of SRC.
same_as() {
	local v=$1 name=$2 src=$3 orc krc d
	shift 3
	cp --sparse=always "$src" "$T/o.img" && cp --sparse=always "$src" "$T/k.img" || exit 99
	"xfs_admin$v" "$@" "$T/o.img" >"$T/o.out" 2>&1
	orc=$?
	"$ADMIN" "$@" "$T/k.img" >"$T/k.out" 2>&1
	krc=$?
	[ "$orc" = "$krc" ] ||
		{ fail "$name: exit $krc, xfs_admin $v exits $orc: $(head -3 "$T/k.out")"; return 1; }
	d=$(sbs_differ "$T/o.img" "$T/k.img")
	[ -z "$d" ] ||
		{ fail "$name: superblock(s) of AG$d differ from xfs_admin $v's"; return 1; }
	[ "$(agi_counts "$T/o.img")" = "$(agi_counts "$T/k.img")" ] ||
		{ fail "$name: AGI counts $(agi_counts "$T/k.img"), xfs_admin $v: $(agi_counts "$T/o.img")"; return 1; }
	diff <(result_lines "$T/o.out") <(result_lines "$T/k.out") >"$T/out.diff" ||
		{ fail "$name: output differs from xfs_admin $v: $(cat "$T/out.diff")"; return 1; }
	pass "$name: superblocks ($AGC copies) equal xfs_admin $v's, exit $krc"
}

U1=11111111-2222-3333-4444-555555555555
# Each case against 7.2; the writing ones against 6.1 too (the others
# behave the same in both, and each xfs_admin run costs an xfs_repair).
for v in 72 61; do
	same_as $v "-L" "$BASE" -L NEWLABEL -L -- -L NEWLABEL
	same_as $v "-U uuid, restore" "$BASE" -U $U1 -U restore
	same_as $v "-U nil" "$BASE" -U nil
	same_as $v "-O inobtcount=1" "$OLD" -O inobtcount=1 &&
		[ "$v" = 72 ] && checked "$T/k.img" inobtcount "61 72"
	same_as $v "-O bigtime=1" "$OLD" -O bigtime=1 &&
		[ "$v" = 72 ] && checked "$T/k.img" bigtime "61 72"
	same_as $v "-O nrext64=1" "$BASE" -O nrext64=1 &&
		[ "$v" = 72 ] && checked "$T/k.img" nrext64 "61 72"
	[ "$v" = 72 ] || continue
	same_as $v "-L --" "$BASE" -L --
	same_as $v "-l -u" "$BASE" -l -u
	same_as $v "-U uuid" "$BASE" -U $U1
	same_as $v "-U restore unchanged" "$BASE" -U restore
	same_as $v "-c 1" "$BASE" -c 1
	same_as $v "-c 0" "$BASE" -c 0
	same_as $v "-e -j -p" "$BASE" -e -j -p
	same_as $v "-O present" "$BASE" -O bigtime=1
	same_as $v "-O nrext64=1, log too small" "$SMALL" -O nrext64=1
	same_as $v "-O inobtcount=0" "$BASE" -O inobtcount=0
	same_as $v "-O inobtcount" "$BASE" -O inobtcount
done
# 6.1 does not know exchange.
same_as 72 "-O exchange=1" "$BASE" -O exchange=1 &&
	checked "$T/k.img" exchange 72
same_as 72 "-O all four" "$OLD" -O exchange=1,nrext64=1,bigtime=1,inobtcount=1 &&
	checked "$T/k.img" "all four" 72

# -C: the mkfs configuration file equals xfs_admin 7.2's, on 6.1's
# default, on an older feature set and on 7.2's default (parent
# pointers, exchange, nrext64 and the root's xfs:autofsck property).
NEW72="$T/new72.img"
truncate -s 64m "$NEW72" &&
	TEST_DIR=1 TEST_DEV=1 QA_CHECK_FS=1 xfs72 mkfs.xfs -q -f "$NEW72" >"$T/mkfs.out" 2>&1 ||
	{ echo "mkfs.xfs 7.2: $(cat "$T/mkfs.out")" >&2; exit 99; }
for img in "$BASE" "$OLD" "$NEW72"; do
	rm -f "$T/o.cfg" "$T/k.cfg"
	xfs_admin72 -C "$T/o.cfg" "$img" >/dev/null 2>&1
	"$ADMIN" -C "$T/k.cfg" "$img" >"$T/k.out" 2>&1 ||
		{ fail "-C on ${img##*/}: $(cat "$T/k.out")"; continue; }
	diff "$T/o.cfg" "$T/k.cfg" >"$T/cfg.diff" &&
		pass "-C on ${img##*/}: the file equals xfs_admin 7.2's" ||
		fail "-C on ${img##*/}: differs from xfs_admin 7.2's: $(cat "$T/cfg.diff")"
done
grep -qx "autofsck=repair" "$T/k.cfg" ||
	fail "-C on mkfs.xfs 7.2's image: no autofsck=repair line (the test image lost its property?)"

# Features present and missing together: xfs_repair stops at the first
# present one and adds nothing; xfskit-admin adds the missing ones, as
# xfs_admin 7.2 asked for those alone does.
cp --sparse=always "$SMALL" "$T/o.img" && cp --sparse=always "$SMALL" "$T/k.img"
xfs_admin72 -O inobtcount=1 "$T/o.img" >/dev/null 2>&1 ||
	fail "xfs_admin 7.2 -O inobtcount=1 failed on the small image"
"$ADMIN" -O inobtcount=1,bigtime=1 "$T/k.img" >"$T/k.out" 2>&1 ||
	fail "-O inobtcount=1,bigtime=1 (bigtime present): $(cat "$T/k.out")"
d=$(sbs_differ "$T/o.img" "$T/k.img")
[ -z "$d" ] && [ "$(agi_counts "$T/o.img")" = "$(agi_counts "$T/k.img")" ] &&
	grep -qx "Filesystem already supports large timestamps." "$T/k.out" &&
	pass "-O present and missing: the missing one added as xfs_admin 7.2 adds it" ||
	fail "-O present and missing: superblock(s) of AG$d or AGI counts differ from xfs_admin 7.2 -O inobtcount=1; output: $(cat "$T/k.out")"

# A UUID change checked by the kernel: the UUID it reports, then back.
cp --sparse=always "$BASE" "$T/k.img"
"$ADMIN" -U $U1 "$T/k.img" >"$T/k.out" 2>&1 || fail "-U $U1: $(cat "$T/k.out")"
checked "$T/k.img" "-U $U1" "61 72" && {
	[ "$(blkid -p -o value -s UUID "$T/k.img")" = "$U1" ] ||
		fail "-U: blkid reports $(blkid -p -o value -s UUID "$T/k.img")"
}

# generate: a new random UUID; xfs_admin given the same one on the other
# copy must write the same superblocks.
cp --sparse=always "$BASE" "$T/g.img"
"$ADMIN" -U generate "$T/g.img" >"$T/g.out" 2>&1 || fail "-U generate: $(cat "$T/g.out")"
new=$(db_get "$T/g.img" "sb 0" uuid)
[ -n "$new" ] && [ "$new" != "$(db_get "$BASE" "sb 0" uuid)" ] ||
	fail "-U generate kept the UUID ($new)"
grep -qx "new UUID = $new" "$T/g.out" || fail "-U generate printed: $(cat "$T/g.out")"
for v in 61 72; do
	cp --sparse=always "$BASE" "$T/o.img"
	"xfs_admin$v" -U "$new" "$T/o.img" >/dev/null 2>&1
	d=$(sbs_differ "$T/o.img" "$T/g.img")
	[ -z "$d" ] && pass "-U generate: equal to xfs_admin $v -U $new" ||
		fail "-U generate: superblock(s) of AG$d differ from xfs_admin $v -U $new"
done
checked "$T/g.img" "-U generate" "61 72"

# unchanged NAME RC ARGS...: xfskit-admin exits RC, says why, and the
# image stays byte for byte what it was.
unchanged() {
	local name=$1 want=$2 rc
	shift 2
	cp --sparse=always "$T/k.img" "$T/before.img"
	"$ADMIN" "$@" "$T/k.img" >"$T/k.out" 2>"$T/k.err"
	rc=$?
	[ "$rc" = "$want" ] || { fail "$name: exit $rc, expected $want: $(cat "$T/k.err")"; return; }
	[ -s "$T/k.err" ] || { fail "$name: no message on stderr"; return; }
	same_image "$T/before.img" "$T/k.img" || { fail "$name: the image changed"; return; }
	pass "$name: exit $rc, unchanged: $(head -1 "$T/k.err")"
}
cp --sparse=always "$BASE" "$T/k.img"
unchanged "-L 13 bytes" 1 -L 1234567890123
unchanged "-U bad" 1 -U 1234-not-a-uuid
unchanged "-O unknown" 1 -O metadir=1
unchanged "-O unknown among good" 1 -L x -O bigtime=1,bogus=1
unchanged "-O =0" 1 -O nrext64=0
unchanged "-c 2" 1 -c 2
unchanged "bad option" 2 -Z
unchanged "-r" 1 -r /dev/null -L x
mkimg "$T/k.img" 64m -m finobt=0,inobtcount=0
unchanged "inobtcount without finobt" 1 -O inobtcount=1
head -c 4m /dev/urandom >"$T/k.img"
unchanged "garbage image" 1 -L x
# An external log: admin takes no log device, so the refusal names none
# of the options it lacks (the shared open check, as xfskit-resize's).
truncate -s 64m "$T/klog.img"
mkimg "$T/k.img" 300m -l logdev="$T/klog.img",size=64m
unchanged "external log" 1 -L x
grep -q "external device.*xfskit-admin takes no device" "$T/k.err" &&
	! grep -q -- "-l LOGDEV" "$T/k.err" || fail "external log: $(cat "$T/k.err")"
rm -f "$T/klog.img"

# Dirty log (left by a shutdown): every write refused, exit 2.
cp --sparse=always "$BASE" "$T/k.img"
if loop_mount "$T/k.img"; then
	echo data >"$MNT/f" && sync -f "$MNT/f"
	xfs_io -x -c "shutdown -f" "$MNT" || fail "shutdown failed"
	loop_umount || fail "umount failed"
	unchanged "dirty log -L" 2 -L x
	unchanged "dirty log -U" 2 -U generate
	unchanged "dirty log -O" 2 -O nrext64=1
fi

# Mounted: refused before any open for writing; strace sees no write
# to any file but standard output and error.
cp --sparse=always "$BASE" "$T/k.img"
if loop_mount "$T/k.img"; then
	for args in "-L x" "-U generate" "-O nrext64=1"; do
		# LeakSanitizer cannot run under ptrace.
		ASAN_OPTIONS="$ASAN_OPTIONS:detect_leaks=0" \
		strace -f -qq -e trace=openat,pwrite64,pwritev,pwritev2,write \
			-o "$T/strace" "$ADMIN" $args "$T/k.img" >"$T/k.out" 2>"$T/k.err"
		rc=$?
		# (The libtool wrapper script opens /dev/null for writing.)
		bad=$(grep -E 'pwrite|O_RDWR|O_WRONLY|^[0-9]+ +write\(([3-9]|[0-9][0-9])' "$T/strace" |
			grep -vE '"/dev/(null|tty)"' | head -3)
		if [ "$rc" != 2 ]; then
			fail "mounted, $args: exit $rc, expected 2: $(cat "$T/k.err")"
		elif [ -n "$bad" ]; then
			fail "mounted, $args: writes or a writable open: $bad"
		elif ! grep -q "mounted" "$T/k.err"; then
			fail "mounted, $args: message does not say mounted: $(cat "$T/k.err")"
		else
			pass "mounted, $args: exit 2, no write call: $(head -1 "$T/k.err")"
		fi
	done
	# Reading is allowed.
	"$ADMIN" -u "$T/k.img" >"$T/k.out" 2>&1 &&
		grep -qx "UUID = $(db_get "$BASE" "sb 0" uuid)" "$T/k.out" ||
		fail "mounted, -u: $(cat "$T/k.out")"
	loop_umount || fail "umount failed"
fi

# A crash during inobtcount (killed before its Nth data write: after the
# NEEDSREPAIR mark, among the AGIs, among the secondaries) leaves the
# mark on the primary, and xfs_repair 7.2 makes the result clean.
nw=$((1 + AGC + AGC))
for n in 1 3 $((AGC + 2)); do
	cp --sparse=always "$OLD" "$T/k.img"
	crash_completed "crash after $n of $nw writes" "$n" "$T/k.img" \
		"$ADMIN" -O inobtcount=1 "$T/k.img"
done

# -L and -U write every superblock (-U the log too) under the same guard:
# a crash after the primary or among the secondaries leaves the mark
# (1 mark + AGC superblocks + 1 clear for -L), which xfs_repair 7.2
# completes; and a marked filesystem is refused, unchanged, by every
# write (the run's guard would take the cut run's mark away).
for n in 2 $AGC; do
	cp --sparse=always "$BASE" "$T/k.img"
	crash_completed "-L, crash after $n of $((AGC + 2)) writes" "$n" "$T/k.img" \
		"$ADMIN" -L crashed "$T/k.img"
done
cp --sparse=always "$BASE" "$T/k.img"
crash_completed "-U, crash after 2 writes" 2 "$T/k.img" "$ADMIN" -U $U1 "$T/k.img"
cp --sparse=always "$BASE" "$T/k.img"
LIBXFS_DEBUG_WRITE_CRASH=ddev=3 "$ADMIN" -L cut "$T/k.img" >/dev/null 2>&1
unchanged "NEEDSREPAIR -L" 1 -L x
grep -q "marked as needing repair" "$T/k.err" || fail "NEEDSREPAIR -L: $(cat "$T/k.err")"
unchanged "NEEDSREPAIR -O" 1 -O nrext64=1

# -z: the undo file takes the upgrade back byte for byte.
cp --sparse=always "$OLD" "$T/k.img" && cp --sparse=always "$OLD" "$T/before.img"
"$ADMIN" -z "$T/u.undo" -O inobtcount=1,bigtime=1 -L undone "$T/k.img" >"$T/k.out" 2>&1 ||
	fail "-z: $(cat "$T/k.out")"
same_image "$T/k.img" "$T/before.img" && fail "-z: the run changed nothing"
"$UNDO" "$T/u.undo" "$T/k.img" >"$T/u.out" 2>&1 || fail "xfskit-undo: $(cat "$T/u.out")"
same_image "$T/k.img" "$T/before.img" && pass "-z: xfskit-undo restores the image byte for byte" ||
	fail "-z: after xfskit-undo the image differs from the original"

finish
