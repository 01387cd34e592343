#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The superblock's feature words and quota inode fields, fuzzed in the
# primary (issue 20's field sweep left these open), decided by the
# kernel's rules where xfs_repair 6.1 and 7.2 disagree or are wrong:
#  1. incompat bits no tool knows, on a primary that is otherwise sound:
#     a newer feature as far as anyone can tell; the kernel refuses the
#     mount and xfs_repair 6.1 and 7.2 exit ("unknown ... features").
#     Ours: not checked, nothing written (exit 5).
#  2. unknown incompat bits on a primary that fails the verifier even
#     without them (a metadata directory bit with no metadata root):
#     damage; xfs_repair 6.1 and 7.2 take a secondary, so do we, and
#     keep every entry.
#  3. all bits set, NEEDSREPAIR among them: refused (7.2 takes a
#     secondary, 6.1 refuses): a primary so marked may be an upgrade
#     stopped half-way, its new feature in the primary alone.
#  4. a known bit cleared (ftype) while every secondary has it: the
#     secondaries outvote the primary; -n counts the one problem the
#     repair fixes.  xfs_repair copies the damaged value into every
#     secondary and moves a directory to /lost+found; ours keeps it.
#  5. unknown log-incompatible bits on a clean log: they only say what
#     records the log may hold, and the kernel's superblock write
#     verifier refuses them (its mount passes them, its first superblock
#     write shuts the filesystem down).  xfs_repair 6.1 and 7.2 -n call
#     it clean and their repair fails at that verifier; ours clears them,
#     and the kernel then mounts, writes and unmounts without an error.
#  6. the same on a dirty log: no replay can trust it (the kernel
#     refuses it too): not checked, nothing written.
#  7. a quota inode field on a filesystem without quota: xfs_repair 6.1
#     clears it ("user quota information would be cleared"), 7.2 passes
#     it.  The kernel reads those fields only when the superblock's quota
#     bit is set, and otherwise makes new quota inodes and overwrites
#     them (xfs_qm_init_quotainos): ours follows 7.2 and the kernel.
. "$XK_SRCDIR/tests/scripts/lib.sh"
. "$XK_SRCDIR/tests/scripts/repair_lib.sh"
need_xfsprogs
[ "$(id -u)" -eq 0 ] || skip "populating and walking images needs root (loop mount)"
have_xfs72 || true

img="$T/base.img"
files_image "$img" 20
total=$TOTAL

# fuzzed NAME FIELD VERB: $T/NAME.img, the base with the primary's FIELD
# fuzzed by xfs_db (its CRC recomputed).
fuzzed() {
	cp --sparse=always "$img" "$T/$1.img"
	xfs_db -x -c "sb 0" -c "fuzz -d $2 $3" "$T/$1.img" >"$T/db.out" 2>&1 ||
		{ echo "xfs_db fuzz $2 $3: $(cat "$T/db.out")" >&2; exit 99; }
}

# oracle_n NAME IMG: xfs_repair 6.1's and 7.2's -n exit statuses ("-"
# without 7.2), into X61 and X72; their outputs in $T/NAME.x61/.x72.
oracle_n() {
	xfs_repair -n "$2" >"$T/$1.x61" 2>&1
	X61=$?
	X72=-
	if have_xfs72 >/dev/null 2>&1; then
		xfs72 xfs_repair -n "$2" >"$T/$1.x72" 2>&1
		X72=$?
	fi
}

# ours_n NAME RC PATTERN WHAT: xfskit-repair -n on $T/NAME.img exits RC
# and says what the fixed string PATTERN says; its output in $T/NAME.n.
ours_n() {
	local rc
	"$REPAIR" -n "$T/$1.img" >"$T/$1.n" 2>&1
	rc=$?
	if [ $rc = "$2" ] && grep -qF -- "$3" "$T/$1.n"; then
		pass "$1: -n $4 (exit $rc)"
	else
		fail "$1: -n exit $rc, expected $2: $(repair_own "$T/$1.n" | head -3 | tr '\n' ' ')"
	fi
}

# repaired NAME: ours repairs $T/NAME.img in one run, xfs_repair -n is
# clean after, the kernel mounts it without an XFS error, and every
# entry is kept in place.
repaired() {
	local rc errs
	"$REPAIR" "$T/$1.img" >"$T/$1.rep" 2>&1
	rc=$?
	[ $rc -eq 0 ] || { fail "$1: xfskit-repair exit $rc: $(repair_own "$T/$1.rep" | tail -2)"; return 1; }
	if xfs_repair_clean "$T/$1.img" "$T/$1.clean"; then
		pass "$1: repaired, xfs_repair -n clean after"
	else
		fail "$1: after ours: $(tr '\n' ' ' <"$T/$1.clean" | cut -c1-300)"
	fi
	errs=$(walk "$T/$1.img" "$T/$1.tree")
	if [ -n "$errs" ]; then
		fail "$1: the kernel after ours: $errs"
	elif [ "$(preserved "$T/$1.tree")" -ne "$total" ]; then
		fail "$1: $(preserved "$T/$1.tree") of $total entries kept in place"
	else
		pass "$1: the kernel mounts it, all $total entries kept in place"
	fi
}

# 1. Unknown bits on a sound primary.
fuzzed unknown features_incompat firstbit
oracle_n unknown "$T/unknown.img"
if [ $X61 = 1 ] && grep -q 'unknown compat/rocompat/incompat features' "$T/unknown.x61" &&
   { [ "$X72" = - ] || { [ "$X72" = 1 ] && grep -q 'unknown compat/rocompat/incompat features' "$T/unknown.x72"; }; }; then
	pass "unknown: xfs_repair 6.1 and 7.2 refuse the unknown features"
else
	fail "unknown: xfs_repair -n 6.1 exit $X61, 7.2 $X72: $(grep -m1 -i feature "$T/unknown.x61")"
fi
ours_n unknown 5 'incompatible feature bits 0x80000000) was not checked' \
	"says not checked"
refused_unwritten "unknown: repair" 5 'incompatible feature bits 0x80000000' \
	"$T/unknown.img" "$REPAIR" "$T/unknown.img"

# 2. Unknown bits (0x600) on a primary damaged anyway: 0x7ec sets the
# metadata directory bit without a metadata root and clears sparse
# inodes under a sparse inode alignment.
fuzzed damaged features_incompat add
[ "$(db_get "$T/damaged.img" "sb 0" features_incompat)" = 0x7ec ] ||
	{ echo "fuzz add: $(db_get "$T/damaged.img" "sb 0" features_incompat), not 0x7ec" >&2; exit 99; }
oracle_n damaged "$T/damaged.img"
if [ $X61 = 1 ] && [ "$X72" != 0 ] && grep -q 'bad primary superblock' "$T/damaged.x61"; then
	pass "damaged: xfs_repair 6.1 and 7.2 find the primary bad (a secondary taken)"
else
	fail "damaged: xfs_repair -n 6.1 exit $X61, 7.2 $X72: $(grep -m1 . "$T/damaged.x61")"
fi
repaired damaged
[ "$(db_get "$T/damaged.img" "sb 0" features_incompat)" = 0xb ] ||
	fail "damaged: the primary's features_incompat is $(db_get "$T/damaged.img" "sb 0" features_incompat) after ours"

# 3. All bits, NEEDSREPAIR among them.
fuzzed allbits features_incompat ones
oracle_n allbits "$T/allbits.img"
echo "allbits: xfs_repair -n 6.1 exit $X61, 7.2 exit $X72 (6.1 refuses, 7.2 takes a secondary)"
refused_unwritten "allbits: repair" 5 'incompatible feature bits' \
	"$T/allbits.img" "$REPAIR" "$T/allbits.img"

# 4. The directory entry file type bit cleared in the primary alone.
fuzzed noftype features_incompat lastbit
oracle_n noftype "$T/noftype.img"
grep -q 'would fix incompat feature mismatch in AG 1 super' "$T/noftype.x61" &&
	echo "noftype: xfs_repair 6.1 would copy the primary's 0xa into every secondary"
ours_n noftype 1 'features_incompat: primary has 0xa, all 3 secondaries 0xb' \
	"finds the primary outvoted"
# Judged by the voted value: the one problem the repair fixes, not each
# secondary nor the inode btrees read without sparse inodes.
grep -qx '1 problem found\.' "$T/noftype.n" ||
	fail "noftype: -n counts more than the one problem: $(repair_own "$T/noftype.n" | head -3 | tr '\n' ' ')"
repaired noftype

# 5. Unknown log-incompatible bits on a clean log.
fuzzed logbits features_log_incompat ones
oracle_n logbits "$T/logbits.img"
echo "logbits: xfs_repair -n 6.1 exit $X61, 7.2 exit $X72 (both pass the bits)"
ours_n logbits 1 'features_log_incompat: unknown log-incompatible feature bits 0xfffffffc' \
	"finds the unknown bits"
repaired logbits
v=$(db_get "$T/logbits.img" "sb 0" features_log_incompat)
[ "$v" = 0 ] || fail "logbits: features_log_incompat is $v after ours"

# 6. The same bits on a dirty log (the kernel shut down under a write).
cp --sparse=always "$img" "$T/dirty.img"
loop_mount "$T/dirty.img" || exit 99
echo more >"$MNT/d/g"
xfs_io -x -c "shutdown -f" "$MNT" || { echo "shutdown failed" >&2; exit 99; }
loop_umount || exit 99
xfs_db -x -c "sb 0" -c "fuzz -d features_log_incompat middlebit" "$T/dirty.img" >/dev/null 2>&1
# (Exit 1: the dirty log that cannot be replayed is a finding.)
ours_n dirty 1 'log-incompatible feature bits 0x8000) was not checked' \
	"says the log was not checked"
refused_unwritten "dirty: repair" 5 'log-incompatible feature bits 0x8000' \
	"$T/dirty.img" "$REPAIR" "$T/dirty.img"

# 7. A user quota inode field on a filesystem without quota: 1 (no
# inode), and a regular file's number.
for q in one:1 file:$(ino_of "$img" /d/f3); do
	name=quota-${q%%:*}
	cp --sparse=always "$img" "$T/$name.img"
	xfs_db -x -c "sb 0" -c "write -d uquotino ${q#*:}" "$T/$name.img" >/dev/null 2>&1
	oracle_n "$name" "$T/$name.img"
	"$REPAIR" -n "$T/$name.img" >"$T/$name.n" 2>&1
	rc=$?
	echo "$name: xfs_repair -n 6.1 exit $X61, 7.2 exit $X72, ours $rc"
	if [ $rc = 0 ] && [ "$X72" != 1 ]; then
		pass "$name: clean, as xfs_repair 7.2 and the kernel's rule have it"
	else
		fail "$name: ours -n exit $rc, 7.2 $X72: $(repair_own "$T/$name.n" | head -2)"
	fi
done
finish
