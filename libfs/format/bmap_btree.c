// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Block-map btree (bmbt): an inode fork's extent map when it outgrows
 * the inode.  Long-form blocks, owned by the inode, with 64-bit pointers.
 * Its root lives in the inode fork; these are the blocks below it.
 * The record packing lives with the inode fork in format/dinode.h.
 */
#include <xfskit/libfs.h>
#include <xfskit/format/dinode.h>

static void
bmbt_rec_keys(const void *rec, struct xk_bkey *lo, struct xk_bkey *hi)
{
	struct xk_bmbt_irec r;

	xk_bmbt_rec_unpack(rec, &r);
	lo->k[0] = r.startoff;
	lo->k[1] = lo->k[2] = 0;
	*hi = *lo;
	hi->k[0] = r.startoff + r.blockcount - 1;
}

static void
bmbt_key_decode(const void *key, struct xk_bkey *k)
{
	k->k[0] = xk_get_be64(key);
	k->k[1] = k->k[2] = 0;
}

static int
bmbt_recs_inorder(const void *a, const void *b)
{
	struct xk_bmbt_irec x, y;

	xk_bmbt_rec_unpack(a, &x);
	xk_bmbt_rec_unpack(b, &y);
	return x.startoff + x.blockcount <= y.startoff;
}

/* Rules: non-empty; the blocks lie inside one AG; the offset range fits. */
static int
bmbt_rec_check(struct xk_mount *mp, int64_t agno, const void *rec,
	       struct xk_fail *f)
{
	struct xk_bmbt_irec r;
	uint64_t off, blk, len;

	(void)agno;
	xk_bmbt_rec_unpack(rec, &r);
	off = r.startoff;
	blk = r.startblock;
	len = r.blockcount;
	if (len == 0)
		return xk_fail_set(f, "blockcount", "extent at offset %llu "
				   "has zero length",
				   (unsigned long long)off);
	if (!xk_fsbext_valid(mp, blk, len))
		return xk_fail_set(f, "startblock", "extent %llu+%llu is "
				   "outside the filesystem",
				   (unsigned long long)blk,
				   (unsigned long long)len);
	if (!xk_fileext_valid(mp, off, len))
		return xk_fail_set(f, "startoff", "extent at offset %llu "
				   "runs past the largest file offset",
				   (unsigned long long)off);
	return 0;
}

static int bmbt_verify(struct xk_buf *bp, struct xk_fail *f);

static const struct xk_buf_ops bmbt_buf_ops = {
	.name = "bmbt block",
	.crc_off = offsetof(struct xk_btree_lblock, bb_crc),
	.lsn_off = offsetof(struct xk_btree_lblock, bb_lsn),
	.verify = bmbt_verify,
};

const struct xk_btree_ops xk_bmbt_ops = {
	.name = "bmbt",
	.btnum = XK_BT_BMAP,
	.magic = XK_BMAP_CRC_MAGIC,
	.long_ptrs = 1,
	.rec_len = 16,
	.key_len = 8,
	.ptr_len = 8,
	.buf_ops = &bmbt_buf_ops,
	.rec_keys = bmbt_rec_keys,
	.key_decode = bmbt_key_decode,
	.recs_inorder = bmbt_recs_inorder,
	.rec_check = bmbt_rec_check,
};

static int
bmbt_verify(struct xk_buf *bp, struct xk_fail *f)
{
	return xk_btree_block_verify(&xk_bmbt_ops, bp, f);
}
