# SPDX-License-Identifier: GPL-2.0-or-later
# Sourced by the mkfs_populate*.sh tests after lib.sh: a tmpfs to build
# the source tree on (the host's ext4 keeps only ~4 KiB of xattrs per
# file), unmounted by the exit trap, and the tree-record helper.

TREC="python3 $XK_SRCDIR/tests/scripts/treerec.py"
TM="$T/tmpfs"

pop_cleanup() {
	if [ "$LOOP_MOUNTED" = 1 ] && [ -n "$MNT" ]; then
		umount "$MNT" 2>/dev/null || umount -l "$MNT" 2>/dev/null
		LOOP_MOUNTED=0
	fi
	if mountpoint -q "$TM" 2>/dev/null; then
		umount "$TM" 2>/dev/null || umount -l "$TM" 2>/dev/null
	fi
	cleanup
}
trap pop_cleanup EXIT

# Mount the tmpfs and build the test tree in $TM/src ($1: --big or "").
pop_make_tree() {
	[ "$(id -u)" -eq 0 ] || skip "the test tree needs root (devices, owners)"
	command -v python3 >/dev/null || skip "python3 is not installed"
	mkdir -p "$TM"
	mount -t tmpfs -o size=1g,mode=0755 tmpfs "$TM" 2>"$T/tmpfs.err" ||
		skip "cannot mount a tmpfs: $(cat "$T/tmpfs.err")"
	mkdir "$TM/src"
	$TREC make-tree "$TM/src" "$@" || { fail "making the tree"; finish; }
}

# xfs_repair -n must exit 0 on image $1.
pop_repair_clean() {
	if xfs_repair -n "$1" >"$T/repair.out" 2>&1; then
		pass "xfs_repair -n: clean ($2)"
	else
		fail "xfs_repair -n found problems ($2):"
		grep -v '^\s*- \|^Phase\|host filesystem geometry\|sector size mismatch' \
			"$T/repair.out" | head -20 >&2
	fi
}

# Compare two records; $3 names the comparison.
pop_same_record() {
	if diff -u "$1" "$2" >"$T/rec.diff"; then
		pass "$3: identical tree records ($(wc -l <"$1") paths)"
	else
		fail "$3: tree records differ:"
		head -30 "$T/rec.diff" | cut -c1-400 >&2
	fi
}
