#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# xfskit-db on bad input: unknown commands, bad field names, out-of-range
# AG, inode, block and sector numbers, edits without -x or under -r, a
# corrupt block under print, a file that is not XFS, and an image with
# random bit flips in its metadata.  Each must give a clear message and
# a non-zero exit (never a crash: under the sanitizers a report exits 99),
# and -r must never change the image.
. "$(dirname "$0")/lib.sh"
need_xfsprogs

IMG="$T/a.img"
TEST_DIR=1 TEST_DEV=1 QA_CHECK_FS=1 mkfs_xfs_image "$IMG" 64m \
	-m rmapbt=1 || fail "mkfs.xfs failed: $(cat "$T/mkfs.out")"

# expect RC PATTERN ARGS... : exit status RC and PATTERN on stdout,
# where xfs_db prints the errors of its commands.
expect() {
	local want=$1 pat=$2 rc
	shift 2
	"$DB" "$@" >"$T/out" 2>"$T/err"
	rc=$?
	if [ "$rc" -ne "$want" ]; then
		fail "$*: exit $rc, expected $want; stderr: $(head -3 "$T/err")"
	elif [ -n "$pat" ] && ! grep -q -- "$pat" "$T/out"; then
		fail "$*: no '$pat' on stdout: $(head -3 "$T/out")"
	else
		pass "$* -> $rc"
	fi
}

sum=$(cksum <"$IMG")
expect 1 "command frobnicate not found" -r -c frobnicate "$IMG"
expect 1 "field nosuchfield not found" -r -c sb -c "print nosuchfield" "$IMG"
expect 1 "index 5000 for field bno out of range 0-118" -r -c "agfl 0" -c "print bno[5000]" "$IMG"
expect 1 "bad allocation group number" -r -c "agf 4" "$IMG"
expect 1 "bad allocation group number" -r -c "agi -1" "$IMG"
expect 1 "bad allocation group number" -r -c "sb 99999999999999999999" "$IMG"
expect 1 "bad inode number" -r -c "inode 999999999999" "$IMG"
expect 1 "bad inode number" -r -c "inode 1" "$IMG"
expect 1 "bad fsblock" -r -c "fsblock 99999999999" "$IMG"
expect 1 "bad daddr" -r -c "daddr 999999999" "$IMG"
expect 1 "no such type" -r -c sb -c "type nosuchtype" "$IMG"
expect 1 "not a pointer" -r -c sb -c "addr blocksize" "$IMG"
expect 1 "field ptrs not found" -r -c "agi 0" -c "addr root" -c "addr ptrs[1]" "$IMG"
expect 1 "file data block is unmapped" -r -c "inode 128" -c "dblock 5" "$IMG"
expect 1 "no current" -r -c "print" "$IMG"
expect 1 "empty" -r -c pop "$IMG"
expect 1 "usage" -r -c "convert fsblock" "$IMG"
# Arguments a command does not take: refused, with xfs_db's words.
for c in "sb 0 1" "stack foo" "inode 128 5" "hash" "fsblock 1 2"; do
	want=$(xfs_db -r -c "$c" "$IMG" 2>/dev/null | grep -m1 'bad argument count')
	[ -n "$want" ] || want="bad argument count"
	expect 1 "$want" -r -c "$c" "$IMG"
done
expect 1 "freesp arguments: " -r -c "freesp -b -e 5" "$IMG"
expect 1 "-e wants a number of at least 1" -r -c "freesp -e 0" "$IMG"
expect 1 "AG 7 does not exist" -r -c "freesp -a 7" "$IMG"
# Edits: refused under -r and without -x; the image is untouched.
expect 1 "read-only" -r -c sb -c "write magicnum 0" "$IMG"
expect 1 "read-only" -r -x -c sb -c "fuzz -d magicnum zeroes" "$IMG"
expect 1 "read-only" -r -x -c "blocktrash -n 10" "$IMG"
expect 1 "expert mode" -c sb -c "write magicnum 0" "$IMG"
expect 1 "unable to convert value .banana.\." -x -c sb -c "write blocksize banana" "$IMG"
expect 1 "unable to convert value .70000.\." -x -c sb -c "write sectsize 70000" "$IMG"
expect 1 "unknown fuzz action" -x -c sb -c "fuzz icount explode" "$IMG"
[ "$(cksum <"$IMG")" = "$sum" ] || fail "a refused edit changed the image"
# Every command with -r: still byte-identical afterwards.
"$DB" -r -c sb -c print -c "agf 1" -c print -c "agi 2" -c print \
	-c "inode 128" -c print -c ls -c "ncheck" -c freesp -c frag -c check \
	-c "bmap 128" -c version -c label -c uuid -c "hash foo" \
	-c "convert agno 1 agblock 2 daddr" -c "agf 0" -c "addr bnoroot" \
	-c "print recs" -c push -c "sb 1" -c stack -c pop -c back -c forward \
	-c "scan -r" \
	"$IMG" >/dev/null 2>"$T/err" || fail "a clean -r session failed: $(head -3 "$T/err")"
[ "$(cksum <"$IMG")" = "$sum" ] || fail "-r changed the image"
# The exit status reports any failed command, not just the last.
expect 1 "" -r -c "agf 9" -c sb "$IMG"
expect 0 "" -r -c sb -c "print magicnum" "$IMG"
# Not an XFS image, missing file, bad options.
head -c 1048576 /dev/zero >"$T/zero.img"
expect 2 "" -r -c sb "$T/zero.img"
expect 2 "" -r -c sb "$T/nonexistent.img"
"$DB" -Q "$IMG" >/dev/null 2>"$T/err"
rc=$?
[ $rc -eq 1 ] && grep -q "^Usage: xfskit-db " "$T/err" && pass "-Q -> 1, usage on stderr" ||
	fail "-Q: exit $rc (expected 1, xfs_db's usage code), stderr: $(head -2 "$T/err")"

# A corrupt block under print: the verdict is shown, the fields too.
cp "$IMG" "$T/c.img"
"$DB" -x -c "agf 1" -c "fuzz -c freeblks ones" "$T/c.img" >/dev/null 2>&1
"$DB" -r -c "agf 1" -c print "$T/c.img" >"$T/out" 2>"$T/err"
rc=$?
[ $rc -eq 0 ] || fail "print of a corrupt AGF exited $rc"
grep -q "Metadata corruption detected\|Metadata CRC error detected" "$T/err" ||
	fail "no verdict for the corrupt AGF: $(cat "$T/err")"
grep -q "^freeblks = 4294967295$" "$T/out" || fail "the corrupt field is not shown"
grep -q "^crc = .*(bad)$" "$T/out" || fail "the bad CRC is not shown"
expect 1 "" -r -c check "$T/c.img"
grep -q "AGF" "$T/out" || fail "check does not name the AGF: $(cat "$T/out")"

# Random damage everywhere, then every reader over it: no crash.
for seed in 1 2 3; do
	cp "$IMG" "$T/t.img"
	"$DB" -x -c "blocktrash -s $seed -n 40 -x 1 -y 64" "$T/t.img" \
		>/dev/null 2>&1
	"$DB" -r -c check -c freesp -c frag -c ncheck -c "ls /" -c "scan -r" "$T/t.img" \
		>/dev/null 2>"$T/err"
	rc=$?
	# 2: the primary superblock itself may be too damaged to open.
	[ $rc -le 2 ] || fail "trashed image (seed $seed): exit $rc: $(tail -3 "$T/err")"
	[ $rc -eq 2 ] && continue
	for ag in 0 1 2 3; do
		for t in sb agf agi agfl; do
			"$DB" -r -c "$t $ag" -c print "$T/t.img" >/dev/null \
				2>"$T/err"
			rc=$?
			[ $rc -le 1 ] || fail "print $t $ag (seed $seed): exit $rc"
		done
		for r in bnoroot cntroot rmaproot; do
			"$DB" -r -c "agf $ag" -c "addr $r" -c print -c "addr ptrs[1]" \
				-c print "$T/t.img" >/dev/null 2>"$T/err"
			rc=$?
			[ $rc -le 1 ] || fail "$r $ag (seed $seed): exit $rc: $(tail -3 "$T/err")"
		done
	done
	"$DB" -r -c "inode 128" -c print -c "type dir3" -c print -c "type attr3" \
		-c print -c "type symlink" -c print -c "type dqblk" -c print \
		-c "type inode" -c print -c "type data" -c print "$T/t.img" \
		>/dev/null 2>"$T/err"
	rc=$?
	[ $rc -le 1 ] || fail "retyping (seed $seed): exit $rc: $(tail -3 "$T/err")"
done
finish
