#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The metadata walker (libfs/walk.c) against xfs_db's own counts, on an
# image the kernel populated with every kind of metadata block: a node
# directory of 3,000 entries and a block one, a remote symlink, an
# attribute fork in leaf blocks with remote values, and a file punched
# into 1,024 extents (a btree-format fork).  The blocks visited of each
# type must equal what xfs_db reads: superblock, AGF, AGI and AGFL once
# per AG; the bnobt, cntbt and rmapbt together agf_btreeblks plus their
# three roots, the rmapbt agf_rmap_blocks; the refcountbt
# agf_refcount_blocks; the inobt and finobt agi_iblocks and
# agi_fblocks; the inodes the AGIs call allocated;
# directory, symlink and attribute blocks what xfs_db's bmap maps; bmbt
# blocks di_nblocks less the mapped blocks; the log its size.  And
# xfskit-db's check, a visitor of the same walker, reports the total.
. "$(dirname "$0")/lib.sh"
need_xfsprogs
command -v xfs_io >/dev/null || skip "xfs_io is not installed"
command -v setfattr >/dev/null || skip "setfattr is not installed"
COUNT="$XK_BUILDDIR/tests/tools/xk_walk_count"

IMG="$T/a.img"
mkfs_xfs_image "$IMG" 512m -m inobtcount=1,rmapbt=1,reflink=1 ||
	{ fail "mkfs.xfs failed: $(cat "$T/mkfs.out")"; finish; }
loop_mount "$IMG" || finish
mkdir "$MNT/big" "$MNT/small"
(cd "$MNT/big" && seq -f "a_file_with_a_rather_long_name_%g" 1 3000 |
	xargs touch) || fail "cannot fill the big directory"
(cd "$MNT/small" && seq -f "f%g" 1 40 | xargs touch)
ln -s "$(printf 'x%.0s' $(seq 1 600))" "$MNT/longlink"
touch "$MNT/attrs"
for i in $(seq 1 60); do
	setfattr -n "user.attribute_number_$i" -v "value_$i" "$MNT/attrs"
done
for i in 1 2 3; do
	setfattr -n "user.remote_$i" -v "$(printf 'v%.0s' $(seq 1 2000))" \
		"$MNT/attrs"
done
cmds=(-c "pwrite -q 0 8m" -c fsync)
for ((b = 0; b < 2048; b += 2)); do
	cmds+=(-c "fpunch $((b * 4096)) 4096")
done
xfs_io -f "${cmds[@]}" "$MNT/frag" || fail "cannot fragment a file"
loop_umount || fail "unmount failed"
xfs_repair -n "$IMG" >"$T/repair.out" 2>&1 ||
	fail "xfs_repair -n finds the populated image damaged: $(cat "$T/repair.out")"

"$COUNT" "$IMG" >"$T/walk" 2>"$T/walk.err" ||
	fail "xk_walk_count failed: $(cat "$T/walk.err")"
got() {
	awk -v t="$1" '$1 == t { print $2; f = 1 } END { if (!f) print 0 }' \
		"$T/walk"
}

agcount=$(db_get "$IMG" sb agcount)
bs=$(db_get "$IMG" sb blocksize)
logblocks=$(db_get "$IMG" sb logblocks)
agcmds=()
for ((a = 0; a < agcount; a++)); do
	agcmds+=(-c "agf $a" -c "print btreeblks" -c "print rmapblocks"
		 -c "print refcntblocks" -c "agi $a" -c "print count"
		 -c "print freecount" -c "print ino_blocks"
		 -c "print fino_blocks")
done
xfs_db -r "${agcmds[@]}" "$IMG" >"$T/ag" || fail "xfs_db cannot read the AGs"
sum() { awk -v f="$1" '$1 == f { s += $3 } END { print s + 0 }' "$T/ag"; }
# agf_btreeblks: bnobt, cntbt and rmapbt blocks but their roots.
want_abt=$(($(sum btreeblks) + 3 * agcount))
want_rmap=$(sum rmapblocks)
want_refc=$(sum refcntblocks)
want_inodes=$(($(sum count) - $(sum freecount)))
want_inobt=$(sum ino_blocks)
want_finobt=$(sum fino_blocks)

# Every named inode's mode, formats, block count and mappings.
xfs_db -r -c "blockget -n" -c ncheck "$IMG" >"$T/ncheck" ||
	fail "xfs_db ncheck failed"
icmds=()
for ino in $(awk '{ print $1 }' "$T/ncheck" | sort -u); do
	icmds+=(-c "echo inode $ino" -c "inode $ino"
		-c "print core.mode core.format core.aformat core.nblocks"
		-c "bmap -d" -c "bmap -a")
done
xfs_db -r "${icmds[@]}" "$IMG" >"$T/inodes" || fail "xfs_db bmap failed"
awk '
function flush() {
	if (!ino) return
	if (mode ~ /^04/ && (fmt == 2 || fmt == 3)) dir += d
	if (mode ~ /^012/ && fmt == 2) sym += d
	if (afmt == 2 || afmt == 3) attr += a
	if (fmt == 3) bmbt += nblocks - d - a
}
/^inode / { flush(); ino = $2; d = a = 0 }
/^core.mode = / { mode = $3 }
/^core.format = / { fmt = $3 }
/^core.aformat = / { afmt = $3 }
/^core.nblocks = / { nblocks = $3 }
/^data offset / { d += $8 }
/^attr offset / { a += $8 }
END { flush(); print dir + 0, sym + 0, attr + 0, bmbt + 0 }
' "$T/inodes" >"$T/want"
read -r want_dir want_sym want_attr want_bmbt <"$T/want"

check_count() {
	if [ "$2" != "$3" ]; then
		fail "$1: the walker visited $2 blocks, xfs_db counts $3"
	else
		pass "$1: $2"
	fi
}
for t in sb agf agi agfl; do
	check_count "$t" "$(got $t)" "$agcount"
done
check_count "bnobt+cntbt+rmapbt" \
	"$(($(got bnobt) + $(got cntbt) + $(got rmapbt)))" "$want_abt"
check_count rmapbt "$(got rmapbt)" "$want_rmap"
check_count refcountbt "$(got refcountbt)" "$want_refc"
check_count inobt "$(got inobt)" "$want_inobt"
check_count finobt "$(got finobt)" "$want_finobt"
check_count "inodes met" "$(got inodes)" "$want_inodes"
check_count "inodes read" "$(got inode)" "$want_inodes"
check_count dir3 "$(got dir3)" "$want_dir"
check_count symlink "$(got symlink)" "$want_sym"
check_count attr3 "$(got attr3)" "$want_attr"
check_count bmbt "$(got bmbt)" "$want_bmbt"
check_count "log bytes" "$(got logbytes)" "$((logblocks * bs))"
check_count problems "$(got problems)" 0
# The population must reach every kind, or the test proves little.
for t in dir3 symlink attr3 bmbt; do
	[ "$(got $t)" -gt 0 ] || fail "the image has no $t block to count"
done

# xfskit-db's check walks the same blocks (all but the log).
total=$(awk '$1 != "inodes" && $1 != "logbytes" && $1 != "problems" &&
	     $1 != "log" && $1 != "dqblk" { s += $2 } END { print s }' "$T/walk")
out=$("$DB" -r -c check "$IMG" 2>&1)
[ "$out" = "checked $total metadata blocks and $want_inodes inodes: 0 problems" ] ||
	fail "xfskit-db check says: $out (the walker counts $total blocks and $want_inodes inodes)"
finish
