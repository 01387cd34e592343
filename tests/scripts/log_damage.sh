#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Damaged logs.  A wrapped log the kernel left dirty is damaged in its
# oldest record (far from the head, so it cannot pass for a torn write):
# a flipped data byte, a data block cut off (zeroed), an impossible
# record length, and an op length running past its record behind a
# valid CRC.  Each must stop xk_logreplay and xk_logprint with a message
# naming the record (and the op), and leave the image byte-for-byte
# unchanged.  A flipped byte in the newest record is a torn write: like
# the kernel we drop that record, and the result must match the
# kernel's own replay of the same image.
. "$XK_SRCDIR/tests/scripts/lib.sh"
. "$XK_SRCDIR/tests/scripts/log_lib.sh"
need_log_tools

wl_wrap() {
	mkdir "$1/w"
	for r in 1 2 3 4 5 6 7 8; do
		(cd "$1/w" &&
		 seq -f "a_long_file_name_to_fill_the_log_${r}_%g" 1 2500 |
		 xargs touch)
		rm -f "$1"/w/a_long_file_name_to_fill_the_log_$((r - 1))_*
	done
	# Let background inactivation finish, so that losing the newest
	# record (the torn-write case) loses only these creates.
	sync
	sleep 2
	sync
	for i in 1 2 3 4 5 6 7 8; do echo "$i" >"$1/w/last$i"; done
	sync
}

base="$T/base.img"
# How many records the kernel leaves between tail and head depends on
# when its log worker last moved the tail: on a loaded machine it can
# be few.  The workload is run again (up to three times) until the log
# holds enough for the oldest record to be far from the head.
for try in 1 2 3; do
	dirty_image "$base" wl_wrap -l size=1368b --unsupported || finish
	logstart=$(xfs_db -r -c 'sb 0' -c 'p logstart' "$base" | awk '{print $3}')
	logdaddr=$(xfs_db -r -c "convert fsb $logstart daddr" "$base" |
		   sed 's/.*(\([0-9]*\)).*/\1/')
	"$LOGPRINT" -r "$base" >"$T/recs" || fail "xk_logprint on the intact log"
	first=$(sed -n 's/^LOG REC AT LSN cycle [0-9]* block \([0-9]*\) .*/\1/p' "$T/recs" | head -1)
	last=$(sed -n 's/^LOG REC AT LSN cycle [0-9]* block \([0-9]*\) .*/\1/p' "$T/recs" | tail -1)
	nrec=$(grep -c '^LOG REC' "$T/recs")
	[ "$nrec" -gt 10 ] && break
	echo "try $try: only $nrec records in the dirty log; the workload again"
done
[ "$nrec" -gt 10 ] || { fail "only $nrec records after 3 workloads: the damage would look torn"; finish; }
hdr_off=$(((logdaddr + first) * 512))
hlen=$(od -An -tu1 -j $((hdr_off + 12)) -N4 "$base" |
       awk '{print $1*16777216 + $2*65536 + $3*256 + $4}')
echo "log at daddr $logdaddr; $nrec records; oldest at $first (h_len $hlen), newest at $last"

poke() {	# poke FILE OFFSET HEXBYTES
	printf "$(echo "$3" | sed 's/\(..\)/\\x\1/g')" |
		dd of="$1" bs=1 seek="$2" conv=notrunc status=none
}

# expect_refusal NAME IMG PATTERN [printable]: replay (and, unless the
# log is merely unreplayable, xk_logprint) fails with PATTERN, and the
# image is unchanged.
expect_refusal() {
	local name=$1 img=$2 pat=$3 before
	before=$(img_sum "$img")
	if "$LOGREPLAY" "$img" >"$T/$name.out" 2>&1; then
		fail "$name: replay accepted a damaged log"
		return
	fi
	grep -q -- "$pat" "$T/$name.out" ||
		{ fail "$name: message does not match '$pat': $(grep '^xk_' "$T/$name.out")"; return; }
	if [ "${4:-}" != printable ]; then
		"$LOGPRINT" "$img" >/dev/null 2>"$T/$name.perr" &&
			fail "$name: xk_logprint accepted a damaged log"
		grep -q -- "$pat" "$T/$name.perr" ||
			fail "$name: xk_logprint message: $(cat "$T/$name.perr")"
	fi
	[ "$(img_sum "$img")" = "$before" ] &&
		pass "$name: refused, image unchanged: $(sed -n 's/^xk_logreplay: //p' "$T/$name.out")" ||
		fail "$name: the image changed"
}

cp --sparse=always "$base" "$T/d.img"
poke "$T/d.img" $((hdr_off + 512 + 200)) "$(od -An -tx1 -j $((hdr_off + 512 + 200)) -N1 "$base" | tr -d ' ' | tr '0-9a-f' '1-9a-f0')"
expect_refusal "flipped byte" "$T/d.img" "block $first .*CRC mismatch"

cp --sparse=always "$base" "$T/d.img"
dblks=$(((hlen + 511) / 512))
dd if=/dev/zero of="$T/d.img" bs=512 seek=$((logdaddr + first + dblks)) \
	count=1 conv=notrunc status=none
expect_refusal "record cut short" "$T/d.img" "block $first .*data block $((dblks - 1)) has cycle 0"

cp --sparse=always "$base" "$T/d.img"
poke "$T/d.img" $((hdr_off + 12)) 7fffff00
expect_refusal "record length" "$T/d.img" "block $first.*impossible length"

cp --sparse=always "$base" "$T/d.img"
poke "$T/d.img" $((hdr_off + 512 + 4)) 00ffffff
"$LOGPRINT" -C "$first" "$T/d.img" || fail "could not re-checksum the record"
expect_refusal "op length" "$T/d.img" "block $first .*op 0: length 16777215 runs past"

# An intent without its done item.  The kernel elides intent/done pairs
# that meet in one checkpoint, so real logs rarely keep one; plant one:
# in a fresh log the first record opens with the first checkpoint (start
# op, transaction header, then the first item's format region at data
# byte 52), and turning that item (an inode or buffer item) into an EFI
# with the same region count leaves an extent-free intent nobody
# finished.  Its payload is an inode or buffer item's, not an EFI's:
# finishing it must fail on the format and write nothing.  (This log is never shown to the kernel.)
wl_small() {
	mkdir "$1/d"
	echo x >"$1/d/f"
	sync
}
dirty_image "$T/e.img" wl_small || finish
"$LOGPRINT" -r "$T/e.img" >"$T/e.recs"
efirst=$(sed -n 's/^LOG REC AT LSN cycle [0-9]* block \([0-9]*\) .*/\1/p' "$T/e.recs" | head -1)
eoff=$(((logdaddr + efirst + 1) * 512 + 52))
etype=$(od -An -tx1 -j "$eoff" -N2 "$T/e.img" | tr -d ' ')
if [ "$etype" = 3b12 ] || [ "$etype" = 3c12 ]; then
	poke "$T/e.img" "$eoff" 3612
	"$LOGPRINT" -C "$efirst" "$T/e.img" || fail "could not re-checksum"
	expect_refusal "unfinished intent" "$T/e.img" "finishing intent 1 of 1 (EFI" printable
	"$LOGPRINT" "$T/e.img" | grep -q '^  EFI: #regs:' ||
		fail "unfinished intent: xk_logprint does not show the EFI"
else
	fail "unfinished intent: the first record does not open with an inode or buffer item ($etype)"
fi

# Random damage behind valid CRCs: a byte of a random record's payload
# changed, the record re-checksummed, then a dry-run replay (read-only
# handle).  Whatever the byte hits (op headers, lengths, item formats,
# bitmaps, inode cores) the tool must end with success or a message,
# never a crash or a sanitizer report, and write nothing.
RANDOM=20261203
recs=($(sed -n 's/^LOG REC AT LSN cycle [0-9]* block \([0-9]*\) .* len \([0-9]*\) .*/\1:\2/p' "$T/recs"))
crashes=0 refused=0 accepted=0
cp --sparse=always "$base" "$T/f.img"
for i in $(seq 1 40); do
	r=${recs[$((RANDOM % ${#recs[@]}))]}
	blk=${r%%:*} len=${r##*:}
	# Skip each block's first word (the cycle stamp).
	off=$((RANDOM % (len - 4)))
	[ $((off % 512)) -lt 4 ] && off=$((off + 4))
	boff=$(((logdaddr + blk + 1) * 512 + off))
	orig=$(od -An -tx1 -j "$boff" -N1 "$base" | tr -d ' ')
	# The stored CRC as it was (mkfs's unmount record carries none).
	crcoff=$(((logdaddr + blk) * 512 + 32))
	ocrc=$(od -An -tx1 -j "$crcoff" -N4 "$base" | tr -d ' ')
	poke "$T/f.img" "$boff" "$(printf '%02x' $((RANDOM % 256)))"
	"$LOGPRINT" -C "$blk" "$T/f.img" || { crashes=$((crashes + 1)); continue; }
	"$LOGREPLAY" -n "$T/f.img" >"$T/f.out" 2>&1
	rc=$?
	case $rc in
	0) accepted=$((accepted + 1)) ;;
	1) refused=$((refused + 1)) ;;
	*) crashes=$((crashes + 1))
	   fail "fuzz: record $blk byte $off: exit $rc: $(tail -3 "$T/f.out")" ;;
	esac
	# Put the byte and the CRC back for the next round.
	poke "$T/f.img" "$boff" "$orig"
	poke "$T/f.img" "$crcoff" "$ocrc"
done
# The dry runs wrote nothing: after the undo the copy is the original.
same_image "$T/f.img" "$base" ||
	fail "fuzz: the image differs from the original after the undo"
[ "$crashes" = 0 ] &&
	pass "fuzz: 40 damaged records behind valid CRCs: $refused refused with a message, $accepted harmless, no crash"

# The newest record damaged: a torn write, dropped as the kernel does.
cp --sparse=always "$base" "$T/A.img"
poke "$T/A.img" $(((logdaddr + last) * 512 + 512 + 300)) 5a
cp --sparse=always "$T/A.img" "$T/B.img"
"$LOGPRINT" "$T/B.img" >"$T/torn.print" 2>&1
grep -q "torn write at block $last" "$T/torn.print" &&
	pass "torn: head moved back to block $last" ||
	fail "torn: $(head -3 "$T/torn.print")"
kernel_record "$T/A.img" "$T/A"
if "$LOGREPLAY" "$T/B.img" >"$T/torn.out" 2>&1 &&
   xfs_repair -n "$T/B.img" >/dev/null 2>&1; then
	kernel_record "$T/B.img" "$T/B"
	same_image "$T/A.tree" "$T/B.tree" && same_image "$T/A.hdr" "$T/B.hdr" &&
		pass "torn: replay matches the kernel's" ||
		fail "torn: differs from the kernel: $(diff "$T/A.tree" "$T/B.tree" | head -3; diff "$T/A.hdr" "$T/B.hdr" | head -3)"
else
	fail "torn: replay or repair failed: $(cat "$T/torn.out")"
fi
finish
