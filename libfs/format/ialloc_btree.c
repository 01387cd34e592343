// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Inode btrees: the inobt holds a record per inode chunk (64 inodes),
 * the finobt the subset of those records with a free inode.  With
 * sparse inodes a chunk may be partly allocated: a 16-bit holemask marks
 * each missing group of four inodes, and the freecount shrinks to a byte.
 */
#include <xfskit/libfs.h>

static void
ino_rec_keys(const void *rec, struct xk_bkey *lo, struct xk_bkey *hi)
{
	const struct xk_inobt_rec *r = rec;

	lo->k[0] = xk_be32_get(r->ir_startino);
	lo->k[1] = lo->k[2] = 0;
	*hi = *lo;
	hi->k[0] += XK_INODES_PER_CHUNK - 1;
}

static void
ino_key_decode(const void *key, struct xk_bkey *k)
{
	k->k[0] = xk_get_be32(key);
	k->k[1] = k->k[2] = 0;
}

static int
ino_recs_inorder(const void *a, const void *b)
{
	const struct xk_inobt_rec *x = a, *y = b;

	return (uint64_t)xk_be32_get(x->ir_startino) + XK_INODES_PER_CHUNK <=
	       xk_be32_get(y->ir_startino);
}

static unsigned int
popcount16(uint16_t v)
{
	return (unsigned int)__builtin_popcount(v);
}

/*
 * Rules: start inode on a block boundary and the chunk inside the AG; with sparse
 * inodes, count equals 64 less the inodes the holemask removes, freecount
 * not above count, and holes free; without, freecount at most 64 and
 * matching the number of free bits.
 */
static int
ino_rec_check(struct xk_mount *mp, int64_t agno, const void *rec,
	      struct xk_fail *f)
{
	const struct xk_inobt_rec *r = rec;
	uint32_t start = xk_be32_get(r->ir_startino);
	uint64_t freemask = xk_be64_get(r->ir_free);
	uint32_t agblocks = agno >= 0 ? xk_ag_blocks(mp, (uint32_t)agno) :
			    mp->g.agblocks;
	unsigned int nfree = (unsigned int)__builtin_popcountll(freemask);

	/* A chunk starts on a block boundary (or every 64 inodes, when a
	 * block holds more than that). */
	if (start % (mp->g.inopblock < XK_INODES_PER_CHUNK ?
		     mp->g.inopblock : XK_INODES_PER_CHUNK))
		return xk_fail_set(f, "startino", "chunk start %u is not on "
				   "a block boundary", start);
	if (start >= (1u << mp->g.agino_log) ||
	    xk_agino_to_agbno(mp, start + XK_INODES_PER_CHUNK - 1) >= agblocks)
		return xk_fail_set(f, "startino", "chunk %u lies outside the "
				   "AG", start);
	if (mp->g.has_sparse) {
		uint16_t hm = xk_be16_get(r->ir_u.sp.ir_holemask);
		unsigned int count = r->ir_u.sp.ir_count;
		unsigned int fc = r->ir_u.sp.ir_freecount;
		unsigned int expect = XK_INODES_PER_CHUNK -
			popcount16(hm) * XK_INODES_PER_HOLEMASK_BIT;
		uint64_t holes = 0;

		if (count != expect)
			return xk_fail_set(f, "count", "chunk %u: count %u, but "
					   "the holemask leaves %u inodes",
					   start, count, expect);
		if (fc > count)
			return xk_fail_set(f, "freecount", "chunk %u: %u free "
					   "of %u", start, fc, count);
		for (int i = 0; i < 16; i++)
			if (hm & (1u << i))
				holes |= 0xfULL << (i * 4);
		if ((freemask & holes) != holes)
			return xk_fail_set(f, "free", "chunk %u: holes are not "
					   "marked free", start);
		if ((unsigned int)__builtin_popcountll(freemask & ~holes) != fc)
			return xk_fail_set(f, "freecount", "chunk %u: "
					   "freecount %u, free mask says %u",
					   start, fc, (unsigned int)
					   __builtin_popcountll(freemask &
								~holes));
	} else {
		uint32_t fc = xk_be32_get(r->ir_u.f.ir_freecount);

		if (fc > XK_INODES_PER_CHUNK || fc != nfree)
			return xk_fail_set(f, "freecount", "chunk %u: "
					   "freecount %u, free mask says %u",
					   start, fc, nfree);
	}
	return 0;
}

static int ino_verify(struct xk_buf *bp, struct xk_fail *f);
static int fino_verify(struct xk_buf *bp, struct xk_fail *f);

static const struct xk_buf_ops ino_buf_ops = {
	.name = "inobt block",
	.crc_off = offsetof(struct xk_btree_sblock, bb_crc),
	.lsn_off = offsetof(struct xk_btree_sblock, bb_lsn),
	.verify = ino_verify,
};

static const struct xk_buf_ops fino_buf_ops = {
	.name = "finobt block",
	.crc_off = offsetof(struct xk_btree_sblock, bb_crc),
	.lsn_off = offsetof(struct xk_btree_sblock, bb_lsn),
	.verify = fino_verify,
};

const struct xk_btree_ops xk_inobt_ops = {
	.name = "inobt",
	.btnum = XK_BT_INO,
	.magic = XK_IBT_CRC_MAGIC,
	.rec_len = sizeof(struct xk_inobt_rec),
	.key_len = sizeof(struct xk_inobt_key),
	.ptr_len = 4,
	.buf_ops = &ino_buf_ops,
	.rec_keys = ino_rec_keys,
	.key_decode = ino_key_decode,
	.recs_inorder = ino_recs_inorder,
	.rec_check = ino_rec_check,
};

const struct xk_btree_ops xk_finobt_ops = {
	.name = "finobt",
	.btnum = XK_BT_FINO,
	.magic = XK_FIBT_CRC_MAGIC,
	.rec_len = sizeof(struct xk_inobt_rec),
	.key_len = sizeof(struct xk_inobt_key),
	.ptr_len = 4,
	.buf_ops = &fino_buf_ops,
	.rec_keys = ino_rec_keys,
	.key_decode = ino_key_decode,
	.recs_inorder = ino_recs_inorder,
	.rec_check = ino_rec_check,
};

static int
ino_verify(struct xk_buf *bp, struct xk_fail *f)
{
	return xk_btree_block_verify(&xk_inobt_ops, bp, f);
}

static int
fino_verify(struct xk_buf *bp, struct xk_fail *f)
{
	return xk_btree_block_verify(&xk_finobt_ops, bp, f);
}
