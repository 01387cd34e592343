// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Geometry derivation from a superblock, and the superblock sanity rules
 * against hostile values.  The reference superblock is what mkfs.xfs 6.1
 * writes for a 512 MiB image with default options.
 */
#include <check.h>
#include <string.h>

#include <xfskit/libfs.h>

#include "unit.h"

static void
ref_sb(struct xk_sb *sb)
{
	memset(sb, 0, sizeof(*sb));
	sb->magicnum = XK_SB_MAGIC;
	sb->blocksize = 4096;
	sb->dblocks = 131072;
	sb->logstart = 65542;
	sb->rootino = 128;
	sb->rbmino = 129;
	sb->rsumino = 130;
	sb->rextsize = 1;
	sb->agblocks = 32768;
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
	sb->agblklog = 15;
	sb->imax_pct = 25;
	sb->inoalignmt = 8;
	sb->logsunit = 1;
	sb->features2 = sb->bad_features2 = 0x18a;
	sb->features_ro_compat = 0xd;
	sb->features_incompat = 0xb;
	sb->spino_align = 4;
	memset(sb->uuid, 0x5a, 16);
}

static struct xk_mount *
mount_ref(const struct xk_sb *sb)
{
	struct xk_mount *mp;
	struct xk_fail f;

	ck_assert_int_eq(xk_mount_from_sb(NULL, sb, XK_MOUNT_RDONLY, &mp, &f),
			 0);
	return mp;
}

START_TEST(test_derive)
{
	struct xk_sb sb;
	struct xk_mount *mp;
	const struct xk_geom *g;

	ref_sb(&sb);
	mp = mount_ref(&sb);
	g = &mp->g;
	ck_assert_uint_eq(g->blkbb_log, 3);
	ck_assert_uint_eq(g->agino_log, 18);
	ck_assert_uint_eq(g->ialloc_inos, 64);
	ck_assert_uint_eq(g->ialloc_blks, 8);
	ck_assert_uint_eq(g->cluster_blks, 4);	/* 16 KiB at 512-byte inodes */
	ck_assert_uint_eq(g->cluster_inos, 32);
	ck_assert_uint_eq(g->cluster_align, 8);
	ck_assert_uint_eq(g->ialloc_min_blks, 4);
	ck_assert_uint_eq(g->agfl_size, (512 - 36) / 4);
	ck_assert_uint_eq(g->dirblksize, 4096);
	ck_assert(g->has_finobt && g->has_reflink && g->has_inobtcnt);
	ck_assert(!g->has_rmapbt && !g->has_nrext64);
	ck_assert(g->has_sparse && g->has_ftype && g->has_bigtime);
	/* Records per 4 KiB block: (4096 - header) / sizes. */
	ck_assert_uint_eq(g->maxrecs[XK_BT_BNO][0], 505);
	ck_assert_uint_eq(g->maxrecs[XK_BT_BNO][1], 336);
	ck_assert_uint_eq(g->maxrecs[XK_BT_INO][0], 252);
	ck_assert_uint_eq(g->maxrecs[XK_BT_INO][1], 505);
	ck_assert_uint_eq(g->maxrecs[XK_BT_RMAP][0], 168);
	ck_assert_uint_eq(g->maxrecs[XK_BT_RMAP][1], 91);
	ck_assert_uint_eq(g->maxrecs[XK_BT_REFC][0], 336);
	ck_assert_uint_eq(g->maxrecs[XK_BT_REFC][1], 505);
	ck_assert_uint_eq(g->maxrecs[XK_BT_BMAP][0], 251);
	ck_assert_uint_eq(g->maxrecs[XK_BT_BMAP][1], 251);
	/* 16384 free extents at most, 252 per half-full leaf: 2 levels. */
	ck_assert_uint_eq(g->maxlevels[XK_BT_BNO], 2);
	ck_assert_uint_eq(g->maxlevels[XK_BT_INO], 2);
	/* Unit conversions. */
	ck_assert_uint_eq(xk_agb_to_fsb(mp, 2, 6), (2u << 15) | 6);
	ck_assert_uint_eq(xk_fsb_to_daddr(mp, 65542), (2ull * 32768 + 6) * 8);
	ck_assert_uint_eq(xk_ag_hdr_daddr(mp, 1, XK_AGI_SECTOR),
			  32768ull * 8 + 2);
	ck_assert_uint_eq(xk_ino_to_agno(mp, (3ull << 18) | 77), 3);
	ck_assert_uint_eq(xk_ino_to_agino(mp, (3ull << 18) | 77), 77);
	ck_assert(xk_ino_valid(mp, 128));
	ck_assert(!xk_ino_valid(mp, 3));		/* block 0: headers */
	ck_assert(!xk_ino_valid(mp, 4ull << 18));	/* AG 4 of 4 */
	ck_assert(xk_fsbext_valid(mp, xk_agb_to_fsb(mp, 3, 32767), 1));
	ck_assert(!xk_fsbext_valid(mp, xk_agb_to_fsb(mp, 3, 32767), 2));
	/* Above the 32-bit AG number: ignored, as the kernel does. */
	ck_assert(xk_fsbext_valid(mp, (1ull << (15 + 32)) |
					  xk_agb_to_fsb(mp, 1, 5), 1));
	ck_assert(!xk_fsbext_valid(mp, (1ull << (15 + 31)) |
					   xk_agb_to_fsb(mp, 1, 5), 1));
	ck_assert_uint_eq(xk_ag_blocks(mp, 3), 32768);
	ck_assert_int_eq(xk_mount_close(mp), 0);
}
END_TEST

START_TEST(test_short_last_ag)
{
	struct xk_sb sb;
	struct xk_mount *mp;

	ref_sb(&sb);
	sb.dblocks = 3 * 32768 + 1000;
	mp = mount_ref(&sb);
	ck_assert_uint_eq(xk_ag_blocks(mp, 3), 1000);
	ck_assert_uint_eq(xk_ag_blocks(mp, 2), 32768);
	ck_assert(!xk_agbext_valid(mp, 3, 999, 2));
	ck_assert(!xk_fsbext_valid(mp, xk_agb_to_fsb(mp, 3, 1000), 1));
	ck_assert(xk_fsbext_valid(mp, xk_agb_to_fsb(mp, 3, 999), 1));
	ck_assert_int_eq(xk_mount_close(mp), 0);
}
END_TEST

/* Each hostile change must be refused, naming the failed field. */
static const char *
apply_hostile(struct xk_sb *sb, int i)
{
	switch (i) {
	case 0: sb->magicnum = 0; return "magic";
	case 1: sb->versionnum = (sb->versionnum & ~0xf) | 4; return "version";
	case 2: sb->blocksize = 3000; return "blocksize";
	case 3: sb->blocksize = 0; return "blocksize";
	case 4: sb->blocklog = 200; return "blocklog";
	case 5: sb->sectsize = 65535; return "sectsize";
	case 6: sb->inodesize = 0; return "inodesize";
	case 7: sb->inopblock = 0; return "inopblock";
	case 8: sb->agblocks = 0; return "agblocks";
	case 9: sb->agblocks = 0xffffffff; return "agblocks";
	case 10: sb->agblklog = 40; return "agblklog";
	case 11: sb->agcount = 0; return "agcount";
	case 12: sb->dblocks = ~0ULL; return "dblocks";
	case 13: sb->dblocks = 5; return "dblocks";
	case 14: sb->logstart = ~0ULL >> 4; return "log";
	case 15: sb->logblocks = 0xffffffff; return "log";
	case 16: sb->logstart = 0; sb->logblocks = 10; return "log";	/* external, too small */
	case 17: sb->rootino = 1ULL << 40; return "rootino";
	case 18: sb->imax_pct = 200; return "imax_pct";
	case 19: sb->dirblklog = 9; return "dirblklog";
	case 20: sb->features_incompat |= 1u << 30; return "features_incompat";
	case 21: sb->agcount = 0xffffffff; return "dblocks";
	case 22: sb->rextents = 5; return "rextents";
	case 23: sb->rextsize = 0; return "rextsize";
	case 24: sb->rbmblocks = 1; return "rbmblocks";
	}
	return NULL;
}
#define NR_HOSTILE 25

START_TEST(test_hostile)
{
	struct xk_sb sb;
	struct xk_fail f;
	const char *expect;

	ref_sb(&sb);
	memset(&f, 0, sizeof(f));
	ck_assert_int_eq(xk_sb_check(&sb, 0, &f), 0);
	expect = apply_hostile(&sb, _i);
	memset(&f, 0, sizeof(f));
	ck_assert_int_ne(xk_sb_check(&sb, 0, &f), 0);
	ck_assert_ptr_nonnull(f.check);
	ck_assert_msg(strcmp(f.check, expect) == 0,
		      "case %d: expected check %s, got %s", _i, expect,
		      f.check);
}
END_TEST

START_TEST(test_truncated_device)
{
	struct xk_sb sb;
	struct xk_fail f;

	ref_sb(&sb);
	memset(&f, 0, sizeof(f));
	ck_assert_int_eq(xk_sb_check(&sb, 512ull << 20, &f), 0);
	ck_assert_int_eq(xk_sb_check(&sb, (512ull << 20) - 4096, &f),
			 XK_ETRUNC);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("geometry");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_derive);
	tcase_add_test(tc, test_short_last_ag);
	tcase_add_loop_test(tc, test_hostile, 0, NR_HOSTILE);
	tcase_add_test(tc, test_truncated_device);
	suite_add_tcase(s, tc);
	return unit_run(s);
}
