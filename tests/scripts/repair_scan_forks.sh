#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Block maps of directories and attr forks brought back from the bmbt
# leaves the device scan finds naming their inode (repair/reasm_fork.c),
# on a filesystem without rmapbt.  The kernel writes, into a clean
# image, a directory in node form whose blocks lie between file blocks
# (a bmbt of its own: data blocks, leaf and free blocks at high file
# offsets), and a file whose data fork and attr fork are both bmbts
# (every other block written; xattrs with remote values, every other
# one removed).  Each case damages a copy with xfs_db -x; xfs_repair 6.1 and
# 7.2 repair copies of it, xfskit-repair another.  After ours xfs_repair
# 6.1 and 7.2 -n are clean, the kernel mounts it, and the tree (names,
# contents, xattrs) is compared with the original, beside what each
# xfs_repair kept; the maps (xfs_db bmap, bmap -a) are the original's.
#   dir:   the directory's bmbt root points nowhere: its own map comes
#          back from its leaf (not rewritten from its blocks), every
#          entry in place;
#   data:  the file's data fork root points nowhere, its attr fork a
#          bmbt too (the leaves of both name the inode): the data fork
#          takes only its own leaves, the file comes back whole, xattrs
#          untouched (xfs_repair clears the file);
#   attr:  the attr fork root points nowhere too: both maps come back,
#          each from its own leaves, the xattrs with them;
#   dirnode: as dir, and the directory's dabtree node (the first block
#          of its leaf section) zeroed: its leaf still fits the
#          directory (a block of lost metadata among its own), its map
#          comes back, its index is rebuilt, every entry in place;
#   attrnode: as attr, and the attr fork's dabtree root (block 0)
#          zeroed: its leaf still fits the attr fork, and every xattr
#          comes back (rewritten from its leaf blocks; the whole attr
#          fork was dropped when the leaf was refused for it);
#   refused: as mixed, and the data fork's root pointer to that leaf
#          pointing nowhere too: nothing says whose the leaf is; it is
#          refused, said so, its range a hole; every xattr comes back;
#   mixed: as attr, and a record of the file's second data leaf
#          rewritten (CRC right) to map one of its attr blocks: a leaf
#          that fits neither fork, but one the data fork's own root
#          still reaches: it is the data fork's, that record alone is
#          left out (said so), the file comes back whole, and its whole
#          attr fork with every xattr and value (the value block that
#          bad record maps stays the attr fork's).
# -n --json says in "would_rebuild" what the repair rebuilds and writes
# nothing.
. "$XK_SRCDIR/tests/scripts/lib.sh"
need_xfsprogs
[ "$(id -u)" -eq 0 ] || skip "populating images needs root (loop mount)"
command -v python3 >/dev/null || skip "python3 is not installed"
have_xfs72 || true
xfile=		# run_case: a file whose xattrs are compared
differs=0	# run_case: entries the damage leaves partly lost
workload=	# run_case: the kernel writes into ours (then -n again)
FORKS="python3 $XK_SRCDIR/tests/scripts/scan_forks.py"

base=$T/base.img
mkfs_xfs_image "$base" 320m -m rmapbt=0 -i size=512 || { fail "mkfs.xfs: $(cat "$T/mkfs.out")"; finish; }
loop_mount "$base" || finish
# 300 data blocks, 160 xattrs (80 left), no links.
$FORKS populate "$MNT" 300 160 0 || fail "populate"
mkdir -p "$T/orig"
ino_frag=$(stat -c %i "$MNT/frag")
ino_both=$(stat -c %i "$MNT/both")
tree() { $FORKS tree "$1"; }
tree "$MNT" | grep -v '^lost+found' >"$T/orig/tree"
xattrs() { $FORKS xattrs "$1"; }
xattrs "$MNT/both" >"$T/orig/both.xattrs"
cp "$MNT/both" "$T/orig/both" || fail "copy /both"
loop_umount || finish
xfs_repair -n "$base" >"$T/xr0" 2>&1 || { fail "not clean before the damage: $(tail -5 "$T/xr0")"; finish; }
dig_holes "$base"
[ "$(db_get "$base" "inode $ino_frag" core.format)" = "3 (btree)" ] ||
	{ fail "/frag is not in btree format"; finish; }
[ "$(db_get "$base" "inode $ino_both" core.format)" = "3 (btree)" ] &&
	[ "$(db_get "$base" "inode $ino_both" core.aformat)" = "3 (btree)" ] ||
	{ fail "/both's forks are not both bmbts: $(db_get "$base" "inode $ino_both" core.aformat)"; finish; }
xfs_db -r -c "inode $ino_frag" -c "bmap" "$base" >"$T/orig/frag.bmap"
xfs_db -r -c "inode $ino_both" -c "bmap" "$base" >"$T/orig/both.bmap"
xfs_db -r -c "inode $ino_both" -c "bmap -a" "$base" >"$T/orig/both.abmap"
# (the directory's leaf and free blocks at their high offsets)
grep -q 'offset 8388608 ' "$T/orig/frag.bmap" && grep -q 'offset 16777216 ' "$T/orig/frag.bmap" || { fail "/frag has no leaf blocks: $(tail -3 "$T/orig/frag.bmap")"; finish; }

# A root pointer that leads nowhere it should (the first of the fork's).
bad_root() {
	xfs_db -x -c "inode $2" -c "write $3.ptrs[1] 123456" "$1" >/dev/null
}
dmg_dir() { bad_root "$1" "$ino_frag" u3.bmbt; }
dmg_data() { bad_root "$1" "$ino_both" u3.bmbt; }
dmg_attr() { bad_root "$1" "$ino_both" u3.bmbt && bad_root "$1" "$ino_both" a.bmbt; }
# The second data leaf's second record rewritten (CRC right) to map one
# of the attr fork's blocks: a leaf that fits neither fork.
dmg_mixed() {
	local l a
	l=$(xfs_db -r -c "inode $ino_both" -c "print u3.bmbt.ptrs[2]" "$1" | sed -n 's/^u3.bmbt.ptrs\[2\] = //p')
	a=$(sed -n 's/^attr offset [0-9]* startblock \([0-9]*\) .*/\1/p' "$T/orig/both.abmap" | sed -n 3p)
	[ -n "$l" ] && [ -n "$a" ] && dmg_attr "$1" &&
		xfs_db -x -c "fsblock $l" -c "type bmapbtd" -c "write recs[2].startblock $a" "$1" >/dev/null
}
# zero_fsb IMG FSB: one filesystem block zeroed.
zero_fsb() {
	local d
	d=$(xfs_db -r -c "convert fsblock $2 daddr" "$1" | sed -n 's/.*(\([0-9]*\)).*/\1/p')
	[ -n "$d" ] && dd if=/dev/zero of="$1" bs=512 seek="$d" count=$(($(db_get "$1" "sb 0" blocksize) / 512)) conv=notrunc status=none
}
dmg_dirnode() {
	dmg_dir "$1" && zero_fsb "$1" "$(sed -n 's/^data offset 8388608 startblock \([0-9]*\) .*/\1/p' "$T/orig/frag.bmap")"
}
dmg_attrnode() {
	dmg_attr "$1" && zero_fsb "$1" "$(sed -n 's/^attr offset 0 startblock \([0-9]*\) .*/\1/p' "$T/orig/both.abmap")"
}

dmg_refused() {
	dmg_mixed "$1" && xfs_db -x -c "inode $ino_both" -c "write u3.bmbt.ptrs[2] 123457" "$1" >/dev/null
}

# count ORIG TREE: "kept other": lines of ORIG found in TREE, and lines
# of TREE outside lost+found not in ORIG.
count() {
	python3 - "$1" "$2" <<'PY'
import sys
want = set(open(sys.argv[1]).read().splitlines())
have = open(sys.argv[2]).read().splitlines()
print(sum(1 for l in have if l in want),
      sum(1 for l in have if l not in want and not l.startswith("lost+found")))
PY
}

# run_case NAME DAMAGE-FN WHAT...: damage a copy, repair, compare.
# WHAT: the "would_rebuild" kinds -n must list, as KIND:INO.
run_case() {
	local damage=$2 who st
	name=$1 D=$T/$1
	shift 2
	mkdir -p "$D"
	cp --sparse=always "$base" "$D/damaged.img" || return 1
	$damage "$D/damaged.img" || { fail "[$name] damage"; return 1; }

	before=$(image_state "$D/damaged.img")
	"$REPAIR" -n --json "$D/damaged.img" >"$D/n.json" 2>"$D/n.err"
	st=$?
	[ $st = 1 ] || fail "[$name] -n on the damaged image: exit $st: $(tail -3 "$D/n.err")"
	[ "$(image_state "$D/damaged.img")" = "$before" ] || fail "[$name] -n wrote to the image"
	python3 - "$D/n.json" "$@" <<'PY' || fail "[$name] -n --json"
import json, sys
doc = json.load(open(sys.argv[1]))
got = sorted("%s:%s" % (w["rebuild"], w["ino"]) for w in doc.get("would_rebuild", []))
want = sorted(sys.argv[2:])
if got != want:
    sys.exit("would_rebuild %s, want %s" % (got, want))
if doc["actions"]:
    sys.exit("actions under -n: %s" % doc["actions"])
PY
	repair_three "$name" "$D" || return 1
	# The maps as the repair left them (the workload below changes them).
	xfs_db -r -c "inode $ino_frag" -c "bmap" "$D/ours.img" >"$D/frag.bmap"
	xfs_db -r -c "inode $ino_both" -c "bmap" "$D/ours.img" >"$D/both.bmap"
	xfs_db -r -c "inode $ino_both" -c "bmap -a" "$D/ours.img" >"$D/both.abmap"
	python3 - "$D/ours.json" >"$D/actions" <<'PY'
import json, sys
for a in json.load(open(sys.argv[1]))["actions"]:
    if a["action"] in ("fork_rebuilt", "inode_cleared", "dir_rebuilt_from_scan",
                       "dir_rewritten", "attr_fork_dropped", "moved_to_lost_found"):
        print(a["action"], a.get("ino"), a["message"])
PY
	total=$(wc -l <"$T/orig/tree")
	printf '[%s] %-16s %8s %8s (of %d entries: path, content, xattrs)\n' "$name" tool "same" other "$total"
	for who in xr61 xr72 ours; do
		[ "$who" = xr72 ] && ! have_xfs72 && continue
		if [ "$who" != ours ] && ! xfs_repair -n "$D/$who.img" >"$D/$who.n" 2>&1; then
			echo "note: [$name] $who: not clean after its repair, not mounted"
			continue
		fi
		loop_mount "$D/$who.img" || return 1
		tree "$MNT" | grep -v '^lost+found' >"$D/$who.tree"
		# The file the damage leaves partly lost: its blocks compared.
		[ "$differs" != 0 ] && [ "$who" = ours ] && { compare_blocks "$T/orig/$xfile" "$MNT/$xfile" >"$D/partial"; }
		# A file's xattrs, whichever tool (none where it is gone).
		if [ -n "$xfile" ]; then
			if [ -e "$MNT/$xfile" ]; then xattrs "$MNT/$xfile"; fi >"$D/$who.xattrs"
			k=$(grep -cxFf "$T/orig/$xfile.xattrs" "$D/$who.xattrs")
			eval "${who}_xattrs=$k"
		fi
		# A workload on ours: the kernel writes into what came back.
		if [ "$who" = ours ] && [ -n "$workload" ]; then
			python3 - "$MNT" <<'PY' || fail "[$name] the kernel could not write into the repaired tree"
import os, sys
top = sys.argv[1]
open(os.path.join(top, "frag", "new_entry"), "w").close()
os.unlink(os.path.join(top, "frag", "r00_a_longish_directory_entry_name_0000"))
os.setxattr(os.path.join(top, "both"), "user.new", b"1")
os.removexattr(os.path.join(top, "both"), "user.remote_value_001")
with open(os.path.join(top, "both"), "r+b") as f:
    f.seek(4096)
    f.write(b"x" * 4096)
PY
		fi
		loop_umount || return 1
		read -r kept other < <(count "$T/orig/tree" "$D/$who.tree")
		eval "${who}_kept=$kept"
		printf '[%s] %-16s %8d %8d\n' "$name" "$who" "$kept" "$other"
		[ "$who" = ours ] && [ "$other" != "$differs" ] && fail "[$name] ours has $other entries that were not there: $(diff "$T/orig/tree" "$D/ours.tree" | head -4)"
	done
	[ "$ours_kept" = "$((total - differs))" ] || fail "[$name] ours keeps $ours_kept of $total: $(diff "$T/orig/tree" "$D/ours.tree" | head -4)"
	[ -z "$workload" ] ||
		xfs_repair_clean "$D/ours.img" "$D/clean2" || fail "[$name] xfs_repair -n after the kernel wrote to ours: $(cat "$D/clean2")"
	return 0
}

# same_map NAME: xfs_db bmap of ours after the repair is the original's.
same_map() {
	cmp -s "$D/$1" "$T/orig/$1" || fail "[$name] $1 differs: $(diff "$T/orig/$1" "$D/$1" | head -4)"
}
# rebuilt INO WHAT: a fork_rebuilt action for INO's WHAT from bmbt leaves.
rebuilt() {
	grep -q "^fork_rebuilt $1 .*its $2, from [0-9]* bmbt leaves found by the device scan" "$D/actions" ||
		fail "[$name] no fork_rebuilt ($2) for $1: $(cat "$D/actions")"
}

workload=1
if run_case dir dmg_dir "block_map:$ino_frag"; then
	same_map frag.bmap
	rebuilt "$ino_frag" "block map"
	grep -q "^dir_rebuilt_from_scan\|^dir_rewritten $ino_frag" "$D/actions" &&
		fail "[$name] the directory was rewritten, not its map given back: $(cat "$D/actions")"
	for who in xr61 xr72; do
		eval "k=\${${who}_kept:-}"
		[ -n "$k" ] && [ "$k" -gt "$ours_kept" ] && fail "[$name] $who keeps $k, ours $ours_kept"
	done
	pass "[dir] /frag's own map back from its bmbt leaf: $ours_kept of $total in place (xfs_repair 6.1: ${xr61_kept:-not clean}, 7.2: ${xr72_kept:--})"
fi
workload=
if run_case data dmg_data "block_map:$ino_both"; then
	same_map both.bmap
	same_map both.abmap
	rebuilt "$ino_both" "block map"
	pass "[data] /both whole with its xattrs: data fork from its own leaves (xfs_repair 6.1: ${xr61_kept:-not clean}, 7.2: ${xr72_kept:--} of $total)"
fi
workload=1
if run_case attr dmg_attr "block_map:$ino_both" "attr_fork_map:$ino_both"; then
	same_map both.bmap
	same_map both.abmap
	rebuilt "$ino_both" "block map"
	rebuilt "$ino_both" "attr fork map"
	pass "[attr] /both's two maps back, each from its own leaves (xfs_repair 6.1: ${xr61_kept:-not clean}, 7.2: ${xr72_kept:--} of $total)"
fi
workload=
if run_case dirnode dmg_dirnode "block_map:$ino_frag"; then
	rebuilt "$ino_frag" "block map"
	for who in xr61 xr72; do
		eval "k=\${${who}_kept:-}"
		[ -n "$k" ] && [ "$k" -ge "$ours_kept" ] && fail "[$name] $who keeps $k, ours $ours_kept"
	done
	pass "[dirnode] /frag's map back with its dabtree node lost: $ours_kept of $total in place (xfs_repair 6.1: ${xr61_kept:-not clean}, 7.2: ${xr72_kept:--})"
fi
if run_case attrnode dmg_attrnode "block_map:$ino_both" "attr_fork_map:$ino_both"; then
	rebuilt "$ino_both" "attr fork map"
	pass "[attrnode] /both's attr fork back with its dabtree root lost, every xattr in it (xfs_repair 6.1: ${xr61_kept:-not clean}, 7.2: ${xr72_kept:--} of $total)"
fi
xfile=both workload= differs=1
if run_case refused dmg_refused "block_map:$ino_both" "attr_fork_map:$ino_both"; then
	grep -q "^fork_rebuilt $ino_both .*its block map, from [0-9]* bmbt leaves .*a leaf not found: file blocks .*; 1 leaf block refused" "$D/actions" ||
		fail "[$name] the refused leaf is not reported: $(cat "$D/actions")"
	read -r sz same zero other <"$D/partial"
	[ "$sz" = yes ] && [ "$other" = 0 ] && [ "$zero" -gt 0 ] && [ "$same" -gt "$zero" ] ||
		fail "[$name] /both should keep its other leaves' blocks and read zeros for the refused one's: $(cat "$D/partial") (size-ok same zero other)"
	cmp -s "$D/ours.xattrs" "$T/orig/both.xattrs" ||
		fail "[$name] /both keeps $ours_xattrs xattrs: $(diff "$T/orig/both.xattrs" "$D/ours.xattrs" | head -4)"
	pass "[refused] a data leaf nothing ties to a fork refused (its range a hole: $zero of $((same + zero)) blocks), /both's other blocks and all $ours_xattrs xattrs kept (xfs_repair 6.1: ${xr61_xattrs:--}, 7.2: ${xr72_xattrs:--}; they clear the file)"
fi
differs=0
if run_case mixed dmg_mixed "block_map:$ino_both" "attr_fork_map:$ino_both"; then
	rebuilt "$ino_both" "attr fork map"
	grep -q "^fork_rebuilt $ino_both .*its block map, from [0-9]* bmbt leaves found by the device scan: [^;]*; 1 record left out (conflicting or not ours)$" "$D/actions" ||
		fail "[$name] the bad record is not the only thing left out of the block map: $(cat "$D/actions")"
	# Every xattr back with its value: the attr fork lost no block.
	nx=$(wc -l <"$T/orig/both.xattrs")
	cmp -s "$D/ours.xattrs" "$T/orig/both.xattrs" ||
		fail "[$name] /both keeps $ours_xattrs of its $nx xattrs: $(diff "$T/orig/both.xattrs" "$D/ours.xattrs" | head -4)"
	for who in xr61 xr72; do
		eval "k=\${${who}_xattrs:-}"
		[ -n "$k" ] && [ "$k" -gt "$ours_xattrs" ] && fail "[$name] $who keeps $k xattrs of /both, ours $ours_xattrs"
	done
	pass "[mixed] a data leaf of /both's own tree with a record over an attr block: that record left out, the rest of the leaf kept, /both whole with its attr fork ($(sed -n "s/^fork_rebuilt $ino_both .*its attr fork map, from //p" "$D/actions")): $ours_xattrs of $nx xattrs (xfs_repair 6.1: ${xr61_xattrs:--}, 7.2: ${xr72_xattrs:--}; they clear the file)"
fi
xfile=
finish
