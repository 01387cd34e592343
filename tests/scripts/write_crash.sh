#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# xfsprogs' crash hook, which fstests uses (xfs/154):
# LIBXFS_DEBUG_WRITE_CRASH=ddev=N kills the tool (SIGKILL, exit 137)
# instead of its (N+1)th write to the data device, so exactly N writes
# reach it; a malformed value refuses to write at all; ddev=0 disarms
# it.  Then a repair killed in the middle: a second run must finish it
# (xfs_repair -n clean afterwards).
. "$(dirname "$0")/lib.sh"
need_xfsprogs

IMG=$T/a.img
mkfs_xfs_image "$IMG" 300m || { cat "$T/mkfs.out" >&2; exit 99; }

# Two edits in two blocks: with ddev=1 only the first is made.
cp --sparse=always "$IMG" "$T/w.img"
LIBXFS_DEBUG_WRITE_CRASH=ddev=1 "$DB" -x -c "sb 0" -c 'write -d fname "aaa"' \
	-c "agf 1" -c "write -d seqno 5" "$T/w.img" >"$T/out" 2>&1
rc=$?
[ $rc -eq 137 ] && pass "ddev=1: killed at the second write (137)" ||
	fail "ddev=1: exit $rc, expected 137 (SIGKILL): $(tail -2 "$T/out")"
fname=$(db_get "$T/w.img" "sb 0" fname)
seqno=$(db_get "$T/w.img" "agf 1" seqno)
[ "${fname:0:5}" = '"aaa\' ] && [ "$seqno" = 1 ] &&
	pass "exactly the first write reached the image" ||
	fail "after ddev=1: fname $fname (want \"aaa...), seqno $seqno (want 1)"

# ddev=0 and logdev/rtdev alone: nothing armed.
cp --sparse=always "$IMG" "$T/w.img"
LIBXFS_DEBUG_WRITE_CRASH=ddev=0,logdev=1,rtdev=1 "$DB" -x -c "agf 1" \
	-c "write -d seqno 5" "$T/w.img" >"$T/out" 2>&1 ||
	fail "ddev=0,logdev=1,rtdev=1: exit $?: $(tail -2 "$T/out")"
[ "$(db_get "$T/w.img" "agf 1" seqno)" = 5 ] && pass "ddev=0 disarms the hook" ||
	fail "ddev=0: the write was not made"

# Malformed: refused before any write, saying why.
for bad in "ddev" "ddev=x" "foo=1"; do
	sum=$(cksum <"$T/w.img")
	LIBXFS_DEBUG_WRITE_CRASH=$bad "$DB" -x -c "agf 1" -c "write -d seqno 6" \
		"$T/w.img" >"$T/out" 2>&1
	rc=$?
	if [ $rc -eq 2 ] && grep -q "LIBXFS_DEBUG_WRITE_CRASH" "$T/out" &&
	   [ "$(cksum <"$T/w.img")" = "$sum" ]; then
		pass "'$bad' refused with a message, nothing written"
	else
		fail "'$bad': exit $rc, image changed: $([ "$(cksum <"$T/w.img")" = "$sum" ] && echo no || echo yes): $(head -2 "$T/out")"
	fi
done
LIBXFS_DEBUG_WRITE_CRASH=ddev "$MKFS" -q -f "$T/m.img" -d size=300m >"$T/out" 2>&1
[ $? -eq 1 ] && grep -q "requires a parameter" "$T/out" &&
	pass "xfskit-mkfs refuses a malformed hook" ||
	fail "xfskit-mkfs with a malformed hook: $(head -2 "$T/out")"

# A repair killed after a few writes, then run again: it must finish.
cp --sparse=always "$IMG" "$T/r.img"
xfs_db -x -c "agf 1" -c "write -d freeblks 7" -c "sb 0" \
	-c "write fdblocks 1000" "$T/r.img" >/dev/null 2>&1
LIBXFS_DEBUG_WRITE_CRASH=ddev=2 "$REPAIR" "$T/r.img" >"$T/out" 2>&1
rc=$?
[ $rc -eq 137 ] && pass "repair killed after 2 writes (137)" ||
	fail "repair with ddev=2: exit $rc, expected 137: $(tail -2 "$T/out")"
"$REPAIR" "$T/r.img" >"$T/out" 2>&1
rc=$?
[ $rc -le 1 ] || fail "the second repair exited $rc: $(tail -3 "$T/out")"
xfs_repair_clean "$T/r.img" "$T/xr.out" &&
	pass "a second repair finishes what the killed one began" ||
	fail "after the second repair: $(cat "$T/xr.out")"
finish
