#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# xfskit-db write, fuzz and blocktrash against xfs_db and xfs_repair.
#
# On copies of one mkfs.xfs image, each edit is made twice, once by
# xfs_db and once by xfskit-db, and:
#  1. both images must be byte-identical afterwards (same field, same
#     value, same CRC treatment: -d fixes the CRC, -c leaves it);
#  2. the bytes that changed (cmp -l against the original) must all lie
#     inside the named field or the structure's CRC field, as "locate"
#     reports them, and something must have changed;
#  3. xfs_repair -n must report the corruption (non-zero exit);
#  4. for damage a block verifier can see (marked "check"), xfskit-db's
#     own check command must fail too and name the structure.
# Plain write must refuse what the verifier rejects and leave the image
# unchanged; write -d must match xfs_db; fuzz random with a seed and
# blocktrash with a seed must be repeatable.
. "$(dirname "$0")/lib.sh"
need_xfsprogs

BASE="$T/base.img"
# A small image keeps the whole-image comparisons cheap; the fstests
# variables let mkfs.xfs make a filesystem under its 300 MB floor.
TEST_DIR=1 TEST_DEV=1 QA_CHECK_FS=1 \
	mkfs_xfs_image "$BASE" 64m -m rmapbt=1,reflink=1 ||
	fail "mkfs.xfs failed: $(cat "$T/mkfs.out")"
xfs_repair -n "$BASE" >/dev/null 2>&1 || fail "the fresh image is not clean"
A="$T/a.img"
B="$T/b.img"

to_args() {
	local a
	ARGS=()
	IFS='|' read -ra cmds <<<"$1"
	for a in "${cmds[@]}"; do
		ARGS+=(-c "$a")
	done
}

# Byte ranges [start, end) of a field as locate prints it.
range_of() {
	sed -n 's/^.*: byte \([0-9]*\) bit \([0-9]*\) bits \([0-9]*\)$/\1 \2 \3/p' |
		awk '{ print $1, $1 + int(($2 + $3 + 7) / 8) }'
}

checked=0
# edit NAV FIELD CRCFIELD "fuzz|write ..." : see the header.  Random
# fuzzing cannot match xfs_db's generator, so for it rule 1 is skipped.
edit() {
	local nav=$1 field=$2 crcf=$3 op=$4 want=${5:-} fr cr changed bad
	to_args "$nav"
	cp "$BASE" "$A" && cp "$BASE" "$B" || return
	fr=$("$DB" -r "${ARGS[@]}" -c "locate $field" "$BASE" | range_of)
	cr=$("$DB" -r "${ARGS[@]}" -c "locate $crcf" "$BASE" | range_of)
	if [ -z "$fr" ] || [ -z "$cr" ]; then
		fail "$nav: cannot locate $field or $crcf"
		return
	fi
	xfs_db -x "${ARGS[@]}" -c "$op" "$B" >/dev/null 2>&1
	"$DB" -x "${ARGS[@]}" -c "$op" "$A" >"$T/out" 2>&1 ||
		fail "$nav|$op: xfskit-db failed: $(head -2 "$T/out")"
	case "$op" in *random) cp "$A" "$B" ;; esac
	if ! same_image "$A" "$B"; then
		fail "$nav|$op: image differs from xfs_db's edit"
		return
	fi
	changed=$(cmp -l "$BASE" "$A" | awk '{ print $1 - 1 }')
	if [ -z "$changed" ]; then
		fail "$nav|$op: nothing changed"
		return
	fi
	bad=$(echo "$changed" | awk -v f="$fr" -v c="$cr" '
		BEGIN { split(f, F, " "); split(c, C, " ") }
		!(($1 >= F[1] && $1 < F[2]) || ($1 >= C[1] && $1 < C[2])) {
			print; exit }')
	if [ -n "$bad" ]; then
		fail "$nav|$op: byte $bad changed outside $field and $crcf"
		return
	fi
	if xfs_repair -n "$A" >"$T/repair.out" 2>&1; then
		fail "$nav|$op: xfs_repair -n did not report the corruption"
		return
	fi
	if [ -n "$want" ]; then
		if "$DB" -r -c check "$A" >"$T/check.out" 2>&1; then
			fail "$nav|$op: check found nothing"
			return
		fi
		grep -q "$want" "$T/check.out" ||
			fail "$nav|$op: check does not name $want: $(head -3 "$T/check.out")"
	fi
	checked=$((checked + 1))
}

edit "sb 0" icount crc "fuzz -d icount ones"
edit "sb 1" agblocks crc "fuzz -d agblocks sub"
edit "sb 0" uuid crc "fuzz -c uuid random"
edit "agf 1" freeblks crc "fuzz -d freeblks zeroes"
edit "agf 2" longest crc "write -d longest 7"
edit "agf 3" magicnum crc "fuzz -c magicnum zeroes" "AGF at daddr"
edit "agf 0" lsn crc "fuzz -c lsn add"
edit "agi 2" count crc "fuzz -d count add"
edit "agi 1" "unlinked[5]" crc "fuzz -d unlinked[5] lastbit"
edit "agi 0" freecount crc "fuzz -d freecount firstbit"
edit "agi 3" "unlinked[2]" crc "fuzz -d unlinked[2] lastbit"
edit "inode 128" core.nlinkv2 v3.crc "fuzz -d core.nlinkv2 middlebit"
edit "agfl 1" seqno crc "fuzz -c seqno add" "AGFL at daddr"
edit "agf 0|addr bnoroot" "recs[1].blockcount" crc \
	"fuzz -d recs[1].blockcount add"
edit "agf 0|addr cntroot" numrecs crc "fuzz -d numrecs add" "cntbt"
edit "agf 0|addr rmaproot" "recs[2].owner" crc "fuzz -d recs[2].owner zeroes"
edit "agf 0|addr refcntroot" magic crc "fuzz -d magic middlebit" \
	"refcount"
edit "agi 0|addr root" "recs[1].freecount" crc \
	"fuzz -d recs[1].freecount firstbit"
edit "agi 0|addr free_root" level crc "fuzz -d level ones" "finobt"
edit "inode 128" core.nlinkv2 v3.crc "fuzz -d core.nlinkv2 ones"
# A set bit under a clear first bit: xfs_db flips it (format 1 -> 0).
edit "inode 128" core.format v3.crc "fuzz -d core.format lastbit" "inode"
edit "inode 128" core.mode v3.crc "write -d core.mode 0100644"
# Plain inode writes go through as xfs_db's do (fstests xfs/348 writes
# bad modes): only the kernel's inode buffer write checks refuse them.
edit "inode 128" core.nextents v3.crc "write core.nextents 99"
edit "inode 128" core.mode v3.crc "write core.mode 0"
edit "inode 128" core.gid v3.crc "fuzz -c core.gid lastbit"
edit "inode 128" u3.sfdir3.hdr.parent.i4 v3.crc \
	"fuzz -d u3.sfdir3.hdr.parent.i4 add"
edit "inode 129" core.format v3.crc "fuzz -d core.format ones" "inode"
edit "inode 128" v3.inumber v3.crc "fuzz -d v3.inumber sub" "inode"
echo "checked $checked edits"
# Middle and last bits flip whatever the first bit is, as xfs_db's do
# (040755 -> 040555 and 040754): not corruption, so compared alone.
for op in "fuzz -d core.mode middlebit" "fuzz -d core.mode lastbit"; do
	cp "$BASE" "$A" && cp "$BASE" "$B"
	xfs_db -x -c "inode 128" -c "$op" "$B" >/dev/null 2>&1
	"$DB" -x -c "inode 128" -c "$op" "$A" >/dev/null 2>&1
	same_image "$A" "$B" || fail "inode 128|$op: image differs from xfs_db's"
	same_image "$A" "$BASE" && fail "inode 128|$op: nothing changed"
done
# fuzz alone lists its verbs on stdout as xfs_db does (fstests reads them).
want=$(xfs_db -x -c "sb 0" -c fuzz "$BASE" 2>/dev/null | grep '^Fuzz commands:')
got=$("$DB" -x -c "sb 0" -c fuzz "$BASE" 2>/dev/null | grep '^Fuzz commands:')
[ -n "$want" ] && [ "$got" = "$want" ] ||
	fail "fuzz listing differs: xfs_db '$want', xfskit-db '$got'"

# Plain write refuses what the verifier rejects and writes nothing.
cp "$BASE" "$A"
sum=$(cksum <"$A")
if "$DB" -x -c "agf 1" -c "write freeblks 5" "$A" >"$T/err" 2>/dev/null; then
	fail "plain write of a bad freeblks succeeded"
fi
grep -q "verifier rejects" "$T/err" || fail "no refusal message on stdout: $(cat "$T/err")"
[ "$(cksum <"$A")" = "$sum" ] || fail "a refused write changed the image"
# What the kernel's inode buffer write verifier rejects stays refused.
for w in "core.magic 0" "core.version 1" "next_unlinked 12345678"; do
	cp "$BASE" "$A"
	sum=$(cksum <"$A")
	"$DB" -x -c "inode 128" -c "write $w" "$A" >/dev/null 2>"$T/err" &&
		fail "plain inode write $w succeeded"
	[ "$(cksum <"$A")" = "$sum" ] || fail "a refused inode write ($w) changed the image"
done
# A valid plain write goes through, CRC fixed, repair clean.
"$DB" -x -c "sb 0" -c "write fname xktest" "$A" >"$T/out" 2>&1 ||
	fail "plain write of the label failed: $(cat "$T/out")"
[ "$(db_get "$A" "sb 0" fname)" = '"xktest\000\000\000\000\000\000"' ] ||
	fail "xfs_db does not see the label write: $(db_get "$A" "sb 0" fname)"
[ "$(db_get "$A" "sb 0" crc | sed 's/.*(//')" = "correct)" ] ||
	fail "label write left a bad CRC"
# write -c leaves the CRC wrong: both tools say so.  fuzz N adds N.
cp "$BASE" "$A"
"$DB" -x -c "agf 2" -c "write -c lsn 7" "$A" >/dev/null 2>&1
xfs_db -r -c "agf 2" "$A" 2>&1 | grep -q "Metadata CRC error detected" ||
	fail "write -c did not leave a bad CRC (xfs_db sees none)"
"$DB" -r -c "agf 2" -c "print crc" "$A" 2>"$T/err" | grep -q "(bad)" ||
	fail "xfskit-db does not show the bad CRC"
grep -q "Metadata CRC error detected" "$T/err" ||
	fail "no CRC verdict after reading a bad block: $(cat "$T/err")"

"$DB" -x -c "agf 2" -c "fuzz -d lsn add 5" "$A" >/dev/null 2>&1
[ "$(db_get "$A" "agf 2" lsn)" = "0xc" ] ||
	fail "fuzz add 5 did not make lsn 7 + 5: $(db_get "$A" "agf 2" lsn)"

# Seeded random fuzz and blocktrash are repeatable.
for img in "$A" "$B"; do
	cp "$BASE" "$img"
	"$DB" -x -c "agi 3" -c "fuzz -d -s 42 uuid random" \
		-c "blocktrash -s 7 -n 4 -x 1 -y 16" "$img" >"$T/out.$(basename "$img")" 2>&1
done
same_image "$A" "$B" || fail "seeded fuzz/blocktrash is not repeatable"
same_image "$A" "$BASE" && fail "seeded fuzz/blocktrash changed nothing"
grep -c "^blocktrash:" "$T/out.a.img" | grep -qx 4 ||
	fail "blocktrash did not report 4 flips: $(cat "$T/out.a.img")"
xfs_repair -n "$A" >/dev/null 2>&1 && fail "xfs_repair -n sees no blocktrash damage"

[ "$checked" -ge 20 ] || fail "only $checked edits were checked"
finish
