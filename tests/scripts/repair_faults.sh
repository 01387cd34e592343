#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Operational errors never make a partial repair: a sweep of injected
# faults (XFSKIT_FAULT, in builds configured with --enable-fault-injection
# as scripts/test's is) over a repair of a damaged image and over the
# replay of a dirty log.
#
# The damaged image needs every part of the engine: the inode scan, a
# fork rebuilt from the rmapbt, a block directory rewritten, a short-form
# directory's entries reconnected under a new /lost+found, the AG btrees
# rebuilt, over several passes.  A run without faults (-o threads=1, so that the
# Nth event is the same one every run; SOURCE_DATE_EPOCH, so that the
# repair is reproducible) is the reference, and counts the events.  Then
# for a spread of N over that count, for each of the Nth allocation,
# device read, device write and phase (and the Nth thread start, with
# threads), the run must either
#  - exit 0 with an image byte-identical to the reference's, or
#  - exit 1 saying it stopped, with the cause the fault gives (out of
#    memory, an I/O error, a thread, a stop on request), and leave the
#    image byte-identical to the damaged one: untouched when it says
#    nothing was written, else once xfskit-undo has applied its -z file.
# Anything else (a finding made of an error, a half repair, another exit
# status) fails.  The spread is sparse enough for the suite's time;
# XK_TEST_LONG=1 doubles it and XK_FAULT_DENSITY=N multiplies it
# (bench-style long runs).  -n under allocation faults must print no finding the
# unconstrained -n does not.
. "$XK_SRCDIR/tests/scripts/lib.sh"
. "$XK_SRCDIR/tests/scripts/populate.sh"
. "$XK_SRCDIR/tests/scripts/log_lib.sh"
. "$XK_SRCDIR/tests/scripts/repair_lib.sh"
need_xfsprogs
[ "$(id -u)" -eq 0 ] || skip "populating images needs root (loop mount)"
grep -q '^#define XK_FAULT_INJECTION 1' "$XK_BUILDDIR/config.h" ||
	skip "built without --enable-fault-injection (scripts/test enables it)"
export SOURCE_DATE_EPOCH=1700000000
# A run stopped on purpose leaves what it allocated; that is not a leak
# worth a failure here (the suite's other tests keep leak detection).
export ASAN_OPTIONS="exitcode=99:detect_leaks=0"

dmg=$T/dmg.img
damaged_image "$dmg" || finish

# ref SRC OUT [ARGS]: the run without faults; its counts in COUNT[kind].
declare -A COUNT
ref() {
	local src=$1 out=$2 line
	shift 2
	cp --sparse=always "$src" "$out"
	rm -f "$T/ref.undo"
	XFSKIT_FAULT=alloc:0 "$REPAIR" "$@" -z "$T/ref.undo" "$out" \
		>"$T/ref.out" 2>"$T/ref.err" ||
		{ fail "the repair without faults failed: $(tail -3 "$T/ref.out" "$T/ref.err")"; return 1; }
	xfs_repair -n "$out" >/dev/null 2>&1 ||
		{ fail "xfs_repair -n finds the reference repair not clean"; return 1; }
	line=$(grep 'XFSKIT_FAULT counted' "$T/ref.err")
	for k in alloc read write thread phase; do
		COUNT[$k]=$(sed -n "s/.* $k:\([0-9]*\).*/\1/p" <<<"$line")
	done
	echo "reference: $line"
}

# cause KIND: what the message must give as the cause.
cause() {
	case $1 in
	alloc) echo "out of memory" ;;
	read|write) echo "an I/O error" ;;
	thread) echo "a thread could not be started" ;;
	phase) echo "stopped on request" ;;
	esac
}

# fault SPEC SRC REF [ARGS]: one repair of SRC under XFSKIT_FAULT=SPEC.
declare -A SEEN
fault() {
	local spec=$1 src=$2 want=$3 rc
	shift 3
	cp --sparse=always "$src" "$T/c.img"
	rm -f "$T/undo"
	XFSKIT_FAULT=$spec "$REPAIR" "$@" -z "$T/undo" "$T/c.img" \
		>"$T/f.out" 2>"$T/f.err"
	rc=$?
	case $rc in
	0)
		same_image "$T/c.img" "$want" ||
			fail "$spec: exit 0, but the image differs from the repair without faults ($(cmp "$T/c.img" "$want" | head -1))"
		SEEN[complete]=$((${SEEN[complete]:-0} + 1))
		;;
	1)
		stop_outcome "$spec" "$src" "$T/c.img" "$T/undo" "$T/f.err" \
			"$(cause "${spec%%:*}")"
		SEEN[$OUTCOME]=$((${SEEN[$OUTCOME]:-0} + 1))
		;;
	*)
		fail "$spec: exit $rc: $(tail -3 "$T/f.out" "$T/f.err")"
		;;
	esac
}

# sweep KIND HOW_MANY SRC REF [ARGS]: N spread over 1..COUNT[KIND].
sweep() {
	local kind=$1 k=$(($2 * DENSITY)) src=$3 want=$4 total n last=0
	shift 4
	total=${COUNT[$kind]}
	for i in $(seq 1 "$k"); do
		n=$(( (total * i + k - 1) / k ))
		[ "$n" -ge 1 ] && [ "$n" -ne "$last" ] || continue
		fault "$kind:$n" "$src" "$want" "$@"
		last=$n
	done
}

report() {
	pass "$1: $(for s in complete untouched undone; do printf '%s %s, ' "${SEEN[$s]:-0}" "$s"; done | sed 's/, $//')"
	SEEN=()
}

DENSITY=${XK_FAULT_DENSITY:-1}
long_tests && DENSITY=$((DENSITY * 2))
ref "$dmg" "$T/ref.img" -o threads=1 || finish
grep -q 'Rebuilt a fork of inode' "$T/ref.err" &&
	grep -q 'Rewrote directory' "$T/ref.err" &&
	grep -q 'Created /lost+found' "$T/ref.err" &&
	grep -q 'Rebuilding the AG btrees' "$T/ref.err" ||
	fail "the reference repair did not take every path it should: $(grep -v '^Pass\|: ' "$T/ref.err" | head -8)"
[ "${COUNT[write]:-0}" -gt 0 ] && [ "${COUNT[phase]:-0}" -gt 0 ] ||
	{ fail "no event counts from the reference run (XFSKIT_FAULT=alloc:0)"; finish; }
FAILS0=$FAILS
sweep alloc 12 "$dmg" "$T/ref.img" -o threads=1
sweep read 5 "$dmg" "$T/ref.img" -o threads=1
sweep write 6 "$dmg" "$T/ref.img" -o threads=1
sweep phase 6 "$dmg" "$T/ref.img" -o threads=1
# Threads: the result does not depend on their number.
for n in 1 3; do
	fault "thread:$n" "$dmg" "$T/ref.img" -o threads=3
done
[ "$FAILS" -eq "$FAILS0" ] && report "damaged image: every faulted run finished equal to the reference or stopped with the image intact or undone"

# -n: no finding that the run without faults does not make.
# (The report is on stderr, as xfs_repair's; the fault sweep's count
# line and the stop's own lines, "xfskit-repair: ...", are set apart.)
"$REPAIR" -n -o threads=1 "$dmg" >"$T/n.ref" 2>&1
XFSKIT_FAULT=alloc:0 "$REPAIR" -n -o threads=1 "$dmg" 2>&1 >/dev/null |
	sed -n 's/.* alloc:\([0-9]*\) .*/\1/p' >"$T/n.count"
total=$(cat "$T/n.count")
FAILS0=$FAILS
k=$((4 * DENSITY))
for i in $(seq 1 "$k"); do
	n=$(( (total * i + k - 1) / k ))
	XFSKIT_FAULT=alloc:$n "$REPAIR" -n -o threads=1 "$dmg" >"$T/n.all" 2>&1
	rc=$?
	grep '^xfskit-repair: ' "$T/n.all" >"$T/n.err"
	grep -v '^xfskit-repair: ' "$T/n.all" >"$T/n.out"
	if [ $rc -eq 1 ] && grep -q ': stopping' "$T/n.err"; then
		grep -q 'out of memory while' "$T/n.err" ||
			fail "-n alloc:$n: stopped without naming the cause: $(cat "$T/n.err")"
		extra=$(grep -vxFf "$T/n.ref" "$T/n.out" | head -3)
		[ -z "$extra" ] || fail "-n alloc:$n: findings the run without faults does not make: $extra"
	elif ! same_image "$T/n.out" "$T/n.ref" || [ $rc -ne 1 ]; then
		fail "-n alloc:$n: exit $rc, output differs from the run without faults: $(diff "$T/n.ref" "$T/n.out" | head -4)"
	fi
done
[ "$FAILS" -eq "$FAILS0" ] && pass "-n under allocation faults: a stop with its cause, or the same findings; never an invented one"

# A dirty log: the replay itself under faults.
wl_files() {
	mkdir "$1/d"
	for i in $(seq 1 200); do echo "$i" >"$1/d/f$i"; done
	xfs_io -f -c "pwrite 0 256k" "$1/big" >/dev/null
	sync -f "$1/d"
	rm -f "$1"/d/f1?
	xfs_io -c fsync "$1/big"
}
if command -v xfs_io >/dev/null 2>&1; then
	dirty_image "$T/log.img" wl_files -m rmapbt=1 || finish
	ref "$T/log.img" "$T/logref.img" -o threads=1 || finish
	grep -q 'Replayed the log' "$T/ref.err" ||
		fail "the dirty log was not replayed: $(head -3 "$T/ref.err")"
	FAILS0=$FAILS
	sweep alloc 6 "$T/log.img" "$T/logref.img" -o threads=1
	sweep read 3 "$T/log.img" "$T/logref.img" -o threads=1
	sweep write 3 "$T/log.img" "$T/logref.img" -o threads=1
	sweep phase 3 "$T/log.img" "$T/logref.img" -o threads=1
	for n in 1 2; do
		fault "thread:$n" "$T/log.img" "$T/logref.img" -o threads=3
	done
	[ "$FAILS" -eq "$FAILS0" ] && report "log replay: every faulted run finished equal to the reference or stopped with the image intact or undone"
fi
finish
