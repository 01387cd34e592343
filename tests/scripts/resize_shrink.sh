#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# xfskit-resize shrinking: where the part cut off holds no used block,
# and (at the end) with regular files' data moved out of it first.
# Against the kernel's shrink (xfs_growfs -D on a mounted filesystem cuts
# free space off the end of the last AG since Linux 5.12): two copies of
# one kernel-populated image are shrunk to the same size, one by
# xfs_growfs, one by xfskit-resize; the primary superblock, the
# secondaries (but for fdblocks, the kernel's in-core count of the
# moment) and the last AG's AGF, AGI and free-space btree roots must
# print the same in xfs_db, LSNs and CRCs aside (with and without
# rmapbt, with two-level free-space btrees, and at the smallest size
# xfskit-resize names, which the kernel takes and refuses one block
# less of).  Beyond the kernel: empty AGs at the end removed whole (with
# the new last AG cut too, and cut exactly at an AG boundary), then grown
# back to the whole image; mkfs.xfs
# 7.2's defaults and metadir (xfs_repair 7.2 and a mount only).  Each
# result is clean for xfs_repair -n 6.1 and 7.2, mounts on the host
# kernel with every file's content as before (SHA-256 of each file), and
# the kernel writes to it.  Refused with exit 3, the blocking AG and the
# smallest size named and nothing written (strace): used blocks in the
# part cut off (with rmapbt, the files owning them named), the internal
# log there, fewer than 2 AGs; the smallest size named is then
# accepted.  -n writes nothing; -z's undo file
# restores the image byte for byte; a run killed between two writes
# leaves NEEDSREPAIR, which xfs_repair 7.2 completes.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/resize_lib.sh"

# populate IMG: mount it and write files of random content in several
# directories (the kernel spreads directories over the AGs), then record
# each file's SHA-256 in IMG.sums.
populate() {
	local img=$1 d i agcount shift
	agcount=$(db_get "$img" "sb 0" agcount)
	shift=$(($(db_get "$img" "sb 0" agblklog) + $(db_get "$img" "sb 0" inopblog)))
	loop_mount "$img" || exit 99
	for d in 0 1 2 3 4 5; do
		mkdir "$MNT/d$d"
		for i in 1 2 3 4 5 6; do
			head -c $((i * i * 9000 + d * 777)) /dev/urandom >"$MNT/d$d/f$i"
		done
		ln "$MNT/d$d/f1" "$MNT/d$d/link"
	done
	mkdir -p "$MNT/d0/sub/deeper" && echo small >"$MNT/d0/sub/deeper/s"
	# A hole before the last files of the last AG: its free tail can then
	# go whole (the bnobt record deleted, not shortened) at the smallest
	# size, the hole keeping the AG's btree reservation free (written
	# out first, or delayed allocation would leave no hole).
	sync -f "$MNT"
	for d in 0 1 2 3 4 5; do
		[ $(($(stat -c %i "$MNT/d$d") >> shift)) = $((agcount - 1)) ] && rm "$MNT/d$d/f5"
	done
	(cd "$MNT" && find . -type f | sort | xargs sha256sum) >"$img.sums"
	loop_umount || exit 99
}

# checked NAME IMG SUMS: clean for xfs_repair -n 6.1 and 7.2; the kernel
# mounts it, every file reads as it did (SUMS) and a new file is written.
checked() {
	local name=$1 img=$2 sums=$3
	mount_checked "$name" "$img" || return
	if ! (cd "$MNT" && sha256sum --quiet -c "$sums") >"$T/sums.out" 2>&1; then
		fail "$name: file contents differ after the shrink: $(head -3 "$T/sums.out")"
	elif ! head -c 3000000 /dev/urandom >"$MNT/new" || ! sync -f "$MNT/new"; then
		fail "$name: the kernel cannot write a new file"
	else
		pass "$name: the kernel mounts it, $(wc -l <"$sums") files intact, a 3 MB file written"
	fi
	umount_checked "$name"
}

# oracle NAME ORIG BLOCKS: shrink copies of ORIG to BLOCKS with
# xfs_growfs -D and with xfskit-resize -D; compare, check, mount.
oracle() {
	local name=$1 orig=$2 size=$3 ag d r n i
	cp --sparse=always "$orig" "$T/g.img" && cp --sparse=always "$orig" "$T/r.img" ||
		{ echo "copy failed" >&2; exit 99; }
	loop_mount "$T/g.img" || exit 99
	xfs_growfs -D "$size" "$MNT" >"$T/growfs.out" 2>&1 ||
		{ echo "$name: xfs_growfs -D $size: $(tail -1 "$T/growfs.out")" >&2; exit 99; }
	loop_umount || exit 99
	[ "$(db_get "$T/g.img" "sb 0" dblocks)" = "$size" ] ||
		{ echo "$name: the kernel did not shrink it to $size" >&2; exit 99; }
	if ! "$RESIZE" -D "$size" "$T/r.img" >"$T/r.out" 2>&1; then
		fail "$name: xfskit-resize -D $size failed: $(cat "$T/r.out")"
		return
	fi
	ag=$(($(db_get "$orig" "sb 0" agcount) - 1))
	d=$(diff <(echo "sb 0" | db_cmds "$T/g.img") <(echo "sb 0" | db_cmds "$T/r.img") | head -6)
	[ -z "$d" ] && pass "$name: primary superblock equal to xfs_growfs -D's" ||
		fail "$name: primary superblock differs from xfs_growfs -D's: $d"
	printf '%s\n' "agf $ag" "agi $ag" "agfl $ag" "agf $ag|addr bnoroot" "agf $ag|addr cntroot" >"$T/cmds"
	# The leaves of two-level free-space btrees.
	for r in bno cnt; do
		[ "$(db_get "$T/g.img" "agf $ag" ${r}level)" = 2 ] || continue
		n=$(xfs_db -r -c "agf $ag" -c "addr ${r}root" -c "print numrecs" "$T/g.img" |
			sed -n 's/^numrecs = //p')
		for i in $(seq 1 "$n"); do echo "agf $ag|addr ${r}root|addr ptrs[$i]"; done >>"$T/cmds"
	done
	d=$(diff <(db_cmds "$T/g.img" <"$T/cmds") <(db_cmds "$T/r.img" <"$T/cmds") | head -6)
	[ -z "$d" ] && pass "$name: AGF, AGI, AGFL and free-space btree blocks of AG $ag equal to xfs_growfs -D's ($(wc -l <"$T/cmds") blocks)" ||
		fail "$name: AG $ag differs from xfs_growfs -D's: $d"
	for a in $(seq 1 "$ag"); do echo "sb $a"; done >"$T/cmds"
	d=$(diff <(db_cmds "$T/g.img" <"$T/cmds" | grep -v '^fdblocks = ') \
		<(db_cmds "$T/r.img" <"$T/cmds" | grep -v '^fdblocks = ') | head -6)
	[ -z "$d" ] && pass "$name: secondary superblocks equal to xfs_growfs -D's but for fdblocks" ||
		fail "$name: secondary superblocks differ from xfs_growfs -D's: $d"
	checked "$name" "$T/r.img" "$orig.sums"
}

# 6.1 defaults (4 AGs of 19200 blocks, the log in AG 2), populated.
mkfs_xfs_image "$T/a.img" 300M || { echo "mkfs.xfs failed" >&2; exit 99; }
populate "$T/a.img"
oracle "defaults, free tail of the last AG" "$T/a.img" 70000

# rmapbt: the rmapbt is not touched (free space has no owner).
mkfs_xfs_image "$T/b.img" 300M -m rmapbt=1 || { echo "mkfs.xfs failed" >&2; exit 99; }
populate "$T/b.img"
oracle "rmapbt, free tail of the last AG" "$T/b.img" 60000

# Two-level free-space btrees in the last AG (1200 one-block files in
# the directory the kernel puts there, every other one deleted): its
# free tail comes out of the rightmost leaves in place, as the kernel
# takes it.
mkfs_xfs_image "$T/t.img" 300M -d agsize=128m || { echo "mkfs.xfs failed" >&2; exit 99; }
shift=$(($(db_get "$T/t.img" "sb 0" agblklog) + $(db_get "$T/t.img" "sb 0" inopblog)))
loop_mount "$T/t.img" || exit 99
for d in 1 2 3; do
	mkdir "$MNT/d$d"
	[ $(($(stat -c %i "$MNT/d$d") >> shift)) = 2 ] || continue
	for i in $(seq 1 1200); do echo "$d $i" >"$MNT/d$d/f$i"; done
done
sync -f "$MNT"
rm -f "$MNT"/d?/f*[13579]
(cd "$MNT" && find . -type f | sort | xargs sha256sum) >"$T/t.img.sums"
loop_umount || exit 99
[ "$(db_get "$T/t.img" "agf 2" bnolevel)" = 2 ] && [ "$(db_get "$T/t.img" "agf 2" cntlevel)" = 2 ] ||
	{ echo "the populated image's AG 2 free-space btrees do not have 2 levels" >&2; exit 99; }
oracle "2-level free-space btrees" "$T/t.img" 70000

# shrunk NAME ORIG BLOCKS AGCOUNT: xfskit-resize alone (the kernel does
# not remove AGs); the result has AGCOUNT AGs, and is checked.
shrunk() {
	local name=$1 orig=$2 size=$3 nag=$4
	cp --sparse=always "$orig" "$T/r.img" || { echo "copy failed" >&2; exit 99; }
	if ! "$RESIZE" -D "$size" "$T/r.img" >"$T/r.out" 2>&1; then
		fail "$name: xfskit-resize -D $size failed: $(cat "$T/r.out")"
		return
	fi
	if [ "$(db_get "$T/r.img" "sb 0" dblocks)" != "$size" ] ||
	   [ "$(db_get "$T/r.img" "sb 0" agcount)" != "$nag" ]; then
		fail "$name: dblocks $(db_get "$T/r.img" "sb 0" dblocks), agcount $(db_get "$T/r.img" "sb 0" agcount); expected $size and $nag"
		return
	fi
	pass "$name: $size blocks in $nag AGs"
	checked "$name" "$T/r.img" "$orig.sums"
}

# Eight AGs of 19200 blocks, files in a few of them only: the kernel
# places each new directory in the next AG, so d0-d5 are in AGs 1-6 (or
# so) and the last AG is empty.  Find the empty AGs at the end.
mkfs_xfs_image "$T/c.img" 600M -d agcount=8 || { echo "mkfs.xfs failed" >&2; exit 99; }
loop_mount "$T/c.img" || exit 99
for i in 1 2; do
	mkdir "$MNT/d$i" && head -c 200000 /dev/urandom >"$MNT/d$i/f"
done
(cd "$MNT" && find . -type f | sort | xargs sha256sum) >"$T/c.img.sums"
loop_umount || exit 99
agb=$(db_get "$T/c.img" "sb 0" agblocks)
last_used=0
for a in $(seq 0 7); do
	[ "$(db_get "$T/c.img" "agi $a" count)" = 0 ] &&
		[ "$(db_get "$T/c.img" "agf $a" freeblks)" -ge $((agb - 20)) ] || last_used=$a
done
logag=$(($(db_get "$T/c.img" "sb 0" logstart) >> $(db_get "$T/c.img" "sb 0" agblklog)))
[ "$logag" -gt "$last_used" ] && last_used=$logag
[ "$last_used" -le 5 ] || { echo "AGs up to $last_used are in use: no empty AGs to remove" >&2; exit 99; }
keep=$((last_used + 1))
shrunk "empty AGs $keep-7 removed" "$T/c.img" $((keep * agb)) "$keep"
shrunk "empty AGs $((keep + 1))-7 removed, AG $keep cut to 500 blocks" "$T/c.img" $((keep * agb + 500)) $((keep + 1))
# And grown back to the whole image: the cut AG grows, the removed AGs
# come back new.
if "$RESIZE" "$T/r.img" >"$T/r.out" 2>&1 && [ "$(db_get "$T/r.img" "sb 0" agcount)" = 8 ]; then
	pass "grown back to 8 AGs"
	checked "grown back" "$T/r.img" "$T/c.img.sums"
else
	fail "growing back failed: $(cat "$T/r.out")"
fi


# mkfs.xfs 7.2's defaults (parent pointers, exchange) and a metadata
# directory tree: clean for xfs_repair 7.2 (6.1 does not know them) and
# mounted by the kernel.
if have_xfs72 >/dev/null 2>&1; then
	for opt in "" "-m metadir=1"; do
		rm -f "$T/n.img" && truncate -s 300M "$T/n.img" &&
			xfs72 mkfs.xfs -q -f $opt "$T/n.img" >"$T/mkfs.out" 2>&1 ||
			{ echo "mkfs.xfs 7.2 $opt failed: $(cat "$T/mkfs.out")" >&2; exit 99; }
		name="mkfs.xfs 7.2${opt:+ $opt}"
		if ! "$RESIZE" -D 60000 "$T/n.img" >"$T/r.out" 2>&1; then
			fail "$name: xfskit-resize -D 60000 failed: $(cat "$T/r.out")"
		elif ! xfs_repair_n72 "$T/n.img" "$T/rep.out"; then
			fail "$name: not clean for xfs_repair 7.2: $(grep -v '^Phase\|^  *-' "$T/rep.out" | tail -3)"
		elif ! loop_mount "$T/n.img" || ! loop_umount; then
			fail "$name: the kernel does not mount the result"
		else
			pass "$name: shrunk to 60000 blocks, clean for xfs_repair 7.2, mounted"
		fi
	done
fi

# -n prints the plan and the smallest size; files in AG 3 of the
# populated image stop a shrink into them, and the message names AG 3,
# the blocks and that smallest size, which is then accepted.
cp --sparse=always "$T/a.img" "$T/k.img"
unchanged "-n" 0 -n -D 70000
min=$(sed -n 's/^smallest size possible without moving data: \([0-9]*\) blocks.*/\1/p' "$T/k.out")
grep -q "^AG 3 shrinks from 19200 to 12400 blocks" "$T/k.out" && [ -n "$min" ] ||
	fail "-n: the plan printed is not the expected one: $(cat "$T/k.out")"
[ "${min:-0}" -gt $((3 * 19200 + 64)) ] ||
	{ echo "the populated image's AG 3 holds too little for the refusal case (smallest size ${min:-?})" >&2; exit 99; }
unchanged "used blocks in the part cut off" 3 -D $((3 * 19200 + 64))
grep -q "AG 3 holds [0-9]* used blocks in its blocks 64-19199, which would be cut off; the smallest size possible without moving data is $min blocks" "$T/k.err" ||
	fail "used blocks: the message does not name AG 3, its blocks and the smallest size $min: $(cat "$T/k.err")"
# With rmapbt the message names the owners: the files of AG 3.
cp --sparse=always "$T/b.img" "$T/k.img"
unchanged "used blocks, rmapbt" 3 -D $((3 * 19200 + 64))
inos=$(sed -n 's/.* files or directories: inodes \([0-9, ]*\).*/\1/p' "$T/k.err" | tr -d ,)
bad=""
for i in $inos; do
	[ $((i >> 18)) = 3 ] && xfs_db -r -c "inode $i" -c "print core.mode" "$T/k.img" | grep -q "^core.mode = 0100" ||
		bad="$bad $i"
done
[ -n "$inos" ] && [ -z "$bad" ] && pass "used blocks, rmapbt: the files named (inodes $inos) are regular files of AG 3" ||
	fail "used blocks, rmapbt: the owners named are not files of AG 3 (${bad:-none named}): $(cat "$T/k.err")"
# ... and sorts every used block of the part cut off by what a data move
# could do with it: the regular files' extents there (xfs_db's bmap of
# every file: blocks, extents, files) and the inode chunks (the AGI's
# count, 64 inodes a chunk) must be what it says.
fb=0 fe=0 nf=0
cp --sparse=always "$T/b.img" "$T/m.img"
loop_mount "$T/m.img" || exit 99
find "$MNT" -type f -printf '%i\n' | sort -un >"$T/inos"
loop_umount || exit 99
for i in $(cat "$T/inos"); do
	got=$(xfs_db -r -c "inode $i" -c "bmap" "$T/k.img" |
		sed -n 's/.*(\([0-9]*\)\/\([0-9]*\)) count \([0-9]*\).*/\1 \2 \3/p' |
		awk '$1 == 3 { s = $2 < 64 ? 64 : $2; e = $2 + $3; if (e > s) { b += e - s; n++ } }
			END { print b + 0, n + 0 }')
	set -- $got
	[ "$2" -gt 0 ] && fb=$((fb + $1)) fe=$((fe + $2)) nf=$((nf + 1))
done
# The inode chunks of AG 3 at or past block 64 (the inobt's records).
ipb=$(db_get "$T/k.img" "sb 0" inopblock)
chunks=0
for st in $(xfs_db -r -c "agi 3" -c "addr root" -c "print recs" "$T/k.img" |
	sed -n 's/^[0-9]*:\[\([0-9]*\),.*/\1/p'); do
	[ $((st / ipb)) -ge 64 ] && chunks=$((chunks + 64 / ipb))
done
line=$(grep "in the part cut off" "$T/k.err")
if ! echo "$line" | grep -q " $fb blocks of regular files' data ($fe extents of $nf files) could be moved"; then
	fail "used blocks, rmapbt: the movable data named is not the $fb blocks in $fe extents of $nf files xfs_db maps there: ${line:-no such line}"
elif [ "$chunks" -gt 0 ] && ! echo "$line" | grep -q "but a move cannot take .*\\b$chunks of inode chunks"; then
	fail "used blocks, rmapbt: not $chunks blocks of inode chunks named as what cannot move: $line"
elif [ "$chunks" = 0 ] && ! grep -qE "cannot shrink to [0-9]+ blocks even with the files' data moved out of the part cut off: AG 3 would keep [0-9]+ free blocks, fewer than the [0-9]+ its metadata btrees reserve.*; the smallest size possible with that data moved is [0-9]+ blocks" "$T/k.err"; then
	# The refusal of the plan with the data moved must say so: its
	# figures are not "without moving data".
	fail "used blocks, rmapbt: all of it movable, but no move tried, or not refused (in the words of the plan with the data moved) for the 64 blocks left to AG 3's btrees: $(cat "$T/k.err")"
else
	pass "used blocks, rmapbt: $fb blocks in $fe extents of $nf files movable, $chunks of inode chunks there, as xfs_db maps them; $(tail -1 "$T/k.err" | cut -d: -f3-)"
fi
unchanged "fewer than 2 AGs" 3 -D 19200
grep -q "a filesystem keeps at least 2" "$T/k.err" || fail "fewer than 2 AGs: message: $(cat "$T/k.err")"
# The smallest size is the kernel's too: xfs_growfs -D takes it (with
# the same result) and refuses one block less, as xfskit-resize does.
oracle "the smallest size named ($min blocks)" "$T/a.img" "$min"
cp --sparse=always "$T/a.img" "$T/k.img"
unchanged "one block below the smallest size" 3 -D $((min - 1))
cp --sparse=always "$T/a.img" "$T/g.img"
loop_mount "$T/g.img" || exit 99
xfs_growfs -D $((min - 1)) "$MNT" >"$T/growfs.out" 2>&1 && fail "one block below the smallest size: xfs_growfs -D takes it"
loop_umount || exit 99
# The internal log (AG $logag of the 8-AG image, the AGs above it empty).
if [ "$last_used" = "$logag" ]; then
	cp --sparse=always "$T/c.img" "$T/k.img"
	unchanged "the internal log in the part cut off" 3 -D $((logag * agb + 100))
	grep -q "AG $logag holds [0-9]* used blocks in its blocks 100-$((agb - 1)), which would be cut off (the internal log among them" "$T/k.err" ||
		fail "the log: the message does not name AG $logag and the log: $(cat "$T/k.err")"
fi

# Moving data: files of the root directory (their inodes in AG 0),
# preallocated, with an unwritten extent and a file of 200 extents (a
# bmbt), filling AGs 0-2,
# then one more file, which the kernel puts in AG 3; the shrink that
# removes AG 3 and cuts 500 blocks off AG 2 moves AG 3's extents below
# the new end first.  -n prints the plan the run then prints, and writes nothing;
# the result is clean for xfs_repair 6.1 and 7.2, mounts, and every file
# reads as before; -z's undo file restores the image byte for byte.
mkfs_xfs_image "$T/v.img" 300M -m rmapbt=1 || { echo "mkfs.xfs failed" >&2; exit 99; }
vagb=$(db_get "$T/v.img" "sb 0" agblocks)
loop_mount "$T/v.img" || exit 99
for i in 1 2 3 4; do xfs_io -f -c "falloc 0 30000000" -c "pwrite -S $i 0 1m" "$MNT/f$i" >/dev/null || exit 99; done
sync -f "$MNT"
xfs_io -f -c "falloc 0 4m" -c "pwrite 0 64k" "$MNT/unw" >/dev/null &&
	for i in $(seq 0 2 400); do echo "$i" | dd of="$MNT/frag" bs=4096 seek="$i" conv=notrunc status=none; done &&
	sync -f "$MNT" && head -c 20000000 /dev/urandom >"$MNT/f5" ||
	{ echo "populating failed" >&2; exit 99; }
(cd "$MNT" && find . -type f | sort | xargs sha256sum) >"$T/v.img.sums"
loop_umount || exit 99
[ "$(db_get "$T/v.img" "agi 3" count)" = 0 ] && [ "$(db_get "$T/v.img" "agf 3" freeblks)" -lt $((vagb - 1000)) ] ||
	{ echo "the populated image has no file data (or has inodes) in AG 3: $(db_get "$T/v.img" "agf 3" freeblks) free" >&2; exit 99; }
cp --sparse=always "$T/v.img" "$T/k.img"
unchanged "moving data: -n" 0 -n -D $((3 * vagb - 500))
grep -v "^-n: nothing written" "$T/k.out" | sed "s|$T/k.img|IMG|" >"$T/plan.n"
grep -q "^moved first: [1-9][0-9]* blocks of regular files' data" "$T/plan.n" ||
	fail "moving data: -n does not say data moves: $(cat "$T/plan.n" "$T/k.err")"
cp --sparse=always "$T/v.img" "$T/r.img"
if ! "$RESIZE" -z "$T/v.undo" -D $((3 * vagb - 500)) "$T/r.img" >"$T/r.out" 2>&1; then
	fail "moving data: xfskit-resize -D $((3 * vagb - 500)) failed: $(cat "$T/r.out")"
else
	d=$(diff "$T/plan.n" <(grep -v "^data blocks changed\|^the filesystem now ends" "$T/r.out" | sed "s|$T/r.img|IMG|"))
	[ -z "$d" ] && pass "moving data: -n printed the plan the run carried out ($(grep '^moved first' "$T/plan.n"))" ||
		fail "moving data: -n's plan differs from the run's: $d"
	[ "$(db_get "$T/r.img" "sb 0" dblocks)" = $((3 * vagb - 500)) ] && [ "$(db_get "$T/r.img" "sb 0" agcount)" = 3 ] ||
		fail "moving data: dblocks $(db_get "$T/r.img" "sb 0" dblocks), agcount $(db_get "$T/r.img" "sb 0" agcount); expected $((3 * vagb - 500)) and 3"
	cp --sparse=always "$T/r.img" "$T/k.img"
	checked "moving data" "$T/k.img" "$T/v.img.sums"
	"$UNDO" "$T/v.undo" "$T/r.img" >"$T/u.out" 2>&1 || fail "moving data: xfskit-undo: $(cat "$T/u.out")"
	same_image "$T/r.img" "$T/v.img" && pass "moving data: -z: xfskit-undo restores the image byte for byte" ||
		fail "moving data: -z: after xfskit-undo the image differs from the original"
fi
# With XK_TEST_LONG=1: killed before each of five writes spread over the
# run (the mark, the copied data, the maps and rebuilt btrees, the
# shrink), it leaves NEEDSREPAIR, xfs_repair 7.2 makes it clean, and
# every file reads as before.
if [ "${XK_TEST_LONG:-0}" = 1 ] && have_xfs72 >/dev/null 2>&1; then
	cp --sparse=always "$T/v.img" "$T/k.img"
	ASAN_OPTIONS="$ASAN_OPTIONS:detect_leaks=0" \
	strace -f -qq -e trace=pwrite64,pwritev,pwritev2 -o "$T/strace" \
		"$RESIZE" -D $((3 * vagb - 500)) "$T/k.img" >/dev/null 2>&1 ||
		fail "moving data: counting the writes: the run failed"
	nw=$(grep -c pwrite "$T/strace")
	for n in 2 $((nw / 4)) $((nw / 2)) $((3 * nw / 4)) $((nw - 1)); do
		cp --sparse=always "$T/v.img" "$T/k.img"
		crash_at "$n" "$nw" -D $((3 * vagb - 500))
		loop_mount "$T/k.img" || continue
		(cd "$MNT" && sha256sum --quiet -c "$T/v.img.sums") >"$T/sums.out" 2>&1 ||
			fail "moving data: crash after $n of $nw writes: after xfs_repair 7.2 the files differ: $(head -2 "$T/sums.out")"
		loop_umount || exit 99
	done
fi
# The internal log (in AG 2) in the part cut off: no move, refused with
# nothing written, the log named among what a move cannot take.
cp --sparse=always "$T/v.img" "$T/k.img"
unchanged "moving data: the log in the part cut off" 3 -D $((2 * vagb + 64))
grep -q "in the part cut off, [1-9][0-9]* blocks of regular files' data .* could be moved.*; but a move cannot take .*[1-9][0-9]* of the log" "$T/k.err" ||
	fail "moving data: the log: the message does not name the data and the log: $(cat "$T/k.err")"

# -z: xfskit-undo takes the shrink back, byte for byte.
cp --sparse=always "$T/c.img" "$T/k.img" && cp --sparse=always "$T/c.img" "$T/before.img"
"$RESIZE" -z "$T/u.undo" -D $((keep * agb + 500)) "$T/k.img" >"$T/k.out" 2>&1 || fail "-z: $(cat "$T/k.out")"
same_image "$T/k.img" "$T/before.img" && fail "-z: the run changed nothing"
"$UNDO" "$T/u.undo" "$T/k.img" >"$T/u.out" 2>&1 || fail "xfskit-undo: $(cat "$T/u.out")"
same_image "$T/k.img" "$T/before.img" && pass "-z: xfskit-undo restores the image byte for byte" ||
	fail "-z: after xfskit-undo the image differs from the original"

# A crash after the first write or before the last leaves the NEEDSREPAIR
# mark of the first on the primary, and xfs_repair 7.2 makes the
# filesystem clean.
if have_xfs72 >/dev/null 2>&1; then
	ASAN_OPTIONS="$ASAN_OPTIONS:detect_leaks=0" \
	strace -f -qq -e trace=pwrite64,pwritev,pwritev2 -o "$T/strace" \
		"$RESIZE" -D $((keep * agb + 500)) "$T/k.img" >/dev/null 2>&1 ||
		fail "counting the writes: the run failed"
	nw=$(grep -c pwrite "$T/strace")
	for n in 2 $((nw - 1)); do
		cp --sparse=always "$T/c.img" "$T/k.img"
		crash_at "$n" "$nw" -D $((keep * agb + 500))
	done
fi
finish
