#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Rebuild the hand-made inputs of tests/fuzz/regressions: each carries
# the damage that found a bug so far (commits named below), as a fuzz
# input of tests/fuzz/fuzz_check.c, so that the fuzz test replays it on
# every run.  Those bugs were found by xfs_db blocktrash over whole
# images, which the check fuzzer cannot replay byte for byte; the inputs
# put the same damage where the fuzzer looks (AG 0's root inode chunk).
#
#   tests/fuzz/make-regressions.sh FUZZER BASE.img
#
# FUZZER is a target built by tests/build_direct.sh; BASE.img the base the
# fuzz test makes (48 MiB, 2 AGs, 13 MiB log, rmapbt and reflink, by
# mkfs.xfs: root inode 128 at AG block 16, 512-byte inodes).
set -eu
fz=$1
base=$2
out="$(cd "$(dirname "$0")" && pwd)/regressions"
seed=$(mktemp)
trap 'rm -f "$seed"' EXIT
XK_FUZZ_BASE="$base" XK_FUZZ_DUMP_SEED=1 "$fz" >"$seed" 2>/dev/null
size=$(stat -c %s "$seed")
[ "$size" -eq $((2 * 128 * 1024)) ] || { echo "unexpected seed size $size" >&2; exit 1; }

# Byte offset of inode INO (of AG 0's first chunk) in the input.
ino_off() { echo $((128 * 1024 / 2 + ($1 - 128) * 512)); }

# mk NAME EDITS...: the seed with "OFFSET:HEXBYTES" edits and an odd
# last byte (the harness then recomputes every CRC, so the damage
# reaches the structural rules instead of stopping at a checksum).
mk() {
	local name=$1 e off hex
	shift
	cp "$seed" "$out/$name"
	for e in "$@"; do
		off=${e%%:*} hex=${e#*:}
		printf "$(echo "$hex" | sed 's/../\\x&/g')" |
			dd of="$out/$name" bs=1 seek="$off" conv=notrunc status=none
	done
	printf '\001' | dd of="$out/$name" bs=1 seek=$((size - 1)) conv=notrunc status=none
}

root=$(ino_off 128)
# 34a4af5 (blocktrash seed 600): the realtime flag on a free inode
# without a realtime device (di_flags, byte 90).
mk inode-rtflag-free "$(($(ino_off 140) + 90)):0001"
# 4bca98e (blocktrash seed 809): the bigtime flag cleared (di_flags2,
# byte 120), leaving a legacy mtime whose nanoseconds (byte 44) pass 10^9.
mk inode-nsec-legacy "$((root + 120)):0000000000000000" "$((root + 44)):7fffffff"
# 335b343 (blocktrash, 16 of 41 seeds): di_next_unlinked outside the
# AG's inode range (byte 96), an unknown di_flags bit, and a
# directory-only flag (NOSYMLINKS) on a regular file (the realtime
# bitmap inode, 129).
mk inode-next-unlinked "$(($(ino_off 129) + 96)):00fffff0"
mk inode-unknown-flag "$((root + 90)):8000"
mk inode-dirflag-on-file "$(($(ino_off 129) + 90)):0400"
# 34a4af5 (blocktrash seed 511): a directory entry whose name length
# runs past the end of its block; here a short-form root directory
# (data fork at byte 176: count, i8count, parent) with one entry of
# name length 255 in a fork of 336 bytes.
mk sfdir-namelen-past-fork "$((root + 176)):0100" "$((root + 182)):ff0060"
ls -l "$out"
