// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Reference-count btree: for every extent shared by more than one owner,
 * how many own it; and, in a separate domain marked by the top bit of the
 * start block, the CoW staging extents (refcount 1).
 */
#include <xfskit/libfs.h>

static void
refc_decode(const void *rec, uint32_t *start, uint32_t *len, uint32_t *refs)
{
	const struct xk_refcount_rec *r = rec;

	*start = xk_be32_get(r->rc_startblock);
	*len = xk_be32_get(r->rc_blockcount);
	*refs = xk_be32_get(r->rc_refcount);
}

static void
refc_rec_keys(const void *rec, struct xk_bkey *lo, struct xk_bkey *hi)
{
	uint32_t s, l, n;

	refc_decode(rec, &s, &l, &n);
	lo->k[0] = s;		/* the CoW bit sorts the CoW domain last */
	lo->k[1] = lo->k[2] = 0;
	*hi = *lo;
	hi->k[0] = (uint64_t)s + l - 1;
}

static void
refc_key_decode(const void *key, struct xk_bkey *k)
{
	k->k[0] = xk_get_be32(key);
	k->k[1] = k->k[2] = 0;
}

static int
refc_recs_inorder(const void *a, const void *b)
{
	uint32_t as, al, an, bs, bl, bn;

	refc_decode(a, &as, &al, &an);
	refc_decode(b, &bs, &bl, &bn);
	return (uint64_t)as + al <= bs;
}

/*
 * Rules: non-empty, inside the AG or group of nblocks blocks (the CoW
 * bit aside); a shared extent has a count of at least 2, a CoW staging
 * extent exactly 1.
 */
static int
refc_check_in(const void *rec, uint64_t nblocks, struct xk_fail *f)
{
	uint32_t s, l, n;
	int cow;

	refc_decode(rec, &s, &l, &n);
	cow = (s & XK_REFC_COWFLAG) != 0;
	s &= ~XK_REFC_COWFLAG;
	if (l == 0)
		return xk_fail_set(f, "blockcount", "extent at %u has zero "
				   "length", s);
	if ((uint64_t)s + l > nblocks)
		return xk_fail_set(f, "startblock", "extent %u+%u runs past "
				   "the %llu blocks of its AG or group", s, l,
				   (unsigned long long)nblocks);
	if (cow && n != 1)
		return xk_fail_set(f, "refcount", "CoW staging extent at %u "
				   "has refcount %u", s, n);
	if (!cow && n < 2)
		return xk_fail_set(f, "refcount", "shared extent at %u has "
				   "refcount %u", s, n);
	return 0;
}

static int
refc_rec_check(struct xk_mount *mp, int64_t agno, const void *rec,
	       struct xk_fail *f)
{
	return refc_check_in(rec, agno >= 0 ? xk_ag_blocks(mp, (uint32_t)agno)
					    : mp->g.agblocks, f);
}

static int refc_verify(struct xk_buf *bp, struct xk_fail *f);

static const struct xk_buf_ops refc_buf_ops = {
	.name = "refcountbt block",
	.crc_off = offsetof(struct xk_btree_sblock, bb_crc),
	.lsn_off = offsetof(struct xk_btree_sblock, bb_lsn),
	.verify = refc_verify,
};

const struct xk_btree_ops xk_refcountbt_ops = {
	.name = "refcountbt",
	.btnum = XK_BT_REFC,
	.magic = XK_REFC_CRC_MAGIC,
	.rec_len = sizeof(struct xk_refcount_rec),
	.key_len = sizeof(struct xk_refcount_key),
	.ptr_len = 4,
	.buf_ops = &refc_buf_ops,
	.rec_keys = refc_rec_keys,
	.key_decode = refc_key_decode,
	.recs_inorder = refc_recs_inorder,
	.rec_check = refc_rec_check,
};

static int
refc_verify(struct xk_buf *bp, struct xk_fail *f)
{
	return xk_btree_block_verify(&xk_refcountbt_ops, bp, f);
}

/*
 * A realtime group's refcount btree ('RCNT'): the same records and keys,
 * with group-relative realtime block numbers, in long-form blocks on the
 * data device under a root in the refcount inode's data fork.  The
 * record rules are the AG's with the group's size for the AG's.
 */
static int
rtrefc_rec_check(struct xk_mount *mp, int64_t agno, const void *rec,
		 struct xk_fail *f)
{
	(void)agno;
	return refc_check_in(rec, (uint64_t)mp->sb.rgextents *
				  mp->sb.rextsize, f);
}

static int rtrefc_verify(struct xk_buf *bp, struct xk_fail *f);

static const struct xk_buf_ops rtrefc_buf_ops = {
	.name = "rtrefcountbt block",
	.crc_off = offsetof(struct xk_btree_lblock, bb_crc),
	.lsn_off = offsetof(struct xk_btree_lblock, bb_lsn),
	.verify = rtrefc_verify,
};

const struct xk_btree_ops xk_rtrefcountbt_ops = {
	.name = "rtrefcountbt",
	.btnum = XK_BT_RTREFC,
	.magic = XK_RTREFC_CRC_MAGIC,
	.long_ptrs = 1,
	.iroot_leaf = 1,
	.iroot_two_keys = 1,
	.rec_len = sizeof(struct xk_refcount_rec),
	.key_len = sizeof(struct xk_refcount_key),
	.ptr_len = 8,
	.buf_ops = &rtrefc_buf_ops,
	.rec_keys = refc_rec_keys,
	.key_decode = refc_key_decode,
	.recs_inorder = refc_recs_inorder,
	.rec_check = rtrefc_rec_check,
};

static int
rtrefc_verify(struct xk_buf *bp, struct xk_fail *f)
{
	return xk_btree_block_verify(&xk_rtrefcountbt_ops, bp, f);
}
