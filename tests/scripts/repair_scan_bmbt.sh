#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A file's lost block map brought back from the bmbt leaves the device
# scan finds naming it (repair/reasm_fork.c), on a filesystem without
# rmapbt.  The kernel writes fragmented files into a clean image (every
# other block: bmbts of several leaves; one of unwritten extents); each
# case damages a copy with xfs_db -x, xfs_repair 6.1 and 7.2 repair
# copies of it, xfskit-repair another.  After ours xfs_repair -n is
# clean, the kernel mounts it, and each file is compared block by block
# with the original: printed beside what xfs_repair kept.
#   root:    the bmbt roots in three inodes damaged (a pointer that
#            leads nowhere; a level the inode verifier rejects; f4, a
#            reflinked copy of f2, whose blocks f2 maps too): every leaf
#            is there: each comes back whole (same checksum, same map);
#   lost:    two roots damaged and a leaf of each zeroed, one of them
#            after a copy of it was written to a free block (its self
#            address is not where it lies): both files come back with
#            the lost leaf's range as a hole, said so, and the misplaced
#            copy is not taken;
#   owner:   a leaf of f1 rewritten to name f2 as its owner (CRC
#            right), f2's root damaged: f2 takes nothing from it (whole
#            from its own leaves); f1, whose walk now fails at that
#            leaf, takes it back: its damaged walk reached it, and it is
#            linked both ways between two of f1's leaves, its records in
#            the gap between them, their blocks claimed by no one (said
#            so): f1 comes back whole;
#   stale:   stale copies of three of f1's leaves (as the kernel leaves
#            a leaf it freed) in the last AG's last blocks, each at its
#            own address, one record of each changed, one with an older
#            LSN, one with the same LSN (not linked both ways into f1's
#            chain: its neighbours name the leaf it copies), one with an
#            LSN past the log's head (no LSN to go by), that AG's
#            bnobt root lost (its free space unknown), f1's root
#            damaged: each copy is left out whole, said so, and f1 comes
#            back whole (without the rule every record where a copy and
#            its leaf disagree was left out);
#   taken:   f1's second leaf copied to the last AG's last block, as a
#            stale leaf of f2 would be (owner f2, an older LSN, its file
#            offsets beyond f2's end), that AG's bnobt root lost, both
#            roots damaged (f1's over that leaf): both files' maps come
#            from the scan, and both plan those blocks; the older leaf
#            gives way: f1 comes back whole, f2 takes none of them
#            (without the rule both left them out: a hole in f1);
#   shared:  the same with f2's second leaf as a stale leaf of f1: its
#            blocks are reflinked (f2 and f4 share them, refcount 2):
#            the stale leaf makes no third sharer: f1, f2 and f4 come
#            back whole (without the rule f1 took them too, and
#            xfs_repair found f1's reflink flag and the refcounts wrong).
# Ours keeps at least what xfs_repair keeps, every file, and more where
# leaves survived; -n says what it would rebuild and writes nothing.
. "$XK_SRCDIR/tests/scripts/lib.sh"
need_xfsprogs
[ "$(id -u)" -eq 0 ] || skip "populating images needs root (loop mount)"
command -v python3 >/dev/null || skip "python3 is not installed"
have_xfs72 || true

base=$T/base.img
mkfs_xfs_image "$base" 320m -m rmapbt=0 || { fail "mkfs.xfs: $(cat "$T/mkfs.out")"; finish; }
loop_mount "$base" || finish
python3 - "$MNT" <<'PY' || fail "populate"
import os, sys
top = sys.argv[1]
# Every other 4 KiB block written: one extent each, a bmbt of leaves.
for name, n in (("f1", 700), ("f2", 400)):
    fd = os.open(os.path.join(top, name), os.O_CREAT | os.O_WRONLY, 0o644)
    for i in range(n):
        os.pwrite(fd, os.urandom(4096), 2 * i * 4096)
    os.fsync(fd)
    os.close(fd)
# Unwritten extents between written blocks.
fd = os.open(os.path.join(top, "f3"), os.O_CREAT | os.O_WRONLY, 0o644)
os.posix_fallocate(fd, 0, 1200 * 4096)
for i in range(0, 1200, 4):
    os.pwrite(fd, os.urandom(4096), i * 4096)
os.fsync(fd)
os.close(fd)
with open(os.path.join(top, "small"), "w") as f:
    f.write("small file\n")
PY
# A reflinked copy: its extents are shared with f2 (refcountbt).
cp --reflink=always "$MNT/f2" "$MNT/f4" || fail "reflink copy"
mkdir -p "$T/orig"
for f in f1 f2 f3 f4 small; do
	cp "$MNT/$f" "$T/orig/$f" || fail "copy $f"
	eval "ino_$f=$(stat -c %i "$MNT/$f")"
done
loop_umount || finish
xfs_repair -n "$base" >"$T/xr0" 2>&1 || { fail "not clean before the damage: $(tail -5 "$T/xr0")"; finish; }
dig_holes "$base"	# each case copies it three times
bs=$(db_get "$base" "sb 0" blocksize)
dblocks=$(db_get "$base" "sb 0" dblocks)
for f in f1 f2 f3 f4; do
	eval "ino=\$ino_$f"
	[ "$(db_get "$base" "inode $ino" core.format)" = "3 (btree)" ] ||
		{ fail "$f is not in btree format"; finish; }
	[ "$(db_get "$base" "inode $ino" u3.bmbt.level)" = 1 ] ||
		{ fail "$f's bmbt root is not at level 1"; finish; }
	xfs_db -r -c "inode $ino" -c "bmap" "$base" >"$T/orig/$f.bmap"
done

# leaf IMG INO I: the fsblock of the I-th leaf under the inode's root.
leaf() {
	xfs_db -r -c "inode $2" -c "print u3.bmbt.ptrs[$3]" "$1" | sed -n 's/^u3.bmbt.ptrs\[[0-9]*\] = //p'
}
daddr_of() {
	xfs_db -r -c "convert fsblock $2 daddr" "$1" | sed -n 's/.*(\([0-9]*\)).*/\1/p'
}
# zero_block IMG FSB
zero_block() {
	local d
	d=$(daddr_of "$1" "$2")
	[ -n "$d" ] && dd if=/dev/zero of="$1" bs=512 seek="$d" count=$((bs / 512)) conv=notrunc status=none
}
# bad_root IMG INO: a root pointer that leads nowhere it should.
bad_root() {
	xfs_db -x -c "inode $2" -c "write u3.bmbt.ptrs[2] 123456" "$1" >/dev/null
}

# run_case NAME DAMAGE-FN: damage a copy, repair, compare; sets $name,
# $D and, per tool and file, "size-ok same zero other".
run_case() {
	local damage=$2 who st f
	name=$1 D=$T/$1
	mkdir -p "$D"
	cp --sparse=always "$base" "$D/damaged.img" || return 1
	$damage "$D/damaged.img" || { fail "[$name] damage"; return 1; }

	before=$(image_state "$D/damaged.img")
	"$REPAIR" -n "$D/damaged.img" >"$D/n.out" 2>&1
	st=$?
	[ $st = 1 ] || fail "[$name] -n on the damaged image: exit $st"
	[ "$(image_state "$D/damaged.img")" = "$before" ] || fail "[$name] -n wrote to the image"

	repair_three "$name" "$D" || return 1
	python3 - "$D/ours.json" >"$D/actions" <<'PY'
import json, sys
for a in json.load(open(sys.argv[1]))["actions"]:
    if a["action"] in ("fork_rebuilt", "inode_cleared"):
        print(a["action"], a.get("ino"), a["message"])
PY

	printf '[%s] %-16s %-6s %5s %6s %6s %6s  (4 KiB blocks: same as before, zero, other)\n' \
		"$name" tool file size same zero other
	for who in xr61 xr72 ours; do
		[ "$who" = xr72 ] && ! have_xfs72 && continue
		# (ours was found clean above)
		if [ "$who" != ours ] && ! xfs_repair -n "$D/$who.img" >"$D/$who.n" 2>&1; then
			echo "note: [$name] $who: not clean after its repair, not mounted: $(grep -v '^Phase\|^  *-' "$D/$who.n" | tail -2)"
			continue
		fi
		loop_mount "$D/$who.img" || return 1
		for f in f1 f2 f3 f4 small; do
			read -r sz same zero other < <(compare_blocks "$T/orig/$f" "$MNT/$f")
			eval "${who}_${f}=\"$sz $same $zero $other\""
			printf '[%s] %-16s %-6s %5s %6s %6s %6s\n' "$name" "$who" "$f" "$sz" "${same:--}" "${zero:--}" "${other:--}"
		done
		loop_umount || return 1
	done
	for f in f1 f2 f3 f4 small; do
		eval "set -- \$ours_$f"
		[ "$1" = missing ] && { fail "[$name] ours lost $f"; continue; }
		[ "$1" = yes ] || fail "[$name] ours changed the size of $f"
		[ "$4" = 0 ] || fail "[$name] $f has $4 blocks that are neither its own nor zero"
		ours_same=$2
		for who in xr61 xr72; do
			eval "set -- \$${who}_$f"
			[ -n "$1" ] && [ "$1" != missing ] && [ "$2" -gt "$ours_same" ] &&
				fail "[$name] $who keeps $2 blocks of $f, ours $ours_same"
		done
	done
	return 0
}

# whole TARGET...: each target equal to the original, and its block map.
whole() {
	local f ino
	for f in "$@"; do
		eval "set -- \$ours_$f; ino=\$ino_$f"
		[ "$1" = missing ] && continue	# run_case said so
		[ "$3" = 0 ] && [ "$4" = 0 ] || fail "[$name] $f is not whole: $* (size-ok same zero other)"
		xfs_db -r -c "inode $ino" -c "bmap" "$D/ours.img" >"$D/$f.bmap"
		cmp -s "$D/$f.bmap" "$T/orig/$f.bmap" || fail "[$name] $f's block map differs: $(diff "$T/orig/$f.bmap" "$D/$f.bmap" | head -4)"
		grep -q "^fork_rebuilt $ino .*from [0-9]* bmbt leaves found by the device scan" "$D/actions" ||
			fail "[$name] no fork_rebuilt action for $f: $(cat "$D/actions")"
		grep -q "would rebuild the block map of file $ino (/$f) from" "$D/n.out" ||
			fail "[$name] -n does not say it would rebuild $f: $(grep -i 'scan\|rebuild' "$D/n.out" | head -3)"
	done
}
# holed TARGET: some blocks lost (zero), the rest its own, said so.
holed() {
	local ino
	eval "set -- \$ours_$1; ino=\$ino_$1"
	[ "$1" = missing ] && return
	[ "$3" -gt 0 ] || fail "[$name] $1 should have a hole where its leaf was lost: $*"
	grep -q "^fork_rebuilt $ino .*a leaf not found: file blocks [0-9]*-[0-9]*" "$D/actions" ||
		fail "[$name] the hole of $1 is not reported: $(cat "$D/actions")"
}
# more TARGET: ours keeps more of it than both xfs_repair versions.
more() {
	local f=$1 who ours_same
	eval "set -- \$ours_$f"
	[ "$1" = missing ] && return
	ours_same=$2
	for who in xr61 xr72; do
		eval "set -- \$${who}_$f"
		[ -z "$1" ] && continue
		[ "$1" = missing ] || [ "$2" -lt "$ours_same" ] || fail "[$name] ours keeps no more of $f than $who ($ours_same)"
	done
}

dmg_root() {
	bad_root "$1" "$ino_f1" && bad_root "$1" "$ino_f4" &&
		xfs_db -x -c "inode $ino_f3" -c "write u3.bmbt.level 0" "$1" >/dev/null
}
# f2: a leaf zeroed; f1: a leaf copied to a free block, then zeroed.
dmg_lost() {
	local l d to
	l=$(leaf "$1" "$ino_f1" 3)
	d=$(daddr_of "$1" "$l")
	to=$(((dblocks - 1) * bs / 512))
	dd if="$1" of="$1" bs=512 skip="$d" seek="$to" count=$((bs / 512)) conv=notrunc status=none &&
		zero_block "$1" "$l" && bad_root "$1" "$ino_f1" &&
		zero_block "$1" "$(leaf "$1" "$ino_f2" 2)" && bad_root "$1" "$ino_f2"
}
dmg_owner() {
	xfs_db -x -c "fsblock $(leaf "$1" "$ino_f1" 3)" -c "type bmapbtd" -c "write owner $ino_f2" "$1" >/dev/null &&
		bad_root "$1" "$ino_f2"
}
# stale_copy IMG FSB TO LSN: f1's leaf FSB copied to daddr TO (its self
# address made TO), its second record mapping the block before TO, and
# its LSN made LSN (empty: kept).
stale_copy() {
	local d x
	d=$(daddr_of "$1" "$2")
	x=$(xfs_db -r -c "convert daddr $3 fsblock" "$1" | sed -n 's/.*(\([0-9]*\)).*/\1/p')
	[ -n "$d" ] && [ -n "$x" ] || return 1
	dd if="$1" of="$1" bs=512 skip="$d" seek="$3" count=$((bs / 512)) conv=notrunc status=none &&
		xfs_db -x -c "fsblock $x" -c "type bmapbtd" -c "write bno $3" \
			${4:+-c "write lsn $4"} -c "write recs[2].startblock $((x - 1))" "$1" >/dev/null 2>&1
}
dmg_stale() {
	local last=$(($(db_get "$1" "sb 0" agcount) - 1))
	stale_copy "$1" "$(leaf "$1" "$ino_f1" 3)" $(((dblocks - 1) * bs / 512)) 0x100000001 &&
		stale_copy "$1" "$(leaf "$1" "$ino_f1" 2)" $(((dblocks - 3) * bs / 512)) &&
		stale_copy "$1" "$(leaf "$1" "$ino_f1" 4)" $(((dblocks - 5) * bs / 512)) 0x100000000001 &&
		xfs_db -x -c "agf $last" -c "write bnoroot 0" "$1" >/dev/null &&
		bad_root "$1" "$ino_f1"
}
# stale_of IMG FROM TO: FROM's second leaf as a stale leaf of TO at the
# device's last block.
stale_of() {
	local last=$(($(db_get "$1" "sb 0" agcount) - 1)) d to x
	d=$(daddr_of "$1" "$(leaf "$1" "$2" 2)")
	to=$(((dblocks - 1) * bs / 512))
	x=$(xfs_db -r -c "convert daddr $to fsblock" "$1" | sed -n 's/.*(\([0-9]*\)).*/\1/p')
	[ -n "$d" ] && [ -n "$x" ] || return 1
	dd if="$1" of="$1" bs=512 skip="$d" seek="$to" count=$((bs / 512)) conv=notrunc status=none || return 1
	# Each record's file offset moved on by 100000 (bits 73-126).
	python3 - "$1" $((to * 512)) <<'PY' || return 1
import sys
with open(sys.argv[1], "r+b") as f:
    at = int(sys.argv[2])
    f.seek(at)
    b = bytearray(f.read(4096))
    for i in range(int.from_bytes(b[6:8], "big")):
        o = 72 + 16 * i
        r = int.from_bytes(b[o:o + 16], "big") + (100000 << 73)
        b[o:o + 16] = r.to_bytes(16, "big")
    f.seek(at)
    f.write(b)
PY
	xfs_db -x -c "fsblock $x" -c "type bmapbtd" -c "write bno $to" -c "write owner $3" \
		-c "write lsn 0x100000001" "$1" >/dev/null 2>&1 &&
		xfs_db -x -c "agf $last" -c "write bnoroot 0" "$1" >/dev/null &&
		bad_root "$1" "$ino_f1" && bad_root "$1" "$ino_f2"
}
dmg_taken() { stale_of "$1" "$ino_f1" "$ino_f2"; }
dmg_shared() { stale_of "$1" "$ino_f2" "$ino_f1"; }

if run_case root dmg_root; then
	whole f1 f3 f4
	more f1
	more f3
	more f4
	pass "[root] f1, f3 and f4 whole again: $(grep -c '^fork_rebuilt' "$D/actions") maps rebuilt from the scan"
fi
if run_case lost dmg_lost; then
	holed f1
	holed f2
	more f1
	more f2
	pass "[lost] f1 and f2 kept but for their lost leaves (f1's misplaced copy not taken): $(grep '^fork_rebuilt' "$D/actions" | sed 's/.*: its block map, //' | tr '\n' ' ')"
fi
if run_case owner dmg_owner; then
	# f2 whole, from its own leaves only; f1 whole, its leaf taken back.
	whole f2 f1
	grep -q "inode $ino_f1: the bmbt leaf at daddr [0-9]* names inode $ino_f2 as its owner but is linked both ways" "$D/ours.err" ||
		fail "[owner] f1's leaf naming f2 not said to be taken back: $(grep -i 'leaf' "$D/ours.err" | head -3)"
	more f1
	more f2
	pass "[owner] nothing of f1 went to f2; f1's leaf naming f2 taken back by f1"
fi
if run_case stale dmg_stale; then
	whole f1
	grep -q "^fork_rebuilt $ino_f1 .*; 3 stale leaf copies left out (an older LSN, or not linked into the chain)" "$D/actions" ||
		fail "[stale] the stale copies are not reported: $(cat "$D/actions")"
	more f1
	pass "[stale] f1 whole, its three stale leaf copies left out (one by its LSN, two by their links)"
fi
if run_case taken dmg_taken; then
	whole f1 f2
	more f1
	pass "[taken] f1 whole, f2 took nothing of its blocks from a stale leaf naming f2 (older LSN)"
fi
if run_case shared dmg_shared; then
	whole f1 f2
	more f2
	pass "[shared] f1, f2 and f4 whole: a stale leaf naming f1 over f2's reflinked blocks made no third sharer"
fi
finish
