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
need_xfsprogs
command -v xfs_io >/dev/null 2>&1 || skip "xfs_io is not installed"
command -v setfattr >/dev/null 2>&1 || skip "setfattr is not installed"
MAKE="$XK_BUILDDIR/tests/tools/xk_quota_make"

# Populate an image made with the given mkfs options, add quotas, and
# hold it against xfs_repair -n.  Ids spread over several dquot blocks
# (30 records per 4 KiB block, 7 per 1 KiB): uid 1000..1004, 3000..3079
# and 100000, gid 100, 2000, 4000..5580 (a quota file of many
# extents: a bmbt with 1 KiB blocks) and 65000, projects 7, 42, 300,
# 5000 and 70000.
make_quota_image() {
	img=$1
	shift
	mkfs_xfs_image "$img" 320m "$@" || { fail "mkfs.xfs $*"; return 1; }
	loop_mount "$img" || return 1
	for i in 0 1 2 3 4; do
		d="$MNT/u$i"
		mkdir "$d"
		for j in 0 1 2 3; do
			head -c $(( (i + 1) * (j + 1) * 5000 )) /dev/urandom >"$d/f$j"
		done
		# xattrs in blocks: nblocks then counts attr fork blocks
		for k in 0 1 2 3 4 5 6 7; do
			setfattr -n "user.attr$k" -v "$(head -c 300 /dev/zero | tr '\0' x)" "$d/f0"
		done
		chown -R "$((1000 + i))" "$d"
		if [ "$i" -lt 3 ]; then chgrp -R 100 "$d"; else chgrp -R 2000 "$d"; fi
		proj=7; [ "$i" = 3 ] && proj=42; [ "$i" = 4 ] && proj=300
		for f in "$d" "$d"/*; do
			xfs_io -c "chproj $proj" "$f" >/dev/null ||
				fail "chproj $proj $f"
		done
	done
	ln -s u0/f0 "$MNT/link"
	mkfifo "$MNT/fifo"
	chown 1002:2000 "$MNT/fifo"
	# Enough distinct ids to grow the usage tables and fill many blocks.
	mkdir "$MNT/many"
	for i in $(seq 0 79); do
		echo "$i" >"$MNT/many/f$i"
		chown "$((3000 + i)):$((4000 + i * 20))" "$MNT/many/f$i"
	done
	xfs_io -c "chproj -R 5000" "$MNT/many" >/dev/null || fail "chproj -R"
	head -c 70000 /dev/urandom >"$MNT/far"
	chown 100000:65000 "$MNT/far"
	xfs_io -c "chproj 70000" "$MNT/far" >/dev/null || fail "chproj 70000"
	loop_umount || return 1

	"$MAKE" "$img" >"$T/make.out" 2>&1 ||
		{ fail "xk_quota_make $*: $(cat "$T/make.out")"; return 1; }
	[ "$(db_get "$img" sb qflags)" = 0x7cf ] ||
		fail "[$*] sb_qflags is $(db_get "$img" sb qflags), expected 0x7cf"
	if ! xfs_repair -n "$img" >"$T/xr.out" 2>&1; then
		fail "[$*] xfs_repair -n on the quota image:"$'\n'"$(head -30 "$T/xr.out")"
		return 1
	fi
	pass "[$*] xfs_repair -n accepts the quota image"
	# The dquots really hold usage (so the verdict means something).
	for q in "-u 1003" "-g 65000" "-p 70000"; do
		bc=$(xfs_db -r -c "dquot $q" -c "print diskdq.bcount" "$img" | sed 's/.* = //')
		[ -n "$bc" ] && [ "$bc" -gt 0 ] ||
			fail "[$*] dquot $q has bcount '$bc'"
	done
}

small="$T/small"
make_quota_image "$small" -b size=1024 -m bigtime=0,rmapbt=1 || finish
base="$T/base"
make_quota_image "$base" || finish

# Ours, once its quota phase is hooked in.
"$REPAIR" -n -v "$small" >"$T/ours.out" 2>&1
rc=$?
grep -qiE '^Phase.*quota' "$T/ours.out" ||
	skip "xfskit-repair has no quota phase yet (phase_quota is not hooked)"
[ "$rc" = 0 ] && pass "xfskit-repair -n: 1 KiB blocks, no bigtime: clean" ||
	fail "xfskit-repair -n on the clean 1 KiB quota image:"$'\n'"$(grep -v '^ ' "$T/ours.out" | head -20)"
"$REPAIR" -n "$base" >"$T/ours.out" 2>&1
rc=$?
[ "$rc" = 0 ] && pass "xfskit-repair -n: 4 KiB blocks: clean" ||
	fail "xfskit-repair -n on the clean quota image:"$'\n'"$(grep -v '^ ' "$T/ours.out" | head -20)"

# Each case: a name, the type ours prints, a pattern that must follow it
# on the same line (the id), then the xfs_db -x commands.
run_case() {
	name=$1 want=$2 id=$3
	shift 3
	img="$T/case"
	cp --sparse=always "${CASE_BASE:-$base}" "$img"
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
run_case "user bcount" "user quota" "id 1001\\b" -c "dquot -u 1001" -c "write -d diskdq.bcount 3"
run_case "group icount" "group quota" "id 2000\\b" -c "dquot -g 2000" -c "write -d diskdq.icount 1"
run_case "project bcount" "project quota" "id 300\\b" -c "dquot -p 300" -c "write -d diskdq.bcount 12345"
run_case "unused id icount" "user quota" "id 5\\b" -c "dquot -u 5" -c "write -d diskdq.icount 2"
run_case "user crc" "user quota" "id 1004\\b" -c "dquot -u 1004" -c "write -c diskdq.btimer 7"
# An id in use with no dquot: its block is not in the file.
run_case "missing dquot" "user quota" "id 5000\\b" -c "path /u2/f1" -c "write -d core.uid 5000"
run_case "quota inode size" "project quota" "size" -c "inode $(db_get "$base" sb pquotino)" -c "write -d core.size 4096"
run_case "quota inode type" "group quota" "regular" -c "inode $(db_get "$base" sb gquotino)" -c "write -d core.mode 040000"
run_case "bigtime id 0" "user quota" "id 0: bigtime" -c "dquot -u 0" -c "write -d diskdq.type 0x81"
run_case "soft limit, no timer" "group quota" "id 100: over a soft" -c "dquot -g 100" -c "write -d diskdq.blk_softlimit 1"
# In the 1 KiB image, whose group quota file is a bmbt.
CASE_BASE=$small run_case "bmbt quota file" "group quota" "id 5580\\b" -c "dquot -g 5580" -c "write -d diskdq.icount 9"
# Hostile: an extent count far beyond the fork; no crash, both flag it.
run_case "quota inode nextents" "project quota" "fork" -c "inode $(db_get "$base" sb pquotino)" -c "write -d core.nextents 9999"
finish
