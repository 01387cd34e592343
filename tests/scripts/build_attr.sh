#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Extended attributes written by the builder (xk_bld_attrs) against the
# oracles.  xk_bld_attrtest builds files whose attr forks are short form,
# leaf, node (two levels on 1 KiB blocks) and leaf with 64 KiB remote
# values, in the user, trusted and security namespaces, with POSIX ACLs
# on a file and a directory, into images made by xfskit-mkfs and by
# mkfs.xfs.  Then: xfs_repair -n and xfskit-repair -n find each image
# clean; xfs_db shows the attr fork format the tool expected for every
# file; a kernel mount lists exactly the xattrs the tool was given, with
# the same values (the ACLs both as system.posix_acl_* and as
# trusted.SGI_ACL_*), and getfacl reads the ACLs; after the kernel sets
# and removes attributes on every file (converting forks up and down),
# the image is still clean.
. "$XK_SRCDIR/tests/scripts/lib.sh"
need_xfsprogs
TOOL="$XK_BUILDDIR/tests/tools/xk_bld_attrtest"

# The kernel's view: "x FILE NAME HEX" for every xattr of every file.
dump_xattrs() {
	python3 - "$1" <<'PY'
import os, sys
top = sys.argv[1]
for f in sorted(os.listdir(top)):
    p = os.path.join(top, f)
    for n in os.listxattr(p, follow_symlinks=False):
        v = os.getxattr(p, n, follow_symlinks=False)
        print("x %s %s %s" % (f, n, v.hex()))
PY
}

# xfs_repair's findings without its progress lines and host warnings.
xr_findings() {
	grep -v '^Phase\|^No modify\|^        - \|host filesystem geometry\|sector size mismatch\|^Repair may fail\|^the image and the host' "$1" | head -20
}

# A field of block 0 of an inode's attr fork.
ablock0() {
	xfs_db -r -c "inode $2" -c "ablock 0" -c "print $3" "$1" 2>/dev/null |
		sed -n "s/^$3 = //p"
}

check_image() {
	local img=$1 what=$2 bad=0
	if ! "$TOOL" "$img" >"$T/want.out" 2>"$T/tool.err"; then
		fail "$what: builder failed: $(cat "$T/tool.err")"
		return
	fi
	if ! xfs_repair -n "$img" >"$T/xr.out" 2>&1; then
		fail "$what: xfs_repair -n: $(xr_findings "$T/xr.out")"
		return
	fi
	if ! "$REPAIR" -n "$img" >"$T/kr.out" 2>&1; then
		fail "$what: xfskit-repair -n: $(head -20 "$T/kr.out")"
		return
	fi
	pass "$what: xfs_repair -n and xfskit-repair -n clean"

	# The attr fork formats, as xfs_db reads them.
	while read -r tag file ino fmt levels; do
		[ "$tag" = f ] || continue
		af=$(db_get "$img" "inode $ino" core.aformat)
		magic=$(ablock0 "$img" "$ino" hdr.info.hdr.magic)
		case $fmt in
		sf) [ "$af" = "1 (local)" ] || { fail "$what: $file: aformat $af, want local"; bad=1; } ;;
		leaf) [ "$af" = "2 (extents)" ] && [ "$magic" = 0x3bee ] ||
			{ fail "$what: $file: aformat $af block 0 $magic, want a leaf"; bad=1; } ;;
		node)
			lv=$(ablock0 "$img" "$ino" hdr.level)
			[ "$af" = "2 (extents)" ] && [ "$magic" = 0x3ebe ] &&
				[ "$lv" = "$levels" ] ||
				{ fail "$what: $file: aformat $af block 0 $magic level $lv, want a $levels-level node"; bad=1; } ;;
		esac
	done <"$T/want.out"
	[ $bad = 0 ] && pass "$what: xfs_db shows the expected attr fork formats"
	# As the kernel does on a filesystem's first attribute: ATTRBIT set.
	vn=$(db_get "$img" "sb 0" versionnum)
	[ $(( vn & 0x10 )) != 0 ] || fail "$what: sb versionnum $vn lacks ATTRBIT"

	loop_mount "$img" || return
	dump_xattrs "$MNT" | sort >"$T/got.x"
	grep '^x ' "$T/want.out" | sed 's/ $//' | sort >"$T/want.x"
	sed -i 's/ $//' "$T/got.x"
	if same_image "$T/got.x" "$T/want.x"; then
		pass "$what: the kernel lists exactly the $(wc -l <"$T/want.x") xattrs built"
	else
		fail "$what: kernel xattrs differ: $(diff "$T/want.x" "$T/got.x" | head -5 | cut -c1-200)"
	fi
	if command -v getfacl >/dev/null 2>&1; then
		getfacl -cnE "$MNT/acl" 2>/dev/null | grep -v '^$' >"$T/acl.txt"
		printf '%s\n' user::rw- user:1000:r-- group::r-- group:50:rwx \
			mask::r-x other::--- | cmp -s - "$T/acl.txt" ||
			fail "$what: getfacl acl: $(tr '\n' ' ' <"$T/acl.txt")"
		getfacl -cndE "$MNT/dir" 2>/dev/null | grep -v '^$' >"$T/dacl.txt"
		printf '%s\n' user::rwx group::r-x group:50:rwx mask::rwx \
			other::r-x | cmp -s - "$T/dacl.txt" ||
			fail "$what: getfacl -d dir: $(tr '\n' ' ' <"$T/dacl.txt")"
	fi
	# The kernel adds the same attributes in the same order to new files:
	# their attr fork blocks must read the same as ours (but for the
	# block's address, owner, LSN and CRC).
	python3 - "$MNT" "$T/want.out" >"$T/kino" <<'PY' || fail "$what: kernel copies failed"
import os, sys
m, want = sys.argv[1], sys.argv[2]
sets = {}
for line in open(want):
    p = line.rstrip("\n").split(" ", 3)
    if p[0] == "x" and p[1] in ("ns", "leaf", "remote") and \
       not p[2].startswith("system."):
        sets.setdefault(p[1], []).append((p[2], bytes.fromhex(p[3] if len(p) > 3 else "")))
for f, attrs in sets.items():
    k = os.path.join(m, "k" + f)
    open(k, "w").close()
    for n, v in attrs:
        os.setxattr(k, n, v)
    print(f, os.stat(k).st_ino)
PY
	loop_umount || fail "$what: umount"
	for f in ns leaf remote; do
		ours=$(awk -v f=$f '$1=="f" && $2==f {print $3}' "$T/want.out")
		theirs=$(awk -v f=$f '$1==f {print $2}' "$T/kino")
		for ino in $ours $theirs; do
			if [ $f = ns ]; then
				xfs_db -r -c "inode $ino" -c "print a" "$img"
			else
				xfs_db -r -c "inode $ino" -c "ablock 0" -c print "$img"
			fi 2>/dev/null | grep -v 'crc =\|\.bno =\|lsn =\|owner =' >"$T/blk.$ino"
		done
		fo=$(db_get "$img" "inode $ours" core.forkoff)
		kfo=$(db_get "$img" "inode $theirs" core.forkoff)
		[ -n "$fo" ] && [ "$fo" = "$kfo" ] ||
			fail "$what: $f: di_forkoff $fo, the kernel's $kfo"
		if [ -n "$theirs" ] && [ -s "$T/blk.$ours" ] &&
		   cmp -s "$T/blk.$ours" "$T/blk.$theirs"; then
			pass "$what: $f: attr fork reads as the kernel's ($(wc -l <"$T/blk.$ours") lines)"
		else
			fail "$what: $f: attr fork differs from the kernel's: $(diff "$T/blk.$ours" "$T/blk.$theirs" 2>&1 | head -6 | tr '\n' ' ')"
		fi
	done
	loop_mount "$img" || return

	# A file created in the directory inherits its default ACL.
	touch "$MNT/dir/child" &&
		python3 -c 'import os,sys; os.getxattr(sys.argv[1], "system.posix_acl_access")' \
			"$MNT/dir/child" 2>/dev/null ||
		fail "$what: dir's default ACL not inherited"

	# The kernel edits every fork: adds, removes, grows and shrinks.
	python3 - "$MNT" <<'PY' || fail "$what: kernel attribute workload failed"
import os, sys
m = sys.argv[1]
def s(f, n, v): os.setxattr(os.path.join(m, f), n, v)
def r(f, n): os.removexattr(os.path.join(m, f), n)
def g(f, n): return os.getxattr(os.path.join(m, f), n)
files = [f for f in os.listdir(m) if f != "dir"] + ["dir"]
for f in files:
    s(f, "user.kernel", b"added by the kernel")
# short form grows into a leaf, and a leaf into a node
for i in range(60):
    s("small", "user.grow%02d" % i, bytes([i]) * 40)
for i in range(200):
    s("leaf", "user.more%03d" % i, bytes([i]) * 30)
# node: remove a third, replace some, add a remote value
for i in range(0, 2000, 3):
    r("node", "user.nd%04d" % i)
for i in range(1, 2000, 50):
    s("node", "user.nd%04d" % i, b"replaced")
s("node", "user.bigone", os.urandom(60000))
# remote: replace the 64 KiB value, drop the middle one
big = os.urandom(65536)
s("remote", "user.big", big)
assert g("remote", "user.big") == big
r("remote", "security.mid")
r("ns", "trusted.t")
r("ns", "security.s")
r("acl", "system.posix_acl_access")
if os.path.exists(os.path.join(m, "deep")):
    for i in range(0, 2000, 2):
        r("deep", "user.dp%04d" % i)
PY
	loop_umount || fail "$what: umount"
	if xfs_repair -n "$img" >"$T/xr2.out" 2>&1; then
		pass "$what: clean after the kernel's attribute workload"
	else
		fail "$what: unclean after workload: $(xr_findings "$T/xr2.out")"
	fi
	"$REPAIR" -n "$img" >"$T/kr2.out" 2>&1 ||
		fail "$what: xfskit-repair -n after workload: $(head -10 "$T/kr2.out")"
}

truncate -s 512M "$T/a.img"
"$MKFS" -q -f "$T/a.img" || fail "xfskit-mkfs"
check_image "$T/a.img" "xfskit-mkfs defaults"
mkfs_xfs_image "$T/b.img" 512M -m uuid=11111111-2222-3333-4444-555555555555
check_image "$T/b.img" "mkfs.xfs defaults"
mkfs_xfs_image "$T/c.img" 300M -b size=1024
check_image "$T/c.img" "mkfs.xfs 1 KiB blocks"
finish
