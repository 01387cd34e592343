# SPDX-License-Identifier: GPL-2.0-or-later
# A small virtual machine for tests that need XFS features the host
# kernel lacks (quota, realtime): Debian's stock kernel and busybox
# under qemu, as scripts/vm-kit keeps them.  Source after lib.sh.
#
#   need_vm [sid]          skip unless qemu and the kit are there; with
#                          sid, boot Debian unstable's kernel (features
#                          newer than stable's: metadir with quotas)
#   vm_initrd BODY [FILE...]
#                          build $T/initrd.gz whose init loads the modules,
#                          waits for /dev/vda, runs the shell text BODY
#                          (arg NAME reads xk.NAME= from the command line),
#                          prints XK-DONE and powers off; FILEs (static
#                          programs) go to its /bin
#   vm_boot APPEND IMG...  boot it with IMG... as /dev/vda, vdb, ...;
#                          the console in $T/vm.out, its XK- lines in
#                          $T/vm.marks; 0 when XK-DONE came and no XK-ERR
#   vm_drive I             the name of drive I (from 0): vda, ..., vdaa
#   VM_QUOTA_MOUNTS        a BODY mounting each drive with user, group
#                          and project quotas: "XK-MOUNT vdX qc=0|1
#                          bad=N" (whether the kernel ran a quotacheck,
#                          how many of its lines complained)
#   vm_quota_verdicts WHAT after a boot with VM_QUOTA_MOUNTS over the
#                          repaired images of CASES (ACCT: the CHKD bits
#                          each left; KQ[n] set where a copy with them
#                          cleared followed, for the kernel to recount):
#                          one verdict per case, WHAT saying what held
#                          before the boot; the usage of each id in
#                          IDS ("u:ID g:ID p:ID ...") is compared
#   vm_quota_usage IMG     that usage, as the xfs_db in $QUOTA_DB (xfs_db
#                          by default) reads it
VM=${XK_VM_DIR:-/var/cache/xfskit-vm}

need_vm() {
	command -v qemu-system-x86_64 >/dev/null 2>&1 ||
		skip "qemu-system-x86_64 is not installed (scripts/deps installs it)"
	if [ "${1:-}" = sid ]; then
		VM=${XK_VM_SID_DIR:-/var/cache/xfskit-vm-sid}
		[ -f "$VM/ready" ] ||
			skip "no unstable test kernel in $VM (scripts/vm-kit sid fetches Debian's)"
	fi
	[ -f "$VM/ready" ] ||
		skip "no test kernel in $VM (scripts/vm-kit fetches Debian's)"
	echo "# VM kernel: $(cat "$VM/ready")"
}

vm_initrd() {
	local ir="$T/ir" body=$1
	shift
	mkdir -p "$ir/bin" "$ir/lib" "$ir/proc" "$ir/sys" "$ir/dev" "$ir/mnt"
	cp "$VM/busybox" "$@" "$ir/bin/"
	for m in $(cat "$VM/modules"); do cp "$VM/$m.ko" "$ir/lib/"; done
	cp "$VM/modules" "$ir/modules"
	{
		cat <<'EOF'
#!/bin/busybox sh
/bin/busybox --install -s /bin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
for m in $(cat /modules); do insmod /lib/$m.ko || echo "XK-ERR insmod $m"; done
i=0
while [ ! -b /dev/vda ] && [ $i -lt 600 ]; do
	sleep 0.2
	i=$((i + 1))
done
arg() { sed -n "s/.*xk\.$1=\([a-z0-9.]*\).*/\1/p" /proc/cmdline; }
EOF
		printf '%s\n' "$body"
		printf 'echo XK-DONE\npoweroff -f\n'
	} >"$ir/init"
	chmod +x "$ir/init"
	(cd "$ir" && find . | "$VM/busybox" cpio -o -H newc 2>/dev/null) |
		gzip -1 >"$T/initrd.gz"
}

# no_timer_check: under emulation on a busy host the kernel's check of
# the IO-APIC timer can see too few ticks and panic ("IO-APIC + timer
# doesn't work!"), seen with Debian unstable's kernel under load.
vm_boot() {
	local accel=tcg append=$1 drives=() img
	shift
	[ -w /dev/kvm ] && grep -qw 'vmx\|svm' /proc/cpuinfo && accel=kvm
	for img in "$@"; do
		drives+=(-drive "file=$img,format=raw,if=virtio")
	done
	timeout 1800 qemu-system-x86_64 -accel "$accel" -m 512 -nographic \
		-no-reboot -kernel "$VM/vmlinuz" -initrd "$T/initrd.gz" \
		-append "console=ttyS0 quiet panic=-1 no_timer_check $append" \
		"${drives[@]}" >"$T/vm.out" 2>&1
	tr -d '\r' <"$T/vm.out" | grep -a 'XK-' >"$T/vm.marks"
	grep -q XK-DONE "$T/vm.marks" && ! grep -q XK-ERR "$T/vm.marks"
}

vm_drive() {
	local i=$1 s=""
	while :; do
		s=$(printf "\\$(printf %o $((97 + i % 26)))")$s
		i=$((i / 26 - 1))
		[ $i -ge 0 ] || break
	done
	echo "vd$s"
}

VM_QUOTA_MOUNTS='
for d in /dev/vd*; do
	n=${d#/dev/}
	dmesg -c >/dev/null
	if mount -o uquota,gquota,pquota $d /mnt; then
		umount /mnt || echo "XK-ERR umount $n"
		qc=0; dmesg | grep -q "Quotacheck needed" && qc=1
		bad=$(dmesg | grep -ic "corrupt\|error\|fail\|shut")
		echo "XK-MOUNT $n qc=$qc bad=$bad"
	else
		echo "XK-MOUNT $n failed: $(dmesg | grep -i xfs | tail -3 | tr "\n" " ")"
	fi
done'

vm_quota_usage() {
	local args=() t
	for t in $IDS; do
		args+=(-c "echo ${t%%:*} ${t#*:}" -c "dquot -${t%%:*} ${t#*:}"
		       -c "print diskdq.bcount diskdq.icount diskdq.rtbcount")
	done
	${QUOTA_DB:-xfs_db} -r "${args[@]}" "$1" 2>&1
}

vm_quota_verdicts() {
	local what=$1 drive=0 n name mo mk acct want_qc
	for ((n = 0; n < ${#CASES[@]}; n++)); do
		name=${CASES[$n]}
		# (A kernel message may share the console line.)
		mo=$(sed -n "s/.*XK-MOUNT $(vm_drive $drive) //p" "$T/vm.marks")
		drive=$((drive + 1))
		mk="qc=1 bad=0"
		if [ -n "${KQ[$n]:-}" ]; then
			mk=$(sed -n "s/.*XK-MOUNT $(vm_drive $drive) //p" "$T/vm.marks")
			drive=$((drive + 1))
		fi
		acct=${ACCT[$n]}
		# No quotacheck where ours left every type counted.
		want_qc=1
		[ "$acct" -eq $((0x504)) ] && want_qc=0
		if [ "$mo" != "qc=$want_qc bad=0" ]; then
			fail "[$name] the kernel's mount of ours: '$mo' (quotacheck expected: $want_qc, CHKD bits $(printf %#x "$acct"))"
			continue
		fi
		[ "$mk" = "qc=1 bad=0" ] ||
			{ fail "[$name] the kernel's recount: '$mk'"; continue; }
		if [ -z "${KQ[$n]:-}" ]; then
			pass "[$name] $what; ours marked a type not counted (CHKD bits $(printf %#x "$acct")): the kernel mounts it with a quotacheck and no error"
			continue
		fi
		vm_quota_usage "$T/c$n.ours" >"$T/c$n.ours.use"
		vm_quota_usage "$T/c$n.kq" >"$T/c$n.kq.use"
		if ! same_image "$T/c$n.ours.use" "$T/c$n.kq.use"; then
			fail "[$name] usage as ours left it differs from the kernel's recount: $(diff "$T/c$n.ours.use" "$T/c$n.kq.use" | head -4)"
			continue
		fi
		pass "[$name] $what; the kernel mounts ours with quotas and no quotacheck, and its recount equals ours for $(echo $IDS | wc -w) ids"
	done
}
