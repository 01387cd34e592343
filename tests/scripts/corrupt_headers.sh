#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# For each structure kind (secondary superblock, AGF, AGI, AGFL, and the
# root of each per-AG btree) in AG 1 of a mkfs.xfs image:
#  - a byte changed with dd where no structural rule looks is reported as
#    a checksum error ("crc") at that structure's daddr and AG;
#  - a magic number changed with xfs_db (which recomputes the CRC) is
#    reported as a structural error ("magic"), not as a checksum error.
# The addresses come from xfs_db, and each image is checked clean first.
. "$XK_SRCDIR/tests/scripts/lib.sh"
need_xfsprogs

base="$T/base"
mkfs_xfs_image "$base" 512m -m rmapbt=1,reflink=1,finobt=1 || exit 99
"$REPAIR" -n "$base" >/dev/null || { fail "base image not clean"; finish; }
bs=$(db_get "$base" "sb 0" blocksize)
ss=$(db_get "$base" "sb 0" sectsize)
agblocks=$(db_get "$base" "sb 0" agblocks)
ag=1
ag_daddr=$((ag * agblocks * bs / 512))

# name | structure label | daddr | length | byte offset of a CRC-only
# change | xfs_db commands to reach it | magic field name
cases=()
add_sector() {
	cases+=("$1|$2|$((ag_daddr + $3 * ss / 512))|$ss|$4|$5|$6")
}
add_sector sb "superblock" 0 $((ss - 1)) "sb $ag" magicnum
add_sector agf "AGF" 1 $((ss - 1)) "agf $ag" magicnum
add_sector agi "AGI" 2 $((ss - 1)) "agi $ag" magicnum
add_sector agfl "AGFL" 3 31 "agfl $ag" magicnum	# low byte of agfl_lsn: an LSN (0/0x5a) behind the log head
add_root() {
	hdr=$1 field=$2 label=$3
	agbno=$(db_get "$base" "$hdr $ag" "$field")
	[ -n "$agbno" ] || { fail "no $field in $hdr $ag"; return; }
	cases+=("$field|$label|$(((ag * agblocks + agbno) * bs / 512))|$bs|$((bs - 1))|$hdr $ag;addr $field|magic")
}
add_root agf bnoroot "bnobt block"
add_root agf cntroot "cntbt block"
add_root agf rmaproot "rmapbt block"
add_root agf refcntroot "refcountbt block"
add_root agi root "inobt block"
add_root agi free_root "finobt block"

for c in "${cases[@]}"; do
	IFS='|' read -r name label daddr len off nav magic <<<"$c"

	# CRC-only change.
	img="$T/crc"
	cp --sparse=always "$base" "$img"
	byte=$(od -An -tu1 -j $((daddr * 512 + off)) -N1 "$img" | tr -d ' ')
	printf "\\$(printf '%03o' $(((byte ^ 0x5a) & 255)))" |
		dd of="$img" bs=1 seek=$((daddr * 512 + off)) conv=notrunc 2>/dev/null
	sum=$(image_state "$img")
	out=$("$REPAIR" -n "$img" 2>&1)
	rc=$?
	[ "$(image_state "$img")" = "$sum" ] || fail "$name: -n changed the image"
	line=$(printf '%s\n' "$out" | grep -F "$label at daddr $daddr (AG $ag): crc")
	if [ $rc -ne 1 ] || [ -z "$line" ]; then
		fail "$name CRC-only: exit $rc, expected '$label at daddr $daddr (AG $ag): crc' in:"$'\n'"$out"
	else
		pass "$name CRC-only -> $line"
	fi

	# Structural change, CRC recomputed by xfs_db.
	img="$T/struct"
	cp --sparse=always "$base" "$img"
	args=()
	IFS=';' read -ra navs <<<"$nav"
	for n in "${navs[@]}"; do args+=(-c "$n"); done
	xfs_db -x "${args[@]}" -c "write -d $magic 0x11223344" "$img" >/dev/null 2>&1
	out=$("$REPAIR" -n "$img" 2>&1)
	rc=$?
	line=$(printf '%s\n' "$out" | grep -F "$label at daddr $daddr (AG $ag): magic")
	if [ $rc -ne 1 ] || [ -z "$line" ]; then
		fail "$name structural: exit $rc, expected '$label at daddr $daddr (AG $ag): magic' in:"$'\n'"$out"
	elif printf '%s\n' "$line" | grep -q "checksum also bad"; then
		fail "$name structural: reported a bad checksum too: $line"
	else
		pass "$name structural -> $line"
	fi
done
[ ${#cases[@]} -eq 10 ] || fail "expected 10 structure kinds, had ${#cases[@]}"
finish
