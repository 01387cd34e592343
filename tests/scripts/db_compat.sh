#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# xfskit-db where scripts depend on xfs_db's behaviour, byte for byte
# against xfs_db 6.1 and 7.2 on copies of the same image: the errors of
# bad commands on stdout in xfs_db's words ("command foo not found",
# "file data block is unmapped", "parsing error", ...), write's option
# syntax (options anywhere before "--", a negative value after it), the
# "Allowing write of corrupted data" notes, data mode (type data, then
# write fill|sequence|lshift|rshift|lrot|rrot with their defaults), and
# version.  For each case stdout and the resulting image must be equal.
. "$(dirname "$0")/lib.sh"
need_xfsprogs

IMG=$T/base.img
mkfs_xfs_image "$IMG" 300m || { cat "$T/mkfs.out" >&2; exit 99; }

ORACLES="xfs_db"
have_xfs72 && ORACLES="$ORACLES xfs72"

# One case per line: the -c commands, separated by '|'.
CASES='foo
sb 0|print bogus
agf 99
inode 99999999
type bogus
daddr 99999999999
inode 128|dblock 5
inode 128|ablock 0
sb 0|write
sb 0|write dblocks
sb 0|write bogus 1
sb 0|write dblocks abc
sb 0|write sectsize 70000
sb 0|write -x dblocks 1
sb 0|write -c -d dblocks 1
sb 0|fuzz bogus zeroes
sb 0|fuzz -d bogus zeroes
sb 0|write -c bogus 1
inode 128|write -d core.size -- -1
inode 128|write -d core.nextents -- -2
inode 128|write -d -- core.uid 5
inode 128|write -d core.gid -5
inode 128|write core.gid -- 77
fsblock 100|type data|write
fsblock 100|type data|write bogus
fsblock 100|type data|write fill 1 2 3 4
fsblock 100|type data|write -d fill 1
fsblock 100|type data|write -c fill 1|print
fsblock 100|type data|write fill 0xab|print
fsblock 100|type data|write fill x|print
fsblock 100|type data|write f 0x1234 3 5|print
fsblock 100|type data|write sequence 250 5 0 12|write lrot 4 0 8|write rshift 2 1|print
fsblock 100|type data|write seq 1 255 0 16|write lshift 3 4 100|print
fsblock 100|type data|write seq 1 255 0 16|write rrot 8 0 8|write ls 2 0 4|print
fsblock 100|type data|write seq 1|print
fsblock 100|type data|write sequence 7 3 10 40|write rrot 5|print
fsblock 100|type data|write random|write fill 9|print
sb 0|type data|write fill 7|print'

run_case() {
	local tool=$1 img=$2 c=$3 part args=()
	IFS='|' read -ra parts <<<"$c"
	for part in "${parts[@]}"; do
		args+=(-c "$part")
	done
	case $tool in
	ours) "$DB" -x "${args[@]}" "$img" ;;
	xfs72) xfs72 xfs_db -x "${args[@]}" "$img" ;;
	*) "$tool" -x "${args[@]}" "$img" ;;
	esac
}

n=0
while IFS= read -r c; do
	for o in $ORACLES; do
		cp --sparse=always "$IMG" "$T/theirs.img"
		cp --sparse=always "$IMG" "$T/ours.img"
		run_case "$o" "$T/theirs.img" "$c" >"$T/theirs.out" 2>/dev/null
		run_case ours "$T/ours.img" "$c" >"$T/ours.out" 2>"$T/ours.err"
		rc=$?
		if [ $rc -gt 1 ]; then
			fail "'$c': xfskit-db exited $rc: $(head -3 "$T/ours.err")"
		elif ! same_image "$T/theirs.out" "$T/ours.out"; then
			fail "'$c': stdout differs from $o's: $(diff "$T/theirs.out" "$T/ours.out" | head -6 | tr '\n' ' ')"
		elif ! same_image "$T/theirs.img" "$T/ours.img"; then
			fail "'$c': the image differs from $o's: $(cmp "$T/theirs.img" "$T/ours.img" | head -1)"
		else
			n=$((n + 1))
		fi
	done
done <<<"$CASES"
pass "$n case runs equal to the oracles ($ORACLES) in output and image"

# xfs_db writes past its buffer for a range beyond the block; we refuse
# it, write nothing and say what xfs_db says.
cp --sparse=always "$IMG" "$T/ours.img"
sum=$(cksum <"$T/ours.img")
run_case ours "$T/ours.img" "fsblock 100|type data|write fill 1 4090 10" >"$T/ours.out" 2>&1
grep -q "^length (10) too large for data block size (4096)$" "$T/ours.out" ||
	fail "a fill past the block: $(cat "$T/ours.out")"
[ "$(cksum <"$T/ours.img")" = "$sum" ] && pass "a fill past the block writes nothing" ||
	fail "a fill past the block changed the image"

# A failed command still fails the run (our exit status; xfs_db's is 0).
run_case ours "$IMG" "foo" >/dev/null 2>&1
[ $? -eq 1 ] && pass "a failed command exits 1" || fail "a failed command did not exit 1"

# version: 6.1's line (7.2 leaves out ATTR2, which the superblock has;
# the two oracles disagree and we keep 6.1's).
want=$(xfs_db -r -c version "$IMG")
ours=$("$DB" -r -c version "$IMG")
[ "$ours" = "$want" ] && pass "version equals xfs_db 6.1's" ||
	fail "version: xfs_db 6.1 '$want', xfskit-db '$ours'"

# version on an image of 7.2 with features 6.1 does not know: the names
# 7.2 gives them, and otherwise 6.1's line.
if have_xfs72; then
	truncate -s 300m "$T/72.img"
	xfs72 mkfs.xfs -q -f "$T/72.img" >"$T/mkfs72.out" 2>&1 || { cat "$T/mkfs72.out" >&2; exit 99; }
	ours=$("$DB" -r -c version "$T/72.img")
	want61=$(xfs_db -r -c version "$T/72.img")
	want72=$(xfs72 xfs_db -r -c version "$T/72.img")
	for f in $(echo "${want72#*= }" | tr ',' ' '); do
		case ",${ours#*= }," in
		*",$f,"*) ;;
		*) fail "version on a 7.2 image: no $f (7.2 says '$want72', we say '$ours')" ;;
		esac
	done
	for f in $(echo "${want61#*= }" | tr ',' ' '); do
		case ",${ours#*= }," in
		*",$f,"*) ;;
		*) fail "version on a 7.2 image: no $f (6.1 says '$want61', we say '$ours')" ;;
		esac
	done
	pass "version on a 7.2 image names every feature 6.1 and 7.2 name"
fi
finish
