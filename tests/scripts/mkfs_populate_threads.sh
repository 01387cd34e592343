#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# xfskit-mkfs -p DIR reads the source on worker threads ahead of the
# builder; the image must not depend on them.  The standard test tree
# (every inode kind, xattrs in every format, ACLs, hard links, holes)
# plus 300 directories of small files (many jobs, contents read ahead)
# and a file above the read-ahead size (streamed by the builder) is
# built with SOURCE_DATE_EPOCH and a fixed UUID with 0 threads (the
# builder reads everything itself), 1, 2 and 8 threads, and 8 threads
# with a read-ahead budget of 1 byte (only the directory the builder
# waits for is read, contents are streamed): every image must be
# byte-identical, and xfs_repair -n clean.  Then failures: with two
# unreadable directories, the one reported must be the first in the
# walk's order, whatever thread found which first.
. "$XK_SRCDIR/tests/scripts/lib.sh"
. "$XK_SRCDIR/tests/scripts/mkfs_populate_lib.sh"
need_xfsprogs

pop_make_tree
SRC="$TM/src"
python3 - "$SRC/many" <<'PY' || fail "making the many-directory tree"
import os, sys
root = sys.argv[1]
os.mkdir(root)
data = os.urandom(40000)
for a in range(10):
    for b in range(30):
        d = os.path.join(root, "a%d" % a, "b%02d" % b)
        os.makedirs(d)
        for c in range(8):
            with open(os.path.join(d, "f%d" % c), "wb") as f:
                f.write(data[:(a * 977 + b * 131 + c * 4099) % 40000])
        if b % 7 == 0:
            os.setxattr(d, "user.dir", b"%d" % b)
            os.setxattr(os.path.join(d, "f1"), "user.x", b"v" * b)
        if b % 10 == 3:
            os.link(os.path.join(d, "f2"), os.path.join(d, "again"))
with open(os.path.join(root, "large"), "wb") as f:
    f.write(os.urandom(1 << 20))
PY

U=0b4c9a9e-93b8-4c58-9f2d-3e5d1c1a7f00
# build NAME THREADS [READAHEAD]
build() {
	rm -f "$T/$1"
	truncate -s 1g "$T/$1"
	SOURCE_DATE_EPOCH=1700000000 XK_POPULATE_THREADS=$2 \
		XK_POPULATE_READAHEAD=${3:-} "$MKFS" -f -q -m uuid=$U \
		-p "$SRC" "$T/$1" >"$T/$1.out" 2>&1 ||
		fail "xfskit-mkfs -p with $2 threads failed: $(cat "$T/$1.out")"
}

# Reading a symlink moves its atime (no O_NOATIME for readlink), so
# the first run over a fresh tree sees older atimes than later runs:
# one run first, so every compared run sees the same tree.
build ref 0
build ref 0
pop_repair_clean "$T/ref" "0 threads"
for cfg in "1" "2" "8" "8 1"; do
	set -- $cfg
	build img "$1" "${2:-}"
	what="$1 threads${2:+, read-ahead budget $2}"
	if same_image "$T/ref" "$T/img"; then
		pass "$what: byte-identical to 0 threads"
	else
		fail "$what: differs from 0 threads:" \
			"$(cmp "$T/ref" "$T/img" | head -1)"
	fi
done

if command -v setpriv >/dev/null; then
	mkdir -p "$TM/locked/m" "$TM/locked/z"
	for i in 1 2 3 4; do mkdir "$TM/locked/m/d$i"; done
	chmod 000 "$TM/locked/m/d2" "$TM/locked/z"
	chmod 755 "$TM/locked" "$TM/locked/m"
	chmod 777 "$T"
	for th in 0 8; do
		rm -f "$T/lk"
		truncate -s 512m "$T/lk"
		chown 65534 "$T/lk"
		if XK_POPULATE_THREADS=$th setpriv --reuid=65534 \
			--regid=65534 --clear-groups "$MKFS" -f -q \
			-p "$TM/locked" "$T/lk" >"$T/lk.out" 2>&1; then
			fail "$th threads: unreadable directories were accepted"
		elif ! grep -q "locked/m/d2: opening the directory" \
			"$T/lk.out" || grep -q "locked/z" "$T/lk.out"; then
			fail "$th threads: not the first failure reported:" \
				"$(cat "$T/lk.out")"
		else
			pass "$th threads: first failure in walk order reported"
		fi
	done
	chmod 700 "$T"
fi
finish
