#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Quotas: the kernel populates an image with files of several users,
# groups and projects (some with xattrs in blocks, so nblocks counts attr
# blocks), xk_quota_make adds the three quota inodes with the usage it
# counts, and xfs_repair -n must accept the result (that proves the
# counting rules and the dquot format).  Then dquots are corrupted with
# xfs_db -x (bcount, icount, a broken record CRC, for user, group and
# project ids) and xfs_repair -n and xfskit-repair -n must both flag each
# case, ours naming the quota type and id.
. "$XK_SRCDIR/tests/scripts/lib.sh"
. "$XK_SRCDIR/tests/scripts/quota_lib.sh"
need_quota_tools

small="$T/small"
make_quota_image "$small" -b size=1024 -m bigtime=0,rmapbt=1 || finish
base="$T/base"
make_quota_image "$base" || finish

# Ours, once its quota phase is hooked in.
"$REPAIR" -n -v "$small" >"$T/ours.out" 2>&1
rc=$?
grep -qiE '^ *- .*quota' "$T/ours.out" ||
	skip "xfskit-repair has no quota phase yet (phase_quota is not hooked)"
[ "$rc" = 0 ] && pass "xfskit-repair -n: 1 KiB blocks, no bigtime: clean" ||
	fail "xfskit-repair -n on the clean 1 KiB quota image:"$'\n'"$(grep -v '^ ' "$T/ours.out" | head -20)"
"$REPAIR" -n "$base" >"$T/ours.out" 2>&1
rc=$?
[ "$rc" = 0 ] && pass "xfskit-repair -n: 4 KiB blocks: clean" ||
	fail "xfskit-repair -n on the clean quota image:"$'\n'"$(grep -v '^ ' "$T/ours.out" | head -20)"

# Each case (quota_lib.sh): both checks flag it, ours naming the type
# and the id (or the rule) on one line.
run_case() {
	name=$1 src=$2 want=$3 id=$4
	shift 4
	img="$T/case"
	cp --sparse=always "$src" "$img"
	xfs_db -x "$@" "$img" >/dev/null 2>&1
	if xfs_repair -n "$img" >"$T/xr.out" 2>&1; then
		fail "[$name] xfs_repair -n did not notice"
	fi
	if "$REPAIR" -n "$img" >"$T/ours.out" 2>&1; then
		fail "[$name] xfskit-repair -n did not notice"
	elif ! grep -q "$want.*$id" "$T/ours.out"; then
		fail "[$name] ours does not name $want id $id:"$'\n'"$(head -5 "$T/ours.out")"
	else
		pass "[$name] both flag it"
	fi
}
quota_cases run_case "$base" "$small"
finish
