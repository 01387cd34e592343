// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The fork reader on synthetic forks in a scratch image: an extent list,
 * a two-level bmbt (in-inode root, two leaves), extent counts that do
 * not fit the fork, a root larger than its fork, a bmbt that leads back to
 * itself, and mappings the geometry refuses.  A damaged fork gives an
 * empty map and XK_ECORRUPT, or, when salvage is asked, the readable
 * mappings marked partial with each problem and where it was met.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <xfskit/libfs.h>
#include <xfskit/fork.h>

#include "unit.h"

#include "scratch.h"

#define INO	131ull
/* Filesystem block of agbno in AG 1 (agblklog 15). */
#define FSB(agbno)	((1ull << 15) | (agbno))

static uint8_t ibuf[512];

static struct xk_dinode *
new_inode(uint8_t format, uint64_t nextents)
{
	struct xk_dinode *dip = (struct xk_dinode *)ibuf;

	memset(ibuf, 0, sizeof(ibuf));
	xk_be16_set(&dip->di_magic, XK_DINODE_MAGIC);
	dip->di_version = 3;
	dip->di_format = format;
	dip->di_aformat = XK_DINODE_FMT_EXTENTS;
	xk_dinode_set_nextents(dip, nextents, 0);
	return dip;
}

static void
put_rec(void *at, uint64_t off, uint64_t fsb, uint64_t len, int unwritten)
{
	struct xk_bmbt_irec r = { off, fsb, len, unwritten };

	xk_bmbt_rec_pack(at, &r);
}

/* Write a bmbt leaf at fsb holding n mappings of 2 blocks from `off`. */
static void
put_leaf(uint64_t fsb, uint64_t off, int n, uint64_t left, uint64_t right)
{
	uint64_t daddr = xk_fsb_to_daddr(mp, fsb);
	struct xk_btree_lblock *h;
	struct xk_buf *bp;

	xk_buf_invalidate(mp, daddr, 4096);
	ck_assert_int_eq(xk_buf_get(mp, daddr, 4096, xk_bmbt_ops.buf_ops,
				    &bp), 0);
	memset(bp->data, 0, 4096);
	h = (struct xk_btree_lblock *)bp->data;
	xk_be32_set(&h->bb_magic, XK_BMAP_CRC_MAGIC);
	xk_be16_set(&h->bb_numrecs, (uint16_t)n);
	xk_be64_set(&h->bb_leftsib, left);
	xk_be64_set(&h->bb_rightsib, right);
	xk_be64_set(&h->bb_blkno, daddr);
	memcpy(h->bb_uuid, mp->meta_uuid, 16);
	xk_be64_set(&h->bb_owner, INO);
	for (int i = 0; i < n; i++)
		put_rec(xk_btree_rec(&xk_bmbt_ops, bp->data, i),
			off + 4 * i, FSB(1000) + off + 4 * i, 2, i & 1);
	xk_cksum_update(bp->data, 4096, offsetof(struct xk_btree_lblock,
						  bb_crc));
	ck_assert_int_eq(xk_buf_write_raw(bp), 0);
	xk_buf_release(bp);
	xk_buf_invalidate(mp, daddr, 4096);
}

/* An inode whose data fork is a level-1 root over the given leaves. */
static struct xk_dinode *
btree_inode(const uint64_t *keys, const uint64_t *ptrs, int n,
	    uint64_t nextents)
{
	struct xk_dinode *dip = new_inode(XK_DINODE_FMT_BTREE, nextents);
	unsigned int size = xk_dfork_dsize(dip, 512);
	struct xk_bmdr_block *root = (struct xk_bmdr_block *)
				     xk_dfork_dptr(dip);

	xk_be16_set(&root->bb_level, 1);
	xk_be16_set(&root->bb_numrecs, (uint16_t)n);
	for (int i = 0; i < n; i++) {
		xk_be64_set(&xk_bmdr_key(root, i)->br_startoff, keys[i]);
		xk_be64_set(xk_bmdr_ptr(root, size, i), ptrs[i]);
	}
	return dip;
}

START_TEST(test_extents)
{
	struct xk_dinode *dip = new_inode(XK_DINODE_FMT_EXTENTS, 3);
	uint8_t *p = xk_dfork_dptr(dip);
	struct xk_fork_map map = { 0 };

	put_rec(p, 0, FSB(100), 8, 0);
	put_rec(p + 16, 8, FSB(200), 4, 1);
	put_rec(p + 32, 100, FSB(300), 1, 0);
	ck_assert_int_eq(xk_fork_read(mp, INO, dip, XK_DATA_FORK,
				      XK_FORK_CHECK, &map), 0);
	ck_assert_uint_eq(map.next, 3);
	ck_assert_uint_eq(map.nblocks, 13);
	ck_assert_int_eq(map.partial, 0);
	ck_assert_uint_eq(map.ext[1].startoff, 8);
	ck_assert_uint_eq(map.ext[1].startblock, FSB(200));
	ck_assert_uint_eq(map.ext[1].blockcount, 4);
	ck_assert_int_eq(map.ext[1].unwritten, 1);
	ck_assert_ptr_eq(xk_fork_map_lookup(&map, 10), &map.ext[1]);
	ck_assert_ptr_null(xk_fork_map_lookup(&map, 50));

	/* No attr fork: nothing mapped, no error. */
	ck_assert_int_eq(xk_fork_read(mp, INO, dip, XK_ATTR_FORK,
				      XK_FORK_CHECK, &map), 0);
	ck_assert_uint_eq(map.next, 0);
	xk_fork_map_free(&map);
}
END_TEST

START_TEST(test_extent_count_hostile)
{
	/* 2^40 extents claimed in a 336-byte fork. */
	struct xk_dinode *dip = new_inode(XK_DINODE_FMT_EXTENTS, 0);
	uint8_t *p = xk_dfork_dptr(dip);
	struct xk_fork_map map = { 0 };
	unsigned int fit = xk_dfork_dsize(dip, 512) / 16;

	xk_be64_set(&dip->di_flags2, XK_DIFLAG2_NREXT64);
	xk_dinode_set_nextents(dip, 1ull << 40, 0);
	for (unsigned int i = 0; i < fit; i++)
		put_rec(p + 16 * i, 2 * i, FSB(100) + 2 * i, 1, 0);
	ck_assert_int_eq(xk_fork_read(mp, INO, dip, XK_DATA_FORK,
				      XK_FORK_CHECK, &map), XK_ECORRUPT);
	ck_assert_uint_eq(map.next, 0);
	ck_assert_int_eq(map.partial, 0);
	ck_assert_str_eq(map.first.check, "nextents");

	/* Salvage: the records that fit, marked partial. */
	ck_assert_int_eq(xk_fork_read(mp, INO, dip, XK_DATA_FORK,
				      XK_FORK_CHECK | XK_FORK_SALVAGE, &map),
			 XK_ECORRUPT);
	ck_assert_uint_eq(map.next, fit);
	ck_assert_int_eq(map.partial, 1);
	ck_assert_uint_eq(map.nprob, 1);
	ck_assert_uint_eq(map.prob[0].at, 0);

	/* A hostile attr fork offset past the literal area. */
	dip->di_forkoff = 0xff;
	ck_assert_int_eq(xk_fork_read(mp, INO, dip, XK_ATTR_FORK,
				      XK_FORK_SALVAGE, &map), XK_ECORRUPT);
	ck_assert_uint_eq(map.next, 0);
	ck_assert_str_eq(map.first.check, "forkoff");
	xk_fork_map_free(&map);
}
END_TEST

START_TEST(test_geometry_checks)
{
	struct xk_dinode *dip = new_inode(XK_DINODE_FMT_EXTENTS, 4);
	uint8_t *p = xk_dfork_dptr(dip);
	struct xk_fork_map map = { 0 };

	put_rec(p, 0, FSB(100), 8, 0);
	put_rec(p + 16, 4, FSB(200), 4, 0);		/* overlaps */
	put_rec(p + 32, 20, FSB(32760), 100, 0);	/* crosses an AG */
	put_rec(p + 48, 200, FSB(300), 0, 0);		/* empty */
	/* Without the check the reader returns what is there. */
	ck_assert_int_eq(xk_fork_read(mp, INO, dip, XK_DATA_FORK, 0, &map),
			 0);
	ck_assert_uint_eq(map.next, 4);
	ck_assert_int_eq(xk_fork_read(mp, INO, dip, XK_DATA_FORK,
				      XK_FORK_CHECK, &map), XK_ECORRUPT);
	ck_assert_uint_eq(map.next, 0);
	ck_assert_str_eq(map.first.check, "extent order");
	ck_assert_int_eq(xk_fork_read(mp, INO, dip, XK_DATA_FORK,
				      XK_FORK_CHECK | XK_FORK_SALVAGE, &map),
			 XK_ECORRUPT);
	ck_assert_int_eq(map.partial, 1);
	ck_assert_uint_eq(map.next, 1);
	ck_assert_uint_eq(map.nprob, 3);
	ck_assert_str_eq(map.prob[0].fail.check, "extent order");
	ck_assert_str_eq(map.prob[1].fail.check, "extent");
	ck_assert_str_eq(map.prob[2].fail.check, "extent");
	ck_assert_uint_eq(map.prob[2].at, 1);
	xk_fork_map_free(&map);
}
END_TEST

START_TEST(test_btree)
{
	static const uint64_t keys[] = { 0, 40 };
	const uint64_t ptrs[] = { FSB(50), FSB(51) };
	struct xk_dinode *dip;
	struct xk_fork_map map = { 0 };

	put_leaf(FSB(50), 0, 10, XK_NULLFSBLOCK, FSB(51));
	put_leaf(FSB(51), 40, 5, FSB(50), XK_NULLFSBLOCK);
	dip = btree_inode(keys, ptrs, 2, 15);
	ck_assert_int_eq(xk_fork_read(mp, INO, dip, XK_DATA_FORK,
				      XK_FORK_CHECK | XK_FORK_BLOCKS, &map),
			 0);
	ck_assert_uint_eq(map.next, 15);
	ck_assert_uint_eq(map.nblocks, 30);
	ck_assert_uint_eq(map.ext[10].startoff, 40);
	ck_assert_uint_eq(map.ext[14].startoff, 56);
	ck_assert_int_eq(map.ext[13].unwritten, 1);
	ck_assert_uint_eq(map.nblk, 2);
	ck_assert_uint_eq(map.blk[0].fsb, FSB(50));
	ck_assert_uint_eq(map.blk[1].fsb, FSB(51));
	ck_assert_uint_eq(map.blk[1].numrecs, 5);
	ck_assert_uint_eq(map.root_level, 1);
	ck_assert_uint_eq(map.root_numrecs, 2);

	/* A root with more records than its fork holds. */
	dip = btree_inode(keys, ptrs, 2, 15);
	xk_be16_set(&((struct xk_bmdr_block *)xk_dfork_dptr(dip))->bb_numrecs,
		    0xffff);
	ck_assert_int_eq(xk_fork_read(mp, INO, dip, XK_DATA_FORK,
				      XK_FORK_SALVAGE, &map), XK_ECORRUPT);
	ck_assert_int_eq(map.partial, 1);
	ck_assert_uint_eq(map.next, 0);
	xk_fork_map_free(&map);
}
END_TEST

START_TEST(test_btree_cycle)
{
	static const uint64_t keys[] = { 0, 40, 80 };
	const uint64_t loop[] = { FSB(50), FSB(51), FSB(50) };
	struct xk_dinode *dip;
	struct xk_fork_map map = { 0 };

	put_leaf(FSB(50), 0, 10, XK_NULLFSBLOCK, FSB(51));
	put_leaf(FSB(51), 40, 5, FSB(50), XK_NULLFSBLOCK);
	/* The root leads back to the first leaf. */
	dip = btree_inode(keys, loop, 3, 15);
	ck_assert_int_eq(xk_fork_read(mp, INO, dip, XK_DATA_FORK,
				      XK_FORK_CHECK, &map), XK_ECORRUPT);
	ck_assert_uint_eq(map.next, 0);
	ck_assert_int_eq(map.partial, 0);
	ck_assert_int_eq(xk_fork_read(mp, INO, dip, XK_DATA_FORK,
				      XK_FORK_SALVAGE | XK_FORK_BLOCKS, &map),
			 XK_ECORRUPT);
	ck_assert_int_eq(map.partial, 1);
	ck_assert_uint_eq(map.next, 15);	/* each leaf once */
	ck_assert_uint_eq(map.nblk, 2);
	ck_assert_uint_ge(map.nprob, 1);
	{
		int loop_seen = 0;

		for (uint64_t i = 0; i < map.nprob; i++)
			loop_seen |= !strcmp(map.prob[i].fail.check, "loop");
		ck_assert(loop_seen);
	}

	/* A leaf whose mappings do not follow the previous leaf's. */
	put_leaf(FSB(51), 10, 5, FSB(50), XK_NULLFSBLOCK);
	dip = btree_inode(keys, (const uint64_t[]){ FSB(50), FSB(51) }, 2, 15);
	ck_assert_int_eq(xk_fork_read(mp, INO, dip, XK_DATA_FORK,
				      XK_FORK_CHECK | XK_FORK_SALVAGE, &map),
			 XK_ECORRUPT);
	ck_assert_int_eq(map.partial, 1);
	ck_assert_uint_lt(map.next, 15);
	xk_fork_map_free(&map);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("fork");
	TCase *tc = tcase_create("fork");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_extents);
	tcase_add_test(tc, test_extent_count_hostile);
	tcase_add_test(tc, test_geometry_checks);
	tcase_add_test(tc, test_btree);
	tcase_add_test(tc, test_btree_cycle);
	suite_add_tcase(s, tc);
	return unit_run(s);
}
