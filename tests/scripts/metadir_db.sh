#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# xfskit-db on filesystems with the metadata directory tree (mkfs.xfs
# 7.2 -m metadir=1), against xfs_db 7.2: it opens them (exit 0), and
# "print" of the primary and a secondary superblock (metadirino, rgcount,
# rgextents, rgblklog, pad after meta_uuid) and of the metadata root, a
# metadata subdirectory and the user root (core.metatype in place of
# core.onlink on metadata inodes, v3.metadata) is the same text.
#
# Documented differences, left out here (they are not metadir's, and
# hold on every 7.2-made filesystem): xfs_db 7.2 prints core.nextents
# after core.projid_hi (compared here as a value), and decodes parent
# pointer xattrs (the a.* lines).
. "$XK_SRCDIR/tests/scripts/lib.sh"
need_xfs72

IMG="$T/m.img"
truncate -s 320m "$IMG"
xfs72 mkfs.xfs -q -f -m metadir=1 -m uuid=11111111-2222-3333-4444-555555555555 \
	"$IMG" >"$T/mkfs.out" 2>&1 ||
	skip "mkfs.xfs 7.2 cannot make -m metadir=1: $(head -2 "$T/mkfs.out")"

# same WHAT CMD...: the print of both tools, less the lines above.
same() {
	local what=$1 args=() c
	shift
	for c in "$@"; do args+=(-c "$c"); done
	xfs72 xfs_db -r "${args[@]}" "$IMG" >"$T/theirs" 2>&1
	"$DB" -r "${args[@]}" "$IMG" >"$T/ours" 2>"$T/ours.err" ||
		{ fail "$what: xfskit-db exits $?: $(head -2 "$T/ours.err")"; return; }
	for f in theirs ours; do
		grep -v '^core\.nextents = \|^a\.' "$T/$f" >"$T/$f.cmp"
		grep '^core\.nextents = ' "$T/$f" >"$T/$f.next"
	done
	if ! cmp -s "$T/theirs.cmp" "$T/ours.cmp" ||
	   ! cmp -s "$T/theirs.next" "$T/ours.next"; then
		fail "$what: print differs from xfs_db 7.2's: $(diff "$T/theirs.cmp" "$T/ours.cmp" | head -6)"
		return
	fi
	pass "$what: $(wc -l <"$T/ours.cmp") lines as xfs_db 7.2 prints them"
}

mdir=$(xfs72 xfs_db -r -c "sb 0" -c "print metadirino" "$IMG" | sed 's/.* = //')
root=$(xfs72 xfs_db -r -c "sb 0" -c "print rootino" "$IMG" | sed 's/.* = //')
sub=$(xfs72 xfs_db -r -c "inode $mdir" -c "print u3.sfdir3.list[0].inumber.i4" "$IMG" | sed 's/.* = //')
case "$mdir$sub$root" in
*[!0-9]*|"") fail "no metadata tree (metadirino '$mdir', first entry '$sub')"; finish ;;
esac
grep -q '^core.metatype = 1 (dir)$' <(xfs72 xfs_db -r -c "inode $mdir" -c print "$IMG") ||
	{ fail "xfs_db 7.2 does not show the metadata root as a metadata directory"; finish; }

same "superblock 0" "sb 0" print
same "superblock 1" "sb 1" print
same "superblock fields" "sb 0" "print metadirino rgcount rgextents rgblklog pad"
same "metadata root inode $mdir" "inode $mdir" print
same "metadata directory inode $sub" "inode $sub" print
same "user root inode $root" "inode $root" print
same "metadata fields" "inode $mdir" "print core.metatype v3.metadata v3.flags2"
finish
