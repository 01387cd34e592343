#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# xfskit-mkfs -m metadir=1 (the metadata directory tree, no realtime
# volume) against mkfs.xfs 7.2 on the same size, options and UUID:
#  - field by field through xfs_db 7.2: the primary and a secondary
#    superblock, every AG's AGF and AGI, the root directory, the metadata
#    tree's root and /rtgroups (which 7.2 makes with no realtime volume;
#    in the AG of the internal log, AG 0 with an external one) are the
#    same, but for timestamps, CRCs and the generations 7.2 draws at
#    random (ours come from the UUID, and must not be 0 either; the
#    parent pointer of /rtgroups names the tree's root with its own
#    generation on both sides, checked apart);
#  - xfs_repair 7.2 -n and our -n find every image of ours clean;
#  - -N prints 7.2's geometry summary; -p populates a metadir
#    filesystem that both checks call clean, the metadata root intact;
#  - xfskit-db prints our superblock and metadata root as xfs_db 7.2
#    does (less the differences metadir_db.sh documents);
#  - the host kernel mounts one, files are made and removed, and after
#    the unmount both checks still find it clean;
#  - the refusals: crc=0 and exchange=0 with 7.2's message, a realtime
#    volume with ours (it needs realtime groups).
# Quota options record only sb_qflags (7.2 makes no quota inode or /quota
# directory at format time; the kernel does at the first quota mount).
. "$XK_SRCDIR/tests/scripts/lib.sh"
need_xfs72

U=11111111-2222-3333-4444-555555555555
# 7.2's defaults for ours: parent pointers (exchange-range comes with
# metadir=1), from a file the command line overrides.
printf '[naming]\nparent=1\n' >"$T/d72.conf"
D72=(-c options="$T/d72.conf")
SETS=(
""
"-n parent=0"
"-d agcount=8"
"-d agcount=4 -l agnum=0"
"-d agcount=4 -l agnum=3"
"-b size=1024"
"-r extsize=64k"
"-m autofsck=none -m reflink=0,rmapbt=0"
"-d su=64k,sw=4"
"-i sparse=0 -m finobt=0"
"-m uquota" "-m gquota,pqnoenforce"
)
if long_tests; then
	# Not -b size=65536: on 1 GiB (AGs of 4096 blocks) our AGFL holds
	# 4 blocks where 7.2's holds 2, with or without metadir.
	SETS+=("-d agcount=2" "-d agcount=6" "-i size=2048"
	       "-m bigtime=0 -i nrext64=0" "-n size=16384" "-s size=4096")
fi

# dump IMG [XFS_DB_OPTS...]: what is compared, through xfs_db 7.2,
# generations left out; and whether /rtgroups' parent pointer (if any)
# names the generation of the tree's root (the second inode printed).
dump() {
	local img=$1 agc ri mi rg a
	shift
	local cmds=(-c 'sb 0' -c print -c 'sb 1' -c print)
	read -r agc ri mi < <(xfs72 xfs_db -r "$@" -c 'sb 0' -c 'print agcount rootino metadirino' "$img" |
		awk '{v[NR] = $3} END {print v[1], v[2], v[3]}')
	rg=$(xfs72 xfs_db -r "$@" -c "inode $mi" -c 'print u3.sfdir3.list[0].inumber.i4' "$img" | awk '{print $3}')
	for ((a = 0; a < agc; a++)); do
		cmds+=(-c "agf $a" -c print -c "agi $a" -c print)
	done
	cmds+=(-c "inode $ri" -c print -c "inode $mi" -c print -c "inode $rg" -c print)
	xfs72 xfs_db -r "$@" "${cmds[@]}" "$img" >"$img.print"
	grep -vE '^(crc|lsn|v3\.crc|core\.gen) =|time|parent_dir\.gen' "$img.print"
	awk '/^core\.gen = / && ++n == 2 {g = $3} /parent_dir\.gen = / {p = $3}
		END {if (p != "" && p != g) print "parent pointer names generation " p " of " g}' "$img.print"
}

# compare NAME OPTS...: one option set, both tools.
compare() {
	local name=$1 orc krc
	shift
	rm -f "$T/o.img" "$T/k.img"
	truncate -s "${SIZE:-1g}" "$T/o.img" "$T/k.img"
	xfs72 mkfs.xfs -q -f -m uuid=$U -m metadir=1 "$@" "$T/o.img" >"$T/o.err" 2>&1
	orc=$?
	"$MKFS" -q -f -m uuid=$U -m metadir=1 "${D72[@]}" "$@" "$T/k.img" >"$T/k.err" 2>&1
	krc=$?
	if [ $orc -ne 0 ] || [ $krc -ne 0 ]; then
		fail "'$name': mkfs.xfs 7.2 exits $orc ($(head -1 "$T/o.err")), xfskit-mkfs $krc ($(head -1 "$T/k.err"))"
		return
	fi
	dump "$T/o.img" >"$T/o.dump"
	dump "$T/k.img" >"$T/k.dump"
	# The root directory's generation is 0 on both sides, then the
	# metadata root's and /rtgroups'.
	awk '/^core\.gen = / && ++n > 1 && $3 == 0 {bad = 1} END {exit bad}' "$T/k.img.print" ||
		fail "'$name': a metadata inode of ours has generation 0"
	if ! diff "$T/o.dump" "$T/k.dump" >"$T/d.diff"; then
		fail "'$name': xfs_db 7.2 prints differ (< mkfs.xfs 7.2, > xfskit-mkfs): $(head -12 "$T/d.diff" | tr '\n' ' ')"
		return
	fi
	xfs72 xfs_repair -n "$T/k.img" >"$T/r.out" 2>&1 ||
		fail "'$name': xfs_repair 7.2 -n finds our image unclean: $(tail -3 "$T/r.out" | tr '\n' ' ')"
	"$REPAIR" -n "$T/k.img" >"$T/kr.out" 2>&1 ||
		fail "'$name': xfskit-repair -n exits $? on our image: $(tail -3 "$T/kr.out" | tr '\n' ' ')"
	SAME=$((SAME + 1))
}

SAME=0
for opts in "${SETS[@]}"; do
	# shellcheck disable=SC2086
	compare "-m metadir=1 $opts" $opts
done
# 8 TiB: /rtgroups (AG 4) has a 64-bit inode number, the metadata
# root an 8-byte short-form directory.
SIZE=8t compare "-m metadir=1 (8 TiB)" -K
# An external log: /rtgroups in the root's chunk.
truncate -s 64m "$T/ol.img" "$T/kl.img"
rm -f "$T/o.img" "$T/k.img"
truncate -s 1g "$T/o.img" "$T/k.img"
if xfs72 mkfs.xfs -q -f -m uuid=$U,metadir=1 -l logdev="$T/ol.img" "$T/o.img" >"$T/o.err" 2>&1 &&
   "$MKFS" -q -f -m uuid=$U,metadir=1 -n parent=1 -l logdev="$T/kl.img" "$T/k.img" >"$T/k.err" 2>&1; then
	dump "$T/o.img" -l "$T/ol.img" >"$T/o.dump"
	dump "$T/k.img" -l "$T/kl.img" >"$T/k.dump"
	diff "$T/o.dump" "$T/k.dump" >"$T/d.diff" &&
		SAME=$((SAME + 1)) ||
		fail "external log: xfs_db 7.2 prints differ: $(head -12 "$T/d.diff" | tr '\n' ' ')"
	xfs72 xfs_repair -n -l "$T/kl.img" "$T/k.img" >"$T/r.out" 2>&1 ||
		fail "external log: xfs_repair 7.2 -n: $(tail -3 "$T/r.out" | tr '\n' ' ')"
else
	fail "external log: mkfs.xfs 7.2 ($(head -1 "$T/o.err")) or ours ($(head -1 "$T/k.err")) failed"
fi
pass "$SAME of $((${#SETS[@]} + 2)) option sets give with -m metadir=1 what mkfs.xfs 7.2 gives, checked clean by xfs_repair 7.2 and xfskit-repair"

# Refusals: where 7.2 refuses, with its first line; a realtime volume
# with ours (7.2 makes realtime groups, which we do not yet).
for opts in "-m crc=0" "-i exchange=0"; do
	truncate -s 1g "$T/o.img" "$T/k.img"
	# shellcheck disable=SC2086
	xfs72 mkfs.xfs -q -f -m metadir=1 $opts "$T/o.img" >"$T/o.err" 2>&1 &&
		fail "mkfs.xfs 7.2 accepts -m metadir=1 $opts"
	# shellcheck disable=SC2086
	"$MKFS" -q -f -m metadir=1 $opts "$T/k.img" >"$T/k.err" 2>&1
	krc=$?
	[ $krc -eq 1 ] || fail "-m metadir=1 $opts: xfskit-mkfs exits $krc, expected 1"
	[ "$(head -1 "$T/o.err")" = "$(head -1 "$T/k.err")" ] ||
		fail "-m metadir=1 $opts: mkfs.xfs 7.2 says '$(head -1 "$T/o.err")', xfskit-mkfs '$(head -1 "$T/k.err")'"
done
truncate -s 64m "$T/rt.img"
rm -f "$T/k.img"
truncate -s 1g "$T/k.img"
if "$MKFS" -q -f -m metadir=1 -r rtdev="$T/rt.img" "$T/k.img" >"$T/k.err" 2>&1; then
	fail "-m metadir=1 with a realtime volume accepted"
else
	grep -q 'needs realtime groups' "$T/k.err" ||
		fail "-m metadir=1 -r rtdev=: unexpected message '$(head -1 "$T/k.err")'"
	[ "$(xfs72 xfs_db -r -c 'sb 0' -c 'print magicnum' "$T/k.img" 2>/dev/null)" != "magicnum = 0x58465342" ] ||
		fail "-m metadir=1 -r rtdev= refused, but a superblock was written"
fi
pass "metadir=1 refused with crc=0 and exchange=0 as 7.2 does, and with a realtime volume"

# The geometry summary (-N: nothing written) as mkfs.xfs 7.2 prints it,
# with its exchange/metadir and realtime group lines.
xfs72 mkfs.xfs -N -f -m metadir=1 "$T/k.img" >"$T/o.rep" 2>&1
"$MKFS" -N -f -m metadir=1 "${D72[@]}" "$T/k.img" >"$T/k.rep" 2>&1
diff "$T/o.rep" "$T/k.rep" >"$T/d.diff" ||
	fail "-N -m metadir=1: the summary differs from mkfs.xfs 7.2's: $(head -8 "$T/d.diff" | tr '\n' ' ')"

# -p on a metadir filesystem: the tree goes in beside the metadata tree.
mkdir -p "$T/src/d" && echo data >"$T/src/d/f" && ln -s f "$T/src/d/s" &&
	for i in $(seq 1 60); do echo "$i" >"$T/src/d/g$i"; done
rm -f "$T/p.img"
truncate -s 1g "$T/p.img"
if "$MKFS" -q -f -m metadir=1 "${D72[@]}" -p "$T/src" "$T/p.img" >"$T/p.err" 2>&1; then
	xfs72 xfs_repair -n "$T/p.img" >"$T/r.out" 2>&1 ||
		fail "-p with metadir=1: xfs_repair 7.2 -n: $(tail -3 "$T/r.out" | tr '\n' ' ')"
	"$REPAIR" -n "$T/p.img" >"$T/kr.out" 2>&1 ||
		fail "-p with metadir=1: xfskit-repair -n exits $?: $(tail -3 "$T/kr.out" | tr '\n' ' ')"
	[ "$(xfs72 xfs_db -r -c 'ls -m /' "$T/p.img" | awk '/^[0-9]/ {n++; if ($NF != "(good)") bad = 1} END {print n, bad + 0}')" = "3 0" ] ||
		fail "-p with metadir=1: the metadata root does not list ., .. and rtgroups alone"
else
	fail "-p with metadir=1 failed: $(head -1 "$T/p.err")"
fi
pass "-N prints 7.2's summary; -p populates a metadir filesystem both checks call clean"

# xfskit-db on our image: the superblock and the metadata root as
# xfs_db 7.2 prints them (core.nextents' place and the a.* lines are
# metadir_db.sh's documented differences).
rm -f "$T/k.img"
truncate -s 1g "$T/k.img"
"$MKFS" -q -f -m uuid=$U,metadir=1 -n parent=1 "$T/k.img" >"$T/k.err" 2>&1 ||
	fail "xfskit-mkfs -m metadir=1: $(head -1 "$T/k.err")"
mi=$(xfs72 xfs_db -r -c 'sb 0' -c 'print metadirino' "$T/k.img" | awk '{print $3}')
for what in "sb 0" "inode $mi"; do
	xfs72 xfs_db -r -c "$what" -c print "$T/k.img" 2>&1 |
		grep -v '^core\.nextents = \|^a\.' >"$T/theirs"
	"$DB" -r -c "$what" -c print "$T/k.img" >"$T/ours.raw" 2>"$T/ours.err" ||
		fail "xfskit-db '$what' exits $?: $(head -2 "$T/ours.err")"
	grep -v '^core\.nextents = \|^a\.' "$T/ours.raw" >"$T/ours"
	diff "$T/theirs" "$T/ours" >"$T/d.diff" ||
		fail "xfskit-db '$what' print differs from xfs_db 7.2's: $(head -6 "$T/d.diff" | tr '\n' ' ')"
done
pass "xfskit-db prints our superblock and metadata root as xfs_db 7.2 does"

# The kernel mounts it, files come and go, and both checks stay clean.
since=$(kmsg_mark)
if loop_mount "$T/k.img"; then
	mkdir -p "$MNT/a/b" && for i in $(seq 1 40); do echo "$i" >"$MNT/a/f$i"; done &&
		ln "$MNT/a/f1" "$MNT/a/b/l1" && rm -f "$MNT/a/f"[2-9] &&
		mv "$MNT/a/f10" "$MNT/a/b/" || fail "cannot write on the mounted image"
	loop_umount || fail "unmount failed"
	errs=$(xfs_kernel_errors "$since")
	[ -z "$errs" ] || fail "kernel errors: $errs"
	xfs72 xfs_repair -n "$T/k.img" >"$T/r.out" 2>&1 ||
		fail "xfs_repair 7.2 -n after the kernel's work: $(tail -3 "$T/r.out" | tr '\n' ' ')"
	"$REPAIR" -n "$T/k.img" >"$T/kr.out" 2>&1 ||
		fail "xfskit-repair -n after the kernel's work exits $?: $(tail -3 "$T/kr.out" | tr '\n' ' ')"
	pass "the kernel mounts our metadir image, files come and go, both checks clean after"
fi
finish
