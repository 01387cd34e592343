// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The AG layout of a fresh filesystem (libfs/mkfs): fixed root blocks,
 * the log's AG, AGFL pre-fill, the root inode chunk placement and the
 * reverse mappings.  Expected values are what mkfs.xfs 6.1 leaves in a
 * 1 GiB image with 4 KiB blocks, rmapbt and reflink (AG 0: roots in
 * blocks 1-6, AGFL 7-12, chunk at 16; log in AG 2 from block 7).
 */
#include <check.h>
#include <errno.h>
#include <string.h>

#include <xfskit/init.h>
#include <xfskit/libfs.h>

#include "unit.h"

static void
ref_sb(struct xk_sb *sb)
{
	memset(sb, 0, sizeof(*sb));
	sb->magicnum = XK_SB_MAGIC;
	sb->blocksize = 4096;
	sb->dblocks = 262144;
	sb->logstart = 131079;
	sb->rootino = 128;
	sb->rextsize = 1;
	sb->agblocks = 65536;
	sb->agcount = 4;
	sb->logblocks = 16384;
	sb->versionnum = 0xb4a5;
	sb->sectsize = 512;
	sb->inodesize = 512;
	sb->inopblock = 8;
	sb->blocklog = 12;
	sb->sectlog = 9;
	sb->inodelog = 9;
	sb->inopblog = 3;
	sb->agblklog = 16;
	sb->imax_pct = 25;
	sb->inoalignmt = 8;
	sb->logsunit = 1;
	sb->features2 = sb->bad_features2 = 0x18a;
	sb->features_ro_compat = 0xf;
	sb->features_incompat = 0x2b;
	sb->spino_align = 4;
	memset(sb->uuid, 0x5a, 16);
}

static struct xk_mount *
mount_ref(void)
{
	struct xk_sb sb;
	struct xk_mount *mp;
	struct xk_fail f;

	ref_sb(&sb);
	ck_assert_int_eq(xk_mount_from_sb(NULL, &sb, XK_MOUNT_RDONLY, &mp, &f),
			 0);
	return mp;
}

START_TEST(test_ag0)
{
	struct xk_mount *mp = mount_ref();
	struct xk_ag_init ai;
	struct xk_ag_rmap r[XK_AGINIT_MAX_RMAP];
	uint32_t bno, longest, n;
	static const struct xk_ag_rmap want[] = {
		{ 0, 1, XK_RMAP_OWN_FS }, { 1, 2, XK_RMAP_OWN_AG },
		{ 3, 2, XK_RMAP_OWN_INOBT }, { 5, 1, XK_RMAP_OWN_AG },
		{ 6, 1, XK_RMAP_OWN_REFC }, { 7, 6, XK_RMAP_OWN_AG },
		{ 16, 8, XK_RMAP_OWN_INODES },
	};

	ck_assert_uint_eq(xk_ag_prealloc_blocks(mp), 7);
	ck_assert_uint_eq(xk_ag_min_freelist(mp, 65536), 6);
	ck_assert_int_eq(xk_ag_init_layout(mp, 0, &ai), 0);
	ck_assert_uint_eq(ai.roots[XK_BT_BNO], 1);
	ck_assert_uint_eq(ai.roots[XK_BT_REFC], 6);
	ck_assert_uint_eq(ai.log_blocks, 0);
	ck_assert_int_eq(xk_ag_init_agfl(&ai, 6), 0);
	ck_assert_uint_eq(ai.agfl[0], 7);
	ck_assert_uint_eq(ai.agfl[5], 12);
	ck_assert_int_eq(xk_ag_init_alloc(&ai, 8, 8, ai.roots[XK_BT_INO],
					  &bno), 0);
	ck_assert_uint_eq(bno, 16);
	ai.chunk_agbno = bno;
	ai.chunk_blocks = 8;
	ck_assert_uint_eq(xk_ag_init_freeblks(&ai, &longest), 65515);
	ck_assert_uint_eq(longest, 65512);
	ck_assert_uint_eq(ai.nfree, 2);
	ck_assert_uint_eq(ai.free[0].start, 13);
	ck_assert_uint_eq(ai.free[0].len, 3);
	n = xk_ag_init_rmaps(mp, &ai, r, XK_AGINIT_MAX_RMAP);
	ck_assert_uint_eq(n, sizeof(want) / sizeof(want[0]));
	for (uint32_t i = 0; i < n; i++) {
		ck_assert_uint_eq(r[i].start, want[i].start);
		ck_assert_uint_eq(r[i].len, want[i].len);
		ck_assert_uint_eq(r[i].owner, want[i].owner);
	}
	ck_assert_int_eq(xk_mount_close(mp), 0);
}
END_TEST

START_TEST(test_log_ag)
{
	struct xk_mount *mp = mount_ref();
	struct xk_ag_init ai;
	uint32_t longest;

	ck_assert_int_eq(xk_ag_init_layout(mp, 2, &ai), 0);
	ck_assert_uint_eq(ai.log_start, 7);
	ck_assert_uint_eq(ai.log_blocks, 16384);
	ck_assert_int_eq(xk_ag_init_agfl(&ai, 6), 0);
	ck_assert_uint_eq(ai.agfl[0], 7 + 16384);
	ck_assert_uint_eq(xk_ag_init_freeblks(&ai, &longest),
			  65536 - 7 - 16384 - 6);
	ck_assert_uint_eq(longest, 65536 - 7 - 16384 - 6);
	/* No AG past the last. */
	ck_assert_int_eq(xk_ag_init_layout(mp, 4, &ai), -EINVAL);
	ck_assert_int_eq(xk_mount_close(mp), 0);
}
END_TEST

/* AGFL by size: the smallest extent that fits, else the largest. */
START_TEST(test_agfl_by_size)
{
	struct xk_ag_init ai;
	uint32_t bno;

	memset(&ai, 0, sizeof(ai));
	ai.free[0] = (struct xk_ag_extent){ 10, 20 };
	ai.free[1] = (struct xk_ag_extent){ 40, 6 };
	ai.free[2] = (struct xk_ag_extent){ 60, 3 };
	ai.nfree = 3;
	ck_assert_int_eq(xk_ag_init_agfl(&ai, 6), 0);
	ck_assert_uint_eq(ai.agfl[0], 40);
	ck_assert_uint_eq(ai.nfree, 2);
	ck_assert_int_eq(xk_ag_init_agfl(&ai, 8), 0);
	ck_assert_uint_eq(ai.agfl[6], 60);	/* 3 fit 2 more: smallest */
	/* Near allocation: aligned, nearest to the target. */
	ck_assert_int_eq(xk_ag_init_alloc(&ai, 4, 8, 0, &bno), 0);
	ck_assert_uint_eq(bno, 16);
	ck_assert_int_eq(xk_ag_init_alloc(&ai, 64, 8, 0, &bno), -ENOSPC);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("mkfs_layout");
	TCase *tc = tcase_create("layout");

	tcase_add_test(tc, test_ag0);
	tcase_add_test(tc, test_log_ag);
	tcase_add_test(tc, test_agfl_by_size);
	suite_add_tcase(s, tc);
	return unit_run(s);
}
