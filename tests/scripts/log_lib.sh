# SPDX-License-Identifier: GPL-2.0-or-later
# Helpers for the log tests, sourced after lib.sh: make an image whose
# log the kernel left dirty, and record a filesystem's visible state
# (tree, attributes, contents) and its AG header counters so a kernel
# replay and ours can be compared.

LOGPRINT="$XK_BUILDDIR/tests/tools/xk_logprint"
LOGREPLAY="$XK_BUILDDIR/tests/tools/xk_logreplay"

need_log_tools() {
	need_xfsprogs
	command -v xfs_io >/dev/null 2>&1 || skip "xfs_io is not installed"
	command -v xfs_logprint >/dev/null 2>&1 ||
		skip "xfs_logprint is not installed"
	[ "$(id -u)" -eq 0 ] || skip "making dirty logs needs root (loop mount)"
	[ -x "$LOGREPLAY" ] && [ -x "$LOGPRINT" ] ||
		skip "test tools not built (make check builds them)"
}

# dirty_image IMG WORKLOAD [mkfs options...]: format IMG, mount it, run
# the shell function WORKLOAD with the mount point as $1, then shut the
# filesystem down with the log forced (committed changes stay in the log
# and never reach their home blocks) and unmount.  A workload may start
# a process holding files open and leave its pid in HOLDER.  Mount
# options for the workload (iclog size) come from DIRTY_MOUNT_OPTS.
dirty_image() {
	local img=$1 fn=$2
	shift 2
	rm -f "$img"
	truncate -s 512M "$img"
	mkfs.xfs -f -q "$@" "$img" >"$T/mkfs.out" 2>&1 ||
		{ fail "mkfs.xfs $* failed: $(cat "$T/mkfs.out")"; return 1; }
	if [ -n "${DIRTY_MOUNT_OPTS:-}" ]; then
		# Same bookkeeping as lib.sh's loop_mount, with options.
		MNT="$T/mnt"
		mkdir -p "$MNT"
		mount -o "loop,$DIRTY_MOUNT_OPTS" "$img" "$MNT" \
			2>"$T/mount.err" ||
			{ fail "mount -o $DIRTY_MOUNT_OPTS failed: $(cat "$T/mount.err")"; return 1; }
		LOOP_MOUNTED=1
	else
		loop_mount "$img" || return 1
	fi
	"$fn" "$MNT"
	xfs_io -x -c 'shutdown -f' "$MNT"
	# A workload that keeps files open says how to let them go.
	if [ -n "${HOLDER:-}" ]; then
		kill "$HOLDER" 2>/dev/null
		wait "$HOLDER" 2>/dev/null
		HOLDER=""
	fi
	loop_umount_busy
}

# loop_umount_busy: unmount, retrying while a killed workload's last
# command may still be leaving the filesystem (up to a minute: on a
# loaded machine that can take far longer than on an idle one).
loop_umount_busy() {
	for _ in $(seq 1 120); do
		loop_umount 2>/dev/null && return 0
		sleep 0.5
	done
	loop_umount || { fail "cannot unmount $MNT: $(fuser -vm "$MNT" 2>&1 | head -5)"; return 1; }
}

# record_tree MNT: paths, types, modes, sizes, link counts, content
# hashes and extended attributes, in a stable order.
record_tree() {
	(cd "$1" && find . -printf '%p %y %m %s %n %l\n' | LC_ALL=C sort &&
	 find . -type f -print0 | LC_ALL=C sort -z |
		xargs -0 -r sha256sum &&
	 getfattr -R -h -d -m - -e hex . 2>/dev/null)
}

# record_headers IMG: the counters of the superblock and every AGF/AGI.
record_headers() {
	local img=$1 n i
	n=$(xfs_db -r -c 'sb 0' -c 'p agcount' "$img" | awk '{print $3}')
	xfs_db -r -c 'sb 0' -c 'p icount ifree fdblocks' "$img"
	for ((i = 0; i < n; i++)); do
		if [ -n "${LOOSE_HEADERS:-}" ]; then
			# After finishing intents the AG indexes are rebuilt:
			# their shapes (levels, AGFL fill, btree block counts)
			# may differ from the kernel's, what they count not.
			xfs_db -r -c "agf $i" -c 'p freeblks flcount btreeblks' \
				"$img" | awk '{ s += $3 } END { print "agf space", s }'
			xfs_db -r -c "agi $i" -c 'p count freecount unlinked' "$img"
			continue
		fi
		xfs_db -r -c "agf $i" -c 'p freeblks longest flcount btreeblks bnolevel cntlevel' \
			-c "agi $i" -c 'p count freecount level newino dirino unlinked' "$img"
	done
}

# kernel_record IMG OUT: mount (the kernel replays), record, unmount.
kernel_record() {
	loop_mount "$1" || return 1
	record_tree "$MNT" >"$2.tree"
	loop_umount
	record_headers "$1" >"$2.hdr"
}

# Identity of an image, for "nothing was written".
img_sum() {
	image_state "$1"
}

# log_find IMG HEX: byte offset of the first occurrence of HEX in IMG.
log_find() {
	python3 -c "
import sys
d = open(sys.argv[1], 'rb').read()
print(d.find(bytes.fromhex(sys.argv[2])))" "$1" "$2"
}
# host_hex WIDTH HEX: a number's WIDTH hex digits in host (little-endian)
# byte order, as log items hold their native fields.
host_hex() {
	printf "%0${1}x" "0x$2" | sed 's/\(..\)/\1 /g' |
		awk '{for (i = NF; i > 0; i--) printf "%s", $i}'
}
# log_daddr IMG: the 512-byte sector where IMG's internal log starts.
log_daddr() {
	local logstart
	logstart=$(xfs_db -r -c 'sb 0' -c 'p logstart' "$1" 2>/dev/null |
		   awk '{print $3}')
	xfs_db -r -c "convert fsb $logstart daddr" "$1" 2>/dev/null |
		sed 's/.*(\([0-9]*\)).*/\1/'
}

# log_find_item IMG FMT MAGIC: byte offset of a logged region starting
# with MAGIC (hex) that follows an item format header starting with FMT
# (hex) within 96 bytes, searched only in the data of the log's live
# records (xk_logprint -r), oldest first, so the item belongs to a
# committed transaction.  MAGIC's first two bytes must lie in one
# sector, clear of its cycle stamp (poke_log's rule).  -1 if none.
log_find_item() {
	local img=$1
	"$LOGPRINT" -r "$img" 2>/dev/null |
		sed -n 's/^LOG REC AT LSN cycle [0-9]* block \([0-9]*\) .* len \([0-9]*\) .*/\1 \2/p' |
		python3 -c '
import sys
img, daddr, fmt, magic = sys.argv[1], int(sys.argv[2]), bytes.fromhex(sys.argv[3]), bytes.fromhex(sys.argv[4])
f = open(img, "rb")
for line in sys.stdin:
    blk, ln = map(int, line.split())
    hdr = max(1, -(-ln // 32768))          # v2 header plus extended headers
    start = (daddr + blk + hdr) * 512
    f.seek(start)
    d = f.read(ln)
    i = d.find(fmt)
    while i >= 0:
        j = d.find(magic, i, i + 96)
        a = start + j
        if j >= 0 and a % 512 >= 4 and a // 512 == (a + 1) // 512:
            print(a)
            sys.exit(0)
        i = d.find(fmt, i + 1)
print(-1)' "$img" "$(log_daddr "$img")" "$2" "$3"
}

# poke_log IMG OFF HEX: write bytes in the log and re-checksum their
# record; fails when they would cross a block or touch a cycle stamp.
poke_log() {
	local img=$1 off=$2 hex=$3 logdaddr rblk hblk
	[ $((off / 512)) = $(((off + ${#hex} / 2 - 1) / 512)) ] &&
		[ $((off % 512)) -ge 4 ] || return 1
	logdaddr=$(log_daddr "$img")
	rblk=$((off / 512 - logdaddr))
	hblk=$("$LOGPRINT" -r "$img" |
	       sed -n 's/^LOG REC AT LSN cycle [0-9]* block \([0-9]*\) .*/\1/p' |
	       awk -v b="$rblk" '$1 <= b { h = $1 } END { print h }')
	[ -n "$hblk" ] || return 1
	printf "$(echo "$hex" | sed 's/\(..\)/\\x\1/g')" |
		dd of="$img" bs=1 seek="$off" conv=notrunc status=none
	"$LOGPRINT" -C "$hblk" "$img" >/dev/null
}

# damage_log KIND IMG OFF PREFIX CASE...: each CASE is "field offset:
# bytes in host order:message".  A copy of IMG gets the bytes at OFF plus
# the field offset (poke_log); xfskit-repair must refuse it saying
# PREFIX followed by the message, and leave it unchanged.  DAMAGE_TRIED
# counts the cases that could be made (a field may cross a block).
damage_log() {
	local kind=$1 img=$2 off=$3 prefix=$4 c fo rest bytes want before
	shift 4
	DAMAGE_TRIED=0
	for c in "$@"; do
		fo=${c%%:*} rest=${c#*:}
		bytes=${rest%%:*} want=${rest#*:}
		cp --sparse=always "$img" "$T/bad.img"
		poke_log "$T/bad.img" $((off + fo)) "$bytes" || continue
		DAMAGE_TRIED=$((DAMAGE_TRIED + 1))
		before=$(img_sum "$T/bad.img")
		if "$REPAIR" "$T/bad.img" >"$T/bad.out" 2>&1; then
			fail "damaged $kind ($want): xfskit-repair accepted it"
		elif ! grep -q "$prefix$want" "$T/bad.out"; then
			fail "damaged $kind ($want): message: $(head -2 "$T/bad.out")"
		elif [ "$(img_sum "$T/bad.img")" != "$before" ]; then
			fail "damaged $kind ($want): the image was changed"
		else
			pass "damaged $kind refused, image unchanged: $(grep -o "$kind.*" "$T/bad.out" | head -1 | cut -c1-100)"
		fi
	done
}

# wl_reflink MNT: reflinked copies written (copy-on-write), some removed
# or cut: refcount and rmap btree updates, and CoW staging extents left
# for the work after replay to free, as a mount would.
wl_reflink() {
	mkdir "$1/r"
	xfs_io -f -c "pwrite -b 64k 0 8m" "$1/r/src" >/dev/null
	sync
	for i in 1 2 3 4 5 6; do
		cp --reflink=always "$1/r/src" "$1/r/c$i"
		xfs_io -c "pwrite $((i * 64))k 4k" -c fsync "$1/r/c$i" >/dev/null
	done
	rm -f "$1/r/c1" "$1/r/c2"
	truncate -s 1m "$1/r/c3"
	sync
}

# wl_wrap MNT [ROUNDS]: ROUNDS (default 8) rounds of 2,500 creates with
# long names, each round removing the one before: log traffic that wraps
# a small log.
wl_wrap() {
	local rounds=${2:-8} r

	mkdir "$1/w"
	for ((r = 1; r <= rounds; r++)); do
		(cd "$1/w" &&
		 seq -f "a_long_file_name_to_fill_the_log_${r}_%g" 1 2500 |
		 xargs touch)
		rm -f "$1"/w/a_long_file_name_to_fill_the_log_$((r - 1))_*
	done
	echo last >"$1/w/last"
	sync
}
