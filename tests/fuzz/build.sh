#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Build the libFuzzer check target with clang: tests/fuzz/build.sh OUT
# It compiles what the autotools build links: every libfs source
# (libxfskit) and the repair engine's sources as repair/Makefile.am lists
# them for librepair.la (no tool's main()).
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
out=$1
srcs=$(find "$top/libfs" -name '*.c' | sort)
rsrcs=$(sed -n '/^librepair_la_SOURCES *=/,/[^\\]$/p' "$top/repair/Makefile.am" |
	sed 's/^librepair_la_SOURCES *=//; s/\\$//' | tr -s ' \t' '\n' |
	grep '\.c$' | sed "s|^|$top/repair/|")
[ -n "$rsrcs" ] || { echo "build.sh: no librepair_la_SOURCES in repair/Makefile.am" >&2; exit 1; }
# shellcheck disable=SC2086
clang -std=gnu11 -g -O1 -fsanitize=fuzzer,address,undefined \
	-fno-sanitize-recover=undefined -fno-omit-frame-pointer \
	-DPACKAGE_VERSION='"fuzz"' -I"$top/include" -I"$top/libfs" \
	-o "$out" "$top/tests/fuzz/fuzz_check.c" $srcs $rsrcs \
	-lblkid -luuid -lpthread
