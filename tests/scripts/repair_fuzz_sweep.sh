#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Repair held to xfs_repair over a fuzz sweep (issue 20): xfs_db fuzz
# with every verb (zeroes, ones, firstbit, middlebit, lastbit, add,
# sub) over every field of the inode core, the data fork and the attr
# fork of inodes of each kind, on a kernel-populated image (populate.sh).
# (By default a small tree with the few inodes the default cases fuzz.)
# For each case one copy is repaired by xfskit-repair, one by xfs_repair
# (again while it still finds something).  Checked:
#  - after ours, xfs_repair -n is clean;
#  - what ours keeps includes what xfs_repair keeps: every entry (path,
#    type, content) and every xattr (name, value) of an xfs_repair result
#    that xfs_repair -n calls clean (images are mounted only then).
# A case neither xfs_repair -n nor ours -n finds anything in is counted
# as undetected and not repaired.  xfs_db's "random" verb is left out:
# it is not seeded, and the sweep must make the same cases every run.
#
# By default a fixed handful of cases runs (the suite's time); with
# XK_TEST_LONG=1 the whole sweep (every field of every target with every
# verb; hours), XK_SWEEP_TARGETS=a,b to choose targets and
# XK_SWEEP_FIELDS=REGEX (grep -E) to choose fields.  The
# table and the totals are printed; a case where ours is worse fails.
. "$XK_SRCDIR/tests/scripts/lib.sh"
. "$XK_SRCDIR/tests/scripts/populate.sh"
. "$XK_SRCDIR/tests/scripts/repair_lib.sh"
need_xfsprogs
[ "$(id -u)" -eq 0 ] || skip "populating and walking images needs root (loop mount)"
command -v getfattr >/dev/null || skip "getfattr (attr package) not installed"

img="$T/base.img"
truncate -s 300m "$img"
mkfs.xfs -q -f "$img" || { echo "mkfs.xfs failed" >&2; exit 99; }
loop_mount "$img" || exit 99
if [ "${XK_TEST_LONG:-0}" = 1 ]; then
	populate_all_formats "$MNT" || { echo "populate failed" >&2; exit 99; }
else
	# What the few cases below fuzz, and a tree beside them.
	mkdir -p "$MNT/sf" "$MNT/attrs" "$MNT/block" "$MNT/leaf"
	touch "$MNT/sf/a" "$MNT/sf/b" "$MNT/attrs/sf" "$MNT/attrs/leaf" "$MNT/attrs/leaf2"
	(cd "$MNT/block" && touch $(seq -f "file_%g" 1 40))
	(cd "$MNT/leaf" && touch $(seq -f "a_longer_name_for_a_leaf_directory_%g" 1 150))
	head -c 3000 /dev/urandom >"$MNT/small"
	xfs_io -f -c "pwrite -b 64k 0 1m" "$MNT/extents" >/dev/null
	python3 - "$MNT/attrs" <<'EOF' || { echo "setxattr failed" >&2; exit 99; }
import os, sys
d = sys.argv[1]
for n, v in (("user.a", b"1"), ("trusted.t", b"x"), ("security.s", b"y")):
    os.setxattr(d + "/sf", n, v)
for i in range(1, 31):
    os.setxattr(d + "/leaf", "user.attr_%d" % i, b"value_%d" % i)
    os.setxattr(d + "/leaf2", "user.other_%d" % i, b"other_%d" % i)
EOF
fi
loop_umount
xfs_repair -n "$img" >/dev/null 2>&1 || { echo "base image not clean" >&2; exit 99; }

kept "$img" "$T/base.kept"
total=$(wc -l <"$T/base.kept")
[ "$total" -gt 0 ] || { echo "the base image does not mount" >&2; exit 99; }

# target name|path: the inodes whose fields are fuzzed.
TARGETS=(
	"reg|/small"
	"extents|/extents"
	"bmbt|/bmbt"
	"sfdir|/sf"
	"blockdir|/block"
	"leafdir|/leaf"
	"nodedir|/node"
	"symlink|/links/long"
	"shortlink|/links/short"
	"dev|/links/cdev"
	"sfattr|/attrs/sf"
	"leafattr|/attrs/leaf"
	"nodeattr|/attrs/node"
	"rmtattr|/attrs/remote"
	"btreeattr|/attrs/btree"
)
VERBS=(zeroes ones firstbit middlebit lastbit add sub)

# Fields of the inode at PATH: the core (core.*, v3.*, next_unlinked),
# the data fork (u3) and the attr fork (a), without the CRC (its fuzz is
# a CRC error, not a field).  An array printed as "X[a-b] = [f,g]" (an
# extent list, bmbt keys) gives X[i].f and X[i].g for each i, one printed
# as "X[a-b] =" with values below (bmbt pointers) X[i].
fields_of() {
	xfs_db -r -c "path $1" -c inode -c print "$img" 2>/dev/null |
		awk '/^((core|v3|u3|a)\.[^ ]*|next_unlinked) = / {
			name = $1; val = $0; sub(/^[^=]*= /, "", val)
			if (name ~ /\.crc$/) next
			if (match(name, /\[[0-9]+(-[0-9]+)?\]$/) && val ~ /^\[[a-z,]+\] *$/) {
				base = substr(name, 1, RSTART - 1)
				split(substr(name, RSTART + 1, RLENGTH - 2), r, "-")
				if (r[2] == "") r[2] = r[1]
				gsub(/[][ ]/, "", val); nf = split(val, f, ",")
				for (i = r[1]; i <= r[2]; i++)
					for (j = 1; j <= nf; j++)
						print base "[" i "]." f[j]
				next
			}
			if (match(name, /\[[0-9]+-[0-9]+\]$/)) {
				base = substr(name, 1, RSTART - 1)
				split(substr(name, RSTART + 1, RLENGTH - 2), r, "-")
				for (i = r[1]; i <= r[2]; i++)
					print base "[" i "]"
				next
			}
			print name
		}' | awk '!seen[$0]++'
}

printf '%-10s %-26s %-10s %-7s %-7s %-6s %s\n' TARGET FIELD VERB OURS XFS_REP XR-N RESULT >"$T/table"
cases=0 undetected=0 better=0 same=0 allkept=0 worse=0 unclean=0 noop=0
# run_case TARGET PATH FIELD VERB
run_case() {
	local tgt=$1 path=$2 field=$3 verb=$4 rc on xn xr ours theirs res
	cp --sparse=always "$img" "$T/a.img"
	case $verb in
	=*) xfs_db -x -c "path $path" -c inode -c "write -d $field ${verb#=}" "$T/a.img" >/dev/null 2>&1 ;;
	*) xfs_db -x -c "path $path" -c inode -c "fuzz -d $field $verb" "$T/a.img" >/dev/null 2>&1 ;;
	esac
	if same_image "$img" "$T/a.img"; then
		noop=$((noop + 1))
		return
	fi
	cases=$((cases + 1))
	leak_check_sampled "$cases"
	xfs_repair -n "$T/a.img" >/dev/null 2>&1; xn=$?
	"$REPAIR" -n "$T/a.img" >/dev/null 2>&1; on=$?
	if [ $xn -eq 0 ] && [ $on -eq 0 ]; then
		undetected=$((undetected + 1))
		return
	fi
	cp --sparse=always "$T/a.img" "$T/x.img"
	"$REPAIR" "$T/a.img" >"$T/ours.out" 2>&1; rc=$?
	xfs_repair -n "$T/a.img" >"$T/xrn.out" 2>&1; xr=$?
	if [ $xr -eq 0 ]; then
		kept "$T/a.img" "$T/ours.kept"
	else
		: >"$T/ours.kept"
	fi
	ours=$(comm -12 "$T/base.kept" "$T/ours.kept" | wc -l)
	# Where ours kept everything, xfs_repair cannot keep more: its
	# result is measured only otherwise (and always in the long run).
	if [ "$ours" -lt "$total" ] || long_tests; then
		# As an administrator would: again while it still finds something.
		if xfs_repair_admin "$T/x.img"; then
			kept "$T/x.img" "$T/theirs.kept"
		else
			: >"$T/theirs.kept"
		fi
		theirs=$(comm -12 "$T/base.kept" "$T/theirs.kept" | wc -l)
	else
		cp "$T/ours.kept" "$T/theirs.kept"
		theirs=-
	fi
	comm -12 "$T/base.kept" "$T/theirs.kept" | comm -23 - "$T/ours.kept" >"$T/lost"
	# An xattr the image never had (another inode's, read through a
	# wrong map) must not appear.
	grep '^xattr ' "$T/ours.kept" | comm -23 - "$T/base.kept" >"$T/invented"
	if [ $rc -ne 0 ] || [ $xr -ne 0 ]; then
		res=UNCLEAN; unclean=$((unclean + 1))
		fail "$tgt $field $verb: ours exit $rc, xfs_repair -n after ours exit $xr: $(grep -iE 'bad|would|corrupt|invalid' "$T/xrn.out" | head -2 | tr '\n' ' ')"
	elif [ -s "$T/invented" ]; then
		res=INVENTED; worse=$((worse + 1))
		fail "$tgt $field $verb: ours has $(wc -l <"$T/invented") xattrs the image never had: $(head -2 "$T/invented" | cut -c1-80 | tr '\n' ' ')"
	elif [ -s "$T/lost" ]; then
		res=WORSE; worse=$((worse + 1))
		fail "$tgt $field $verb: xfs_repair keeps $(wc -l <"$T/lost") things ours loses: $(head -3 "$T/lost" | cut -c1-80 | tr '\t\n' '  ')"
	elif [ "$theirs" = - ]; then
		res=all-kept; allkept=$((allkept + 1))
	elif [ "$ours" -gt "$theirs" ]; then
		res=better; better=$((better + 1))
	else
		res=same; same=$((same + 1))
	fi
	printf '%-10s %-26s %-10s %-7s %-7s %-6s %s\n' "$tgt" "$field" "$verb" "$ours" "$theirs" "$xr" "$res" >>"$T/table"
	# The long sweep shows its progress as it goes.
	[ "${XK_TEST_LONG:-0}" = 1 ] && tail -1 "$T/table"
	return 0
}

if [ "${XK_TEST_LONG:-0}" = 1 ]; then
	want=${XK_SWEEP_TARGETS:-}
	for t in "${TARGETS[@]}"; do
		tgt=${t%%|*} path=${t#*|}
		[ -n "$want" ] && [[ ",$want," != *",$tgt,"* ]] && continue
		mapfile -t fields < <(fields_of "$path" | grep -E -- "${XK_SWEEP_FIELDS:-.}")
		[ ${#fields[@]} -gt 0 ] || { fail "$tgt: no fields found at $path"; continue; }
		for f in "${fields[@]}"; do
			for v in "${VERBS[@]}"; do
				run_case "$tgt" "$path" "$f" "$v"
			done
		done
	done
else
	# A fixed few: issue 20's reproduction (an attr extent counter of
	# all ones), a fork offset, a data fork format and extent count, a
	# short-form attr count, a short-form directory's entry, and a leaf
	# directory's extent count zeroed (its map lost: xfs_repair clears
	# it and orphans its entries).
	run_case reg /small core.naextents ones
	run_case leafattr /attrs/leaf core.forkoff middlebit
	run_case extents /extents core.nextents add
	run_case sfattr /attrs/sf a.sfattr.hdr.count firstbit
	run_case sfdir /sf u3.sfdir3.list[0].namelen lastbit
	run_case leafdir /leaf core.nextents zeroes
	# An attr fork's extent moved onto another file's data (that file
	# keeps its blocks: the damaged fork loses them), and onto another
	# inode's attr leaf (whose xattrs must not move over).
	fsb_of() {
		xfs_db -r -c "path $1" -c "bmap ${2:-}" "$img" | sed -n 's/.* startblock \([0-9]*\) .*/\1/p' | head -1
	}
	run_case leafattr /attrs/leaf a.bmx[0].startblock "=$(fsb_of /small)"
	run_case leafattr /attrs/leaf a.bmx[0].startblock "=$(fsb_of /attrs/leaf2 -a)"
fi
[ "${XK_TEST_LONG:-0}" = 1 ] || cat "$T/table"
echo "sweep: $cases cases ($noop no-op fuzzes skipped); undetected by both $undetected; ours keeps more $better, the same $same, everything (xfs_repair not run) $allkept, less $worse; not clean after ours $unclean (of $total entries and xattrs)"
[ $cases -gt 0 ] || fail "no case ran"
finish
