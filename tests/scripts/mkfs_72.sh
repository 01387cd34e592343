#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# xfskit-mkfs against mkfs.xfs 7.2 on the same image size, options and
# UUID: both accept or both refuse each option set (refusals with the
# same first line); when both accept, xfs_db 7.2 prints the same primary
# superblock, AGF and AGI of every AG and root inode (timestamps and
# CRCs left out: they differ between any two runs), and xfs_repair 7.2
# -n finds ours clean.  xfskit-mkfs is given 7.2's feature defaults
# (exchange-range, parent pointers) through a configuration file, which
# the command line overrides as it does for mkfs.xfs.  Then every
# configuration file 7.2 ships (lts_*.conf) is compared the same way,
# lts_6.1.conf also with mkfs.xfs 6.1's defaults, and a 7.2-default
# image of ours is mounted by the kernel.
. "$XK_SRCDIR/tests/scripts/lib.sh"
need_xfsprogs
need_xfs72

U=11111111-2222-3333-4444-555555555555
CONFDIR=$("$XFS72" dir)/usr/share/xfsprogs/mkfs
printf '[inode]\nexchange=1\n[naming]\nparent=1\n' >"$T/d72.conf"

SETS=(
""
"-n parent=0" "-i exchange=0" "-n parent=0 -i exchange=0"
"-m rmapbt=0" "-m reflink=0" "-m finobt=0" "-i nrext64=0 -n parent=0"
"-m autofsck=none" "-m autofsck=0" "-m autofsck=1" "-m autofsck"
"-m autofsck=check -n parent=0" "-m autofsck=optimize -m rmapbt=0"
"-m autofsck=repair -n parent=0 -m rmapbt=0" "-m autofsck=check"
"-m autofsck=2" "-m autofsck=bogus" "-m metadir=0"
"-m uquota" "-m gqnoenforce,pquota" "-m uquota,uqnoenforce"
"-m uquota=0" "-m pquota,metadir=0"
"-d daxinherit=1" "-d daxinherit=0" "-d projinherit=0"
"-d projinherit=4294967295" "-d extszinherit=16" "-d extszinherit=0"
"-d extszinherit=65536" "-d extszinherit=65537" "-d cowextsize=64"
"-d cowextsize=0" "-d cowextsize=70000" "-d cowextsize=8 -m reflink=0"
"-d cowextsize" "-d daxinherit,projinherit=7,extszinherit=32,cowextsize=128"
"-d concurrency=0" "-d concurrency=2" "-d concurrency=nr_cpus"
"-d concurrency=4 -d agcount=8" "-l concurrency=8" "-l concurrency"
"-l concurrency=4 -l size=64m"
"-b size=1024" "-b size=1024 -m autofsck=optimize" "-i size=1024"
"-i size=2048 -d projinherit=3" "-b size=65536 -i exchange=0"
"-n size=65536" "-s size=4096" "-d su=64k,sw=4" "-d agcount=7"
"-l size=100m -d concurrency=3"
"-r extsize=8k" "-r extsize=1m -b size=1024" "-r extsize=6k" "-r extsize=1k"
"-r extsize=2g"
)

# dump IMG: what is compared, through xfs_db 7.2.
dump() {
	local agc ri cmds=(-c 'sb 0' -c print) a
	agc=$(xfs72 xfs_db -r -c 'sb 0' -c 'print agcount' "$1" | awk '{print $3}')
	ri=$(xfs72 xfs_db -r -c 'sb 0' -c 'print rootino' "$1" | awk '{print $3}')
	for ((a = 0; a < agc; a++)); do
		cmds+=(-c "agf $a" -c print -c "agi $a" -c print)
	done
	cmds+=(-c "inode $ri" -c print)
	xfs72 xfs_db -r "${cmds[@]}" "$1" | grep -vE '^(crc|lsn|v3\.crc) =|time'
}

# compare SIZE NAME ORACLE_OPTS -- OUR_OPTS: one option set.
compare() {
	leak_check_next
	local size=$1 name=$2 orc krc
	shift 2
	local -a oopts=() kopts=()
	while [ "$1" != -- ]; do oopts+=("$1"); shift; done
	shift
	kopts=("$@")
	rm -f "$T/o.img" "$T/k.img"
	truncate -s "$size" "$T/o.img" "$T/k.img"
	xfs72 mkfs.xfs -q -f -m uuid=$U "${oopts[@]}" "$T/o.img" >"$T/o.err" 2>&1
	orc=$?
	"$MKFS" -q -f -m uuid=$U "${kopts[@]}" "$T/k.img" >"$T/k.err" 2>&1
	krc=$?
	if [ $orc -eq 0 ] && [ $krc -ne 0 ]; then
		fail "'$name': mkfs.xfs 7.2 accepts it, xfskit-mkfs refuses: $(head -1 "$T/k.err")"
		return
	elif [ $orc -ne 0 ] && [ $krc -eq 0 ]; then
		fail "'$name': mkfs.xfs 7.2 refuses it ($(head -1 "$T/o.err")), xfskit-mkfs accepts it"
		return
	elif [ $orc -ne 0 ]; then
		[ $krc -eq 1 ] || fail "'$name': xfskit-mkfs exit $krc, expected 1"
		[ "$(head -1 "$T/o.err")" = "$(head -1 "$T/k.err")" ] ||
			fail "'$name': mkfs.xfs 7.2 says '$(head -1 "$T/o.err")', xfskit-mkfs '$(head -1 "$T/k.err")'"
		REFUSED=$((REFUSED + 1))
		return
	fi
	dump "$T/o.img" >"$T/o.dump"
	dump "$T/k.img" >"$T/k.dump"
	if ! diff "$T/o.dump" "$T/k.dump" >"$T/d.diff"; then
		fail "'$name': xfs_db 7.2 prints differ (< mkfs.xfs 7.2, > xfskit-mkfs): $(head -12 "$T/d.diff" | tr '\n' ' ')"
	elif ! xfs72 xfs_repair -n "$T/k.img" >"$T/r.out" 2>&1; then
		fail "'$name': xfs_repair 7.2 -n finds our image unclean: $(tail -3 "$T/r.out" | tr '\n' ' ')"
	else
		SAME=$((SAME + 1))
	fi
}

SAME=0 REFUSED=0
for opts in "${SETS[@]}"; do
	# shellcheck disable=SC2086
	compare 2g "$opts" $opts -- -c options="$T/d72.conf" $opts
done
# Concurrency matters on large filesystems (AGs of 4 GiB and more).
for opts in "-d concurrency=16" "-d concurrency=5 -n parent=0" \
	    "-l concurrency=64" "-l concurrency=32 -b size=1024"; do
	# shellcheck disable=SC2086
	compare 200g "$opts (200g)" $opts -- -c options="$T/d72.conf" $opts
done
pass "$SAME option sets give what mkfs.xfs 7.2 gives, $REFUSED refused alike, of $((${#SETS[@]} + 4))"
[ $SAME -gt 0 ] || fail "no option set was accepted by both"

SAME=0 REFUSED=0
n=0
for conf in "$CONFDIR"/lts_*.conf; do
	[ -f "$conf" ] || continue
	n=$((n + 1))
	compare 2g "-c options=${conf##*/}" -c options="$conf" -- -c options="$conf"
done
[ $n -gt 0 ] || fail "no lts_*.conf in $CONFDIR"
# dax_x86_64.conf leaves the features to the defaults: ours are given
# 7.2's on the command line.
if [ -f "$CONFDIR/dax_x86_64.conf" ]; then
	n=$((n + 1))
	compare 2g "-c options=dax_x86_64.conf" -c options="$CONFDIR/dax_x86_64.conf" -- \
		-c options="$CONFDIR/dax_x86_64.conf" -i exchange=1 -n parent=1
fi
[ $REFUSED -eq 0 ] || fail "$REFUSED configuration files refused by both"
pass "$SAME of $n configuration files 7.2 ships give what mkfs.xfs 7.2 gives with them"

# lts_6.1.conf against mkfs.xfs 6.1's defaults: the same but for the
# autofsck=none property 7.2 stores (autofsck=0 in the file) and the
# attribute bit it sets.
if [ -f "$CONFDIR/lts_6.1.conf" ]; then
	truncate -s 2g "$T/s.img" "$T/k.img"
	mkfs.xfs -q -f -m uuid=$U "$T/s.img" >"$T/s.err" 2>&1 ||
		fail "mkfs.xfs 6.1 failed: $(head -1 "$T/s.err")"
	"$MKFS" -q -f -m uuid=$U -c options="$CONFDIR/lts_6.1.conf" "$T/k.img" >"$T/k.err" 2>&1 ||
		fail "xfskit-mkfs -c options=lts_6.1.conf failed: $(head -1 "$T/k.err")"
	dump "$T/s.img" | grep -vE '^(versionnum|core\.forkoff|core\.aformat|v3\.change_count|a\.)' >"$T/s.dump"
	dump "$T/k.img" | grep -vE '^(versionnum|core\.forkoff|core\.aformat|v3\.change_count|a\.)' >"$T/k.dump"
	if diff "$T/s.dump" "$T/k.dump" >"$T/d.diff"; then
		pass "lts_6.1.conf: the superblock, AG headers and root of mkfs.xfs 6.1's defaults, but the autofsck property"
	else
		fail "lts_6.1.conf differs from mkfs.xfs 6.1's defaults: $(head -12 "$T/d.diff" | tr '\n' ' ')"
	fi
	[ "$(db_get "$T/k.img" 'sb 0' versionnum)" = "$(printf '%#x' $(($(db_get "$T/s.img" 'sb 0' versionnum) | 0x10)))" ] ||
		fail "lts_6.1.conf: versionnum $(db_get "$T/k.img" 'sb 0' versionnum), expected 6.1's plus the attribute bit"
fi

# -p: the property is set on the populated root (7.2 sets it after
# populating); the root hints, which the populated files would not
# inherit, are refused with -p.
mkdir -p "$T/src/d" && echo data >"$T/src/d/f" && setfattr -n user.k -v v "$T/src" 2>/dev/null
truncate -s 2g "$T/p.img"
if "$MKFS" -q -f -c options="$T/d72.conf" -p "$T/src" "$T/p.img" >"$T/p.err" 2>&1; then
	val=$(xfs72 xfs_db -r -c 'sb 0' -c 'print rootino' "$T/p.img" | awk '{print $3}')
	xfs72 xfs_db -r -c "inode $val" -c print "$T/p.img" >"$T/p.root"
	grep -q '^a\..*name = "xfs:autofsck"' "$T/p.root" &&
		grep -q '^a\..*value = "repair"' "$T/p.root" ||
		fail "-p: the populated root lacks xfs:autofsck=repair: $(grep '^a\.' "$T/p.root" | tr '
' ' ')"
	xfs72 xfs_repair -n "$T/p.img" >"$T/r.out" 2>&1 ||
		fail "-p: xfs_repair 7.2 -n: $(tail -3 "$T/r.out" | tr '
' ' ')"
else
	fail "-p with 7.2's defaults failed: $(head -1 "$T/p.err")"
fi
if "$MKFS" -q -f -d extszinherit=16 -p "$T/src" "$T/p.img" >"$T/p.err" 2>&1; then
	fail "-d extszinherit with -p accepted"
else
	grep -q 'cannot be combined with -p' "$T/p.err" ||
		fail "-d extszinherit with -p: unexpected message $(head -1 "$T/p.err")"
fi
pass "-p keeps the autofsck property and refuses the root hints"

# The kernel mounts a 7.2-default image of ours (parent pointers,
# exchange-range, autofsck property) with every root hint set, and
# reads the property back.
truncate -s 2g "$T/m.img"
"$MKFS" -q -f -c options="$T/d72.conf" -d daxinherit=1,projinherit=5,extszinherit=16,cowextsize=32 "$T/m.img" ||
	fail "xfskit-mkfs of the image to mount failed"
since=$(kmsg_mark)
if loop_mount "$T/m.img"; then
	val=$(getfattr --absolute-names -n trusted.xfs:autofsck --only-values "$MNT" 2>/dev/null)
	[ "$val" = repair ] || fail "the kernel reads trusted.xfs:autofsck as '$val', expected 'repair'"
	mkdir "$MNT/d" && echo x >"$MNT/d/f" || fail "cannot write on the mounted image"
	loop_umount
	errs=$(xfs_kernel_errors "$since")
	[ -z "$errs" ] || fail "kernel errors: $errs"
	xfs72 xfs_repair -n "$T/m.img" >"$T/r.out" 2>&1 ||
		fail "xfs_repair 7.2 -n after the mount: $(tail -3 "$T/r.out" | tr '\n' ' ')"
	pass "the kernel mounts, writes and unmounts a 7.2-default image of ours"
fi
finish
