#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# xfskit-admin -O rmapbt=1, which no other tool can do, on an image
# mkfs.xfs 6.1 made without the reverse-mapping btree and the host
# kernel populated with every kind of owner: files made and deleted
# (inode chunks with free inodes), directories in several formats,
# reflinked copies (shared extents), preallocated ranges (unwritten
# extents), a fragmented file (a bmbt), xattrs in leaf and remote
# blocks.  The result has the feature bit, xfs_repair -n 6.1 and 7.2
# find it clean, every reverse mapping of an inode, the inode chunks,
# the headers and the log is the one xfs_repair 7.2 rebuilds on a copy
# (those of the AG btrees' own blocks, which each builder places itself,
# are left to xfs_repair -n), the kernel holds back at mount the reservation
# growth xfskit-admin printed, and the kernel runs a workload on it
# (reflinked copies) and leaves it clean.  A crash mid-upgrade leaves
# the NEEDSREPAIR mark xfs_repair completes; -z's undo file restores the
# image byte for byte.  Refusals write nothing: AGs too full for the
# rmapbt's per-AG reservation (the message gives the blocks needed),
# free space counters that disagree with the owners found, a block two
# owners claim that cannot share it, a mounted filesystem.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/admin_lib.sh"

# owners IMG: populate's files plus a reflinked copy, a preallocated
# file partly written, a fragmented file and xattrs.
owners() {
	local args=()
	populate "$1"
	loop_mount "$1" || exit 99
	cp --reflink=always "$MNT/data" "$MNT/a/data.clone" || exit 99
	xfs_io -f -c "falloc 0 2m" -c "pwrite -q 64k 64k" "$MNT/prealloc" ||
		exit 99
	for i in $(seq 0 2 160); do args+=(-c "pwrite -q $((i * 4))k 4k"); done
	xfs_io -f "${args[@]}" "$MNT/frag" || exit 99
	python3 - "$MNT" <<'PY' || exit 99
import os, sys
m = sys.argv[1]
open(m + "/xa", "w").close()
for i in range(200):
    os.setxattr(m + "/xa", "user.k%d" % i, b"v" * 60)
os.setxattr(m + "/b/g1", "user.remote", b"r" * 9000)
PY
	stat -c %i "$MNT/b/g2" >"$T/g2.ino" || exit 99
	loop_umount || exit 99
}

# rmap_recs IMG: every AG's reverse mappings as xfs_db dumps them, one
# per line ("AG startblock,blockcount,owner,offset,unwritten,attr,bmbt").
rmap_recs() {
	local a agc
	agc=$(db_get "$1" "sb 0" agcount)
	for a in $(seq 0 $((agc - 1))); do
		xfs_db -r -c "agf $a" -c "addr rmaproot" -c btdump "$1" 2>&1 |
			awk -v ag="$a" '/^recs\[/ { r = 1; next }
				/^[a-z]/ { r = 0 }
				r && /^[0-9]+:\[/ { sub(/^[0-9]+:\[/, ""); sub(/\].*/, "");
						    print ag, $0 }'
	done
}

# fixed RECS: the records of every owner but the AG btrees and free list
# (-5 AG, -6 inode btrees, -8 refcountbt), whose blocks each builder
# places and fills itself (xfs_repair leaves slack in its leaves and
# puts more blocks on the free list); xfs_repair -n checks those records
# against the trees it finds.
fixed() {
	awk -F'[ ,]' '!($4 == -5 || $4 == -6 || $4 == -8)' "$1"
}

IMG="$T/rm.img"
mkimg "$IMG" 128m -l size=16m -m rmapbt=0,reflink=1
owners "$IMG"
cp --sparse=always "$IMG" "$T/rm0.img" || exit 99
kernel_resv "$IMG"
r0=$KRESV
if "$ADMIN" -O rmapbt=1 "$IMG" >"$T/k.out" 2>&1; then
	case "$(xfs_db -r -c version "$IMG")" in
	*RMAPBT*) pass "rmapbt=1: xfs_db shows RMAPBT" ;;
	*) fail "rmapbt=1: xfs_db's version: $(xfs_db -r -c version "$IMG")" ;;
	esac
	if clean "$IMG" "rmapbt=1"; then
		pass "rmapbt=1: xfs_repair -n 6.1 and 7.2 clean"
		repaired72 "$IMG" "$T/rm72.img" "rmapbt=1"
		rmap_recs "$IMG" >"$T/rmap.k"
		rmap_recs "$T/rm72.img" >"$T/rmap.72"
		n=$(wc -l <"$T/rmap.k")
		nino=$(awk -F'[ ,]' '$4 > 0' "$T/rmap.k" | wc -l)
		# Every kind of owner is there: the log (-4), inode chunks (-7),
		# unwritten data, attr fork blocks, bmbt blocks, shared blocks.
		kinds=$(awk -F'[ ,]' '$4 == -4 { k["log"] = 1 } $4 == -7 { k["chunks"] = 1 }
			$4 > 0 && $6 == 1 { k["unwritten"] = 1 } $4 > 0 && $7 == 1 { k["attr"] = 1 }
			$4 > 0 && $8 == 1 { k["bmbt"] = 1 }
			$4 > 0 { if (($1 " " $2) in s) k["shared"] = 1; s[$1 " " $2] = 1 }
			END { n = 0; for (x in k) n++; print n }' "$T/rmap.k")
		if [ "$nino" -lt 100 ] || [ "$kinds" != 6 ]; then
			fail "rmapbt=1: $nino inode-owned reverse mappings, $kinds of 6 kinds of owner (log, chunks, unwritten, attr, bmbt, shared): $(head -5 "$T/rmap.k")"
		elif ! diff <(fixed "$T/rmap.72") <(fixed "$T/rmap.k") >"$T/rmap.diff"; then
			fail "rmapbt=1: reverse mappings differ from xfs_repair 7.2's rebuild (< 7.2, > ours): $(head -8 "$T/rmap.diff")"
		else
			pass "rmapbt=1: the $n reverse mappings ($nino of inodes) are those xfs_repair 7.2 rebuilds"
		fi
		resv_checked "$IMG" "rmapbt=1" "$r0"
		workload "$IMG" "rmapbt=1" reflink
	fi
else
	fail "rmapbt=1: $(cat "$T/k.out")"
fi

undo_and_crash "$T/rm0.img" rmapbt 2 10

# --- refusals ---
# Free space counters that disagree with the owners found: AG 1's AGF
# says one block more is free than its free space btrees hold.
cp --sparse=always "$T/rm0.img" "$T/k.img" || exit 99
fb=$(db_get "$T/k.img" "agf 1" freeblks)
xfs_db -x -c "agf 1" -c "write freeblks $((fb + 1))" "$T/k.img" >/dev/null 2>&1 || exit 99
unchanged "rmapbt=1, AGF free count off by one" 1 "AG 1: .* does not match the owners" -O rmapbt=1 "$T/k.img"

# A block with two owners that cannot share it: g2's data extent moved
# onto the block of its own inode (its old block compensated in the AGF's
# free count, so that only the owners disagree).
cp --sparse=always "$T/rm0.img" "$T/k.img" || exit 99
ino=$(cat "$T/g2.ino")
old=$(xfs_db -r -c "inode $ino" -c "print u3.bmx[0].startblock" "$T/k.img" | sed -n 's/.* = //p')
ibno=$((ino >> $(db_get "$T/k.img" "sb 0" inopblog)))
oag=$((old >> $(db_get "$T/k.img" "sb 0" agblklog)))
fb=$(db_get "$T/k.img" "agf $oag" freeblks)
xfs_db -x -c "inode $ino" -c "write u3.bmx[0].startblock $ibno" \
	-c "agf $oag" -c "write freeblks $((fb + 1))" "$T/k.img" >/dev/null 2>&1 || exit 99
unchanged "rmapbt=1, a file block on its inode's block" 1 "block [0-9]+ has two owners" -O rmapbt=1 "$T/k.img"

# AGs that cannot keep the rmapbt's reservation (1% of the AG at least)
# free: filled by the kernel with its reserve pool emptied.
mkimg "$T/full.img" 1g -m rmapbt=0 -d agcount=2 -l size=16m
fill_ags "$T/full.img"
unchanged "rmapbt=1 on full AGs" 1 "AG [0-9]+ lacks space: .*rmapbt needs [0-9]+ blocks .* [0-9]+ more blocks" -O rmapbt=1 "$T/full.img"

# Mounted.
cp --sparse=always "$T/rm0.img" "$T/k.img" || exit 99
if loop_mount "$T/k.img"; then
	MOUNTED=1 unchanged "mounted, rmapbt=1" 2 "mounted" -O rmapbt=1 "$T/k.img"
	loop_umount || fail "umount failed"
fi

finish
