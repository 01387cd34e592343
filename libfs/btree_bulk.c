// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Bottom-up btree construction (see include/xfskit/btree_bulk.h).
 */
#include <stdlib.h>
#include <string.h>

#include <xfskit/libfs.h>
#include <xfskit/btree_bulk.h>

static uint32_t
fill_of(uint32_t want, uint32_t max)
{
	if (want == 0 || want > max)
		return max;
	return want < 2 ? 2 : want;
}

/* Blocks needed to hold n items at `fill` per block. */
static uint64_t
blocks_for(uint64_t n, uint32_t fill)
{
	return n == 0 ? 1 : (n + fill - 1) / fill;
}

/*
 * A caller's shape: every level's counts add up to the blocks (or
 * records) below, each block holds 1 to max entries, one root.
 */
static int
plan_counts(struct xk_mount *mp, struct xk_btree_bulk *bb, uint64_t nrecs,
	    uint32_t lmax, uint32_t nmax)
{
	if (bb->levels == 0 || bb->levels > XK_BTREE_MAXLEVELS ||
	    bb->levels > mp->g.maxlevels[bb->ops->btnum] ||
	    bb->level_blocks[bb->levels - 1] != 1)
		return -EINVAL;
	bb->blocks = 0;
	for (unsigned int l = 0; l < bb->levels; l++) {
		uint64_t sum = 0;

		for (uint64_t i = 0; i < bb->level_blocks[l]; i++) {
			uint32_t c = bb->counts[l][i];

			if (c == 0 || c > (l ? nmax : lmax))
				return -EINVAL;
			sum += c;
		}
		if (sum != (l ? bb->level_blocks[l - 1] : nrecs))
			return -EINVAL;
		bb->blocks += bb->level_blocks[l];
	}
	return 0;
}

int
xk_btree_bulk_plan(struct xk_mount *mp, struct xk_btree_bulk *bb,
		   uint64_t nrecs)
{
	uint32_t lmax = xk_btree_maxrecs(bb->ops, mp->g.blocksize, 1);
	uint32_t nmax = xk_btree_maxrecs(bb->ops, mp->g.blocksize, 0);
	uint32_t lfill = fill_of(bb->leaf_fill, lmax);
	uint32_t nfill = fill_of(bb->node_fill, nmax);
	uint64_t n = blocks_for(nrecs, lfill);

	if (bb->counts)
		return plan_counts(mp, bb, nrecs, lmax, nmax);
	bb->levels = 0;
	bb->blocks = 0;
	for (;;) {
		if (bb->levels == XK_BTREE_MAXLEVELS)
			return -EFBIG;
		bb->level_blocks[bb->levels++] = n;
		bb->blocks += n;
		if (n == 1)
			break;
		n = blocks_for(n, nfill);
	}
	if (bb->levels > mp->g.maxlevels[bb->ops->btnum])
		return -EFBIG;
	return 0;
}

/*
 * Split `total` items over `nblocks` blocks of at most `fill`: full
 * blocks, with the remainder shared by the last two so that none is
 * left nearly empty.  Returns how many go into block i.
 */
static uint64_t
share(uint64_t total, uint64_t nblocks, uint32_t fill, uint64_t i)
{
	uint64_t before = (nblocks >= 2) ? (nblocks - 2) * (uint64_t)fill : 0;
	uint64_t rest;

	if (nblocks == 1)
		return total;
	if (i + 2 < nblocks)
		return fill;
	rest = total - before;
	return i + 2 == nblocks ? (rest + 1) / 2 : rest / 2;
}

static void
put_ptr(const struct xk_btree_ops *ops, void *p, uint64_t v)
{
	if (ops->long_ptrs)
		xk_put_be64(p, v);
	else
		xk_put_be32(p, (uint32_t)v);
}

static uint64_t
blk_daddr(struct xk_mount *mp, const struct xk_btree_bulk *bb, uint64_t b)
{
	if (bb->ops->long_ptrs)
		return xk_fsb_to_daddr(mp, b);
	return xk_agb_to_daddr(mp, (uint32_t)bb->agno, (uint32_t)b);
}

/* A fresh block with its header; siblings are set by the caller. */
static int
new_block(struct xk_mount *mp, const struct xk_btree_bulk *bb, uint64_t b,
	  uint16_t level, uint16_t numrecs, uint64_t left, uint64_t right,
	  struct xk_buf **bpp)
{
	const struct xk_btree_ops *ops = bb->ops;
	uint64_t daddr = blk_daddr(mp, bb, b);
	uint8_t *d;
	int err;

	err = xk_buf_get(mp, daddr, mp->g.blocksize, ops->buf_ops, bpp);
	if (err)
		return err;
	(*bpp)->agno = bb->agno;
	(*bpp)->owner = bb->owner;
	d = (*bpp)->data;
	xk_put_be32(d, ops->magic);
	xk_put_be16(d + 4, level);
	xk_put_be16(d + 6, numrecs);
	if (ops->long_ptrs) {
		xk_put_be64(d + 8, left);
		xk_put_be64(d + 16, right);
		xk_put_be64(d + 24, daddr);
		memcpy(d + 40, mp->meta_uuid, 16);
		xk_put_be64(d + 56, bb->owner);
	} else {
		xk_put_be32(d + 8, (uint32_t)left);
		xk_put_be32(d + 12, (uint32_t)right);
		xk_put_be64(d + 16, daddr);
		memcpy(d + 32, mp->meta_uuid, 16);
		xk_put_be32(d + 48, (uint32_t)bb->agno);
	}
	return 0;
}

/*
 * Keys of one block as its parent records them: the first key of the
 * block, and for overlapping trees the highest high key in it.  Kept as
 * raw on-disk keys of the tree's key size.
 */
struct child_key {
	uint8_t	low[24];
	uint8_t	high[24];
};

/* On-disk key from a record (its low key) or the record's high key. */
static void
rec_to_disk_key(const struct xk_btree_ops *ops, const uint8_t *rec, int high,
		uint8_t *out)
{
	memset(out, 0, 24);
	switch (ops->btnum) {
	case XK_BT_BNO:
	case XK_BT_CNT:
		memcpy(out, rec, 8);	/* the key is the record */
		break;
	case XK_BT_INO:
	case XK_BT_FINO:
	case XK_BT_REFC:
		memcpy(out, rec, 4);
		break;
	case XK_BT_RMAP: {
		struct xk_bkey lo, hi;

		ops->rec_keys(rec, &lo, &hi);
		if (high) {
			xk_put_be32(out, (uint32_t)hi.k[0]);
			xk_put_be64(out + 4, hi.k[1]);
			/* The offset keeps its fork/bmbt flags. */
			xk_put_be64(out + 12, hi.k[2] |
				    (xk_get_be64(rec + 16) &
				     (XK_RMAP_OFF_ATTR_FORK |
				      XK_RMAP_OFF_BMBT_BLOCK)));
		} else {
			memcpy(out, rec, 4);
			memcpy(out + 4, rec + 8, 8);
			xk_put_be64(out + 12, xk_get_be64(rec + 16) &
				    ~XK_RMAP_OFF_UNWRITTEN);
		}
		break;
	}
	case XK_BT_BMAP: {
		struct xk_bkey lo, hi;

		ops->rec_keys(rec, &lo, &hi);
		xk_put_be64(out, lo.k[0]);
		break;
	}
	default:
		break;
	}
}

/* out = the larger of out and cand, as decoded keys compare. */
static void
max_key(const struct xk_btree_ops *ops, uint8_t *out, const uint8_t *cand)
{
	struct xk_bkey a, b;

	ops->key_decode(out, &a);
	ops->key_decode(cand, &b);
	if (xk_bkey_cmp(&b, &a) > 0)
		memcpy(out, cand, ops->key_len);
}

int
xk_btree_bulk_load(struct xk_mount *mp, struct xk_btree_bulk *bb,
		   const void *recs, uint64_t nrecs, const uint64_t *blocks,
		   uint64_t *root)
{
	const struct xk_btree_ops *ops = bb->ops;
	uint32_t lfill = fill_of(bb->leaf_fill,
				 xk_btree_maxrecs(ops, mp->g.blocksize, 1));
	uint32_t nfill = fill_of(bb->node_fill,
				 xk_btree_maxrecs(ops, mp->g.blocksize, 0));
	uint32_t nmax = xk_btree_maxrecs(ops, mp->g.blocksize, 0);
	uint64_t null = xk_btree_nullptr(ops);
	struct child_key *keys = NULL, *up = NULL;
	const uint8_t *r = recs;
	uint64_t base = 0, done = 0;
	int err;

	err = xk_btree_bulk_plan(mp, bb, nrecs);
	if (err)
		return err;
	if (ops->key_len > 24)
		return -EINVAL;
	keys = calloc(bb->level_blocks[0], sizeof(*keys));
	if (!keys)
		return -ENOMEM;

	/* Leaves. */
	for (uint64_t i = 0; i < bb->level_blocks[0]; i++) {
		uint64_t n = bb->counts ? bb->counts[0][i] :
			     share(nrecs, bb->level_blocks[0], lfill, i);
		uint64_t b = blocks[base + i];
		struct xk_buf *bp;

		err = new_block(mp, bb, b, 0, (uint16_t)n,
				i ? blocks[base + i - 1] : null,
				i + 1 < bb->level_blocks[0] ?
				blocks[base + i + 1] : null, &bp);
		if (err)
			goto out;
		for (uint64_t k = 0; k < n; k++) {
			const uint8_t *rec = r + (done + k) * ops->rec_len;
			uint8_t hk[24];

			memcpy(xk_btree_rec(ops, bp->data, (uint32_t)k), rec,
			       ops->rec_len);
			if (k == 0) {
				rec_to_disk_key(ops, rec, 0, keys[i].low);
				rec_to_disk_key(ops, rec, 1, keys[i].high);
			} else if (ops->overlapping) {
				rec_to_disk_key(ops, rec, 1, hk);
				max_key(ops, keys[i].high, hk);
			}
		}
		done += n;
		xk_buf_dirty(bp);
		xk_buf_release(bp);
	}
	base += bb->level_blocks[0];

	/* Nodes, level by level. */
	for (unsigned int l = 1; l < bb->levels; l++) {
		uint64_t below = bb->level_blocks[l - 1];
		uint64_t nb = bb->level_blocks[l];
		uint64_t child = 0;

		up = calloc(nb, sizeof(*up));
		if (!up) {
			err = -ENOMEM;
			goto out;
		}
		for (uint64_t i = 0; i < nb; i++) {
			uint64_t n = bb->counts ? bb->counts[l][i] :
				     share(below, nb, nfill, i);
			uint64_t b = blocks[base + i];
			struct xk_buf *bp;

			err = new_block(mp, bb, b, (uint16_t)l, (uint16_t)n,
					i ? blocks[base + i - 1] : null,
					i + 1 < nb ? blocks[base + i + 1] : null,
					&bp);
			if (err)
				goto out;
			for (uint64_t k = 0; k < n; k++, child++) {
				memcpy(xk_btree_key(ops, bp->data, (uint32_t)k),
				       keys[child].low, ops->key_len);
				if (ops->overlapping)
					memcpy(xk_btree_high_key(ops, bp->data,
								 (uint32_t)k),
					       keys[child].high, ops->key_len);
				put_ptr(ops, xk_btree_ptr(ops, bp->data, nmax,
							  (uint32_t)k),
					blocks[base - below + child]);
				if (k == 0)
					up[i] = keys[child];
				else if (ops->overlapping)
					max_key(ops, up[i].high,
						keys[child].high);
			}
			xk_buf_dirty(bp);
			xk_buf_release(bp);
		}
		free(keys);
		keys = up;
		up = NULL;
		base += nb;
	}
	*root = blocks[base - 1];
out:
	free(keys);
	free(up);
	return err;
}
