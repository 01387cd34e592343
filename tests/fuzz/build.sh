#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Build the libFuzzer check target with clang: tests/fuzz/build.sh OUT
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
out=$1
srcs=$(find "$top/libfs" -name '*.c' | sort)
rsrcs=$(ls "$top"/repair/*.c | grep -v 'main\.c$')
# shellcheck disable=SC2086
clang -std=gnu11 -g -O1 -fsanitize=fuzzer,address,undefined \
	-fno-sanitize-recover=undefined -fno-omit-frame-pointer \
	-DPACKAGE_VERSION='"fuzz"' -I"$top/include" -I"$top/libfs" \
	-o "$out" "$top/tests/fuzz/fuzz_check.c" $srcs $rsrcs \
	-lblkid -luuid
