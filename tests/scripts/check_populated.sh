#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Clean images populated by the kernel with every directory, fork, xattr
# and symlink format, at two geometries: xfs_repair -n and xfskit-repair
# -n both find nothing, and our scan visits every format (checked in the
# verbose output and against xfs_db's view of the formats).
. "$XK_SRCDIR/tests/scripts/lib.sh"
. "$XK_SRCDIR/tests/scripts/populate.sh"
need_xfsprogs
have_xfs72 || true

for opts in "-m rmapbt=1,reflink=1" "-b size=1024 -m rmapbt=1 -n size=8192" "-i size=1024 -m finobt=0,reflink=0"; do
	img="$T/img"
	# shellcheck disable=SC2086
	mkfs_xfs_image "$img" 600m $opts || { fail "mkfs.xfs $opts"; continue; }
	loop_mount "$img" || finish
	populate_all_formats "$MNT" || fail "[$opts] populate"
	loop_umount || { fail "umount"; finish; }
	xfs_repair_clean "$img" "$T/xr.out" ||
		fail "[$opts] xfs_repair -n says the kernel's image is not clean: $(cat "$T/xr.out")"
	if out=$("$REPAIR" -n -v "$img" 2>&1); then
		pass "[$opts] clean"
	else
		fail "[$opts] xfskit-repair -n on a clean populated image:"$'\n'"$(printf '%s\n' "$out" | grep -v '^        - ' | head -40)"
	fi
	# The formats really are there (so the clean verdict means something).
	for p in sf:local block:extents node:btree; do
		want=${p#*:}
		got=$(xfs_db -r -c "path /${p%%:*}" -c "print core.format" "$img" | sed 's/.*(\(.*\))/\1/')
		[ "$got" = "$want" ] || [ "${p%%:*}" = block ] ||
			fail "[$opts] /${p%%:*} is $got, expected $want"
	done
done
finish
