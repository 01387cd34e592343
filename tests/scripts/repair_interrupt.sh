#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Interrupts: SIGINT/SIGTERM stop a repair at the end of the phase under
# way, with the exit status 128 + signal, lines never cut, and the
# device left so that a second run finishes the repair and the -z undo
# file restores it; a second signal quits at once, still restorable.
# The signals are delivered at a fixed point of the run, not after a
# delay: strace injects them on the Nth device write (or read, for -n).
# The damaged image is repair_lib.sh's (every part of the engine, over
# several passes); a run without signal counts its writes.
. "$XK_SRCDIR/tests/scripts/lib.sh"
. "$XK_SRCDIR/tests/scripts/populate.sh"
. "$XK_SRCDIR/tests/scripts/repair_lib.sh"
need_xfsprogs
[ "$(id -u)" -eq 0 ] || skip "populating images needs root (loop mount)"
command -v strace >/dev/null || skip "strace is not installed"
UNDO="$XK_BUILDDIR/repair/xfskit-undo"
# LeakSanitizer cannot run under ptrace; the other tests keep it.
export ASAN_OPTIONS="exitcode=99:detect_leaks=0"
export SOURCE_DATE_EPOCH=1700000000

dmg=$T/dmg.img
damaged_image "$dmg" || finish

# The reference: every device write of an uninterrupted repair.
cp --sparse=always "$dmg" "$T/ref.img"
strace -f -qq -o "$T/ref.trace" -e trace=pwrite64 \
	"$REPAIR" --no-progress -o threads=1 "$T/ref.img" >"$T/ref.out" 2>&1 ||
	{ fail "the repair without interrupt failed: $(tail -3 "$T/ref.out")"; finish; }
nw=$(grep -c 'pwrite64(' "$T/ref.trace")
[ "$nw" -gt 4 ] || { fail "the repair made only $nw writes"; finish; }
echo "the repair makes $nw writes (device and undo file)"

# lines_whole FILE: every line of FILE ends before the next message
# starts (no message glued to another one's tail).
lines_whole() {
	! grep -qE '.xfskit-repair: ' "$1" && [ -z "$(tail -c 1 "$1")" ]
}

# interrupt NAME SIGNAL WHEN [UNDO-OPTS]: repair a copy of the damaged
# image, SIGNAL injected on the writes WHEN (strace's when=); check the
# stop.
interrupt() {
	local name=$1 sig=$2 when=$3 uopts=${4:-} rc want
	cp --sparse=always "$dmg" "$T/i.img"
	rm -f "$T/i.undo"
	strace -f -qq -o /dev/null -e trace=pwrite64 \
		-e inject=pwrite64:signal="$sig":when="$when" \
		"$REPAIR" --no-progress -o threads=1 -z "$T/i.undo" \
		"$T/i.img" >"$T/i.out" 2>&1; rc=$?
	want=$((128 + $(kill -l "$sig")))
	[ $rc -eq $want ] ||
		{ fail "$name: exit $rc, expected $want: $(tail -3 "$T/i.out")"; return; }
	lines_whole "$T/i.out" ||
		fail "$name: a line was cut: $(grep -n 'xfskit-repair' "$T/i.out" | head -3)"
	grep -q "interrupted" "$T/i.out" ||
		fail "$name: no word of the interrupt: $(tail -3 "$T/i.out")"
	# A second run finishes the repair.
	cp --sparse=always "$T/i.img" "$T/again.img"
	"$REPAIR" --no-progress "$T/again.img" >"$T/again.out" 2>&1 ||
		fail "$name: the run after the interrupt: exit $?: $(tail -3 "$T/again.out")"
	xfs_repair -n "$T/again.img" >"$T/xr.out" 2>&1 ||
		fail "$name: xfs_repair -n after the second run: $(grep -v '^Phase\|^  *-' "$T/xr.out" | head -3)"
	# The undo file restores the damaged image.
	if "$UNDO" $uopts "$T/i.undo" "$T/i.img" >"$T/u.out" 2>&1 &&
	   same_image "$T/i.img" "$dmg"; then
		pass "$name: exit $want, a second run finishes, the undo file restores"
	else
		fail "$name: the undo file does not restore the image: $(cat "$T/u.out")"
	fi
}

interrupt "SIGINT on the first write" INT 1
interrupt "SIGINT mid-repair" INT $((nw / 2))
interrupt "SIGTERM near the end" TERM $((nw - 2))
# One signal: the phase under way ends with all its blocks written, so
# the stop says what was written and how to undo it.
grep -q "interrupted while .*: stopping; [0-9]* writes were made" "$T/i.out" ||
	fail "the stop does not say what was written: $(tail -3 "$T/i.out")"
# Two signals: the second quits at once, before the run can record the
# state it leaves, so xfskit-undo wants -f (it says so, and the note
# says so).
interrupt "SIGINT twice" INT "$((nw / 3))..$((nw / 3 + 1))" -f
grep -q "interrupted again: quitting now.*'xfskit-undo -f'" "$T/i.out" ||
	fail "SIGINT twice: no word of quitting: $(tail -3 "$T/i.out")"

# -n: stops at once, exit 130, nothing written.
cp --sparse=always "$dmg" "$T/n.img"
before=$(image_state "$T/n.img")
strace -f -qq -o /dev/null -e trace=pread64 \
	-e inject=pread64:signal=INT:when=50 \
	"$REPAIR" -n --no-progress "$T/n.img" >"$T/n.out" 2>&1; rc=$?
if [ $rc -eq 130 ] && [ "$(image_state "$T/n.img")" = "$before" ] &&
   grep -q "interrupted while .*: stopping before any change was written" "$T/n.out" &&
   lines_whole "$T/n.out"; then
	pass "-n interrupted: exit 130, nothing written, says so"
else
	fail "-n interrupted: exit $rc: $(tail -3 "$T/n.out")"
fi
finish
