# SPDX-License-Identifier: GPL-2.0-or-later
# Shared by the quota tests (check_quota.sh, repair_quota.sh): making a
# populated image with quotas on, and the list of quota corruptions.
# Source after lib.sh.
#
# The kernel populates an image with files of several users, groups and
# projects (some with xattrs in blocks, so nblocks counts attr blocks);
# xk_quota_make then adds the three quota inodes with the usage it
# counts (the host kernel may have no quota support, so it cannot make
# them).  Images with quotas are never mounted.
QUOTA_MAKE="$XK_BUILDDIR/tests/tools/xk_quota_make"

need_quota_tools() {
	need_xfsprogs
	command -v xfs_io >/dev/null 2>&1 || skip "xfs_io is not installed"
	command -v setfattr >/dev/null 2>&1 || skip "setfattr is not installed"
}

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

	"$QUOTA_MAKE" "$img" >"$T/make.out" 2>&1 ||
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

# The corruption cases.  quota_cases FN BASE SMALL calls, for each case,
#   FN NAME BASE_IMAGE TYPE ID_PATTERN XFS_DB_ARGS...
# where TYPE is the quota type ours must print and ID_PATTERN what must
# follow it on the same line (the id, or the rule); BASE is the 4 KiB
# block image, SMALL the 1 KiB one (its group quota file is a bmbt).
quota_cases() {
	fn=$1 qbase=$2 qsmall=$3
	$fn "user bcount" "$qbase" "user quota" "id 1001\\b" \
		-c "dquot -u 1001" -c "write -d diskdq.bcount 3"
	$fn "group icount" "$qbase" "group quota" "id 2000\\b" \
		-c "dquot -g 2000" -c "write -d diskdq.icount 1"
	$fn "project bcount" "$qbase" "project quota" "id 300\\b" \
		-c "dquot -p 300" -c "write -d diskdq.bcount 12345"
	$fn "unused id icount" "$qbase" "user quota" "id 5\\b" \
		-c "dquot -u 5" -c "write -d diskdq.icount 2"
	$fn "user crc" "$qbase" "user quota" "id 1004\\b" \
		-c "dquot -u 1004" -c "write -c diskdq.btimer 7"
	# An id in use with no dquot: its block is not in the file.
	$fn "missing dquot" "$qbase" "user quota" "id 5000\\b" \
		-c "path /u2/f1" -c "write -d core.uid 5000"
	$fn "quota inode size" "$qbase" "project quota" "size" \
		-c "inode $(db_get "$qbase" sb pquotino)" -c "write -d core.size 4096"
	$fn "quota inode type" "$qbase" "group quota" "regular" \
		-c "inode $(db_get "$qbase" sb gquotino)" -c "write -d core.mode 040000"
	$fn "bigtime id 0" "$qbase" "user quota" "id 0: bigtime" \
		-c "dquot -u 0" -c "write -d diskdq.type 0x81"
	$fn "soft limit, no timer" "$qbase" "group quota" "id 100: over a soft" \
		-c "dquot -g 100" -c "write -d diskdq.blk_softlimit 1"
	$fn "bmbt quota file" "$qsmall" "group quota" "id 5580\\b" \
		-c "dquot -g 5580" -c "write -d diskdq.icount 9"
	$fn "missing dquot, bmbt file" "$qsmall" "group quota" "id 9000\\b" \
		-c "path /u2/f1" -c "write -d core.gid 9000"
	# A quota file whose extents are gone: every id in use lacks a dquot.
	$fn "quota file emptied" "$qbase" "project quota" "id 5000\\b" \
		-c "inode $(db_get "$qbase" sb pquotino)" \
		-c "write -d core.nextents 0" -c "write -d core.nblocks 0"
	# Ids whose dquots are in the last block a quota file can have.
	$fn "missing dquots near 2^32" "$qbase" "user quota" "id 4294967294\\b" \
		-c "path /u2/f1" -c "write -d core.uid 4294967294" \
		-c "path /u2/f2" -c "write -d core.gid 4294967295"
	# The superblock names a user's file as the user quota inode.
	$fn "uquotino is a user file" "$qbase" "user quota" "size" \
		-c "sb 0" -c "write -d uquotino $(db_get "$qbase" "path /u0/f1" v3.inumber)"
	# A quota inode lost (fstests xfs/162's shape, on the user quota
	# inode): its core zeroed, the inode freed; the superblock must
	# forget it in the same pass (never name a freed inode).
	$fn "quota inode core zeroed" "$qbase" "user quota" "regular" \
		-c "inode $(db_get "$qbase" sb uquotino)" -c "write -d core.magic 0" \
		-c "write -d core.mode 0" -c "write -d core.version 0"
	# Quota pointers naming another inode of the superblock's: the
	# user quota inode as the group's too (the records say user), the
	# realtime bitmap inode as the user's, the root as the project's.
	$fn "gquotino is uquotino" "$qbase" "group quota" "user quota inode too" \
		-c "sb 0" -c "write -d gquotino $(db_get "$qbase" sb uquotino)"
	$fn "uquotino is the rt bitmap" "$qbase" "user quota" "realtime bitmap" \
		-c "sb 0" -c "write -d uquotino $(db_get "$qbase" sb rbmino)"
	$fn "pquotino is the root" "$qbase" "project quota" "root directory" \
		-c "sb 0" -c "write -d pquotino $(db_get "$qbase" sb rootino)"
	# Hostile: an extent count far beyond the fork; no crash, both
	# flag it.
	$fn "quota inode nextents" "$qbase" "project quota" "fork" \
		-c "inode $(db_get "$qbase" sb pquotino)" -c "write -d core.nextents 9999"
}
