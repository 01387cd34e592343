#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# xfskit-mkfs against the oracles over a matrix of option sets: for each
# set, format a sparse image with xfskit-mkfs and another with mkfs.xfs
# (same size, same options, same -m uuid=), then
#  - xfs_repair -n and xfskit-repair -n must both find our image clean;
#  - xfs_db's print of sb 0, agf/agi of AG 0 and of the last AG, the
#    AGFL of AG 0, the rmapbt root of AG 0 and the root directory inode
#    must equal mkfs.xfs's.
# Allowed differences, each filtered out below and why:
#  - inode timestamps (mtime, ctime, crtime) and with them the inode
#    CRC: both tools stamp "now";
#  - features whose defaults differ: xfskit-mkfs enables rmapbt and
#    nrext64 by default, mkfs.xfs 6.1 does not, so mkfs.xfs is given
#    -m rmapbt=1 -i nrext64=1 unless the set says otherwise.  With that,
#    nothing else may differ.
. "$XK_SRCDIR/tests/scripts/lib.sh"
need_xfsprogs
have_xfs72 || true

BIG=$(mktemp -d /dev/shm/xk-mkfs.XXXXXX 2>/dev/null || echo "$T")
trap 'rm -rf "$BIG"; cleanup' EXIT
U=4b1d6a52-9c1e-4b0e-9a57-6d3c2f1e0a11
CFG="$T/opts.cfg"
cat >"$CFG" <<'EOF'
[metadata]
reflink=0
finobt=1

[inode]
sparse=0
EOF

# size | our options (mkfs.xfs gets the same plus the default fixes)
SETS=(
"1g|"
"1g|-b size=1024"
"1g|-b size=2048"
"2g|-b size=8192"
"2g|-b size=16384"
"1g|-i size=1024"
"1g|-i size=2048"
"2g|-d agcount=2"
"4g|-d agcount=7"
"16g|-d agcount=64"
"512m|--unsupported -d agcount=1"
"2g|-d agsize=300m"
"300m|"
"700m|-b size=1024 -i size=512"
"8g|"
"100g|"
"1t|"
"5t|"
"64t|"
"1g|-m finobt=0,inobtcount=0"
"1g|-m rmapbt=0"
"1g|-m reflink=0"
"1g|-m rmapbt=0,reflink=0"
"1g|-m bigtime=0"
"1g|-m inobtcount=0"
"1g|-i sparse=0"
"1g|-i nrext64=0"
"4g|-d su=64k,sw=4"
"8g|-d sunit=256,swidth=1024"
"4g|-d su=32k,sw=2 -l su=64k"
"2g|-l sunit=16"
"2g|-l size=128m"
"2g|-l size=100m"
"4g|-l agnum=0"
"1g|-L mylabel"
"1g|-L twelve_chars"
"1g|-s size=4096"
"1g|-s size=2048 -b size=2048"
"1g|-n size=16384"
"1g|-i maxpct=10"
"1g|-c options=$CFG"
"1g|-d size=900m"
)

dump() {
	local img=$1 last
	last=$(($(db_get "$img" 'sb 0' agcount) - 1))
	xfs_db -r -c 'sb 0' -c print -c 'agf 0' -c print -c 'agi 0' \
		-c print -c "agf $last" -c print -c "agi $last" -c print \
		-c 'agfl 0' -c print -c 'agf 0' -c 'addr rmaproot' -c print \
		-c 'sb 0' -c 'addr rootino' -c print "$img" 2>&1 |
		grep -Ev '^(core\.[acm]time|v3\.crtime|v3\.crc|Metadata CRC error)'
}

# mkfs.xfs with our defaults made explicit where the set leaves them.
xfs_opts() {
	local o=$1 extra=""
	case "$o" in *rmapbt=*) ;; *) extra="$extra -m rmapbt=1" ;; esac
	case "$o" in *nrext64=*) ;; *) extra="$extra -i nrext64=1" ;; esac
	# mkfs.xfs 6.1 refuses an option given in both places.
	case "$o" in *options=*) extra="" ;; esac
	echo "$o$extra"
}

n=0
for set in "${SETS[@]}"; do
	leak_check_next
	size=${set%%|*}
	opts=${set#*|}
	n=$((n + 1))
	ours="$T/ours.img" theirs="$T/theirs.img"
	rm -f "$T/ours.img" "$T/theirs.img" "$BIG/ours.img" "$BIG/theirs.img"
	if ! truncate -s "$size" "$ours" "$theirs" 2>/dev/null; then
		# ext4 stops at 16 TiB; tmpfs holds sparse files of any size.
		ours="$BIG/ours.img" theirs="$BIG/theirs.img"
		if ! truncate -s "$size" "$ours" "$theirs" 2>/dev/null; then
			echo "set $n: no filesystem here holds a $size file" >&2
			continue
		fi
	fi
	ropt=""
	[[ "$opts" == *agcount=1 ]] && ropt="-o force_geometry"
	# shellcheck disable=SC2086
	if ! "$MKFS" -q -f -m uuid=$U $opts "$ours" >"$T/out" 2>&1; then
		fail "set $n ($size $opts): xfskit-mkfs failed: $(cat "$T/out")"
		continue
	fi
	xo=$(xfs_opts "$opts")
	if [[ "$opts" == *options=* ]]; then
		# mkfs.xfs reads the same file; add rmapbt/nrext64 by hand.
		xo="$opts -m rmapbt=1 -i nrext64=1"
	fi
	# shellcheck disable=SC2086
	if ! mkfs.xfs -q -f -m uuid=$U $xo "$theirs" >"$T/xout" 2>&1; then
		fail "set $n ($size $opts): mkfs.xfs refused: $(cat "$T/xout")"
		continue
	fi
	# shellcheck disable=SC2086
	if ! xfs_repair_clean "$ours" "$T/rep" $ropt; then
		fail "set $n ($size $opts): $(cat "$T/rep")"
	fi
	if ! "$REPAIR" -n "$ours" >"$T/xrep" 2>&1; then
		fail "set $n ($size $opts): xfskit-repair -n: $(head -5 "$T/xrep")"
	fi
	dump "$theirs" >"$T/a"
	dump "$ours" >"$T/b"
	if ! diff -u "$T/a" "$T/b" >"$T/d"; then
		fail "set $n ($size $opts): differs from mkfs.xfs: $(head -30 "$T/d")"
	else
		pass "set $n ($size $opts)"
	fi
done
[ "$n" -ge 30 ] || fail "only $n option sets"

# Where the minimum log size decides the log (32 and 64 KiB blocks, tiny
# filesystems with --unsupported, explicit small logs), the log must be
# exactly mkfs.xfs's (the minimum is computed as the kernel computes it;
# mkfs_logsize.sh covers many more geometries with -N) and the image
# must be clean.
for set in "4g|-b size=32768" "4g|-b size=65536" "100m|--unsupported" \
	"200m|--unsupported -b size=1024" "1g|--unsupported -l size=16m"; do
	size=${set%%|*}
	opts=${set#*|}
	rm -f "$T/ours.img" "$T/theirs.img"
	truncate -s "$size" "$T/ours.img" "$T/theirs.img"
	# shellcheck disable=SC2086
	if ! "$MKFS" -q -f $opts "$T/ours.img" >"$T/out" 2>&1 ||
		! mkfs.xfs -q -f -m rmapbt=1 -i nrext64=1 $opts \
			"$T/theirs.img" >"$T/xout" 2>&1; then
		fail "$size $opts: $(cat "$T/out" "$T/xout")"
		continue
	fi
	ol=$(db_get "$T/ours.img" 'sb 0' logblocks)
	tl=$(db_get "$T/theirs.img" 'sb 0' logblocks)
	if [ -z "$ol" ] || [ -z "$tl" ] || [ "$ol" -ne "$tl" ]; then
		fail "$size $opts: log of $ol blocks, mkfs.xfs has $tl"
	elif ! xfs_repair_clean "$T/ours.img" "$T/rep"; then
		fail "$size $opts: $(cat "$T/rep")"
	elif ! "$REPAIR" -n "$T/ours.img" >"$T/xrep" 2>&1; then
		fail "$size $opts: xfskit-repair -n: $(head -5 "$T/xrep")"
	else
		pass "$size $opts: clean, log of $ol blocks as mkfs.xfs"
	fi
done
rm -f "$BIG/ours.img" "$BIG/theirs.img"
finish
