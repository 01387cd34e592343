#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# libFuzzer over open + verify + the whole check, for a bounded time
# (XK_FUZZ_SECONDS, default 20; bench/fuzz runs it for an hour), seeded
# from small images made by mkfs.xfs; then every saved regression input
# under tests/fuzz/regressions must run clean.  A crash fails the test and prints the input's path
# and base64 so it can be added to the regressions.
. "$XK_SRCDIR/tests/scripts/lib.sh"
need_xfsprogs
command -v clang >/dev/null || skip "clang is needed for libFuzzer (scripts/deps installs it)"

fz="$T/fuzz_check"
# Skip only where clang cannot make any libFuzzer program at all.
printf 'int LLVMFuzzerTestOneInput(const char *d, unsigned long n)\n{ (void)d; (void)n; return 0; }\n' >"$T/probe.c"
clang -fsanitize=fuzzer "$T/probe.c" -o "$T/probe" >"$T/probe.log" 2>&1 ||
	skip "this clang cannot build libFuzzer programs: $(tail -2 "$T/probe.log")"
if ! "$XK_SRCDIR/tests/build_direct.sh" "$fz" clang \
	"-g -O0 -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer" \
	"-fsanitize=fuzzer,address,undefined" \
	"$XK_SRCDIR/tests/fuzz/fuzz_check.c" >"$T/build.log" 2>&1; then
	fail "fuzz target does not build: $(tail -20 "$T/build.log")"
	finish
fi

# The base geometry every input is laid over, and seeds from variants.
base="$T/base.img"
truncate -s 48m "$base"
mkfs.xfs -q -f --unsupported -d agcount=2 -l size=13m -m rmapbt=1,reflink=1 "$base" 2>/dev/null ||
	{ fail "cannot make the base image"; finish; }
export XK_FUZZ_BASE="$base"
mkdir -p "$T/corpus"
XK_FUZZ_DUMP_SEED=1 "$fz" >"$T/corpus/seed-base" 2>/dev/null
cp "$T/corpus/seed-base" "$T/corpus/seed-fixcrc"
# An odd last byte: the harness fixes the CRCs (see fuzz_check.c).
printf '\001' | dd of="$T/corpus/seed-fixcrc" bs=1 \
	seek=$(($(stat -c %s "$T/corpus/seed-base") - 1)) conv=notrunc 2>/dev/null
for opts in "-m rmapbt=0,reflink=0" "-m finobt=0" "-i size=1024"; do
	v="$T/v.img"
	rm -f "$v"; truncate -s 48m "$v"
	# shellcheck disable=SC2086
	mkfs.xfs -q -f --unsupported -d agcount=2 -l size=13m $opts "$v" 2>/dev/null || continue
	XK_FUZZ_BASE="$v" XK_FUZZ_DUMP_SEED=1 "$fz" >"$T/corpus/seed-${opts//[ =,]/_}" 2>/dev/null
done

secs=${XK_FUZZ_SECONDS:-20}
if "$fz" -max_total_time="$secs" -timeout=300 -rss_limit_mb=3072 \
	-artifact_prefix="$T/" "$T/corpus" >"$T/fuzz.log" 2>&1; then
	pass "fuzzed for ${secs}s: $(grep -o 'Done [0-9]* runs' "$T/fuzz.log")"
else
	crash=$(ls "$T"/crash-* "$T"/timeout-* "$T"/leak-* "$T"/oom-* 2>/dev/null | head -1)
	fail "the fuzzer found a failure:"$'\n'"$(grep -A30 -E 'ERROR|SUMMARY' "$T/fuzz.log" | head -40)"
	[ -n "$crash" ] && echo "input (base64, save it under tests/fuzz/regressions/):" &&
		base64 -w0 "$crash" && echo
fi

for r in "$XK_SRCDIR"/tests/fuzz/regressions/*; do
	[ -f "$r" ] || continue
	case $r in */README) continue ;; esac
	if "$fz" "$r" >"$T/reg.log" 2>&1; then
		pass "regression $(basename "$r")"
	else
		fail "regression $(basename "$r"): $(grep -A10 ERROR "$T/reg.log" | head -15)"
	fi
done
finish
