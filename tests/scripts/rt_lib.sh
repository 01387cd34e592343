# SPDX-License-Identifier: GPL-2.0-or-later
# Realtime test images (classic realtime volume, no rtgroups), sourced by
# rt_*.sh after lib.sh.  The host kernel has no CONFIG_XFS_RT, so
# realtime files are made as the issue describes: mkfs.xfs -p puts two
# files on the data device, xfs_db -x sets their realtime flag (their
# extents then name realtime blocks, which the bitmap still calls free),
# and xfs_repair -r settles the filesystem (marks the extents in use in
# the bitmap and summary, counts sb_frextents, frees the data-device
# blocks).  Both xfs_repair versions find the result clean.

# rt_oracle TOOL: the xfsprogs version given ("6.1" or "7.2") as a
# command prefix.
rt_oracle() {
	case $1 in
	6.1) echo "" ;;
	7.2) echo "$XFS72" ;;
	esac
}

# rt_mkfs VER DATA RT [OPTS...]: mkfs.xfs VER with a 256 MiB realtime
# device and a 512 MiB data device, and files f1 (3000000 bytes, inode 131)
# and f2 (100000 bytes, inode 132) in the root.
rt_mkfs() {
	local v=$1 d=$2 r=$3 pre
	shift 3
	pre=$(rt_oracle "$v")
	[ -f "$T/rt_f1" ] || {
		head -c 3000000 /dev/urandom >"$T/rt_f1"
		head -c 100000 /dev/urandom >"$T/rt_f2"
		printf 'rt\n0 0\nd--755 0 0\nf1 ---644 0 0 %s\nf2 ---644 0 0 %s\n$\n' \
			"$T/rt_f1" "$T/rt_f2" >"$T/rt_proto"
	}
	rm -f "$d" "$r"
	truncate -s 512m "$d"
	truncate -s 256m "$r"
	# shellcheck disable=SC2086
	$pre mkfs.xfs -q -f -p "$T/rt_proto" "$@" -r rtdev="$r",size=256m \
		-d file,name="$d",size=512m >"$T/rt_mkfs.out" 2>&1
}

# rt_settle VER DATA RT: f1 and f2 made realtime files, the filesystem
# settled by xfs_repair VER -r.  Fails when anything does.
rt_settle() {
	local pre
	pre=$(rt_oracle "$1")
	for ino in 131 132; do
		$pre xfs_db -x -c "inode $ino" -c "write core.realtime 1" "$2" \
			>/dev/null 2>&1 || return 1
	done
	$pre xfs_repair -r "$3" "$2" >"$T/rt_settle.out" 2>&1
}

# rt_image VER DATA RT: rt_mkfs and rt_settle, with what failed in
# $T/rt_why.
rt_image() {
	if ! rt_mkfs "$1" "$2" "$3"; then
		echo "mkfs.xfs $1: $(cat "$T/rt_mkfs.out")" >"$T/rt_why"
		return 1
	fi
	if ! rt_settle "$1" "$2" "$3"; then
		echo "settling with xfs_repair $1 -r: $(tail -3 "$T/rt_settle.out")" >"$T/rt_why"
		return 1
	fi
}

# rt_clean DATA RT OUT: both xfs_repair -n -r find it clean.
rt_clean() {
	xfs_repair_clean "$1" "$3" -r "$2"
}

# rt_block DATA INO N: the byte offset of file block N of inode INO (a
# realtime metadata file, on the data device).
rt_block() {
	local fsb
	fsb=$(xfs_db -r -c "inode $2" -c "bmap" "$1" 2>/dev/null |
		awk -v n="$3" '$1 == "data" && n >= $3 && n < $3 + $8 {
			print $5 + n - $3; exit }')
	[ -n "$fsb" ] || return 1
	xfs_db -r -c "convert fsb $fsb byte" "$1" 2>/dev/null |
		sed -n 's/.*(\([0-9]*\)).*/\1/p'
}

# rt_damaged NAME DATA RT WANT DB_ARGS...: xfs_db 7.2 -x DB_ARGS damages
# DATA (with RT), then xfs_repair 7.2 -n -r must exit 1 (the damage was
# made) and xfskit-repair -n -r must exit 1 and say WANT.
rt_damaged() {
	local name=$1 d=$2 r=$3 want=$4 orc rc
	shift 4
	xfs72 xfs_db -x -R "$r" "$@" "$d" >"$T/db.out" 2>&1
	xfs72 xfs_repair -n -r "$r" "$d" >"$T/o.out" 2>&1
	orc=$?
	"$REPAIR" -n -r "$r" "$d" >"$T/n.out" 2>&1
	rc=$?
	if [ $orc -ne 1 ]; then
		fail "$name: xfs_repair 7.2 -n exits $orc, not 1: the damage was not made ($(cat "$T/db.out"))"
	elif [ $rc -ne 1 ] || ! grep -qF -- "$want" "$T/n.out"; then
		fail "$name: xfskit-repair -n -r: exit $rc, want 1 and \"$want\"; xfs_repair says: $(grep -v '^ \|^Phase' "$T/o.out" | head -3); we say: $(repair_own "$T/n.out" | head -4)"
	else
		pass "$name: found (\"$want\"), as xfs_repair 7.2 -n"
	fi
}

# rt_refuses NAME DATA RT: xfskit-repair -r exits non-zero and writes
# nothing to either device.
rt_refuses() {
	rt_untouched "$@" refuses
}

# rt_untouched NAME DATA RT WANT: xfskit-repair -r exits WANT (or
# non-zero for "refuses") and writes nothing to either device.
rt_untouched() {
	local before rc ok
	before=$(image_state "$2" "$3")
	"$REPAIR" -r "$3" "$2" >"$T/r.out" 2>&1
	rc=$?
	case $4 in
	refuses) [ $rc -ne 0 ] && ok=1 ;;
	*) [ $rc -eq "$4" ] && ok=1 ;;
	esac
	if [ -n "$ok" ] && [ "$(image_state "$2" "$3")" = "$before" ]; then
		pass "$1: xfskit-repair -r: exit $rc, nothing written"
	else
		fail "$1: xfskit-repair -r: exit $rc, images $( [ "$(image_state "$2" "$3")" = "$before" ] && echo unchanged || echo CHANGED): $(tail -3 "$T/r.out")"
	fi
}

# rt_groups_image DATA RT: mkfs.xfs 7.2 -m metadir=1 with three realtime
# groups and 200 files of 3 blocks (a0..a199) and 350 pairs of 1-block
# files (s0/t0..s349/t349) in the root, all made realtime and each pair
# sharing s's extent (mkfs.xfs -p puts them on the data device, xfs_db
# sets the flags and points t at s's block), names and inode numbers in
# $T/names.  Not settled: xfs_repair 7.2 -r then builds group 0's rmap
# btree (root, node and 7 leaves) and refcount btree (root and 2 leaves).
# Fails with the reason in $T/rt_why.
rt_groups_image() {
	local args
	head -c 4096 /dev/urandom >"$T/one"
	head -c 12288 /dev/urandom >"$T/three"
	{
		printf 'rt\n0 0\nd--755 0 0\n'
		for i in $(seq 0 199); do echo "a$i ---644 0 0 $T/three"; done
		for i in $(seq 0 349); do
			echo "s$i ---644 0 0 $T/one"
			echo "t$i ---644 0 0 $T/one"
		done
		echo '$'
	} >"$T/proto"
	truncate -s 512m "$1"
	truncate -s 256m "$2"
	if ! xfs72 mkfs.xfs -q -f -m metadir=1 -p "$T/proto" -r rtdev="$2",rgcount=3 \
		"$1" >"$T/mk.out" 2>&1; then
		echo "mkfs.xfs 7.2: $(cat "$T/mk.out")" >"$T/rt_why"
		return 1
	fi
	xfs72 xfs_db -c "ls /" "$1" | awk 'NR > 2 {print $2, $(NF - 1)}' >"$T/names"
	# One xfs_db run each: the flags, the first files' blocks, the second
	# files pointed at them (one argument a line).
	mapfile -t args < <(awk '{ print "-c"; print "inode " $1
		print "-c"; print "write core.realtime 1"
		if ($2 ~ /^[st][0-9]/) { print "-c"; print "write v3.reflink 1" } }' "$T/names")
	xfs72 xfs_db -x "${args[@]}" "$1" >/dev/null 2>&1
	awk '$2 ~ /^s[0-9]/' "$T/names" >"$T/firsts"
	mapfile -t args < <(awk '{ print "-c"; print "inode " $1
		print "-c"; print "print u3.bmx[0].startblock" }' "$T/firsts")
	xfs72 xfs_db "${args[@]}" "$1" | sed 's/.*= //' | paste -d ' ' "$T/firsts" - >"$T/starts"
	mapfile -t args < <(awk 'NR == FNR { ino[$2] = $1; next }
		{ print "-c"; print "inode " ino["t" substr($2, 2)]
		  print "-c"; print "write u3.bmx[0].startblock " $3 }' "$T/names" "$T/starts")
	xfs72 xfs_db -x "${args[@]}" "$1" >/dev/null 2>&1
}
