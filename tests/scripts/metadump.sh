#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# xfskit-metadump and xfskit-mdrestore against xfs_metadump, xfs_mdrestore,
# xfs_db and xfs_repair, on an image the kernel populated with every
# directory, attribute, symlink and file format (plus planted names) and
# on an image made by xfskit-mkfs:
#  (a) our v1 dump with -o -a, restored by xfs_mdrestore, is byte for
#      byte what xfs_metadump -o -a gives (the same blocks, unchanged);
#      xfskit-db's metadump command writes the same file as the program;
#      with -o (stale bytes zeroed) xfs_db prints of sb 0, every AG's
#      AGF/AGI/AGFL and btree roots, every inode, every directory
#      listing, ncheck and freesp equal the original's (CRC lines aside),
#      and xfs_repair -n gives the same verdict; libfs's metadata walker
#      (xk_walk_count) walks the restored image as the original: the
#      same blocks of each type and no problem a missing block would
#      raise (metadump is that walker's visitor);
#  (b) xfs_metadump's output (obfuscated, and -o -a) restored by
#      xfskit-mdrestore is byte-identical to xfs_mdrestore's restore;
#  (c) obfuscated (the default): no planted name, xattr value or symlink
#      target appears in the dump; every directory entry keeps its
#      offset, inode, type, length and hash (xfs_db ls), names of 5+
#      bytes change; xfs_repair -n passes and the kernel mounts it;
#  v2: xfs_mdrestore 6.1 reads only v1, so v2 dumps are checked by our
#      own mdrestore: -o -v 2 restores to exactly the image -o -v 1 gives
#      through xfs_mdrestore, and an obfuscated v2 dump restores to an
#      image xfs_repair -n passes.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/populate.sh"
need_xfsprogs
command -v xfs_metadump >/dev/null 2>&1 || skip "xfs_metadump is not installed"
command -v xfs_mdrestore >/dev/null 2>&1 || skip "xfs_mdrestore is not installed"
MD="$XK_BUILDDIR/db/xfskit-metadump"
MR="$XK_BUILDDIR/db/xfskit-mdrestore"
WALKCOUNT="$XK_BUILDDIR/tests/tools/xk_walk_count"

PLANTED="secretdir_alpha confidential_report planted_name_zebra
privatepath_component planted_attr_name planted_attr_value
node_entry_with_a_long_name_2999 attribute_number_77 some_value_77"
command -v setfattr >/dev/null 2>&1 ||
	PLANTED="secretdir_alpha confidential_report planted_name_zebra
privatepath_component node_entry_with_a_long_name_2999"

# ---- the images ----
POP="$T/pop.img"
mkfs_xfs_image "$POP" 320m -m rmapbt=1,reflink=1 -i sparse=1 ||
	{ fail "mkfs.xfs failed: $(cat "$T/mkfs.out")"; finish; }
loop_mount "$POP" || finish
populate_all_formats "$MNT" || fail "populate failed"
mkdir "$MNT/secretdir_alpha"
touch "$MNT/secretdir_alpha/confidential_report.txt" "$MNT/planted_name_zebra"
ln -s /home/privatepath_component/x "$MNT/planted_link"
setfattr -n user.planted_attr_name -v planted_attr_value "$MNT/small" \
	2>/dev/null || true
find "$MNT" -xdev -printf '%i\n' | sort -un >"$T/pop.inodes"
find "$MNT" -xdev -type d -printf '%i\n' | sort -un >"$T/pop.dirs"
npaths=$(find "$MNT" -xdev | wc -l)
loop_umount

XKI="$T/xk.img"
truncate -s 300m "$XKI"
"$MKFS" -q -f "$XKI" >"$T/xkmkfs.out" 2>&1 ||
	fail "xfskit-mkfs failed: $(cat "$T/xkmkfs.out")"
echo 128 >"$T/xk.inodes"
echo 128 >"$T/xk.dirs"

agcount() {
	xfs_db -r -c 'sb 0' -c 'print agcount' "$1" | sed 's/.* = //'
}

# Every xfs_db view we compare, CRC lines dropped (zeroing stale bytes
# recomputes CRCs).  xfs_mdrestore decodes and re-encodes the primary
# superblock, which turns a quota inode of 0 into null: both mean none.
views() {
	local img=$1 inodes=$2 dirs=$3 n ag f
	n=$(agcount "$img")
	{
		echo "sb 0"; echo print
		for ag in $(seq 0 $((n - 1))); do
			echo "agf $ag"; echo print
			echo "agi $ag"; echo print
			echo "agfl $ag"; echo print
			for f in bnoroot cntroot rmaproot refcntroot; do
				echo "agf $ag"; echo "addr $f"; echo print
			done
			for f in root free_root; do
				echo "agi $ag"; echo "addr $f"; echo print
			done
		done
		while read -r i; do echo "inode $i"; echo print; done <"$inodes"
		while read -r i; do echo "inode $i"; echo ls; done <"$dirs"
		echo "freesp -s"
	} | xfs_db -r "$img" 2>&1 | grep -v crc | live_agfl |
		sed 's/^\([ugp]quotino\) = 0$/\1 = null/'
	xfs_db -r -c "blockget -n" -c ncheck "$img" 2>&1
}

# Slots of the AGFL outside flfirst..fllast are stale: a zeroing dump
# makes them null as xfs_metadump does, so only the live ones compare.
live_agfl() {
	awk '/^flfirst = / { f = $3 } /^fllast = / { l = $3 }
	     /^flcount = / { n = $3 }
	     /^bno\[/ {
		out = "live"
		for (i = 3; i <= NF; i++) {
			split($i, kv, ":"); k = kv[1] + 0
			if (n > 0 && ((f <= l && k >= f && k <= l) ||
				      (f > l && (k >= f || k <= l))))
				out = out " " $i
		}
		print out; next
	     }
	     { print }'
}

verdict() {
	xfs_repair -n "$1" >"$T/rep.out" 2>&1
	echo "exit $?"
	grep -iE 'would|bad|corrupt|error|dirty|inconsisten' "$T/rep.out" |
		grep -v 'Cannot get host' | sort
}

for img in "$POP" "$XKI"; do
	name=$(basename "$img" .img)
	# (a) same blocks as xfs_metadump, unchanged, with -o -a
	"$MD" -o -a "$img" "$T/our_oa.md" || fail "$name: metadump -o -a failed"
	xfs_metadump -o -a "$img" "$T/their_oa.md" ||
		fail "$name: xfs_metadump -o -a failed"
	rm -f "$T/r_our.img" "$T/r_their.img"
	xfs_mdrestore "$T/our_oa.md" "$T/r_our.img" ||
		fail "$name: xfs_mdrestore rejects our -o -a dump"
	xfs_mdrestore "$T/their_oa.md" "$T/r_their.img"
	if same_image "$T/r_our.img" "$T/r_their.img"; then
		pass "$name: -o -a dump restores byte for byte as xfs_metadump's"
	else
		fail "$name: -o -a restore differs from xfs_metadump's: $(cmp "$T/r_our.img" "$T/r_their.img")"
	fi

	# ... and every byte it restored is the original's (but the primary
	# superblock sector, which xfs_mdrestore re-encodes)
	ss=$(db_get "$img" 'sb 0' sectsize)
	if cmp -l "$T/r_our.img" "$img" |
		awk -v ss="$ss" '$1 > ss && $2 != 0 { bad++ } END { exit bad > 0 }'; then
		pass "$name: every restored byte of the -o -a dump is the original's"
	else
		fail "$name: -o -a restore has bytes the original does not"
	fi

	# The dump is the walker's blocks: the restored image walks as the
	# original does, block for block, type for type, with no problem a
	# missing (zero) block would raise.
	"$WALKCOUNT" "$img" >"$T/walk_orig" 2>&1 ||
		fail "$name: xk_walk_count on the original: $(tail -2 "$T/walk_orig")"
	"$WALKCOUNT" "$T/r_our.img" >"$T/walk_rest" 2>&1
	if same_image "$T/walk_orig" "$T/walk_rest"; then
		pass "$name: the restored image walks as the original ($(grep -c . "$T/walk_orig") types and totals)"
	else
		fail "$name: walking the restored image differs: $(diff "$T/walk_orig" "$T/walk_rest" | grep '^[<>]' | head -4 | tr '\n' ' ')"
	fi

	# (b) xfs_metadump output through our mdrestore
	rm -f "$T/r_mine.img"
	"$MR" "$T/their_oa.md" "$T/r_mine.img" ||
		fail "$name: xfskit-mdrestore failed on xfs_metadump -o -a output"
	same_image "$T/r_mine.img" "$T/r_their.img" &&
		pass "$name: xfskit-mdrestore of xfs_metadump -o -a = xfs_mdrestore's" ||
		fail "$name: xfskit-mdrestore of xfs_metadump -o -a differs"
	xfs_metadump "$img" "$T/their_obf.md" || fail "$name: xfs_metadump failed"
	rm -f "$T/r_mine.img" "$T/r_their.img"
	xfs_mdrestore "$T/their_obf.md" "$T/r_their.img"
	"$MR" "$T/their_obf.md" "$T/r_mine.img" ||
		fail "$name: xfskit-mdrestore failed on xfs_metadump output"
	same_image "$T/r_mine.img" "$T/r_their.img" &&
		pass "$name: xfskit-mdrestore of xfs_metadump (obfuscated) = xfs_mdrestore's" ||
		fail "$name: xfskit-mdrestore of xfs_metadump (obfuscated) differs"

	# (a) with stale bytes zeroed: every xfs_db view and the verdict
	"$MD" -o "$img" "$T/our_o.md" || fail "$name: metadump -o failed"
	"$DB" -r -c "metadump -o $T/db_o.md" "$img" >/dev/null ||
		fail "$name: xfskit-db metadump -o failed"
	same_image "$T/our_o.md" "$T/db_o.md" &&
		pass "$name: xfskit-db metadump -o writes what xfskit-metadump -o does" ||
		fail "$name: xfskit-db metadump differs from xfskit-metadump"
	rm -f "$T/r_o.img"
	xfs_mdrestore "$T/our_o.md" "$T/r_o.img" ||
		fail "$name: xfs_mdrestore rejects our -o dump"
	views "$img" "$T/$name.inodes" "$T/$name.dirs" >"$T/v_orig"
	views "$T/r_o.img" "$T/$name.inodes" "$T/$name.dirs" >"$T/v_rest"
	if same_image "$T/v_orig" "$T/v_rest"; then
		pass "$name: xfs_db views equal after -o dump/restore ($(wc -l <"$T/v_orig") lines)"
	else
		fail "$name: xfs_db views differ after -o dump/restore: $(diff "$T/v_orig" "$T/v_rest" | head -5)"
	fi
	[ "$(verdict "$img")" = "$(verdict "$T/r_o.img")" ] &&
		pass "$name: xfs_repair -n verdict equal ($(verdict "$img" | head -1))" ||
		fail "$name: xfs_repair -n verdict differs"

	# v2: our restore of -o -v 2 equals xfs_mdrestore of -o -v 1
	"$MD" -o -v 2 "$img" "$T/our_o2.md" || fail "$name: metadump -v 2 failed"
	rm -f "$T/r_o2.img"
	"$MR" "$T/our_o2.md" "$T/r_o2.img" || fail "$name: mdrestore of v2 failed"
	same_image "$T/r_o2.img" "$T/r_o.img" &&
		pass "$name: v2 dump restores to the image v1 gives" ||
		fail "$name: v2 restore differs from v1's"
	"$MR" -i "$T/our_o2.md" | grep -q "not obfuscated, clean log" ||
		fail "$name: v2 header flags wrong: $("$MR" -i "$T/our_o2.md")"
	rm -f "$T/r_o.img" "$T/r_o2.img" "$T"/*.md
done

# (c) obfuscation
"$MD" "$POP" "$T/obf.md" || fail "metadump (obfuscating) failed"
"$MD" -v 2 "$POP" "$T/obf2.md" || fail "metadump -v 2 (obfuscating) failed"
leaks=0
# One pass per file: how often each planted string occurs.
echo "$PLANTED" | tr ' ' '\n' | grep . >"$T/planted"
counts() {
	grep -a -o -F -f "$T/planted" "$1" | sort | uniq -c
}
counts "$POP" >"$T/c_orig"
for n in $(cat "$T/planted"); do
	grep -q " $n\$" "$T/c_orig" ||
		fail "planted $n is not in the original (test is broken)"
done
for f in "$T/obf.md" "$T/obf2.md"; do
	counts "$f" >"$T/c_dump"
	[ -s "$T/c_dump" ] && { fail "in $(basename "$f"): $(cat "$T/c_dump")"; leaks=1; }
done
[ $leaks = 0 ] && pass "no planted name, value or target in the dumps"
xfs_mdrestore -i "$T/obf.md" | grep -q ": obfuscated, clean log, zeroed" ||
	fail "v1 info flags wrong: $(xfs_mdrestore -i "$T/obf.md")"
rm -f "$T/r_obf.img" "$T/r_obf2.img"
xfs_mdrestore "$T/obf.md" "$T/r_obf.img" || fail "xfs_mdrestore of obfuscated dump failed"
"$MR" "$T/obf2.md" "$T/r_obf2.img" || fail "mdrestore of obfuscated v2 failed"
for r in "$T/r_obf.img" "$T/r_obf2.img"; do
	xfs_repair -n "$r" >"$T/rep.out" 2>&1 &&
		pass "obfuscated $(basename "$r"): xfs_repair -n clean" ||
		fail "obfuscated $(basename "$r"): xfs_repair -n: $(grep -v '^Phase\|^ *-' "$T/rep.out" | head -5)"
done
ls_cols() {
	while read -r i; do echo "inode $i"; echo ls; done <"$T/pop.dirs" |
		xfs_db -r "$1" 2>&1
}
ls_cols "$POP" >"$T/ls_orig"
ls_cols "$T/r_obf.img" >"$T/ls_obf"
# offset, inode, type, hash, length; then the name
awk '{ print $1, $2, $3, $4, $5, $NF }' "$T/ls_orig" >"$T/k_orig"
awk '{ print $1, $2, $3, $4, $5, $NF }' "$T/ls_obf" >"$T/k_obf"
if same_image "$T/k_orig" "$T/k_obf"; then
	pass "every entry keeps offset, inode, type, hash and length ($(grep -c '(good)' "$T/ls_orig") entries)"
else
	fail "entries differ after obfuscation: $(diff "$T/k_orig" "$T/k_obf" | head -4)"
fi
changed=$(paste -d'\n' "$T/ls_orig" "$T/ls_obf" | awk '
	NR % 2 == 1 { a = $0; next }
	$5 >= 5 && $6 != "lost+found" && a != $0 { c++ }
	END { print c + 0 }')
long=$(awk '$5 >= 5 && $6 != "lost+found" && /good/' "$T/ls_orig" | wc -l)
[ "$changed" -eq "$long" ] && [ "$long" -gt 2000 ] &&
	pass "all $long names of 5+ bytes obfuscated" ||
	fail "$changed of $long names of 5+ bytes obfuscated"
if loop_mount "$T/r_obf.img"; then
	n=$(find "$MNT" -xdev | wc -l)
	loop_umount
	[ "$n" -eq "$npaths" ] &&
		pass "kernel mounts the obfuscated restore ($n paths)" ||
		fail "obfuscated restore shows $n paths, the original $npaths"
fi
finish
