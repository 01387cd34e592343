// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The btree engine on synthetic blocks in a scratch image: the block
 * verifier accepts a good block and rejects each rule's violation with
 * that rule's name; the CRC-only case is told apart from structural
 * ones; the walker follows a two-level tree and reports loops, sibling
 * breaks and key mismatches.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <xfskit/libfs.h>

#include "unit.h"

#include "scratch.h"

/* Write a bnobt block at agbno of AG 1 holding `n` records or keys. */
static void
put_block(uint32_t agbno, uint16_t level, const uint32_t *vals, int n,
	  uint32_t left, uint32_t right)
{
	struct xk_buf *bp;
	struct xk_btree_sblock *h;
	uint64_t daddr = xk_agb_to_daddr(mp, 1, agbno);
	uint32_t maxr = xk_btree_maxrecs(&xk_bnobt_ops, 4096, 0);

	xk_buf_invalidate(mp, daddr, 4096);
	ck_assert_int_eq(xk_buf_get(mp, daddr, 4096, xk_bnobt_ops.buf_ops,
				    &bp), 0);
	bp->agno = 1;
	h = (struct xk_btree_sblock *)bp->data;
	xk_be32_set(&h->bb_magic, XK_ABTB_CRC_MAGIC);
	xk_be16_set(&h->bb_level, level);
	xk_be16_set(&h->bb_numrecs, (uint16_t)n);
	xk_be32_set(&h->bb_leftsib, left);
	xk_be32_set(&h->bb_rightsib, right);
	xk_be64_set(&h->bb_blkno, daddr);
	memcpy(h->bb_uuid, mp->meta_uuid, 16);
	xk_be32_set(&h->bb_owner, 1);
	for (int i = 0; i < n; i++) {
		if (level == 0) {
			uint8_t *r = xk_btree_rec(&xk_bnobt_ops, bp->data, i);

			xk_put_be32(r, vals[2 * i]);
			xk_put_be32(r + 4, vals[2 * i + 1]);
		} else {
			uint8_t *k = xk_btree_key(&xk_bnobt_ops, bp->data, i);

			xk_put_be32(k, vals[2 * i]);
			xk_put_be32(k + 4, 1);
			xk_put_be32(xk_btree_ptr(&xk_bnobt_ops, bp->data,
						 maxr, i), vals[2 * i + 1]);
		}
	}
	/* Write raw with a fresh CRC, so bad structure reaches the disk. */
	xk_cksum_update(bp->data, 4096, offsetof(struct xk_btree_sblock,
						  bb_crc));
	ck_assert_int_eq(xk_buf_write_raw(bp), 0);
	xk_buf_release(bp);
	xk_buf_invalidate(mp, daddr, 4096);
}

static int
read_block(uint32_t agbno, struct xk_fail *f)
{
	struct xk_buf *bp;
	int err = xk_buf_read_ctx(mp, xk_agb_to_daddr(mp, 1, agbno), 4096,
				  xk_bnobt_ops.buf_ops, 1, 0, XK_READ_SALVAGE,
				  &bp);

	ck_assert_ptr_nonnull(bp);
	*f = bp->fail;
	xk_buf_release(bp);
	xk_buf_invalidate(mp, xk_agb_to_daddr(mp, 1, agbno), 4096);
	return err;
}

static const uint32_t good[] = { 100, 5, 200, 10, 300, 1 };

START_TEST(test_good_leaf)
{
	struct xk_fail f;

	put_block(20, 0, good, 3, XK_NULLAGBLOCK, XK_NULLAGBLOCK);
	ck_assert_int_eq(read_block(20, &f), 0);
}
END_TEST

START_TEST(test_crc_only)
{
	struct xk_fail f;
	uint8_t byte;
	uint64_t off = (xk_agb_to_daddr(mp, 1, 20) << 9) + 4000;

	put_block(20, 0, good, 3, XK_NULLAGBLOCK, XK_NULLAGBLOCK);
	/* Flip a byte in the unused tail: structure intact, CRC wrong. */
	ck_assert_int_eq(xk_dev_pread(dev, &byte, 1, off), 0);
	byte ^= 0x10;
	ck_assert_int_eq(xk_dev_pwrite(dev, &byte, 1, off), 0);
	ck_assert_int_eq(read_block(20, &f), XK_EBADCRC);
	ck_assert_str_eq(f.check, "crc");
	ck_assert_uint_eq(f.daddr, xk_agb_to_daddr(mp, 1, 20));
	ck_assert_int_eq(f.agno, 1);
}
END_TEST

START_TEST(test_structural)
{
	static const uint32_t overlap[] = { 100, 150, 200, 10 };
	static const uint32_t beyond[] = { 32760, 100 };
	static const uint32_t empty_rec[] = { 100, 0 };
	struct xk_fail f;

	put_block(20, 0, overlap, 2, XK_NULLAGBLOCK, XK_NULLAGBLOCK);
	ck_assert_int_eq(read_block(20, &f), XK_ECORRUPT);
	ck_assert_str_eq(f.check, "record order");
	ck_assert(!f.crc_bad);

	put_block(20, 0, beyond, 1, XK_NULLAGBLOCK, XK_NULLAGBLOCK);
	ck_assert_int_eq(read_block(20, &f), XK_ECORRUPT);
	ck_assert_str_eq(f.check, "startblock");

	put_block(20, 0, empty_rec, 1, XK_NULLAGBLOCK, XK_NULLAGBLOCK);
	ck_assert_int_eq(read_block(20, &f), XK_ECORRUPT);
	ck_assert_str_eq(f.check, "blockcount");

	put_block(20, 0, good, 3, 20, XK_NULLAGBLOCK);
	ck_assert_int_eq(read_block(20, &f), XK_ECORRUPT);
	ck_assert_str_eq(f.check, "leftsib");

	put_block(20, 0, good, 3, XK_NULLAGBLOCK, 40000);
	ck_assert_int_eq(read_block(20, &f), XK_ECORRUPT);
	ck_assert_str_eq(f.check, "rightsib");

	put_block(20, 7, good, 3, XK_NULLAGBLOCK, XK_NULLAGBLOCK);
	ck_assert_int_eq(read_block(20, &f), XK_ECORRUPT);
	ck_assert_str_eq(f.check, "level");
}
END_TEST

/* Header fields patched after a good block is written, CRC refreshed. */
static void
patch_and_read(size_t off, const void *val, size_t len, const char *check)
{
	struct xk_fail f;
	uint8_t blk[4096];
	uint64_t pos = xk_agb_to_daddr(mp, 1, 20) << 9;

	put_block(20, 0, good, 3, XK_NULLAGBLOCK, XK_NULLAGBLOCK);
	ck_assert_int_eq(xk_dev_pread(dev, blk, 4096, pos), 0);
	memcpy(blk + off, val, len);
	xk_cksum_update(blk, 4096, offsetof(struct xk_btree_sblock, bb_crc));
	ck_assert_int_eq(xk_dev_pwrite(dev, blk, 4096, pos), 0);
	ck_assert_int_eq(read_block(20, &f), XK_ECORRUPT);
	ck_assert_str_eq(f.check, check);
	ck_assert(!f.crc_bad);
}

START_TEST(test_header_rules)
{
	uint8_t v8[16];

	xk_put_be32(v8, XK_ABTC_CRC_MAGIC);
	patch_and_read(0, v8, 4, "magic");
	xk_put_be64(v8, 12345);
	patch_and_read(offsetof(struct xk_btree_sblock, bb_blkno), v8, 8,
		       "blkno");
	memset(v8, 0x99, 16);
	patch_and_read(offsetof(struct xk_btree_sblock, bb_uuid), v8, 16,
		       "uuid");
	xk_put_be32(v8, 2);
	patch_and_read(offsetof(struct xk_btree_sblock, bb_owner), v8, 4,
		       "owner");
	xk_put_be16(v8, 600);
	patch_and_read(offsetof(struct xk_btree_sblock, bb_numrecs), v8, 2,
		       "numrecs");
}
END_TEST

struct walk_result {
	int nfail;
	char checks[256];
	uint32_t recs;
};

static void
on_fail(void *ctx, const struct xk_fail *f)
{
	struct walk_result *r = ctx;

	r->nfail++;
	strncat(r->checks, f->check, sizeof(r->checks) -
		strlen(r->checks) - 2);
	strcat(r->checks, ",");
}

static int
on_rec(void *ctx, const void *rec)
{
	struct walk_result *r = ctx;

	(void)rec;
	r->recs++;
	return 0;
}

static int
walk(uint32_t root, unsigned int levels, struct walk_result *r)
{
	struct xk_btree_walk w = {
		.ops = &xk_bnobt_ops, .agno = 1, .root = root,
		.levels = levels, .ctx = r, .fail_fn = on_fail,
		.rec_fn = on_rec,
	};

	memset(r, 0, sizeof(*r));
	return xk_btree_walk(mp, &w);
}

START_TEST(test_walk)
{
	static const uint32_t l1[] = { 100, 5, 200, 10 };
	static const uint32_t l2[] = { 300, 1, 400, 7, 500, 2 };
	static const uint32_t root_ok[] = { 100, 31, 300, 32 };
	static const uint32_t root_loop[] = { 100, 31, 300, 31 };
	static const uint32_t root_badkey[] = { 100, 31, 250, 32 };
	struct walk_result r;

	put_block(31, 0, l1, 2, XK_NULLAGBLOCK, 32);
	put_block(32, 0, l2, 3, 31, XK_NULLAGBLOCK);
	put_block(30, 1, root_ok, 2, XK_NULLAGBLOCK, XK_NULLAGBLOCK);
	ck_assert_int_eq(walk(30, 2, &r), 0);
	ck_assert_uint_eq(r.recs, 5);
	ck_assert_int_eq(r.nfail, 0);

	/* The tree's height from the AGF disagrees with the root block. */
	ck_assert_int_eq(walk(30, 3, &r), XK_ECORRUPT);
	ck_assert(strstr(r.checks, "level"));

	put_block(30, 1, root_loop, 2, XK_NULLAGBLOCK, XK_NULLAGBLOCK);
	ck_assert_int_eq(walk(30, 2, &r), XK_ECORRUPT);
	ck_assert(strstr(r.checks, "loop"));

	put_block(30, 1, root_badkey, 2, XK_NULLAGBLOCK, XK_NULLAGBLOCK);
	ck_assert_int_eq(walk(30, 2, &r), XK_ECORRUPT);
	ck_assert(strstr(r.checks, "parent key"));

	/* A broken sibling chain. */
	put_block(30, 1, root_ok, 2, XK_NULLAGBLOCK, XK_NULLAGBLOCK);
	put_block(32, 0, l2, 3, XK_NULLAGBLOCK, XK_NULLAGBLOCK);
	ck_assert_int_eq(walk(30, 2, &r), XK_ECORRUPT);
	ck_assert(strstr(r.checks, "leftsib"));

	/* Hostile root and height. */
	ck_assert_int_eq(walk(0, 2, &r), XK_ECORRUPT);
	ck_assert_int_eq(walk(40000, 2, &r), XK_ECORRUPT);
	ck_assert_int_eq(walk(30, 0, &r), XK_ECORRUPT);
	ck_assert_int_eq(walk(30, 200, &r), XK_ECORRUPT);
}
END_TEST

START_TEST(test_cache_refs)
{
	struct xk_buf *a, *b;
	uint64_t daddr = xk_agb_to_daddr(mp, 1, 50);

	ck_assert_int_eq(xk_buf_read(mp, daddr, 4096, NULL, 0, &a), 0);
	ck_assert_int_eq(xk_buf_read(mp, daddr, 4096, NULL, 0, &b), 0);
	ck_assert_ptr_eq(a, b);
	ck_assert_int_eq(a->refs, 2);
	xk_buf_release(b);
	ck_assert_int_eq(a->refs, 1);
	a->data[0] = 0xab;
	xk_buf_dirty(a);
	xk_buf_release(a);
	ck_assert_int_eq(xk_buf_flush(mp), 0);
	xk_buf_invalidate(mp, daddr, 4096);
	ck_assert_int_eq(xk_buf_read(mp, daddr, 4096, NULL, 0, &a), 0);
	ck_assert_uint_eq(a->data[0], 0xab);
	xk_buf_release(a);
	/* A tiny budget forces reclaim; reads still work. */
	xk_mount_set_cache_limit(mp, 8192);
	for (uint32_t i = 0; i < 64; i++) {
		ck_assert_int_eq(xk_buf_read(mp, xk_agb_to_daddr(mp, 2, i),
					     4096, NULL, 0, &a), 0);
		xk_buf_release(a);
	}
	/* Reading past the end of the device is an error, not zeroes. */
	ck_assert_int_eq(xk_buf_read(mp, 1ull << 40, 4096, NULL, 0, &a),
			 XK_ETRUNC);
}
END_TEST

START_TEST(test_readonly)
{
	struct xk_dev *rd;
	uint8_t b = 0;

	ck_assert_int_eq(xk_dev_open(img_path, XK_DEV_RDONLY, &rd), 0);
	ck_assert_int_eq(xk_dev_pwrite(rd, &b, 1, 0), XK_ERDONLY);
	xk_dev_close(rd);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("btree");
	TCase *tc = tcase_create("core");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_good_leaf);
	tcase_add_test(tc, test_crc_only);
	tcase_add_test(tc, test_structural);
	tcase_add_test(tc, test_header_rules);
	tcase_add_test(tc, test_walk);
	tcase_add_test(tc, test_cache_refs);
	tcase_add_test(tc, test_readonly);
	suite_add_tcase(s, tc);
	return unit_run(s);
}
