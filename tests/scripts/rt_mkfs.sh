#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# xfskit-mkfs -r rtdev=FILE[,size=][,extsize=] against mkfs.xfs 7.2 with
# the same options and -m uuid= (and 7.2's parent pointers and exchange
# off, which are our defaults):
#  1. every superblock, AGF, AGI and AGFL, the realtime bitmap and
#     summary inodes' mappings, sizes and flags, and every block of both
#     files are the same (xfs_db 7.2 prints), and the realtime line of
#     the report is the same;
#  2. xfs_repair -n -r 6.1 and 7.2 and xfskit-repair -n -r find it clean;
#  3. -m rmapbt=1 or reflink=1 with rtdev= is refused (mkfs.xfs refuses
#     them without realtime groups), and so is size= beyond the device.
. "$XK_SRCDIR/tests/scripts/lib.sh"
need_xfsprogs
need_xfs72
UUID=4e1f0d2c-9a6b-4c3d-8e2f-1a2b3c4d5e6f
d=$T/d.img
r=$T/r.img

# dump: what xfs_db 7.2 prints of the headers and the realtime files;
# the addresses in its corruption warnings (1 KiB blocks) are the
# process's, not the image's.
dump() {
	local n a q b nb
	n=$(xfs72 xfs_db -r -c 'sb 0' -c 'p agcount' "$d" 2>/dev/null | awk '{print $3}')
	for ((a = 0; a < ${n:-0}; a++)); do
		xfs72 xfs_db -r -c "sb $a" -c p -c "agf $a" -c p -c "agi $a" \
			-c p -c "agfl $a" -c p "$d"
	done
	for q in 129 130; do
		xfs72 xfs_db -r -c "inode $q" -c bmap \
			-c "p core.mode core.size core.nblocks core.flags core.nextents" "$d"
		nb=$(xfs72 xfs_db -r -c "inode $q" -c "p core.nblocks" "$d" 2>/dev/null | awk '{print $3}')
		for ((b = 0; b < ${nb:-0}; b++)); do
			xfs72 xfs_db -r -c "inode $q" -c "dblock $b" -c "type data" -c p "$d"
		done
	done 2>&1 | sed 's/detected at 0x[0-9a-f]*/detected at ADDR/'
}

# mk TOOL OPTS...: fresh 1 GiB data and 256 MiB realtime files, then
# TOOL's mkfs with OPTS (@ stands for the realtime file).
mk() {
	local tool=$1
	shift
	rm -f "$d" "$r"
	truncate -s 1g "$d"
	truncate -s 256m "$r"
	set -- "${@//@/$r}"
	case $tool in
	7.2) xfs72 mkfs.xfs -f -m uuid=$UUID -n parent=0 -i exchange=0 "$@" \
		-d file,name="$d",size=1g ;;
	ours) "$MKFS" -f -m uuid=$UUID "$@" -d file,name="$d",size=1g ;;
	esac >"$T/mk.out" 2>&1
}

for c in "-r rtdev=@,size=256m" "-r rtdev=@,size=250m,extsize=64k" \
	 "-r rtdev=@,extsize=16k" "-b size=1024 -r rtdev=@,size=100m" \
	 "-d agcount=8 -r rtdev=@,size=200m"; do
	# shellcheck disable=SC2086
	if ! mk 7.2 $c; then
		fail "mkfs.xfs 7.2 $c: $(cat "$T/mk.out")"
		continue
	fi
	dump >"$T/x.dump"
	grep '^realtime' "$T/mk.out" >"$T/x.rt"
	# shellcheck disable=SC2086
	if ! mk ours $c; then
		fail "xfskit-mkfs $c: $(cat "$T/mk.out")"
		continue
	fi
	dump >"$T/k.dump"
	grep '^realtime' "$T/mk.out" >"$T/k.rt"
	if [ -s "$T/x.dump" ] && cmp -s "$T/x.dump" "$T/k.dump"; then
		pass "$c: headers, rt inodes, bitmap and summary equal ($(wc -l <"$T/x.dump") lines)"
	else
		fail "$c: differs from mkfs.xfs 7.2: $(diff "$T/x.dump" "$T/k.dump" | head -8)"
	fi
	cmp -s "$T/x.rt" "$T/k.rt" && [ -s "$T/k.rt" ] ||
		fail "$c: report line '$(cat "$T/k.rt")', mkfs.xfs 7.2 '$(cat "$T/x.rt")'"
	: >"$T/n.out"
	if xfs_repair_clean "$d" "$T/c.out" -r "$r" &&
	   "$REPAIR" -n -r "$r" "$d" >"$T/n.out" 2>&1; then
		pass "$c: xfs_repair -n -r 6.1 and 7.2 and xfskit-repair -n -r clean"
	else
		fail "$c: not clean: $(cat "$T/c.out") $(head -4 "$T/n.out")"
	fi
done

for c in "-m rmapbt=1 -r rtdev=@" "-m reflink=1 -r rtdev=@" "-r rtdev=@,size=512m"; do
	# shellcheck disable=SC2086
	if mk ours $c; then
		fail "xfskit-mkfs $c: accepted"
	else
		pass "xfskit-mkfs $c: refused: $(head -1 "$T/mk.out")"
	fi
done
finish
