#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Classic realtime volumes (mkfs.xfs -r rtdev=, no rtgroups), given with
# -r, on healthy filesystems, against xfs_repair 6.1 and 7.2:
#  1. fresh ones from mkfs.xfs 6.1 and 7.2 (also with a realtime extent
#     of 4 and of 16 blocks, and a volume whose extents do not fill the
#     last bitmap word): xfskit-repair -n -r finds nothing, exit 0;
#  2. with realtime files (rt_lib.sh), which both xfs_repair -n -r find
#     clean: xfskit-repair -n -r finds nothing, and xfskit-repair -r
#     writes nothing (the images unchanged: no realtime extent is taken
#     for data-device space, nothing is "repaired");
#  3. xfskit-db -R opens it; a realtime device smaller than sb_rblocks,
#     the data device given as the realtime device, and -r on a
#     filesystem without a realtime volume are clear errors (exit 1 for
#     repair, 2 for db) before anything is written.
. "$XK_SRCDIR/tests/scripts/lib.sh"
. "$XK_SRCDIR/tests/scripts/rt_lib.sh"
need_xfsprogs
have_xfs72 || true
d=$T/d.img
r=$T/r.img

# ours_clean NAME: xfskit-repair -n -r finds nothing on $d.
ours_clean() {
	"$REPAIR" -n -r "$r" "$d" >"$T/n.out" 2>&1
	local rc=$?
	if [ $rc -eq 0 ] && ! grep -q "problem" "$T/n.out"; then
		pass "$1: xfskit-repair -n -r: nothing found"
	else
		fail "$1: xfskit-repair -n -r: exit $rc: $(head -6 "$T/n.out")"
	fi
}

# 1. Fresh filesystems.
for c in "6.1|" "6.1|,extsize=16k" "7.2|" "7.2|,extsize=64k" "7.2|,size=250m"; do
	IFS='|' read -r v o <<<"$c"
	if [ "$v" = 7.2 ] && ! have_xfs72; then
		continue
	fi
	pre=$(rt_oracle "$v")
	rm -f "$d" "$r"
	truncate -s 1g "$d"
	truncate -s 256m "$r"
	sz=256m
	case $o in ,size=*) sz=${o#,size=}; o= ;; esac
	if ! $pre mkfs.xfs -q -f -r rtdev="$r",size=$sz$o \
	     -d file,name="$d",size=1g >"$T/mk.out" 2>&1; then
		fail "mkfs.xfs $v -r size=$sz$o: $(cat "$T/mk.out")"
		continue
	fi
	ours_clean "mkfs.xfs $v -r size=$sz$o"
done

# 2. Realtime files, settled by xfs_repair -r of the same version.
for v in 6.1 7.2; do
	if [ "$v" = 7.2 ] && ! have_xfs72; then
		continue
	fi
	name="mkfs.xfs $v, realtime files"
	if ! rt_image "$v" "$d" "$r"; then
		fail "$name: $(cat "$T/rt_why")"
		continue
	fi
	# 6.1 cannot read what 7.2 makes by default: only 7.2 judges it.
	if [ "$v" = 6.1 ]; then
		rt_clean "$d" "$r" "$T/o.out"
	else
		xfs72 xfs_repair -n -r "$r" "$d" >"$T/o.out" 2>&1
	fi || { fail "$name: the oracle does not find it clean: $(cat "$T/o.out")"; continue; }
	[ "$(db_get "$d" "inode 131" core.realtime)" = 1 ] &&
	[ "$(db_get "$d" "inode 131" core.size)" = 3000000 ] &&
	[ "$(db_get "$d" "sb 0" frextents)" -lt "$(db_get "$d" "sb 0" rextents)" ] ||
		fail "$name: inode 131 is not a realtime file of 3000000 bytes in use"
	ours_clean "$name"
	before=$(image_state "$d" "$r")
	fd=$(db_get "$d" "sb 0" fdblocks)
	"$REPAIR" -r "$r" "$d" >"$T/r.out" 2>&1
	rc=$?
	if [ $rc -eq 0 ] && [ "$(image_state "$d" "$r")" = "$before" ]; then
		pass "$name: xfskit-repair -r: exit 0, nothing written (fdblocks $fd)"
	else
		fail "$name: xfskit-repair -r: exit $rc, fdblocks $fd -> $(db_get "$d" "sb 0" fdblocks): $(head -5 "$T/r.out")"
	fi
done

# 3. xfskit-db -R, and devices that are not the realtime volume.
rt_mkfs 6.1 "$d" "$r" || fail "mkfs.xfs: $(cat "$T/rt_mkfs.out")"
out=$("$DB" -r -R "$r" -c "sb 0" -c "print frextents" "$d" 2>&1)
if [ "$out" = "frextents = $(db_get "$d" "sb 0" frextents)" ]; then
	pass "xfskit-db -R: $out"
else
	fail "xfskit-db -R: $out"
fi
truncate -s 200m "$T/small.img"
before=$(image_state "$d" "$T/small.img")
"$REPAIR" -r "$T/small.img" "$d" >"$T/s.out" 2>&1
rc=$?
if [ $rc -eq 1 ] && grep -q "less than the realtime section" "$T/s.out" &&
   [ "$(image_state "$d" "$T/small.img")" = "$before" ]; then
	pass "repair -r with a short realtime device: exit 1, nothing written: $(head -1 "$T/s.out" | cut -c1-120)"
else
	fail "repair -r with a short realtime device: exit $rc: $(head -3 "$T/s.out")"
fi
"$DB" -r -R "$T/small.img" -c "sb 0" "$d" >"$T/s.out" 2>&1
rc=$?
[ $rc -eq 2 ] && grep -q "less than the realtime section" "$T/s.out" &&
	pass "xfskit-db -R with a short realtime device: exit 2" ||
	fail "xfskit-db -R with a short realtime device: exit $rc: $(head -3 "$T/s.out")"
"$REPAIR" -n -r "$d" "$d" >"$T/s.out" 2>&1
rc=$?
[ $rc -eq 1 ] && grep -q "data device itself" "$T/s.out" &&
	pass "repair -r DATA DATA: exit 1" ||
	fail "repair -r DATA DATA: exit $rc: $(head -3 "$T/s.out")"
mkfs.xfs -q -f -d file,name="$T/plain.img",size=512m >/dev/null 2>&1
before=$(image_state "$T/plain.img")
"$REPAIR" -r "$r" "$T/plain.img" >"$T/s.out" 2>&1
rc=$?
[ $rc -eq 1 ] && grep -q "no realtime section" "$T/s.out" &&
	[ "$(image_state "$T/plain.img")" = "$before" ] &&
	pass "repair -r on a filesystem without a realtime volume: exit 1, nothing written" ||
	fail "repair -r without a realtime volume: exit $rc: $(head -3 "$T/s.out")"
finish
