#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Drop-in command lines: xfskit-mkfs must accept an option set exactly
# when mkfs.xfs (6.1, and 7.2 where its tree exists) accepts it, refuse
# it with the same first message line when both refuse, and, when both
# accept it, print the same geometry (-N) apart from the feature
# defaults the two choose differently (mkfs.xfs is given ours).
. "$XK_SRCDIR/tests/scripts/lib.sh"
need_xfsprogs

IMG="$T/t.img"
truncate -s 2g "$IMG"
# Our defaults that mkfs.xfs 6.1 does not share.
DEFAULTS="-m rmapbt=1 -i nrext64=1"
SETS=(
"-l lazy-count=1" "-l lazy-count=0" "-l lazy-count=2" "-l lazy-count"
"-i attr=2" "-i attr=1" "-i attr=0" "-i attr=3"
"-i projid32bit=1" "-i projid32bit=0" "-i projid32bit=2"
"-d noalign" "-d noalign=1" "-d noalign=0" "-d noalign,su=64k,sw=2"
"-d su=64k,sw=2,noalign" "-d sunit=128,swidth=256,noalign"
"-i perblock=8" "-i perblock=4" "-i perblock=16" "-i perblock=3"
"-i perblock=0" "-i perblock=64" "-i perblock=8,size=512"
"-i size=512,perblock=8" "-b size=1024 -i perblock=2"
"-b size=8192 -i perblock=4" "-n version=2" "-m crc=1" "-i align=1"
"-i attr=2,projid32bit=1 -l lazy-count=1 -d noalign"
)

# geometry OUT: the fields of a -N report both tools print alike.
geometry() {
	grep -oE '(isize|agcount|agsize|bsize|sunit|swidth|sectsz|blocks|imaxpct|naming|version|log)=[^ ,]*' "$1" |
		sort -u
}

compare_with() {
	local oracle=$1 name=$2 opts orc krc
	for opts in "${SETS[@]}"; do
		leak_check_next
		# shellcheck disable=SC2086
		env $XK_ENV $oracle -N -f $DEFAULTS $opts "$IMG" >"$T/o.out" 2>"$T/o.err"
		orc=$?
		# shellcheck disable=SC2086
		env $XK_ENV "$MKFS" -N -f $opts "$IMG" >"$T/k.out" 2>"$T/k.err"
		krc=$?
		if [ $orc -eq 0 ] && [ $krc -ne 0 ]; then
			fail "$name accepts '$opts', xfskit-mkfs refuses: $(head -1 "$T/k.err")"
		elif [ $orc -ne 0 ] && [ $krc -eq 0 ]; then
			fail "$name refuses '$opts' ($(head -1 "$T/o.err")), xfskit-mkfs accepts it"
		elif [ $orc -ne 0 ]; then
			[ $krc -eq 1 ] || fail "'$opts': xfskit-mkfs exit $krc, expected 1"
			# 7.2 says MiB where 6.1 (and we) say MB.
			[ "$(head -1 "$T/o.err" | sed 's/MiB/MB/g')" = "$(head -1 "$T/k.err")" ] ||
				fail "'$opts': $name says '$(head -1 "$T/o.err")', xfskit-mkfs '$(head -1 "$T/k.err")'"
		elif ! diff <(geometry "$T/o.out") <(geometry "$T/k.out") >"$T/g.diff"; then
			fail "'$opts': geometry differs from $name's: $(tr '\n' ' ' <"$T/g.diff")"
		fi
	done
	pass "${#SETS[@]} option sets against $name${XK_ENV:+ with $XK_ENV}"
}

# Each option set on each image, without and with fstests' exemption
# (TEST_DIR, TEST_DEV and QA_CHECK_FS set: small filesystems, one AG and
# small logs allowed); XK_ENV is what env(1) is given.  The exemption
# only bears on the small-filesystem limits, so only the sets about
# those (SMALL_SETS) run under it; the others run once per image.
compare_all() {
	local oracle=$1 name=$2 img sets
	for img in "$T/t.img" "$T/small.img"; do
		IMG=$img
		for XK_ENV in "" "TEST_DIR=/t TEST_DEV=/d QA_CHECK_FS=1" \
			"TEST_DIR=/t TEST_DEV=/d"; do
			if [ "$img" = "$T/t.img" ] && [ -z "$XK_ENV" ]; then
				sets=("${SETS[@]}" "${SMALL_SETS[@]}")
			else
				sets=("${SMALL_SETS[@]}")
			fi
			SETS_SAVED=("${SETS[@]}")
			SETS=("${sets[@]}")
			compare_with "$oracle" "$name"
			SETS=("${SETS_SAVED[@]}")
		done
	done
	XK_ENV=""
	IMG="$T/t.img"
}
truncate -s 64m "$T/small.img"
SMALL_SETS=("" "-d agcount=1" "-d agcount=1 --unsupported" "--unsupported"
	"-l size=16m" "-d agcount=1,size=48m" "-d agcount=2 -l size=20m")
XK_ENV=""

compare_all mkfs.xfs "mkfs.xfs 6.1"
if "$XFS72" dir >/dev/null 2>&1; then
	# 7.2 turns on features by default that 6.1 does not have on.
	DEFAULTS="$DEFAULTS -i exchange=0 -n parent=0"
	compare_all "$XFS72 mkfs.xfs" "mkfs.xfs $("$XFS72" mkfs.xfs -V | awk '{print $3}')"
else
	echo "note: no xfsprogs 7.2 tree; compared with 6.1 only"
fi
finish
