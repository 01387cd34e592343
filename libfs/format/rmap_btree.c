// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Reverse-mapping btree: who owns each extent of an AG.  Records are
 * (start block, length, owner, offset+flags), ordered by (start, owner,
 * offset).  With reflink two records may cover the same blocks, so the
 * tree overlaps: node keys come as (low, high) pairs.
 */
#include <xfskit/libfs.h>

struct rmap_irec {
	uint32_t start, len;
	uint64_t owner, offset;	/* offset keeps its flag bits */
};

static void
rmap_rec_decode(const void *rec, struct rmap_irec *r)
{
	const struct xk_rmap_rec *d = rec;

	r->start = xk_be32_get(d->rm_startblock);
	r->len = xk_be32_get(d->rm_blockcount);
	r->owner = xk_be64_get(d->rm_owner);
	r->offset = xk_be64_get(d->rm_offset);
}

/* The unwritten flag is a property of the mapping, not of the key. */
static uint64_t
key_offset(uint64_t off)
{
	return off & ~XK_RMAP_OFF_UNWRITTEN;
}

static void
rmap_rec_keys(const void *rec, struct xk_bkey *lo, struct xk_bkey *hi)
{
	struct rmap_irec r;

	rmap_rec_decode(rec, &r);
	lo->k[0] = r.start;
	lo->k[1] = r.owner;
	lo->k[2] = key_offset(r.offset);
	*hi = *lo;
	hi->k[0] = (uint64_t)r.start + r.len - 1;
	if (!xk_rmap_owner_is_special(r.owner) &&
	    !(r.offset & XK_RMAP_OFF_BMBT_BLOCK))
		hi->k[2] += r.len - 1;
}

static void
rmap_key_decode(const void *key, struct xk_bkey *k)
{
	const struct xk_rmap_key *d = key;

	k->k[0] = xk_be32_get(d->rm_startblock);
	k->k[1] = xk_be64_get(d->rm_owner);
	k->k[2] = key_offset(xk_be64_get(d->rm_offset));
}

static int
rmap_recs_inorder(const void *a, const void *b)
{
	struct xk_bkey ka, kb, h;

	rmap_rec_keys(a, &ka, &h);
	rmap_rec_keys(b, &kb, &h);
	return xk_bkey_cmp(&ka, &kb) < 0;
}

/*
 * Rules: non-empty and inside the AG; a special owner has no offset and
 * no flags (it is not file data); an inode owner is a possible inode
 * number; a bmbt block is not in the attr fork's data nor unwritten.
 */
static int
rmap_rec_check(struct xk_mount *mp, int64_t agno, const void *rec,
	       struct xk_fail *f)
{
	struct rmap_irec r;
	uint32_t agblocks = agno >= 0 ? xk_ag_blocks(mp, (uint32_t)agno) :
			    mp->g.agblocks;

	rmap_rec_decode(rec, &r);
	if (r.len == 0)
		return xk_fail_set(f, "blockcount", "mapping at %u has zero "
				   "length", r.start);
	if ((uint64_t)r.start + r.len > agblocks)
		return xk_fail_set(f, "startblock", "mapping %u+%u runs past "
				   "the AG's %u blocks", r.start, r.len,
				   agblocks);
	if (xk_rmap_owner_is_special(r.owner)) {
		if (r.owner == XK_RMAP_OWN_NULL ||
		    r.owner == XK_RMAP_OWN_UNKNOWN)
			return xk_fail_set(f, "owner", "mapping at %u has "
					   "owner %lld", r.start,
					   (long long)r.owner);
		if (r.offset)
			return xk_fail_set(f, "offset", "metadata mapping at "
					   "%u has offset or flags 0x%llx",
					   r.start,
					   (unsigned long long)r.offset);
		return 0;
	}
	if (!xk_ino_valid(mp, r.owner))
		return xk_fail_set(f, "owner", "mapping at %u owned by "
				   "impossible inode %llu", r.start,
				   (unsigned long long)r.owner);
	if ((r.offset & XK_RMAP_OFF_BMBT_BLOCK) &&
	    (r.offset & (XK_RMAP_OFF_UNWRITTEN | XK_RMAP_OFF_MASK)))
		return xk_fail_set(f, "offset", "bmbt block mapping at %u "
				   "has an offset or unwritten flag", r.start);
	if ((r.offset & XK_RMAP_OFF_ATTR_FORK) &&
	    (r.offset & XK_RMAP_OFF_UNWRITTEN))
		return xk_fail_set(f, "offset", "attr fork mapping at %u is "
				   "unwritten", r.start);
	if (r.offset & ~(XK_RMAP_OFF_FLAGS | XK_RMAP_OFF_MASK))
		return xk_fail_set(f, "offset", "mapping at %u has unknown "
				   "flag bits", r.start);
	return 0;
}

static int rmap_verify(struct xk_buf *bp, struct xk_fail *f);

static const struct xk_buf_ops rmap_buf_ops = {
	.name = "rmapbt block",
	.crc_off = offsetof(struct xk_btree_sblock, bb_crc),
	.lsn_off = offsetof(struct xk_btree_sblock, bb_lsn),
	.verify = rmap_verify,
};

const struct xk_btree_ops xk_rmapbt_ops = {
	.name = "rmapbt",
	.btnum = XK_BT_RMAP,
	.magic = XK_RMAP_CRC_MAGIC,
	.overlapping = 1,
	.rec_len = sizeof(struct xk_rmap_rec),
	.key_len = sizeof(struct xk_rmap_key),
	.ptr_len = 4,
	.buf_ops = &rmap_buf_ops,
	.rec_keys = rmap_rec_keys,
	.key_decode = rmap_key_decode,
	.recs_inorder = rmap_recs_inorder,
	.rec_check = rmap_rec_check,
};

static int
rmap_verify(struct xk_buf *bp, struct xk_fail *f)
{
	return xk_btree_block_verify(&xk_rmapbt_ops, bp, f);
}
