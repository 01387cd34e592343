#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The realtime groups' rmap and refcount btrees (mkfs.xfs 7.2 -m
# metadir=1 -r rtdev=: rmapbt and reflink on), given with -r, against
# xfs_repair 7.2 -n:
#  1. a filesystem with realtime files, 900 of them, 700 sharing an
#     extent in pairs (made as rt_lib.sh makes its files: mkfs.xfs -p on
#     the data device, xfs_db sets the realtime and reflink flags and
#     points each pair's second file at the first one's block, xfs_repair
#     7.2 -r settles and builds both trees: the rmap btree a root in
#     its inode, a node and 7 leaves, the refcount btree a root and 2
#     leaves): xfs_repair 7.2 -n and xfskit-repair -n find it
#     clean (exit 0), and xfskit-repair -r finds nothing to write;
#  2. damage made with xfs_db 7.2 -x to the rmap leaf (a record dropped,
#     an owner changed, record order, the magic, the owner, the CRC) and
#     the refcount leaf (a count changed, a record dropped, record
#     order): xfs_repair 7.2 -n and xfskit-repair -n both find it (exit
#     1), ours with xfs_repair's words where it has them; repair
#     rewrites the trees in place where their records are wrong (then
#     xfs_repair 7.2 -n and -n are clean) and refuses the rest (a block
#     or inode that is not sound), writing nothing; also a
#     zero record in a leaf root in the inode (group 1), the rmap inode's
#     metafile type and block count, a sharing file without the reflink
#     flag, an extent made unwritten;
#  3. XK_TEST_LONG: a fuzz sweep of both trees' fields (below).
. "$XK_SRCDIR/tests/scripts/lib.sh"
. "$XK_SRCDIR/tests/scripts/rt_lib.sh"
need_xfs72
d=$T/d.img
r=$T/r.img

# 1. The image: 200 files of 3 blocks and 350 pairs of 1-block files.
rt_groups_image "$d" "$r" || { fail "$(cat "$T/rt_why")"; finish; }
ino_of() {
	awk -v n="$1" '$2 == n {print $1}' "$T/names"
}
xfs72 xfs_repair -r "$r" "$d" >"$T/settle.out" 2>&1 ||
	fail "settling with xfs_repair 7.2 -r: $(tail -3 "$T/settle.out")"
meta() {
	xfs72 xfs_db -c "ls -m /rtgroups" "$d" | awk -v n="$1" '$6 == n {print $2}'
}
rm0=$(meta 0.rmap)
rc0=$(meta 0.refcount)
rm1=$(meta 1.rmap)
s0=$(ino_of s0)
[ "$(xfs72 xfs_db -c "inode $rm0" -c "print u3.rtrmapbt.level" "$d")" = \
  "u3.rtrmapbt.level = 2" ] || fail "group 0's rmap btree is not a root, a node and leaves"
[ "$(xfs72 xfs_db -c "inode $rc0" -c "print u3.rtrefcbt.numrecs" "$d")" = \
  "u3.rtrefcbt.numrecs = 2" ] || fail "group 0's refcount btree is not a root and two leaves"
xfs72 xfs_repair -n -r "$r" "$d" >"$T/o.out" 2>&1 ||
	fail "xfs_repair 7.2 -n -r is not clean: $(tail -3 "$T/o.out")"
"$REPAIR" -n -r "$r" "$d" >"$T/n.out" 2>&1
rc=$?
if [ $rc -eq 0 ] && ! grep -q "problem" "$T/n.out"; then
	pass "900 realtime files, 350 shared extents: xfskit-repair -n -r clean, as xfs_repair 7.2"
else
	fail "clean image: xfskit-repair -n -r exit $rc: $(repair_own "$T/n.out" | head -6)"
fi
cp "$d" "$T/good.img"
cp "$r" "$T/goodrt.img"
rt_untouched "clean image" "$d" "$r" 0

# rewritten NAME: xfskit-repair -r exits 0, then xfs_repair 7.2 -n and
# xfskit-repair -n find the filesystem clean.
rewritten() {
	local rc orc nrc
	"$REPAIR" -r "$r" "$d" >"$T/r.out" 2>&1
	rc=$?
	xfs72 xfs_repair -n -r "$r" "$d" >"$T/o.out" 2>&1
	orc=$?
	"$REPAIR" -n -r "$r" "$d" >"$T/n.out" 2>&1
	nrc=$?
	if [ $rc -eq 0 ] && [ $orc -eq 0 ] && [ $nrc -eq 0 ]; then
		pass "$1: xfskit-repair -r rewrote the tree: xfs_repair 7.2 -n and -n clean after"
	else
		fail "$1: xfskit-repair -r exit $rc ($(repair_own "$T/r.out" | tail -2)); after: xfs_repair 7.2 -n exit $orc ($(grep -v '^ \|^Phase' "$T/o.out" | head -2)), -n exit $nrc"
	fi
}

# 2. Damage: NAME|XFS_DB COMMANDS|what our output must hold|fix or
# refuse (what xfskit-repair -r must do).
rmleaf="-c \"inode $rm0\" -c \"addr u3.rtrmapbt.ptrs[1]\" -c \"addr ptrs[1]\""
rcleaf="-c \"inode $rc0\" -c \"addr u3.rtrefcbt.ptrs[1]\""
n=0
while IFS='|' read -r name cmds want fix; do
	n=$((n + 1))
	leak_check_sampled $n
	cp "$T/good.img" "$d"
	cp "$T/goodrt.img" "$r"
	eval "set -- $cmds"
	rt_damaged "$name" "$d" "$r" "$want" "$@"
	if [ "$fix" = fix ]; then
		rewritten "$name"
	else
		rt_refuses "$name" "$d" "$r"
	fi
done <<EOF
rmap record dropped|$rmleaf -c "write numrecs 100"|Missing reverse-mapping record for (0/|fix
rmap owner changed|$rmleaf -c "write recs[5].owner 140"|Missing reverse-mapping record for (0/|fix
rmap record order|$rmleaf -c "write recs[3].startblock 200"|record order: record 3 is not after record 2|refuse
rmap block magic|$rmleaf -c "write -d magic 0"|rtrmapbt block at daddr|refuse
rmap block owner|$rmleaf -c "write -d owner 5"|owner: expected $rm0|refuse
rmap block crc|$rmleaf -c "write -c recs[3].blockcount 2"|crc: expected|fix
refcount changed|$rcleaf -c "write recs[1].refcount 3"|Incorrect reference count: saw (0/|fix
refcount record dropped|$rcleaf -c "write numrecs 100"|Incorrect reference count: saw (0/|fix
refcount record order|$rcleaf -c "write recs[2].startblock 100"|rtrefcountbt block at daddr|refuse
group 1 in-inode leaf root, a zero record|-c "inode $rm1" -c "write u3.rtrmapbt.numrecs 1"|has zero length in in-inode root record 0|refuse
rmap inode metafile type|-c "inode $rm0" -c "write core.metatype 8"|rtgroup 0 rmap inode $rm0 has metafile type 8|refuse
rmap inode nblocks|-c "inode $rm0" -c "write core.nblocks 3"|inode says 3 blocks, its forks map 8|refuse
a sharing file's reflink flag cleared|-c "inode $s0" -c "write v3.reflink 0"|setting reflink flag on inode $s0|refuse
an extent made unwritten|-c "inode $s0" -c "write u3.bmx[0].extentflag 1"|Missing reverse-mapping record for (0/|fix
EOF

# 3. XK_TEST_LONG=1: every field of group 0's rmap and refcount leaves and
# roots fuzzed 8 ways by xfs_db 7.2: what xfs_repair 7.2 -n finds, -n
# finds too (exit 1), and -n never fails otherwise (exit 0 or 1; where
# xfs_repair is clean and we are not, the log says so); xfskit-repair -r
# writes nothing, or leaves what xfs_repair 7.2 -n finds clean.
if long_tests; then
	cases=0 stricter=0 missed=0 written=0
	while read -r ino addr fields; do
		for f in $fields; do
			for how in zeroes ones firstbit middlebit lastbit add sub random; do
				cp "$T/good.img" "$d"
				cp "$T/goodrt.img" "$r"
				set -- -c "inode $ino"
				[ "$addr" = - ] || set -- "$@" -c "addr ${addr%%/*}"
				case $addr in */*) set -- "$@" -c "addr ${addr#*/}" ;; esac
				xfs72 xfs_db -x "$@" -c "fuzz -d $f $how" "$d" >/dev/null 2>&1
				xfs72 xfs_repair -n -r "$r" "$d" >"$T/o.out" 2>&1
				orc=$?
				"$REPAIR" -n -r "$r" "$d" >"$T/n.out" 2>&1
				rc=$?
				cases=$((cases + 1))
				if [ $rc -gt 1 ] || { [ $orc -eq 1 ] && [ $rc -ne 1 ]; }; then
					missed=$((missed + 1))
					fail "fuzz $f $how (inode $ino): xfs_repair 7.2 -n exit $orc, ours $rc: $(repair_own "$T/n.out" | head -3)"
				elif [ $orc -eq 0 ] && [ $rc -eq 1 ]; then
					stricter=$((stricter + 1))
					echo "stricter: fuzz $f $how (inode $ino): $(repair_own "$T/n.out" | head -1)"
				fi
				# Repair writes nothing, or leaves it clean.
				before=$(image_state "$d" "$r")
				"$REPAIR" -r "$r" "$d" >"$T/r.out" 2>&1
				rc=$?
				[ "$(image_state "$d" "$r")" = "$before" ] && continue
				written=$((written + 1))
				xfs72 xfs_repair -n -r "$r" "$d" >"$T/o.out" 2>&1
				orc=$?
				if [ $rc -ne 0 ] || [ $orc -ne 0 ]; then
					fail "fuzz $f $how (inode $ino): xfskit-repair -r exit $rc wrote, xfs_repair 7.2 -n after: exit $orc ($(grep -v '^ \|^Phase' "$T/o.out" | head -2))"
				fi
			done
		done
	done <<LIST
$rm0 u3.rtrmapbt.ptrs[1]/ptrs[1] magic level numrecs leftsib rightsib bno lsn uuid owner crc recs[1].startblock recs[1].blockcount recs[1].owner recs[1].offset recs[50].startblock recs[50].blockcount recs[50].owner recs[50].offset recs[50].extentflag recs[50].attrfork recs[50].bmbtblock
$rc0 u3.rtrefcbt.ptrs[1] magic level numrecs leftsib rightsib bno lsn uuid owner crc recs[1].startblock recs[1].blockcount recs[1].refcount recs[1].cowflag recs[20].startblock recs[20].blockcount recs[20].refcount
$rm0 - u3.rtrmapbt.level u3.rtrmapbt.numrecs u3.rtrmapbt.keys[1].startblock u3.rtrmapbt.keys[1].owner u3.rtrmapbt.keys[1].startblock_hi u3.rtrmapbt.keys[1].owner_hi u3.rtrmapbt.ptrs[1] core.format core.metatype core.nblocks core.mode
$rc0 - u3.rtrefcbt.level u3.rtrefcbt.numrecs u3.rtrefcbt.keys[1].startblock u3.rtrefcbt.ptrs[1] core.format core.metatype core.nblocks
LIST
	[ $missed -eq 0 ] &&
		pass "fuzz sweep: $cases cases, every finding of xfs_repair 7.2 -n found too ($stricter where only we find one); $written rewritten, each clean for xfs_repair 7.2 -n after"
fi
finish
