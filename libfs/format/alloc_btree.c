// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Free-space btrees: the bnobt indexes free extents by start block, the
 * cntbt by (length, start block).  Both hold the same records.
 */
#include <xfskit/libfs.h>

static void
alloc_rec_decode(const void *rec, uint32_t *start, uint32_t *len)
{
	const struct xk_alloc_rec *r = rec;

	*start = xk_be32_get(r->ar_startblock);
	*len = xk_be32_get(r->ar_blockcount);
}

static void
bno_rec_keys(const void *rec, struct xk_bkey *lo, struct xk_bkey *hi)
{
	uint32_t s, l;

	alloc_rec_decode(rec, &s, &l);
	lo->k[0] = s;
	lo->k[1] = lo->k[2] = 0;
	*hi = *lo;
	hi->k[0] = (uint64_t)s + l - 1;
}

static void
bno_key_decode(const void *key, struct xk_bkey *k)
{
	k->k[0] = xk_get_be32(key);
	k->k[1] = k->k[2] = 0;
}

static void
cnt_rec_keys(const void *rec, struct xk_bkey *lo, struct xk_bkey *hi)
{
	uint32_t s, l;

	alloc_rec_decode(rec, &s, &l);
	lo->k[0] = l;
	lo->k[1] = s;
	lo->k[2] = 0;
	*hi = *lo;
}

static void
cnt_key_decode(const void *key, struct xk_bkey *k)
{
	/* The key is the record: (startblock, blockcount), sorted by count. */
	k->k[0] = xk_get_be32((const uint8_t *)key + 4);
	k->k[1] = xk_get_be32(key);
	k->k[2] = 0;
}

/* Free extents neither overlap nor touch out of order. */
static int
bno_recs_inorder(const void *a, const void *b)
{
	uint32_t as, al, bs, bl;

	alloc_rec_decode(a, &as, &al);
	alloc_rec_decode(b, &bs, &bl);
	return (uint64_t)as + al <= bs;
}

static int
cnt_recs_inorder(const void *a, const void *b)
{
	uint32_t as, al, bs, bl;

	alloc_rec_decode(a, &as, &al);
	alloc_rec_decode(b, &bs, &bl);
	return al < bl || (al == bl && as < bs);
}

/* A free extent is non-empty and lies inside its AG. */
static int
alloc_rec_check(struct xk_mount *mp, int64_t agno, const void *rec,
		struct xk_fail *f)
{
	uint32_t s, l;
	uint32_t agblocks = agno >= 0 ? xk_ag_blocks(mp, (uint32_t)agno) :
			    mp->g.agblocks;

	alloc_rec_decode(rec, &s, &l);
	if (l == 0)
		return xk_fail_set(f, "blockcount", "free extent at %u has "
				   "zero length", s);
	if ((uint64_t)s + l > agblocks)
		return xk_fail_set(f, "startblock", "free extent %u+%u runs "
				   "past the AG's %u blocks", s, l, agblocks);
	return 0;
}

static int bno_verify(struct xk_buf *bp, struct xk_fail *f);
static int cnt_verify(struct xk_buf *bp, struct xk_fail *f);

static const struct xk_buf_ops bno_buf_ops = {
	.name = "bnobt block",
	.crc_off = offsetof(struct xk_btree_sblock, bb_crc),
	.lsn_off = offsetof(struct xk_btree_sblock, bb_lsn),
	.verify = bno_verify,
};

static const struct xk_buf_ops cnt_buf_ops = {
	.name = "cntbt block",
	.crc_off = offsetof(struct xk_btree_sblock, bb_crc),
	.lsn_off = offsetof(struct xk_btree_sblock, bb_lsn),
	.verify = cnt_verify,
};

const struct xk_btree_ops xk_bnobt_ops = {
	.name = "bnobt",
	.btnum = XK_BT_BNO,
	.magic = XK_ABTB_CRC_MAGIC,
	.rec_len = sizeof(struct xk_alloc_rec),
	.key_len = sizeof(struct xk_alloc_rec),
	.ptr_len = 4,
	.buf_ops = &bno_buf_ops,
	.rec_keys = bno_rec_keys,
	.key_decode = bno_key_decode,
	.recs_inorder = bno_recs_inorder,
	.rec_check = alloc_rec_check,
};

const struct xk_btree_ops xk_cntbt_ops = {
	.name = "cntbt",
	.btnum = XK_BT_CNT,
	.magic = XK_ABTC_CRC_MAGIC,
	.rec_len = sizeof(struct xk_alloc_rec),
	.key_len = sizeof(struct xk_alloc_rec),
	.ptr_len = 4,
	.buf_ops = &cnt_buf_ops,
	.rec_keys = cnt_rec_keys,
	.key_decode = cnt_key_decode,
	.recs_inorder = cnt_recs_inorder,
	.rec_check = alloc_rec_check,
};

static int
bno_verify(struct xk_buf *bp, struct xk_fail *f)
{
	return xk_btree_block_verify(&xk_bnobt_ops, bp, f);
}

static int
cnt_verify(struct xk_buf *bp, struct xk_fail *f)
{
	return xk_btree_block_verify(&xk_cntbt_ops, bp, f);
}
