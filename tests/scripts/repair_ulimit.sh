#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# xfskit-repair under `ulimit -v`, from far too small to enough, on a
# damaged image (repair_lib.sh's damaged_image): each run either ends
# with exit 0 and the image the unlimited run leaves, or stops (exit 1)
# saying why, with the image as it was or restored byte for byte by
# xfskit-undo from its -z file.  -n under the same limits never prints a
# finding the unlimited -n does not.  No memory figure is asserted: the
# limits are found by doubling from where the program can start at all.
#
# AddressSanitizer reserves terabytes of address space, so a sanitizer
# build cannot run under ulimit -v: the suite's build is one, so the test
# builds a plain xfskit-repair (no sanitizers, libfs linked in) from the
# source tree in its scratch directory (tests/build_direct.sh) and runs
# that.
. "$XK_SRCDIR/tests/scripts/lib.sh"
. "$XK_SRCDIR/tests/scripts/populate.sh"
. "$XK_SRCDIR/tests/scripts/repair_lib.sh"
need_xfsprogs
[ "$(id -u)" -eq 0 ] || skip "populating images needs root (loop mount)"
export SOURCE_DATE_EPOCH=1700000000

plain=$REPAIR
if grep -q 'fsanitize=address' "$XK_BUILDDIR/Makefile"; then
	"$XK_SRCDIR/tests/build_direct.sh" "$T/xfskit-repair" gcc "-O0 -g0" "" \
		"$XK_SRCDIR/repair/main.c" >"$T/plain.out" 2>&1 ||
		{ fail "building a plain xfskit-repair failed: $(tail -5 "$T/plain.out")"; finish; }
	plain=$T/xfskit-repair
fi

dmg=$T/dmg.img
damaged_image "$dmg" || finish
cp --sparse=always "$dmg" "$T/ref.img"
"$plain" -z "$T/ref.undo" "$T/ref.img" >"$T/ref.out" 2>&1 ||
	{ fail "the unlimited repair failed: $(tail -3 "$T/ref.out")"; finish; }
# (The report is on stderr, as xfs_repair's; the stop's own lines,
# "xfskit-repair: ...", are set apart from the findings compared.)
"$plain" -n "$dmg" >"$T/n.ref" 2>&1

# run KIB: one repair and one -n under ulimit -v KIB; sets DONE when the
# repair went to the end.
declare -A SEEN
run() {
	local kib=$1 rc
	cp --sparse=always "$dmg" "$T/c.img"
	rm -f "$T/undo"
	(ulimit -v "$kib" && exec "$plain" -z "$T/undo" "$T/c.img") \
		>"$T/c.out" 2>"$T/c.err"
	rc=$?
	DONE=0
	case $rc in
	0)
		same_image "$T/c.img" "$T/ref.img" ||
			fail "ulimit -v $kib: exit 0, but the image differs from the unlimited repair's"
		DONE=1
		SEEN[complete]=$((${SEEN[complete]:-0} + 1))
		;;
	1)
		stop_outcome "ulimit -v $kib" "$dmg" "$T/c.img" "$T/undo" \
			"$T/c.err" "out of memory|a thread could not be started"
		SEEN[$OUTCOME]=$((${SEEN[$OUTCOME]:-0} + 1))
		;;
	*)
		fail "ulimit -v $kib: exit $rc: $(tail -3 "$T/c.out" "$T/c.err")"
		;;
	esac
	(ulimit -v "$kib" && exec "$plain" -n "$dmg") >"$T/n.all" 2>&1
	rc=$?
	grep '^xfskit-repair: ' "$T/n.all" >"$T/n.err"
	grep -v '^xfskit-repair: ' "$T/n.all" >"$T/n.out"
	if [ $rc -eq 1 ] && grep -q ': stopping' "$T/n.err"; then
		grep -Eq '(out of memory|a thread could not be started) while' "$T/n.err" ||
			fail "-n, ulimit -v $kib: stopped without naming the cause: $(cat "$T/n.err")"
		extra=$(grep -vxFf "$T/n.ref" "$T/n.out" | head -3)
		[ -z "$extra" ] ||
			fail "-n, ulimit -v $kib: findings the unlimited -n does not make: $extra"
	elif [ $rc -ne 1 ] || ! same_image "$T/n.out" "$T/n.ref"; then
		fail "-n, ulimit -v $kib: exit $rc, output differs from the unlimited -n: $(diff "$T/n.ref" "$T/n.out" | head -4)"
	fi
}

# The smallest power of two (KiB) under which the program starts at all.
lo=1024
until (ulimit -v "$lo" && exec "$plain" -V) >/dev/null 2>&1; do
	lo=$((lo * 2))
	[ "$lo" -le $((1 << 24)) ] || { fail "xfskit-repair -V does not start under 16 GiB"; finish; }
done
# Doubling until a repair goes to the end.
kib=$lo
DONE=0
while [ "$DONE" -eq 0 ]; do
	run "$kib"
	[ "$DONE" -eq 1 ] && break
	prev=$kib
	kib=$((kib * 2))
	[ "$kib" -le $((1 << 24)) ] ||
		{ fail "no limit up to 16 GiB let the repair finish: $(grep -m1 stopping "$T/c.err")"; finish; }
done
# And between the last limit that stopped it and the first that did not.
if [ -n "${prev:-}" ]; then
	for i in 1 2 3; do
		run $((prev + (kib - prev) * i / 4))
	done
fi
pass "ulimit -v from $lo KiB: $(for s in complete untouched undone; do printf '%s %s, ' "${SEEN[$s]:-0}" "$s"; done | sed 's/, $//'); -n never invented a finding"
finish
