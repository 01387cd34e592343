#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# xfskit-db freesp -r: the realtime volume's free extents, from its
# bitmap (xfs_db 6.1 and 7.2 have no freesp -r; xfs_spaceman's needs a
# kernel with realtime support, which the host lacks).  Each image gets
# one-extent realtime files at chosen realtime blocks (mkfs.xfs -p puts
# them on the data device, xfs_db -x sets the realtime flag and the
# start block, xfs_repair -r settles the bitmap, summary and
# sb_frextents, and xfs_repair -n must then be clean), so the free runs
# are known: the complement of the files' extents.  Asserted:
#  - freesp -r -d lists exactly those runs (group, block, length in
#    filesystem blocks), -a N only group N's;
#  - -s totals equal sb_frextents (times rextsize) as xfs_db prints it;
#  - the power-of-two histogram's extent counts equal, level by level,
#    the counts in the realtime summary xfs_repair wrote, as xfs_db
#    prints its words (classic volume, rextsize 1);
#  - a group whose bitmap block has a bad header, a group that does not
#    exist and a filesystem without a realtime volume are errors (exit 1).
# Images: classic realtime (xfsprogs 6.1) with rextsize 1 and 4;
# realtime groups (mkfs.xfs 7.2 -m metadir=1, 3 groups).
. "$(dirname "$0")/lib.sh"
need_xfsprogs
d=$T/d.img
r=$T/r.img

# placed PRE BLOCKS MKFS_ARGS -- POS...: a 512 MiB data device and a
# 256 MiB realtime one made by mkfs.xfs (PRE: "" for 6.1, xfs72), one
# file of BLOCKS blocks per POS made realtime at realtime block POS,
# settled by xfs_repair -r.  Fails with the reason in $T/why.
placed() {
	local pre=$1 blocks=$2 args=() i=0 p
	shift 2
	while [ "$1" != -- ]; do args+=("$1"); shift; done
	shift
	head -c $((blocks * 4096)) /dev/urandom >"$T/blob"
	{
		printf 'rt\n0 0\nd--755 0 0\n'
		for p in "$@"; do echo "f$i ---644 0 0 $T/blob"; i=$((i + 1)); done
		echo '$'
	} >"$T/proto"
	rm -f "$d" "$r"
	truncate -s 512m "$d"
	truncate -s 256m "$r"
	$pre mkfs.xfs -q -f -p "$T/proto" "${args[@]}" -r rtdev="$r",size=256m \
		"$d" >"$T/why" 2>&1 || return 1
	$pre xfs_db -c "ls /" "$d" | awk 'NR > 3 {print $(NF - 1), $2}' >"$T/inos"
	mapfile -t cmds < <(i=0; for p in "$@"; do
		echo "f$i $p"; i=$((i + 1)); done | awk 'NR == FNR { ino[$1] = $2; next }
		{ print "-c"; print "inode " ino[$1]
		  print "-c"; print "write core.realtime 1"
		  print "-c"; print "write u3.bmx[0].startblock " $2 }' "$T/inos" -)
	$pre xfs_db -x "${cmds[@]}" "$d" >"$T/why" 2>&1 || return 1
	$pre xfs_repair -r "$r" "$d" >"$T/why" 2>&1 || return 1
	$pre xfs_repair -n -r "$r" "$d" >"$T/why" 2>&1
}

# expect_runs EXTENTS_OF_GROUPS REXTSIZE BLOCKS RGBLKLOG POS...: the free
# runs "group block length" (blocks) when files of BLOCKS blocks sit at
# the (segmented when RGBLKLOG > 0) realtime blocks POS; with groups,
# extent 0 of group 0 is the realtime superblock's.
expect_runs() {
	local sizes=$1 rext=$2 blocks=$3 lg=$4
	shift 4
	printf '%s\n' "$@" | awk -v sizes="$sizes" -v rext="$rext" -v b="$blocks" -v lg="$lg" '
	{ g = lg ? int($1 / 2 ^ lg) : 0; o = lg ? $1 - g * 2 ^ lg : $1
	  for (x = int(o / rext); x <= int((o + b - 1) / rext); x++) used[g, x] = 1 }
	END { n = split(sizes, sz, ",")
	  if (lg) used[0, 0] = 1
	  for (g = 0; g < n; g++) {
		start = -1
		for (x = 0; x <= sz[g + 1]; x++) {
			if (x < sz[g + 1] && !used[g, x]) { if (start < 0) start = x; continue }
			if (start >= 0) print g, start * rext, (x - start) * rext
			start = -1
		}
	  } }'
}

# ours_runs ARGS: freesp -r -d ARGS's extents, "group block length".
ours_runs() {
	"$DB" -c "freesp -r -d $*" "$d" 2>"$T/db.err" |
		awk 'NF == 3 && $1 ~ /^[0-9]+$/ {print $1, $2, $3}'
}

check_runs() {
	local name=$1 want=$2 got
	got=$(ours_runs)
	if [ -n "$want" ] && [ "$got" = "$want" ]; then
		pass "$name: freesp -r -d lists the $(echo "$want" | wc -l) free runs the files leave"
	else
		fail "$name: freesp -r -d: $(diff <(echo "$want") <(echo "$got") | head -6) $(head -2 "$T/db.err")"
	fi
}

# check_totals NAME PRE REXTSIZE: -s against sb_frextents.
check_totals() {
	local fr got
	fr=$($2 xfs_db -c "sb 0" -c "print frextents" "$d" | sed 's/.* = //')
	got=$("$DB" -c "freesp -r -s" "$d" 2>"$T/db.err" | sed -n 's/^total free blocks //p')
	if [ -n "$fr" ] && [ "$got" = $((fr * $3)) ]; then
		pass "$1: freesp -r -s: $got free blocks = sb_frextents $fr x rextsize $3 (xfs_db)"
	else
		fail "$1: freesp -r -s says '$got' free blocks, sb_frextents $fr x $3"
	fi
}

# 1. Classic volume, 6.1: runs of many lengths, two files side by side.
pos=(0 3 4 9 11 13 17 40 41 42 100 229 1000 1001 5000 20000 65535)
if placed "" 1 -- "${pos[@]}"; then
	check_runs "classic, rextsize 1" "$(expect_runs 65536 1 1 0 "${pos[@]}")"
	check_totals "classic, rextsize 1" "" 1
	# The summary's counts by level (its words, host order, from the
	# bytes xfs_db dumps in order, in groups of 1 or 4) against the histogram's extents by bucket.
	rsum=$(db_get "$d" "sb 0" rsumino)
	rbm=$(db_get "$d" "sb 0" rbmblocks)
	want=$(xfs_db -r -c "inode $rsum" -c "dblock 0" -c "type data" -c print "$d" |
		awk -v rbm="$rbm" '{ for (i = 2; i <= NF && $i ~ /^[0-9a-f]+$/; i++)
			for (k = 1; k < length($i); k += 2) byte[n++] = strtonum("0x" substr($i, k, 2)) }
		END { for (w = 0; w * 4 < n; w++) {
			v = byte[4*w] + byte[4*w+1] * 256 + byte[4*w+2] * 65536 + byte[4*w+3] * 16777216
			lvl = int(w / rbm); if (lvl > 15) lvl = 15; c[lvl] += v }
		  for (l = 0; l <= 15; l++) if (c[l]) print 2 ^ l, c[l] }')
	got=$("$DB" -c "freesp -r" "$d" | awk 'NF == 7 && $1 ~ /^[0-9]+$/ {print $1, $3}')
	if [ -n "$want" ] && [ "$got" = "$want" ]; then
		pass "classic: histogram extents by power of two = the summary xfs_repair 6.1 wrote ($(echo $want))"
	else
		fail "classic: histogram $(echo $got) vs summary $(echo $want)"
	fi
	# -A: only runs starting on a multiple of 4 (the -d list filtered).
	want=$(expect_runs 65536 1 1 0 "${pos[@]}" | awk '$2 % 4 == 0')
	got=$("$DB" -c "freesp -r -d -A 4" "$d" | awk 'NF == 3 && $1 ~ /^[0-9]+$/ {print $1, $2, $3}')
	[ "$got" = "$want" ] && pass "classic: -A 4 keeps the $(echo "$want" | wc -l) runs starting on a multiple of 4" ||
		fail "classic: -A 4: $(diff <(echo "$want") <(echo "$got") | head -4)"
	"$DB" -c "freesp -r -a 1" "$d" >"$T/o" 2>&1 && fail "classic: -a 1 accepted" ||
		{ grep -q "realtime group 1 does not exist" "$T/o" &&
		  pass "classic: -r -a 1 refused (one group)" ||
		  fail "classic: -a 1: $(cat "$T/o")"; }
else
	fail "classic image: $(tail -3 "$T/why")"
fi

# 2. Classic, rextsize 4: 4-block files at extent-aligned blocks.
pos=(0 8 12 40 400 4000 65528)
if placed "" 4 -r extsize=16k -- "${pos[@]}"; then
	check_runs "classic, rextsize 4" "$(expect_runs 16384 4 4 0 "${pos[@]}")"
	check_totals "classic, rextsize 4" "" 4
else
	fail "classic rextsize 4 image: $(tail -3 "$T/why")"
fi

# 3. No realtime volume.
mkfs_xfs_image "$T/plain.img" 300m >/dev/null 2>&1
"$DB" -c "freesp -r" "$T/plain.img" >"$T/o" 2>&1
rc=$?
[ $rc -eq 1 ] && grep -q "no realtime volume" "$T/o" &&
	pass "no realtime volume: freesp -r exits 1 and says so" ||
	fail "no realtime volume: exit $rc: $(cat "$T/o")"

# 4. Realtime groups (7.2), three groups, files in each.
if have_xfs72; then
	rm -f "$d" "$r"
	truncate -s 512m "$d"
	truncate -s 256m "$r"
	xfs72 mkfs.xfs -q -f -m metadir=1,rmapbt=0,reflink=0 -r rtdev="$r",rgcount=3 "$d" >/dev/null 2>&1
	lg=$(xfs72 xfs_db -c "sb 0" -c "print rgblklog" "$d" | sed 's/.* = //')
	rgx=$(xfs72 xfs_db -c "sb 0" -c "print rgextents" "$d" | sed 's/.* = //')
	rx=$(xfs72 xfs_db -c "sb 0" -c "print rextents" "$d" | sed 's/.* = //')
	pos=(1 5 6 300 $(((1 << lg) + 0)) $(((1 << lg) + 77)) $(((2 << lg) + 9)) $(((2 << lg) + rx - 2 * rgx - 1)))
	if [ -n "$lg" ] && placed xfs72 1 -m metadir=1,rmapbt=0,reflink=0 -r rgcount=3 -- "${pos[@]}"; then
		want=$(expect_runs "$rgx,$rgx,$((rx - 2 * rgx))" 1 1 "$lg" "${pos[@]}")
		check_runs "3 realtime groups" "$want"
		check_totals "3 realtime groups" xfs72 1
		got=$(ours_runs -a 1)
		[ "$got" = "$(echo "$want" | awk '$1 == 1')" ] &&
			pass "3 realtime groups: -a 1 lists group 1's runs only" ||
			fail "3 realtime groups: -a 1: $got"
		b0=$(xfs72 xfs_db -c "ls -m /rtgroups" "$d" | awk '$6 == "0.bitmap" {print $2}')
		xfs72 xfs_db -x -c "inode $b0" -c "dblock 0" -c "write -d magicnum 0" "$d" >/dev/null 2>&1
		"$DB" -c "freesp -r -d" "$d" >"$T/o" 2>&1
		rc=$?
		if [ $rc -eq 1 ] && grep -q "realtime group 0: bitmap block 0 .* bad header" "$T/o" &&
		   [ "$(awk 'NF == 3 && $1 ~ /^[0-9]+$/ {print $1, $2, $3}' "$T/o")" = "$(echo "$want" | awk '$1 != 0')" ]; then
			pass "3 realtime groups: a bad bitmap header in group 0 is named, exit 1, groups 1 and 2 still listed"
		else
			fail "3 realtime groups, bad bitmap header: exit $rc: $(head -4 "$T/o")"
		fi
	else
		fail "realtime groups image: $(tail -3 "$T/why")"
	fi
fi
finish
