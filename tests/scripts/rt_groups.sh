#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Realtime groups (mkfs.xfs 7.2 -m metadir=1 -r rtdev=), given with -r,
# against xfs_repair 7.2 (6.1 does not know them):
#  1. fresh ones, with the default features (rmapbt, reflink: realtime
#     rmap and refcount btrees) and without them in 3 groups: the
#     superblock is accepted (it was once called a bad primary); -n finds
#     nothing and is clean (exit 0; the btrees are checked, rt_btrees.sh);
#     with the btrees repair finds nothing either, writing nothing;
#  2. with realtime files (rt_lib.sh's f1 and f2, f2's extent moved to
#     group 1 so that its block number is segmented), which xfs_repair
#     7.2 -n -r finds clean: -n finds nothing;
#  3. damage made with xfs_db 7.2 -x to the realtime superblock, group 0
#     and group 1's bitmap (a word, a block header), the summary, the
#     bitmap inode's size and sb_frextents: every one xfs_repair 7.2 -n
#     detects, -n detects with xfs_repair's own words where it has them;
#     repair rewrites the bitmaps, summaries and counter (both images
#     then byte for byte as before the damage, xfs_repair 7.2 -n clean)
#     and refuses the rest, writing nothing;
#  4. xfskit-db -R prints the superblock as xfs_db 7.2 does.
. "$XK_SRCDIR/tests/scripts/lib.sh"
. "$XK_SRCDIR/tests/scripts/rt_lib.sh"
need_xfs72
d=$T/d.img
r=$T/r.img

# ours NAME WANT: xfskit-repair -n -r on $d exits WANT and finds nothing.
ours() {
	"$REPAIR" -n -r "$r" "$d" >"$T/n.out" 2>&1
	local rc=$?
	if [ $rc -ne "$2" ] || grep -q "problem" "$T/n.out"; then
		fail "$1: xfskit-repair -n -r: exit $rc (want $2): $(repair_own "$T/n.out" | head -6)"
	else
		pass "$1: xfskit-repair -n -r: nothing found, exit $rc"
	fi
}

# 1. Fresh filesystems.
for o in "" ",rmapbt=0,reflink=0|,rgcount=3"; do
	IFS='|' read -r m g <<<"$o"
	name="mkfs.xfs 7.2 -m metadir=1$m -r rtdev=$g"
	rm -f "$d" "$r"
	truncate -s 512m "$d"
	truncate -s 256m "$r"
	xfs72 mkfs.xfs -q -f -m metadir=1$m -r rtdev="$r"$g "$d" \
		>"$T/mk.out" 2>&1 || { fail "$name: $(cat "$T/mk.out")"; continue; }
	xfs72 xfs_repair -n -r "$r" "$d" >"$T/o.out" 2>&1 ||
		{ fail "$name: xfs_repair 7.2 -n -r is not clean: $(tail -3 "$T/o.out")"; continue; }
	ours "$name" 0
	if [ -z "$m" ]; then
		rt_untouched "$name" "$d" "$r" 0
	fi
done

# 2. Realtime files in a 3-group volume without the btrees, settled by
# xfs_repair 7.2 -r; f2's extent in group 1 (block 100 of it).
rt_mkfs 7.2 "$d" "$r" -m metadir=1,rmapbt=0,reflink=0 -r rgcount=3 ||
	{ fail "mkfs.xfs 7.2: $(cat "$T/rt_mkfs.out")"; finish; }
f1=$(xfs72 xfs_db -c "ls /" "$d" | awk '$NF == "f1" || $6 == "f1" {print $2}')
f2=$(xfs72 xfs_db -c "ls /" "$d" | awk '$NF == "f2" || $6 == "f2" {print $2}')
lg=$(xfs72 xfs_db -c "sb 0" -c "print rgblklog" "$d" | sed 's/.* = //')
for ino in $f1 $f2; do
	xfs72 xfs_db -x -c "inode $ino" -c "write core.realtime 1" "$d" >/dev/null 2>&1
done
xfs72 xfs_db -x -c "inode $f2" -c "write u3.bmx[0].startblock $(((1 << lg) + 100))" \
	"$d" >/dev/null 2>&1
xfs72 xfs_repair -r "$r" "$d" >"$T/settle.out" 2>&1 ||
	fail "settling with xfs_repair 7.2 -r: $(tail -3 "$T/settle.out")"
xfs72 xfs_repair -n -r "$r" "$d" >"$T/o.out" 2>&1 ||
	fail "realtime files: xfs_repair 7.2 -n -r is not clean: $(tail -3 "$T/o.out")"
[ "$(xfs72 xfs_db -c "inode $f2" -c "print core.realtime" "$d")" = "core.realtime = 1" ] ||
	fail "inode $f2 is not a realtime file"
ours "3 groups, realtime files in groups 0 and 1" 0
cp "$d" "$T/good.img"
cp "$r" "$T/goodrt.img"
# contents FILE...: size and data hash of each (image_state without the
# path and mtime), to compare images without reading their holes.
contents() {
	image_state "$@" | awk '{print $2, $4}'
}
good=$(contents "$T/good.img" "$T/goodrt.img")

# 3. Damage: NAME|XFS_DB COMMANDS|what our output must hold.
meta() {
	xfs72 xfs_db -c "ls -m /rtgroups" "$T/good.img" | awk -v n="$1" '$6 == n {print $2}'
}
b0=$(meta 0.bitmap)
s0=$(meta 0.summary)
b1=$(meta 1.bitmap)
n=0
while IFS='|' read -r name cmds want fix; do
	n=$((n + 1))
	leak_check_sampled $n
	cp "$T/good.img" "$d"
	cp "$T/goodrt.img" "$r"
	eval "set -- $cmds"
	rt_damaged "$name" "$d" "$r" "$want" "$@"
	if [ "$fix" = refuse ]; then
		rt_refuses "$name" "$d" "$r"
		continue
	fi
	# Rewritten from the mappings: the images become what they were.
	"$REPAIR" -r "$r" "$d" >"$T/r.out" 2>&1
	rc=$?
	xfs72 xfs_repair -n -r "$r" "$d" >"$T/o.out" 2>&1
	orc=$?
	if [ $rc -eq 0 ] && [ $orc -eq 0 ] && [ "$(contents "$d" "$r")" = "$good" ]; then
		pass "$name: xfskit-repair -r: exit 0, the images as before the damage, xfs_repair 7.2 -n clean"
	else
		fail "$name: xfskit-repair -r: exit $rc, xfs_repair 7.2 -n after: exit $orc ($(grep -v '^ \|^Phase' "$T/o.out" | head -2)); images $( [ "$(contents "$d" "$r")" = "$good" ] && echo restored || echo differ); $(repair_own "$T/r.out" | head -3)"
	fi
done <<EOF
rtsb magic|-c rtsb -c "write -d magicnum 0"|realtime superblock (block 0 of the realtime device) is bad (magicnum)|refuse
rtsb uuid|-c rtsb -c "write -d uuid 11111111-2222-3333-4444-555555555555"|realtime superblock (block 0 of the realtime device) is bad|refuse
group 0 bitmap word|-c "inode $b0" -c "dblock 0" -c "write rtwords[100] 0"|discrepancy in bitmap (0) at dblock 0x0 words 0x64-0x64/0x3f4|fix
group 1 bitmap word|-c "inode $b1" -c "dblock 0" -c "write rtwords[3] 0xffffffff"|discrepancy in bitmap (1) at dblock 0x0 words 0x3-0x3/0x3f4|fix
group 0 bitmap magic|-c "inode $b0" -c "dblock 0" -c "write -d magicnum 0"|group 0 bitmap block 0 has a bad header (magic)|fix
group 0 summary word|-c "inode $s0" -c "dblock 0" -c "write suminfo[3] 7"|discrepancy in summary (0) at dblock 0x0 words 0x3-0x3/0x3f4|fix
group 0 bitmap size|-c "inode $b0" -c "write core.size 512"|realtime bitmap inode $b0 has bad size 512|refuse
sb_frextents|-c "sb 0" -c "write frextents 5"|sb_frextents 5, counted|fix
EOF

# 4. xfskit-db -R: the superblock as xfs_db 7.2 prints it.
cp "$T/good.img" "$d"
cp "$T/goodrt.img" "$r"
"$DB" -R "$r" -c "sb 0" -c print "$d" >"$T/ours.sb" 2>"$T/db.err"
rc=$?
xfs72 xfs_db -R "$r" -c "sb 0" -c print "$d" >"$T/theirs.sb" 2>&1
if [ $rc -eq 0 ] && diff -u "$T/theirs.sb" "$T/ours.sb" >"$T/sb.diff"; then
	pass "xfskit-db -R: sb print equals xfs_db 7.2's"
else
	fail "xfskit-db -R: exit $rc: $(head -8 "$T/sb.diff") $(head -2 "$T/db.err")"
fi
finish
