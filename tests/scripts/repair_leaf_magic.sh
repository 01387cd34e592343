#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A directory index block whose magic is damaged (issue 20), held to
# xfs_repair, which rebuilds such a directory from its data blocks.  A
# kernel-populated image: /leaf1 (150 entries, a leaf1 block) and /node
# (3000 long names: a da node, leafn blocks and a free-index block).
# Each case zeroes the magic of one of those blocks with xfs_db -x; one
# copy is repaired by xfskit-repair, one by xfs_repair (again while it
# still finds something).  Checked:
#  - xfs_repair -n and ours -n both find it;
#  - after ours, xfs_repair -n (6.1, and 7.2 where present) is clean;
#  - ours keeps every entry (path, type, content) and nothing is moved
#    to /lost+found (so whatever xfs_repair keeps, ours keeps too; with
#    XK_TEST_LONG=1 xfs_repair's result is measured for the table).
. "$XK_SRCDIR/tests/scripts/lib.sh"
. "$XK_SRCDIR/tests/scripts/repair_lib.sh"
need_xfsprogs
[ "$(id -u)" -eq 0 ] || skip "populating the image needs root (loop mount)"
have_xfs72 || true

img="$T/base.img"
truncate -s 300m "$img"
mkfs.xfs -q -f "$img" || { echo "mkfs.xfs failed" >&2; exit 99; }
loop_mount "$img" || exit 99
mkdir "$MNT/leaf1" "$MNT/node"
python3 - "$MNT" <<'EOF' || { echo "populating failed" >&2; exit 99; }
import os, sys
m = sys.argv[1]
for i in range(150):
    open("%s/leaf1/entry_name_number_%d" % (m, i), "w").write(str(i))
for i in range(3000):
    open("%s/node/a_rather_long_file_name_to_fill_blocks_%05d" % (m, i), "w").write(str(i))
EOF
L=$(stat -c %i "$MNT/leaf1") N=$(stat -c %i "$MNT/node")
loop_umount
xfs_repair_clean "$img" "$T/base.xr" || { echo "base image not clean: $(cat "$T/base.xr")" >&2; exit 99; }
walk "$img" "$T/base.kept" >/dev/null
total=$(wc -l <"$T/base.kept")

# The index blocks by their place: the leaf offset (32 GiB) and the free
# offset (64 GiB) in directory blocks.
dbs=$(xfs_db -r -c sb -c "print dirblklog blocklog" "$img" | awk '{ v[NR] = $3 } END { print v[1] + v[2] }')
leafoff=$(( (1 << 35) >> dbs )) freeoff=$(( (1 << 36) >> dbs ))
magic() {
	xfs_db -r -c "inode $1" -c "dblock $2" -c "print $3" "$img" 2>/dev/null | sed -n "s/^$3 = //p"
}
[ "$(magic "$L" $leafoff lhdr.info.hdr.magic)" = 0x3df1 ] &&
[ "$(magic "$N" $leafoff nhdr.info.hdr.magic)" = 0x3ebe ] &&
[ "$(magic "$N" $((leafoff + 1)) lhdr.info.hdr.magic)" = 0x3dff ] &&
[ "$(magic "$N" $freeoff fhdr.hdr.magic)" = 0x58444633 ] ||
	{ echo "the directories are not in the formats the cases need" >&2; exit 99; }

printf '%-12s %-5s %-6s %-7s %-7s %s\n' case xr-n ours-n ours xfs_rep lost+found >"$T/table"
# run_case NAME INO DBLOCK FIELD
run_case() {
	local name=$1 rc xn on theirs=- ours lf
	cp --sparse=always "$img" "$T/a.img"
	xfs_db -x -c "inode $2" -c "dblock $3" -c "write -d $4 0" "$T/a.img" >"$T/db.out" 2>&1
	if same_image "$img" "$T/a.img"; then
		fail "$name: the damage changed nothing: $(head -2 "$T/db.out")"
		return
	fi
	xfs_repair -n "$T/a.img" >/dev/null 2>&1; xn=$?
	"$REPAIR" -n "$T/a.img" >"$T/on.out" 2>&1; on=$?
	[ $xn -ne 0 ] || fail "$name: xfs_repair -n does not see the damage (the case is wrong)"
	[ $on -ne 0 ] || fail "$name: ours -n finds nothing"
	cp --sparse=always "$T/a.img" "$T/x.img"
	"$REPAIR" "$T/a.img" >"$T/ours.out" 2>&1; rc=$?
	[ $rc -eq 0 ] || fail "$name: xfskit-repair exit $rc: $(tail -3 "$T/ours.out")"
	if ! xfs_repair_clean "$T/a.img" "$T/xr.out"; then
		fail "$name: not clean after ours: $(cat "$T/xr.out")"
		printf '%-12s %-5s %-6s %-7s %-7s %s\n' "$name" "$xn" "$on" UNCLEAN - - >>"$T/table"
		return
	fi
	walk "$T/a.img" "$T/ours.kept" >"$T/walk.err"
	[ -s "$T/walk.err" ] && fail "$name: the kernel logged errors walking ours: $(cat "$T/walk.err")"
	ours=$(comm -12 "$T/base.kept" "$T/ours.kept" | wc -l)
	lf=$(grep -c '^\./lost+found/' "$T/ours.kept")
	comm -23 "$T/base.kept" "$T/ours.kept" >"$T/lost"
	[ -s "$T/lost" ] && fail "$name: ours lost $(wc -l <"$T/lost") entries: $(head -3 "$T/lost" | cut -f1 | tr '\n' ' ')"
	[ "$lf" -eq 0 ] || fail "$name: ours moved $lf entries to /lost+found"
	# Ours keeping every entry decides the comparison; the long run
	# measures xfs_repair's result for the table.
	if long_tests; then
		xfs_repair "$T/x.img" >/dev/null 2>&1
		xfs_repair -n "$T/x.img" >/dev/null 2>&1 || xfs_repair "$T/x.img" >/dev/null 2>&1
	fi
	if long_tests && xfs_repair -n "$T/x.img" >/dev/null 2>&1; then
		walk "$T/x.img" "$T/theirs.kept" >/dev/null
		theirs=$(comm -12 "$T/base.kept" "$T/theirs.kept" | wc -l)
		comm -13 "$T/ours.kept" "$T/theirs.kept" | comm -12 - "$T/base.kept" >"$T/missing"
		[ -s "$T/missing" ] && fail "$name: xfs_repair keeps what ours loses: $(head -3 "$T/missing" | cut -f1 | tr '\n' ' ')"
	fi
	printf '%-12s %-5s %-6s %-7s %-7s %s\n' "$name" "$xn" "$on" "$ours" "$theirs" "$lf" >>"$T/table"
}

run_case leaf1 "$L" $leafoff lhdr.info.hdr.magic
run_case leafn "$N" $((leafoff + 1)) lhdr.info.hdr.magic
run_case node "$N" $leafoff nhdr.info.hdr.magic
run_case free "$N" $freeoff fhdr.hdr.magic

cat "$T/table"
echo "entries in the healthy image: $total"
finish
