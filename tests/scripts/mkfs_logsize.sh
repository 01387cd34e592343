#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The log size xfskit-mkfs chooses, and the explicit sizes it refuses,
# must be exactly mkfs.xfs 6.1's.  Both are run with -N (nothing is
# written) on the same sparse image over a matrix of block and inode
# sizes, feature sets (the features that change the transaction
# reservations: rmapbt, reflink, finobt, nrext64), tiny filesystems
# (whose log is the computed minimum), huge sparse ones, log and data
# stripe units and 4 KiB sectors; for each case the log blocks and the
# log stripe unit must agree, or both tools must refuse.  Then, for a
# few geometries, the minimum mkfs.xfs states when refusing a tiny
# -l size is probed: one block below it both must refuse (with the same
# stated minimum), at it both must accept.
# Features are always given explicitly: the two tools' defaults differ
# on purpose (xfskit-mkfs turns rmapbt and nrext64 on).
. "$XK_SRCDIR/tests/scripts/lib.sh"
need_xfsprogs

# tmpfs takes sparse files past ext4's 16 TiB limit.
BIG=$(mktemp -d /dev/shm/xk-logsize.XXXXXX 2>/dev/null || echo "$T")
trap 'rm -rf "$BIG"; cleanup' EXIT
IMG="$BIG/img"
MISMATCH="$T/mismatch"
: >"$MISMATCH"
NCASES=0

# Feature sets: -m and -i options handed to both tools.
FA="-m rmapbt=1,reflink=1,finobt=1 -i nrext64=1"
FB="-m rmapbt=1,reflink=0,finobt=1 -i nrext64=0"
FC="-m rmapbt=0,reflink=0,finobt=0 -i nrext64=1"
FD="-m rmapbt=0,reflink=1,finobt=1 -i nrext64=0"

# "log_blocks log_sunit" from a -N summary, or "refused[:min]" when the
# tool exited non-zero (min: the minimum log size a "too small" message
# states, about the log or about the whole filesystem).
log_geom() {
	local out=$1 rc=$2 min
	if [ "$rc" -ne 0 ]; then
		min=$(sed -n -e 's/.*minimum size is \([0-9]*\) blocks.*/\1/p' \
			-e 's/.*smaller than min log size \([0-9]*\),.*/\1/p' \
			"$out" | head -n 1)
		echo "refused${min:+:$min}"
		return
	fi
	awk '/^log +=/{ for (i = 1; i <= NF; i++)
			if ($i ~ /^blocks=/) { sub(/^blocks=/, "", $i);
				sub(/,$/, "", $i); b = $i }
		getline; for (i = 1; i <= NF; i++)
			if ($i ~ /^sunit=/) { sub(/^sunit=/, "", $i); s = $i }
		print b, s; exit }' "$out"
}

# run_case SIZE OPTIONS...: both tools on the same fresh sparse image.
# Sets OURS and THEIRS; records a mismatch.
run_case() {
	leak_check_next
	local size=$1 rc
	shift
	rm -f "$IMG"
	truncate -s "$size" "$IMG" || { fail "truncate $size"; return; }
	mkfs.xfs -N -f "$@" "$IMG" >"$T/theirs" 2>&1
	rc=$?
	THEIRS=$(log_geom "$T/theirs" "$rc")
	"$MKFS" -N -f "$@" "$IMG" >"$T/ours" 2>&1
	rc=$?
	if [ "$rc" -ge 2 ]; then
		fail "xfskit-mkfs exited $rc for $size $*:" \
			"$(head -c 300 "$T/ours")"
	fi
	OURS=$(log_geom "$T/ours" "$rc")
	NCASES=$((NCASES + 1))
	if [ -z "$THEIRS" ] || [ -z "$OURS" ]; then
		printf '%-8s %-58s %-14s %s\n' "$size" "$*" "unparsed:$OURS" \
			"unparsed:$THEIRS" >>"$MISMATCH"
	elif [ "$OURS" != "$THEIRS" ]; then
		printf '%-8s %-58s %-14s %s\n' "$size" "$*" "$OURS" \
			"$THEIRS" >>"$MISMATCH"
	fi
}

U=--unsupported

# Every block size, tiny filesystems: the log is the exact minimum.
for bs in 1024 2048 4096 8192 16384 32768 65536; do
	size=100m
	[ "$bs" -ge 32768 ] && size=280m
	for f in "$FA" "$FB" "$FC"; do
		# shellcheck disable=SC2086
		run_case "$size" $U -b size=$bs $f
	done
done
# The feature set without rmapbt but with reflink.
run_case 100m $U $FD
run_case 100m $U -b size=1024 $FD
# Inode sizes (256 is refused by both on v5) and a 64 KiB dir block.
for is in 256 512 1024 2048; do
	# shellcheck disable=SC2086
	run_case 100m $U -i size=$is $FA
done
run_case 100m $U -b size=1024 -i size=2048 $FB
run_case 100m $U -n size=65536 $FA
# The smallest filesystems, one AG, and the supported-size refusal.
for size in 16m 32m 64m; do
	# shellcheck disable=SC2086
	run_case "$size" $U $FA
	run_case "$size" $U -b size=1024 $FC
done
run_case 100m $FA
# Large sparse filesystems: size/2048 capped at the maximum log.
for size in 2g 1t 16t; do
	# shellcheck disable=SC2086
	run_case "$size" $FA
	run_case "$size" -b size=1024 $FB
done
run_case 1t -b size=65536 $FC
# Log stripe units: padding in the minimum, rounding of the size.
for su in 32k 64k 256k; do
	# shellcheck disable=SC2086
	run_case 100m $U -l su=$su $FA
	run_case 2g -l su=$su $FB
done
run_case 100m $U -b size=1024 -l su=256k $FC
run_case 100m $U -l sunit=64 $FA
run_case 100m $U -d su=64k,sw=4 $FA
run_case 2g -d su=64k,sw=4 $FB
run_case 2g -d su=256k,sw=2 $FA
run_case 2g -d su=512k,sw=2 $FA
# 4 KiB sectors: the log stripe unit becomes one block.
run_case 100m $U -s size=4096 $FA
run_case 2g -b size=8192 -s size=4096 $FC

# Explicit sizes around the minimum mkfs.xfs states.
probe_min() {
	local size=$1 min
	shift
	# 2 MiB is the smallest value -l size takes.
	run_case "$size" "$@" -l size=2m
	min=${THEIRS#refused:}
	case $min in
	''|*[!0-9]*)
		fail "mkfs.xfs states no minimum for $size $*: $THEIRS"
		return ;;
	esac
	run_case "$size" "$@" -l size=$((min - 1))b
	run_case "$size" "$@" -l size=${min}b
	case $THEIRS in
	refused*) fail "mkfs.xfs refuses its own minimum $min: $size $*" ;;
	esac
}
# shellcheck disable=SC2086
probe_min 2g $U $FA
probe_min 2g $U -b size=1024 $FA
probe_min 2g $U -b size=2048 $FC
probe_min 2g $U -b size=16384 $FB
probe_min 2g $U -i size=1024 $FD
probe_min 2g $U -l su=64k $FA
probe_min 1t $U -b size=8192 $FA

# Every reservation type, not only the largest: mkfs.xfs formats, and
# xfs_db's logres (libxfs) must print what our code computes for the
# same superblock, runtime table and minimum-log reservation alike.
LOGRES="$XK_BUILDDIR/tests/tools/xk_logres"
nres=0
for set in "2g|$FA" "2g|-b size=1024 $FB" "2g|-b size=2048 $FC" \
	"2g|-b size=8192 $FD" "2g|-b size=16384 $FA" "2g|-b size=65536 $FB" \
	"2g|-i size=2048 $FC" "2g|-n size=65536 $FA" "2g|-l su=256k $FA" \
	"2g|-s size=4096 $FB" "8g|-d agcount=64 $FA" "1t|$FA" \
	"1t|-b size=1024 $FC" "100m|--unsupported -i size=1024 $FD"; do
	size=${set%%|*}
	opts=${set#*|}
	rm -f "$IMG"
	truncate -s "$size" "$IMG"
	# shellcheck disable=SC2086
	if ! mkfs.xfs -q -f $opts "$IMG" >"$T/xout" 2>&1; then
		fail "mkfs.xfs $size $opts: $(head -3 "$T/xout")"
		continue
	fi
	xfs_db -r -c logres "$IMG" 2>/dev/null |
		sed 's/ flags 0x[0-9a-f]*$//' >"$T/xres"
	if ! "$LOGRES" "$IMG" >"$T/res" 2>&1; then
		fail "xk_logres $size $opts: $(head -3 "$T/res")"
	elif [ "$(wc -l <"$T/xres")" -lt 27 ]; then
		fail "xfs_db logres printed too little for $size $opts"
	elif ! diff -u "$T/xres" "$T/res" >"$T/d"; then
		fail "reservations differ for $size $opts: $(cat "$T/d")"
	else
		nres=$((nres + 1))
	fi
done
[ "$nres" -ge 14 ] &&
	pass "every reservation equals xfs_db's in $nres geometries"

if [ "$NCASES" -lt 40 ]; then
	fail "only $NCASES cases ran"
fi
if [ -s "$MISMATCH" ]; then
	{
		echo "log size mismatches (ours vs mkfs.xfs: blocks sunit):"
		printf '%-8s %-58s %-14s %s\n' size options ours mkfs.xfs
		cat "$MISMATCH"
	} >&2
	fail "$(wc -l <"$MISMATCH") of $NCASES cases differ"
else
	pass "log size equals mkfs.xfs in all $NCASES cases"
fi
finish
