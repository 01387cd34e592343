#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A lost directory brought back from the device scan (repair/reasm.c).
# A kernel-populated image (directories of a few thousand entries in
# leaf and node form, small files, and as regular files another XFS
# image and a byte copy of this image made before the damage) has a big
# directory's inode zeroed with xfs_db -x.  xfs_repair 6.1 and
# xfskit-repair each repair a copy; after ours xfs_repair -n is clean,
# the kernel mounts it, and the tree is walked: the entries kept in
# place (path and content) and those in /lost+found are printed for both
# tools, and ours must keep more in place (every entry, here).  The
# image files inside are unchanged and no name of theirs appears.  In
# the same image without rmapbt, the bmbt block of /frag (a directory
# in btree format) is zeroed too: rebuilt from the scan, inode kept.
# -n says what the scan would rebuild and writes nothing; a healthy
# image is never scanned.  The trap: the directory's own blocks zeroed
# too, so that only the copies inside the image files name it: nothing
# is taken from them (the children go to /lost+found, as xfs_repair
# puts them).  The stale copy: /big's inode zeroed, and a copy of one of
# its data blocks left in the last AG's last block (as the kernel leaves
# a directory block it freed: its own address, an older LSN), one name
# in it naming another file of /big, that AG's bnobt root lost (its free
# space unknown): the newer block's entry is kept, every entry in place
# (without the LSN both entries of that name were left out).
# XK_TEST_LONG=1 adds bigger directories and rmapbt.
. "$XK_SRCDIR/tests/scripts/lib.sh"
need_xfsprogs
[ "$(id -u)" -eq 0 ] || skip "populating images needs root (loop mount)"
command -v python3 >/dev/null || skip "python3 is not installed"

if [ "${XK_TEST_LONG:-0}" = 1 ]; then
	sizes="3000 20000"
	optsets="rmapbt=0 rmapbt=1"
else
	sizes="3000"
	optsets="rmapbt=0"
fi

# walk DIR: one line per entry below DIR: path, kind, content hash
# (for the image files, their size: same_image compares them).
walk() {
	python3 - "$1" <<'PY'
import hashlib, os, sys
top = sys.argv[1]
for root, dirs, files in os.walk(top):
    for n in sorted(dirs + files):
        p = os.path.join(root, n)
        rel = os.path.relpath(p, top)
        if os.path.islink(p):
            print(rel, "l", os.readlink(p))
        elif os.path.isdir(p):
            print(rel, "d", "-")
        elif n.endswith(".img"):
            print(rel, "f", os.path.getsize(p))
        else:
            with open(p, "rb") as f:
                print(rel, "f", hashlib.sha1(f.read()).hexdigest())
PY
}

# Another filesystem, populated by the kernel, to store as a file.
other=$T/other.img
mkfs_xfs_image "$other" 300m || { fail "mkfs.xfs other"; finish; }
loop_mount "$other" || finish
mkdir "$MNT/d" && (cd "$MNT/d" && seq -f "inner_entry_%05g" 1 300 | xargs touch) ||
	fail "populate the inner image"
loop_umount || { fail "umount"; finish; }

# zero_inode IMG INO: every byte of the inode, with xfs_db -x.
zero_inode() {
	local off len
	off=$(xfs_db -r -c "inode $2" -c stack "$1" | sed -n 's/.*byte offset \([0-9]*\), length \([0-9]*\).*/\1 \2/p')
	len=${off#* }
	off=${off% *}
	[ -n "$off" ] && [ $((off % 512)) = 0 ] || return 1
	for ((s = 0; s < len; s += 512)); do
		xfs_db -x -c "daddr $(((off + s) / 512))" -c "write fill 0" "$1" >/dev/null 2>&1 || return 1
	done
}

# count MANIFEST TREE: "kept moved extra": the manifest's entries found
# in place with the same content, the entries under lost+found, and
# the entries in neither place that the manifest does not have.
count() {
	python3 - "$1" "$2" <<'PY'
import sys
want = set(l.rstrip("\n") for l in open(sys.argv[1]))
have = [l.rstrip("\n") for l in open(sys.argv[2])]
kept = sum(1 for l in have if l in want)
moved = sum(1 for l in have if l.startswith("lost+found/"))
extra = sum(1 for l in have if l not in want and not l.startswith("lost+found"))
print(kept, moved, extra)
PY
}

# one_case LABEL ENTRIES MKFS-OPTS KINDS: build an image, then for each
# damage of KINDS (inode: /big's inode zeroed; trap: its blocks too;
# bmbt: /big's inode, /big/sub2's (a lost directory in a lost one) and
# the block map of /frag, a directory in btree format, zeroed) damage a
# copy, repair, compare.
one_case() {
	local base=$1 n=$2 mopts=$3 kinds=$4 D=$T/$1 big frag sub2 st label=$1
	mkdir -p "$D"
	mkfs_xfs_image "$D/outer.img" 320m -m "$mopts" || { fail "[$label] mkfs.xfs"; return 1; }
	img=$D/outer.img
	loop_mount "$img" || return 1
	{
		mkdir "$MNT/big" "$MNT/small" "$MNT/more" &&
		(cd "$MNT/big" && seq -f "a_longish_directory_entry_name_%06g" 1 "$n" | xargs touch) &&
		for i in $(seq 1 40); do echo "big file $i" >"$MNT/big/content_$i"; done &&
		mkdir "$MNT/big/sub1" "$MNT/big/sub2" &&
		for i in $(seq 1 20); do echo "sub $i" >"$MNT/big/sub1/f$i"; done &&
		(cd "$MNT/big/sub2" && seq -f "s%04g" 1 100 | xargs touch) &&
		ln -s ../small "$MNT/big/link" &&
		for i in $(seq 1 30); do echo "small $i" >"$MNT/small/f$i"; done &&
		(cd "$MNT/more" && seq -f "m%05g" 1 200 | xargs touch) &&
		# Directory blocks between file blocks: many extents, a bmbt.
		mkdir "$MNT/frag" "$MNT/data" &&
		for r in $(seq 1 24); do
			(cd "$MNT/frag" && seq -f "r${r}_a_longish_directory_entry_name_%05g" 1 80 | xargs touch) &&
			head -c 8192 /dev/zero >"$MNT/data/f$r" && sync ||
				{ fail "[$label] populate /frag"; return 1; }
		done
	} || fail "[$label] populate"
	loop_umount || return 1
	cp --sparse=always "$img" "$D/self.img" || return 1
	loop_mount "$img" || return 1
	cp --sparse=always "$D/self.img" "$MNT/self.img" &&
		cp --sparse=always "$other" "$MNT/other.img" || fail "[$label] store the image files"
	big=$(stat -c %i "$MNT/big")
	frag=$(stat -c %i "$MNT/frag")
	sub2=$(stat -c %i "$MNT/big/sub2")
	walk "$MNT" | grep -v '^lost+found' >"$D/manifest"
	loop_umount || return 1
	xfs_repair -n "$img" >"$D/xr0" 2>&1 || { fail "[$label] not clean before the damage: $(tail -5 "$D/xr0")"; return 1; }

	# A healthy image is never scanned.
	"$REPAIR" -n "$img" >"$D/healthy" 2>&1 || fail "[$label] healthy image: $(tail -3 "$D/healthy")"
	grep -q "scanning the device" "$D/healthy" && fail "[$label] the device was scanned on a healthy filesystem"
	mv "$img" "$D/base.img"
	for kind in $kinds; do
		label=$base-$kind
		cp --sparse=always "$D/base.img" "$img" || return 1
		damage_repair "$kind"
	done
	rm -f "$D"/*.img
}

# stale_dir_block IMG: /big's data block 1 copied to the last block of
# the device (its address and an older LSN set there, its fourth entry
# naming its fifth's file), the last AG's bnobt root lost.
stale_dir_block() {
	local bs dblocks last src d to x ino
	bs=$(db_get "$1" "sb 0" blocksize)
	dblocks=$(db_get "$1" "sb 0" dblocks)
	last=$(($(db_get "$1" "sb 0" agcount) - 1))
	src=$(xfs_db -r -c "inode $big" -c "bmap" "$1" | sed -n 's/^data offset 1 startblock \([0-9]*\) .*/\1/p')
	d=$(xfs_db -r -c "convert fsblock $src daddr" "$1" | sed -n 's/.*(\([0-9]*\)).*/\1/p')
	to=$(((dblocks - 1) * bs / 512))
	x=$(xfs_db -r -c "convert daddr $to fsblock" "$1" | sed -n 's/.*(\([0-9]*\)).*/\1/p')
	[ -n "$d" ] && [ -n "$x" ] || return 1
	dd if="$1" of="$1" bs=512 skip="$d" seek="$to" count=$((bs / 512)) conv=notrunc status=none || return 1
	ino=$(xfs_db -r -c "fsblock $x" -c "type dir3" -c "print du[4].inumber" "$1" | sed -n 's/.* = //p')
	[ -n "$ino" ] &&
		xfs_db -x -c "fsblock $x" -c "type dir3" -c "write dhdr.hdr.bno $to" \
			-c "write dhdr.hdr.lsn 0x100000001" -c "write du[3].inumber $ino" \
			-c "agf $last" -c "write bnoroot 0" "$1" >/dev/null
}

# damage_repair KIND: on $img ($D, $big, $frag, $label, $D/manifest set).
damage_repair() {
	local kind=$1 st targets=$big trap=0 fsb daddr t

	# The damage: the big directory's inode zeroed (and in the trap case
	# every block of its own, so that only copies inside files name it),
	# or the bmbt block under /frag's inode.
	[ "$kind" = trap ] && trap=1
	if [ "$kind" = bmbt ]; then
		targets="$big $sub2 $frag"
		zero_inode "$img" "$sub2" || { fail "[$label] could not zero inode $sub2"; return 1; }
		[ "$(db_get "$img" "inode $frag" core.format)" = "3 (btree)" ] ||
			{ fail "[$label] /frag is not in btree format: $(db_get "$img" "inode $frag" core.format)"; return 1; }
		fsb=$(xfs_db -r -c "inode $frag" -c "print u3.bmbt.ptrs" "$img" |
			sed -n 's/^u3.bmbt.ptrs\[1[^]]*\] = \(1:\)\{0,1\}\([0-9]*\).*/\2/p')
		daddr=$(xfs_db -r -c "convert fsblock $fsb daddr" "$img" | sed -n 's/.*(\([0-9]*\)).*/\1/p')
		[ -n "$daddr" ] || { fail "[$label] no daddr for /frag's bmbt block $fsb"; return 1; }
		dd if=/dev/zero of="$img" bs=512 seek="$daddr" count=$(($(db_get "$img" "sb 0" blocksize) / 512)) \
			conv=notrunc status=none || return 1
	fi
	if [ "$trap" = 1 ]; then
		xfs_db -r -c "inode $big" -c "bmap" "$img" |
			sed -n 's/.*startblock \([0-9]*\) (\([0-9]*\)\/\([0-9]*\)) count \([0-9]*\).*/\2 \3 \4/p' >"$D/bmap"
		[ -s "$D/bmap" ] || { fail "[$label] no bmap for directory $big"; return 1; }
		bs=$(db_get "$img" "sb 0" blocksize)
		agblocks=$(db_get "$img" "sb 0" agblocks)
		while read -r ag agbno cnt; do
			dd if=/dev/zero of="$img" bs="$bs" seek=$((ag * agblocks + agbno)) count="$cnt" \
				conv=notrunc status=none || { fail "[$label] zeroing the blocks"; return 1; }
		done <"$D/bmap"
	fi
	if [ "$kind" = stale ]; then
		stale_dir_block "$img" || { fail "[$label] could not leave a stale copy of a block of /big"; return 1; }
	fi
	zero_inode "$img" "$big" || { fail "[$label] could not zero inode $big"; return 1; }

	# -n: what the scan would rebuild, nothing written (checked once).
	[ "$kind" = trap ] || before=$(image_state "$img")
	"$REPAIR" -n "$img" >"$D/n.out" 2>&1
	st=$?
	[ $st = 1 ] || fail "[$label] -n on the damaged image: exit $st"
	[ "$kind" = trap ] || [ "$(image_state "$img")" = "$before" ] || fail "[$label] -n wrote to the image"
	if [ "$trap" = 1 ]; then
		grep -q "would rebuild directory" "$D/n.out" &&
			fail "[$label] -n would rebuild from blocks inside image files: $(grep 'would rebuild' "$D/n.out")"
	else
		for t in $targets; do
			grep -q "would rebuild directory $t (.*) from [1-9][0-9]* blocks found by the device scan" "$D/n.out" ||
				fail "[$label] -n does not say it would rebuild directory $t: $(grep -i 'scan\|rebuild' "$D/n.out" | head -5)"
		done
	fi

	cp --sparse=always "$img" "$D/xr.img" && cp --sparse=always "$img" "$D/ours.img" || return 1
	# (6.1 may stop asking to be run again: it is, once.)
	xfs_repair "$D/xr.img" >"$D/xr.out" 2>&1 || xfs_repair "$D/xr.img" >>"$D/xr.out" 2>&1 ||
		echo "note: [$label] xfs_repair 6.1 failed twice: $(tail -3 "$D/xr.out")"
	"$REPAIR" --json "$D/ours.img" >"$D/ours.json" 2>"$D/ours.err"
	st=$?
	[ $st = 0 ] || { fail "[$label] xfskit-repair: exit $st: $(tail -5 "$D/ours.err")"; return 1; }
	python3 - "$D/ours.json" "$trap" $targets >"$D/actions" <<'PY' || fail "[$label] --json: $(cat "$D/actions")"
import json, sys
doc = json.load(open(sys.argv[1]))
trap, want = sys.argv[2] == "1", sorted(int(t) for t in sys.argv[3:])
acts = [a for a in doc["actions"] if a["action"] == "dir_rebuilt_from_scan"]
if trap:
    if acts:
        sys.exit("rebuilt from blocks of the image files: %s" % acts)
elif sorted(a.get("ino") for a in acts) != want:
    sys.exit("want dir_rebuilt_from_scan of inodes %s, got %s" % (want, acts))
for a in acts:
    print(a["message"])
PY
	xfs_repair_clean "$D/ours.img" "$D/xr1" || fail "[$label] xfs_repair -n after ours: $(cat "$D/xr1")"

	for who in xr ours; do
		loop_mount "$D/$who.img" || return 1
		walk "$MNT" >"$D/$who.tree"
		same_image "$MNT/other.img" "$other" || fail "[$label] $who: other.img changed"
		same_image "$MNT/self.img" "$D/self.img" || fail "[$label] $who: self.img changed"
		loop_umount || return 1
		read -r kept moved extra < <(count "$D/manifest" "$D/$who.tree")
		eval "${who}_kept=$kept ${who}_moved=$moved ${who}_extra=$extra"
	done
	total=$(wc -l <"$D/manifest")
	printf '[%s] %-16s %8s %12s %8s (of %d entries)\n' "$label" tool "in place" "lost+found" other "$total"
	printf '[%s] %-16s %8d %12d %8d\n' "$label" "xfs_repair 6.1" "$xr_kept" "$xr_moved" "$xr_extra"
	printf '[%s] %-16s %8d %12d %8d\n' "$label" "xfskit-repair" "$ours_kept" "$ours_moved" "$ours_extra"
	grep -q "inner_entry_" "$D/ours.tree" && fail "[$label] a name of the inner image is in the repaired tree"
	[ "$ours_extra" = 0 ] || fail "[$label] $ours_extra entries that were not there: $(python3 -c '
import sys
w = set(open(sys.argv[1]).read().splitlines())
print([l for l in open(sys.argv[2]).read().splitlines() if l not in w and not l.startswith("lost+found")][:5])' "$D/manifest" "$D/ours.tree")"
	[ "$ours_kept" -ge "$xr_kept" ] || fail "[$label] ours keeps $ours_kept in place, xfs_repair $xr_kept"
	if [ "$trap" = 1 ]; then
		pass "[$label] trap: nothing taken from the image files; $ours_kept in place, $ours_moved in /lost+found"
	else
		[ "$ours_kept" -gt "$xr_kept" ] || fail "[$label] ours keeps $ours_kept in place, no more than xfs_repair's $xr_kept"
		[ "$ours_kept" = "$total" ] ||
			fail "[$label] $((total - ours_kept)) entries not kept in place: $(python3 -c '
import sys
h = set(open(sys.argv[2]).read().splitlines())
print([l for l in open(sys.argv[1]).read().splitlines() if l not in h][:5])' "$D/manifest" "$D/ours.tree")"
		pass "[$label] $(cat "$D/actions")"
	fi
}

first=1
for o in $optsets; do
	for n in $sizes; do
		# The trap once (on the first image); the bmbt without rmapbt
		# (with it, the rmapbt gives the block map back).
		one_case "$o-$n" "$n" "$o" "$([ "$o" = rmapbt=0 ] && echo bmbt stale || echo inode)$([ $first = 1 ] && echo " trap")"
		first=0
	done
done
finish
