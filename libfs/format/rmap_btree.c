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
 * What every rmap record obeys, in an AG or a realtime group of nblocks
 * blocks: non-empty and inside it; a special owner has no offset and no
 * flags (it is not file data); an inode owner is a possible inode
 * number.  Returns 1 when the record is an inode's and passes (the
 * caller checks its flags), 0 when it passes, or the failure.
 */
static int
rmap_check_in(struct xk_mount *mp, const struct rmap_irec *r,
	      uint64_t nblocks, struct xk_fail *f)
{
	if (r->len == 0)
		return xk_fail_set(f, "blockcount", "mapping at %u has zero "
				   "length", r->start);
	if ((uint64_t)r->start + r->len > nblocks)
		return xk_fail_set(f, "startblock", "mapping %u+%u runs past "
				   "the %llu blocks of its AG or group",
				   r->start, r->len,
				   (unsigned long long)nblocks);
	if (xk_rmap_owner_is_special(r->owner)) {
		if (r->owner == XK_RMAP_OWN_NULL ||
		    r->owner == XK_RMAP_OWN_UNKNOWN)
			return xk_fail_set(f, "owner", "mapping at %u has "
					   "owner %lld", r->start,
					   (long long)r->owner);
		if (r->offset)
			return xk_fail_set(f, "offset", "metadata mapping at "
					   "%u has offset or flags 0x%llx",
					   r->start,
					   (unsigned long long)r->offset);
		return 0;
	}
	if (!xk_ino_valid(mp, r->owner))
		return xk_fail_set(f, "owner", "mapping at %u owned by "
				   "impossible inode %llu", r->start,
				   (unsigned long long)r->owner);
	return 1;
}

/*
 * Rules: rmap_check_in's; a bmbt block is not in the attr fork's data
 * nor unwritten; an attr fork mapping is not unwritten; no unknown flag.
 */
static int
rmap_rec_check(struct xk_mount *mp, int64_t agno, const void *rec,
	       struct xk_fail *f)
{
	struct rmap_irec r;
	uint32_t agblocks = agno >= 0 ? xk_ag_blocks(mp, (uint32_t)agno) :
			    mp->g.agblocks;
	int err;

	rmap_rec_decode(rec, &r);
	err = rmap_check_in(mp, &r, agblocks, f);
	if (err <= 0)
		return err;
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

/*
 * A realtime group's rmap btree ('MAPR'): the same records and keys,
 * with group-relative realtime block numbers, in long-form blocks on the
 * data device under a root in the rmap inode's data fork.  Rules:
 * rmap_check_in's with the group's size (the realtime superblock is
 * OWN_FS); an inode's mappings are file data only (no bmbt block, no
 * attr fork: those live on the data device).
 */
static int
rtrmap_rec_check(struct xk_mount *mp, int64_t agno, const void *rec,
		 struct xk_fail *f)
{
	struct rmap_irec r;
	int err;

	(void)agno;
	rmap_rec_decode(rec, &r);
	err = rmap_check_in(mp, &r, (uint64_t)mp->sb.rgextents *
				    mp->sb.rextsize, f);
	if (err <= 0)
		return err;
	if (r.offset & ~(XK_RMAP_OFF_UNWRITTEN | XK_RMAP_OFF_MASK))
		return xk_fail_set(f, "offset", "realtime mapping at %u has "
				   "flags 0x%llx", r.start,
				   (unsigned long long)(r.offset &
							~XK_RMAP_OFF_MASK));
	return 0;
}

static int rtrmap_verify(struct xk_buf *bp, struct xk_fail *f);

static const struct xk_buf_ops rtrmap_buf_ops = {
	.name = "rtrmapbt block",
	.crc_off = offsetof(struct xk_btree_lblock, bb_crc),
	.lsn_off = offsetof(struct xk_btree_lblock, bb_lsn),
	.verify = rtrmap_verify,
};

const struct xk_btree_ops xk_rtrmapbt_ops = {
	.name = "rtrmapbt",
	.btnum = XK_BT_RTRMAP,
	.magic = XK_RTRMAP_CRC_MAGIC,
	.long_ptrs = 1,
	.overlapping = 1,
	.iroot_leaf = 1,
	.rec_len = sizeof(struct xk_rmap_rec),
	.key_len = sizeof(struct xk_rmap_key),
	.ptr_len = 8,
	.buf_ops = &rtrmap_buf_ops,
	.rec_keys = rmap_rec_keys,
	.key_decode = rmap_key_decode,
	.recs_inorder = rmap_recs_inorder,
	.rec_check = rtrmap_rec_check,
};

static int
rtrmap_verify(struct xk_buf *bp, struct xk_fail *f)
{
	return xk_btree_block_verify(&xk_rtrmapbt_ops, bp, f);
}
