/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A scratch filesystem handle for unit tests: a 512 MiB sparse file and a
 * handle built from a synthetic v5 superblock (4 KiB blocks, 4 AGs of
 * 32768 blocks, finobt, rmapbt, reflink, sparse inodes), with nothing
 * written; tests write the blocks they need.
 */
#ifndef XFSKIT_TESTS_SCRATCH_H
#define XFSKIT_TESTS_SCRATCH_H

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <xfskit/libfs.h>

static char img_path[] = "/tmp/xk-test-btree-XXXXXX";
static struct xk_mount *mp;
static struct xk_dev *dev;

static void
setup(void)
{
	struct xk_sb sb;
	struct xk_fail f;
	int fd = mkstemp(img_path);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(ftruncate(fd, 512ll << 20), 0);
	close(fd);
	memset(&sb, 0, sizeof(sb));
	sb.magicnum = XK_SB_MAGIC;
	sb.blocksize = 4096;
	sb.dblocks = 131072;
	sb.logstart = 65542;
	sb.rootino = 128;
	sb.rextsize = 1;
	sb.agblocks = 32768;
	sb.agcount = 4;
	sb.logblocks = 16384;
	sb.versionnum = 0xb4a5;
	sb.sectsize = 512;
	sb.inodesize = 512;
	sb.inopblock = 8;
	sb.blocklog = 12;
	sb.sectlog = 9;
	sb.inodelog = 9;
	sb.inopblog = 3;
	sb.agblklog = 15;
	sb.inoalignmt = 8;
	sb.features_ro_compat = 0xf;
	sb.features_incompat = 0xb;
	sb.spino_align = 4;
	memset(sb.uuid, 0x42, 16);
	ck_assert_int_eq(xk_dev_open(img_path, 0, &dev), 0);
	ck_assert_int_eq(xk_mount_from_sb(dev, &sb, 0, &mp, &f), 0);
}

static void
teardown(void)
{
	ck_assert_int_eq(xk_mount_close(mp), 0);
	xk_dev_close(dev);
	unlink(img_path);
	strcpy(img_path, "/tmp/xk-test-btree-XXXXXX");
}

#endif /* XFSKIT_TESTS_SCRATCH_H */
