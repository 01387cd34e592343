#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The command line of every tool: --help and -h print
# the help on standard output and exit 0; a bad option and a missing
# operand exit with the code of the tool each replaces, measured on
# xfsprogs 6.1 (and 7.2 when its tree is there), fsck(8)'s 16 for
# fsck.xfskit; that code is the one the man page's EXIT STATUS gives for
# a usage error; and the options --help lists are exactly those of the
# man page's OPTIONS section (both parsed; each missing one is named).
. "$(dirname "$0")/lib.sh"
need_xfsprogs
have_xfs72 >/dev/null 2>&1 || true

SRC=${XK_SRCDIR:?}
B=$XK_BUILDDIR

# tool, its path, the xfsprogs program it replaces ("-" for none), and
# the usage code expected when there is none to measure.
TOOLS="
xfskit-db        db/xfskit-db          xfs_db        -
xfskit-metadump  db/xfskit-metadump    xfs_metadump  -
xfskit-mdrestore db/xfskit-mdrestore   xfs_mdrestore -
xfskit-mkfs      mkfs/xfskit-mkfs      mkfs.xfs      -
fsck.xfskit      fsck/fsck.xfskit      -             16
xfskit-undo      repair/xfskit-undo    -             2
xfskit-admin     admin/xfskit-admin    xfs_admin     -
xfskit-resize    resize/xfskit-resize  xfs_growfs    -
xfskit-repair    repair/xfskit-repair  xfs_repair    -
"

# The usage code of an xfsprogs program: a bad option and no operand
# must agree, or the oracle is not understood (hard error).
oracle_code() {
	local a b
	"$@" -Z >/dev/null 2>&1 </dev/null
	a=$?
	"$@" >/dev/null 2>&1 </dev/null
	b=$?
	if [ "$a" -ne "$b" ]; then
		echo "oracle $*: -Z exits $a but no operand exits $b" >&2
		exit 99
	fi
	echo "$a"
}

# Options named in --help (lines whose first word is an option) and in
# the man page's OPTIONS section (the tags after .TP), one per line.
help_options() {
	python3 -c '
import re, sys
for line in sys.stdin:
    m = re.match(r"\s+(-\S.*)", line.rstrip("\n"))
    if not m:
        continue
    lead = re.split(r"\s{2,}", m.group(1))[0]
    for o in re.findall(r"(?:^|[\s,|])(--?[A-Za-z][A-Za-z0-9-]*)", lead):
        print(o)
' | sort -u
}
man_options() {
	python3 -c '
import re, sys
sec, tag = None, False
for line in open(sys.argv[1]):
    line = line.rstrip("\n")
    if line.startswith(".SH"):
        sec = line[3:].strip().strip("\"")
        continue
    if sec != "OPTIONS":
        continue
    if line.startswith(".TP"):
        tag = True
        continue
    if tag:
        tag = False
        for o in re.findall(r"(?<![A-Za-z0-9])\\-(?:\\-)?[A-Za-z](?:[A-Za-z0-9]|\\-)*", line):
            print(o.replace("\\-", "-"))
' "$1" | sort -u
}
# The code the man page's EXIT STATUS gives for a usage error: the .TP
# entry whose text says "usage".
man_usage_code() {
	python3 -c '
import re, sys
sec, code, found = None, None, set()
lines = open(sys.argv[1]).read().split("\n")
for i, line in enumerate(lines):
    if line.startswith(".SH"):
        sec = line[3:].strip().strip("\"")
        continue
    if sec != "EXIT STATUS":
        continue
    if line.startswith(".TP") and i + 1 < len(lines):
        m = re.match(r"\.B\s+(\d+)$", lines[i + 1])
        code = m.group(1) if m else None
        continue
    if re.match(r"\.(PP|P|LP|SS|RS|RE)\b", line):
        code = None
        continue
    if code and re.search(r"\busage\b", line, re.I):
        found.add(code)
print(" ".join(sorted(found)))
' "$1"
}

while read -r name path oracle code; do
	[ -n "$name" ] || continue
	bin=$B/$path
	man=$SRC/man/$name.8
	[ -x "$bin" ] || { echo "no $bin" >&2; exit 99; }
	[ -f "$man" ] || { fail "$name: no man page $man"; continue; }

	# The expected usage code: the oracle's where there is one.
	if [ "$oracle" != - ]; then
		code=$(oracle_code "$oracle") || exit 99
		echo "$oracle 6.1: usage error exits $code"
		if [ "${XK_HAVE72:-0}" = 1 ]; then
			if [ "$oracle" = xfs_metadump ] || [ "$oracle" = xfs_admin ]; then
				# A shell script in 7.2's tree: run it with sh.
				c72=$(oracle_code sh "$(xfs72 dir)/usr/sbin/$oracle")
			else
				c72=$(oracle_code xfs72 "$oracle")
			fi
			echo "$oracle 7.2: usage error exits $c72"
			[ "$c72" = "$code" ] ||
				fail "$oracle: 6.1 exits $code, 7.2 exits $c72 for a usage error"
		fi
	fi

	for h in --help -h; do
		"$bin" $h >"$T/help" 2>"$T/help.err" </dev/null
		rc=$?
		if [ $rc -ne 0 ]; then
			fail "$name $h: exit $rc, expected 0: $(head -2 "$T/help.err")"
		elif ! grep -q "^Usage: $name " "$T/help"; then
			fail "$name $h: no 'Usage: $name ...' line on stdout"
		else
			pass "$name $h -> 0"
		fi
	done

	"$bin" -Z >"$T/out" 2>"$T/err" </dev/null
	rc=$?
	if [ $rc -ne "$code" ]; then
		fail "$name -Z: exit $rc, expected $code (the usage error code of ${oracle/-/fsck(8)})"
	elif ! grep -qi "usage" "$T/err"; then
		fail "$name -Z: no usage message on stderr: $(head -2 "$T/err")"
	else
		pass "$name -Z -> $rc"
	fi
	"$bin" >"$T/out" 2>"$T/err" </dev/null
	rc=$?
	[ $rc -eq "$code" ] && pass "$name (no operand) -> $rc" ||
		fail "$name with no operand: exit $rc, expected $code"

	doc=$(man_usage_code "$man")
	[ "$doc" = "$code" ] && pass "$name(8) EXIT STATUS: usage error $doc" ||
		fail "$name(8) EXIT STATUS gives '${doc:-nothing}' for a usage error, the tool exits $code"

	"$bin" --help 2>/dev/null | help_options >"$T/h.opts"
	man_options "$man" >"$T/m.opts"
	[ -s "$T/h.opts" ] || fail "$name --help lists no option"
	[ -s "$T/m.opts" ] || fail "$name(8) OPTIONS lists no option"
	while read -r o; do
		fail "$name: $o is in --help but not in the man page's OPTIONS"
	done < <(comm -23 "$T/h.opts" "$T/m.opts")
	while read -r o; do
		fail "$name: $o is in the man page's OPTIONS but not in --help"
	done < <(comm -13 "$T/h.opts" "$T/m.opts")
	comm -3 "$T/h.opts" "$T/m.opts" | grep -q . ||
		pass "$name: --help and the man page list the same $(wc -l <"$T/h.opts") options"
done <<<"$TOOLS"

finish
