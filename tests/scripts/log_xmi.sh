#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Logs holding file mapping exchange intents (XMI/XMD), made by the
# kernel: two pairs of many-extent files (and a reflinked pair, a
# partial written-only exchange, one at different offsets) are
# exchanged with the exchange-range ioctl (tests/tools/xk_exchange)
# while a child of it forces the log over and over, so the log holds a
# checkpoint boundary between many steps of each exchange; then the
# filesystem is shut down with the log forced.  Nothing is written in
# place meanwhile (the log is large and the AIL is never pushed: checked
# by the tail every record names), so cutting the log at any record is
# a state a crash could leave, and the cuts are chosen from the log
# itself: for each exchange, the last record at which it is unfinished
# (an XMI without its XMD, partly done).  For each cut: copy A is
# mounted (the kernel replays and finishes the exchange), copy B is
# repaired by xfskit-repair (which replays, finishes, then checks);
# xfs_repair -n must accept B, or find in A just what it finds in B:
# the kernel itself leaves a state it rejects.  (A written-only
# exchange of whole files, w1 and c1 in the second round, swaps the
# reflink flags as a whole exchange does, so c1 loses its flag while it
# keeps shared blocks; b1 takes some in the exchange after and has no
# flag either: "setting reflink flag on inode".  Kernel 6.18 does this
# with no crash at all; its log holds it, and any replay reproduces it.
# xfskit-repair's check after its replay finds those files as xfs_repair
# does and sets their flags: then the inodes it names must be the ones
# xfs_repair -n names in A, and B's flags are A's with theirs set.)
# The trees (tests/scripts/treerec.py),
# every file's data mapping (fiemap: the same blocks at the same
# offsets), reflink flag and bmbt shape, and the AG space counters of A
# and B must be identical.  Then damaged XMIs: replay must stop with a
# message naming the rule and leave the image as it was.
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
# unwritten preallocation written every other block.  b2 is long and
# unwritten (no data to write or copy) and a2 short: in nearly every
# step of their exchange a file takes mappings past its end and grows,
# so a cut anywhere in it leaves a size that is neither the old nor the
# new one.
every_other() {	# every_other CMD BLOCKS: CMD on every other 4k block
	local o
	EVERY=()
	for ((o = 0; o < $2; o += 2)); do EVERY+=(-c "$1 $((o * 4))k 4k"); done
}
wl_setup() {
	local m=$1
	xfs_io -f -c "pwrite -q -b 1m 0 2m" "$m/a1" "$m/b1" "$m/c1"
	xfs_io -f -c "pwrite -q 0 256k" "$m/a2"
	every_other fpunch 512; xfs_io "${EVERY[@]}" "$m/b1"
	every_other fpunch 8192
	xfs_io -f -c "falloc 0 32m" "${EVERY[@]}" "$m/b2"
	cp --reflink=always "$m/a1" "$m/r1"
	xfs_io -f -c "pwrite -q -b 1m 0 2m" "$m/r2"
	every_other fpunch 512; xfs_io "${EVERY[@]}" "$m/r2"
	every_other "pwrite -q" 512
	xfs_io -f -c "falloc 0 2m" "${EVERY[@]}" "$m/w1"
	sync
}
# The exchanges, in two rounds (the second exchanges back: the other
# file grows), each with the log forced between its steps (the syncer
# child of xk_exchange -s); a failed one fails the test.
wl_exchange() {
	local m=$1 args round
	for round in 1 2; do
		while read -r args; do
			# shellcheck disable=SC2086
			"$EXCH" -s "$m/sync" $args 2>"$T/exch.err" ||
				{ fail "exchange $args failed: $(cat "$T/exch.err")"; return 1; }
		done <<-EOF_EXCH
		$m/a1 $m/b1
		$m/a2 $m/b2
		$m/r1 $m/r2
		-w $m/w1 $m/c1 0 0 2097152
		$m/b1 $m/c1 4096 8192 1048576
		EOF_EXCH
	done
}
# (a1 b1: whole files, same size; a2 b2: sizes differ, SET_SIZES; r1
# r2: one reflinked file; w1 c1: written parts only; b1 c1: offsets.)

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

# dirty_xmi IMG MKFSOPTS: the files made and the filesystem unmounted
# (its log clean), then mounted again for the exchanges and shut down.
# The image lives in tmpfs meanwhile when it can: each log force is a
# flush of the loop device, which on a disk filesystem takes long enough
# to leave few checkpoints inside an exchange.
dirty_xmi() {
	local img=$1 work
	shift
	work="$SHM/work.img"
	rm -f "$work"
	truncate -s 512M "$work"
	# A log the exchanges never fill: the AIL is pushed only when the
	# log runs short of space, and nothing may be written in place.
	mkfs.xfs -f -q -l size=16384b "$@" "$work" >"$T/mkfs.out" 2>&1 ||
		{ fail "mkfs.xfs $* failed: $(cat "$T/mkfs.out")"; return 1; }
	set_exchrange "$work" 1 || { fail "cannot set exchange-range"; return 1; }
	loop_mount "$work" || return 1
	wl_setup "$MNT"
	# The SET_SIZES exchange as cut_points names it.
	SIZES_KEY=$(printf '0x%x:0x%x' "$(stat -c %i "$MNT/a2")" \
		"$(stat -c %i "$MNT/b2")")
	loop_umount || { fail "cannot unmount after the setup"; return 1; }
	loop_mount "$work" || return 1
	wl_exchange "$MNT"
	xfs_io -x -c 'shutdown -f' "$MNT"
	loop_umount_busy
	cp --sparse=always "$work" "$img"
	rm -f "$work"
}

# cut_points IMG: "BLK INO1:INO2 FLAGS" for each log record at which a
# cut leaves an XMI without its XMD (a transaction counts when its
# commit lies in a record before the cut), in log order.  Intent ids
# are addresses the kernel reuses, but never while one is open.
cut_points() {
	"$DB" -c 'logprint -r' "$1" 2>/dev/null | awk '
		function field(name,   i) {
			for (i = 1; i <= NF; i++)
				if (index($i, name ":") == 1)
					return substr($i, length(name) + 2)
			return ""
		}
		/^log tail:/ { tail = $3 }
		/^LOG REC AT LSN/ { rec[++nr] = $8 }
		/^TRANS:/ { split(field("commit"), c, "/"); cur = c[2] + 0 }
		/^  XMI:/ { ev[++ne] = cur; kind[ne] = "X"; eid[ne] = field("id")
			    key[ne] = field("ino1") ":" field("ino2")
			    fl[ne] = field("flags") }
		/^  XMD:/ { ev[++ne] = cur; kind[ne] = "D"; eid[ne] = field("id") }
		END {
			e = 1
			for (r = 1; r <= nr; r++) {
				b = rec[r]
				while (e <= ne && ev[e] < b) {
					if (kind[e] == "X") {
						open[eid[e]] = key[e] " " fl[e]
					} else
						delete open[eid[e]]
					e++
				}
				if (b <= tail)
					continue
				for (k in open)
					print b, open[k]
			}
		}'
}

# cuts_valid IMG: the log is in its first cycle and every record from
# the tail on names that tail (the AIL wrote nothing in place), so any
# cut is a crash state.
cuts_valid() {
	local tail
	tail=$("$DB" -c logprint "$1" 2>/dev/null |
	       sed -n 's/^log tail: \([0-9]*\) head: [0-9]* cycle: 1 .*/\1/p')
	[ -n "$tail" ] || return 1
	xfs_logprint -d "$1" 2>/dev/null | awk -v t="$tail" '
		$2 == "HEADER" && $4 != 0 && $1 >= t {
			n++
			split($6, a, ":")
			if ($4 != 1 || a[2] + 0 != t) bad = 1
		}
		END { exit !(n > 1 && !bad) }'
}

# cut_log IMG BLK OUT: OUT is IMG with its log cut at log block BLK:
# the blocks from there to the head are zeroed, as never written (the
# log never wrapped, so they carry cycle 0 like the rest of its end).
cut_log() {
	local img=$1 blk=$2 out=$3 logstart logdaddr head
	logstart=$(xfs_db -r -c 'sb 0' -c 'p logstart' "$img" 2>/dev/null |
		   awk '{print $3}')
	logdaddr=$(xfs_db -r -c "convert fsb $logstart daddr" "$img" 2>/dev/null |
		   sed 's/.*(\([0-9]*\)).*/\1/')
	head=$("$DB" -c logprint "$img" 2>/dev/null |
	       sed -n 's/^log tail: [0-9]* head: \([0-9]*\).*/\1/p')
	[ -n "$logdaddr" ] && [ -n "$head" ] && [ "$head" -gt "$blk" ] ||
		return 1
	cp --sparse=always "$img" "$out"
	dd if=/dev/zero of="$out" bs=512 seek=$((logdaddr + blk)) \
		count=$((head - blk)) conv=notrunc status=none
}

# xmi_open IMG: ids of the XMIs in the log without an XMD, one a line.
xmi_open() {
	"$DB" -c logprint "$1" 2>/dev/null | awk '
		/^  XMI:/ { for (i = 1; i <= NF; i++) if ($i ~ /^id:0x/) x[substr($i, 6)] = 1 }
		/^  XMD:/ { for (i = 1; i <= NF; i++) if ($i ~ /^id:0x/) delete x[substr($i, 6)] }
		END { for (k in x) print k }'
}

# bmbt_blocks IMG INO...: "INO FSB" for each block of the inodes' data
# fork bmbts, a level of all the trees per xfs_db run (runs are what
# costs).  xfs_db prints one pointer as "ptrs[1] = P", several as
# "ptrs[1-N] = 1:P 2:Q ...".
bmbt_blocks() {
	local img=$1 ino p lvl cmds todo next
	shift
	cmds=()
	for ino; do cmds+=(-c "inode $ino" -c 'p core.format'); done
	todo=""
	for ino in $(xfs_db -r "${cmds[@]}" "$img" 2>/dev/null |
		     paste -d ' ' <(printf '%s\n' "$@") - |
		     awk '$4 == 3 { print $1 }'); do
		for p in $(xfs_db -r -c "inode $ino" -c 'p u3.bmbt.ptrs' \
			   "$img" 2>/dev/null | bmbt_ptrs); do
			todo="$todo $ino:$p"
		done
	done
	while [ -n "$todo" ]; do
		cmds=()
		for p in $todo; do
			echo "${p%%:*} ${p#*:}"
			cmds+=(-c "fsblock ${p#*:}" -c 'type bmapbtd' -c 'p level')
		done
		next=""
		for p in $(xfs_db -r "${cmds[@]}" "$img" 2>/dev/null |
			   paste -d ' ' <(printf '%s\n' $todo) - |
			   awk '$4 > 0 { print $1 }'); do
			for lvl in $(xfs_db -r -c "fsblock ${p#*:}" \
				     -c 'type bmapbtd' -c 'p ptrs' "$img" \
				     2>/dev/null | bmbt_ptrs); do
				next="$next ${p%%:*}:$lvl"
			done
		done
		todo=$next
	done
}
bmbt_ptrs() {
	sed -n 's/^.*ptrs\[[0-9-]*\] = //p' | tr ' ' '\n' | sed 's/^[0-9]*://'
}

# record IMG OUT: mount, record the tree and where each file's data
# lies; unmount; the AG space counters.
record() {
	local n i ino rel agblklog cmds=()
	loop_mount "$1" || return 1
	$TREC record "$MNT" --no-times >"$2.tree"
	(cd "$MNT" && find . -type f | sort | while read -r rel; do
		echo "$rel $(stat -c %i "$rel")"
		xfs_io -r -c fiemap "$rel" | tail -n +2
	done) >"$2.map"
	loop_umount
	# Each file's bmbt blocks: their number is compared per file (the
	# kernel edits the tree in place; finishing follows its rules), and
	# they count with the space of the AG they lie in, since finishing
	# writes the tree into blocks of its own choosing.
	# shellcheck disable=SC2046
	bmbt_blocks "$1" $(awk 'NF == 2 { print $2 }' "$2.map") >"$2.bmbt"
	# Each file's reflink flag (recovery decides anew whether to clear
	# it after a whole-file exchange).
	for ino in $(awk 'NF == 2 { print $2 }' "$2.map"); do
		cmds+=(-c "inode $ino" -c 'p v3.reflink')
	done
	paste -d ' ' <(awk 'NF == 2 { print $1, $2 }' "$2.map") \
		<(xfs_db -r "${cmds[@]}" "$1" 2>/dev/null) >"$2.flags"
	read -r n agblklog < <(xfs_db -r -c 'sb 0' -c 'p agcount agblklog' \
			       "$1" 2>/dev/null | awk '{ printf "%s ", $3 }')
	cmds=()
	for ((i = 0; i < n; i++)); do
		cmds+=(-c "agf $i" -c 'p freeblks flcount btreeblks'
		       -c "agi $i" -c 'p count freecount')
	done
	# Finishing rebuilds the AG indexes: their shapes may differ from
	# the kernel's, the space they count not.
	{ xfs_db -r "${cmds[@]}" "$1" 2>/dev/null
	  awk -v l="$agblklog" '{ print "bmbt", int($2 / 2 ^ l) }' "$2.bmbt"
	} | awk '
		$1 == "freeblks" { a++ }
		$1 == "freeblks" || $1 == "flcount" || $1 == "btreeblks" {
			space[a] += $3 }
		$1 == "count" { count[a] = $3 }
		$1 == "freecount" { free[a] = $3 }
		$1 == "bmbt" { space[$2 + 1]++ }
		END {
			for (i = 1; i <= a; i++)
				print "ag", i - 1, "space", space[i] + 0,
				      "inodes", count[i], "free", free[i]
		}' >"$2.hdr"
}

# compare_ours_only NAME IMG: $T/B.img (a copy of IMG) replayed by
# xfskit-repair, no XMI left open, and xfs_repair -n accepts it
# (exchange-range bit cleared); or ours refuses an XMI as the kernel did
# (seen under load: an XMI of 0 blocks, which the kernel's validation
# refuses too), naming the rule, with nothing written.
compare_ours_only() {
	local name=$1 img=$2
	if ! "$REPAIR" "$T/B.img" >"$T/$name.repair" 2>&1; then
		if grep -q 'cannot be replayed offline: XMI intent' "$T/$name.repair" &&
		   same_image "$T/B.img" "$img"; then
			pass "$name: the kernel could not replay it, and ours refuses the same intent, nothing written: $(grep -o 'XMI intent.*' "$T/$name.repair" | head -1)"
		else
			fail "$name: xfskit-repair failed: $(head -5 "$T/$name.repair")"
		fi
	elif [ -n "$(xmi_open "$T/B.img")" ]; then
		fail "$name: the log still holds an XMI after replay"
	else
		cp --sparse=always "$T/B.img" "$T/Bx.img"
		set_exchrange "$T/Bx.img" 0
		if xfs_repair -n "$T/Bx.img" >"$T/$name.xr" 2>&1; then
			pass "$name: the kernel could not replay it; ours did, xfs_repair -n clean"
		else
			fail "$name: xfs_repair -n rejects the replayed image: $(xr_findings "$T/$name.xr" | head -5)"
		fi
	fi
}

# xr_findings OUT: what xfs_repair -n found, from its output OUT (its
# phase lines, its warnings about the host and its no-modify notes
# left out).
xr_findings() {
	grep -v '^ *-\|^Phase\|host filesystem\|image and the host\|^Repair may fail\|^No modify' "$1"
}

# xr_kernel NAME: xfs_repair -n on the kernel's replay ($T/A.img, the
# exchange-range bit cleared on a copy), its output in $T/NAME.xra;
# succeeds when it accepts it.
xr_kernel() {
	cp --sparse=always "$T/A.img" "$T/Ax.img"
	set_exchrange "$T/Ax.img" 0
	xfs_repair -n "$T/Ax.img" >"$T/$1.xra" 2>&1
}

# compare NAME IMG: the kernel's replay against xfskit-repair's.
compare() {
	local name=$1 img=$2 ok=1 xr
	cp --sparse=always "$img" "$T/A.img"
	cp --sparse=always "$img" "$T/B.img"
	local km
	km=$(kmsg_mark)
	if ! LOOP_MOUNT_QUIET=1 record "$T/A.img" "$T/A"; then
		# The kernel could not replay this crash state itself (seen
		# under load: "Structure needs cleaning" on a cut without the
		# rmapbt): no reference to compare with.  Ours must still
		# replay it to a state xfs_repair accepts.
		echo "note: $name: the kernel's own replay failed ($(kmsg_since "$km" | grep -E 'XFS \(' | tail -2 | tr '\n' ' ')); ours is checked against xfs_repair -n only" >&2
		compare_ours_only "$name" "$img"
		return
	fi
	if ! "$REPAIR" "$T/B.img" >"$T/$name.repair" 2>&1; then
		fail "$name: xfskit-repair failed: $(head -5 "$T/$name.repair")"
		return
	fi
	grep -q "Replayed the log" "$T/$name.repair" ||
		{ fail "$name: xfskit-repair did not say it replayed: $(head -3 "$T/$name.repair")"; ok=0; }
	# Its own check after the replay must find nothing to repair but
	# the kernel's own missing reflink flags (see the header).
	local own setino="" kino
	own=$(repair_own "$T/$name.repair" | grep -v -e "^Replayed the log" \
		-e '^Pass [0-9]* - checking again' -e ' found were repaired\.$' \
		-e '^[0-9]* problems\? found, ' -e '^Corrected inode [0-9]* .*: flags2 ')
	setino=$(echo "$own" | sed -n 's/.*lacks the reflink flag (setting reflink flag on inode \([0-9]*\)).*/\1/p' | sort -u)
	if echo "$own" | grep -v 'lacks the reflink flag' | grep -q .; then
		fail "$name: xfskit-repair found problems after its replay: $(echo "$own" | head -3)"
		ok=0
	elif [ -n "$setino" ]; then
		xr_kernel "$name"
		kino=$(xr_findings "$T/$name.xra" | sed -n 's/^setting reflink flag on inode \([0-9]*\)$/\1/p' | sort -u)
		if [ "$kino" != "$setino" ]; then
			fail "$name: xfskit-repair set the reflink flag of inodes $(echo $setino) after its replay; xfs_repair -n names ${kino:-none} in the kernel's"
			ok=0
		else
			echo "note: $name: the kernel's replay leaves inodes $(echo $setino) sharing blocks without the reflink flag (xfs_repair -n: 'setting reflink flag'); ours set it" >&2
		fi
	fi
	[ -z "$(xmi_open "$T/B.img")" ] ||
		{ fail "$name: the log still holds an XMI after replay"; ok=0; }
	cp --sparse=always "$T/B.img" "$T/Bx.img"
	set_exchrange "$T/Bx.img" 0
	xr="xfs_repair -n clean"
	if ! xfs_repair -n "$T/Bx.img" >"$T/$name.xr" 2>&1; then
		# The kernel's own state may be one xfs_repair rejects (see the
		# header: the written-only exchange of c1): replay reproduces
		# it, and then xfs_repair -n must find the same in the kernel's
		# replay, to which ours is compared as anywhere else.
		if xr_kernel "$name" ||
		   [ "$(xr_findings "$T/$name.xr")" != "$(xr_findings "$T/$name.xra")" ]; then
			fail "$name: xfs_repair -n rejects the replayed image: $(xr_findings "$T/$name.xr" | head -5)"
			return
		fi
		echo "note: $name: xfs_repair -n rejects the kernel's own replay as it does ours ($(xr_findings "$T/$name.xr" | head -2 | tr '\n' ' ')): the kernel's state, compared as it is" >&2
		xr="xfs_repair -n finding the same as in the kernel's"
	fi
	record "$T/B.img" "$T/B" || return
	same_image "$T/A.tree" "$T/B.tree" ||
		{ fail "$name: tree differs from the kernel's replay: $(diff "$T/A.tree" "$T/B.tree" | head -4)"; ok=0; }
	same_image "$T/A.map" "$T/B.map" ||
		{ fail "$name: file data lies elsewhere than after the kernel's replay: $(diff "$T/A.map" "$T/B.map" | head -4)"; ok=0; }
	# A's flags, with the ones ours set where the kernel left them off.
	awk -v set=" $(echo $setino) " 'index(set, " " $2 " ") { $NF = 1 } 1' \
		"$T/A.flags" >"$T/A.flags.want"
	same_image "$T/A.flags.want" "$T/B.flags" ||
		{ fail "$name: reflink flags differ from the kernel's replay: $(diff "$T/A.flags.want" "$T/B.flags" | head -4)"; ok=0; }
	# The same bmbt shape: as many blocks per file as the kernel's
	# in-place edits left (where they lie may differ).
	[ "$(awk '{ print $1 }' "$T/A.bmbt" | sort | uniq -c)" = \
	  "$(awk '{ print $1 }' "$T/B.bmbt" | sort | uniq -c)" ] ||
		{ fail "$name: bmbt blocks per file differ from the kernel's: $(awk '{ print $1 }' "$T/A.bmbt" | sort | uniq -c | tr '\n' ' ') vs $(awk '{ print $1 }' "$T/B.bmbt" | sort | uniq -c | tr '\n' ' ')"; ok=0; }
	if ! same_image "$T/A.hdr" "$T/B.hdr"; then
		# The kernel's replay is the reference only where xfs_repair
		# finds it consistent itself (its exchange recovery has lost
		# data before: see the trim in libfs/write/edit_xmi.c).
		if [ "$xr" = "xfs_repair -n clean" ] && ! xr_kernel "$name"; then
			echo "note: $name: the kernel's own replay differs in AG space and xfs_repair -n rejects it ($(xr_findings "$T/$name.xra" | head -2 | tr '\n' ' ')); ours is clean" >&2
		else
			fail "$name: AG counters differ: $(diff "$T/A.hdr" "$T/B.hdr" | head -4)"
			ok=0
		fi
	fi
	[ "$ok" = 1 ] && pass "$name: same tree ($(wc -l <"$T/A.tree") paths), data mappings, reflink flags, bmbt shapes and AG counters as the kernel's replay, $xr"
}

# The images live in tmpfs while the kernel works on them (dirty_xmi).
SHM=$(mktemp -d /dev/shm/xk-xmi.XXXXXX 2>/dev/null || echo "$T")
trap '[ "$SHM" = "$T" ] || rm -rf "$SHM"; cleanup' EXIT

# pick_cuts: from cut_points' lines, the cuts compared: for each
# exchange its last one (the most progress: where a file has taken the
# most mappings past its end), at most three a log: the exchange of a2
# and b2 first, then one per other kind of XMI (flags); under
# XK_TEST_LONG=1 every exchange, at four cuts spread over it.
pick_cuts() {
	awk -v long="$(long_tests && echo 1 || echo 0)" -v sk="$SIZES_KEY" '
		{ n[$2]++; b[$2, n[$2]] = $1; f[$2] = $3 }
		END {
			if (long == 1) {
				for (k in n)
					for (j = 1; j <= 4; j++)
						print b[k, int((n[k] * j + 3) / 4)], k, f[k]
				exit
			}
			if (sk in n) {
				print b[sk, n[sk]], sk, f[sk]
				seen[f[sk]] = 1
				picked++
			}
			for (k in n)
				if (picked < 3 && !(f[k] in seen)) {
					print b[k, n[k]], k, f[k]
					seen[f[k]] = 1
					picked++
				}
		}' | sort -n -u -k1,1
}

runs=0 ncuts=0 keep="" xmd_img="" sized=0
for feat in ${FEATS:-reflink=1,rmapbt=1 reflink=1,rmapbt=0}; do
	img="$T/x-$feat.img"
	# Whether the log forces split an exchange is timing: until a log
	# has been cut inside the one of a2 and b2 (the files that grow),
	# the log is made again, up to three times in all, until they split
	# it.  (With the rmapbt, first, they always have here; without it
	# the exchange runs faster and often goes unsplit.)
	for try in 1 2 3; do
		dirty_xmi "$img" -m "$feat" || continue 2
		runs=$((runs + 1))
		cuts_valid "$img" || break
		cut_points "$img" >"$T/cuts"
		grep -q " $SIZES_KEY " "$T/cuts" && break
		[ "$sized" -gt 0 ] && break
		echo "note: $feat: the log forces did not split the SET_SIZES exchange (try $try)" >&2
	done
	if [ -z "$xmd_img" ] && "$DB" -c logprint "$img" 2>/dev/null |
		grep -q '^  XMD:'; then
		xmd_img="$T/xmd.img"
		cp --sparse=always "$img" "$xmd_img"
	fi
	if ! cuts_valid "$img"; then
		echo "note: $feat: the log wrapped or its tail moved (metadata was written in place): no cuts" >&2
		compare "$feat, whole log" "$img"
		rm -f "$img"
		continue
	fi
	long_tests && compare "$feat, whole log" "$img"
	echo "$feat: $(awk '{ print $1 }' "$T/cuts" | sort -u | wc -l) cut points with an unfinished XMI, over $(awk '{ print $2 }' "$T/cuts" | sort -u | wc -l) exchanges"
	while read -r blk key flags; do
		cut_log "$img" "$blk" "$T/cut.img" ||
			{ fail "$feat: cannot cut the log at block $blk"; continue; }
		n=$(xmi_open "$T/cut.img" | wc -l)
		[ "$n" -gt 0 ] ||
			fail "$feat: the log cut at block $blk holds no unfinished XMI"
		compare "$feat, log cut at block $blk: exchange of inodes $key, flags $flags ($n unfinished XMI)" "$T/cut.img"
		ncuts=$((ncuts + 1))
		[ "$key" = "$SIZES_KEY" ] && sized=$((sized + 1))
		# The damage tests want an XMI with SET_SIZES.
		if [ -z "$keep" ] && [ $((flags & 2)) = 2 ]; then
			keep="$T/keep.img"
			cp --sparse=always "$T/cut.img" "$keep"
		fi
		rm -f "$T/cut.img"
	done < <(pick_cuts <"$T/cuts")
	rm -f "$img"
done
echo "$ncuts cuts of $runs logs compared, $sized in the exchange where a file grows"
[ "$runs" -gt 0 ] || fail "no dirty log could be made"
[ "$sized" -gt 0 ] ||
	fail "no log was cut inside the SET_SIZES exchange of a2 and b2: the partly done exchange was not exercised"

# Plant one when no cut left one (the log forces too slow to split an
# exchange): in a log holding an XMD, give the XMD another id so its XMI
# looks unfinished; the kernel and xfskit must then finish that exchange
# (redoing its step) alike.  (XMI_PLANT=1 plants even when a cut left
# one: to test the planting.)
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
	echo "note: no log held an XMI or an XMD; finishing and damaged XMIs not exercised" >&2
fi
[ -n "$xmd_img" ] && [ "$xmd_img" != "$keep" ] && rm -f "$xmd_img"

# Damaged XMIs: the kept log's unfinished XMI (its last copy: intent ids
# are reused) gets a bad field, its record re-checksummed; replay must
# refuse naming the rule broken and change nothing.  (These logs never
# go to the kernel.)
xoff=-1
if [ -n "$keep" ]; then
	id=$(xmi_open "$keep" | head -1)
	xoff=$(python3 -c '
import sys
d = open(sys.argv[1], "rb").read()
print(d.rfind(bytes.fromhex(sys.argv[2])))' "$keep" "4812010000000000$(host_hex 16 "$id")")
fi
if [ -n "$keep" ] && [ "$xoff" -lt 0 ]; then
	echo "note: the unfinished XMI is split across log records; no damage test" >&2
elif [ -n "$keep" ]; then
	sizes=""
	"$DB" -c logprint "$keep" 2>/dev/null | grep "id:0x$id " | tail -1 |
		grep -q SET_SIZES &&
		sizes="72:ffffffffffffffff:new sizes -1 and [0-9]*: not file sizes"
	damage_log XMI "$keep" "$xoff" "XMI intent id 0x$id.*" \
		"16:ffffffffffffff7f:not an inode number" \
		"16:bf00000000000000:the inode is free" \
		"56:ffffffffffffff00:run outside a file" \
		"56:0000000000000000:run outside a file" \
		"64:0001000000000000:unknown flags" \
		"4:01000000:size 1 and padding 0x1" \
		"32:01000000:generation is not the logged one" \
		${sizes:+"$sizes"}
	[ "$DAMAGE_TRIED" -gt 0 ] ||
		echo "note: the XMI's fields all cross a log block boundary; no damage test" >&2
fi
finish
