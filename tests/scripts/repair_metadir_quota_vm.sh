#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Quotas in the metadata directory tree (mkfs.xfs 7.2 -m metadir=1: the
# quota files are /quota/user, /quota/group and /quota/project, not
# superblock fields), made and judged by a kernel that has both: Debian
# unstable's under qemu (scripts/vm-kit sid; the host's has no XFS
# quota, Debian 12's predates metadir).
#
# The host kernel populates a metadir image with files of several
# users, groups and projects; one VM boot mounts it with user, group and
# project quotas, so that the kernel makes the quota files and counts
# the usage (quotacheck).  Then:
#  - xfs_repair 7.2 -n and our -n find it clean (our -n writes nothing);
#  - each damage (xfs_db 7.2 -x: a dquot's counters, a quota file's
#    extents, a quota inode's core) is found by both, and repaired by
#    ours with exit 0; xfs_repair 7.2 -n then finds the result clean
#    (an emptied quota file gets its blocks back from the rmapbt; of a
#    quota inode whose core is zeroed only that file is forgotten, the
#    other two stay, where xfs_repair 7.2 clears all three);
# a second boot mounts each repaired image with quotas: the kernel must
# take ours with no error, with no quotacheck where ours left the type
# counted, and then count the same usage per id as its own recount of a
# copy whose counted flags were cleared.
. "$XK_SRCDIR/tests/scripts/lib.sh"
. "$XK_SRCDIR/tests/scripts/repair_lib.sh"
. "$XK_SRCDIR/tests/scripts/vm_lib.sh"
need_xfs72
need_vm sid
command -v xfs_io >/dev/null 2>&1 || skip "xfs_io is not installed"
[ "$(id -u)" -eq 0 ] || skip "populating images needs root (loop mount)"

base="$T/base.img"
metadir72_image "$base"
loop_mount "$base" || finish
for i in 0 1 2 3; do
	d="$MNT/u$i"
	mkdir "$d"
	for j in 0 1 2; do
		head -c $(( (i + 1) * (j + 1) * 7000 )) /dev/urandom >"$d/f$j"
	done
	chown -R "$((1000 + i)):$((100 + i % 2))" "$d"
	for f in "$d" "$d"/*; do
		xfs_io -c "chproj $((7 + i))" "$f" >/dev/null || fail "chproj $f"
	done
done
mkdir "$MNT/many"
for i in $(seq 0 39); do
	echo "$i" >"$MNT/many/f$i"
	chown "$((3000 + i)):$((4000 + i * 7))" "$MNT/many/f$i"
done
loop_umount

# The ids the tree uses, by type; their usage as xfs_db 7.2 reads it.
IDS="u:0 u:1000 u:1001 u:1002 u:1003 u:3000 u:3039 g:0 g:100 g:101 g:4000
g:4273 p:0 p:7 p:8 p:9 p:10"
QUOTA_DB="xfs72 xfs_db"

vm_initrd "$VM_QUOTA_MOUNTS"
vm_boot "" "$base" || { fail "the VM did not run: $(tail -5 "$T/vm.out" | tr -d '\r')"; finish; }
mo=$(sed -n "s/.*XK-MOUNT vda //p" "$T/vm.marks")
[ "$mo" = "qc=1 bad=0" ] ||
	{ fail "the kernel's first quota mount: '$mo' (expected a quotacheck, no error)"; finish; }
qt=$(xfs72 xfs_db -r -c "ls -m /quota" "$base" 2>&1)
for q in user group project; do
	echo "$qt" | grep -q "^[0-9 ]* regular .* $q (good)\$" ||
		{ fail "no /quota/$q after the kernel's quota mount: $qt"; finish; }
done
vm_quota_usage "$base" >"$T/base.use"
grep -q "bcount = [1-9]" "$T/base.use" || { fail "no usage counted: $(head -5 "$T/base.use")"; finish; }
pass "the kernel made /quota/{user,group,project} and counted usage ($(cat "$VM/ready"))"

# Clean: both checks, ours writing nothing.
xfs_repair_n72 "$base" "$T/base.xr" ||
	{ fail "xfs_repair 7.2 -n on the kernel's quota image: $(grep -v '^Phase\|^  *-' "$T/base.xr" | head -5)"; finish; }
sum=$(image_state "$base")
"$REPAIR" -n "$base" >"$T/base.n" 2>&1
rc=$?
if [ $rc -ne 0 ]; then
	fail "our -n on the kernel's quota image: exit $rc: $(repair_own "$T/base.n" | head -5)"
	finish
fi
[ "$(image_state "$base")" = "$sum" ] || { fail "our -n changed the image"; finish; }
pass "xfs_repair 7.2 -n and ours find the kernel's quota image clean"

sbq() { xfs72 xfs_db -r -c "sb 0" -c "print qflags" "$1" | sed 's/.* = //'; }
# qino NAME: the inode of /quota/NAME, from xfs_db 7.2's listing.
qino() { echo "$qt" | sed -n "s/^[0-9]* *\([0-9]*\) *regular .* $1 (good)\$/\1/p"; }

CASES=() ACCT=() IMGS=()
declare -A KQ
# add_case NAME XFS_DB_ARGS...: damage a copy of the base with xfs_db
# 7.2, both -n find it, ours repairs it, xfs_repair 7.2 -n then finds it
# clean; queue it for the VM with the counted bits ours left.
add_case() {
	local name=$1 n=${#CASES[@]} q rc
	shift
	cp --sparse=always "$base" "$T/c$n.ours"
	xfs72 xfs_db -x "$@" "$T/c$n.ours" >"$T/c$n.db" 2>&1
	xfs_repair_n72 "$T/c$n.ours" "$T/c$n.xrn" &&
		{ fail "[$name] xfs_repair 7.2 -n does not see the damage: $(cat "$T/c$n.db")"; return; }
	"$REPAIR" -n "$T/c$n.ours" >"$T/c$n.n" 2>&1
	rc=$?
	[ $rc = 1 ] || { fail "[$name] our -n: exit $rc where 7.2 finds damage: $(repair_own "$T/c$n.n" | tail -3)"; return; }
	if ! "$REPAIR" "$T/c$n.ours" >"$T/c$n.out" 2>&1; then
		fail "[$name] xfskit-repair: $(repair_own "$T/c$n.out" | tail -3)"
		return
	fi
	if ! xfs_repair_n72 "$T/c$n.ours" "$T/c$n.xr"; then
		fail "[$name] xfs_repair 7.2 -n after ours: $(grep -v '^Phase\|^  *-' "$T/c$n.xr" | head -5)"
		return
	fi
	q=$(( $(sbq "$T/c$n.ours") ))
	CASES+=("$name")
	ACCT+=($((q & 0x504)))
	IMGS+=("$T/c$n.ours")
	[ $((q & 0x504)) -eq $((0x504)) ] || return
	cp --sparse=always "$T/c$n.ours" "$T/c$n.kq"
	xfs72 xfs_db -x -c "sb 0" -c "write -d qflags $((q & ~0x504))" "$T/c$n.kq" >/dev/null 2>&1
	IMGS+=("$T/c$n.kq")
	KQ[$n]=1
}
uq=$(qino user) pq=$(qino project)
case "$uq$pq" in
*[!0-9]*|"") fail "the quota inodes: user '$uq', project '$pq'"; finish ;;
esac
add_case "user bcount" -c "dquot -u 1001" -c "write -d diskdq.bcount 3"
add_case "group icount" -c "dquot -g 4273" -c "write -d diskdq.icount 9"
add_case "project bcount" -c "dquot -p 9" -c "write -d diskdq.bcount 12345"
add_case "missing dquot" -c "path /u2/f1" -c "write -d core.uid 5000"
add_case "quota file emptied" -c "inode $pq" \
	-c "write -d core.nextents 0" -c "write -d core.nblocks 0"
add_case "quota inode core zeroed" -c "inode $uq" \
	-c "write -d core.magic 0" -c "write -d core.mode 0" -c "write -d core.version 0"
# There ours forgets the user quota file alone: the group and project
# files stay in /quota with their limits.  (xfs_repair 7.2 clears all
# three, which is what the kernel would make anew with no limits.)
n=$((${#CASES[@]} - 1))
if [ "${CASES[$n]:-}" = "quota inode core zeroed" ]; then
	left=$(xfs72 xfs_db -r -c "ls -m /quota" "${IMGS[${#IMGS[@]} - 1]}" 2>&1)
	if echo "$left" | grep -q " user (good)\$" ||
	   ! echo "$left" | grep -q "^[0-9 ]* $(qino group) *regular .* group (good)\$" ||
	   ! echo "$left" | grep -q "^[0-9 ]* $(qino project) *regular .* project (good)\$"; then
		fail "[quota inode core zeroed] /quota after ours: $left"
	fi
fi
[ ${#CASES[@]} -gt 0 ] || finish

vm_initrd "$VM_QUOTA_MOUNTS"
vm_boot "" "${IMGS[@]}" || { fail "the second boot did not run: $(tail -5 "$T/vm.out" | tr -d '\r')"; finish; }

vm_quota_verdicts "both -n see it; xfs_repair 7.2 -n clean after ours"
finish
