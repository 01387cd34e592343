# SPDX-License-Identifier: GPL-2.0-or-later
# A small virtual machine for tests that need XFS features the host
# kernel lacks (quota): Debian's stock kernel and busybox under qemu,
# as scripts/vm-kit keeps them.  Source after lib.sh.
#
#   need_vm                skip unless qemu and the kit are there
#   vm_initrd BODY [FILE...]
#                          build $T/initrd.gz whose init loads the modules,
#                          waits for /dev/vda, runs the shell text BODY
#                          (arg NAME reads xk.NAME= from the command line),
#                          prints XK-DONE and powers off; FILEs (static
#                          programs) go to its /bin
#   vm_boot APPEND IMG...  boot it with IMG... as /dev/vda, vdb, ...;
#                          the console in $T/vm.out, its XK- lines in
#                          $T/vm.marks; 0 when XK-DONE came and no XK-ERR
VM=${XK_VM_DIR:-/var/cache/xfskit-vm}

need_vm() {
	command -v qemu-system-x86_64 >/dev/null 2>&1 ||
		skip "qemu-system-x86_64 is not installed (scripts/deps installs it)"
	[ -f "$VM/ready" ] ||
		skip "no test kernel in $VM (scripts/vm-kit fetches Debian's)"
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

vm_boot() {
	local accel=tcg append=$1 drives=() img
	shift
	[ -w /dev/kvm ] && grep -qw 'vmx\|svm' /proc/cpuinfo && accel=kvm
	for img in "$@"; do
		drives+=(-drive "file=$img,format=raw,if=virtio")
	done
	timeout 1800 qemu-system-x86_64 -accel "$accel" -m 512 -nographic \
		-no-reboot -kernel "$VM/vmlinuz" -initrd "$T/initrd.gz" \
		-append "console=ttyS0 quiet panic=-1 $append" \
		"${drives[@]}" >"$T/vm.out" 2>&1
	tr -d '\r' <"$T/vm.out" | grep -a 'XK-' >"$T/vm.marks"
	grep -q XK-DONE "$T/vm.marks" && ! grep -q XK-ERR "$T/vm.marks"
}
