#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# make install into a DESTDIR, from the build under test: the tools, their
# man pages, libfs as a shared library with its headers and pkg-config
# file.  A tiny program is compiled and linked against the installed
# library with `pkg-config --cflags --libs` and reads an image as xfs_db
# does; the installed fsck.xfskit finds the installed xfskit-repair; a
# program transform renames every installed program and man page; make
# uninstall leaves no file behind.
. "$(dirname "$0")/lib.sh"
need_xfsprogs
command -v pkg-config >/dev/null 2>&1 || skip "pkg-config is not installed"
command -v cc >/dev/null 2>&1 || skip "no C compiler"

mk() {
	make -s -C "$XK_BUILDDIR" "$@" >"$T/make.out" 2>&1 ||
		{ fail "make $*: $(tail -20 "$T/make.out")"; return 1; }
}
mvar() {
	sed -n "s/^$1 = //p" "$XK_BUILDDIR/Makefile" | head -1
}
prefix=$(mvar prefix)
D=$T/dest
mk install DESTDIR="$D" || finish
sbin=$D$prefix/sbin
lib=$D$(mvar libdir | sed "s|\${exec_prefix}|$prefix|; s|\${prefix}|$prefix|")
man8=$D$prefix/share/man/man8

for p in xfskit-mkfs xfskit-repair xfskit-db xfskit-undo fsck.xfskit xfskit-admin xfskit-resize; do
	[ -x "$sbin/$p" ] || fail "$p is not installed in $sbin"
	[ -f "$man8/$p.8" ] || fail "the man page of $p is not installed"
done
ls "$lib"/libxfskit.so.0* >/dev/null 2>&1 || fail "libxfskit.so.0 is not installed in $lib"
[ -L "$lib/libxfskit.so" ] || fail "the libxfskit.so link is not installed"
for h in "$XK_SRCDIR"/include/xfskit/*.h "$XK_SRCDIR"/include/xfskit/format/*.h; do
	rel=${h#"$XK_SRCDIR"/include/}
	[ -f "$D$prefix/include/$rel" ] || fail "header $rel is not installed"
done
comp=$D$prefix/share/bash-completion/completions
[ -f "$comp/xfskit-repair" ] || fail "the bash completion is not installed"
for p in xfskit-db xfskit-mkfs xfskit-undo xfskit-metadump xfskit-mdrestore \
	 xfskit-admin fsck.xfskit xfskit-resize; do
	[ "$(readlink "$comp/$p")" = xfskit-repair ] ||
		fail "the bash completion of $p is not linked to xfskit-repair's"
done
pc=$lib/pkgconfig/xfskit.pc
[ -f "$pc" ] || fail "xfskit.pc is not installed"
pass "tools, man pages, bash completion, library, headers and pkg-config file installed"

# Build against the installed library only: the sysroot prefix points
# pkg-config's -I and -L into DESTDIR.
export PKG_CONFIG_PATH=$lib/pkgconfig PKG_CONFIG_SYSROOT_DIR=$D
ver=$(pkg-config --modversion xfskit)
[ "$ver" = "$(sed -n 's/^PACKAGE_VERSION = //p' "$XK_BUILDDIR/Makefile")" ] ||
	fail "pkg-config version '$ver' is not the package's"
cat >"$T/prog.c" <<'EOF'
#include <stdio.h>
#include <xfskit/errors.h>
#include <xfskit/libfs.h>
#include <xfskit/mount.h>

int
main(int argc, char **argv)
{
	struct xk_mount *mp;
	struct xk_fail f;
	int err;

	if (argc != 2)
		return 2;
	err = xk_mount_open(argv[1], XK_MOUNT_RDONLY, &mp, &f);
	if (err) {
		fprintf(stderr, "open: %s\n", xk_strerror(err));
		return 1;
	}
	printf("%s %u %llu\n", xk_version(), mp->sb.blocksize,
	       (unsigned long long)mp->sb.dblocks);
	return xk_mount_close(mp) ? 1 : 0;
}
EOF
# A sanitized build's library needs the program built the same way.
san=$(mvar XK_CFLAGS | grep -o -- '-fsanitize=[^ ]*' | head -1)
# shellcheck disable=SC2046
if cc -std=gnu11 -Wall -Werror $san -o "$T/prog" "$T/prog.c" \
	$(pkg-config --cflags --libs xfskit) 2>"$T/cc.err"; then
	pass "a program compiles and links with pkg-config --cflags --libs"
else
	fail "building against the installed library: $(cat "$T/cc.err")"
fi
pkg-config --cflags xfskit | grep -q -- "-I$D" ||
	fail "pkg-config --cflags does not point into the install"
# Every installed header compiles on its own (includes what it needs).
n=0
for h in "$D$prefix"/include/xfskit/*.h "$D$prefix"/include/xfskit/format/*.h; do
	rel=${h#"$D$prefix"/include/}
	# shellcheck disable=SC2046
	echo "#include <$rel>" | cc -std=gnu11 -Wall -Werror -fsyntax-only \
		$(pkg-config --cflags xfskit) -x c - 2>"$T/h.err" ||
		fail "installed header $rel does not compile alone: $(head -5 "$T/h.err")"
	n=$((n + 1))
done
pass "$n installed headers compile on their own"

img=$T/x.img
mkfs_xfs_image "$img" 300M -b size=2048 || fail "mkfs.xfs failed"
want="$(db_get "$img" "sb 0" blocksize) $(db_get "$img" "sb 0" dblocks)"
got=$(LD_LIBRARY_PATH=$lib "$T/prog" "$img" 2>&1)
if [ "${got#* }" = "$want" ]; then
	pass "the program reads blocksize and dblocks as xfs_db does ($want)"
else
	fail "the program printed '$got', xfs_db says '$want'"
fi
ldd "$T/prog" 2>/dev/null | grep -q "libxfskit.so.0 => $lib" ||
	LD_LIBRARY_PATH=$lib ldd "$T/prog" | grep -q "libxfskit.so.0 => $lib" ||
	fail "the program does not load the installed libxfskit"

# The installed fsck.xfskit runs the installed xfskit-repair.
unset XK_REPAIR
if LD_LIBRARY_PATH=$lib "$sbin/fsck.xfskit" -n -v "$img" >"$T/fsck.out" 2>&1 &&
   grep -q "running $sbin/xfskit-repair " "$T/fsck.out"; then
	pass "installed fsck.xfskit runs the xfskit-repair beside it"
else
	fail "installed fsck.xfskit: $(cat "$T/fsck.out")"
fi

mk uninstall DESTDIR="$D"
left=$(find "$D" -type f -o -type l)
[ -z "$left" ] && pass "make uninstall removes every installed file" ||
	fail "make uninstall left: $left"

# A program transform (what --program-prefix/--program-transform-name
# set) renames every program and man page.  configure's own handling of
# the options, and fsck.xfskit finding the renamed checker, are covered
# by scripts/pkg_dist.sh, which configures the tarball with them.
D2=$T/dest2
mk install DESTDIR="$D2" program_transform_name='s&^&xk-&' || finish
for p in xfskit-mkfs xfskit-repair xfskit-db xfskit-undo fsck.xfskit xfskit-admin xfskit-resize; do
	[ -x "$D2$prefix/sbin/xk-$p" ] && [ ! -e "$D2$prefix/sbin/$p" ] ||
		fail "program $p was not renamed to xk-$p"
	[ -f "$D2$prefix/share/man/man8/xk-$p.8" ] ||
		fail "man page of $p was not renamed to xk-$p.8"
done
pass "a program transform renames programs and man pages"
finish
