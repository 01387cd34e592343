#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# NEEDSREPAIR, as xfs_repair keeps it (fstests xfs/154, xfs/155): the
# repair's first write marks the primary superblock, its last write,
# after everything else is written, clears it.  A repair killed between
# the two (LIBXFS_DEBUG_WRITE_CRASH) leaves the mark, xfs_repair -n (6.1
# and 7.2) says "would clear needsrepair flag and regenerate metadata",
# the host kernel refuses to mount it (tried only where xfs_repair -n
# finds nothing else), and a second run finishes and clears it.  Our -n
# says the same words, counts one problem, writes nothing; the mark on
# the primary alone is one problem with and without -n (the secondaries
# do not carry it); a mark on secondaries alone is cleared quietly, as
# xfs_repair clears it; a log replay is a write like any other; a clean
# filesystem's repair writes nothing at all; SIGINT mid-repair leaves
# the mark too.
. "$(dirname "$0")/lib.sh"
need_xfsprogs
command -v strace >/dev/null || skip "strace is not installed (write counts)"
# LeakSanitizer cannot run under ptrace.
STRACE_ASAN="exitcode=99:detect_leaks=0"
NR_LINE="would clear needsrepair flag and regenerate metadata"

IMG=$T/a.img
mkfs_xfs_image "$IMG" 300m || { cat "$T/mkfs.out" >&2; exit 99; }
cp --sparse=always "$IMG" "$T/clean.img"

# has_mark IMG: the primary carries NEEDSREPAIR (xfs_db's version line).
has_mark() {
	xfs_db -r -c version "$1" 2>/dev/null | grep -q NEEDSREPAIR
}

# writes TRACE: the device writes strace saw ("offset" per line).
writes() {
	sed -n 's/^[0-9]* *pwrite64(.*, \([0-9]*\)) = [0-9]*$/\1/p' "$1"
}

# xr_findings OUT: what xfs_repair -n said besides its phase lines and
# the image-file notes.
xr_findings() {
	grep -v -e '^Phase [1-7] - ' -e '^        - ' -e '^No modify flag set' \
		-e '^Cannot get host filesystem geometry' \
		-e '^Repair may fail if there is a sector size' \
		-e '^the image and the host filesystem' "$1"
}

# A clean filesystem: the repair writes nothing, the mark included.
state=$(image_state "$T/clean.img" | cut -d' ' -f2-)
ASAN_OPTIONS=$STRACE_ASAN strace -f -qq -o "$T/clean.trace" -e trace=pwrite64 \
	"$REPAIR" "$T/clean.img" >"$T/out" 2>&1
rc=$?
nw=$(writes "$T/clean.trace" | wc -l)
if [ $rc -eq 0 ] && [ "$nw" -eq 0 ] &&
   [ "$(image_state "$T/clean.img" | cut -d' ' -f2-)" = "$state" ]; then
	pass "a clean filesystem's repair makes no write (no mark)"
else
	fail "clean filesystem: exit $rc, $nw writes, image $( [ "$(image_state "$T/clean.img" | cut -d' ' -f2-)" = "$state" ] && echo unchanged || echo changed): $(tail -2 "$T/out")"
fi

# Damage in several places: counters of two AGs, the primary's free
# block count, a secondary superblock.
xfs_db -x -c "agf 1" -c "write -d freeblks 7" -c "agf 2" \
	-c "write -d freeblks 9" -c "sb 0" -c "write fdblocks 1000" \
	-c "sb 3" -c "write -d inoalignmt 4" "$IMG" >/dev/null 2>&1 || exit 99

# The reference: every write of an uninterrupted repair.
cp --sparse=always "$IMG" "$T/ref.img"
ASAN_OPTIONS=$STRACE_ASAN strace -f -qq -o "$T/ref.trace" -e trace=pwrite64 \
	"$REPAIR" "$T/ref.img" >"$T/ref.out" 2>&1 ||
	{ fail "the repair failed: $(tail -3 "$T/ref.out")"; finish; }
writes "$T/ref.trace" >"$T/ref.offs"
nw=$(wc -l <"$T/ref.offs")
echo "the repair makes $nw writes"
if [ "$nw" -ge 4 ] && [ "$(head -1 "$T/ref.offs")" = 0 ] &&
   [ "$(tail -1 "$T/ref.offs")" = 0 ] &&
   head -1 "$T/ref.trace" | grep -q 'pwrite64([0-9]*, "XFSB'; then
	pass "the first and the last of the $nw writes are the primary superblock's"
else
	fail "first/last write not the primary: offsets $(head -1 "$T/ref.offs") ... $(tail -1 "$T/ref.offs") of $nw"
fi
has_mark "$T/ref.img" && fail "the repair left the primary marked NEEDSREPAIR"
xfs_repair_clean "$T/ref.img" "$T/xr.out" &&
	pass "the uninterrupted repair leaves it clean for xfs_repair -n" ||
	fail "after the repair: $(cat "$T/xr.out")"

# Killed after 1 write (the mark alone), half-way, and before the last.
for n in 1 $((nw / 2)) $((nw - 1)); do
	c=$T/crash$n.img
	cp --sparse=always "$IMG" "$c"
	LIBXFS_DEBUG_WRITE_CRASH=ddev=$n "$REPAIR" "$c" >"$T/out" 2>&1
	rc=$?
	[ $rc -eq 137 ] || { fail "ddev=$n: exit $rc, expected 137: $(tail -2 "$T/out")"; continue; }
	if has_mark "$c"; then
		pass "killed after $n of $nw writes: the primary is marked NEEDSREPAIR"
	else
		fail "killed after $n of $nw writes: the primary is not marked NEEDSREPAIR"
	fi
	xfs_repair -n "$c" >"$T/xr61.out" 2>&1
	xrc=$?
	if [ $xrc -eq 1 ] && grep -qx "$NR_LINE" "$T/xr61.out"; then
		pass "ddev=$n: xfs_repair 6.1 -n says '$NR_LINE' (exit 1)"
	else
		fail "ddev=$n: xfs_repair 6.1 -n exit $xrc: $(xr_findings "$T/xr61.out" | head -3)"
	fi
	if have_xfs72; then
		xfs72 xfs_repair -n "$c" >"$T/xr72.out" 2>&1
		xrc=$?
		[ $xrc -eq 1 ] && grep -qx "$NR_LINE" "$T/xr72.out" &&
			pass "ddev=$n: xfs_repair 7.2 -n says the same (exit 1)" ||
			fail "ddev=$n: xfs_repair 7.2 -n exit $xrc: $(xr_findings "$T/xr72.out" | head -3)"
	fi
	# Our -n: the same line on stderr, the finding, nothing written.
	before=$(image_state "$c" | cut -d' ' -f2-)
	"$REPAIR" -n "$c" >"$T/n.out" 2>"$T/n.err"
	nrc=$?
	after=$(image_state "$c" | cut -d' ' -f2-)
	if [ $nrc -eq 1 ] && grep -qx "$NR_LINE" "$T/n.err" &&
	   grep -q '^the filesystem is marked as needing repair: ' "$T/n.err" &&
	   [ "$before" = "$after" ]; then
		pass "ddev=$n: our -n says xfs_repair's line, exit 1, writes nothing"
	else
		fail "ddev=$n: our -n exit $nrc, image $([ "$before" = "$after" ] && echo unchanged || echo CHANGED), said: $(grep -i needsrepair "$T/n.out" "$T/n.err" | head -3)"
	fi
	# Before the last write every repair is on disk: only the mark is
	# left, and the kernel must refuse it.  Never mount anything else.
	if [ "$n" -eq $((nw - 1)) ]; then
		if [ "$(xr_findings "$T/xr61.out")" = "$NR_LINE" ]; then
			pass "ddev=$n: xfs_repair -n finds nothing but the mark: every repair was written before it"
			MNT=$T/mnt
			mkdir -p "$MNT"
			# By time stamp: a full ring buffer keeps its line count.
			since=$(kmsg_mark)
			dev=$(losetup -f --show "$c") || exit 99
			if mount -o ro "$dev" "$MNT" 2>"$T/mount.err"; then
				LOOP_MOUNTED=1
				umount "$MNT" && LOOP_MOUNTED=0
				fail "ddev=$n: the host kernel mounted a filesystem marked NEEDSREPAIR"
			elif kmsg_since "$since" |
			     grep -q "XFS (${dev##*/}): Filesystem needs repair"; then
				pass "ddev=$n: the host kernel refuses to mount it: \"Filesystem needs repair\""
			else
				fail "ddev=$n: the mount failed, but not for NEEDSREPAIR: $(head -1 "$T/mount.err")"
			fi
			losetup -d "$dev"
		else
			fail "ddev=$n: xfs_repair -n finds more than the mark before the last write (mount not tried): $(xr_findings "$T/xr61.out" | head -3)"
		fi
	fi
	# A second run finishes and clears the mark.
	"$REPAIR" "$c" >"$T/out" 2>&1
	rc=$?
	if [ $rc -eq 0 ] && ! has_mark "$c" && xfs_repair_clean "$c" "$T/xr.out"; then
		pass "ddev=$n: a second run finishes it and clears the mark"
	else
		fail "ddev=$n: second run exit $rc, marked: $(has_mark "$c" && echo yes || echo no): $(cat "$T/xr.out" 2>/dev/null; tail -2 "$T/out")"
	fi
done

# SIGINT at the run's second write (the first after the mark): the run
# stops at the end of the phase, saying the filesystem is marked, and
# leaves the mark; a second run clears it.
cp --sparse=always "$IMG" "$T/int.img"
ASAN_OPTIONS=$STRACE_ASAN strace -f -qq -o /dev/null -e trace=pwrite64 \
	-e inject=pwrite64:signal=INT:when=2 \
	"$REPAIR" --no-progress "$T/int.img" >"$T/out" 2>&1
rc=$?
if [ $rc -eq 130 ] && has_mark "$T/int.img" &&
   grep -q "stopping; [0-9]* writes were made before it, each complete, and the filesystem is marked NEEDSREPAIR" "$T/out"; then
	pass "SIGINT mid-repair: exit 130, the mark stays, the stop says so"
else
	fail "SIGINT mid-repair: exit $rc, marked: $(has_mark "$T/int.img" && echo yes || echo no): $(tail -2 "$T/out")"
fi
"$REPAIR" "$T/int.img" >"$T/out" 2>&1 && ! has_mark "$T/int.img" &&
	xfs_repair_clean "$T/int.img" "$T/xr.out" &&
	pass "after SIGINT: a second run finishes and clears the mark" ||
	fail "after SIGINT: the second run: $(cat "$T/xr.out" 2>/dev/null; tail -2 "$T/out")"

# The mark on the primary alone (secondaries without it), nothing else:
# one problem with and without -n, as xfs_repair -n exits 1 for it.
m=$T/mark.img
cp --sparse=always "$T/clean.img" "$m"
inc=$(db_get "$m" "sb 0" features_incompat)
xfs_db -x -c "sb 0" -c "write features_incompat $(printf '%#x' $((inc | 0x10)))" \
	"$m" >/dev/null 2>&1 || exit 99
xfs_repair -n "$m" >"$T/xr61.out" 2>&1
x61=$?
"$REPAIR" -n "$m" >"$T/n.out" 2>"$T/n.err"
nrc=$?
if [ $nrc -eq $x61 ] && [ $nrc -eq 1 ] && grep -qx "1 problem found." "$T/n.err" &&
   [ "$(grep -x "$NR_LINE" "$T/n.err")" = "$(xr_findings "$T/xr61.out")" ]; then
	pass "mark on the primary only: -n counts 1 problem, exit 1, xfs_repair 6.1's words"
else
	fail "mark on the primary only: -n exit $nrc (xfs_repair 6.1: $x61): $(repair_own "$T/n.err" | head -3); xfs_repair 6.1 said: $(xr_findings "$T/xr61.out" | head -3)"
fi
if have_xfs72; then
	xfs72 xfs_repair -n "$m" >/dev/null 2>&1
	x72=$?
	[ $x72 -eq $nrc ] && pass "xfs_repair 7.2 -n exits $x72 too" ||
		fail "xfs_repair 7.2 -n exits $x72, ours $nrc"
fi
for a in 1 2 3; do
	echo "$a $(db_get "$m" "sb $a" features_incompat)"
done >"$T/sec.before"
ASAN_OPTIONS=$STRACE_ASAN strace -f -qq -o "$T/mark.trace" -e trace=pwrite64 \
	"$REPAIR" "$m" >"$T/out" 2>&1
rc=$?
for a in 1 2 3; do
	echo "$a $(db_get "$m" "sb $a" features_incompat)"
done >"$T/sec.after"
if [ $rc -eq 0 ] && grep -q "All 1 problem found were repaired" "$T/out" &&
   grep -q "^Cleared the NEEDSREPAIR flag of the primary superblock" "$T/out" &&
   [ "$(writes "$T/mark.trace")" = 0 ] && ! has_mark "$m" &&
   cmp -s "$T/sec.before" "$T/sec.after"; then
	pass "mark on the primary only: the repair counts 1 problem, clears it in one write, secondaries untouched"
else
	fail "mark on the primary only: exit $rc, writes at $(writes "$T/mark.trace" | tr '\n' ' '), marked: $(has_mark "$m" && echo yes || echo no): $(tail -3 "$T/out")"
fi
if xfs_repair_clean "$m" "$T/xr.out"; then
	loop_mount "$m" && loop_umount &&
		pass "cleared: xfs_repair -n clean, the kernel mounts it"
else
	fail "after clearing the mark: $(cat "$T/xr.out")"
fi

# The mark on secondaries only (copied there by a tool that wrote every
# superblock): xfs_repair 6.1 and 7.2 -n pass it (exit 0), their repair
# clears it quietly.  Ours the same: -n passes it and writes nothing; the
# repair says nothing of it, clears it in every copy (its first write
# marks the primary, its last clears it) and exits 0.
s=$T/secmark.img
cp --sparse=always "$T/clean.img" "$s"
inc=$(db_get "$s" "sb 1" features_incompat)
xfs_db -x -c "sb 1" -c "write features_incompat $(printf '%#x' $((inc | 0x10)))" \
	-c "sb 3" -c "write features_incompat $(printf '%#x' $((inc | 0x10)))" \
	"$s" >/dev/null 2>&1 || exit 99
[ "$(db_get "$s" "sb 3" features_incompat)" = "$(printf '%#x' $((inc | 0x10)))" ] ||
	{ echo "xfs_db did not mark the secondaries" >&2; exit 99; }
for v in 61 72; do
	cp --sparse=always "$s" "$T/x$v.img"
	if [ $v = 61 ]; then
		xfs_repair -n "$T/x$v.img" >/dev/null 2>&1; xn=$?
		xfs_repair "$T/x$v.img" >/dev/null 2>&1; xr=$?
	else
		have_xfs72 || continue
		xfs72 xfs_repair -n "$T/x$v.img" >/dev/null 2>&1; xn=$?
		xfs72 xfs_repair "$T/x$v.img" >/dev/null 2>&1; xr=$?
	fi
	echo "$xn $xr $(db_get "$T/x$v.img" "sb 1" features_incompat) $(db_get "$T/x$v.img" "sb 3" features_incompat)" >"$T/x$v.res"
done
before=$(image_state "$s" | cut -d' ' -f2-)
"$REPAIR" -n "$s" >"$T/n.out" 2>"$T/n.err"
nrc=$?
[ $nrc -eq 0 ] && [ -z "$(repair_own "$T/n.err")" ] &&
	[ "$before" = "$(image_state "$s" | cut -d' ' -f2-)" ] &&
	pass "marked secondaries: -n passes them (exit 0, no finding, nothing written)" ||
	fail "marked secondaries: -n exit $nrc: $(repair_own "$T/n.err" | head -3)"
ASAN_OPTIONS=$STRACE_ASAN strace -f -qq -o "$T/sec.trace" -e trace=pwrite64 \
	"$REPAIR" "$s" >"$T/out" 2>&1
rc=$?
writes "$T/sec.trace" >"$T/sec.offs"
echo "0 $rc $(db_get "$s" "sb 1" features_incompat) $(db_get "$s" "sb 3" features_incompat)" >"$T/ours.res"
for v in 61 72; do
	[ -f "$T/x$v.res" ] || continue
	cmp -s "$T/x$v.res" "$T/ours.res" &&
		pass "marked secondaries: -n exit, repair exit and the copies' features_incompat after it ($(cat "$T/ours.res")) as xfs_repair $v" ||
		fail "marked secondaries: ours '$(cat "$T/ours.res")', xfs_repair $v '$(cat "$T/x$v.res")' (-n exit, exit, sb 1 and sb 3 features_incompat)"
done
if [ $rc -eq 0 ] && [ -z "$(repair_own "$T/out")" ] && ! has_mark "$s" &&
   [ "$(head -1 "$T/sec.offs")" = 0 ] && [ "$(tail -1 "$T/sec.offs")" = 0 ] &&
   [ "$(wc -l <"$T/sec.offs")" -eq 4 ] && xfs_repair_clean "$s" "$T/xr.out"; then
	pass "marked secondaries: cleared quietly, in 4 writes (mark, sb 1, sb 3, clear); xfs_repair -n clean"
else
	fail "marked secondaries: exit $rc, writes at $(tr '\n' ' ' <"$T/sec.offs"), marked: $(has_mark "$s" && echo yes || echo no), said: $(repair_own "$T/out" | head -3) $(cat "$T/xr.out" 2>/dev/null)"
fi

# A log replay is a write: killed after the mark, the log still holds
# its changes and the primary is marked; a second run replays it.
if [ "$(id -u)" -eq 0 ]; then
	cp --sparse=always "$T/clean.img" "$T/log.img"
	loop_mount "$T/log.img" && {
		mkdir "$MNT/d" && for i in 1 2 3 4 5; do echo $i >"$MNT/d/f$i"; done
		xfs_io -x -c 'shutdown -f' "$MNT"
		loop_umount
	}
	"$REPAIR" -n "$T/log.img" >"$T/out" 2>&1
	grep -q '^the log is dirty: ' "$T/out" ||
		{ fail "no dirty log to replay: $(head -2 "$T/out")"; finish; }
	LIBXFS_DEBUG_WRITE_CRASH=ddev=1 "$REPAIR" "$T/log.img" >"$T/out" 2>&1
	rc=$?
	if [ $rc -eq 137 ] && has_mark "$T/log.img"; then
		pass "a repair killed at the log replay's first write leaves the mark"
	else
		fail "killed at the log replay: exit $rc, marked: $(has_mark "$T/log.img" && echo yes || echo no)"
	fi
	"$REPAIR" "$T/log.img" >"$T/out" 2>&1
	rc=$?
	if [ $rc -eq 0 ] && grep -q '^Replayed the log' "$T/out" &&
	   ! has_mark "$T/log.img" && xfs_repair_clean "$T/log.img" "$T/xr.out"; then
		pass "the second run replays the log and clears the mark"
	else
		fail "second run after the replay crash: exit $rc: $(cat "$T/xr.out" 2>/dev/null; tail -3 "$T/out")"
	fi
fi
finish
