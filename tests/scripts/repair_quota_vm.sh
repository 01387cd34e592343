#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Quota repairs held to a kernel with XFS quota (the host's may have
# none): Debian's stock kernel under qemu (vm_lib.sh, scripts/vm-kit).
# repair_quota.sh holds the same repairs to xfs_repair 6.1; this adds
# the two oracles it lacks, xfs_repair 7.2 and the kernel.
#
# The quota image of quota_lib.sh (files of several users, groups and
# projects written by the host kernel, quota inodes added by
# xk_quota_make) gets one damage per case (xfs_db -x: an id in use
# without a dquot, a quota file without extents, a quota inode's core
# zeroed; repair_quota.sh has the rest) and is repaired by
# xfskit-repair; xfs_repair -n 6.1 and 7.2 must find the result clean.
# Then one VM boot mounts, for each case, two copies with user, group
# and project quotas:
#  - ours as repaired: the kernel must take its accounting as it is,
#    with no quotacheck, unless ours marked a type as not counted (a
#    lost quota inode), and log no error;
#  - the same with every CHKD flag cleared, so that the kernel recounts
#    everything itself (quotacheck).
# After the boot, the usage (blocks and inodes) of each id the tree uses
# must be the same in both: what ours wrote is what the kernel counts.
. "$XK_SRCDIR/tests/scripts/lib.sh"
. "$XK_SRCDIR/tests/scripts/quota_lib.sh"
. "$XK_SRCDIR/tests/scripts/vm_lib.sh"
need_quota_tools
need_vm

base="$T/base"
make_quota_image "$base" || finish

# The ids the tree and the damage use, by type.
IDS="u:0 u:1000 u:1001 u:1002 u:1003 u:1004 u:3000 u:3079 u:5000 u:100000
g:0 g:100 g:2000 g:4000 g:5580 g:65000 p:0 p:7 p:42 p:300 p:5000 p:70000"
CASES=() ACCT=() IMGS=()
declare -A KQ
# add_case NAME XFS_DB_ARGS...: damage a copy of the base, repair it,
# hold it to xfs_repair -n 6.1 and 7.2, and queue it for the VM with the
# CHKD bits ours left (the kernel's mount changes them).
add_case() {
	local name=$1 n=${#CASES[@]} q
	shift
	cp --sparse=always "$base" "$T/c$n.ours"
	xfs_db -x "$@" "$T/c$n.ours" >/dev/null 2>&1
	if ! "$REPAIR" "$T/c$n.ours" >"$T/c$n.out" 2>&1; then
		fail "[$name] xfskit-repair: $(tail -3 "$T/c$n.out")"
		return
	fi
	if ! grep -q "^quota [a-z ]*: .* quota " "$T/c$n.out"; then
		fail "[$name] the damage is not seen: $(grep -v '^Phase\|^  ' "$T/c$n.out" | head -3)"
		return
	fi
	if ! xfs_repair_clean "$T/c$n.ours" "$T/c$n.xr"; then
		fail "[$name] after xfskit-repair: $(cat "$T/c$n.xr")"
		return
	fi
	q=$(( $(db_get "$T/c$n.ours" sb qflags) ))
	CASES+=("$name")
	ACCT+=($((q & 0x504)))
	IMGS+=("$T/c$n.ours")
	# The copy the kernel recounts: no type marked as counted (where
	# ours left one not counted, its own mount recounts them all).
	[ $((q & 0x504)) -eq $((0x504)) ] || return
	cp --sparse=always "$T/c$n.ours" "$T/c$n.kq"
	xfs_db -x -c "sb 0" -c "write -d qflags $((q & ~0x504))" "$T/c$n.kq" >/dev/null 2>&1
	IMGS+=("$T/c$n.kq")
	KQ[$n]=1
}
have_xfs72
add_case "missing dquot" -c "path /u2/f1" -c "write -d core.uid 5000"
add_case "quota file emptied" -c "inode $(db_get "$base" sb pquotino)" \
	-c "write -d core.nextents 0" -c "write -d core.nblocks 0"
add_case "quota inode core zeroed" -c "inode $(db_get "$base" sb uquotino)" \
	-c "write -d core.magic 0" -c "write -d core.mode 0" -c "write -d core.version 0"
[ ${#CASES[@]} -gt 0 ] || finish

# One boot for every case: drives in IMGS order, each case as ours left
# it, then its copy to recount if any.  Each is mounted with quotas and
# unmounted; the kernel's messages in between say whether it ran a
# quotacheck.
vm_initrd "$VM_QUOTA_MOUNTS"
vm_boot "" "${IMGS[@]}" || { fail "the VM did not run: $(tail -5 "$T/vm.out" | tr -d '\r')"; finish; }

vm_quota_verdicts "xfs_repair -n clean"
finish
