#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Golden images (tests/images/NAME/, made by tests/images/make-images.sh),
# as e2fsprogs' tests/f_*: each damaged image is unpacked, and
#   xfskit-repair -n   must print expect.0 and write nothing;
#   xfskit-repair      must print expect.1;
#   xfskit-repair      again must print expect.2 and exit 0 (clean).
# Output is filtered as the generator filtered it (the image's path).
# Needs neither root nor xfsprogs: only xz and our tools.  After a change
# to what repair prints, tests/images/make-images.sh --regen-expect
# rewrites the expected files (read the diff before committing it).
. "$XK_SRCDIR/tests/scripts/lib.sh"
command -v xz >/dev/null 2>&1 || skip "xz is not installed (xz-utils)"
dir="$XK_SRCDIR/tests/images"
n=0

# run IMG EXPECTED LABEL ARGS...: xfskit-repair ARGS IMG against EXPECTED.
run() {
	local img=$1 want=$2 label=$3 rc
	shift 3
	"$REPAIR" "$@" "$img" >"$T/run.out" 2>&1
	rc=$?
	# xfs_repair's phase lines, left out as make-images.sh leaves them
	# (repair_compat_lines.sh checks them).
	{ sed "s|$img|IMAGE|g" "$T/run.out" | repair_own
	  echo "exit status: $rc"; } >"$T/got"
	if [ ! -f "$want" ]; then
		fail "$label: $want is missing"
		return 1
	fi
	if ! diff -u "$want" "$T/got" >"$T/diff"; then
		fail "$label: output differs from $(basename "$want") (- expected, + got):"$'\n'"$(head -40 "$T/diff")"
		return 1
	fi
	return 0
}

for d in "$dir"/*/; do
	leak_check_next
	d=${d%/}
	name=$(basename "$d")
	[ -f "$d/image.xz" ] || continue
	n=$((n + 1))
	img="$T/$name.img"
	if ! xz -dc "$d/image.xz" >"$img" 2>"$T/xz.err"; then
		fail "$name: cannot unpack image.xz: $(cat "$T/xz.err")"
		continue
	fi
	sum=$(cksum <"$img")
	ok=1
	run "$img" "$d/expect.0" "$name: xfskit-repair -n" -n || ok=0
	[ "$(cksum <"$img")" = "$sum" ] ||
		{ fail "$name: xfskit-repair -n changed the image"; ok=0; }
	run "$img" "$d/expect.1" "$name: first xfskit-repair" || ok=0
	run "$img" "$d/expect.2" "$name: second xfskit-repair" || ok=0
	tail -1 "$T/got" | grep -qx 'exit status: 0' ||
		{ fail "$name: the second repair is not clean: $(head -5 "$T/got")"; ok=0; }
	[ "$ok" = 1 ] && pass "$name: $(cat "$d/descr" 2>/dev/null)"
	rm -f "$img"
done
[ "$n" -ge 12 ] || fail "only $n golden images under $dir (12 or more expected)"
finish
