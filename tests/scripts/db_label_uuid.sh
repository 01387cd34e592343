#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# xfskit-db label and uuid against xfs_db (6.1, and 7.2 where its tree
# exists): on copies of one image, the same command sequence run by each
# tool must leave every superblock copy byte-identical; after a UUID
# change xfs_repair -n is clean and the kernel mounts the image.  A dirty
# log refuses a UUID change, and -r or a missing -x refuses both
# commands; each refusal exits non-zero and writes nothing.
. "$(dirname "$0")/lib.sh"
need_xfsprogs

BASE="$T/base.img"
TEST_DIR=1 TEST_DEV=1 QA_CHECK_FS=1 mkfs_xfs_image "$BASE" 64m ||
	fail "mkfs.xfs failed: $(cat "$T/mkfs.out")"
AGB=$(db_get "$BASE" "sb 0" agblocks)
AGC=$(db_get "$BASE" "sb 0" agcount)
BSZ=$(db_get "$BASE" "sb 0" blocksize)

# sbs_differ A B: the superblock copies that differ, by AG number.
sbs_differ() {
	local a
	for a in $(seq 0 $((AGC - 1))); do
		cmp -s <(dd if="$1" bs="$BSZ" skip=$((a * AGB)) count=1 2>/dev/null) \
		       <(dd if="$2" bs="$BSZ" skip=$((a * AGB)) count=1 2>/dev/null) ||
			printf ' %s' "$a"
	done
}

# same_as ORACLE NAME CMD...: run the commands one xfs_db/xfskit-db call
# each on two copies; compare superblocks after each.
same_as() {
	local oracle=$1 name=$2 cmd d
	shift 2
	cp "$BASE" "$T/o.img" && cp "$BASE" "$T/k.img" || return
	for cmd in "$@"; do
		$oracle -x -c "$cmd" "$T/o.img" >"$T/o.out" 2>&1
		"$DB" -x -c "$cmd" "$T/k.img" >"$T/k.out" 2>&1 ||
			{ fail "$name: '$cmd' failed: $(head -2 "$T/k.out")"; return; }
		d=$(sbs_differ "$T/o.img" "$T/k.img")
		[ -z "$d" ] ||
			{ fail "$name: after '$cmd' superblock(s)$d differ from $oracle's"; return; }
		# What xfs_db prints on success, line for line.
		diff <(sed 's/^xfs_db: /xfskit-db: /' "$T/o.out") "$T/k.out" >"$T/out.diff" ||
			{ fail "$name: '$cmd' output differs: $(cat "$T/out.diff")"; return; }
	done
	xfs_repair -n "$T/k.img" >"$T/repair.out" 2>&1 ||
		fail "$name: xfs_repair -n after it: $(head -5 "$T/repair.out")"
	pass "$name: superblocks equal $oracle's"
}

U1=11111111-2222-3333-4444-555555555555
for oracle in xfs_db xfs72; do
	if [ "$oracle" = xfs72 ]; then
		"$XFS72" dir >/dev/null 2>&1 ||
			{ echo "note: no xfsprogs 7.2 tree; compared with 6.1 only"; continue; }
		oracle="$XFS72 xfs_db"
	fi
	same_as "$oracle" label "label NEWLBL" "label" "label 1234567890123"
	same_as "$oracle" "uuid set/restore" "uuid $U1" "uuid" "uuid restore" \
		"uuid restore"
	same_as "$oracle" "uuid nil" "uuid nil" "label x"
	same_as "$oracle" "uuid back to the metadata's" "uuid $U1" \
		"uuid $(db_get "$BASE" "sb 0" uuid)"
done

# A generated UUID: new, clean, mountable, and a second change back works.
cp "$BASE" "$T/g.img"
"$DB" -x -c "uuid generate" "$T/g.img" >"$T/g.out" 2>&1 ||
	fail "uuid generate failed: $(cat "$T/g.out")"
new=$(db_get "$T/g.img" "sb 0" uuid)
[ "$new" != "$(db_get "$BASE" "sb 0" uuid)" ] || fail "uuid generate kept the UUID"
grep -qx "new UUID = $new" "$T/g.out" || fail "uuid generate printed: $(cat "$T/g.out")"
xfs_repair -n "$T/g.img" >"$T/repair.out" 2>&1 ||
	fail "xfs_repair -n after uuid generate: $(head -5 "$T/repair.out")"
if [ "$(id -u)" -eq 0 ]; then
	loop_mount "$T/g.img" && {
		[ "$(blkid -o value -s UUID "$(findmnt -n -o SOURCE --target "$MNT")")" = "$new" ] ||
			fail "the kernel's mount does not show the new UUID"
		echo data >"$MNT/f" || fail "cannot write after uuid generate"
		loop_umount || fail "umount failed"
		xfs_repair -n "$T/g.img" >/dev/null 2>&1 ||
			fail "xfs_repair -n after a mount with the new UUID"
	}
fi

# Refusals write nothing.
refused() {
	local name=$1 img=$2 sum
	shift 2
	sum=$(cksum <"$img")
	if "$DB" "$@" "$img" >"$T/r.out" 2>&1; then
		fail "$name: accepted: $(cat "$T/r.out")"
	fi
	[ "$(cksum <"$img")" = "$sum" ] || fail "$name: the image changed"
	[ -s "$T/r.out" ] || fail "$name: no message"
}
cp "$BASE" "$T/r.img"
refused "label without -x" "$T/r.img" -c "label X"
refused "uuid with -r" "$T/r.img" -r -c "uuid generate"
refused "bad uuid" "$T/r.img" -x -c "uuid not-a-uuid"
if [ "$(id -u)" -eq 0 ] && command -v xfs_io >/dev/null 2>&1; then
	cp "$BASE" "$T/d.img"
	loop_mount "$T/d.img" && {
		echo x >"$MNT/f"
		sync
		xfs_io -x -c 'shutdown -f' "$MNT"
		loop_umount
	}
	refused "uuid on a dirty log" "$T/d.img" -x -c "uuid generate"
	grep -q "log is dirty" "$T/r.out" || fail "dirty log refusal says: $(cat "$T/r.out")"
fi
finish
