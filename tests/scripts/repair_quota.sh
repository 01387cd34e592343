#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Quota repair against xfs_repair.  The quota images and corruptions of
# check_quota.sh (quota_lib.sh) are repaired twice, one copy by
# xfs_repair and one by xfskit-repair.  After ours, xfs_repair -n must
# exit 0 (it recounts the usage of every type whose CHKD flag is still
# set, so it is the oracle for our counters) and a second xfskit-repair
# -n must find nothing; every quota type xfs_repair keeps accounted (its
# CHKD flag set and its quota inode kept) ours must keep too, where
# xfs_repair's own result passes xfs_repair -n.  A lost quota inode
# must be forgotten by the superblock before the inode is freed.  A table
# shows both outcomes side by side.  A clean quota image repaired by
# ours must not change by a byte.
. "$XK_SRCDIR/tests/scripts/lib.sh"
. "$XK_SRCDIR/tests/scripts/quota_lib.sh"
need_quota_tools

small="$T/small"
make_quota_image "$small" -b size=1024 -m bigtime=0,rmapbt=1 || finish
base="$T/base"
make_quota_image "$base" || finish

# Clean images: a repair writes nothing.
for img in "$base" "$small"; do
	cp --sparse=always "$img" "$T/clean"
	if ! "$REPAIR" "$T/clean" >"$T/ours.out" 2>&1; then
		fail "xfskit-repair on a clean quota image:"$'\n'"$(head -10 "$T/ours.out")"
	elif ! same_image "$img" "$T/clean"; then
		fail "xfskit-repair changed a clean quota image: $(cmp "$img" "$T/clean" | head -3)"
	else
		pass "clean quota image ($(basename "$img")): repair changes nothing"
	fi
done

# The accounted types of an image, as a mask: CHKD set and inode kept.
accounted() {
	q=$(( $(db_get "$1" sb qflags) ))
	mask=0
	[ $((q & 0x004)) != 0 ] && [ "$(db_get "$1" sb uquotino)" != null ] &&
		mask=$((mask | 1))
	[ $((q & 0x100)) != 0 ] && [ "$(db_get "$1" sb gquotino)" != null ] &&
		mask=$((mask | 2))
	[ $((q & 0x400)) != 0 ] && [ "$(db_get "$1" sb pquotino)" != null ] &&
		mask=$((mask | 4))
	echo "$mask"
}

# The types whose usage can be rebuilt in place, as a mask: the quota
# inode survives xfs_repair ($1), as no other type's inode too, and its
# output ($2) names no id in use without a dquot.
rebuildable() {
	mask=0
	u=$(db_get "$1" sb uquotino) g=$(db_get "$1" sb gquotino)
	p=$(db_get "$1" sb pquotino)
	[ "$u" != null ] && [ "$u" != "$g" ] && [ "$u" != "$p" ] &&
		! grep -q '^user quota record for id .* not found' "$2" &&
		mask=$((mask | 1))
	[ "$g" != null ] && [ "$g" != "$u" ] && [ "$g" != "$p" ] &&
		! grep -q '^group quota record for id .* not found' "$2" &&
		mask=$((mask | 2))
	[ "$p" != null ] && [ "$p" != "$u" ] && [ "$p" != "$g" ] &&
		! grep -q '^project quota record for id .* not found' "$2" &&
		mask=$((mask | 4))
	echo "$mask"
}

# "ugp" letters for a mask.
letters() {
	s=""
	[ $(($1 & 1)) != 0 ] && s="${s}u" || s="${s}-"
	[ $(($1 & 2)) != 0 ] && s="${s}g" || s="${s}-"
	[ $(($1 & 4)) != 0 ] && s="${s}p" || s="${s}-"
	echo "$s"
}

# bcount/icount of the case's dquot, or "-" (no quota file, no record).
counters() {
	img=$1 type=$2 id=$3
	[ -n "$id" ] || { echo "-"; return; }
	case $type in
	user*) f=-u ;; group*) f=-g ;; *) f=-p ;;
	esac
	out=$(xfs_db -r -c "dquot $f $id" -c "print diskdq.bcount diskdq.icount" "$img" 2>/dev/null)
	b=$(echo "$out" | sed -n 's/^diskdq.bcount = //p')
	i=$(echo "$out" | sed -n 's/^diskdq.icount = //p')
	[ -n "$b" ] && echo "$b/$i" || echo "-"
}

TABLE="$T/table"
printf '%-24s | %-21s | %-21s\n' "" "xfs_repair" "xfskit-repair" >"$TABLE"
printf '%-24s | %-6s %-4s %-9s | %-6s %-4s %-9s\n' "case" "qflags" "acct" "b/i" \
	"qflags" "acct" "b/i" >>"$TABLE"

one_case() {
	leak_check_next
	name=$1 src=$2 type=$3 pat=$4
	shift 4
	id=$(echo "$pat" | sed -n 's/^id \([0-9]*\).*/\1/p')
	cp --sparse=always "$src" "$T/xr"
	xfs_db -x "$@" "$T/xr" >/dev/null 2>&1
	cp --sparse=always "$T/xr" "$T/ours"
	# xfs_repair's outcome is the bar only where it is itself clean
	# (with the root named as the project quota inode it exits 1 and
	# leaves the pointer).
	xr_ok=1
	if ! xfs_repair "$T/xr" >"$T/xr.out" 2>&1 ||
	   ! xfs_repair -n "$T/xr" >/dev/null 2>&1; then
		echo "[$name] xfs_repair leaves it unclean: not a bar"
		xr_ok=0
	fi
	"$REPAIR" "$T/ours" >"$T/ours.out" 2>&1
	rc=$?
	if [ "$rc" != 0 ]; then
		fail "[$name] xfskit-repair exits $rc:"$'\n'"$(head -20 "$T/ours.out")"
		return
	fi
	if ! xfs_repair -n "$T/ours" >"$T/xrn.out" 2>&1; then
		fail "[$name] xfs_repair -n after ours:"$'\n'"$(grep -iE 'quota|dquot|would' "$T/xrn.out" | head -10)"
	fi
	if ! "$REPAIR" -n "$T/ours" >"$T/again.out" 2>&1; then
		fail "[$name] a second xfskit-repair -n finds:"$'\n'"$(head -10 "$T/again.out")"
	fi
	theirs=0
	[ $xr_ok = 1 ] && theirs=$(accounted "$T/xr")
	ours=$(accounted "$T/ours")
	if [ $((theirs & ~ours)) != 0 ]; then
		fail "[$name] xfs_repair keeps quota types $(letters "$theirs") accounted, ours only $(letters "$ours")"
	fi
	# Ours rebuilds the usage in place: every type whose quota inode
	# xfs_repair keeps and for which it reports no id without a dquot
	# must stay accounted (xfs_repair itself drops them all).
	want=0
	[ $xr_ok = 1 ] && want=$(rebuildable "$T/xr" "$T/xr.out")
	if [ $((want & ~ours)) != 0 ]; then
		fail "[$name] ours should keep $(letters "$want") accounted, keeps $(letters "$ours")"
	fi
	printf '%-24s | %-6s %-4s %-9s | %-6s %-4s %-9s\n' "$name" \
		"$(db_get "$T/xr" sb qflags)" "$(letters "$theirs")" \
		"$(counters "$T/xr" "$type" "$id")" \
		"$(db_get "$T/ours" sb qflags)" "$(letters "$ours")" \
		"$(counters "$T/ours" "$type" "$id")" >>"$TABLE"
	pass "[$name] repaired: xfs_repair -n and ours -n clean, accounting $(letters "$ours") (xfs_repair: $(letters "$theirs"))"
}
quota_cases one_case "$base" "$small"
# A lost quota inode: the superblock forgets it in the pass whose inode
# fixes free it, and before them (it never names a freed inode, even
# if the run stops between two writes).
cp --sparse=always "$base" "$T/ours"
xfs_db -x -c "inode $(db_get "$base" sb uquotino)" -c "write -d core.magic 0" \
	-c "write -d core.mode 0" -c "write -d core.version 0" "$T/ours" >/dev/null 2>&1
"$REPAIR" "$T/ours" >"$T/ours.out" 2>&1
sbl=$(grep -n "no longer names inode $(db_get "$base" sb uquotino) as the user quota inode, and that type.s usage is marked as not counted; reason: quota inode is not a regular file" "$T/ours.out" | cut -d: -f1)
inl=$(grep -n "^Corrected inode $(db_get "$base" sb uquotino)\|^Cleared inode $(db_get "$base" sb uquotino)" "$T/ours.out" | head -1 | cut -d: -f1)
p2=$(grep -n "^Pass 2" "$T/ours.out" | cut -d: -f1)
if [ -n "$sbl" ] && [ -n "$inl" ] && [ -n "$p2" ] && [ "$sbl" -lt "$inl" ] && [ "$inl" -lt "$p2" ]; then
	pass "a lost quota inode is forgotten (with its reason) before the inode is freed, in one pass"
else
	fail "lost quota inode: superblock line $sbl, inode line $inl, pass 2 at $p2:"$'\n'"$(head -12 "$T/ours.out")"
fi
# No user quota inode, yet its usage marked as counted: the kernel would
# trust the empty file it makes at the next quota mount.  xfs_repair -n
# lets it pass (its repair clears every CHKD flag); ours flags it and
# clears that type's flag only.
cp --sparse=always "$base" "$T/ours"
xfs_db -x -c "sb 0" -c "write -d uquotino 0" "$T/ours" >/dev/null 2>&1
if "$REPAIR" -n "$T/ours" >"$T/ours.out" 2>&1 ||
   ! grep -q "no user quota inode" "$T/ours.out"; then
	fail "xfskit-repair -n does not flag CHKD without a user quota inode"
fi
one_case "uquotino 0, CHKD set" "$base" "user quota" "" \
	-c "sb 0" -c "write -d uquotino 0"
# Not alone: with other damage the quota file grows only in a later
# pass that finds nothing else (the builder loads the AG btrees).
one_case "missing dquot + AGF" "$base" "user quota" "id 5000\\b" \
	-c "path /u2/f1" -c "write -d core.uid 5000" \
	-c "agf 0" -c "write -d freeblks 12"

# Limits survive a repair of their record (xfs_repair resets the record):
# the soft limit written in the "soft limit, no timer" case is kept and
# its timer now runs.
cp --sparse=always "$base" "$T/ours"
xfs_db -x -c "dquot -g 100" -c "write -d diskdq.blk_softlimit 1" "$T/ours" >/dev/null 2>&1
"$REPAIR" "$T/ours" >/dev/null 2>&1
sl=$(xfs_db -r -c "dquot -g 100" -c "print diskdq.blk_softlimit" "$T/ours" | sed 's/.* = //')
bt=$(xfs_db -r -c "dquot -g 100" -c "print diskdq.btimer" "$T/ours" | sed 's/.* = //')
if [ "$sl" = 1 ] && [ -n "$bt" ] && [ "$bt" != 0 ]; then
	pass "a repaired record keeps its soft limit, and its timer runs ($bt)"
else
	fail "group 100 after repair: blk_softlimit '$sl', btimer '$bt'"
fi

# The old OQUOTA bits in a v5 superblock: the kernel refuses to mount
# it and xfs_repair -n warns (exit 0); both repairs clear the bits, and
# must leave the same flags.
cp --sparse=always "$base" "$T/ours"
xfs_db -x -c "sb 0" -c "write -d qflags 0x7ef" "$T/ours" >/dev/null 2>&1
cp --sparse=always "$T/ours" "$T/xr"
xfs_repair -n "$T/xr" 2>&1 | grep -q "OQUOTA" ||
	fail "xfs_repair -n does not warn about the OQUOTA bits"
if "$REPAIR" -n "$T/ours" >"$T/ours.out" 2>&1 ||
   ! grep -q "quota flags 0x20" "$T/ours.out"; then
	fail "xfskit-repair -n does not flag the OQUOTA bits"
fi
xfs_repair "$T/xr" >/dev/null 2>&1
"$REPAIR" "$T/ours" >/dev/null 2>&1
if [ "$(db_get "$T/ours" sb qflags)" = "$(db_get "$T/xr" sb qflags)" ] &&
   "$REPAIR" -n "$T/ours" >/dev/null 2>&1; then
	pass "OQUOTA bits cleared as xfs_repair clears them ($(db_get "$T/ours" sb qflags))"
else
	fail "OQUOTA bits: ours leaves qflags $(db_get "$T/ours" sb qflags), xfs_repair $(db_get "$T/xr" sb qflags)"
fi

# The undo file of a repair that grows a quota file (the builder's
# writes included) restores the damaged image byte for byte.
cp --sparse=always "$base" "$T/ours"
xfs_db -x -c "path /u2/f1" -c "write -d core.uid 5000" "$T/ours" >/dev/null 2>&1
cp --sparse=always "$T/ours" "$T/before"
rm -f "$T/undo"
if ! "$REPAIR" -z "$T/undo" "$T/ours" >"$T/ours.out" 2>&1 ||
   ! grep -q "Added 1 block" "$T/ours.out"; then
	fail "repair with -z of a missing dquot:"$'\n'"$(head -10 "$T/ours.out")"
elif ! "$XK_BUILDDIR/repair/xfskit-undo" "$T/undo" "$T/ours" >"$T/undo.out" 2>&1; then
	fail "xfskit-undo: $(head -5 "$T/undo.out")"
elif ! same_image "$T/before" "$T/ours"; then
	fail "the undo file does not restore the image: $(cmp "$T/before" "$T/ours" | head -2)"
else
	pass "undo of a quota repair restores the image byte for byte"
fi

# A user's file the superblock names as the user quota inode: ours
# forgets the pointer and keeps the file (xfs_repair clears the inode).
cp --sparse=always "$base" "$T/ours"
xfs_db -x -c "sb 0" -c "write -d uquotino $(db_get "$base" "path /u0/f1" v3.inumber)" \
	"$T/ours" >/dev/null 2>&1
"$REPAIR" "$T/ours" >/dev/null 2>&1
if [ "$(db_get "$T/ours" "path /u0/f1" core.size)" = 10000 ] &&
   [ "$(db_get "$T/ours" sb uquotino)" = null ]; then
	pass "a user's file named as the quota inode is kept, the pointer dropped"
else
	fail "after repair /u0/f1 has size '$(db_get "$T/ours" "path /u0/f1" core.size)', uquotino $(db_get "$T/ours" sb uquotino)"
fi

cat "$TABLE"
echo "(acct: quota types still accounted, CHKD set and inode kept; b/i: the case's dquot bcount/icount after)"
finish
