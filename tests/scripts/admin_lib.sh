# SPDX-License-Identifier: GPL-2.0-or-later
# Helpers of the xfskit-admin upgrade tests (admin_upgrade.sh,
# admin_rmapbt.sh), sourced after lib.sh: images made and populated by
# the host's mkfs.xfs and kernel, the oracles' verdicts, the kernel's
# per-AG reservation, a workload, refusals that write nothing.
# Sourcing it skips the test where an oracle, root or strace is missing.

need_xfsprogs
need_xfs72
[ "$(id -u)" -eq 0 ] || skip "the kernel populates and checks the images: needs root"
command -v strace >/dev/null 2>&1 || skip "strace is not installed (it proves that refusals write nothing)"

ADMIN="$XK_BUILDDIR/admin/xfskit-admin"
UNDO="$XK_BUILDDIR/repair/xfskit-undo"

mkimg() {
	TEST_DIR=1 TEST_DEV=1 QA_CHECK_FS=1 mkfs_xfs_image "$@" ||
		{ echo "mkfs.xfs $*: $(cat "$T/mkfs.out")" >&2; exit 99; }
}

# populate IMG: files in two directories, every third one deleted again
# (free inodes in used chunks), one 4 MiB file.
populate() {
	loop_mount "$1" || exit 99
	mkdir "$MNT/a" "$MNT/b" || exit 99
	for i in $(seq 1 300); do
		: >"$MNT/a/f$i"
		echo "$i" >"$MNT/b/g$i"
	done
	rm -f "$MNT"/a/f*3 "$MNT"/b/g*5
	head -c 4m /dev/urandom >"$MNT/data"
	loop_umount || exit 99
}

# clean IMG NAME: xfs_repair -n 6.1 and 7.2 find IMG clean.
clean() {
	xfs_repair_clean "$1" "$T/rep.out" ||
		{ fail "$2: $(cat "$T/rep.out")"; return 1; }
}

# repaired72 IMG COPY NAME: COPY is IMG as xfs_repair 7.2 rebuilds it
# (every per-AG btree made anew from what it observes).
repaired72() {
	cp --sparse=always "$1" "$2" || exit 99
	xfs72 xfs_repair "$2" >"$T/r.out" 2>&1 ||
		fail "$3: xfs_repair 7.2: $(tail -3 "$T/r.out")"
}

# fino_recs IMG: every AG's free inode btree records, as xfs_db dumps them.
fino_recs() {
	local a agc
	agc=$(db_get "$1" "sb 0" agcount)
	for a in $(seq 0 $((agc - 1))); do
		echo "AG $a"
		xfs_db -r -c "agi $a" -c "addr free_root" -c btdump "$1" 2>&1 |
			grep -E '^recs\[|^[0-9]+:\['
	done
}

# kernel_resv IMG: KRESV = the blocks the kernel holds back from statfs's
# free count at mount beyond the superblock's free count after unmount: its
# per-AG reservations plus what does not change with them (the reserve
# pool, the set-aside; the free space btrees stay one block here).
kernel_resv() {
	local bfree
	loop_mount "$1" || exit 99
	bfree=$(python3 -c 'import os, sys; print(os.statvfs(sys.argv[1]).f_bfree)' "$MNT")
	loop_umount || exit 99
	KRESV=$(($(db_get "$1" "sb 0" fdblocks) - bfree))
}

# resv_checked IMG NAME BEFORE: the reservation growth xfskit-admin
# printed is what the kernel now holds back more than BEFORE.
resv_checked() {
	local line after before want got
	line=$(grep '^Per-AG btree reservations at mount:' "$T/k.out")
	after=$(echo "$line" | sed -n 's/.*: \([0-9]*\) blocks (\([0-9]*\) before)$/\1/p')
	before=$(echo "$line" | sed -n 's/.*: \([0-9]*\) blocks (\([0-9]*\) before)$/\2/p')
	[ -n "$after" ] && [ -n "$before" ] ||
		{ fail "$2: no reservation line: $(cat "$T/k.out")"; return 1; }
	want=$((after - before))
	kernel_resv "$1"
	got=$((KRESV - $3))
	[ "$got" = "$want" ] &&
		pass "$2: the kernel reserves $got more blocks at mount, as xfskit-admin computed ($before -> $after)" ||
		fail "$2: the kernel reserves $got more blocks at mount, xfskit-admin computed $want ($before -> $after)"
}

# workload IMG NAME [reflink]: mount, make and delete many files (and a
# reflinked copy), unmount; no kernel error, clean after.
workload() {
	local since
	since=$(dmesg | wc -l)
	loop_mount "$1" || return 1
	mkdir "$MNT/w" || fail "$2: mkdir on the mounted result"
	for i in $(seq 1 1000); do : >"$MNT/w/n$i"; done
	rm -f "$MNT"/w/n*[02468] "$MNT"/a/f1*
	if [ "${3:-}" = reflink ]; then
		cp --reflink=always "$MNT/data" "$MNT/data.clone" ||
			fail "$2: cp --reflink=always fails on the upgraded filesystem"
		cmp -s "$MNT/data" "$MNT/data.clone" ||
			fail "$2: the reflinked copy differs"
		echo changed | dd of="$MNT/data.clone" conv=notrunc status=none
	fi
	[ "$(find "$MNT/w" -type f | wc -l)" = 500 ] ||
		fail "$2: the workload's files are not all there"
	loop_umount || { fail "$2: umount failed"; return 1; }
	errs=$(xfs_kernel_errors "$since")
	[ -z "$errs" ] || fail "$2: kernel errors: $errs"
	clean "$1" "$2, after the kernel's workload" &&
		pass "$2: the kernel mounted it, ran the workload${3:+ with a reflinked copy}, clean after"
}

# unchanged NAME RC PATTERN ARGS... IMG: xfskit-admin exits RC saying
# PATTERN and makes no write call.
unchanged() {
	local name=$1 want=$2 pat=$3
	shift 3
	refused_unwritten "$name" "$want" "$pat" "${*: -1}" "$ADMIN" "$@"
}

# fill_ags IMG: the kernel fills every AG of IMG with preallocated files,
# its reserve pool emptied first.
fill_ags() {
	local i=0 sz
	loop_mount "$1" || exit 99
	xfs_io -x -c "resblks 0" "$MNT" >/dev/null || fail "resblks 0 refused"
	for sz in 64m 4m 256k 4k; do
		while xfs_io -f -c "falloc 0 $sz" "$MNT/fill$i" 2>/dev/null; do i=$((i + 1)); done
	done
	loop_umount || exit 99
}

# undo_and_crash ORIG FEATURE N...: on copies of ORIG, -z's undo file
# takes -O FEATURE=1 back byte for byte, and a crash before write N (after
# the NEEDSREPAIR mark, among the rebuilt blocks) leaves the mark, which
# xfs_repair 7.2 completes.
undo_and_crash() {
	local orig=$1 f=$2 n
	shift 2
	cp --sparse=always "$orig" "$T/k.img" || exit 99
	"$ADMIN" -z "$T/u.undo" -O "$f=1" "$T/k.img" >"$T/k.out" 2>&1 ||
		fail "-z $f=1: $(cat "$T/k.out")"
	same_image "$T/k.img" "$orig" && fail "-z $f=1: the run changed nothing"
	"$UNDO" "$T/u.undo" "$T/k.img" >"$T/u.out" 2>&1 || fail "xfskit-undo: $(cat "$T/u.out")"
	same_image "$T/k.img" "$orig" &&
		pass "-z $f=1: xfskit-undo restores the image byte for byte" ||
		fail "-z $f=1: after xfskit-undo the image differs from the original"
	for n in "$@"; do
		cp --sparse=always "$orig" "$T/k.img" || exit 99
		crash_completed "$f=1, crash before write $n" "$n" "$T/k.img" \
			"$ADMIN" -O "$f=1" "$T/k.img"
	done
}
