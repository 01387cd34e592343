#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The release path, from the build under test: make distcheck (the
# tarball builds out of tree, passes make check -- unit tests only, see
# AM_DISTCHECK_CONFIGURE_FLAGS --, installs, uninstalls and cleans),
# then the tarball configured with --program-prefix and
# --program-transform-name: programs and man pages are renamed, and the
# renamed fsck.xfskit runs the renamed xfskit-repair.  Finally every
# source file of the tree must be in the tarball.
#
# Not run by make check: a whole build and test from the tarball takes
# minutes.  Run it by hand:
#   XK_BUILDDIR=/tmp/build XK_SRCDIR=$PWD bash tests/scripts/pkg_dist.sh
. "$(dirname "$0")/lib.sh"
need_xfsprogs
jobs=$(nproc 2>/dev/null || echo 2)

mk() {
	local dir=$1
	shift
	make -s -C "$dir" "$@" >"$T/make.out" 2>&1 ||
		{ fail "make $*: $(tail -30 "$T/make.out")"; return 1; }
}
ver=$(sed -n 's/^PACKAGE_VERSION = //p' "$XK_BUILDDIR/Makefile")
tarball=$XK_BUILDDIR/xfskit-$ver.tar.gz

mk "$XK_BUILDDIR" -j"$jobs" distcheck && pass "make distcheck passes"
[ -f "$tarball" ] || mk "$XK_BUILDDIR" dist || finish

# Every source, test, script and doc file of the tree is in the tarball
# (generated autotools files, build directories and VCS files aside).
tar -tzf "$tarball" | sed "s|^xfskit-$ver/||" | grep -v '/$' | sort >"$T/dist.list"
(cd "$XK_SRCDIR" && find . \( -path ./.git -o -path ./autom4te.cache -o \
	-path ./build -o -path './build-*' \) -prune -o -type f -print |
	sed 's|^\./||' |
	grep -vE '(^|/)Makefile\.in$|^configure~?$|^aclocal\.m4$|^config\.h\.in~?$|^build-aux/|^m4/|^\.gitignore$|(^|/)[^/]*~$' |
	sort) >"$T/src.list"
missing=$(comm -23 "$T/src.list" "$T/dist.list")
[ -z "$missing" ] && pass "every source file is in the tarball" ||
	fail "files missing from the tarball (add them to EXTRA_DIST or _SOURCES): $missing"

# Renaming: --program-prefix and --program-transform-name together.
tar -C "$T" -xzf "$tarball"
mkdir "$T/b"
(cd "$T/b" && "$T/xfskit-$ver/configure" -q --prefix=/usr \
	--program-prefix=xk- --program-transform-name='s/repair/check/' \
	--disable-image-tests) >"$T/conf.out" 2>&1 ||
	{ fail "configure: $(tail -20 "$T/conf.out")"; finish; }
mk "$T/b" -j"$jobs" || finish
mk "$T/b" install DESTDIR="$T/d" || finish
s=$T/d/usr/sbin
for p in xfskit-mkfs xfskit-check xfskit-db xfskit-undo fsck.xfskit; do
	[ -x "$s/xk-$p" ] || fail "xk-$p is not installed: $(ls "$s")"
	[ -f "$T/d/usr/share/man/man8/xk-$p.8" ] || fail "xk-$p.8 is not installed"
done
[ -e "$s/xfskit-repair" ] && fail "an unrenamed xfskit-repair is installed"
img=$T/x.img
mkfs_xfs_image "$img" 300M || fail "mkfs.xfs failed"
unset XK_REPAIR
if LD_LIBRARY_PATH=$T/d/usr/lib "$s/xk-fsck.xfskit" -n -v "$img" \
	>"$T/fsck.out" 2>&1 && grep -q "running $s/xk-xfskit-check " "$T/fsck.out"; then
	pass "renamed programs installed; xk-fsck.xfskit runs xk-xfskit-check"
else
	fail "renamed fsck: $(cat "$T/fsck.out")"
fi
finish
