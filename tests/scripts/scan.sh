#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The device scan (xfskit-db scan), at two geometries, on a kernel-
# populated image that holds, as regular files, another XFS image and a
# byte copy of its own image made earlier (same UUID): the index equals
# what xfs_db says of the filesystem (every btree block btdump walks, the
# inobt's inodes, every directory, attribute, symlink and bmbt block the
# rmapbt names, a big directory's bmap) and takes no block from either
# image file, whose candidates are all rejected for their address (the
# copy) or their UUID (the other).  Then bad input: an injected read
# error mid-scan changes nothing but the report; a truncated device and
# garbage give a clear error, no crash.
. "$XK_SRCDIR/tests/scripts/lib.sh"
need_xfsprogs
[ "$(id -u)" -eq 0 ] || skip "populating images needs root (loop mount)"
command -v python3 >/dev/null || skip "python3 is not installed"

other=$T/other.img
big_dir_entries=3000

# Another filesystem, populated by the kernel, to store as a file.
mkfs_xfs_image "$other" 300m -m rmapbt=1 || { fail "mkfs.xfs other"; finish; }
loop_mount "$other" || finish
mkdir "$MNT/d" && (cd "$MNT/d" && seq -f "inner_entry_%06g" 1 800 | xargs touch) ||
	fail "populate the inner image"
loop_umount || { fail "umount"; finish; }

# scan_case LABEL MKFS-OPTIONS...: an image made with those options,
# populated by the kernel, holding the other image and a copy of its own
# earlier self; its scan checked against xfs_db.  Leaves it in $img.
scan_case() {
	label=$1
	shift
	D=$T/$label
	mkdir -p "$D"
	# (mkfs_xfs_image sets img: name it after the call.)
	mkfs_xfs_image "$D/outer.img" 400m "$@" || { fail "[$label] mkfs.xfs $*"; return 1; }
	img=$D/outer.img
	loop_mount "$img" || return 1
	mkdir "$MNT/big" &&
		(cd "$MNT/big" && seq -f "a_rather_long_directory_entry_name_%06g" 1 $big_dir_entries | xargs touch) ||
		fail "[$label] populate the big directory"
	loop_umount || { fail "[$label] umount"; return 1; }
	# The byte copy of this filesystem's own image, same UUID, sparse.
	cp --sparse=always "$img" "$D/self.img" || { fail "[$label] copy the image"; return 1; }

	loop_mount "$img" || return 1
	{
		mkdir "$MNT/x" &&
		seq 1 40 | while read -r i; do setfattr -n "user.attr_$i" -v "value_$i" "$MNT/x" || exit 1; done &&
		touch "$MNT/x/remote" &&
		setfattr -n user.remote -v "$(head -c 6000 /dev/zero | tr '\0' r)" "$MNT/x/remote" &&
		ln -s "$(printf 'component_%04d/' $(seq 1 60))" "$MNT/x/longlink" &&
		xfs_io -f -c "pwrite -q 0 4m" -c fsync "$MNT/x/fragmented" &&
		for off in $(seq 0 8192 4194303); do echo "fpunch $off 4096"; done |
			xfs_io "$MNT/x/fragmented" >/dev/null &&
		cp --sparse=always "$D/self.img" "$MNT/self.img" &&
		cp --sparse=always "$other" "$MNT/other.img" &&
		mkdir "$MNT/more" && (cd "$MNT/more" && seq -f "m%05g" 1 400 | xargs touch)
	} || fail "[$label] populate the outer image"
	{
		find "$MNT" -xdev -type d -printf '%i d\n'
		find "$MNT" -xdev -type l -printf '%i l\n'
		stat -c '%i inner-self' "$MNT/self.img"
		stat -c '%i inner-other' "$MNT/other.img"
	} >"$D/inodes"
	stat -c %i "$MNT/big" >"$D/bigdir"
	loop_umount || { fail "[$label] umount"; return 1; }
	xfs_repair_clean "$img" "$D/xr.out" ||
		{ fail "[$label] xfs_repair -n says the kernel's image is not clean: $(cat "$D/xr.out")"; return 1; }

	# What xfs_db says.
	xfs_db -r -c "sb 0" -c "print agblocks agcount blocksize inodesize dirblklog agblklog inopblog" "$img" |
		awk '{ printf "%s ", $3 } END { print "" }' >"$D/geom"
	agcount=$(db_get "$img" "sb 0" agcount)
	for ((ag = 0; ag < agcount; ag++)); do
		for t in bnobt:bnoroot cntbt:cntroot rmapbt:rmaproot refcntbt:refcntroot; do
			xfs_db -r -c "agf $ag" -c "addr ${t#*:}" -c btdump "$img" >"$D/bt.${t%%:*}.$ag" 2>&1
		done
		for t in inobt:root finobt:free_root; do
			xfs_db -r -c "agi $ag" -c "addr ${t#*:}" -c btdump "$img" >"$D/bt.${t%%:*}.$ag" 2>&1
		done
	done
	xfs_db -r -c "inode $(cat "$D/bigdir")" -c bmap "$img" >"$D/bigdir.bmap"

	# The scan, twice: with -T 1 and with threads; the same listing.
	"$DB" -r -c "scan -r -T 1" "$img" >"$D/scan.txt" 2>"$D/scan.err" ||
		{ fail "[$label] scan failed: $(head "$D/scan.err")"; return 1; }
	"$DB" -r -c "scan -r -T 3 -m 1" "$img" >"$D/scan3.txt" 2>"$D/scan3.err" ||
		fail "[$label] scan with threads and -m failed: $(head "$D/scan3.err")"
	cmp -s "$D/scan.txt" "$D/scan3.txt" ||
		fail "[$label] the listing with 3 threads and spilling differs from 1 thread: $(diff "$D/scan.txt" "$D/scan3.txt" | head)"
	python3 "$XK_SRCDIR/tests/scripts/scan_check.py" "$D" >"$D/check.out"
	st=$?
	sed "s/^\([A-Za-z]*:\) /\1 [$label] /" "$D/check.out"
	[ $st -eq 0 ] || fail "[$label] the scan's index differs from xfs_db's view (above)"

	# One type and owner (looked up in the index) as in the whole list.
	bigino=$(cat "$D/bigdir")
	"$DB" -r -c "scan -t dir3-data -o $bigino" "$img" | tail -n +2 >"$D/one"
	awk -v o="$bigino" '$1 == "dir3-data" && $5 == o && $8 == "ok"' "$D/scan.txt" >"$D/one.want"
	[ -s "$D/one" ] && cmp -s "$D/one" "$D/one.want" ||
		fail "[$label] scan -t dir3-data -o $bigino: $(diff "$D/one.want" "$D/one" | head -5)"

	# The counts agree with the listing, and reading wrote nothing.
	"$DB" -r -c "scan -c" "$img" >"$D/counts" 2>&1 || fail "[$label] scan -c failed: $(cat "$D/counts")"
	n_ok=$(awk '$1 == "total" { print $2 }' "$D/counts")
	n_addr=$(awk '$1 == "total" { print $4 }' "$D/counts")
	[ "$n_ok" = "$(awk 'NR > 1 && $8 == "ok"' "$D/scan.txt" | wc -l)" ] ||
		fail "[$label] scan -c counts $n_ok accepted, the listing has other: $(cat "$D/counts")"
	[ "${n_addr:-0}" -gt 0 ] || fail "[$label] no wrong-address rejection counted: $(cat "$D/counts")"
	grep -q "^read .* 0 failed reads, 0 bytes unreadable" "$D/counts" ||
		fail "[$label] a clean read reports failures: $(tail -1 "$D/counts")"
	pass "[$label] counts: $(grep '^total' "$D/counts")"
	writes=0
	command -v strace >/dev/null &&
		writes=$(strace -f -e trace=pwrite64,write,pwritev,pwritev2 -o "$D/strace" \
			"$DB" -r -c "scan -c" "$img" >/dev/null 2>&1; grep -c "pwrite" "$D/strace")
	[ "$writes" = 0 ] || fail "[$label] scan wrote to the image: $(grep 'write' "$D/strace" | head -3)"
}

# 8 KiB directory blocks (bigger than a block), 512-byte sectors inside
# an AG's first block; then 1 KiB blocks, whose AG headers straddle two
# blocks, with 512-byte inodes (two per block, 16-block clusters).
scan_case b1k -m rmapbt=1 -b size=1024 -n size=4096 -i size=512
scan_case dir8k -m rmapbt=1 -n size=8192 || finish
D=$T/dir8k

# An I/O error mid-device: retried, the same index, and it says so.
if grep -q '^#define XK_FAULT_INJECTION 1' "$XK_BUILDDIR/config.h"; then
	XFSKIT_FAULT=read:12 "$DB" -r -c "scan -r -T 1" "$img" >"$T/fault.txt" 2>"$T/fault.err" ||
		fail "a read error that a retry cures failed the scan: $(head "$T/fault.err")"
	cmp -s "$D/scan.txt" "$T/fault.txt" ||
		fail "an injected read error changed the index: $(diff "$D/scan.txt" "$T/fault.txt" | head)"
	XFSKIT_FAULT=read:12 "$DB" -r -c "scan -c -T 1" "$img" >"$T/fault.counts" 2>&1
	grep -q "^read .* [1-9][0-9]* failed reads, 0 bytes unreadable" "$T/fault.counts" ||
		fail "the injected read error is not reported: $(tail -1 "$T/fault.counts")"
	pass "read error mid-scan: retried, same index, reported"
	# A thread that cannot start: fewer threads, the same index.
	XFSKIT_FAULT=thread:1 "$DB" -r -c "scan -r -T 3" "$img" >"$T/thread.txt" 2>&1 &&
		cmp -s "$D/scan.txt" "$T/thread.txt" ||
		fail "a thread that could not start changed the scan: $(diff "$D/scan.txt" "$T/thread.txt" | head)"
	# Out of memory anywhere: the same counts or a clear stop, no crash
	# and no leak (ASan exits 99).
	"$DB" -r -c "scan -c" "$img" >"$T/c.ref" 2>&1
	for n in 1 2 3 4 5 6 7 8; do
		XFSKIT_FAULT=alloc:$n "$DB" -r -c "scan -c" "$img" >"$T/c.out" 2>&1
		st=$?
		if [ $st = 0 ]; then
			cmp -s "$T/c.ref" "$T/c.out" ||
				fail "allocation $n failed, the scan said nothing and counted other: $(diff "$T/c.ref" "$T/c.out" | head -5)"
		elif [ $st = 99 ] || ! grep -qiE "memory|cannot allocate" "$T/c.out"; then
			fail "allocation $n failed: exit $st, $(head -3 "$T/c.out")"
		fi
	done
	pass "thread and allocation failures: the same index or a clear stop"
fi

# A device cut short: refused with a clear error, no crash.
cp --sparse=always "$img" "$T/cut.img" && truncate -s 250m "$T/cut.img"
"$DB" -r -c "scan -c" "$T/cut.img" >"$T/cut.out" 2>&1
st=$?
[ $st -ne 0 ] && [ $st -ne 99 ] && grep -qE "could not be read|beyond the end|truncated|smaller" "$T/cut.out" ||
	fail "a truncated device: exit $st, output: $(head -5 "$T/cut.out")"
pass "truncated device: exit $st, $(grep -m1 -E 'could not be read|beyond|truncated|smaller' "$T/cut.out")"

# Garbage: refused with a clear error.
head -c 64M /dev/urandom >"$T/garbage.img"
"$DB" -r -c "scan" "$T/garbage.img" >"$T/garbage.out" 2>&1
st=$?
[ $st -ne 0 ] && [ $st -ne 99 ] && [ -s "$T/garbage.out" ] ||
	fail "garbage: exit $st, output: $(head -3 "$T/garbage.out")"
# Our superblock over garbage: the scan runs and takes nothing but it.
dd if="$img" of="$T/garbage.img" bs=512 count=1 conv=notrunc status=none
truncate -s 400m "$T/garbage.img"
"$DB" -r -c "scan -c" "$T/garbage.img" >"$T/garbage.out" 2>&1
st=$?
[ $st -ne 99 ] && grep -q '^total' "$T/garbage.out" ||
	fail "superblock over garbage: exit $st, output: $(head -5 "$T/garbage.out")"
taken=$(awk '$1 == "total" { print $2 }' "$T/garbage.out")
[ "${taken:-x}" = 1 ] ||
	fail "superblock over garbage: $taken blocks accepted, expected the superblock alone (only its sector was copied): $(cat "$T/garbage.out")"
pass "garbage: refused, or only the superblock taken"
finish
