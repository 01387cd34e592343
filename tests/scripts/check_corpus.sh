#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The corruption corpus: on a kernel-populated image, xfs_db -x fuzzes the
# fields of every metadata type (deterministic verbs, so every run makes
# the same cases), one case at a time, restoring the block in between.
# Then blocktrash flips random bits (fixed seeds) in blocks of each type.
# For each case xfskit-repair -n and xfs_repair -n (6.1, and 7.2 where
# scripts/xfsprogs-sid has its tree, wherever 6.1 or we detect nothing)
# each say whether they found damage; where we detect, theirs cannot
# change the verdict and run only under XK_TEST_LONG=1 (full table).
# The test prints the table and fails on any case that either xfs_repair
# -n detects and we do not, and on any crash.  Cases only we
# detect are listed for review.
#
# Each type contributes a sample of its fields spread over the whole
# structure (XK_CORPUS_CAP of them, 7 by default), each field one verb,
# the verbs taking turns along a type's fields (so each type meets them
# all); XK_TEST_LONG=1 (or the older XK_CORPUS_FULL=1) tries every verb
# on every field (slow: many minutes).
. "$XK_SRCDIR/tests/scripts/lib.sh"
. "$XK_SRCDIR/tests/scripts/populate.sh"
need_xfsprogs
have_xfs72 || true

img="$T/img"
mkfs_xfs_image "$img" 400m -m rmapbt=1,reflink=1 || exit 99
if [ "$(id -u)" -eq 0 ] && loop_mount "$img" 2>/dev/null; then
	populate_all_formats "$MNT" || fail "populate"
	loop_umount || { fail "umount"; finish; }
	dig_holes "$img"
else
	echo "note: no loop mount here; the corpus covers mkfs.xfs metadata only"
fi
xfs_repair -n "$img" >/dev/null 2>&1 || { fail "base image not clean for xfs_repair 6.1"; finish; }
xfs_repair_n72 "$img" "$T/xr72.out" ||
	{ fail "base image not clean for xfs_repair 7.2: $(grep -v '^Phase\|^  *-' "$T/xr72.out" | head -5)"; finish; }
"$REPAIR" -n "$img" >"$T/base.out" 2>&1 || { fail "base image not clean for us: $(head -5 "$T/base.out")"; finish; }

# label | xfs_db commands (;-separated) that reach the object
TYPES=(
	"sb0|sb 0"
	"sb1|sb 1"
	"agf|agf 1"
	"agi|agi 1"
	"agfl|agfl 1"
	"bnobt|agf 0;addr bnoroot"
	"cntbt|agf 0;addr cntroot"
	"rmapbt|agf 0;addr rmaproot"
	"refcountbt|agf 0;addr refcntroot"
	"inobt|agi 0;addr root"
	"finobt|agi 0;addr free_root"
	"inode-reg|path /small"
	"inode-extents|path /extents"
	"inode-btree|path /bmbt"
	"inode-sfdir|path /sf"
	"inode-blockdir|path /block"
	"inode-nodedir|path /node"
	"inode-symlink|path /links/long"
	"inode-dev|path /links/cdev"
	"inode-sfattr|path /attrs/sf"
	"inode-root|sb 0;addr rootino"
	"bmbt|path /bmbt;addr u3.bmbt.ptrs[1]"
	"bmbt-attr|path /attrs/btree;addr a.bmbt.ptrs[1]"
	"inode-attrbtree|path /attrs/btree"
	"dir-block|path /block;dblock 0"
	"dir-data|path /leaf;dblock 0"
	"dir-leaf1|path /leaf;dblock 8388608"
	"dir-node|path /node;dblock 8388608"
	"dir-free|path /node;dblock 16777216"
	"attr-leaf|path /attrs/leaf;ablock 0"
	"attr-node|path /attrs/node;ablock 0"
	"attr-remote|path /attrs/remote;ablock 1"
	"symlink|path /links/long;dblock 0"
)
VERBS=(zeroes ones firstbit middlebit lastbit "add 1" "sub 1")
CAP=${XK_CORPUS_CAP:-7}
long_tests && XK_CORPUS_FULL=1

nav_args() {
	local IFS=';'
	NAV=()
	for c in $1; do NAV+=(-c "$c"); done
}

# Names of the fuzzable fields of the current object.
fields_of() {
	xfs_db -r "${NAV[@]}" -c print "$img" 2>/dev/null |
	sed -n 's/^\([a-zA-Z0-9_.]*\(\[[0-9]*\]\)\{0,1\}[a-zA-Z0-9_.]*\) = .*/\1/p' |
	grep -vE '(^|\.)crc$|uuid|^recs$|^keys$|^ptrs$' | awk '!seen[$0]++'
	# The first record/key/pointer of btree blocks.
	xfs_db -r "${NAV[@]}" -c print "$img" 2>/dev/null |
	sed -n 's/^\(recs\|keys\|ptrs\)\[1[-0-9]*\] = \[\([a-z,]*\)\].*/\1 \2/p' |
	while read -r arr names; do
		for n in ${names//,/ }; do echo "$arr[1].$n"; done
	done
	xfs_db -r "${NAV[@]}" -c print "$img" 2>/dev/null |
	sed -n 's/^ptrs\[1[-0-9]*\] = .*/ptrs[1]/p'
}

total=0; both=0; theirs_only=0; ours_only=0; neither=0; crashes=0
ours_unjudged=0
only61=0; only72=0

# theirs IMG: "6.1-exit 7.2-exit" of xfs_repair -n on IMG ("-" for a
# version that is missing).
# theirs IMG OUR_EXIT: "6.1-exit 7.2-exit" ("-" for one not run).  A
# case fails only when an xfs_repair detects what we do not, so where we
# detect, their answers cannot decide anything: by default they are
# left out there for the suite's time (the table then says "-"), and
# run under long_tests for the full table.  7.2 runs where we or 6.1
# detect nothing.
theirs() {
	local a=- b=-
	if [ "$2" -ne 0 ] && ! long_tests; then
		echo "- -"
		return
	fi
	xfs_repair -n "$1" >/dev/null 2>&1; a=$?
	if have_xfs72 >/dev/null 2>&1 && { [ $a -eq 0 ] || [ "$2" -eq 0 ]; }; then
		xfs72 xfs_repair -n "$1" >/dev/null 2>&1; b=$?
	fi
	echo "$a $b"
}

# record LABEL CASE VERB "XFS_REPAIR_EXITS" OUR_EXIT: one row of the table.
record() {
	local label=$1 what=$2 verb=$3 xr=${4% *} xr72=${4#* } us=$5 od xd xd72 who
	total=$((total + 1))
	case $us in
	0) od=no ;; 1|4) od=yes ;;
	*) od="CRASH($us)"; crashes=$((crashes + 1))
	   fail "$label $what $verb: exit $us: $(head -c 600 "$T/ours.out")" ;;
	esac
	case $xr in -) xd=- ;; 0) xd=no ;; *) xd=yes ;; esac
	case $xr72 in -) xd72=- ;; 0) xd72=no ;; *) xd72=yes ;; esac
	printf '%-16s %-28s %-10s %-8s %-8s %-8s\n' "$label" "$what" "$verb" "$xd" "$xd72" "$od" >>"$T/table"
	[ "$xd" = yes ] && [ "$xd72" = no ] && only61=$((only61 + 1))
	[ "$xd" = no ] && [ "$xd72" = yes ] && only72=$((only72 + 1))
	who=""
	[ "$xd" = yes ] && who="6.1"
	[ "$xd72" = yes ] && who="${who:+$who and }7.2"
	if [ -n "$who" ] && [ $od = yes ]; then both=$((both + 1))
	elif [ -n "$who" ]; then theirs_only=$((theirs_only + 1))
		fail "missed: $label $what $verb (xfs_repair -n $who detects it)"
	elif [ $od = yes ] && [ "$xd" = - ]; then ours_unjudged=$((ours_unjudged + 1))
	elif [ $od = yes ]; then ours_only=$((ours_only + 1))
		echo "only ours: $label $what $verb: $(head -1 "$T/ours.out")"
	else neither=$((neither + 1)); fi
}
printf '%-16s %-28s %-10s %-8s %-8s %-8s\n' TYPE FIELD VERB XR_6.1 XR_7.2 OURS >"$T/table"
for t in "${TYPES[@]}"; do
	label=${t%%|*}
	nav_args "${t#*|}"
	loc=$(xfs_db -r "${NAV[@]}" -c stack "$img" 2>/dev/null | sed -n 's/.*byte offset \([0-9]*\), length \([0-9]*\).*/\1 \2/p' | tail -1)
	if [ -z "$loc" ]; then
		fail "$label: xfs_db cannot reach the object"
		continue
	fi
	read -r off len <<<"$loc"
	dd if="$img" of="$T/orig" bs="$len" skip="$off" count=1 iflag=skip_bytes 2>/dev/null
	mapfile -t all < <(fields_of)
	# CAP fields spread evenly over the structure, first and last
	# included; every field in the full run.
	fields=()
	if [ "${XK_CORPUS_FULL:-0}" = 1 ] || [ ${#all[@]} -le "$CAP" ]; then
		fields=("${all[@]}")
	else
		for ((k = 0; k < CAP; k++)); do
			fields+=("${all[$((CAP > 1 ? k * (${#all[@]} - 1) / (CAP - 1) : 0))]}")
		done
	fi
	vi=${#label}
	for field in "${fields[@]}"; do
		if [ "${XK_CORPUS_FULL:-0}" = 1 ]; then
			verbs=("${VERBS[@]}")
		else
			verbs=("${VERBS[$((vi % ${#VERBS[@]}))]}")
			vi=$((vi + 1))
		fi
		for verb in "${verbs[@]}"; do
			xfs_db -x "${NAV[@]}" -c "fuzz -d $field $verb" "$img" >/dev/null 2>&1
			dd if="$img" of="$T/now" bs="$len" skip="$off" count=1 iflag=skip_bytes 2>/dev/null
			same_image "$T/orig" "$T/now" && continue	# a no-op fuzz
			leak_check_sampled "$total"
			"$REPAIR" -n "$img" >"$T/ours.out" 2>&1; us=$?
			xr=$(theirs "$img" $us)
			dd if="$T/orig" of="$img" bs="$len" seek="$off" oflag=seek_bytes conv=notrunc 2>/dev/null
			record "$label" "$field" "$verb" "$xr" $us
		done
	done
done
# blocktrash: bits flipped at random (fixed seeds) in blocks of each type,
# each case on a fresh copy.
for type in sb btbno btcnt btino btfino btrmap inode dir attr symlink; do
	for seed in 1 2; do
		cp --sparse=always "$img" "$T/bt"
		msg=$(xfs_db -x -c blockget -c "blocktrash -s $seed -n 2 -2 -x 1 -y 64 -t $type" "$T/bt" 2>&1 | tail -1)
		case $msg in *flipped*) ;; *) continue ;; esac
		leak_check_sampled "$total"
		"$REPAIR" -n "$T/bt" >"$T/ours.out" 2>&1; us=$?
		xr=$(theirs "$T/bt" $us)
		record "trash-$type" "seed $seed" "-" "$xr" $us
	done
done
rm -f "$T/bt"

[ "${XK_CORPUS_TABLE:-0}" = 1 ] && cat "$T/table"
echo "corpus: $total cases; both detect $both; only xfs_repair $theirs_only; only ours $ours_only; neither $neither; crashes $crashes; we detect, xfs_repair not run (XK_TEST_LONG=1 runs it) $ours_unjudged"
have_xfs72 >/dev/null 2>&1 &&
	echo "xfs_repair versions (7.2 run where 6.1 or we detect nothing): $only61 cases only 6.1 detects, $only72 only 7.2 detects"
[ $total -ge 100 ] || fail "only $total corpus cases ran"
# The image must be back to clean after all the restores.
"$REPAIR" -n "$img" >/dev/null 2>&1 || fail "image not restored cleanly"
finish
