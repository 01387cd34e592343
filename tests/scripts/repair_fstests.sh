#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# What fstests and scripts read of xfs_repair, from xfskit-repair:
# - the streams: on a damaged image, -n and repair, standard output holds
#   exactly what xfs_repair 6.1 and 7.2 print there ("No modify flag set,
#   skipping phase 5" under -n, nothing otherwise), every finding and
#   change is on standard error (fstests runs repairs with 2>> into its
#   log and diffs standard output), and the exit status is theirs;
# - metadata LSNs ahead of the log (fstests xfs/137: the log formatted
#   back a cycle after use): xfs_repair's "Maximum metadata LSN (C:B) is
#   ahead of log (C:B)." and "[Would] Format log to cycle N.", exit 1
#   under -n, and a repair that formats the log past them and keeps every
#   file (xfs_repair 6.1 and 7.2 then clean, the host kernel mounts it
#   with the same files and contents); xfskit-db's logformat makes that
#   state as xfs_db's does;
# - a short-form directory's entry file type fixed is reported as such.
. "$(dirname "$0")/lib.sh"
need_xfsprogs
have_xfs72 || true

# run TOOL OUT IMG [ARGS...]: TOOL ARGS IMG, stdout in OUT.1, stderr in
# OUT.2, the exit status in OUT.rc.
run() {
	local tool=$1 out=$2 img=$3
	shift 3
	case $tool in
	ours) "$REPAIR" "$@" "$img" >"$out.1" 2>"$out.2" ;;
	61) xfs_repair "$@" "$img" >"$out.1" 2>"$out.2" ;;
	72) xfs72 xfs_repair "$@" "$img" >"$out.1" 2>"$out.2" ;;
	esac
	echo $? >"$out.rc"
}
oracles() { echo 61; [ "${XK_HAVE72:-0}" = 1 ] && echo 72; }
# run_all MODE SRC P: each oracle and ours, -n or repair (MODE), on a
# copy of SRC ($T/P<tool>.img); outputs $T/P<tool>.{1,2,rc}.
run_all() {
	local mode=$1 src=$2 p=$3 v args=()
	[ "$mode" = -n ] && args=(-n)
	for v in $(oracles) ours; do
		cp --sparse=always "$src" "$T/$p$v.img"
		run $v "$T/$p$v" "$T/$p$v.img" "${args[@]}"
	done
}

IMG=$T/clean.img
mkfs_xfs_image "$IMG" 300m || { cat "$T/mkfs.out" >&2; exit 99; }
root=$(db_get "$IMG" "sb 0" rootino)

# 1. The streams, on AG 1's free block count and the root's link count.
cp --sparse=always "$IMG" "$T/dmg.img"
xfs_db -x -c "agf 1" -c "write -d freeblks 7" -c "inode $root" \
	-c "write -d core.nlinkv2 9" "$T/dmg.img" >/dev/null 2>&1
for mode in -n repair; do
	run_all "$mode" "$T/dmg.img" s
	for v in $(oracles); do
		if cmp -s "$T/s$v.1" "$T/sours.1" && cmp -s "$T/s$v.rc" "$T/sours.rc"; then
			pass "damaged, $mode: stdout ('$(tr '\n' '|' <"$T/sours.1")') and exit status ($(cat "$T/sours.rc")) as xfs_repair $v"
		else
			fail "damaged, $mode: stdout '$(head -5 "$T/sours.1")' exit $(cat "$T/sours.rc"); xfs_repair $v: '$(head -5 "$T/s$v.1")' exit $(cat "$T/s$v.rc")"
		fi
	done
	grep -q "link count 9" "$T/sours.2" && grep -q "nlinks from 9 to 2" "$T/sours.2" &&
		pass "damaged, $mode: our finding and xfs_repair's line on stderr" ||
		fail "damaged, $mode: the finding is not on stderr: $(repair_own "$T/sours.2" | head -5)"
done

# 2. Metadata LSNs ahead of the log (xfs/137): the log formatted in cycle
# 3, files made, then the log formatted in cycle 2 under them.
cp --sparse=always "$IMG" "$T/lsn.img"
xfs_db -x -c "logformat -c 3" "$T/lsn.img" >/dev/null 2>&1 || { echo "xfs_db logformat failed" >&2; exit 99; }
loop_mount "$T/lsn.img" || finish
mkdir -p "$MNT/a/b"
for i in $(seq 1 40); do echo "file $i" >"$MNT/a/f$i"; done
dd if=/dev/urandom of="$MNT/a/b/data" bs=64k count=4 status=none
(cd "$MNT" && find . -type f -exec md5sum {} + | sort) >"$T/files.before"
loop_umount || { fail "umount failed"; finish; }
# xfskit-db's logformat (fstests needs it in "help" to run xfs/137) puts
# the log where xfs_db's does: the same line, and xfs_repair 6.1 then
# finds the same LSNs ahead of the same log head.
cp --sparse=always "$T/lsn.img" "$T/lsndb.img"
"$DB" -x -c "logformat -c 2" "$T/lsndb.img" >"$T/lf.ours" 2>&1
xfs_db -x -c "logformat -c 2" "$T/lsn.img" >"$T/lf.61" 2>&1 || { echo "xfs_db logformat failed" >&2; exit 99; }
xfs_repair -n "$T/lsndb.img" 2>&1 | grep '^Maximum metadata LSN\|format log' >"$T/lf.r1"
xfs_repair -n "$T/lsn.img" 2>&1 | grep '^Maximum metadata LSN\|format log' >"$T/lf.r2"
"$DB" -x -c help "$T/lsndb.img" 2>&1 | grep -q '^logformat ' &&
	cmp -s "$T/lf.ours" "$T/lf.61" && [ -s "$T/lf.r1" ] && cmp -s "$T/lf.r1" "$T/lf.r2" &&
	pass "xfskit-db logformat -c 2: '$(cat "$T/lf.ours")' as xfs_db 6.1; xfs_repair 6.1 then says '$(tr '\n' ' ' <"$T/lf.r1")' on both" ||
	fail "xfskit-db logformat -c 2: '$(cat "$T/lf.ours")' (xfs_db 6.1: '$(cat "$T/lf.61")'); xfs_repair 6.1 after ours: '$(cat "$T/lf.r1")', after xfs_db's: '$(cat "$T/lf.r2")'"
# lsn_lines OUT: xfs_repair's two lines, as one.
lsn_lines() {
	grep '^Maximum metadata LSN (\|^Would format log to cycle \|^Format log to cycle ' "$1" | tr '\n' '|'
}
for mode in -n repair; do
	run_all "$mode" "$T/lsn.img" l
	got=$(lsn_lines "$T/lours.2")
	max=$(sed -n 's/^Maximum metadata LSN (\([0-9]*\):[0-9]*) is ahead of log (2:[0-9]*)\.$/\1/p' "$T/lours.2")
	if [ -z "$max" ] || ! grep -qx "\(Would format\|Format\) log to cycle $((max + 3))\." "$T/lours.2"; then
		fail "LSN ahead, $mode: xfs_repair's lines missing or wrong: '$got'"
		continue
	fi
	for v in $(oracles); do
		want=$(lsn_lines "$T/l$v.2")
		# -n: xfs_repair leaves the superblock's own LSN out of its
		# maximum (it is read before the count starts); the log's
		# side and the words are the same.
		if [ "$mode" = -n ]; then
			want=$(echo "$want" | sed 's/LSN ([0-9:]*)/LSN (C:B)/; s/cycle [0-9]*/cycle N/')
			cmpgot=$(echo "$got" | sed 's/LSN ([0-9:]*)/LSN (C:B)/; s/cycle [0-9]*/cycle N/')
		else
			cmpgot=$got
		fi
		[ -n "$want" ] && [ "$want" = "$cmpgot" ] && cmp -s "$T/l$v.rc" "$T/lours.rc" &&
			cmp -s "$T/l$v.1" "$T/lours.1" &&
			pass "LSN ahead, $mode: '$got' exit $(cat "$T/lours.rc"), as xfs_repair $v" ||
			fail "LSN ahead, $mode: '$got' exit $(cat "$T/lours.rc"); xfs_repair $v: '$(lsn_lines "$T/l$v.2")' exit $(cat "$T/l$v.rc")"
	done
	[ "$mode" = -n ] && continue
	# The repair: clean for both oracles and for us, every file kept.
	xfs_repair_clean "$T/lours.img" "$T/xr" &&
		"$REPAIR" -n "$T/lours.img" >"$T/again" 2>&1 &&
		pass "LSN ahead: after the repair, xfs_repair 6.1 and 7.2 and xfskit-repair -n clean" ||
		{ fail "LSN ahead: not clean after the repair: $(cat "$T/xr") $(repair_own "$T/again" | tail -3)"; continue; }
	grep -q "files: 0 removed, 0 moved to /lost+found" "$T/lours.2" ||
		fail "LSN ahead: the repair removed or moved files: $(grep files: "$T/lours.2")"
	mark=$(kmsg_mark)
	loop_mount "$T/lours.img" || continue
	(cd "$MNT" && find . -type f -exec md5sum {} + | sort) >"$T/files.after"
	loop_umount
	errs=$(xfs_kernel_errors "$mark")
	diff "$T/files.before" "$T/files.after" >"$T/d" && [ -z "$errs" ] &&
		pass "LSN ahead: the kernel mounts the repair with the $(wc -l <"$T/files.after") files and contents made before" ||
		fail "LSN ahead: after the mount, files differ or the kernel complained: $(head -5 "$T/d") $errs"
done

# 3. A short-form directory's entry file type: reported as what it is.
printf 'proto\n0 0\nd--755 0 0\nf1 ---644 0 0 /dev/null\n$\n$\n' >"$T/proto"
mkfs_xfs_image "$T/ft.img" 300m -p "$T/proto" || { cat "$T/mkfs.out" >&2; exit 99; }
xfs_db -x -c "inode $root" -c "write -d u3.sfdir3.list[0].filetype 5" \
	"$T/ft.img" >/dev/null 2>&1
run ours "$T/ft" "$T/ft.img"
if grep -q "^Rewrote directory $root (/): the file types of its entries set from their inodes" "$T/ft.2" &&
   ! grep -q 'Pointed' "$T/ft.2"; then
	pass "ftype: '$(grep '^Rewrote directory' "$T/ft.2")'"
else
	fail "ftype: the change is not reported as a file type fix: $(repair_own "$T/ft.2" | head -5)"
fi
xfs_repair_clean "$T/ft.img" "$T/xr" && pass "ftype: xfs_repair -n clean after the repair" ||
	fail "ftype: not clean after the repair: $(cat "$T/xr")"
finish
