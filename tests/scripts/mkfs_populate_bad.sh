#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# xfskit-mkfs -p with bad input.  Mistakes found before formatting (a
# missing source, a bad -p option) leave the device untouched; mistakes
# found while building (an unreadable entry, a name over 255 bytes in an
# archive, a symlink target over XFS's 1024 bytes, a tree that does not
# fit) give a message naming the path, a non-zero exit, and an image
# whose primary superblock magic is zeroed, so nothing mistakes it for a
# filesystem (blkid finds nothing, the kernel refuses it).
. "$XK_SRCDIR/tests/scripts/lib.sh"
. "$XK_SRCDIR/tests/scripts/mkfs_populate_lib.sh"
need_xfsprogs
[ "$(id -u)" -eq 0 ] || skip "needs root (tmpfs, dropping privileges)"
mkdir -p "$TM"
mount -t tmpfs -o size=512m tmpfs "$TM" 2>"$T/tmpfs.err" ||
	skip "cannot mount a tmpfs: $(cat "$T/tmpfs.err")"

# $1 what, $2 expected message (grep -E), $3 path the message must name,
# then the mkfs arguments; the image is the last one.
refused_after_format() {
	what=$1 msg=$2 path=$3
	shift 3
	img=${*: -1}
	if "$@" >"$T/out" 2>&1; then
		fail "$what: accepted"
		return
	fi
	if ! grep -Eq "$msg" "$T/out" || ! grep -qF "$path" "$T/out"; then
		fail "$what: message does not say \"$msg\" about $path: $(cat "$T/out")"
		return
	fi
	magic=$(od -An -tx1 -N4 "$img" | tr -d ' ')
	if [ "$magic" != 00000000 ]; then
		fail "$what: the image keeps its superblock magic ($magic)"
	elif blkid -p "$img" >/dev/null 2>&1; then
		fail "$what: blkid still sees a filesystem"
	else
		pass "$what: $(grep -E "$msg" "$T/out" | head -1 | cut -c1-140)"
	fi
}

new_img() {
	rm -f "$T/img"
	truncate -s "${1:-512m}" "$T/img"
}

# Refused before formatting: the image is never written.
new_img
if "$MKFS" -f -q -p "$T/nonexistent" "$T/img" >"$T/out" 2>&1; then
	fail "a missing source was accepted"
elif [ "$(stat -c %b "$T/img")" -ne 0 ]; then
	fail "a missing source: the image was written"
else
	grep -q "nonexistent" "$T/out" && pass "missing source refused untouched" ||
		fail "missing source: message does not name it: $(cat "$T/out")"
fi
mkdir "$TM/ok"
if "$MKFS" -f -q -p "$TM/ok,owner=x" "$T/img" >"$T/out" 2>&1; then
	fail "-p with an unknown suboption was accepted"
else
	grep -q "unknown option -p owner" "$T/out" &&
		pass "unknown -p suboption refused" ||
		fail "unknown -p suboption: $(cat "$T/out")"
fi
if "$MKFS" -f -q -p "$TM/ok,uid=-1" "$T/img" >"$T/out" 2>&1; then
	fail "-p uid=-1 was accepted"
else
	pass "-p uid=-1 refused: $(head -1 "$T/out")"
fi

# An unreadable entry: run unprivileged against a directory nobody can
# read.
if command -v setpriv >/dev/null; then
	mkdir -p "$TM/unread/sub/locked"
	echo x >"$TM/unread/sub/locked/f"
	chmod 755 "$TM/unread" "$TM/unread/sub"
	chmod 000 "$TM/unread/sub/locked"
	new_img
	chown 65534 "$T/img"
	chmod 755 "$T"
	refused_after_format "an unreadable directory" "Permission denied" \
		"unread/sub/locked" setpriv --reuid=65534 --regid=65534 \
		--clear-groups "$MKFS" -f -q -p "$TM/unread" "$T/img"
	chmod 700 "$T"
fi

# A symlink target longer than XFS keeps (Linux allows 4095 bytes).
mkdir "$TM/longlink"
ln -s "$(head -c 2000 /dev/zero | tr '\0' x)" "$TM/longlink/too_long"
new_img
refused_after_format "a 2000-byte symlink" "longer than XFS allows" \
	"longlink/too_long" "$MKFS" -f -q -p "$TM/longlink" "$T/img"

# A name over 255 bytes, only possible in an archive.
python3 - "$T/longname.tar" <<'PY'
import io, sys, tarfile
with tarfile.open(sys.argv[1], "w", format=tarfile.PAX_FORMAT) as t:
    i = tarfile.TarInfo("dir/" + "n" * 300)
    i.size = 3
    t.addfile(i, io.BytesIO(b"abc"))
PY
new_img
refused_after_format "a 300-byte name in an archive" "longer than 255 bytes" \
	"nnnnnnnn" "$MKFS" -f -q -p "$T/longname.tar" "$T/img"

# A hard link to a name the archive never gave.
python3 - "$T/badlink.tar" <<'PY'
import sys, tarfile
with tarfile.open(sys.argv[1], "w", format=tarfile.PAX_FORMAT) as t:
    i = tarfile.TarInfo("a/link")
    i.type = tarfile.LNKTYPE
    i.linkname = "a/missing"
    t.addfile(i)
PY
new_img
refused_after_format "a dangling hard link in an archive" \
	"not in the archive|not an earlier" "a/link" \
	"$MKFS" -f -q -p "$T/badlink.tar" "$T/img"

# A tree that does not fit: 200 MB of data into a 100 MB filesystem.
mkdir "$TM/big"
dd if=/dev/urandom of="$TM/big/data" bs=1M count=200 status=none
new_img 100m
refused_after_format "a tree larger than the filesystem" \
	"does not fit" "big/data" \
	"$MKFS" -f -q --unsupported -p "$TM/big" "$T/img"
finish
