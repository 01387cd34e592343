// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Apply one builder edit to an image and commit, for tests that hold the
 * edits (the effects of log intents) against what the kernel does.
 *
 *   xk_bld_edit IMAGE unmap INO LOFF FSBNO LEN   (a BUI unmap)
 *   xk_bld_edit IMAGE map INO LOFF FSBNO LEN     (a BUI map)
 *   xk_bld_edit IMAGE free FSBNO LEN             (an EFI)
 *   xk_bld_edit IMAGE refc inc|dec FSBNO LEN     (a CUI)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <xfskit/build.h>
#include <xfskit/libfs.h>
#include <xfskit/format/log.h>

static uint64_t
num(const char *s)
{
	return strtoull(s, NULL, 0);
}

int
main(int argc, char **argv)
{
	struct xk_mount *mp;
	struct xk_bld *b;
	struct xk_fail f;
	int err;

	if (argc < 5) {
		fprintf(stderr, "usage: see the comment at the top\n");
		return 2;
	}
	err = xk_mount_open(argv[1], 0, &mp, &f);
	if (!err)
		err = xk_bld_open(mp, &b);
	if (err) {
		fprintf(stderr, "xk_bld_edit: open: %s\n", xk_strerror(err));
		return 1;
	}
	if (!strcmp(argv[2], "unmap") && argc == 7)
		err = xk_bld_bmap_update(b, XK_BMAP_UNMAP, num(argv[3]),
					 XK_DATA_FORK, num(argv[4]),
					 num(argv[5]), (uint32_t)num(argv[6]),
					 0);
	else if (!strcmp(argv[2], "map") && argc == 7)
		err = xk_bld_bmap_update(b, XK_BMAP_MAP, num(argv[3]),
					 XK_DATA_FORK, num(argv[4]),
					 num(argv[5]), (uint32_t)num(argv[6]),
					 0);
	else if (!strcmp(argv[2], "free") && argc == 5)
		err = xk_bld_free_extent(b, num(argv[3]),
					 (uint32_t)num(argv[4]));
	else if (!strcmp(argv[2], "refc") && argc == 6)
		err = xk_bld_refcount_update(b, !strcmp(argv[3], "inc") ?
					     XK_REFCOUNT_INCREASE :
					     XK_REFCOUNT_DECREASE,
					     num(argv[4]),
					     (uint32_t)num(argv[5]));
	else {
		fprintf(stderr, "xk_bld_edit: bad arguments\n");
		err = -1;
	}
	if (!err)
		err = xk_bld_commit(b);
	xk_bld_free(b);
	if (err) {
		fprintf(stderr, "xk_bld_edit: %s\n", err == -1 ? "usage" :
			xk_strerror(err));
		xk_buf_discard_dirty(mp);
	}
	err = xk_mount_close(mp) || err;
	return err ? 1 : 0;
}
