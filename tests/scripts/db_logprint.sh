#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# xfskit-db logprint against xfs_logprint -t on a log the kernel left
# dirty: the same state and the same number of transactions; on a clean
# log both say clean; a damaged record makes the command fail, naming it.
. "$XK_SRCDIR/tests/scripts/lib.sh"
. "$XK_SRCDIR/tests/scripts/log_lib.sh"
need_xfsprogs
need_log_tools

# Many small forced checkpoints: many records, so damage in the first
# one is not mistaken for a torn write at the head.
work() {
	mkdir -p "$1/d"
	for i in $(seq 1 30); do
		touch "$1/d/f$i"
		xfs_io -c fsync "$1/d"
	done
}
dirty_image "$T/img" work || finish
"$DB" -r -c logprint "$T/img" >"$T/ours" 2>&1 || fail "logprint failed: $(tail -3 "$T/ours")"
xfs_logprint -t "$T/img" >"$T/theirs" 2>/dev/null
ours=$(grep -c '^TRANS' "$T/ours")
theirs=$(grep -c '^TRANS' "$T/theirs")
[ "$ours" -gt 0 ] && [ "$ours" = "$theirs" ] &&
	pass "dirty log: $ours transactions, as xfs_logprint -t" ||
	fail "we print $ours transactions, xfs_logprint -t $theirs"
grep -q 'state: <DIRTY>' "$T/ours" && grep -q 'state: <DIRTY>' "$T/theirs" ||
	fail "state differs: ours '$(grep state "$T/ours")', theirs '$(grep state "$T/theirs")'"
# Items per transaction agree too.
diff <(sed -n 's/^TRANS: .*#items:\([0-9]*\).*/\1/p' "$T/ours") \
     <(sed -n 's/^TRANS: .*#items:\([0-9]*\).*/\1/p' "$T/theirs") >/dev/null ||
	fail "item counts per transaction differ"

mkfs_xfs_image "$T/clean" 300m || exit 99
"$DB" -r -c logprint "$T/clean" | grep -q 'state: <CLEAN>' && pass "clean log: clean" ||
	fail "clean log not reported clean"

# Damage: a byte flipped inside the first record's data.
tail=$(sed -n 's/^log tail: \([0-9]*\).*/\1/p' "$T/ours")
logstart=$(db_get "$T/img" "sb 0" logstart)
bs=$(db_get "$T/img" "sb 0" blocksize)
agblocks=$(db_get "$T/img" "sb 0" agblocks)
agblklog=$(db_get "$T/img" "sb 0" agblklog)
agno=$((logstart >> agblklog)); agbno=$((logstart & ((1 << agblklog) - 1)))
off=$(( (agno * agblocks + agbno) * bs + (tail + 1) * 512 + 100 ))
printf '\377' | dd of="$T/img" bs=1 seek=$off conv=notrunc 2>/dev/null
if "$DB" -r -c logprint "$T/img" >"$T/bad" 2>&1; then
	fail "logprint accepted a damaged record"
else
	grep -qi "crc\|checksum" "$T/bad" && pass "damage reported: $(grep -i 'crc\|checksum' "$T/bad" | head -1 | cut -c1-120)" ||
		fail "damage message unclear: $(cat "$T/bad" | tail -3)"
fi
finish
