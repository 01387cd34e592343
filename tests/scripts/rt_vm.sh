#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Realtime volumes aged by a kernel that has realtime support (the
# host's has none): Debian unstable's under qemu (scripts/vm-kit sid).
# Two filesystems, each a data image and a realtime image, every file
# realtime (mkfs -d rtinherit=1): a classic realtime volume made by
# mkfs.xfs 6.1, and realtime groups (four) made by mkfs.xfs 7.2 -m
# metadir=1.  One boot writes, appends, truncates and removes files on
# both, and unmounts them.  Then, for each:
#  - our -n -r finds nothing (zero findings on a kernel-aged realtime
#    filesystem), as xfs_repair -n -r does (7.2, and 6.1 on classic);
#  - our repair writes nothing to either image;
#  - 64 bytes of free extents zeroed in the realtime bitmap are found by
#    ours and repaired, xfs_repair 7.2 -n -r clean after;
# and a second boot mounts each repaired pair, writes more and unmounts:
# no kernel complaint, and xfs_repair 7.2 -n -r still clean after it.
. "$XK_SRCDIR/tests/scripts/lib.sh"
. "$XK_SRCDIR/tests/scripts/vm_lib.sh"
need_xfsprogs
need_xfs72
need_vm sid

cl=$T/cl.img clr=$T/cl.rt rg=$T/rg.img rgr=$T/rg.rt
for f in "$cl" "$rg"; do truncate -s 512m "$f"; done
for f in "$clr" "$rgr"; do truncate -s 256m "$f"; done
mkfs.xfs -q -f -d rtinherit=1 -r rtdev="$clr" "$cl" >"$T/mkfs.out" 2>&1 ||
	{ fail "mkfs.xfs 6.1 -r: $(cat "$T/mkfs.out")"; finish; }
xfs72 mkfs.xfs -q -f -m metadir=1 -d rtinherit=1 -r rtdev="$rgr",rgsize=64m \
	"$rg" >"$T/mkfs.out" 2>&1 ||
	{ fail "mkfs.xfs 7.2 -m metadir=1 -r rgsize=64m: $(cat "$T/mkfs.out")"; finish; }

# BODY for the VM: each data/realtime pair (vda+vdb, vdc+vdd) mounted,
# the workload run (its second round with xk.round=2), unmounted.
WORKLOAD='
r=$(arg round)
pair() {
	dmesg -c >/dev/null
	if ! mount -o rtdev=/dev/$2 /dev/$1 /mnt; then
		echo "XK-MOUNT $1 failed: $(dmesg | grep -i xfs | tail -3 | tr "\n" " ")"
		return
	fi
	mkdir -p /mnt/w$r
	i=1
	while [ $i -le 40 ]; do
		dd if=/dev/urandom of=/mnt/w$r/f$i bs=4k count=$((i * 13 % 97 + 1)) 2>/dev/null
		i=$((i + 1))
	done
	sync
	i=3
	while [ $i -le 40 ]; do rm /mnt/w$r/f$i; i=$((i + 3)); done
	i=2
	while [ $i -le 40 ]; do
		dd if=/dev/urandom of=/mnt/w$r/f$i bs=4k count=9 seek=200 conv=notrunc 2>/dev/null
		i=$((i + 5))
	done
	truncate -s 5000 /mnt/w$r/f1
	truncate -s 70000 /mnt/w$r/f4
	sync
	umount /mnt || echo "XK-ERR umount $1"
	bad=$(dmesg | grep -ic "corrupt\|error\|fail\|shut")
	echo "XK-MOUNT $1 bad=$bad"
}
pair vda vdb
pair vdc vdd'

boot() {	# boot ROUND: the workload on both pairs; 0 when both said bad=0
	local n
	vm_initrd "$WORKLOAD"
	vm_boot "xk.round=$1" "$cl" "$clr" "$rg" "$rgr" ||
		{ fail "boot $1: the VM did not run: $(tail -5 "$T/vm.out" | tr -d '\r')"; return 1; }
	for n in vda vdc; do
		grep -q "XK-MOUNT $n bad=0" "$T/vm.marks" ||
			{ fail "boot $1: $n: $(grep "XK-MOUNT $n" "$T/vm.marks")"; return 1; }
	done
}
boot 1 || finish
nfiles=$(xfs72 xfs_db -r -c "ls /w1" "$rg" 2>/dev/null | grep -c " regular ")
[ "$nfiles" -gt 20 ] || { fail "the workload left $nfiles files on the rtgroups filesystem"; finish; }

# check NAME DATA RT: the clean verdicts, and our repair writes nothing.
check() {
	local name=$1 d=$2 r=$3 sd sr rc
	if ! xfs72 xfs_repair -n -r "$r" "$d" >"$T/$name.x72" 2>&1; then
		fail "[$name] xfs_repair 7.2 -n -r on the kernel's image: $(grep -v '^Phase\|^  *-' "$T/$name.x72" | head -3)"
		return 1
	fi
	if [ "$name" = classic ] && ! xfs_repair -n -r "$r" "$d" >"$T/$name.x61" 2>&1; then
		fail "[$name] xfs_repair 6.1 -n -r on the kernel's image: $(grep -v '^Phase\|^  *-' "$T/$name.x61" | head -3)"
		return 1
	fi
	"$REPAIR" -n -r "$r" "$d" >"$T/$name.n" 2>&1
	rc=$?
	[ $rc = 0 ] || { fail "[$name] our -n -r on the kernel's image: exit $rc: $(repair_own "$T/$name.n" | head -4)"; return 1; }
	sd=$(image_state "$d") sr=$(image_state "$r")
	"$REPAIR" -r "$r" "$d" >"$T/$name.r" 2>&1
	rc=$?
	if [ $rc != 0 ] || [ "$(image_state "$d")" != "$sd" ] ||
	   [ "$(image_state "$r")" != "$sr" ]; then
		fail "[$name] our repair of the kernel's image: exit $rc, or it wrote: $(repair_own "$T/$name.r" | head -3)"
		return 1
	fi
	pass "[$name] kernel-aged: our -n -r and xfs_repair -n -r find nothing, our repair writes nothing"
}
check classic "$cl" "$clr"
check rtgroups "$rg" "$rgr"

# damage NAME DATA RT BITMAP_INODE: 64 bytes of the realtime bitmap's
# first block zeroed, halfway in (free extents there: in use without an
# owner, or a bad CRC on realtime groups); ours finds and repairs it,
# xfs_repair 7.2 -n -r clean after.
damage() {
	local name=$1 d=$2 r=$3 ino=$4 fsb off rc
	fsb=$(xfs72 xfs_db -r -c "inode $ino" -c bmap "$d" 2>/dev/null |
	      sed -n 's/^data offset 0 startblock \([0-9]*\) .*/\1/p')
	off=$(xfs72 xfs_db -r -c "convert fsb ${fsb:-x} byte" "$d" 2>/dev/null |
	      sed -n 's/.*(\([0-9]*\)).*/\1/p')
	[ -n "$off" ] || { fail "[$name] no first bitmap block for inode $ino"; return 1; }
	dd if=/dev/zero of="$d" bs=1 seek=$((off + 2048)) count=64 conv=notrunc 2>/dev/null
	"$REPAIR" -n -r "$r" "$d" >"$T/$name.dn" 2>&1
	rc=$?
	[ $rc = 1 ] || { fail "[$name] our -n -r on the bitmap damage: exit $rc: $(repair_own "$T/$name.dn" | head -3)"; return 1; }
	"$REPAIR" -r "$r" "$d" >"$T/$name.dr" 2>&1
	rc=$?
	[ $rc = 0 ] || { fail "[$name] our repair: exit $rc: $(repair_own "$T/$name.dr" | tail -3)"; return 1; }
	if ! xfs72 xfs_repair -n -r "$r" "$d" >"$T/$name.dx" 2>&1; then
		fail "[$name] xfs_repair 7.2 -n -r after ours: $(grep -v '^Phase\|^  *-' "$T/$name.dx" | head -3)"
		return 1
	fi
	pass "[$name] a bitmap block's words zeroed: found by ours, repaired, xfs_repair 7.2 -n -r clean after"
}
damage classic "$cl" "$clr" "$(db_get "$cl" "sb 0" rbmino)"
damage rtgroups "$rg" "$rgr" "$(xfs72 xfs_db -r -c "ls -m /rtgroups" "$rg" |
	sed -n 's/^[0-9]* *\([0-9]*\) *regular .* 0\.bitmap (good)$/\1/p')"

boot 2 || finish
for p in "classic $cl $clr" "rtgroups $rg $rgr"; do
	set -- $p
	if xfs72 xfs_repair -n -r "$3" "$2" >"$T/$1.after" 2>&1; then
		pass "[$1] the kernel takes ours, writes more and unmounts without a complaint; xfs_repair 7.2 -n -r clean after"
	else
		fail "[$1] after the kernel's second workload: $(grep -v '^Phase\|^  *-' "$T/$1.after" | head -3)"
	fi
done
finish
