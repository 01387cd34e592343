#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# External logs (mkfs.xfs -l logdev=), against xfsprogs and the kernel:
#  1. xfskit-mkfs -l logdev= writes the superblocks and AG headers
#     mkfs.xfs 6.1 / 7.2 write for the same options and -m uuid=, and the
#     same log device but for the record CRC (bytes 32-35: mkfs.xfs
#     leaves it 0, we fill it in);
#  2. xfskit-repair -n -l finds healthy ones clean (mkfs.xfs's, ours,
#     and one after a kernel workload mounted with -o logdev=), as
#     xfs_repair -n -l does;
#  3. on xfs_db-damaged ones both xfs_repair -n -l and we find damage,
#     and after our repair with -l xfs_repair -n -l finds none;
#  4. a dirty external log (xfs_io shutdown -f) replayed by
#     xfskit-repair -l leaves the tree the kernel's own replay gives, and
#     xfs_repair -n -l clean; -L -l zeroes it (xfs_repair -n -l clean);
#  5. a wrong log device (another filesystem's log, a zeroed one, the
#     data device, -l on an internal log) is a clear error, exit 1, and
#     not one write (strace, image_state); without -l, -n says the log was
#     not checked and repair writes nothing.
. "$XK_SRCDIR/tests/scripts/lib.sh"
. "$XK_SRCDIR/tests/scripts/log_lib.sh"
need_xfsprogs
have_xfs72 || true
UUID=4e1f0d2c-9a6b-4c3d-8e2f-1a2b3c4d5e6f

# mk TOOL DATA LOG LOGSIZE OPTS...: a fresh 1 GiB data file and a log
# file of LOGSIZE, then TOOL's mkfs (mkfs.xfs wants absolute paths under
# the 7.2 wrapper).
mk() {
	local tool=$1 d=$2 l=$3 lsize=$4
	shift 4
	rm -f "$d" "$l"
	truncate -s "$lsize" "$l"
	case $tool in
	ours) "$MKFS" -q "$@" -d file,name="$d",size=1g ;;
	6.1) mkfs.xfs -q "$@" -d file,name="$d",size=1g ;;
	7.2) xfs72 mkfs.xfs -q "$@" -d file,name="$d",size=1g ;;
	esac >"$T/mk.out" 2>&1
}

# headers IMG LOG: xfs_db prints of every AG's superblock and headers.
headers() {
	local n i
	n=$(xfs_db -r -l "$2" -c 'sb 0' -c 'p agcount' "$1" 2>/dev/null | awk '{print $3}')
	for ((i = 0; i < ${n:-0}; i++)); do
		xfs_db -r -l "$2" -c "sb $i" -c p -c "agf $i" -c p -c "agi $i" \
			-c p -c "agfl $i" -c p "$1" 2>&1
	done
}

# 1. mkfs: "tool|options" with @ for the log device.
for c in "6.1|-m rmapbt=1 -i nrext64=1 -l logdev=@,size=64m|64m" \
	 "6.1|-s size=4096 -m rmapbt=1 -i nrext64=1 -l logdev=@|80m" \
	 "7.2|-n parent=0 -i exchange=0 -l logdev=@,su=32k|64m" \
	 "7.2|-b size=1024 -n parent=0 -i exchange=0 -l logdev=@,size=70m|72m"; do
	IFS='|' read -r tool opts lsize <<<"$c"
	if [ "$tool" = 7.2 ] && ! have_xfs72 >/dev/null; then
		echo "note: no xfsprogs 7.2: mkfs case '$opts' left out"
		continue
	fi
	name="mkfs.xfs $tool vs ours: $opts"
	# shellcheck disable=SC2086
	if ! mk "$tool" "$T/x.img" "$T/xl.img" "$lsize" -m uuid=$UUID ${opts//@/$T/xl.img}; then
		fail "$name: mkfs.xfs: $(cat "$T/mk.out")"
		continue
	fi
	# shellcheck disable=SC2086
	if ! mk ours "$T/k.img" "$T/kl.img" "$lsize" -m uuid=$UUID ${opts//@/$T/kl.img}; then
		fail "$name: xfskit-mkfs: $(cat "$T/mk.out")"
		continue
	fi
	headers "$T/x.img" "$T/xl.img" >"$T/x.hdr"
	headers "$T/k.img" "$T/kl.img" >"$T/k.hdr"
	if [ -s "$T/x.hdr" ] && cmp -s "$T/x.hdr" "$T/k.hdr"; then
		pass "$name: superblocks and AG headers equal ($(wc -l <"$T/x.hdr") lines)"
	else
		fail "$name: headers differ: $(diff "$T/x.hdr" "$T/k.hdr" | head -6)"
	fi
	diffs=$(cmp -l "$T/xl.img" "$T/kl.img" | awk '$1 < 33 || $1 > 36' | wc -l)
	crcs=$(cmp -l "$T/xl.img" "$T/kl.img" | wc -l)
	if [ "$diffs" -eq 0 ] && [ "$(stat -c %s "$T/xl.img")" = "$(stat -c %s "$T/kl.img")" ] &&
	   [ "$(od -An -tx1 -j32 -N4 "$T/xl.img" | tr -d ' ')" = 00000000 ]; then
		pass "$name: log devices equal but the record CRC ($crcs byte(s))"
	else
		fail "$name: log devices differ in $diffs byte(s) besides the CRC: $(cmp -l "$T/xl.img" "$T/kl.img" | head -4)"
	fi
	if "$REPAIR" -n -l "$T/kl.img" "$T/k.img" >"$T/n.out" 2>&1 &&
	   "$REPAIR" -n -l "$T/xl.img" "$T/x.img" >>"$T/n.out" 2>&1; then
		pass "$name: xfskit-repair -n -l finds both clean"
	else
		fail "$name: xfskit-repair -n -l: $(head -5 "$T/n.out")"
	fi
	if xfs_repair_clean "$T/k.img" "$T/xr.out" -l "$T/kl.img"; then
		pass "$name: xfs_repair -n -l finds ours clean"
	else
		fail "$name: $(cat "$T/xr.out")"
	fi
done

# The base for the rest: ours, 64 MiB log.
mk ours "$T/b.img" "$T/bl.img" 64m -l logdev="$T/bl.img",size=64m ||
	{ fail "xfskit-mkfs: $(cat "$T/mk.out")"; finish; }

# 5. Wrong log devices: a clear error, exit 1, no write.
mk 6.1 "$T/o.img" "$T/ol.img" 64m -l logdev="$T/ol.img" ||
	{ fail "mkfs.xfs: $(cat "$T/mk.out")"; finish; }
truncate -s 64m "$T/zl.img"
mk 6.1 "$T/i.img" "$T/il.img" 64m || { fail "mkfs.xfs: $(cat "$T/mk.out")"; finish; }
# writes TRACE: data-bearing write calls (pwrite*, or write to fd > 2).
writes() {
	grep -cE 'pwrite(64|v|v2)\(|[^a-z_]write\(([3-9]|[1-9][0-9]+),' "$1"
}
for c in "another filesystem's log|b.img|ol.img|not this filesystem's log: its records belong to filesystem" \
	 "a zeroed device|b.img|zl.img|no log record in its first 1024 KiB" \
	 "the data device|b.img|b.img|is the data device itself" \
	 "an internal log|i.img|bl.img|the filesystem's log is internal"; do
	IFS='|' read -r what d l msg <<<"$c"
	# -n cannot write by construction: once is enough.
	modes=""
	[ "$l" = ol.img ] && modes=-n
	for n in $modes ""; do
		before=$(image_state "$T/$d" "$T/$l" "$T/bl.img")
		# LeakSanitizer cannot run under ptrace.
		# shellcheck disable=SC2086
		ASAN_OPTIONS=exitcode=99:detect_leaks=0 strace -f -qq \
			-e trace=pwrite64,pwritev,pwritev2,write -o "$T/trace" \
			"$REPAIR" $n -l "$T/$l" "$T/$d" >"$T/w.out" 2>&1
		rc=$?
		nw=$(writes "$T/trace")
		if [ $rc -eq 1 ] && grep -q "$msg" "$T/w.out" && [ "$nw" -eq 0 ] &&
		   [ "$(image_state "$T/$d" "$T/$l" "$T/bl.img")" = "$before" ]; then
			pass "-l ${n:+$n }$what: exit 1, no write: $(head -1 "$T/w.out" | cut -c1-110)"
		else
			fail "-l ${n:+$n }$what: exit $rc, $nw write(s): $(head -3 "$T/w.out")"
		fi
	done
done
"$DB" -r -l "$T/ol.img" -c sb "$T/b.img" >"$T/db.out" 2>&1; rc=$?
[ $rc -eq 2 ] && grep -q "not this filesystem's log" "$T/db.out" &&
	pass "xfskit-db -l another filesystem's log: exit 2, named" ||
	fail "xfskit-db -l wrong log: exit $rc: $(head -3 "$T/db.out")"
# Without -l: -n checks the rest and says so; repair writes nothing.
before=$(image_state "$T/b.img" "$T/bl.img")
"$REPAIR" -n "$T/b.img" >"$T/nl.out" 2>&1; rc=$?
[ $rc -eq 5 ] && grep -q "the log (on an external device that was not given) was not checked: give its device with -l LOGDEV" "$T/nl.out" &&
	pass "no -l: -n exit 5, the log named as not checked" ||
	fail "no -l: -n exit $rc: $(head -3 "$T/nl.out")"
"$REPAIR" "$T/b.img" >"$T/nl.out" 2>&1; rc=$?
[ $rc -eq 5 ] && grep -q "refusing to change anything" "$T/nl.out" &&
	[ "$(image_state "$T/b.img" "$T/bl.img")" = "$before" ] &&
	pass "no -l: repair refused, exit 5, nothing written" ||
	fail "no -l: repair exit $rc: $(head -3 "$T/nl.out")"
"$DB" -r -c logprint "$T/b.img" >"$T/db.out" 2>&1
grep -q "the log is on an external device, which was not given (-l LOGDEV)" "$T/db.out" &&
	pass "xfskit-db logprint without -l says the log device is missing" ||
	fail "xfskit-db logprint without -l: $(head -3 "$T/db.out")"
"$DB" -r -l "$T/bl.img" -c logprint "$T/b.img" >"$T/db.out" 2>&1
grep -q "state: <CLEAN>" "$T/db.out" &&
	pass "xfskit-db -l: logprint reads the external log ($(head -1 "$T/db.out"))" ||
	fail "xfskit-db -l logprint: $(head -3 "$T/db.out")"

# 3. xfs_db-damaged copies: both checkers find damage.
for c in "agf 1 freeblks|agf 1|write -d freeblks 17" \
	 "agi 2 freecount|agi 2|write -d freecount 9" \
	 "root inode nlink|inode 128|write -d core.nlinkv2 7"; do
	IFS='|' read -r what obj cmd <<<"$c"
	cp --sparse=always "$T/b.img" "$T/c.img"
	xfs_db -x -l "$T/bl.img" -c "$obj" -c "$cmd" "$T/c.img" >/dev/null 2>&1
	xfs_repair -n -l "$T/bl.img" "$T/c.img" >/dev/null 2>&1; xrc=$?
	"$REPAIR" -n -l "$T/bl.img" "$T/c.img" >"$T/c.out" 2>&1; rc=$?
	if [ $xrc -eq 1 ] && [ $rc -eq 1 ]; then
		pass "damaged $what: xfs_repair -n -l and we find damage: $(grep -v '^[0-9]* problem' "$T/c.out" | head -1 | cut -c1-100)"
	else
		fail "damaged $what: xfs_repair -n -l exit $xrc, ours $rc: $(head -3 "$T/c.out")"
	fi
	"$REPAIR" -l "$T/bl.img" "$T/c.img" >"$T/c.out" 2>&1; rc=$?
	xfs_repair -n -l "$T/bl.img" "$T/c.img" >"$T/cx.out" 2>&1; xrc=$?
	[ $rc -eq 0 ] && [ $xrc -eq 0 ] &&
		pass "damaged $what: repaired with -l, xfs_repair -n -l clean after" ||
		fail "damaged $what: repair -l exit $rc, xfs_repair -n -l after: $xrc: $(tail -3 "$T/c.out")"
done

# 2 and 4: the kernel, mounting with -o logdev= (a loop device).
[ "$(id -u)" -eq 0 ] || { echo "note: not root: no kernel mounts"; finish; }
command -v xfs_io >/dev/null 2>&1 || { echo "note: no xfs_io: no kernel cases"; finish; }
LOGLOOP=""
trap '[ -n "$LOGLOOP" ] && { umount "$T/mnt" 2>/dev/null; losetup -d "$LOGLOOP"; }; cleanup' EXIT
# kmount DATA LOG: mount with the log on a loop device of its own.
kmount() {
	LOGLOOP=$(losetup -f --show "$2") || { fail "losetup $2"; return 1; }
	MNT="$T/mnt"
	mkdir -p "$MNT"
	if ! mount -o "loop,logdev=$LOGLOOP" "$1" "$MNT" 2>"$T/mount.err"; then
		losetup -d "$LOGLOOP"
		LOGLOOP=""
		fail "mount -o logdev= $1: $(cat "$T/mount.err")"
		return 1
	fi
	LOOP_MOUNTED=1
}
kumount() {
	loop_umount_busy
	losetup -d "$LOGLOOP"
	LOGLOOP=""
}
workload() {
	mkdir -p "$1/d/e" "$1/big"
	cp -r "$XK_SRCDIR/libfs/log" "$1/d/e/"
	for i in $(seq 1 60); do echo "file $i" >"$1/big/f$i"; done
	dd if=/dev/urandom of="$1/data" bs=64k count=16 2>/dev/null
	ln "$1/data" "$1/d/hardlink"
	setfattr -n user.k -v v "$1/d" 2>/dev/null
	rm -f "$1/big/f1"*
	mv "$1/big/f20" "$1/d/moved"
}
# Healthy after a workload and a clean unmount.
cp --sparse=always "$T/b.img" "$T/h.img"
cp --sparse=always "$T/bl.img" "$T/hl.img"
if kmount "$T/h.img" "$T/hl.img"; then
	workload "$MNT"
	kumount
	"$REPAIR" -n -l "$T/hl.img" "$T/h.img" >"$T/h.out" 2>&1; rc=$?
	[ $rc -eq 0 ] && xfs_repair_clean "$T/h.img" "$T/xr.out" -l "$T/hl.img" &&
		pass "after a kernel workload: xfskit-repair -n -l and xfs_repair -n -l clean" ||
		fail "after a kernel workload: ours exit $rc: $(head -3 "$T/h.out") $(cat "$T/xr.out")"
fi
# Dirty: shut down with the log forced; the kernel's replay vs ours.
cp --sparse=always "$T/b.img" "$T/y.img"
cp --sparse=always "$T/bl.img" "$T/yl.img"
if kmount "$T/y.img" "$T/yl.img"; then
	workload "$MNT"
	xfs_io -x -c 'shutdown -f' "$MNT"
	kumount
	for f in y yl; do
		cp --sparse=always "$T/$f.img" "$T/k$f.img"
		cp --sparse=always "$T/$f.img" "$T/z$f.img"
	done
	"$REPAIR" -L -l "$T/zyl.img" "$T/zy.img" >"$T/z.out" 2>&1; rc=$?
	xfs_repair -n -l "$T/zyl.img" "$T/zy.img" >"$T/zx.out" 2>&1; xrc=$?
	[ $rc -eq 0 ] && grep -q "Log zeroed" "$T/z.out" && [ $xrc -eq 0 ] &&
		pass "dirty external log: -L -l zeroes it, xfs_repair -n -l clean after" ||
		fail "dirty external log: -L -l exit $rc, xfs_repair -n -l $xrc: $(tail -3 "$T/z.out") $(tail -3 "$T/zx.out")"
	rm -f "$T/zy.img" "$T/zyl.img"
	before=$(image_state "$T/y.img" "$T/yl.img")
	"$REPAIR" -n -l "$T/yl.img" "$T/y.img" >"$T/y.out" 2>&1; rc=$?
	[ $rc -eq 1 ] && grep -q "the log holds" "$T/y.out" &&
		[ "$(image_state "$T/y.img" "$T/yl.img")" = "$before" ] &&
		pass "dirty external log: -n reports it ($(grep -o 'the log holds [0-9]* transactions' "$T/y.out")), writes nothing" ||
		fail "dirty external log: -n exit $rc: $(head -3 "$T/y.out")"
	"$REPAIR" -l "$T/yl.img" "$T/y.img" >"$T/y.out" 2>&1; rc=$?
	if [ $rc -eq 0 ] && grep -qi "replayed the log" "$T/y.out"; then
		pass "dirty external log: replayed by xfskit-repair -l ($(grep -i "replayed the log" "$T/y.out" | head -1 | cut -c1-80))"
	else
		fail "dirty external log: xfskit-repair -l exit $rc: $(head -5 "$T/y.out")"
	fi
	xfs_repair_clean "$T/y.img" "$T/xr.out" -l "$T/yl.img" &&
		pass "after our replay: xfs_repair -n -l clean" ||
		fail "after our replay: $(cat "$T/xr.out")"
	if kmount "$T/ky.img" "$T/kyl.img"; then
		record_tree "$MNT" >"$T/kernel.tree"
		kumount
	fi
	if kmount "$T/y.img" "$T/yl.img"; then
		record_tree "$MNT" >"$T/ours.tree"
		kumount
	fi
	if [ -s "$T/kernel.tree" ] && cmp -s "$T/kernel.tree" "$T/ours.tree"; then
		pass "our replay gives the kernel's tree ($(wc -l <"$T/kernel.tree") lines: paths, contents, xattrs)"
	else
		fail "trees differ after replay: $(diff "$T/kernel.tree" "$T/ours.tree" | head -6)"
	fi
fi
finish
