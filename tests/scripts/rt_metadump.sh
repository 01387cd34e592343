#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Metadumps of filesystems with an external log or a classic realtime
# volume, against xfs_db 7.2's metadump and xfs_mdrestore 7.2:
#  1. external log: a -o -a -v 2 -l dump of ours and one of xfs_db 7.2
#     restore (xfskit-mdrestore -l) to the same data device and the same
#     log, which is the original log; xfs_mdrestore 7.2 -l restores ours
#     to the same; -i says the external log is dumped; an obfuscated
#     v2 -l dump restores to what xfs_repair -n -l calls clean;
#  2. errors: a dump with an external log restored without -l, -l for a
#     dump without one, and metadump -l with another filesystem's log
#     each exit 1 with the reason named; v1 with -l notes it cannot
#     carry the log;
#  3. classic realtime: -o -a -v 2 -r dumps of ours and of xfs_db 7.2
#     (-R) restore to the same image (neither dumps anything of the
#     realtime device), which xfs_repair -n -r finds clean.
. "$XK_SRCDIR/tests/scripts/lib.sh"
. "$XK_SRCDIR/tests/scripts/rt_lib.sh"
need_xfsprogs
need_xfs72
MD="$XK_BUILDDIR/db/xfskit-metadump"
MR="$XK_BUILDDIR/db/xfskit-mdrestore"

d=$T/d.img l=$T/l.img rt=$T/rt.img
# A tree worth dumping: rt_lib's proto file (rt_mkfs writes it).
rt_mkfs 6.1 "$d" "$rt" || fail "mkfs.xfs with a realtime device: $(cat "$T/rt_mkfs.out")"
rm -f "$d"
truncate -s 80m "$l"
mkfs.xfs -q -f -p "$T/rt_proto" -l logdev="$l",size=64m -d file,name="$d",size=512m ||
	fail "mkfs.xfs -l logdev= failed"

# restore NAME DUMP DATA LOG: ours with -l; fails the test when it fails.
restore() {
	rm -f "$3" "$4"
	"$MR" -l "$4" "$2" "$3" >"$T/mr.out" 2>&1 ||
		fail "$1: xfskit-mdrestore -l exit $?: $(cat "$T/mr.out")"
}

# 1. External log.
"$MD" -o -a -v 2 -l "$l" "$d" "$T/ours.md" >"$T/md.out" 2>&1 ||
	fail "metadump -o -a -v 2 -l exit $?: $(cat "$T/md.out")"
xfs72 xfs_db -i -l "$l" -c "metadump -o -a -v 2 $T/theirs.md" "$d" >"$T/x.out" 2>&1 ||
	fail "xfs_db 7.2 metadump -l: $(cat "$T/x.out")"
restore ours "$T/ours.md" "$T/r1.img" "$T/r1.log"
restore theirs "$T/theirs.md" "$T/r2.img" "$T/r2.log"
cmp -s "$T/r1.img" "$T/r2.img" && pass "extlog: our dump restores the data device xfs_db 7.2's does" ||
	fail "extlog: data devices restored from ours and xfs_db 7.2's dumps differ: $(cmp "$T/r1.img" "$T/r2.img" 2>&1)"
cmp -s "$T/r1.log" "$T/r2.log" && cmp -s -n $((64 << 20)) "$T/r1.log" "$l" &&
	pass "extlog: the restored log is the original, as from xfs_db 7.2's dump" ||
	fail "extlog: restored logs differ: $(cmp "$T/r1.log" "$T/r2.log" 2>&1) / $(cmp -n $((64 << 20)) "$T/r1.log" "$l" 2>&1)"
rm -f "$T/r3.img"
truncate -s 64m "$T/r3.log"
xfs72 xfs_mdrestore -l "$T/r3.log" "$T/ours.md" "$T/r3.img" >"$T/x.out" 2>&1 ||
	fail "xfs_mdrestore 7.2 -l of our dump: $(cat "$T/x.out")"
cmp -s "$T/r1.img" "$T/r3.img" && cmp -s "$T/r1.log" "$T/r3.log" &&
	pass "extlog: xfs_mdrestore 7.2 -l restores our dump as we do" ||
	fail "extlog: xfs_mdrestore 7.2 -l restores our dump otherwise"
xfs72 xfs_mdrestore -i -l "$T/r3.log" "$T/ours.md" >"$T/x.out" 2>&1
grep -q "external log contents are dumped" "$T/x.out" &&
	pass "extlog: xfs_mdrestore 7.2 -i: $(head -1 "$T/x.out")" ||
	fail "extlog: xfs_mdrestore 7.2 -i does not see the external log: $(cat "$T/x.out")"
"$MD" -v 2 -l "$l" "$d" "$T/obf.md" >"$T/md.out" 2>&1 ||
	fail "metadump -v 2 -l exit $?: $(cat "$T/md.out")"
restore obfuscated "$T/obf.md" "$T/r4.img" "$T/r4.log"
xfs_repair -n -l "$T/r4.log" "$T/r4.img" >"$T/x.out" 2>&1 &&
	pass "extlog: an obfuscated v2 dump restores to what xfs_repair -n -l calls clean" ||
	fail "extlog: xfs_repair -n -l on the obfuscated restore: $(tail -5 "$T/x.out")"

# 2. Errors.
"$MR" "$T/ours.md" "$T/r5.img" >"$T/mr.out" 2>&1
rc=$?
[ $rc -eq 1 ] && grep -q "give its target with -l" "$T/mr.out" &&
	pass "a dump with an external log without -l: exit 1, named" ||
	fail "a dump with an external log without -l: exit $rc: $(cat "$T/mr.out")"
"$MD" -o -v 2 "$rt" "$T/none.md" >/dev/null 2>&1	# not a filesystem: fails
rt_mkfs 6.1 "$T/p.img" "$T/p.rt" || fail "mkfs.xfs with a realtime device"
"$MD" -o -v 2 "$T/p.img" "$T/plain.md" >/dev/null 2>&1 || fail "metadump of a plain image failed"
"$MR" -l "$T/r6.log" "$T/plain.md" "$T/r6.img" >"$T/mr.out" 2>&1
rc=$?
[ $rc -eq 1 ] && grep -q "carries no external log" "$T/mr.out" &&
	pass "-l for a dump without an external log: exit 1, named" ||
	fail "-l for a dump without an external log: exit $rc: $(cat "$T/mr.out")"
"$MD" -v 2 -l "$T/r1.log" "$T/p.img" "$T/bad.md" >"$T/md.out" 2>&1
rc=$?
[ $rc -eq 1 ] && grep -q "log is internal" "$T/md.out" &&
	pass "metadump -l on a filesystem with an internal log: exit 1, named" ||
	fail "metadump -l on an internal-log filesystem: exit $rc: $(cat "$T/md.out")"
rm -f "$T/o.img" "$T/o.log"
truncate -s 80m "$T/o.log"
mkfs.xfs -q -l logdev="$T/o.log",size=64m -d file,name="$T/o.img",size=512m
"$MD" -v 2 -l "$T/o.log" "$d" "$T/bad.md" >"$T/md.out" 2>&1
rc=$?
[ $rc -eq 1 ] && grep -q "not this filesystem's log" "$T/md.out" &&
	pass "metadump -l with another filesystem's log: exit 1, named" ||
	fail "metadump -l with another filesystem's log: exit $rc: $(cat "$T/md.out")"
"$MD" -v 1 -l "$l" "$d" "$T/v1.md" >"$T/md.out" 2>&1 ||
	fail "metadump -v 1 -l exit $?"
grep -q "a v1 dump cannot" "$T/md.out" && pass "v1 with -l: noted that it cannot carry the log" ||
	fail "v1 with -l: no note: $(cat "$T/md.out")"

# 3. Classic realtime.
if rt_image 6.1 "$d" "$rt"; then
	"$MD" -o -a -v 2 -r "$rt" "$d" "$T/rt_ours.md" >"$T/md.out" 2>&1 ||
		fail "metadump -o -a -v 2 -r exit $?: $(cat "$T/md.out")"
	xfs72 xfs_db -i -R "$rt" -c "metadump -o -a -v 2 $T/rt_theirs.md" "$d" >"$T/x.out" 2>&1 ||
		fail "xfs_db 7.2 -R metadump: $(cat "$T/x.out")"
	rm -f "$T/r7.img" "$T/r8.img"
	"$MR" "$T/rt_ours.md" "$T/r7.img" && "$MR" "$T/rt_theirs.md" "$T/r8.img" ||
		fail "realtime: restore failed"
	cmp -s "$T/r7.img" "$T/r8.img" && pass "realtime: our dump restores what xfs_db 7.2's does" ||
		fail "realtime: restored images differ: $(cmp "$T/r7.img" "$T/r8.img" 2>&1)"
	rt_clean "$T/r7.img" "$rt" "$T/c.out" &&
		pass "realtime: the restored image is clean for xfs_repair -n -r" ||
		fail "realtime: xfs_repair -n -r on the restored image: $(cat "$T/c.out")"
else
	fail "realtime image: $(cat "$T/rt_why")"
fi
finish
