#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# The repair engine's layers (repair/plan.h): checkers only record plans,
# appliers only read them, and neither calls the other.  Reads which
# global symbols each librepair object defines and which it uses (nm),
# and fails, naming the symbol and both files, for every use that
# crosses between the two groups in either direction.
#
# The groups, file by file (a librepair source in neither group, or a
# group member missing from librepair, fails the test, so that a new
# file has to be placed here):
#  - checkers read the filesystem and the scan's state, report findings
#    and record plans: the phases, the per-structure checks they call,
#    check.c (the phases in order), confirm.c (keeps an inode scan across
#    an AG rebuild and runs phase 3 from it: it applies no plan, and only
#    asks whether a directory rewrite is planned) and phase_rmap_forks.c
#    (plans the forks the rmapbt can restore);
#  - appliers read the plan and write: fix.c, dirfix.c, attrfix.c,
#    lostfound.c, orphan_home.c, pptrfix.c, rebuild.c, rebuild_fork.c,
#    quotafix.c;
#  - shared, used by both and using neither: plan.c (the recorders),
#    problem.c and action.c (reporting findings and changes), guard.c,
#    memcap.c, readahead.c, find_sb.c, lookup.c (lookups in the scan's
#    lists), salvage.c (inode core rules both apply), quota_state.c (the
#    quota check's tables the quota fix reads), phase_log.c (log replay,
#    a step of its own before any check, with no plan), interrupt.c
#    (the signal flag), progress.c (the phases' meters), report_xfs.c
#    (xfs_repair's phase lines), summary.c (the run's summary line),
#    reasm_state.c (the device scan and the
#    directories and block maps planned from it), reasm_index.c (its
#    lookups in the pass's claim lists), acl.c (the POSIX ACL rules the
#    xattr check and the xattr rewrite both apply), rtgroup.c (the
#    realtime groups' metadata inodes and the bitmaps the mappings give)
#    and rtbtree.c (reading a realtime group's rmap or refcount btree and
#    comparing it with the mappings).
. "$(dirname "$0")/lib.sh"

checkers="attr check chunkfind confirm da dir fork inode_policy metadir
	phase_ag phase_counters phase_inodes phase_links phase_quota phase_rmap_forks
	phase_sb pptr reasm reasm_fork rt_check rtbtree_check rtgroup_check space"
appliers="attrfix dirfix fix lostfound metadirfix orphan_home pptrfix quotafix reasm_build rebuild rebuild_fork rt_fix rtbtree_fix rtgroup_fix"
shared="acl action find_sb guard interrupt lookup memcap phase_log plan problem
	progress quota_state readahead reasm_index reasm_state report_xfs rtbtree rtgroup salvage
	summary"

command -v nm >/dev/null 2>&1 || skip "nm (binutils) is not installed"
srcdir="${XK_SRCDIR:?run through make check}/repair"
objdir="$XK_BUILDDIR/repair"

# The sources librepair is made of, from its list in repair/Makefile.am.
sources=$(sed -n '/^librepair_la_SOURCES *=/,/[^\\]$/p' \
	"$srcdir/Makefile.am" | tr -d '\\' | tr ' \t' '\n\n' |
	sed -n 's/\.c$//p')
[ -n "$sources" ] || { echo "no librepair_la_SOURCES in repair/Makefile.am" >&2; exit 99; }

group_of() {
	for g in checkers appliers shared; do
		eval "list=\$$g"
		for f in $list; do
			[ "$f" = "$1" ] && { echo "$g"; return; }
		done
	done
	echo none
}

for f in $sources; do
	[ "$(group_of "$f")" = none ] &&
		fail "repair/$f.c is in librepair but in no group of this test: place it"
done
for f in $checkers $appliers $shared; do
	echo "$sources" | grep -qx "$f" ||
		fail "repair/$f.c is in a group of this test but not in librepair"
done

# symbol file, for every global symbol an object defines; then each
# object's undefined symbols, joined against them.
: >"$T/defs"
: >"$T/uses"
for f in $sources; do
	o="$objdir/librepair_la-$f.o"
	[ -f "$o" ] || o="$objdir/.libs/librepair_la-$f.o"
	[ -f "$o" ] || { echo "no object for repair/$f.c in $objdir (build first)" >&2; exit 99; }
	nm -g --defined-only "$o" | awk -v f="$f" 'NF == 3 { print $3, f }' >>"$T/defs" ||
		exit 99
	nm -u "$o" | awk -v f="$f" '{ print $NF, f }' >>"$T/uses" || exit 99
done
sort "$T/defs" >"$T/defs.s"
sort "$T/uses" >"$T/uses.s"
join "$T/uses.s" "$T/defs.s" >"$T/edges"
[ -s "$T/edges" ] || { echo "no symbol is used across librepair's objects: nm gave nothing usable" >&2; exit 99; }

before=$FAILS
n=0
while read -r sym user definer; do
	n=$((n + 1))
	gu=$(group_of "$user")
	gd=$(group_of "$definer")
	if { [ "$gu" = checkers ] && [ "$gd" = appliers ]; } ||
	   { [ "$gu" = appliers ] && [ "$gd" = checkers ]; }; then
		fail "$sym: defined in repair/$definer.c (${gd%s}), used by repair/$user.c (${gu%s})"
	fi
	if [ "$definer" = plan ] && [ "$gu" = checkers ]; then
		case "$sym" in
		plan_*|dir_being_rebuilt) ;;
		*) fail "$sym: repair/$user.c (checker) uses plan.c's $sym, which is not a recorder" ;;
		esac
	fi
done <"$T/edges"
[ "$FAILS" = "$before" ] &&
	pass "$n uses of symbols across librepair's objects, none between checkers and appliers"
finish
