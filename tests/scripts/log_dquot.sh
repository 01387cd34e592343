#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Logs holding dquot items, made and replayed by a real kernel with XFS
# quota support.  The host kernel may have none, so a small virtual
# machine runs Debian's stock kernel under qemu (scripts/vm-kit fetches
# it, with busybox): it mounts the image with user, group and project
# quotas, creates, grows, chowns and removes files owned by several ids
# in the background, and shuts the filesystem down with the log forced
# after a delay.  Copy A is then mounted by that kernel with the same
# quotas (its own replay); copy B is repaired by xfskit-repair (which
# replays offline, then checks).  B must pass xfs_repair -n, and every
# dquot (each type and id the workload used), the AG space counters and
# the tree must be the same as A's.  Then a damaged dquot item: replay
# must stop with a message and leave the image unchanged.
. "$XK_SRCDIR/tests/scripts/lib.sh"
. "$XK_SRCDIR/tests/scripts/log_lib.sh"
. "$XK_SRCDIR/tests/scripts/vm_lib.sh"
need_log_tools
need_vm
TREC="python3 $XK_SRCDIR/tests/scripts/treerec.py"
command -v python3 >/dev/null 2>&1 || skip "python3 is not installed"
${CC:-cc} -O2 -static -o "$T/xk_vmtool" "$XK_SRCDIR/tests/tools/xk_vmtool.c" \
	2>"$T/cc.err" || skip "cannot link the VM tool statically: $(head -2 "$T/cc.err")"

# The VM runs the task named on the kernel command line, with the tool.
vm_initrd 'task=$(arg task)
Q=uquota,gquota,pquota
case $task in
work)
	mount -o $Q /dev/vda /mnt || { echo XK-ERR mount; poweroff -f; }
	mkdir /mnt/d
	chown 1003:2003 /mnt/d
	( i=0
	  while :; do
		i=$((i + 1))
		f=/mnt/f$i
		[ $((i % 3)) = 0 ] && f=/mnt/d/g$i
		dd if=/dev/zero of=$f bs=4k count=$((i % 9 + 1)) 2>/dev/null
		chown $((1000 + i % 7)):$((2000 + i % 5)) $f
		xk_vmtool proj $f $((i % 4))
		[ $((i % 4)) = 0 ] && rm -f /mnt/f$((i - 2))
		[ $((i % 5)) = 0 ] && dd if=/dev/zero of=/mnt/f$((i - 3)) bs=4k \
			count=20 conv=notrunc oflag=append 2>/dev/null
	  done ) &
	sleep $(arg delay)
	xk_vmtool shutdown /mnt && echo XK-SHUTDOWN
	kill $! 2>/dev/null
	wait
	umount /mnt
	;;
replay)
	mount -o $Q /dev/vda /mnt && umount /mnt && echo XK-REPLAYED
	;;
esac
dmesg | grep -i "xfs.*\(error\|corrupt\|quotacheck\)"
' "$T/xk_vmtool"

# vm TASK IMG [DELAY]: boot the VM on IMG; its console goes to $T/vm.out.
vm() {
	vm_boot "xk.task=$1 xk.delay=${3:-0}" "$2"
}

# record IMG OUT: every dquot the workload touched, the AG counters, and
# the tree (mounted read-only here: the host kernel need not know quota).
IDS="u:0 u:1000 u:1001 u:1002 u:1003 u:1004 u:1005 u:1006
g:0 g:2000 g:2001 g:2002 g:2003 g:2004 p:0 p:1 p:2 p:3"
record() {
	local img=$1 out=$2 t id n i
	for t in $IDS; do
		id=${t#*:}
		echo "${t%%:*} $id: $(xfs_db -r -c "dquot -${t%%:*} $id" \
			-c 'p diskdq.bcount diskdq.icount diskdq.rtbcount diskdq.blk_softlimit diskdq.ino_softlimit diskdq.flags' \
			"$img" 2>&1 | tr '\n' ' ')"
	done >"$out.dq"
	n=$(xfs_db -r -c 'sb 0' -c 'p agcount' "$img" 2>/dev/null | awk '{print $3}')
	for ((i = 0; i < n; i++)); do
		xfs_db -r -c "agf $i" -c 'p freeblks flcount btreeblks' \
			-c "agi $i" -c 'p count freecount' "$img" 2>/dev/null
	done >"$out.hdr"
	xfs_db -r -c 'sb 0' -c 'p icount ifree fdblocks qflags' "$img" \
		>>"$out.hdr" 2>/dev/null
	MNT="$T/mnt"
	mkdir -p "$MNT"
	mount -o loop,ro "$img" "$MNT" 2>"$T/mount.err" ||
		{ fail "read-only mount of $img failed: $(cat "$T/mount.err")"; return 1; }
	LOOP_MOUNTED=1
	$TREC record "$MNT" --no-times >"$out.tree"
	umount "$MNT"
	LOOP_MOUNTED=0
}

runs=0
# Two delays make two different logs; one (the longer, more items) by
# default for the suite's time (each VM boot is emulated, no KVM here),
# both under long_tests.
delays=3
long_tests && delays="1.5 3"
for delay in ${DELAYS:-$delays}; do
	name="delay $delay"
	img="$T/q.img"
	rm -f "$img"
	truncate -s 512M "$img"
	mkfs.xfs -f -q "$img" >/dev/null 2>&1 || { fail "mkfs.xfs failed"; continue; }
	if ! vm work "$img" "$delay" || ! grep -q XK-SHUTDOWN "$T/vm.marks"; then
		fail "$name: the VM workload did not run: $(tail -5 "$T/vm.out" | tr -d '\r')"
		continue
	fi
	nd=$("$DB" -c logprint "$img" 2>/dev/null | grep -c '^  DQUOT:')
	if [ "$nd" -eq 0 ]; then
		fail "$name: the log holds no dquot item"
		continue
	fi
	runs=$((runs + 1))
	cp --sparse=always "$img" "$T/keep.img"
	cp --sparse=always "$img" "$T/A.img"
	cp --sparse=always "$img" "$T/B.img"
	if ! vm replay "$T/A.img" || ! grep -q XK-REPLAYED "$T/vm.marks"; then
		fail "$name: the kernel could not replay: $(tail -5 "$T/vm.out" | tr -d '\r')"
		continue
	fi
	if grep -qi quotacheck "$T/vm.marks" "$T/vm.out"; then
		echo "note: $name: the kernel ran a quotacheck after its replay" >&2
	fi
	if ! "$REPAIR" "$T/B.img" >"$T/repair.out" 2>&1; then
		fail "$name: xfskit-repair failed: $(head -5 "$T/repair.out")"
		continue
	fi
	grep -q "Replayed the log" "$T/repair.out" ||
		fail "$name: xfskit-repair did not say it replayed: $(head -3 "$T/repair.out")"
	! repair_own "$T/repair.out" | grep -v "^Replayed the log" | grep -q . ||
		fail "$name: xfskit-repair found problems after its replay: $(grep -v '^Replayed' "$T/repair.out" | head -3)"
	xfs_repair -n "$T/B.img" >"$T/xr.out" 2>&1 ||
		{ fail "$name: xfs_repair -n rejects the replayed image: $(grep -v '^ *-\|^Phase' "$T/xr.out" | head -4)"; continue; }
	record "$T/A.img" "$T/A" || continue
	record "$T/B.img" "$T/B" || continue
	ok=1
	same_image "$T/A.dq" "$T/B.dq" ||
		{ fail "$name: dquots differ from the kernel's replay: $(diff "$T/A.dq" "$T/B.dq" | head -4)"; ok=0; }
	same_image "$T/A.hdr" "$T/B.hdr" ||
		{ fail "$name: counters differ: $(diff "$T/A.hdr" "$T/B.hdr" | head -4)"; ok=0; }
	same_image "$T/A.tree" "$T/B.tree" ||
		{ fail "$name: tree differs: $(diff "$T/A.tree" "$T/B.tree" | head -4)"; ok=0; }
	[ "$ok" = 1 ] && pass "$name: $nd dquot items; dquots, counters and tree ($(wc -l <"$T/A.tree") paths) as the kernel's replay, xfs_repair -n clean"
done
[ "$runs" -gt 0 ] || { fail "no log with dquot items could be made"; finish; }

# A damaged dquot item: the logged dquot's magic ("DQ") is changed and
# its record's checksum fixed, so only the item is wrong.
img="$T/keep.img"
# A dquot log format (type 0x123d, 2 regions, native order) is followed
# by the logged dquot, which starts "DQ" version 1.  Only live records
# are searched: a stale copy in the log, or bytes elsewhere in the image
# that look alike, must not be taken.
off=$(log_find_item "$img" 3d120200 445101)
if [ "$off" -gt 0 ]; then
	cp --sparse=always "$img" "$T/D.img"
	poke_log "$T/D.img" "$off" 5851 ||	# "XQ"
		{ fail "could not damage the logged dquot"; finish; }
	sum0=$(image_state "$T/D.img")
	if "$REPAIR" "$T/D.img" >"$T/d.out" 2>&1; then
		fail "damaged dquot item: repair succeeded: $(head -2 "$T/d.out")"
	elif [ "$(image_state "$T/D.img")" != "$sum0" ]; then
		fail "damaged dquot item: the image changed"
	elif ! grep -qi "dquot" "$T/d.out"; then
		fail "damaged dquot item: the message does not name the dquot: $(head -2 "$T/d.out")"
	else
		pass "damaged dquot item refused, image unchanged: $(grep -i -m1 dquot "$T/d.out" | cut -c1-150)"
	fi
else
	fail "could not find a logged dquot to damage"
fi
finish
