#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Build the libFuzzer check target with clang: tests/fuzz/build.sh OUT
# It compiles what the autotools build links: every libfs source
# (libxfskit) and the repair engine's sources as repair/Makefile.am lists
# them for librepair.la (no tool's main()).  One object per source, as
# many at once as there are CPUs, then one link.
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
out=$1
srcs=$(find "$top/libfs" -name '*.c' | sort)
rsrcs=$(sed -n '/^librepair_la_SOURCES *=/,/[^\\]$/p' "$top/repair/Makefile.am" |
	sed 's/^librepair_la_SOURCES *=//; s/\\$//' | tr -s ' \t' '\n' |
	grep '\.c$' | sed "s|^|$top/repair/|")
[ -n "$rsrcs" ] || { echo "build.sh: no librepair_la_SOURCES in repair/Makefile.am" >&2; exit 1; }
objs=$(mktemp -d "${out}.objs.XXXXXX")
trap 'rm -rf "$objs"' EXIT
export XK_FUZZ_CFLAGS="-std=gnu11 -g -O1 -fsanitize=fuzzer-no-link,address,undefined \
-fno-sanitize-recover=undefined -fno-omit-frame-pointer \
-DPACKAGE_VERSION=\"fuzz\" -I$top/include -I$top/libfs"
export XK_FUZZ_OBJS="$objs" XK_FUZZ_TOP="$top"
# Object names keep the source's path below the tree, so that two
# sources of one name (libfs/x.c, repair/x.c) do not collide.
# shellcheck disable=SC2016
printf '%s\n' "$top/tests/fuzz/fuzz_check.c" $srcs $rsrcs |
	xargs -P "$(nproc)" -n 1 sh -c '
		o="$XK_FUZZ_OBJS/$(printf %s "${1#"$XK_FUZZ_TOP"/}" | tr / _).o"
		# shellcheck disable=SC2086
		exec clang $XK_FUZZ_CFLAGS -c "$1" -o "$o"' sh
clang -fsanitize=fuzzer,address,undefined -o "$out" "$objs"/*.o \
	-lblkid -luuid -lpthread
