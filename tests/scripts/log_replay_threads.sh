#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Log replay on worker threads gives the same filesystem as on one.
# Dirty logs made by the kernel (loop mount, workload, shutdown with the
# log forced) are replayed by xk_logreplay with 1, 2 and 4 threads: the
# three images must be byte-identical, xfs_repair -n must accept them,
# and the tree and AG counters must equal the kernel's own replay of the
# same log.  The logs are large enough that the walk takes its records
# in several 4 MiB windows (more than 4 MiB between tail and head) or
# wrap around the physical end; a reflink workload also has the work
# after replay (CoW staging extents freed) follow the threaded pass.
# Damaged logs (a bad CRC, a broken header further on, both at once)
# are refused with the same message for any thread count, and the image
# is left unchanged.
. "$XK_SRCDIR/tests/scripts/lib.sh"
. "$XK_SRCDIR/tests/scripts/log_lib.sh"
need_log_tools

# Directories at the top go to different AGs; each gets creates, some
# unlinks, renames across, xattrs, symlinks and a truncated file.
wl_mixed() {
	local d
	for d in a b c d; do
		mkdir "$1/$d"
		(cd "$1/$d" &&
		 seq -f "a_file_name_long_enough_to_fill_the_log_${d}_%g" \
			1 9000 | xargs touch)
	done
	for d in a b c d; do
		rm -f "$1/$d"/a_file_name_long_enough_to_fill_the_log_${d}_*7
		mv "$1/$d/a_file_name_long_enough_to_fill_the_log_${d}_5" \
			"$1/a/moved_from_$d"
		setfattr -n user.x -v "value_$d" "$1/$d/a_file_name_long_enough_to_fill_the_log_${d}_1"
		ln -s "/target/of/$d" "$1/$d/sym"
		xfs_io -f -c "pwrite -q 0 1m" "$1/$d/data" >/dev/null
	done
	sync
	truncate -s 100k "$1/a/data"
	for d in a b c d; do echo "$d" >"$1/$d/last"; done
	sync
}

# Six rounds: the threads test's smaller log wraps with them.
wl_wrap6() {
	wl_wrap "$1" 6
}

# live_bb PRINT: blocks from tail to head, from xk_logprint's first line.
live_bb() {
	sed -n 's/^log tail: \([0-9]*\) head: \([0-9]*\).*/\1 \2/p' "$1" |
		awk -v s="$2" '{ d = $2 - $1; if (d < 0) d += s; print d }'
}

# threads_replay NAME: replay $T/NAME.img with 1, 2 and 4 threads and
# check the three results against each other and against the kernel.
threads_replay() {
	local name=$1 img="$T/$1.img" ok=1 t
	for t in 1 2 4; do
		cp --sparse=always "$img" "$T/$name.t$t"
		if ! "$LOGREPLAY" -t "$t" "$T/$name.t$t" >"$T/$name.out$t" 2>&1; then
			fail "$name: replay with $t threads failed: $(cat "$T/$name.out$t")"
			return
		fi
	done
	for t in 2 4; do
		same_image "$T/$name.t1" "$T/$name.t$t" ||
			{ fail "$name: $t threads give another image than 1: $(cmp "$T/$name.t1" "$T/$name.t$t" | head -1)"; ok=0; }
		cmp -s "$T/$name.out1" "$T/$name.out$t" ||
			{ fail "$name: $t threads report otherwise: $(diff "$T/$name.out1" "$T/$name.out$t" | head -3)"; ok=0; }
	done
	xfs_repair -n "$T/$name.t1" >"$T/$name.repair" 2>&1 ||
		{ fail "$name: xfs_repair -n rejects the replayed image: $(grep -v '^ *-\|^Phase' "$T/$name.repair" | head -3)"; ok=0; }
	kernel_record "$img" "$T/$name.A" || return
	kernel_record "$T/$name.t1" "$T/$name.B" || return
	cmp -s "$T/$name.A.tree" "$T/$name.B.tree" ||
		{ fail "$name: tree differs from the kernel's replay: $(diff "$T/$name.A.tree" "$T/$name.B.tree" | head -3)"; ok=0; }
	cmp -s "$T/$name.A.hdr" "$T/$name.B.hdr" ||
		{ fail "$name: AG counters differ from the kernel's replay: $(diff "$T/$name.A.hdr" "$T/$name.B.hdr" | head -3)"; ok=0; }
	[ "$ok" = 1 ] && pass "$name: 1, 2 and 4 threads byte-identical, $(sed -n 's/^records \([0-9]*\) transactions \([0-9]*\).*/\1 records, \2 transactions/p' "$T/$name.out1"), $(sed -n 's/^intents unfinished \([0-9]*\) finished \([0-9]*\).*cow freed \([0-9]*\).*/\2 of \1 unfinished intents finished, \3 CoW extents freed/p' "$T/$name.out1"), same as the kernel's replay"
}

# The live part must span several 4 MiB walk windows.  Under load the
# kernel may write the metadata home while the workload runs (its log
# worker pushes the tail every 30 s), leaving less: then try once more.
for attempt in 1 2; do
	dirty_image "$T/mixed.img" wl_mixed -l size=64m || finish
	"$LOGPRINT" -r "$T/mixed.img" >"$T/mixed.recs" ||
		fail "mixed: xk_logprint failed on the intact log"
	logbb=$(($(xfs_db -r -c 'sb 0' -c 'p logblocks' "$T/mixed.img" | awk '{print $3}') * 8))
	live=$(live_bb "$T/mixed.recs" "$logbb")
	[ "${live:-0}" -gt 8192 ] && break
	echo "note: attempt $attempt left ${live:-?} live log blocks (the kernel pushed the tail)" >&2
done
cp --sparse=always "$T/mixed.img" "$T/mixed.orig"
[ "${live:-0}" -gt 8192 ] &&
	pass "mixed: $((live / 2048)) MiB of live log (several walk windows)" ||
	fail "mixed: only ${live:-?} live log blocks, one walk window"
threads_replay mixed

dirty_image "$T/wrap.img" wl_wrap6 -l size=1368b --unsupported || finish
"$LOGPRINT" "$T/wrap.img" >"$T/wrap.print" 2>&1
cycle=$(sed -n 's/^log tail: .* cycle: \([0-9]*\).*/\1/p' "$T/wrap.print")
[ "${cycle:-0}" -ge 2 ] && pass "wrap: the log wrapped (cycle $cycle)" ||
	fail "wrap: the log did not wrap (cycle ${cycle:-?})"
threads_replay wrap

dirty_image "$T/reflink.img" wl_reflink -m rmapbt=1,reflink=1 || finish
LOOSE_HEADERS=1 threads_replay reflink

# Damage, in the big log (never mounted from here on).
logstart=$(xfs_db -r -c 'sb 0' -c 'p logstart' "$T/mixed.orig" | awk '{print $3}')
logdaddr=$(xfs_db -r -c "convert fsb $logstart daddr" "$T/mixed.orig" |
	   sed 's/.*(\([0-9]*\)).*/\1/')
mapfile -t recs < <(sed -n 's/^LOG REC AT LSN cycle [0-9]* block \([0-9]*\) .*/\1/p' "$T/mixed.recs")
nrec=${#recs[@]}
# Records past the first window, well before the head (not torn writes).
k=$((nrec * 2 / 3))
crc_blk=${recs[$k]}
hdr_blk=${recs[$((k + 2))]}

flip() {	# flip FILE OFFSET: invert one byte
	local v
	v=$(od -An -tu1 -j "$2" -N1 "$1" | tr -d ' ')
	printf "$(printf '\\%03o' $((255 - v)))" |
		dd of="$1" bs=1 seek="$2" conv=notrunc status=none
}

# same_refusal NAME PATTERN: 1 and 4 threads refuse $T/dmg.img with the
# same message matching PATTERN and leave it unchanged.
same_refusal() {
	local name=$1 pat=$2 t before
	before=$(img_sum "$T/dmg.img")
	for t in 1 4; do
		if "$LOGREPLAY" -t "$t" "$T/dmg.img" >"$T/$name.d$t" 2>&1; then
			fail "$name: replay with $t threads accepted a damaged log"
			return
		fi
	done
	[ "$(img_sum "$T/dmg.img")" = "$before" ] ||
		{ fail "$name: the image changed"; return; }
	same_image "$T/$name.d1" "$T/$name.d4" ||
		{ fail "$name: 1 and 4 threads say otherwise: $(diff "$T/$name.d1" "$T/$name.d4" | head -3)"; return; }
	grep -q -- "$pat" "$T/$name.d1" &&
		pass "$name: refused alike with 1 and 4 threads: $(sed -n 's/^xk_logreplay: //p' "$T/$name.d1")" ||
		fail "$name: message does not match '$pat': $(cat "$T/$name.d1")"
}

cp --sparse=always "$T/mixed.orig" "$T/dmg.img"
flip "$T/dmg.img" $(((logdaddr + crc_blk + 1) * 512 + 100))
same_refusal "bad CRC (record $k of $nrec)" "block $crc_blk .*CRC mismatch"

cp --sparse=always "$T/mixed.orig" "$T/dmg.img"
flip "$T/dmg.img" $(((logdaddr + hdr_blk) * 512))
same_refusal "broken header" "expected a log record header at block $hdr_blk"

# Both: the earlier record's CRC is what the walk meets first.
flip "$T/dmg.img" $(((logdaddr + crc_blk + 1) * 512 + 100))
same_refusal "bad CRC before a broken header" "block $crc_blk .*CRC mismatch"
finish
