#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Build a program over libfs and the repair engine without autotools, for
# the tests that need another compiler or other flags than the suite's
# build (the libFuzzer target; a plain xfskit-repair for ulimit -v):
#
#   tests/build_direct.sh OUT CC "CFLAGS" "LDFLAGS" MAIN.c...
#
# It compiles what the autotools build links: every libfs source
# (libxfskit) and the repair engine's sources as repair/Makefile.am lists
# them for librepair.la, plus the MAIN sources given.  One compiler run
# per source (no configure, no libtool: their shells cost more than the
# compiling), as many at once as there are CPUs, then one link.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
[ $# -ge 5 ] || { echo "usage: build_direct.sh OUT CC CFLAGS LDFLAGS MAIN.c..." >&2; exit 2; }
out=$1 cc=$2 cflags=$3 ldflags=$4
shift 4
srcs=$(find "$top/libfs" -name '*.c' | sort)
rsrcs=$(sed -n '/^librepair_la_SOURCES *=/,/[^\\]$/p' "$top/repair/Makefile.am" |
	sed 's/^librepair_la_SOURCES *=//; s/\\$//' | tr -s ' \t' '\n' |
	grep '\.c$' | sed "s|^|$top/repair/|")
[ -n "$rsrcs" ] || { echo "build_direct.sh: no librepair_la_SOURCES in repair/Makefile.am" >&2; exit 1; }
objs=$(mktemp -d "${out}.objs.XXXXXX")
trap 'rm -rf "$objs"' EXIT
export XK_DIRECT_CC="$cc" XK_DIRECT_CFLAGS="-std=gnu11 $cflags \
-DPACKAGE_VERSION=\"direct\" -I$top/include -I$top/libfs"
export XK_DIRECT_OBJS="$objs" XK_DIRECT_TOP="$top"
# Object names keep the source's path below the tree, so that two
# sources of one name (libfs/x.c, repair/x.c) do not collide.
# shellcheck disable=SC2016
printf '%s\n' "$@" $srcs $rsrcs |
	xargs -P "$(nproc)" -n 1 sh -c '
		o="$XK_DIRECT_OBJS/$(printf %s "${1#"$XK_DIRECT_TOP"/}" | tr / _).o"
		# shellcheck disable=SC2086
		exec $XK_DIRECT_CC $XK_DIRECT_CFLAGS -c "$1" -o "$o"' sh
# shellcheck disable=SC2086
$cc $ldflags -o "$out" "$objs"/*.o -lblkid -luuid -lpthread
