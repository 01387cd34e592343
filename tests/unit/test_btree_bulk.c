// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Bulk loading: trees of every short-form type built from synthetic
 * records, from an empty root to four levels, must pass the block verifier and
 * the walker (levels, keys, sibling chains) and give back exactly the
 * records they were built from, in order; the plan must match the
 * blocks used.
 */
#include "scratch.h"
#include "unit.h"

#include <xfskit/btree_bulk.h>

struct collect {
	const uint8_t	*want;
	size_t		rec_len;
	uint64_t	n;
	int		mismatch;
	int		fails;
};

static int
on_rec(void *ctx, const void *rec)
{
	struct collect *c = ctx;

	if (memcmp(rec, c->want + c->n * c->rec_len, c->rec_len))
		c->mismatch++;
	c->n++;
	return 0;
}

static void
on_fail(void *ctx, const struct xk_fail *f)
{
	struct collect *c = ctx;
	char line[256];

	xk_fail_format(f, line, sizeof(line));
	fprintf(stderr, "walk: %s\n", line);
	c->fails++;
}

/* n records of the tree's type, in key order, valid for AG 1. */
static uint8_t *
make_recs(const struct xk_btree_ops *ops, uint64_t n)
{
	uint8_t *v = calloc(n ? n : 1, ops->rec_len);

	for (uint64_t i = 0; i < n; i++) {
		uint8_t *r = v + i * ops->rec_len;

		switch (ops->btnum) {
		case XK_BT_BNO:		/* start 1000 + 3i, length 1 */
			xk_put_be32(r, (uint32_t)(1000 + 3 * i));
			xk_put_be32(r + 4, 1);
			break;
		case XK_BT_CNT:		/* lengths grow, starts spread */
			xk_put_be32(r, (uint32_t)(1000 + 2 * i));
			xk_put_be32(r + 4, (uint32_t)(1 + i / 50));
			break;
		case XK_BT_INO:
		case XK_BT_FINO:	/* one chunk every 8 blocks, all free */
			xk_put_be32(r, (uint32_t)(64 * (i + 2)));
			r[4] = 0; r[5] = 0; r[6] = 64; r[7] = 64;
			xk_put_be64(r + 8, ~0ULL);
			break;
		case XK_BT_RMAP:	/* pairs sharing a block (reflink) */
			xk_put_be32(r, (uint32_t)(1000 + i / 2));
			xk_put_be32(r + 4, 1);
			xk_put_be64(r + 8, 128 + 8 * (i % 2));
			xk_put_be64(r + 16, i);
			break;
		case XK_BT_REFC:
			xk_put_be32(r, (uint32_t)(1000 + 2 * i));
			xk_put_be32(r + 4, 1);
			xk_put_be32(r + 8, 2);
			break;
		default:
			break;
		}
	}
	return v;
}

static void
build_and_walk(enum xk_btnum bt, uint64_t n, uint32_t fill,
	       unsigned int want_levels)
{
	const struct xk_btree_ops *ops = xk_btree_ops_get(bt);
	struct xk_btree_bulk bb = { .ops = ops, .agno = 1,
				    .leaf_fill = fill, .node_fill = fill };
	uint8_t *recs = make_recs(ops, n);
	uint64_t *blocks, root;
	struct collect c = { recs, ops->rec_len, 0, 0, 0 };
	struct xk_btree_walk w = {
		.ops = ops, .agno = 1, .ctx = &c,
		.rec_fn = on_rec, .fail_fn = on_fail,
	};

	ck_assert_int_eq(xk_btree_bulk_plan(mp, &bb, n), 0);
	ck_assert_uint_eq(bb.levels, want_levels);
	blocks = calloc(bb.blocks, sizeof(*blocks));
	/* Reserved blocks in reverse order: nothing assumes adjacency. */
	for (uint64_t i = 0; i < bb.blocks; i++)
		blocks[i] = 30000 - 2 * i;
	ck_assert_int_eq(xk_btree_bulk_load(mp, &bb, recs, n, blocks, &root),
			 0);
	ck_assert_int_eq(xk_buf_flush(mp), 0);
	w.root = root;
	w.levels = bb.levels;
	ck_assert_int_eq(xk_btree_walk(mp, &w), 0);
	ck_assert_int_eq(c.fails, 0);
	ck_assert_uint_eq(c.n, n);
	ck_assert_int_eq(c.mismatch, 0);
	ck_assert_uint_eq(w.nblocks, bb.blocks);
	free(blocks);
	free(recs);
}

START_TEST(test_every_tree)
{
	static const enum xk_btnum trees[] = {
		XK_BT_BNO, XK_BT_CNT, XK_BT_INO, XK_BT_FINO, XK_BT_RMAP,
		XK_BT_REFC,
	};

	for (unsigned int i = 0; i < 6; i++) {
		build_and_walk(trees[i], 0, 0, 1);	/* empty root leaf */
		build_and_walk(trees[i], 1, 0, 1);
		build_and_walk(trees[i], 3000, 0, 2);	/* full blocks */
		build_and_walk(trees[i], 13, 4, 2);	/* uneven remainders */
	}
	/* The rmapbt (reflink) may grow tall: narrow blocks, four levels. */
	build_and_walk(XK_BT_RMAP, 2000, 8, 4);
	build_and_walk(XK_BT_RMAP, 131, 5, 4);
}
END_TEST

/* A node high key that is not the subtree's highest is reported. */
START_TEST(test_bad_high_key)
{
	const struct xk_btree_ops *ops = &xk_rmapbt_ops;
	struct xk_btree_bulk bb = { .ops = ops, .agno = 1,
				    .leaf_fill = 8, .node_fill = 8 };
	uint8_t *recs = make_recs(ops, 500);
	uint64_t blocks[200], root;
	struct collect c = { recs, ops->rec_len, 0, 0, 0 };
	struct xk_btree_walk w = { .ops = ops, .agno = 1, .ctx = &c,
				   .rec_fn = on_rec, .fail_fn = on_fail };
	struct xk_buf *bp;
	uint8_t *hk;

	ck_assert_int_eq(xk_btree_bulk_plan(mp, &bb, 500), 0);
	ck_assert_uint_le(bb.blocks, 200);
	for (uint64_t i = 0; i < bb.blocks; i++)
		blocks[i] = 20000 + i;
	ck_assert_int_eq(xk_btree_bulk_load(mp, &bb, recs, 500, blocks,
					    &root), 0);
	ck_assert_int_eq(xk_buf_flush(mp), 0);
	ck_assert_int_eq(xk_buf_read_ctx(mp, xk_agb_to_daddr(mp, 1,
					 (uint32_t)root), 4096, ops->buf_ops,
					 1, 0, 0, &bp), 0);
	hk = xk_btree_high_key(ops, bp->data, 0);
	xk_put_be32(hk, xk_get_be32(hk) - 1);	/* lower, still >= low */
	xk_buf_dirty(bp);
	xk_buf_release(bp);
	ck_assert_int_eq(xk_buf_flush(mp), 0);
	w.root = root;
	w.levels = bb.levels;
	ck_assert_int_eq(xk_btree_walk(mp, &w), XK_ECORRUPT);
	ck_assert_int_ge(c.fails, 1);
	free(recs);
}
END_TEST

START_TEST(test_too_tall)
{
	struct xk_btree_bulk bb = { .ops = &xk_bnobt_ops, .agno = 1,
				    .leaf_fill = 4, .node_fill = 4 };

	/* Narrow blocks would need more levels than the bnobt may have. */
	ck_assert_int_eq(xk_btree_bulk_plan(mp, &bb, 100), -EFBIG);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("btree_bulk");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 60);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_every_tree);
	tcase_add_test(tc, test_too_tall);
	tcase_add_test(tc, test_bad_high_key);
	suite_add_tcase(s, tc);
	return unit_run(s);
}
