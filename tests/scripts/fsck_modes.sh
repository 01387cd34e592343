#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# fsck.xfskit against the oracles: fsck(8) exit codes for a clean image,
# a corrupted one (xfs_db -x), a safe-class finding (a superblock
# counter), a kernel-dirtied log (our replay compared with the kernel's),
# mounted filesystems, and usage and operational errors.  xfs_repair -n
# decides what "clean" and "corrupt" mean; outcomes are never assumed.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/log_lib.sh"
need_xfsprogs

FSCK="$XK_BUILDDIR/fsck/fsck.xfskit"
export XK_REPAIR="$REPAIR"
[ -x "$FSCK" ] || skip "fsck.xfskit is not built"

# run_fsck EXPECTED ARGS...: run it and compare its exit status.
run_fsck() {
	local want=$1 got
	shift
	"$FSCK" "$@" >"$T/fsck.out" 2>&1
	got=$?
	if [ "$got" = "$want" ]; then
		pass "fsck.xfskit $* -> $got"
	else
		fail "fsck.xfskit $* exited $got, expected $want: $(cat "$T/fsck.out")"
	fi
}

oracle_clean() {
	xfs_repair -n "$1" >"$T/xr.out" 2>&1
}

img=$T/clean.img
mkfs_xfs_image "$img" 300M || fail "mkfs.xfs failed"
oracle_clean "$img" || fail "xfs_repair -n finds the fresh image dirty"
for m in -n -p -a -y ""; do
	# shellcheck disable=SC2086
	run_fsck 0 $m "$img"
done
# What fsck(8) and systemd-fsck add.
run_fsck 0 -a -T -l -M -C0 -f "$img"
run_fsck 0 -t xfs -n "$img"

# -C FD: e2fsck's progress lines, each phase in order, the inode scan's
# count rising to its total; -C 0: a bar; a closed descriptor: usage.
"$FSCK" -n -C 5 "$img" >"$T/fsck.out" 2>&1 5>"$T/prog"
if awk -v dev="$img" '
	NF != 4 || $4 != dev || $2 > $3 || $1 < ph { bad = 1 }
	$1 == 3 { if ($3 == t3 && $2 < d3) bad = 1; d3 = $2; t3 = $3 }
	{ ph = $1; seen[$1] = 1 }
	END { exit bad || !seen[1] || !seen[7] || !t3 || d3 != t3 }' "$T/prog"; then
	pass "-C 5: $(wc -l <"$T/prog") progress lines, phases in order, the inode scan to 100%"
else
	fail "-C 5: progress lines: $(head -c 400 "$T/prog")"
fi
"$FSCK" -n -C 0 "$img" >"$T/fsck.out" 2>&1
grep -q "phase 3 |=*| 100.0%" "$T/fsck.out" &&
	pass "-C 0: a completion bar to 100%" ||
	fail "-C 0: no bar: $(cat -v "$T/fsck.out" | head -c 400)"
run_fsck 16 -n -C 9 "$img"

# Usage and operational errors.
run_fsck 16 -Q "$img"
run_fsck 16 -n -y "$img"
run_fsck 16 -p -n "$img"
run_fsck 16 "$img" "$img"
run_fsck 16
run_fsck 8 "$T/no-such-device"
XK_REPAIR=$T/no-such-repair run_fsck 8 -n "$img"
printf 'not a filesystem' >"$T/junk.img"
truncate -s 64M "$T/junk.img"
run_fsck 8 -n "$T/junk.img"

# Stand-in checkers for what the real one cannot be made to do on
# demand: truncated or inconsistent reports, a stop for a dirty log, a
# death by signal, and a safe finding (by "code") that a repair run
# clears.  Each gets fsck(8)'s code for that outcome.
fake() {
	printf '#!/bin/sh\n%s\n' "$1" >"$T/fake"
	chmod +x "$T/fake"
}
head='{"tool": "xfskit-repair", "version": "0", "device": "d", "mode": "check", "problems": ['
fake "echo '$head'; exit 1"
XK_REPAIR=$T/fake run_fsck 8 -n "$img"
fake "echo '$head], \"problem_count\": 2, \"exit_status\": 0}'"
XK_REPAIR=$T/fake run_fsck 8 -n "$img"
fake "echo '$head], \"error\": \"dirty log\", \"exit_status\": 2}'; exit 2"
XK_REPAIR=$T/fake run_fsck 4 -y "$img"
fake 'kill -TERM $$'
XK_REPAIR=$T/fake run_fsck 32 -n "$img"
# Preen decides from the finding's flags (the checker's problem table),
# not from a list of codes of its own: a code it has never heard of that
# is flagged safe is preened; a known code flagged unsafe, destructive or
# unfixable, or a finding without flags, is not.
safe='"safe_to_preen": true, "destructive": false, "fixable": true'
# preen_case WANT-STATUS WANT-REPAIR-RUN CODE FLAGS
preen_case() {
	local prob="{\"problem\": \"new wording\", \"code\": \"$3\", \"structure\": \"AGF\", \"check\": \"freeblks\", ${4:+$4, }\"crc_bad\": false, \"message\": \"m\"}"
	rm -f "$T/fixed"
	fake "case \"\$1\" in -n) ;; *) touch '$T/fixed'; exit 0;; esac
if [ -e '$T/fixed' ]; then echo '$head], \"problem_count\": 0, \"exit_status\": 0}'; exit 0; fi
echo '$head$prob], \"problem_count\": 1, \"exit_status\": 1}'; exit 1"
	XK_REPAIR=$T/fake run_fsck "$1" -p "$img"
	if [ "$2" = yes ] && [ ! -e "$T/fixed" ]; then
		fail "preen did not run the repair for $3 with flags {$4}"
	elif [ "$2" = no ] && [ -e "$T/fixed" ]; then
		fail "preen ran the repair for $3 with flags {$4}"
	fi
}
preen_case 1 yes agf_counter "$safe"
preen_case 1 yes a_kind_fsck_never_heard_of "$safe"
preen_case 4 no agf_counter ""
preen_case 4 no agf_counter "$(echo "$safe" | sed 's/"safe_to_preen": true/"safe_to_preen": false/')"
preen_case 4 no agf_counter "$(echo "$safe" | sed 's/"destructive": false/"destructive": true/')"
preen_case 4 no agf_counter "$(echo "$safe" | sed 's/"fixable": true/"fixable": false/')"
preen_case 8 no agf_counter '"safe_to_preen": "yes"'
rm -f "$T/fixed"

# A corruption outside the safe class: the magic of AGF 1.  -n and -p
# leave it (4) and write nothing; the oracle agrees it is corrupt.
bad=$T/bad.img
cp --sparse=always "$img" "$bad"
xfs_db -x -c 'agf 1' -c 'write -d magicnum 0x11223344' "$bad" >/dev/null 2>&1
if oracle_clean "$bad"; then
	fail "xfs_repair -n does not see the corrupted AGF"
fi
sum=$(image_state "$bad")
# A repair needed but the device cannot be opened for writing (an
# immutable file: even root gets EPERM): an operational error, 8, not 4.
if chattr +i "$bad" 2>/dev/null; then
	run_fsck 8 -y "$bad"
	grep -q "cannot open it for writing" "$T/fsck.out" ||
		fail "-y on an unwritable device did not say why: $(cat "$T/fsck.out")"
	chattr -i "$bad"
else
	echo "note: chattr +i is not supported under $T; the unwritable-device case is not run"
fi
run_fsck 4 -n "$bad"
run_fsck 4 "$bad"
run_fsck 4 -p "$bad"
grep -q "UNEXPECTED INCONSISTENCY" "$T/fsck.out" ||
	fail "preen did not say why it stopped: $(cat "$T/fsck.out")"
[ "$(image_state "$bad")" = "$sum" ] && pass "-n and -p left the image as it was" ||
	fail "-n or -p wrote to an image with an unsafe finding"
# -y runs the repair; the re-check decides: 1 only if the oracle agrees.
"$FSCK" -y "$bad" >"$T/fsck.out" 2>&1
rc=$?
if [ $rc = 1 ]; then
	oracle_clean "$bad" && pass "-y corrected (1) and xfs_repair -n agrees" ||
		fail "-y said corrected but xfs_repair -n disagrees: $(cat "$T/xr.out")"
elif [ $rc = 4 ]; then
	"$REPAIR" -n "$bad" >/dev/null 2>&1 &&
		fail "-y said uncorrected (4) but xfskit-repair -n finds it clean" ||
		pass "-y left it uncorrected (4), and the re-check agrees"
else
	fail "fsck.xfskit -y on a corrupted image exited $rc: $(cat "$T/fsck.out")"
fi

# A safe-class finding: the superblock's free block counter.  Preen may
# fix it; whatever it answers must match the oracle's verdict after.
cnt=$T/counter.img
cp --sparse=always "$img" "$cnt"
fd=$(db_get "$cnt" "sb 0" fdblocks)
xfs_db -x -c 'sb 0' -c "write -d fdblocks $((fd - 1000))" "$cnt" >/dev/null 2>&1
run_fsck 4 -n "$cnt"
grep -q "superblock counter" "$T/fsck.out" ||
	fail "-n did not report the counter: $(cat "$T/fsck.out")"
"$FSCK" -p "$cnt" >"$T/fsck.out" 2>&1
rc=$?
grep -q "UNEXPECTED INCONSISTENCY" "$T/fsck.out" &&
	fail "preen refused a safe-class finding: $(cat "$T/fsck.out")"
case $rc in
1)	oracle_clean "$cnt" && pass "-p corrected the counter (1); xfs_repair -n agrees" ||
		fail "-p said corrected but xfs_repair -n disagrees: $(cat "$T/xr.out")" ;;
4)	oracle_clean "$cnt" && fail "-p said 4 but xfs_repair -n finds it clean" ||
		pass "-p could not correct the counter (4: repair mode lacks it); oracle agrees" ;;
*)	fail "fsck.xfskit -p on a counter finding exited $rc: $(cat "$T/fsck.out")" ;;
esac

# Preen on real findings: it fixes exactly the findings the checker's
# report flags safe (before the flags came from the checker, fsck kept
# its own list: superblock, AGF and AGI counters and secondary
# superblocks, the same classes the recipes marked "safe" hit), and
# leaves the image untouched otherwise.  The verdict after is the
# oracle's.
# preen_real SAFE|UNSAFE DB-COMMANDS...
preen_real() {
	local want=$1 img2=$T/preen.img sum got flagged
	shift
	cp --sparse=always "$img" "$img2"
	xfs_db -x "$@" "$img2" >/dev/null 2>&1
	oracle_clean "$img2" && { fail "xfs_repair -n misses: $*"; return; }
	"$REPAIR" -n --json "$img2" >"$T/preen.json" 2>/dev/null
	flagged=$(python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
ok = d["problems"] and all(p["safe_to_preen"] and p["fixable"] and
			   not p["destructive"] for p in d["problems"])
print("SAFE" if ok else "UNSAFE")' "$T/preen.json") ||
		{ fail "$*: no report: $(head -c 500 "$T/preen.json")"; return; }
	[ "$flagged" = "$want" ] ||
		fail "$*: the report flags it $flagged, expected $want: $(cat "$T/preen.json")"
	sum=$(image_state "$img2")
	"$FSCK" -p "$img2" >"$T/fsck.out" 2>&1
	got=$?
	if [ "$flagged" = SAFE ]; then
		[ $got = 1 ] && oracle_clean "$img2" &&
			pass "-p fixed the safe finding of: $*" ||
			fail "-p on a safe finding ($*) exited $got: $(cat "$T/fsck.out") $(cat "$T/xr.out")"
	else
		[ $got = 4 ] && [ "$(image_state "$img2")" = "$sum" ] &&
			pass "-p left the unsafe finding of: $*" ||
			fail "-p on an unsafe finding ($*) exited $got or wrote: $(cat "$T/fsck.out")"
	fi
}
preen_real SAFE -c 'sb 0' -c "write -d fdblocks $((fd - 1000))"
preen_real SAFE -c 'agf 0' -c 'write -d longest 3'
preen_real SAFE -c 'sb 2' -c 'write -d dblocks 1234'
preen_real UNSAFE -c 'agf 1' -c 'write -d freeblks 100'
preen_real UNSAFE -c 'inode 128' -c 'write -d core.nlinkv2 7'

# Mounted filesystems (root only; the helpers skip elsewhere).
if [ "$(id -u)" -eq 0 ]; then
	loop_mount "$img" && {
		run_fsck 8 -n "$img"
		run_fsck 8 -y "$img"
		loop_umount
	}
	mkdir -p "$T/mnt"
	if mount -o loop,ro "$img" "$T/mnt" 2>/dev/null; then
		MNT=$T/mnt LOOP_MOUNTED=1
		run_fsck 0 -n "$img"
		run_fsck 8 -p "$img"
		loop_umount
	else
		fail "read-only loop mount of a clean image failed"
	fi
fi

# A log the kernel left dirty: -n writes nothing and says so, -p
# replays it and finds the result clean; the kernel's own replay of a
# copy gives the same tree.
workload() {
	mkdir -p "$1/d"
	for i in $(seq 1 40); do
		echo "file $i" >"$1/d/f$i"
	done
	ln -s d/f1 "$1/link"
	rm "$1/d/f7"
	sync -f "$1"
	mkdir "$1/after"
	echo late >"$1/after/x"
	xfs_io -c fsync "$1/after/x"
}
dirty=$T/dirty.img
if [ "$(id -u)" -ne 0 ]; then
	echo "making a dirty log needs root; that part is skipped"
elif dirty_image "$dirty" workload; then
	cp --sparse=always "$dirty" "$T/kernel.img"
	sum=$(image_state "$dirty")
	run_fsck 0 -n "$dirty"
	grep -q "log is dirty" "$T/fsck.out" ||
		fail "-n did not mention the dirty log: $(cat "$T/fsck.out")"
	[ "$(image_state "$dirty")" = "$sum" ] || fail "-n wrote to the image"
	run_fsck 0 -p "$dirty"
	grep -q "replayed the log" "$T/fsck.out" ||
		fail "-p did not replay the log: $(cat "$T/fsck.out")"
	if oracle_clean "$dirty"; then
		pass "xfs_repair -n finds the replayed image clean"
		loop_mount "$dirty" && record_tree "$MNT" >"$T/ours.tree" &&
			loop_umount
		kernel_record "$T/kernel.img" "$T/kernel"
		if same_image "$T/ours.tree" "$T/kernel.tree"; then
			pass "tree after -p equals the kernel's replay"
		else
			fail "tree after -p differs from the kernel's replay"
			diff "$T/ours.tree" "$T/kernel.tree" | head -20 >&2
		fi
	else
		fail "xfs_repair -n after fsck -p: $(cat "$T/xr.out")"
	fi
	run_fsck 0 -p "$dirty"
fi
finish
