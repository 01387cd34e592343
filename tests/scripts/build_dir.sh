#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Directories written by xk_bld_dir against the oracles.  xk_bld_dirtest
# builds, under the root of a fresh image, directories of 0, 5, 500, 5000
# and 50,000 entries (names of 1..255 bytes, bytes >= 0x80 included) and
# pairs of directories on either side of every format conversion.  Then:
#  - xfs_repair -n and xfskit-repair -n find the image clean;
#  - xfs_db shows each directory in the expected format (short form,
#    XDB3 block, LEAF1 leaf, node with free index and, past one leaf, a
#    dabtree root);
#  - a kernel mount lists exactly the names written, each a regular file;
#  - the kernel, adding the same names in the same order to a new
#    directory, makes the same format and the same blocks byte for byte
#    (but for inode numbers, block addresses, CRCs, LSNs and the stale
#    bytes it leaves in unused space; and the leaf space of directories
#    with several leaves, which follows the kernel's split history);
#  - one name added by the kernel to each directory at a format limit
#    converts it to the format we gave the directory one name larger;
#  - after the kernel adds, renames and removes entries in every
#    directory, both checks still find the image clean.
# Images: xfskit-mkfs and mkfs.xfs defaults, 1 KiB blocks, and 16 KiB
# directory blocks over 4 KiB blocks; and a 3 TiB image whose inode
# numbers need 8 bytes in a short-form directory.
. "$XK_SRCDIR/tests/scripts/lib.sh"
need_xfsprogs
TOOL="$XK_BUILDDIR/tests/tools/xk_bld_dirtest"
SPACE=34359738368	# 32 GiB: the leaf space, then the free space

# Inode number of a root entry, from the listing root_ls saved.
root_ls() {
	xfs_db -r -c "inode $ROOTINO" -c "ls" "$1" >"$T/root.ls" 2>/dev/null
}
root_ino() {
	awk -v n="$2" '$6 == n { print $2 }' "$T/root.ls"
}

# local, block, leaf, node (one leaf) or node2 (dabtree over leaves),
# from the inode's format, its mappings and the magic of the blocks.
dir_format() {
	local img=$1 ino=$2 bs=$3 out leafoff freeoff hasleaf=0 hasfree=0
	out=$(xfs_db -r -c "inode $ino" -c "print core.format" -c "bmap" "$img" 2>&1)
	case "$out" in
	*"core.format = 1 "*) echo local; return ;;
	esac
	leafoff=$((SPACE / bs))
	freeoff=$((2 * SPACE / bs))
	while read -r _ _ off _; do
		[ "$off" -ge "$freeoff" ] && hasfree=1
		[ "$off" -ge "$leafoff" ] && [ "$off" -lt "$freeoff" ] && hasleaf=1
	done < <(echo "$out" | grep '^data offset')
	magic() {
		# dblock takes the fork offset in filesystem blocks
		xfs_db -r -c "inode $ino" -c "dblock $1" -c print "$img" 2>/dev/null |
			sed -n 's/.*hdr.magic = \(0x[0-9a-f]*\).*/\1/p' | head -1
	}
	if [ $hasfree = 1 ] && [ $hasleaf = 1 ]; then
		case $(magic "$leafoff") in
		0x3ebe) echo node2 ;;
		0x3dff) echo node ;;
		*) echo "node-without-leaf-root" ;;
		esac
	elif [ $hasleaf = 1 ]; then
		[ "$(magic "$leafoff")" = 0x3df1 ] && echo leaf || echo "leaf-bad-magic"
	elif [ $hasfree = 0 ]; then
		[ "$(magic 0)" = 0x58444233 ] && echo block || echo "block-bad-magic"
	else
		echo "free-without-leaf"
	fi
}

# Names of a directory as the kernel lists them (hex, sorted), and whether
# every entry is a regular file by its directory entry type.
list_check() {
	python3 - "$1" "$2" <<'PY'
import os, sys
d, names = sys.argv[1].encode(), sys.argv[2]
want = sorted(open(names).read().split('\n')[:-1])
got, bad = [], 0
with os.scandir(d) as it:
    for e in it:
        got.append(e.name.hex())
        if not e.is_file(follow_symlinks=False):
            bad += 1
got.sort()
if got != want:
    missing = len(set(want) - set(got)); extra = len(set(got) - set(want))
    sys.exit("%d names listed, %d written: %d missing, %d extra" %
             (len(got), len(want), missing, extra))
if bad:
    sys.exit("%d entries are not regular files" % bad)
PY
}

# The kernel adds the same names in the same order to a new directory.
kernel_copy() {
	python3 - "$1" "$2" <<'PY'
import os, sys
d = sys.argv[1].encode()
os.mkdir(d)
for l in open(sys.argv[2]).read().split('\n')[:-1]:
    os.close(os.open(d + b'/' + bytes.fromhex(l), os.O_CREAT | os.O_WRONLY, 0o644))
PY
}

# Kernel workload: add 40 names, rename some, remove every third entry.
kernel_churn() {
	python3 - "$1" <<'PY'
import os, sys
d = sys.argv[1].encode()
for i in range(40):
    os.close(os.open(d + b'/new\xe2\x82\xac%d' % i, os.O_CREAT | os.O_WRONLY, 0o600))
names = sorted(os.listdir(d))
for i, n in enumerate(names):
    if i % 3 == 0:
        os.unlink(d + b'/' + n)
    elif i % 7 == 1:
        os.rename(d + b'/' + n, d + b'/' + n[:200] + b'.r')
PY
}

# Our directory against the kernel's copy, block by block: the same
# blocks at the same fork offsets with the same bytes, but for what must
# differ (inode numbers, each block's address, CRC, LSN, owner) and what
# the kernel leaves stale (unused space, entry padding, the unused part
# of leaf and node blocks).  skipleaf: leave out the leaf space (the
# kernel's leaf splits are its own history).
same_bytes() {
	python3 - "$@" <<'PY'
import subprocess, sys, struct
img, bs, dbs, agblocks = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
ours, kern, skipleaf = sys.argv[5], sys.argv[6], sys.argv[7] == '1'
SPACE = 1 << 35
def blocks(ino):
    out = subprocess.run(['xfs_db', '-r', '-c', 'inode ' + ino, '-c', 'bmap', img],
                         capture_output=True, text=True).stdout
    m = {}
    for l in out.splitlines():
        w = l.split()
        if w[:2] != ['data', 'offset']:
            continue
        off, ag, agb = int(w[2]), *map(int, w[5].strip('()').split('/'))
        for k in range(int(w[7])):
            m[off + k] = (ag * agblocks + agb + k) * bs
    f = open(img, 'rb')
    per = dbs // bs
    res = {}
    for off in sorted(m):
        if off % per:
            continue
        if skipleaf and SPACE // bs <= off < 2 * SPACE // bs:
            continue
        data = b''.join((f.seek(m[off + k]), f.read(bs))[1] for k in range(per))
        res[off] = mask(bytearray(data), off)
    return res
def mask(b, off):
    magic32 = struct.unpack('>I', b[0:4])[0]
    if magic32 in (0x58444233, 0x58444433, 0x58444633):     # XDB3 XDD3 XDF3
        b[4:24] = bytes(20); b[40:48] = bytes(8)
        if magic32 != 0x58444633:
            end = len(b)
            if magic32 == 0x58444233:
                end = len(b) - 8 - 8 * struct.unpack('>I', b[-8:-4])[0]
            p = 64
            while p < end:
                if b[p:p + 2] == b'\xff\xff':
                    n = struct.unpack('>H', b[p + 2:p + 4])[0]
                    b[p + 4:p + n - 2] = bytes(n - 6)   # stale bytes
                    p += n
                    continue
                n = b[p + 8]
                es = (8 + 1 + n + 1 + 2 + 7) & ~7
                b[p:p + 8] = bytes(8)                 # inode numbers differ
                b[p + 10 + n:p + es - 2] = bytes(es - 12 - n)   # padding
                p += es
    else:                                                    # da blkinfo
        b[12:32] = bytes(20); b[48:56] = bytes(8)
        magic = struct.unpack('>H', b[8:10])[0]
        count = struct.unpack('>H', b[64:66])[0]
        end = len(b)
        if magic == 0x3df1:       # bests and tail stay
            end = len(b) - 4 - 2 * struct.unpack('>I', b[-4:])[0]
        b[64 + 8 * count:end] = bytes(end - 64 - 8 * count)   # unused
    return bytes(b)
a, k = blocks(ours), blocks(kern)
if sorted(a) != sorted(k):
    sys.exit('different directory blocks: %s vs %s' % (sorted(a)[:8], sorted(k)[:8]))
for off in a:
    if a[off] != k[off]:
        i = next(i for i in range(len(a[off])) if a[off][i] != k[off][i])
        sys.exit('block at %d differs from byte %d' % (off, i))
print('%d blocks identical' % len(a))
PY
}

check_image() {
	local img=$1 what=$2 scale=$3 bs n ino got name count expect kfork agblocks dbs err kern want x
	rm -rf "$T/out" && mkdir "$T/out"
	if ! "$TOOL" "$img" "$T/out" "$scale" >"$T/tool.out" 2>&1; then
		fail "$what: xk_bld_dirtest failed: $(head -5 "$T/tool.out")"
		return
	fi
	if ! xfs_repair -n "$img" >"$T/xr.out" 2>&1; then
		fail "$what: xfs_repair -n: $(grep -v '^Phase\|^        - \|^No modify' "$T/xr.out" | head -20)"
		return
	fi
	if ! "$REPAIR" -n "$img" >"$T/kr.out" 2>&1; then
		fail "$what: xfskit-repair -n: $(head -20 "$T/kr.out")"
		return
	fi
	pass "$what: xfs_repair -n and xfskit-repair -n clean"
	bs=$(db_get "$img" "sb 0" blocksize)
	ROOTINO=$(db_get "$img" "sb 0" rootino)
	root_ls "$img"
	n=0
	while read -r name count expect; do
		ino=$(root_ino "$img" "$name")
		got=$(dir_format "$img" "$ino" "$bs")
		if [ "$got" != "$expect" ]; then
			fail "$what: $name ($count entries) is $got, expected $expect"
		fi
		n=$((n + 1))
	done <"$T/out/dirs"
	pass "$what: xfs_db shows $n directories in their formats"

	# First mount: the listing, and the kernel's own copies.
	loop_mount "$img" || return
	while read -r name count expect; do
		err=$(list_check "$MNT/$name" "$T/out/$name.names" 2>&1) ||
			fail "$what: kernel listing of $name: $err"
		case $name in
		e0|s5|b5|l500|n5000|t_block1|t_leaf1)
			kernel_copy "$MNT/k_$name" "$T/out/$name.names" ||
			fail "$what: kernel could not rebuild $name" ;;
		esac
	done <"$T/out/dirs"
	loop_umount || fail "$what: umount"
	pass "$what: kernel lists every directory exactly"
	root_ls "$img"
	# A kernel that labels new inodes (CONFIG_SECURITY) gives every new
	# directory an attr fork, so its short-form limit is smaller than
	# that of a directory without one: compare short forms only there.
	kfork=$(xfs_db -r -c "inode $(root_ino "$img" k_e0)" -c "print core.forkoff" "$img" |
		sed 's/.*= //')
	agblocks=$(db_get "$img" "sb 0" agblocks)
	dbs=$((bs << $(db_get "$img" "sb 0" dirblklog)))
	n=0
	while read -r name count expect; do
		case $name in e0|s5|b5|l500|n5000|t_block1|t_leaf1) ;; *) continue ;; esac
		[ "$expect" = local ] && [ "$kfork" != 0 ] && continue
		kern=$(dir_format "$img" "$(root_ino "$img" "k_$name")" "$bs")
		[ "$kern" = "$expect" ] ||
			fail "$what: $count names: the kernel made $kern, we made $expect"
		[ "$expect" = local ] && continue
		err=$(same_bytes "$img" "$bs" "$dbs" "$agblocks" \
			"$(root_ino "$img" "$name")" "$(root_ino "$img" "k_$name")" \
			"$([ "$expect" = node2 ] && echo 1 || echo 0)" 2>&1) ||
			fail "$what: $name differs from the kernel's: $err"
		n=$((n + 1))
	done <"$T/out/dirs"
	pass "$what: $n directories byte for byte as the kernel makes them"

	# Second mount: one more name in each directory at a limit, and a
	# workload in the others.
	loop_mount "$img" || return
	for x in sf block leaf node; do
		# The name the directory one larger has last.
		tail -1 "$T/out/t_${x}1.names" >"$T/one"
		python3 - "$MNT/t_$x" "$T/one" <<'PY' || fail "$what: adding to t_$x"
import os, sys
n = bytes.fromhex(open(sys.argv[2]).read().strip())
os.close(os.open(sys.argv[1].encode() + b'/' + n, os.O_CREAT | os.O_WRONLY, 0o644))
PY
	done
	while read -r name count expect; do
		case $name in
		t_sf|t_block|t_leaf|t_node) continue ;;
		esac
		kernel_churn "$MNT/$name" || fail "$what: kernel workload in $name"
	done <"$T/out/dirs"
	loop_umount || fail "$what: umount"
	root_ls "$img"
	# One more name in a directory at a limit: the kernel converts it to
	# the format of the directory one name larger.
	for x in sf block leaf node; do
		got=$(dir_format "$img" "$(root_ino "$img" "t_$x")" "$bs")
		want=$(awk -v n="t_${x}1" '$1 == n { print $3 }' "$T/out/dirs")
		[ "$got" = "$want" ] ||
			fail "$what: t_$x plus one name is $got in the kernel's hands, expected $want"
	done
	pass "$what: one name more converts each limit case as we do"
	xfs_repair -n "$img" >"$T/xr2.out" 2>&1 ||
		fail "$what: xfs_repair -n after the workload: $(grep -v '^Phase\|^        - \|^No modify' "$T/xr2.out" | head -20)"
	"$REPAIR" -n "$img" >"$T/kr2.out" 2>&1 ||
		fail "$what: xfskit-repair -n after the workload: $(head -20 "$T/kr2.out")"
	pass "$what: clean after the kernel's adds, renames and removals"
}

truncate -s 1G "$T/a.img"
"$MKFS" -q -f "$T/a.img" || fail "xfskit-mkfs"
check_image "$T/a.img" "xfskit-mkfs defaults" 1
rm -f "$T/a.img"
mkfs_xfs_image "$T/b.img" 1G
check_image "$T/b.img" "mkfs.xfs defaults" 0
rm -f "$T/b.img"
mkfs_xfs_image "$T/c.img" 1G -b size=1024
check_image "$T/c.img" "mkfs.xfs 1 KiB blocks" 0
rm -f "$T/c.img"
mkfs_xfs_image "$T/d.img" 1G -n size=16384
check_image "$T/d.img" "mkfs.xfs 16 KiB directory blocks" 0
rm -f "$T/d.img"

# Inode numbers over 32 bits: on 3 TiB in 4 AGs the directories of AGs 2
# and 3 have them, so the root's short form needs 8-byte numbers.
mkfs_xfs_image "$T/e.img" 3T -d agcount=4
rm -rf "$T/out" && mkdir "$T/out"
if ! "$TOOL" "$T/e.img" "$T/out" 0 >"$T/tool.out" 2>&1; then
	fail "wide inode numbers: xk_bld_dirtest failed: $(head -5 "$T/tool.out")"
elif ! xfs_repair -n "$T/e.img" >"$T/xr.out" 2>&1; then
	fail "wide inode numbers: xfs_repair -n: $(grep -v '^Phase\|^        - \|^No modify' "$T/xr.out" | head -20)"
elif ! "$REPAIR" -n "$T/e.img" >"$T/kr.out" 2>&1; then
	fail "wide inode numbers: xfskit-repair -n: $(head -20 "$T/kr.out")"
else
	ROOTINO=$(db_get "$T/e.img" "sb 0" rootino)
	i8=$(xfs_db -r -c "inode $ROOTINO" -c "print u3.sfdir3.hdr.i8count" "$T/e.img" |
		sed 's/.*= //')
	wide=$(xfs_db -r -c "inode $ROOTINO" -c ls "$T/e.img" |
		awk '$2 > 4294967295 { n++ } END { print n + 0 }')
	[ "$i8" = "$wide" ] && [ "$wide" -gt 0 ] ||
		fail "wide inode numbers: root i8count $i8 for $wide wide entries"
	loop_mount "$T/e.img" && {
		[ "$(ls -A "$MNT" | sort)" = "$(awk '{ print $1 }' "$T/out/dirs" | sort)" ] ||
			fail "wide inode numbers: the kernel lists another root"
		touch "$MNT/s5/new" "$MNT/more" || fail "wide inode numbers: kernel adds"
		loop_umount || fail "wide inode numbers: umount"
		xfs_repair -n "$T/e.img" >"$T/xr.out" 2>&1 ||
			fail "wide inode numbers: unclean after kernel adds"
	}
	pass "wide inode numbers: $wide of the root's entries, clean, kernel agrees"
fi
finish
