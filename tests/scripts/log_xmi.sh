#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Logs holding file mapping exchange intents (XMI/XMD), made by the
# kernel: two pairs of many-extent files (and a reflinked pair, a
# partial written-only exchange, one at different offsets) are
# exchanged over and over with the exchange-range ioctl
# (tests/tools/xk_exchange) in the background, and the filesystem is
# shut down with the log forced after a short delay.  With a small log
# the CIL is pushed often, so most logs hold an exchange cut in the
# middle: an XMI without its XMD, often with the BUIs of its last step.
# For each log: copy A is mounted (the
# kernel replays and finishes the exchange), copy B is repaired by
# xfskit-repair (which replays, finishes, then checks); xfs_repair -n
# must accept B, and the trees (tests/scripts/treerec.py), every file's
# data mapping (fiemap: the same blocks at the same offsets) and the AG
# space counters of A and B must be identical.  Then damaged XMIs: replay
# must stop with a message naming the rule and leave the image as it
# was.
#
# The kernel only exchanges ranges on filesystems with the exchange-range
# incompat feature, which mkfs.xfs 6.1 cannot set: it is set with xfs_db
# in every superblock after mkfs, and cleared again on a copy before
# xfs_repair 6.1 (which does not know it) checks the result.  Nothing
# else on disk depends on it once the log is replayed.
. "$XK_SRCDIR/tests/scripts/lib.sh"
. "$XK_SRCDIR/tests/scripts/log_lib.sh"
need_log_tools
EXCH="$XK_BUILDDIR/tests/tools/xk_exchange"
TREC="python3 $XK_SRCDIR/tests/scripts/treerec.py"
[ -x "$EXCH" ] || skip "xk_exchange not built (make check builds it)"
command -v python3 >/dev/null 2>&1 || skip "python3 is not installed"

# set_exchrange IMG 0|1: the exchange-range incompat bit (0x40) in every
# superblock, CRC fixed by xfs_db.
set_exchrange() {
	local img=$1 on=$2 n i v
	n=$(xfs_db -r -c 'sb 0' -c 'p agcount' "$img" 2>/dev/null |
	    awk '{print $3}')
	for ((i = 0; i < n; i++)); do
		v=$(xfs_db -r -c "sb $i" -c 'p features_incompat' "$img" 2>/dev/null |
		    awk '{print $3}')
		if [ "$on" = 1 ]; then v=$((v | 0x40)); else v=$((v & ~0x40)); fi
		xfs_db -x -c "sb $i" -c "write -d features_incompat $v" \
			"$img" >/dev/null 2>&1 || return 1
	done
}

# Files for the exchanges: full files, files with a hole every other
# block (a mapping per block), different sizes, a reflinked copy, and
# unwritten preallocation.
punch_args() {	# punch_args BLOCKS: punch every other 4k block
	local o
	PUNCH=()
	for ((o = 0; o < $1; o += 2)); do PUNCH+=(-c "fpunch $((o * 4))k 4k"); done
}
wl_setup() {
	local m=$1
	xfs_io -f -c "pwrite -q -b 1m 0 8m" "$m/a1" "$m/b1" "$m/a2" "$m/c1"
	xfs_io -f -c "pwrite -q -b 1m 0 10m" "$m/b2"
	xfs_io -f -c "pwrite -q -b 1m 0 6m" "$m/a2"
	xfs_io -c "truncate 6m" "$m/a2"
	punch_args 2048; xfs_io "${PUNCH[@]}" "$m/b1"
	punch_args 2560; xfs_io "${PUNCH[@]}" "$m/b2"
	cp --reflink=always "$m/a1" "$m/r1"
	xfs_io -f -c "pwrite -q -b 1m 0 8m" "$m/r2"
	punch_args 2048; xfs_io "${PUNCH[@]}" "$m/r2"
	xfs_io -f -c "falloc 0 4m" -c "pwrite -q 1m 1m" "$m/w1"
	sync
}
# The exchanges, over and over in the background until the caller shuts
# the filesystem down.
wl_exchange() {
	local m=$1
	( while "$EXCH" "$m/a1" "$m/b1" &&	# whole files, same size
		"$EXCH" "$m/a2" "$m/b2" &&	# sizes differ: SET_SIZES
		"$EXCH" "$m/r1" "$m/r2" &&	# one reflinked file
		"$EXCH" -w "$m/w1" "$m/c1" 0 0 4194304 && # written only
		"$EXCH" "$m/b1" "$m/a2" 4096 8192 2097152; do # offsets
		:
	  done ) 2>/dev/null &
	HOLDER=$!
}

probe() {
	local img="$T/probe.img" rc
	truncate -s 512M "$img"
	mkfs.xfs -f -q "$img" >/dev/null 2>&1 || skip "mkfs.xfs failed"
	set_exchrange "$img" 1 || skip "cannot set the exchange-range bit"
	loop_mount "$img" || return 1
	echo x >"$MNT/p1"; echo y >"$MNT/p2"
	"$EXCH" -n "$MNT/p1" "$MNT/p2" 2>"$T/probe.err"; rc=$?
	loop_umount
	rm -f "$img"
	[ "$rc" = 3 ] && skip "the kernel does not support exchange-range: $(cat "$T/probe.err")"
	[ "$rc" = 0 ] || fail "exchange-range dry run failed: $(cat "$T/probe.err")"
}
probe

# dirty_xmi IMG DELAY MKFSOPTS: a log cut DELAY seconds into the
# exchanges.
dirty_xmi() {
	local img=$1 delay=$2
	shift 2
	rm -f "$img"
	truncate -s 512M "$img"
	# A small log: the CIL is pushed often, so the checkpoints the
	# shutdown keeps end in the middle of an exchange.
	mkfs.xfs -f -q -l size=3200b --unsupported "$@" "$img" \
		>"$T/mkfs.out" 2>&1 ||
		{ fail "mkfs.xfs $* failed: $(cat "$T/mkfs.out")"; return 1; }
	set_exchrange "$img" 1 || { fail "cannot set exchange-range"; return 1; }
	loop_mount "$img" || return 1
	wl_setup "$MNT"
	wl_exchange "$MNT"
	sleep "$delay"
	xfs_io -x -c 'shutdown -f' "$MNT"
	wait "$HOLDER" 2>/dev/null
	HOLDER=""
	loop_umount_busy
}

# xmi_open IMG: ids of the XMIs in the log without an XMD, one a line.
xmi_open() {
	"$DB" -c logprint "$1" 2>/dev/null | awk '
		/^  XMI:/ { for (i = 1; i <= NF; i++) if ($i ~ /^id:0x/) x[substr($i, 6)] = 1 }
		/^  XMD:/ { for (i = 1; i <= NF; i++) if ($i ~ /^id:0x/) delete x[substr($i, 6)] }
		END { for (k in x) print k }'
}

# bmbt_fsbs IMG INO: the blocks of the inode's data fork bmbt, one a line.
bmbt_fsbs() {
	local img=$1 ino=$2 lvl todo next p
	lvl=$(xfs_db -r -c "inode $ino" -c 'p core.format' "$img" 2>/dev/null)
	case $lvl in *btree*) ;; *) return 0 ;; esac
	todo=$(xfs_db -r -c "inode $ino" -c 'p u3.bmbt.ptrs' "$img" 2>/dev/null |
	       sed 's/.*= //' | tr ' ' '\n' | sed -n 's/^[0-9]*://p')
	while [ -n "$todo" ]; do
		next=""
		for p in $todo; do
			echo "$p"
			lvl=$(xfs_db -r -c "fsblock $p" -c 'type bmapbtd' \
			      -c 'p level' "$img" 2>/dev/null | awk '{print $3}')
			[ "${lvl:-0}" -gt 0 ] || continue
			next="$next $(xfs_db -r -c "fsblock $p" -c 'type bmapbtd' \
				-c 'p ptrs' "$img" 2>/dev/null | sed 's/.*= //' |
				tr ' ' '\n' | sed -n 's/^[0-9]*://p')"
		done
		todo=$next
	done
}

# record IMG OUT: mount, record the tree and where each file's data
# lies; unmount; the AG space counters.
record() {
	local n i ino rel agblklog
	loop_mount "$1" || return 1
	$TREC record "$MNT" --no-times >"$2.tree"
	(cd "$MNT" && find . -type f | sort | while read -r rel; do
		echo "$rel $(stat -c %i "$rel")"
		xfs_io -r -c fiemap "$rel" | tail -n +2
	done) >"$2.map"
	loop_umount
	agblklog=$(xfs_db -r -c 'sb 0' -c 'p agblklog' "$1" 2>/dev/null |
		   awk '{print $3}')
	# Each file's bmbt blocks: their number is compared per file (the
	# kernel edits the tree in place; finishing follows its rules), and
	# they count with the space of the AG they lie in, since finishing
	# writes the tree into blocks of its own choosing.
	awk 'NF == 2 { print $2 }' "$2.map" | while read -r ino; do
		bmbt_fsbs "$1" "$ino" | awk -v i="$ino" '{ print i, $1 }'
	done >"$2.bmbt"
	n=$(xfs_db -r -c 'sb 0' -c 'p agcount' "$1" 2>/dev/null | awk '{print $3}')
	for ((i = 0; i < n; i++)); do
		# Finishing rebuilds the AG indexes: their shapes may
		# differ from the kernel's, the space they count not.
		{ xfs_db -r -c "agf $i" -c 'p freeblks flcount btreeblks' "$1" 2>/dev/null
		  awk -v a="$i" -v l="$agblklog" \
			'int($2 / 2 ^ l) == a { print "bmbt = 1" }' "$2.bmbt"
		} | awk -v a="$i" '{ s += $3 } END { print "agf", a, "space", s }'
		xfs_db -r -c "agi $i" -c 'p count freecount' "$1" 2>/dev/null
	done >"$2.hdr"
}

# compare NAME IMG: the kernel's replay against xfskit-repair's.
compare() {
	local name=$1 img=$2 ok=1
	cp --sparse=always "$img" "$T/A.img"
	cp --sparse=always "$img" "$T/B.img"
	record "$T/A.img" "$T/A" || return
	if ! "$REPAIR" "$T/B.img" >"$T/$name.repair" 2>&1; then
		fail "$name: xfskit-repair failed: $(head -5 "$T/$name.repair")"
		return
	fi
	grep -q "Replayed the log" "$T/$name.repair" ||
		{ fail "$name: xfskit-repair did not say it replayed: $(head -3 "$T/$name.repair")"; ok=0; }
	# Its own check after the replay must find nothing to repair.
	! repair_own "$T/$name.repair" | grep -v "^Replayed the log" | grep -q . ||
		{ fail "$name: xfskit-repair found problems after its replay: $(grep -v '^Replayed' "$T/$name.repair" | head -3)"; ok=0; }
	[ -z "$(xmi_open "$T/B.img")" ] ||
		{ fail "$name: the log still holds an XMI after replay"; ok=0; }
	cp --sparse=always "$T/B.img" "$T/Bx.img"
	set_exchrange "$T/Bx.img" 0
	if ! xfs_repair -n "$T/Bx.img" >"$T/$name.xr" 2>&1; then
		fail "$name: xfs_repair -n rejects the replayed image: $(grep -v '^ *-\|^Phase\|host filesystem\|image and the host' "$T/$name.xr" | head -5)"
		return
	fi
	record "$T/B.img" "$T/B" || return
	same_image "$T/A.tree" "$T/B.tree" ||
		{ fail "$name: tree differs from the kernel's replay: $(diff "$T/A.tree" "$T/B.tree" | head -4)"; ok=0; }
	same_image "$T/A.map" "$T/B.map" ||
		{ fail "$name: file data lies elsewhere than after the kernel's replay: $(diff "$T/A.map" "$T/B.map" | head -4)"; ok=0; }
	# The same bmbt shape: as many blocks per file as the kernel's
	# in-place edits left (where they lie may differ).
	[ "$(awk '{ print $1 }' "$T/A.bmbt" | sort | uniq -c)" = \
	  "$(awk '{ print $1 }' "$T/B.bmbt" | sort | uniq -c)" ] ||
		{ fail "$name: bmbt blocks per file differ from the kernel's: $(awk '{ print $1 }' "$T/A.bmbt" | sort | uniq -c | tr '\n' ' ') vs $(awk '{ print $1 }' "$T/B.bmbt" | sort | uniq -c | tr '\n' ' ')"; ok=0; }
	if ! same_image "$T/A.hdr" "$T/B.hdr"; then
		# The kernel's replay is the reference only where xfs_repair
		# finds it consistent itself (its exchange recovery has lost
		# data before: see the trim in libfs/write/edit_xmi.c).
		cp --sparse=always "$T/A.img" "$T/Ax.img"
		set_exchrange "$T/Ax.img" 0
		if xfs_repair -n "$T/Ax.img" >"$T/$name.xra" 2>&1; then
			fail "$name: AG counters differ: $(diff "$T/A.hdr" "$T/B.hdr" | head -4)"
			ok=0
		else
			echo "note: $name: the kernel's own replay differs in AG space and xfs_repair -n rejects it ($(grep -v '^ *-\|^Phase\|host filesystem\|image and the host' "$T/$name.xra" | head -2 | tr '\n' ' ')); ours is clean" >&2
		fi
	fi
	[ "$ok" = 1 ] && pass "$name: same tree ($(wc -l <"$T/A.tree") paths), data mappings, bmbt shapes and AG counters as the kernel's replay, xfs_repair -n clean"
}

runs=0 cut=0 keep="" kept="" xmd_img=""
for feat in ${FEATS:-reflink=1,rmapbt=0 reflink=1,rmapbt=1}; do
	for delay in ${DELAYS:-0.1 0.24 0.38}; do
		img="$T/x-$feat-$delay.img"
		dirty_xmi "$img" "$delay" -m "$feat" || continue
		runs=$((runs + 1))
		n=$(xmi_open "$img" | wc -l)
		if [ "$n" -gt 0 ]; then
			cut=$((cut + 1))
			keep=$img
			kept="$kept $img"
		elif [ -z "$xmd_img" ] && "$DB" -c logprint "$img" 2>/dev/null |
			grep -q '^  XMD:'; then
			xmd_img="$T/xmd.img"
			cp --sparse=always "$img" "$xmd_img"
		fi
		compare "$feat delay $delay ($n unfinished XMI)" "$img"
		[ "$img" = "$keep" ] || rm -f "$img"
	done
done
echo "$cut of $runs runs left an unfinished XMI"
[ "$runs" -gt 0 ] || fail "no dirty log could be made"

# Plant one when timing left none: in a log holding an XMD, give the XMD
# another id so its XMI looks unfinished; the kernel and xfskit must
# then finish that exchange (redoing its step) alike.
# (XMI_PLANT=1 plants even when a run left one: to test the planting.)
[ -n "${XMI_PLANT:-}" ] && keep=""
if [ -z "$keep" ] && [ -n "$xmd_img" ]; then
	did=$("$DB" -c logprint "$xmd_img" 2>/dev/null |
	      sed -n 's/^  XMD: .*id:0x\([0-9a-f]*\).*/\1/p' | head -1)
	off=$(log_find "$xmd_img" "4912010000000000$(host_hex 16 "$did")")
	if [ "$off" -ge 0 ] && poke_log "$xmd_img" $((off + 8)) \
		"$(printf '%02x' $((0x${did: -2} ^ 0x55)))" &&
	   [ "$(xmi_open "$xmd_img" | wc -l)" -gt 0 ]; then
		compare "planted unfinished XMI" "$xmd_img"
		keep=$xmd_img
	else
		fail "could not plant an unfinished XMI"
	fi
elif [ -z "$keep" ]; then
	# Timing only: the kernel's error injection needs a debug kernel.
	echo "note: no run left an XMI or an XMD this time; finishing and damaged XMIs not exercised" >&2
fi

# Damaged XMIs: a kept log's unfinished XMI (one not split across
# records) gets a bad field, its record re-checksummed; replay must
# refuse naming the rule broken and change nothing.  (These logs never
# go to the kernel.)
[ -n "$keep" ] && [ -z "$kept" ] && kept=$keep
xoff=-1
for keep in $kept; do
	id=$(xmi_open "$keep" | head -1)
	xoff=$(log_find "$keep" "4812010000000000$(host_hex 16 "$id")")
	[ "$xoff" -ge 0 ] && break
done
if [ -n "$kept" ] && [ "$xoff" -lt 0 ]; then
	echo "note: every unfinished XMI is split across log records; no damage test" >&2
elif [ -n "$kept" ]; then
	damage_log XMI "$keep" "$xoff" "XMI intent id 0x$id.*" \
		"16:ffffffffffffff7f:not an inode number" \
		"16:bf00000000000000:the inode is free" \
		"56:ffffffffffffff00:run outside a file" \
		"56:0000000000000000:run outside a file" \
		"64:0001000000000000:unknown flags" \
		"4:01000000:size 1 and padding 0x1" \
		"32:01000000:generation is not the logged one"
	[ "$DAMAGE_TRIED" -gt 0 ] ||
		echo "note: the XMI's fields all cross a log block boundary; no damage test" >&2
fi
finish
