#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# xfskit-db's frag, fsblock and check against xfs_db on the same image:
# frag with each of xfs_db's selections (-a -d -f -l -q -R -r, -v) prints
# what xfs_db 6.1 and 7.2 print, line for line; fsblock with no argument
# prints the current block as xfs_db does; check takes xfs_db's options
# (-s -v -n -p -t -b bno -i ino): the block and inode traces of -b and -i
# are xfs_db 6.1's lines for the metadata blocks and inodes named, -s
# prints nothing on a clean filesystem (as xfs_db's check), and a bad
# option gets xfs_db's words.
. "$(dirname "$0")/lib.sh"
need_xfsprogs
have_xfs72 || true

IMG=$T/a.img
mkfs_xfs_image "$IMG" 300m || { cat "$T/mkfs.out" >&2; exit 99; }
# Files in several extents (appends interleaved with other writes, each
# synced), a fragmented file with a hole, directories short and in
# blocks, symlinks inline and remote, extended attributes in and out of
# the inode.
loop_mount "$IMG" || finish
mkdir "$MNT/d" "$MNT/big"
for i in 1 2 3 4 5 6; do
	dd if=/dev/urandom of="$MNT/d/f$i" bs=4k count=2 oflag=sync status=none
	dd if=/dev/urandom of="$MNT/g" bs=4k count=1 oflag=sync,append \
		conv=notrunc status=none
done
dd if=/dev/urandom of="$MNT/h" bs=4k count=1 seek=40 oflag=sync status=none
dd if=/dev/urandom of="$MNT/h" bs=4k count=1 seek=3 conv=notrunc oflag=sync status=none
for i in $(seq 1 120); do : >"$MNT/big/entry_with_a_long_name_$i"; done
ln -s short "$MNT/s1"
ln -s "$(printf 'x%.0s' $(seq 1 300))" "$MNT/s2"
setfattr -n user.small -v 1 "$MNT/d/f1" 2>/dev/null
setfattr -n user.big -v "$(printf 'y%.0s' $(seq 1 3000))" "$MNT/d/f2" 2>/dev/null
loop_umount || { fail "umount failed"; finish; }

# same LABEL CMD...: xfskit-db -r -c CMD... prints what xfs_db 6.1 (and
# 7.2) print.
same() {
	local label=$1 args=() c v
	shift
	for c in "$@"; do args+=(-c "$c"); done
	"$DB" -r "${args[@]}" "$IMG" >"$T/ours" 2>&1
	for v in 61 72; do
		if [ $v = 61 ]; then
			xfs_db -r "${args[@]}" "$IMG" >"$T/theirs" 2>&1
		else
			[ "${XK_HAVE72:-0}" = 1 ] || continue
			xfs72 xfs_db -r "${args[@]}" "$IMG" >"$T/theirs" 2>&1
		fi
		if diff "$T/theirs" "$T/ours" >"$T/d"; then
			pass "$label: the $(wc -l <"$T/ours") lines of xfs_db $v"
		else
			fail "$label: differs from xfs_db $v (< theirs, > ours):"$'\n'"$(head -20 "$T/d")"
		fi
	done
}

for o in "" -v -a "-a -v" -d "-d -v" -f "-f -v" -l "-l -v" "-q -v" \
	 "-R -v" "-r -v" "-R -f -v" "-q -f -v" "-d -l -v"; do
	same "frag $o" "frag $o"
done
same "frag -x" "frag -x"
# fsblock: where the location starts; with none yet, xfs_db 7.2's words
# (6.1 calls it block 0).
"$DB" -r -c fsblock "$IMG" >"$T/ours" 2>&1
[ "$(cat "$T/ours")" = "cursor does not point to data device" ] &&
	{ [ "${XK_HAVE72:-0}" = 0 ] ||
	  [ "$(xfs72 xfs_db -r -c fsblock "$IMG" 2>&1)" = "$(cat "$T/ours")" ]; } &&
	pass "fsblock with no location: '$(cat "$T/ours")' as xfs_db 7.2" ||
	fail "fsblock with no location: '$(cat "$T/ours")', xfs_db 7.2: '$(xfs72 xfs_db -r -c fsblock "$IMG" 2>&1)'"
same "fsblock after others" "inode 131" fsblock "agf 1" fsblock \
	"daddr 17" fsblock "fsblock 100" fsblock "agi 3" fsblock

# check -b and -i: xfs_db 6.1 (7.2 has no check) traces the blocks and
# inodes named; ours traces the metadata ones the same way.
agf_bno=$(db_get "$IMG" "agf 0" bnoroot)
agi_root=$(db_get "$IMG" "agi 0" root)
bigino=$(xfs_db -r -c "path /big" -c "print core.mode" -c "inode" "$IMG" 2>/dev/null | sed -n 's/^current inode number is //p')
gino=$(xfs_db -r -c "path /g" -c "inode" "$IMG" 2>/dev/null | sed -n 's/^current inode number is //p')
ino_blk=$(xfs_db -r -c "inode $gino" -c fsblock "$IMG" | sed -n 's/^current fsblock is //p')
[ -n "$agf_bno" ] && [ -n "$agi_root" ] && [ -n "$bigino" ] && [ -n "$gino" ] &&
	[ -n "$ino_blk" ] || { echo "cannot read the image's layout with xfs_db" >&2; exit 99; }
bigblk=$(xfs_db -r -c "inode $bigino" -c "bmap" "$IMG" | sed -n '1s/.*startblock \([0-9]*\) .*/\1/p')
blocks="0 $agf_bno $agi_root $ino_blk $bigblk"
args=()
for b in $blocks; do args+=(-b "$b"); done
xfs_db -r -c "check ${args[*]} -i $gino -i $bigino" "$IMG" >"$T/c61" 2>&1
"$DB" -r -c "check ${args[*]} -i $gino -i $bigino" "$IMG" >"$T/cours" 2>&1
rc=$?
[ $rc -eq 0 ] || fail "check -b -i on a clean image: exit $rc: $(tail -3 "$T/cours")"
for b in $blocks; do
	ag=$(( b >> $(db_get "$IMG" "sb 0" agblklog) ))
	agb=$(( b & ((1 << $(db_get "$IMG" "sb 0" agblklog)) - 1) ))
	want=$(grep -m1 "^setting block $ag/$agb to " "$T/c61")
	got=$(grep -m1 "^setting block $ag/$agb to " "$T/cours")
	[ -n "$want" ] && [ "$want" = "$got" ] &&
		pass "check -b $b: '$got' as xfs_db 6.1" ||
		fail "check -b $b: '$got', xfs_db 6.1: '$want'"
done
for i in $gino $bigino; do
	grep "^inode $i mode \|^inode $i extent " "$T/c61" >"$T/i61"
	grep "^inode $i mode \|^inode $i extent " "$T/cours" >"$T/iours"
	[ -s "$T/i61" ] && diff "$T/i61" "$T/iours" >"$T/d" &&
		pass "check -i $i: the $(wc -l <"$T/iours") inode and extent lines of xfs_db 6.1" ||
		fail "check -i $i: differs from xfs_db 6.1 (< theirs, > ours):"$'\n'"$(head "$T/d")"
done
# -s on a clean filesystem: nothing, as xfs_db's check; -t and -n
# accepted; -v traces every metadata block and inode.
"$DB" -r -c "check -s -t -n" "$IMG" >"$T/s" 2>&1
rc=$?
xfs_db -r -c "check -s -t -n" "$IMG" >"$T/s61" 2>&1
[ $rc -eq 0 ] && [ ! -s "$T/s" ] && [ ! -s "$T/s61" ] &&
	pass "check -s -t -n: clean, nothing printed (as xfs_db 6.1)" ||
	fail "check -s -t -n: exit $rc, printed '$(head -3 "$T/s")' (xfs_db 6.1: '$(head -3 "$T/s61")')"
"$DB" -r -c "check -v" "$IMG" >"$T/v" 2>&1
grep -q "^setting block 0/$agf_bno to btbno$" "$T/v" &&
	grep -q "^inode $gino mode 0100644 fmt extents " "$T/v" &&
	pass "check -v: traces the bnobt root and inode $gino" ||
	fail "check -v: no trace of the bnobt root or inode $gino: $(head -5 "$T/v")"
# A damaged inode: -n names its path after the problem, -p the image.
cp --sparse=always "$IMG" "$T/b.img"
xfs_db -x -c "inode $gino" -c "write -d core.nlinkv2 0" -c "write -c core.gen 7" "$T/b.img" >/dev/null 2>&1
"$DB" -r -c "check -n -p" "$T/b.img" >"$T/n" 2>&1
rc=$?
[ $rc -eq 1 ] && grep -q "^$T/b.img: .*inode $gino" "$T/n" &&
	grep -q "^ *$gino /g$\|^ *$gino g$" "$T/n" &&
	pass "check -n -p: the problem prefixed with the image, inode $gino named /g" ||
	fail "check -n -p: exit $rc: $(cat "$T/n")"
# Bad options: refused with xfs_db's words.
"$DB" -r -c "check -x" "$IMG" >"$T/x" 2>&1
rc=$?
[ $rc -eq 1 ] && grep -q "bad option for check command" "$T/x" &&
	pass "check -x: refused" || fail "check -x: exit $rc: $(cat "$T/x")"
finish
