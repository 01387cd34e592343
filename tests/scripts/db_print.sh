#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# xfskit-db print against xfs_db print, block by block.
#
# A filesystem made by mkfs.xfs (with rmapbt and reflink) is populated
# through a kernel loop mount with every format populate.sh knows: short-
# form, block, leaf and node directories; extent-list, btree, sparse and
# reflinked files; local and remote symlinks; device nodes; short-form,
# leaf, node and remote xattrs.  Then for every structure type db can
# show -- superblocks, AG headers, the root and a child block of every
# btree, inodes of every fork format, directory data/block/leaf/node/free
# blocks, attribute leaf/node/remote blocks, remote symlink blocks and
# bmbt blocks -- the whole output of "print" (and of some "print FIELD"
# forms) must equal xfs_db's, line for line.
#
# The oracle is xfs_db 7.2, the newest: where 6.1 prints less (no
# v3.metadata, no attr "parent" flag or decoded parent pointers, rmap
# keys without the unwritten flag, raw data one sector long, freesp
# without its cumulative columns), xfskit-db prints as 7.2 does.  A
# second image, made by mkfs.xfs 7.2 with its defaults (parent pointers,
# nrext64), has its parent pointers compared too.
#
# A third image has realtime groups (mkfs.xfs 7.2 -m metadir=1 with a
# realtime device): the realtime rmap and refcount btrees, their roots
# in their inodes and their blocks.
#
# Documented differences: none in print output.  freesp -h follows the
# man page (buckets from the given lower ends), as 6.1 does; 7.2 puts
# everything in one bucket there, so -h is compared with 6.1's first
# five columns.  Error messages and verifier verdicts (stderr for both
# tools) differ and are not compared; dquot blocks are made by xfskit-db
# (the kernels this runs on may lack quota support).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/populate.sh"
need_xfsprogs
need_xfs72

IMG="$T/p.img"
mkfs_xfs_image "$IMG" 320m -m rmapbt=1,reflink=1 || fail "mkfs.xfs failed"
loop_mount "$IMG" || finish
populate_all_formats "$MNT" || fail "populating the image failed"
ino() { stat -c %i "$MNT/$1"; }
I_BMBT=$(ino bmbt)
I_EXT=$(ino extents)
I_SPARSE=$(ino sparse)
I_REFL=$(ino reflinked)
I_SMALL=$(ino small)
I_SF=$(ino sf)
I_BLOCK=$(ino block)
I_LEAF=$(ino leaf)
I_NODE=$(ino node)
I_ASF=$(ino attrs/sf)
I_ALEAF=$(ino attrs/leaf)
I_ANODE=$(ino attrs/node)
I_ARMT=$(ino attrs/remote)
I_ABT=$(ino attrs/btree)
I_SSYM=$(ino links/short)
I_LSYM=$(ino links/long)
I_CDEV=$(ino links/cdev)
I_FIFO=$(ino links/fifo)
loop_umount || fail "umount failed"
# The btree-attr checks below need populate to have made one.
aformat=$(xfs_db -r -c "inode $I_ABT" -c 'print core.aformat' "$IMG")
if [ "$aformat" != "core.aformat = 3 (btree)" ]; then
	fail "populate left attrs/btree's attr fork as: $aformat"
	finish
fi

# Leaf and free index regions of a directory, in directory blocks.
LEAF=$((32 * 1024 * 1024 * 1024 / 4096))
FREE=$((LEAF * 2))

compared=0
lines=0
# compare "cmd1|cmd2|..." : both tools run the same commands.
compare() {
	local args=() a out1 out2
	IFS='|' read -ra cmds <<<"$1"
	for a in "${cmds[@]}"; do
		args+=(-c "$a")
	done
	out1=$(xfs72 xfs_db -r "${args[@]}" "$IMG" 2>/dev/null)
	leak_check_sampled "$compared"
	out2=$("$DB" -r "${args[@]}" "$IMG" 2>"$T/db.err")
	rc=$?
	if [ $rc -ge 2 ]; then
		fail "$1: xfskit-db exited $rc: $(head -3 "$T/db.err")"
		return
	fi
	if [ -z "$out1" ]; then
		fail "$1: xfs_db printed nothing (bad test location)"
		return
	fi
	if [ "$out1" != "$out2" ]; then
		fail "$1: output differs from xfs_db"
		diff <(echo "$out1") <(echo "$out2") | head -10 >&2
		return
	fi
	compared=$((compared + 1))
	lines=$((lines + $(echo "$out1" | wc -l)))
}

for ag in 0 1 2 3; do
	compare "sb $ag|print"
	compare "agf $ag|print"
	compare "agi $ag|print"
	compare "agfl $ag|print"
	for root in bnoroot cntroot rmaproot refcntroot; do
		compare "agf $ag|addr $root|print"
	done
	compare "agi $ag|addr root|print"
	compare "agi $ag|addr free_root|print"
done
# One level down wherever a tree has a node root (AG 0 holds most).
for root in bnoroot cntroot rmaproot refcntroot; do
	for p in 1 2; do
		lvl=$(xfs_db -r -c "agf 0" -c "addr $root" -c "print level" \
			"$IMG" 2>/dev/null | sed -n 's/^level = //p')
		[ "${lvl:-0}" -gt 0 ] || continue
		compare "agf 0|addr $root|addr ptrs[$p]|print"
	done
done

for i in 128 $I_BMBT $I_EXT $I_SPARSE $I_REFL $I_SMALL $I_SF $I_BLOCK \
	 $I_LEAF $I_NODE $I_ASF $I_ALEAF $I_ANODE $I_ARMT $I_SSYM $I_LSYM \
	 $I_CDEV $I_FIFO; do
	compare "inode $i|print"
done

# bmbt blocks below the in-inode root.
compare "inode $I_BMBT|addr u3.bmbt.ptrs[1]|print"
compare "inode $I_BMBT|addr u3.bmbt.ptrs[2]|print"
# A directory whose data fork is a btree: its bmapbtd block.
[ "$(db_get "$IMG" "inode $I_NODE" core.format)" = "3 (btree)" ] ||
	fail "the node directory is not in btree format"
compare "inode $I_NODE|addr u3.bmbt.ptrs[1]|print"
# An attr fork in btree format: the inode and its bmapbta block.
compare "inode $I_ABT|print"
compare "inode $I_ABT|addr a.bmbt.ptrs[1]|print"
# Paths that do not resolve: the same message, naming the same part.
for p in core.bogus bogus.x a.bmbt.ptrs[1] core.mode[1] core.mode.x \
	 u3.sfdir3.list[99] u3.sfdir3.hdr.count[0] u3.sfdir3.hdr.bogus \
	 'core.mode[x]' core. .core core..mode 'u3.sfdir3.list[0' \
	 'u3.sfdir3.list[0]x' 'u3.sfdir3.list[1-9]' u3.sfdir3.list.name; do
	compare "inode $I_SF|print $p"
done
compare "inode $I_SF|addr core.bogus"
compare "inode $I_ABT|ablock 0|print"
# Directory blocks of every kind.
compare "inode $I_BLOCK|dblock 0|print"
compare "inode $I_LEAF|dblock 0|print"
compare "inode $I_LEAF|dblock 1|print"
compare "inode $I_LEAF|dblock $LEAF|print"
compare "inode $I_NODE|dblock 0|print"
compare "inode $I_NODE|dblock 3|print"
compare "inode $I_NODE|dblock $LEAF|print"
compare "inode $I_NODE|dblock $((LEAF + 1))|print"
compare "inode $I_NODE|dblock $FREE|print"
# Attribute blocks: leaf, node and its leaves, remote value.
compare "inode $I_ALEAF|ablock 0|print"
compare "inode $I_ANODE|ablock 0|print"
compare "inode $I_ANODE|ablock 1|print"
compare "inode $I_ARMT|ablock 0|print"
compare "inode $I_ARMT|ablock 1|print"
# Following dabtree pointers into the owner's fork.
compare "inode $I_ANODE|ablock 0|addr btree[0].before|print"
compare "inode $I_NODE|dblock $LEAF|addr nbtree[1].before|print"
# Remote symlink.
compare "inode $I_LSYM|dblock 0|print"
# Single fields, nested fields, elements and ranges.
compare "sb|print magicnum uuid features_incompat crc"
compare "inode $I_BMBT|print core.mode core.format v3.crc u3.bmbt.keys[1-2]"
compare "inode $I_SPARSE|print u3.bmx[1] u3.bmx[0-1]"
compare "inode $I_SF|print u3.sfdir3.list[0].name u3.sfdir3.hdr.parent.i4"
compare "inode $I_ASF|print a.sfattr.list[1].value core.forkoff"
compare "agfl 0|print bno[1-3]"
compare "agi 1|addr root|print recs[1] recs[1].startino"
compare "agi 0|print unlinked"
# Raw blocks as hex.
compare "fsblock 5|print"
compare "daddr 3|print"
compare "agf 2|addr bnoroot|type data|print"
# Reaching the same place by other roads.
compare "inode $I_ALEAF|ablock 0|push|sb 1|pop|print"
compare "agf 1|addr cntroot|type bnobt|print"
# bmap and freesp agree too.
compare "inode $I_BMBT|bmap"
compare "inode $I_NODE|bmap"
for o in "" "-s" "-e 1000 -s" "-m 3" "-a 1 -a 3 -d" "-c -d -s" "-A 4 -s" \
	 "-b -e 5" "-x" "extra"; do
	compare "freesp $o"
done
# freesp -h: the buckets 6.1 makes (7.2 makes one), its five columns.
h61=$(xfs_db -r -c "freesp -h 1 -h 5 -h 3000 -s" "$IMG" 2>&1)
hus=$("$DB" -r -c "freesp -h 5 -h 3000 -s" "$IMG" 2>&1 |
      sed -E 's/^(( +[^ ]+){4}) +([^ ]+)( +[^ ]+){2}$/\1 \3/')
if [ "$(echo "$h61" | tr -s ' ')" = "$(echo "$hus" | tr -s ' ')" ]; then
	pass "freesp -h: the buckets of xfs_db 6.1 and the man page"
else
	fail "freesp -h differs from xfs_db 6.1: $(diff <(echo "$h61") <(echo "$hus") | head -6)"
fi

# A quota record, written field by field, shown by both.
agblklog=$(db_get "$IMG" sb agblklog)
agblocks=$(db_get "$IMG" sb agblocks)
uuid=$(db_get "$IMG" sb uuid)
DQ=$(((3 << agblklog) + agblocks - 1))
"$DB" -x -c "fsblock $DQ" -c "type dqblk" -c "write -d diskdq.magic 0x4451" \
	-c "write -d diskdq.version 1" -c "write -d diskdq.type 1" \
	-c "write -d diskdq.id 1000" -c "write -d diskdq.bcount 12" \
	-c "write -d diskdq.itimer 5" -c "write -d uuid $uuid" "$IMG" \
	>/dev/null 2>&1 || fail "building a dquot record failed"
compare "fsblock $DQ|type dqblk|print"

# Edits inside packed and variable structures land on the same bytes as
# xfs_db's (the images are compared whole).
edits=0
edit_same() {
	local args=() a
	IFS='|' read -ra cmds <<<"$1"
	for a in "${cmds[@]}"; do
		args+=(-c "$a")
	done
	cp --sparse=always "$IMG" "$T/e1.img" && cp --sparse=always "$IMG" "$T/e2.img"
	xfs_db -x "${args[@]}" "$T/e1.img" >/dev/null 2>&1
	"$DB" -x "${args[@]}" "$T/e2.img" >"$T/edit.out" 2>&1 ||
		fail "$1: xfskit-db failed: $(head -2 "$T/edit.out")"
	same_image "$IMG" "$T/e2.img" && fail "$1: nothing changed"
	same_image "$T/e1.img" "$T/e2.img" || fail "$1: differs from xfs_db's edit"
	edits=$((edits + 1))
}
edit_same "inode $I_BLOCK|dblock 0|fuzz -d bu[3].namelen add"
edit_same "inode $I_NODE|dblock 2|fuzz -d du[2].name ones"
edit_same "inode $I_LEAF|dblock $LEAF|fuzz -c lents[4].hashval firstbit"
edit_same "inode $I_NODE|dblock $FREE|fuzz -d fbests[1] zeroes"
edit_same "inode $I_ALEAF|ablock 0|fuzz -d entries[2].nameidx lastbit"
edit_same "inode $I_ALEAF|ablock 0|fuzz -d nvlist[1].value zeroes"
edit_same "inode $I_ARMT|ablock 1|fuzz -d hdr.bytes sub"
edit_same "inode $I_LSYM|dblock 0|fuzz -c data middlebit"
edit_same "inode $I_BMBT|addr u3.bmbt.ptrs[1]|fuzz -d recs[3].startblock add"
edit_same "inode $I_SPARSE|fuzz -d u3.bmx[1].blockcount ones"
edit_same "inode $I_ASF|fuzz -d a.sfattr.list[2].secure firstbit"
edit_same "inode $I_SF|fuzz -d u3.sfdir3.list[1].name zeroes"
echo "$edits edits in variable structures matched xfs_db"

# mkfs.xfs 7.2's defaults: parent pointers (short-form and leaf attr
# forks full of them), nrext64 (the 64-bit extent count's place).
IMG="$T/72.img"
truncate -s 320m "$IMG"
xfs72 mkfs.xfs -q -f "$IMG" >"$T/mkfs72.out" 2>&1 || { fail "mkfs.xfs 7.2: $(head -2 "$T/mkfs72.out")"; finish; }
loop_mount "$IMG" || finish
mkdir "$MNT/d"
echo data >"$MNT/d/f"
setfattr -n user.note -v hello "$MNT/d/f"
for i in $(seq 1 30); do ln "$MNT/d/f" "$MNT/d/link_with_a_long_name_$i"; done
echo one >"$MNT/one"
I_MANY=$(ino d/f) I_ONE=$(ino one) I_D=$(ino d)
loop_umount || fail "umount failed"
for i in 128 "$I_D" "$I_ONE" "$I_MANY"; do
	compare "inode $i|print"
done
compare "inode $I_MANY|ablock 0|print"
compare "inode $I_ONE|print a.sfattr.list[0].parent_dir a.sfattr.list[0].parent"
compare "inode $I_MANY|ablock 0|print nvlist[1].parent_dir.inumber"
compare "inode $I_MANY|ablock 0|print entries[1].parent nvlist[1].name"

# A realtime-groups filesystem (mkfs.xfs 7.2 -m metadir=1): group 0's
# rmap btree (a root in its inode, a node, leaves) and refcount btree (a
# root and leaves); group 1's roots are leaves in their inodes (two
# files moved there, sharing one extent: two rmap records, one refcount).
# The inode roots, blocks reached from them, the types by name.
. "$(dirname "$0")/rt_lib.sh"
IMG="$T/rtg.img"
RTG="$T/rtg.rt"
db72() {
	xfs72 xfs_db -r "$@" "$IMG" 2>/dev/null | sed 's/^[^=]* = //'
}
if rt_groups_image "$IMG" "$RTG"; then
	a198=$(awk '$2 == "a198" {print $1}' "$T/names")
	a199=$(awk '$2 == "a199" {print $1}' "$T/names")
	g1=$(( (1 << $(db72 -c sb -c "print rgblklog")) + 100 ))
	xfs72 xfs_db -x -c "inode $a198" -c "write u3.bmx[0].startblock $g1" \
		-c "write v3.reflink 1" -c "inode $a199" \
		-c "write u3.bmx[0].startblock $g1" -c "write v3.reflink 1" \
		"$IMG" >/dev/null 2>&1
	xfs72 xfs_repair -r "$RTG" "$IMG" >"$T/settle.out" 2>&1 ||
		fail "settling with xfs_repair 7.2 -r: $(tail -3 "$T/settle.out")"
	meta() {
		xfs72 xfs_db -c "ls -m /rtgroups" "$IMG" |
			awk -v n="$1" '$6 == n {print $2}'
	}
	rm0=$(meta 0.rmap) rc0=$(meta 0.refcount)
	rm1=$(meta 1.rmap) rc1=$(meta 1.refcount)
	[ "$(db72 -c "inode $rm0" -c "print u3.rtrmapbt.level")" = 2 ] &&
	[ "$(db72 -c "inode $rc0" -c "print u3.rtrefcbt.level")" = 1 ] &&
	[ "$(db72 -c "inode $rm1" -c "print u3.rtrmapbt.numrecs")" = 2 ] &&
	[ "$(db72 -c "inode $rc1" -c "print u3.rtrefcbt.numrecs")" = 1 ] ||
		fail "the realtime btrees are not of the shape wanted"
	for i in "$rm0" "$rc0" "$rm1" "$rc1"; do
		compare "inode $i|print"
	done
	node="inode $rm0|addr u3.rtrmapbt.ptrs[1]"
	compare "$node|print"
	compare "$node|addr ptrs[1]|print"
	compare "$node|addr ptrs[2]|addr leftsib|print"
	compare "inode $rc0|addr u3.rtrefcbt.ptrs[1]|print"
	compare "inode $rc0|addr u3.rtrefcbt.ptrs[2]|print"
	compare "inode $rm0|print u3.rtrmapbt.keys[1] u3.rtrmapbt.ptrs[1]"
	compare "inode $rm1|print u3.rtrmapbt.recs[1].owner"
	compare "inode $rc1|print u3.rtrefcbt.recs[1]"
	compare "$node|print keys[2].owner_hi ptrs[3]"
	# The types by name, on blocks reached by address.
	b=$(db72 -c "inode $rm0" -c "print u3.rtrmapbt.ptrs[1]")
	compare "fsblock $b|type rtrmapbt|print"
	b=$(db72 -c "inode $rc0" -c "print u3.rtrefcbt.ptrs[2]")
	compare "fsblock $b|type rtrefcntbt|print recs[3]"
	# The device scan finds group 0's blocks (the node and its leaves,
	# the refcount leaves), each owned by its tree's inode.
	n=$(db72 -c "inode $rm0" -c "addr u3.rtrmapbt.ptrs[1]" -c "print numrecs")
	want="$(db72 -c "inode $rc0" -c "print u3.rtrefcbt.numrecs") rtrefcntbt $rc0
$((n + 1)) rtrmapbt $rm0"
	got=$("$DB" -r -c "scan -t rtrmapbt" -c "scan -t rtrefcntbt" "$IMG" \
		2>/dev/null | awk '$NF == "ok" && $4 == "inode" {print $1, $5}' |
		sort | uniq -c | sed 's/^ *//')
	if [ "$got" = "$want" ]; then
		pass "scan: the realtime btrees' blocks, owners as xfs_db shows"
	else
		fail "scan of the realtime btrees: got [$got], want [$want]"
	fi
else
	fail "$(cat "$T/rt_why")"
fi

echo "compared $compared outputs ($lines lines) with xfs_db"
[ "$compared" -ge 60 ] || fail "only $compared comparisons ran"
finish
