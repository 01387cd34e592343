#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Kernel round trip: images made by xfskit-mkfs are loop-mounted
# read-write, take a workload (thousands of files and directories,
# renames, deletes, extended attributes, reflink copies), are unmounted,
# and xfs_repair -n and xfskit-repair -n must find them clean.  Skips
# where loop mounting is not permitted.
. "$XK_SRCDIR/tests/scripts/lib.sh"
need_xfsprogs
have_xfs72 || true

workload() {
	local m=$1
	mkdir -p "$m/tree" || return 1
	for d in $(seq 1 40); do
		mkdir "$m/tree/d$d" || return 1
		for f in $(seq 1 50); do
			echo "file $d/$f" >"$m/tree/d$d/f$f" || return 1
		done
	done
	# Renames across directories, deletes, a deep path.
	for d in $(seq 1 20); do
		mv "$m/tree/d$d/f1" "$m/tree/d$((d + 20))/moved$d" || return 1
		rm -f "$m/tree/d$d"/f1? || return 1
	done
	mv "$m/tree/d40" "$m/tree/d1/renamed" || return 1
	mkdir -p "$m/a/b/c/d/e/f" || return 1
	# Extended attributes, small and large.
	for f in $(seq 2 9); do
		setfattr -n user.small -v "v$f" "$m/tree/d21/f$f" || return 1
		setfattr -n user.big -v "$(head -c 3000 /dev/zero | tr '\0' x)" \
			"$m/tree/d21/f$f" || return 1
	done
	# Data and reflink copies.
	dd if=/dev/urandom of="$m/data" bs=1M count=16 status=none || return 1
	cp --reflink=always "$m/data" "$m/copy1" || return 1
	cp --reflink=always "$m/data" "$m/copy2" || return 1
	dd if=/dev/urandom of="$m/copy1" bs=4k count=10 seek=5 conv=notrunc \
		status=none || return 1
	same_image "$m/data" "$m/copy2" || return 1
	rm -rf "$m/tree/d2" "$m/copy2" || return 1
	sync
}

command -v setfattr >/dev/null 2>&1 || skip "setfattr (attr) is not installed"
# The last two have logs near the minimum: the kernel checks the log size
# against its transaction reservations at mount.
for opts in "" "-b size=1024 -d agcount=3" "-i size=1024 -d su=64k,sw=2" \
	"--unsupported -l size=16m" "--unsupported -d size=200m -b size=1024"; do
	img="$T/k.img"
	rm -f "$img"
	truncate -s 1g "$img"
	# shellcheck disable=SC2086
	if ! "$MKFS" -q -f $opts "$img" >"$T/out" 2>&1; then
		fail "xfskit-mkfs $opts: $(cat "$T/out")"
		continue
	fi
	loop_mount "$img" || continue
	if ! workload "$MNT"; then
		fail "workload on an image made with '$opts' failed"
	fi
	loop_umount || fail "umount after '$opts'"
	if ! xfs_repair_clean "$img" "$T/rep"; then
		fail "xfs_repair -n after the workload ($opts): $(cat "$T/rep")"
	elif ! "$REPAIR" -n "$img" >"$T/xrep" 2>&1; then
		fail "xfskit-repair -n after the workload ($opts): $(head -5 "$T/xrep")"
	else
		pass "kernel round trip with '$opts'"
	fi
done
finish
