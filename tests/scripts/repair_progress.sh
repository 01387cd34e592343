#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Progress meters on a terminal (script(1) gives a pty): phases 2, 3, 4
# and 6 each draw a live line whose count never goes back (in each pass)
# and ends at its total; no line is ever printed into a live line (every line that ends
# shows no meter), though findings come during metered phases; and with
# --progress-fd the metered phases' counts rise in phase order.
. "$(dirname "$0")/lib.sh"
need_xfsprogs
command -v script >/dev/null 2>&1 || skip "script(1) is not installed (util-linux)"

IMG=$T/a.img
mkfs_xfs_image "$IMG" 1g -d agcount=8 || { cat "$T/mkfs.out" >&2; exit 99; }
# Findings in phase 2 (AG 1's AGF) and phase 6 (the root's link count).
xfs_db -x -c "agf 1" -c "write -d freeblks 7" -c "inode 128" \
	-c "write -d core.nlinkv2 9" "$IMG" >/dev/null 2>&1

for mode in -n repair; do
	args=""
	[ "$mode" = -n ] && args=-n
	cp --sparse=always "$IMG" "$T/w.img"
	script -qec "$REPAIR $args $T/w.img" /dev/null >"$T/tty" 2>&1
	python3 - "$T/tty" "$mode" <<'EOF' >"$T/res"
import re, sys
data = open(sys.argv[1], 'rb').read().decode('utf-8', 'replace')
meter = re.compile(r'(Phase [0-9] - [^:\r\n]*): ([0-9]+)% \(([0-9]+)/([0-9]+)\)')
bad = []
last = {}
for m in meter.finditer(data):
    name, pct, done, total = m.group(1), int(m.group(2)), int(m.group(3)), int(m.group(4))
    p = last.get(name)
    # A count from 0 is the meter of the next pass (repair checks again).
    if p and done and (done < p[1] or pct < p[0]):
        bad.append('%s went back: %s' % (name, m.group(0)))
    if done > total:
        bad.append('%s past its total: %s' % (name, m.group(0)))
    last[name] = (pct, done, total)
for name in ('Phase 2 - AG headers and btrees', 'Phase 3 - inode chunks',
             'Phase 4 - space cross-checks', 'Phase 6 - directory tree'):
    if name not in last:
        bad.append('no meter for ' + name)
    elif name != 'Phase 6 - directory tree' and last[name][0] != 100:
        bad.append('%s ends at %d%%' % (name, last[name][0]))
# What a line shows when it ends: the text after its last erase.
for line in data.split('\n'):
    shown = line.split('\x1b[K')[-1].replace('\r', '')
    if meter.search(shown):
        bad.append('a line ends with a meter in it: %r' % shown)
print('\n'.join(bad) if bad else 'ok %d meters' % len(last))
EOF
	if grep -q '^ok' "$T/res" && grep -q 'link count is wrong' "$T/tty" &&
	   grep -q '^AGF' <(tr -d '\r' <"$T/tty" | sed 's/.*\x1b\[K//'); then
		pass "$mode on a terminal: $(cat "$T/res"), each rising to its end; findings on lines of their own"
	else
		fail "$mode on a terminal: $(head -5 "$T/res"); output: $(cat -v "$T/tty" | head -20)"
	fi
done

# --progress-fd: the metered phases' counts rise, phases in order.
"$REPAIR" -n --progress-fd=5 "$IMG" >/dev/null 2>&1 5>"$T/prog"
if awk '
	NF != 4 || $2 > $3 || $1 < ph { bad = 1 }
	$1 == ph && $3 == t && $2 < d { bad = 1 }
	{ ph = $1; d = $2; t = $3; seen[$1] = 1 }
	END { exit bad || !seen[2] || !seen[4] || !seen[6] }' "$T/prog"; then
	pass "--progress-fd: $(wc -l <"$T/prog") lines, phases in order, counts rising"
else
	fail "--progress-fd: $(head -c 400 "$T/prog")"
fi
finish
