#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Repair of the metadata directory tree (mkfs.xfs 7.2 -m metadir=1, no
# realtime volume), against xfs_repair 7.2 and the host kernel.
#
# A kernel-populated image is damaged with xfs_db 7.2 in the metadata
# tree: its root (metadata flag cleared, an entry naming a user inode;
# long: mode zeroed, an entry naming no inode, the owner, ...), (long:)
# /rtgroups (metadata flag cleared, mode zeroed, ".."), sb_metadirino
# (naming a user directory; long: the root, /rtgroups, 0), a user file
# (long: directory, the root directory) given the metadata flag.
# For each:
#  - xfs_repair 7.2 -n finds it, and so does our -n, which writes nothing;
#  - our repair exits 0; xfs_repair 7.2 -n and our -n then find the image
#    clean, and xfs_db 7.2 lists a metadata root at sb_metadirino;
#  - the host kernel mounts our result and xfs_repair 7.2's (both found
#    clean first) with no XFS error, and ours keeps every entry (path,
#    type, content) that xfs_repair 7.2's keeps;
#  - the first (a rebuilt tree) then takes a kernel workload, with no
#    XFS error, and both checks still find it clean;
#  - what was done: "Rebuilt the metadata directory tree" where the tree
#    itself is lost; the tree kept (xfs_db 7.2's listing unchanged) where
#    only the superblock's word or a user inode's flag was wrong, and the
#    user inode kept where xfs_repair 7.2 clears it.
# Then: --json of a rebuild (the metadata root's mode zeroed) validates
# against doc/xfskit-repair.schema.json and names the action
# metadir_rebuilt; a tree holding a quota file is refused with its
# reason and nothing written.
. "$XK_SRCDIR/tests/scripts/lib.sh"
. "$XK_SRCDIR/tests/scripts/repair_lib.sh"
need_xfs72
[ "$(id -u)" -eq 0 ] || skip "populating images needs root (loop mount)"

base="$T/base.img"
metadir72_image "$base"
loop_mount "$base" || finish
m=$MNT
mkdir -p "$m/d1/d2" "$m/blk"
echo one >"$m/d1/f"
ln "$m/d1/f" "$m/d1/d2/hard"
ln -s target "$m/d1/sym"
for i in $(seq 1 40); do echo "blk $i" >"$m/blk/file_$i"; done
ino() { stat -c %i "$m/$1"; }
d1=$(ino d1) f=$(ino d1/f)
entries "$m" >"$T/tree.base"
loop_umount

sbget() {	# sbget IMG FIELD: a field of the primary, through xfs_db 7.2
	xfs72 xfs_db -r -c "sb 0" -c "print $2" "$1" | sed 's/.* = //'
}
mdir=$(sbget "$base" metadirino)
rootino=$(sbget "$base" rootino)
rtg=$(xfs72 xfs_db -r -c "inode $mdir" -c "print u3.sfdir3.list[0].inumber.i4" "$base" | sed 's/.* = //')
case "$mdir$rtg$d1$f" in
*[!0-9]*|"") fail "no metadata tree or user files in the image (metadirino '$mdir', /rtgroups '$rtg')"; finish ;;
esac
metadir72_tree "$base" >"$T/mtree.base"

# name|expect|xfs_db commands.  expect: rebuilt (the tree made anew),
# kept (the metadata tree unchanged), kept+ (also more kept than
# xfs_repair 7.2 keeps).
cases="
root-flag|rebuilt|inode $mdir|write -d v3.metadata 0
root-names-user|rebuilt|inode $mdir|write -d u3.sfdir3.list[0].inumber.i4 $f
sb-names-user|kept|sb 0|write -d metadirino $d1
user-flagged|kept+|inode $f|write -d v3.metadata 1
"
if long_tests; then
	cases="$cases
rtg-flag|rebuilt|inode $rtg|write -d v3.metadata 0
root-mode0|rebuilt|inode $mdir|write -d core.mode 0
root-names-none|rebuilt|inode $mdir|write -d u3.sfdir3.list[0].inumber.i4 4000000
root-uid|rebuilt|inode $mdir|write -d core.uid 7
root-count0|rebuilt|inode $mdir|write -d u3.sfdir3.hdr.count 0
root-immutable|rebuilt|inode $mdir|write -d core.immutable 0
rtg-mode0|rebuilt|inode $rtg|write -d core.mode 0
rtg-dotdot|kept|inode $rtg|write -d u3.sfdir3.hdr.parent.i4 $rootino
sb-names-root|kept|sb 0|write -d metadirino $rootino
sb-zero|kept|sb 0|write -d metadirino 0
userdir-flagged|kept+|inode $d1|write -d v3.metadata 1
rootdir-flagged|kept+|inode $rootino|write -d v3.metadata 1
sb-names-rtgroups|kept|sb 0|write -d metadirino $rtg
user-names-mroot|kept|inode $d1|write -d u3.sfdir3.list[0].inumber.i4 $mdir
"
fi

# workload NAME IMG: the kernel makes, writes, renames and removes files
# and directories on IMG (found clean first), with no XFS error; then
# xfs_repair 7.2 -n and our -n still find it clean.
workload() {
	local before errs
	before=$(kmsg_mark)
	loop_mount "$2" || return
	mkdir -p "$MNT/w/a/b" &&
	for i in $(seq 1 30); do echo "w $i" >"$MNT/w/a/f$i"; done &&
	mv "$MNT/w/a/f1" "$MNT/w/b1" && rm -f "$MNT/w/a/f2" "$MNT/w/a/f3" &&
	rmdir "$MNT/w/a/b" && ln "$MNT/w/a/f4" "$MNT/w/h4" ||
		fail "$1: the workload failed on our result"
	loop_umount
	errs=$(xfs_kernel_errors "$before")
	[ -z "$errs" ] || { fail "$1: the kernel, during the workload: $errs"; return; }
	xfs72 xfs_repair -n "$2" >"$T/$1.wx72" 2>&1 ||
		{ fail "$1: after the workload xfs_repair 7.2 -n is not clean: $(grep -v '^Phase\|^  *-' "$T/$1.wx72" | head -3)"; return; }
	"$REPAIR" -n "$2" >"$T/$1.wn" 2>&1 ||
		{ fail "$1: after the workload our -n is not clean: $(repair_own "$T/$1.wn" | head -3)"; return; }
	pass "$1: a workload on our result ran clean"
}

# one NAME EXPECT CMDS: one case, as the header says.
one() {
	local name=$1 expect=$2 img="$T/$1.img" theirs="$T/$1.x72.img"
	local sum rc errs kept72 kept md
	damage72 "$name" "$3" "$base" "$img" || return
	xfs72 xfs_repair -n "$img" >"$T/$name.x72n" 2>&1 &&
		{ fail "$name: the damage is not damage to xfs_repair 7.2 -n"; return; }
	sum=$(image_state "$img")
	"$REPAIR" -n "$img" >"$T/$name.n" 2>&1 &&
		{ fail "$name: our -n finds nothing where xfs_repair 7.2 -n does: $(grep -v '^Phase\|^  *-' "$T/$name.x72n" | head -3)"; return; }
	[ "$(image_state "$img")" = "$sum" ] || { fail "$name: our -n wrote to the image"; return; }
	cp --sparse=always "$img" "$theirs"
	xfs72 xfs_repair "$theirs" >"$T/$name.x72r" 2>&1 ||
		{ fail "$name: xfs_repair 7.2 failed (exit $?): $(tail -3 "$T/$name.x72r")"; return; }
	"$REPAIR" "$img" >"$T/$name.r" 2>&1
	rc=$?
	[ $rc = 0 ] || { fail "$name: our repair exits $rc: $(repair_own "$T/$name.r" | tail -3)"; return; }
	xfs72 xfs_repair -n "$img" >"$T/$name.after" 2>&1 ||
		{ fail "$name: after our repair xfs_repair 7.2 -n is not clean: $(grep -v '^Phase\|^  *-' "$T/$name.after" | head -3)"; return; }
	"$REPAIR" -n "$img" >"$T/$name.n2" 2>&1 ||
		{ fail "$name: after our repair our -n is not clean: $(repair_own "$T/$name.n2" | head -3)"; return; }
	xfs72 xfs_repair -n "$theirs" >"$T/$name.x72after" 2>&1 ||
		{ fail "$name: xfs_repair 7.2 -n rejects xfs_repair 7.2's own result"; return; }
	md=$(sbget "$img" metadirino)
	metadir72_tree "$img" >"$T/$name.mtree"
	grep -q "^[0-9]* *$md *directory .* \.\. (good)" "$T/$name.mtree" ||
		{ fail "$name: no metadata root at metadirino $md after our repair: $(head -3 "$T/$name.mtree")"; return; }
	case $expect in
	rebuilt)
		grep -q '^Rebuilt the metadata directory tree at inode ' "$T/$name.r" ||
			{ fail "$name: our repair does not say it rebuilt the metadata tree: $(repair_own "$T/$name.r" | tail -3)"; return; } ;;
	kept*)
		if grep -q '^Rebuilt the metadata directory tree' "$T/$name.r" ||
		   ! cmp -s "$T/mtree.base" "$T/$name.mtree"; then
			fail "$name: the metadata tree was not kept: $(diff "$T/mtree.base" "$T/$name.mtree" | head -3)"
			return
		fi ;;
	esac
	errs=$(walk "$img" "$T/$name.tree")
	[ -z "$errs" ] || { fail "$name: the kernel, on our result: $errs"; return; }
	errs=$(walk "$theirs" "$T/$name.x72tree")
	[ -z "$errs" ] || { fail "$name: the kernel, on xfs_repair 7.2's result: $errs"; return; }
	kept=$(preserved "$T/$name.tree")
	kept72=$(preserved "$T/$name.x72tree")
	if [ "$kept" -lt "$kept72" ]; then
		fail "$name: we keep $kept of $(wc -l <"$T/tree.base") entries, xfs_repair 7.2 keeps $kept72: $(LC_ALL=C comm -13 "$T/$name.tree" "$T/$name.x72tree" | head -3)"
		return
	fi
	if [ "$expect" = kept+ ] && [ "$kept" -le "$kept72" ]; then
		fail "$name: we keep $kept entries, no more than xfs_repair 7.2's $kept72 (the inode's metadata flag was to go, the inode kept)"
		return
	fi
	pass "$name: repaired ($expect), clean for xfs_repair 7.2 and us, mounted; entries kept: ours $kept, xfs_repair 7.2's $kept72 of $(wc -l <"$T/tree.base")"
	repaired="$repaired $name "
}


repaired=
while IFS='|' read -r name expect c1 c2; do
	[ -n "$name" ] && one "$name" "$expect" "$c1|$c2"
done <<<"$cases"
# The first case's result (a rebuilt tree, found clean) takes a workload.
case $repaired in
*" root-flag "*) workload root-flag "$T/root-flag.img" ;;
esac

# --json of a rebuild: valid against the schema, the action named.
damage72 json "inode $mdir|write -d core.mode 0" "$base" "$T/json.img" && {
	"$REPAIR" --json "$T/json.img" >"$T/json.out" 2>"$T/json.err"
	rc=$?
	if ! python3 -c 'import jsonschema' 2>/dev/null; then
		echo "note: python3-jsonschema is missing: the --json document is not validated"
		python3 -c 'import json, sys; json.load(open(sys.argv[1]))' "$T/json.out" ||
			fail "json: --json is not one JSON document"
	elif ! python3 - "$XK_SRCDIR/doc/xfskit-repair.schema.json" "$T/json.out" <<'PY'
import json, sys
import jsonschema
jsonschema.validate(json.load(open(sys.argv[2])), json.load(open(sys.argv[1])),
                    cls=jsonschema.Draft202012Validator)
PY
	then
		fail "json: --json does not validate against the schema"
	fi
	acts=$(python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); print(" ".join(a["action"] for a in d["actions"]), d["exit_status"])' "$T/json.out" 2>&1)
	case " $acts " in
	*" metadir_rebuilt "*" $rc ") pass "json: exit $rc, actions: ${acts% *}" ;;
	*) fail "json: no metadir_rebuilt action or exit_status other than $rc: $acts" ;;
	esac
}

# A quota file in the tree (a user file made one with xfs_db): refused,
# with the reason, nothing written.
damage72 quota "inode $f|write -d core.mode 0100000|write -d core.uid 0|write -d core.gid 0|write -d core.immutable 1|write -d core.sync 1|write -d core.noatime 1|write -d core.nodump 1|write -d core.nodefrag 1|write -d v3.metadata 1|write -d core.metatype 2|inode $mdir|write -d u3.sfdir3.list[0].inumber.i4 $f" "$base" "$T/quota.img" && {
	sum=$(image_state "$T/quota.img")
	"$REPAIR" "$T/quota.img" >"$T/quota.r" 2>&1
	rc=$?
	if [ $rc = 0 ]; then
		fail "quota: a tree holding a quota file was repaired (exit 0): $(repair_own "$T/quota.r" | tail -3)"
	elif [ "$(image_state "$T/quota.img")" != "$sum" ]; then
		fail "quota: refused (exit $rc) but the image changed"
	elif ! grep -q "cannot be rebuilt: it holds a quota file" "$T/quota.r"; then
		fail "quota: refused (exit $rc) without the reason: $(repair_own "$T/quota.r" | tail -3)"
	else
		pass "quota: refused (exit $rc), the reason given, nothing written"
	fi
}
finish
