#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# bash completion (scripts/xfskit-completion.bash): options come from the
# tools' own --help, so every tool completes the options its help lists
# (and the options given here, which each tool has, must be offered);
# option values that are files complete as files, values that are not
# offer nothing, operands complete as files.
. "$XK_SRCDIR/tests/scripts/lib.sh"
. "$XK_SRCDIR/scripts/xfskit-completion.bash"
B=$XK_BUILDDIR
PATH=$B/repair:$B/db:$B/mkfs:$B/fsck:$B/admin:$B/resize:$PATH

comp() {
	COMP_WORDS=("$@")
	COMP_CWORD=$(($# - 1))
	_xfskit 2>/dev/null
	printf '%s\n' "${COMPREPLY[@]}" | sed '/^$/d' | sort
}
# has TOOL WORD: completing "-" offers WORD.
has() {
	comp "$1" - | grep -qx -- "$2" || fail "$1: '-' does not offer $2: $(comp "$1" - | tr '\n' ' ')"
}
for t in xfskit-repair:-n xfskit-repair:-L xfskit-repair:--json \
	 xfskit-repair:--progress-fd= xfskit-db:-x xfskit-db:-c \
	 xfskit-mkfs:-N xfskit-mkfs:-d fsck.xfskit:-y fsck.xfskit:-C \
	 xfskit-undo:--help xfskit-metadump:--help xfskit-mdrestore:--help \
	 xfskit-admin:-L xfskit-admin:-O xfskit-resize:-D; do
	has "${t%%:*}" "${t#*:}"
done
pass "each tool offers its options"

[ "$(comp xfskit-repair --no)" = --no-progress ] ||
	fail "--no: $(comp xfskit-repair --no | tr '\n' ' ')"
mkdir "$T/d" && touch "$T/d/image.img" "$T/d/undo.file"
[ "$(comp xfskit-repair -z "$T/d/un")" = "$T/d/undo.file" ] ||
	fail "-z FILE: $(comp xfskit-repair -z "$T/d/un")"
[ "$(comp xfskit-repair -n "$T/d/im")" = "$T/d/image.img" ] ||
	fail "operand: $(comp xfskit-repair -n "$T/d/im")"
[ -z "$(comp xfskit-repair -t "")" ] || fail "-t INTERVAL offers files"
[ -z "$(comp xfskit-db -c "")" ] || fail "xfskit-db -c COMMAND offers files"
[ -z "$(comp xfskit-mkfs -d "")" ] || fail "xfskit-mkfs -d SUBOPTS offers files"
[ -z "$(comp xfskit-admin -L "")" ] || fail "xfskit-admin -L LABEL offers files"
pass "files where files go, nothing where a value goes"
finish
