#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The check's findings must not depend on the thread count: the inode
# scan and the per-AG space cross-checks run in parallel, and the link
# pass merges the workers' lists in place.  On a kernel-populated
# four-AG image, damage is put in several AGs and structures at once
# (directory hash index, free space btree, rmapbt, link counts, inode
# cores); for each case xfs_repair -n must find damage (the oracle says
# the case is real), and xfskit-repair -n must find it too and print the
# very same lines with -t 1, -t 2 and -t 4.
. "$XK_SRCDIR/tests/scripts/lib.sh"
. "$XK_SRCDIR/tests/scripts/populate.sh"
need_xfsprogs

base="$T/base"
mkfs_xfs_image "$base" 400m -d agcount=4 -m rmapbt=1,reflink=1 || exit 99
loop_mount "$base" || { finish; }
populate_all_formats "$MNT" || fail "populate"
# More directories, so that entries and inodes lie in every AG.
for d in 1 2 3 4 5 6 7 8; do
	mkdir -p "$MNT/spread$d"
	(cd "$MNT/spread$d" && touch $(seq -f "entry_%g" 1 300))
	head -c $((d * 5000)) /dev/zero >"$MNT/spread$d/data"
done
loop_umount || { fail "umount"; finish; }
xfs_repair -n "$base" >/dev/null 2>&1 || { fail "base image not clean"; finish; }
"$REPAIR" -n -o threads=2 "$base" >"$T/base.out" 2>&1 ||
	{ fail "base image not clean for us: $(head -3 "$T/base.out")"; finish; }

# label | xfs_db -x commands, ';'-separated; each case starts from base
CASES=(
	"leaf-hash|path /leaf;dblock 8388608;write -d lents[3].hashval 0x1234"
	"bnobt-len|agf 1;addr bnoroot;write -d recs[1].blockcount 3"
	"bnobt-start|agf 2;addr bnoroot;write -d recs[1].startblock 7"
	"rmapbt-owner|agf 3;addr rmaproot;write -d recs[4].owner 12345"
	"nlink|path /spread3/entry_7;write -d core.nlinkv2 5"
	"nlink-dir|path /spread6;write -d core.nlinkv2 9"
	"inode-magic|path /spread2/entry_9;write -d core.magic 0"
	"many|path /spread5/entry_3;write -d core.nlinkv2 0;agf 0;addr cntroot;write -d recs[1].blockcount 2;path /leaf;dblock 8388608;write -d lents[5].address 8"
)

ncases=0
for c in "${CASES[@]}"; do
	leak_check_next
	label=${c%%|*}
	cmds=${c#*|}
	img="$T/img"
	cp --sparse=always "$base" "$img"
	args=()
	IFS=';' read -ra parts <<<"$cmds"
	for p in "${parts[@]}"; do
		args+=(-c "$p")
	done
	xfs_db -x "${args[@]}" "$img" >"$T/db.out" 2>&1 ||
		{ fail "$label: xfs_db: $(head -2 "$T/db.out")"; continue; }
	if xfs_repair -n "$img" >/dev/null 2>&1; then
		echo "note: $label: xfs_repair -n finds nothing; case skipped"
		continue
	fi
	ncases=$((ncases + 1))
	for t in 1 2 4; do
		"$REPAIR" -n -o threads="$t" "$img" >"$T/t$t.out" 2>&1
		echo $? >"$T/t$t.rc"
	done
	"$REPAIR" -n -o threads=1 --json "$img" >"$T/j1.out" 2>/dev/null
	"$REPAIR" -n -o threads=4 --json "$img" >"$T/j4.out" 2>/dev/null
	if [ "$(cat "$T/t1.rc")" != 1 ]; then
		fail "$label: -t 1 exit $(cat "$T/t1.rc"), expected 1 (damage found)"
		head -5 "$T/t1.out" >&2
		continue
	fi
	ok=1
	for t in 2 4; do
		if ! cmp -s "$T/t1.out" "$T/t$t.out" ||
		   ! cmp -s "$T/t1.rc" "$T/t$t.rc"; then
			fail "$label: -t 1 and -t $t differ"
			diff "$T/t1.out" "$T/t$t.out" | head -10 >&2
			ok=0
		fi
	done
	if ! same_image "$T/j1.out" "$T/j4.out"; then
		fail "$label: --json -t 1 and -t 4 differ"
		ok=0
	fi
	[ $ok = 1 ] && pass "$label: $(grep -c . "$T/t1.out") lines, same for -t 1, 2, 4"
done
[ "$ncases" -ge 6 ] || fail "only $ncases cases damaged the image for xfs_repair"
finish
