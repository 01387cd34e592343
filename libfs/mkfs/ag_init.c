// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The AG header initializers: one table entry per header sector and per
 * btree root block of a fresh AG, each saying where the block lives, its
 * verifier, and how to fill it from a struct xk_ag_init.  mkfs walks the
 * table for every AG; repair rebuilds a header by running one entry, so
 * both write headers with the same code.
 *
 * Buffers are taken zeroed with xk_buf_get(), filled, and dirtied; the
 * verifiers run and the CRCs are computed when the cache is flushed.
 */
#include <errno.h>
#include <string.h>

#include <xfskit/init.h>
#include <xfskit/libfs.h>

/* Largest number of leaf records a fresh root may hold. */
#define ROOT_MAX_RECS	XK_AGINIT_MAX_RMAP

static void
hdr_where(const struct xk_mount *mp, const struct xk_ag_init *ai,
	  unsigned int sector, uint64_t *daddr, uint32_t *len)
{
	*daddr = xk_ag_hdr_daddr(mp, ai->agno, sector);
	*len = mp->g.sectsize;
}

static void
sb_where(const struct xk_mount *mp, const struct xk_ag_init *ai,
	 uint64_t *daddr, uint32_t *len)
{
	hdr_where(mp, ai, XK_SB_SECTOR, daddr, len);
}

static void
agf_where(const struct xk_mount *mp, const struct xk_ag_init *ai,
	  uint64_t *daddr, uint32_t *len)
{
	hdr_where(mp, ai, XK_AGF_SECTOR, daddr, len);
}

static void
agi_where(const struct xk_mount *mp, const struct xk_ag_init *ai,
	  uint64_t *daddr, uint32_t *len)
{
	hdr_where(mp, ai, XK_AGI_SECTOR, daddr, len);
}

static void
agfl_where(const struct xk_mount *mp, const struct xk_ag_init *ai,
	   uint64_t *daddr, uint32_t *len)
{
	hdr_where(mp, ai, XK_AGFL_SECTOR, daddr, len);
}

static void
root_where(const struct xk_mount *mp, const struct xk_ag_init *ai,
	   enum xk_btnum bt, uint64_t *daddr, uint32_t *len)
{
	*daddr = xk_agb_to_daddr(mp, ai->agno, ai->roots[bt]);
	*len = mp->g.blocksize;
}

#define ROOT_WHERE(fn, bt) \
static void \
fn(const struct xk_mount *mp, const struct xk_ag_init *ai, \
   uint64_t *daddr, uint32_t *len) \
{ \
	root_where(mp, ai, bt, daddr, len); \
}

ROOT_WHERE(bno_where, XK_BT_BNO)
ROOT_WHERE(cnt_where, XK_BT_CNT)
ROOT_WHERE(ino_where, XK_BT_INO)
ROOT_WHERE(fino_where, XK_BT_FINO)
ROOT_WHERE(rmap_where, XK_BT_RMAP)
ROOT_WHERE(refc_where, XK_BT_REFC)

static int
never_skip(const struct xk_mount *mp)
{
	(void)mp;
	return 0;
}

static int
skip_fino(const struct xk_mount *mp)
{
	return !mp->g.has_finobt;
}

static int
skip_rmap(const struct xk_mount *mp)
{
	return !mp->g.has_rmapbt;
}

static int
skip_refc(const struct xk_mount *mp)
{
	return !mp->g.has_reflink;
}

static const struct xk_buf_ops *
sb_ops(void)
{
	return &xk_sb_buf_ops;
}

static const struct xk_buf_ops *
agf_ops(void)
{
	return &xk_agf_buf_ops;
}

static const struct xk_buf_ops *
agi_ops(void)
{
	return &xk_agi_buf_ops;
}

static const struct xk_buf_ops *
agfl_ops(void)
{
	return &xk_agfl_buf_ops;
}

#define ROOT_OPS(fn, bt) \
static const struct xk_buf_ops * \
fn(void) \
{ \
	return xk_btree_ops_get(bt)->buf_ops; \
}

ROOT_OPS(bno_ops, XK_BT_BNO)
ROOT_OPS(cnt_ops, XK_BT_CNT)
ROOT_OPS(ino_ops, XK_BT_INO)
ROOT_OPS(fino_ops, XK_BT_FINO)
ROOT_OPS(rmap_ops, XK_BT_RMAP)
ROOT_OPS(refc_ops, XK_BT_REFC)

static int
sb_fill(const struct xk_mount *mp, const struct xk_ag_init *ai,
	const struct xk_sb *sb, uint8_t *buf, uint32_t len)
{
	(void)mp;
	(void)ai;
	if (len < sizeof(struct xk_dsb))
		return -EINVAL;
	xk_sb_encode((struct xk_dsb *)buf, sb);
	return 0;
}

static int
agf_fill(const struct xk_mount *mp, const struct xk_ag_init *ai,
	 const struct xk_sb *sb, uint8_t *buf, uint32_t len)
{
	struct xk_agf *agf = (struct xk_agf *)buf;
	uint32_t longest, freeblks = xk_ag_init_freeblks(ai, &longest);

	(void)sb;
	if (len < sizeof(*agf))
		return -EINVAL;
	xk_be32_set(&agf->agf_magicnum, XK_AGF_MAGIC);
	xk_be32_set(&agf->agf_versionnum, XK_AGF_VERSION);
	xk_be32_set(&agf->agf_seqno, ai->agno);
	xk_be32_set(&agf->agf_length, ai->length);
	xk_be32_set(&agf->agf_roots[XK_AGF_BNO], ai->roots[XK_BT_BNO]);
	xk_be32_set(&agf->agf_roots[XK_AGF_CNT], ai->roots[XK_BT_CNT]);
	xk_be32_set(&agf->agf_levels[XK_AGF_BNO], 1);
	xk_be32_set(&agf->agf_levels[XK_AGF_CNT], 1);
	if (mp->g.has_rmapbt) {
		xk_be32_set(&agf->agf_roots[XK_AGF_RMAP],
			    ai->roots[XK_BT_RMAP]);
		xk_be32_set(&agf->agf_levels[XK_AGF_RMAP], 1);
		xk_be32_set(&agf->agf_rmap_blocks, 1);
	}
	/* The free list starts at slot 1, as the kernel's AG init sets it. */
	xk_be32_set(&agf->agf_flfirst, 1);
	xk_be32_set(&agf->agf_fllast, ai->agfl_count);
	xk_be32_set(&agf->agf_flcount, ai->agfl_count);
	xk_be32_set(&agf->agf_freeblks, freeblks);
	xk_be32_set(&agf->agf_longest, longest);
	memcpy(agf->agf_uuid, mp->meta_uuid, 16);
	if (mp->g.has_reflink) {
		xk_be32_set(&agf->agf_refcount_root, ai->roots[XK_BT_REFC]);
		xk_be32_set(&agf->agf_refcount_level, 1);
		xk_be32_set(&agf->agf_refcount_blocks, 1);
	}
	return 0;
}

static int
agi_fill(const struct xk_mount *mp, const struct xk_ag_init *ai,
	 const struct xk_sb *sb, uint8_t *buf, uint32_t len)
{
	struct xk_agi *agi = (struct xk_agi *)buf;
	uint32_t agino = ai->chunk_agbno << mp->g.inopblog;

	(void)sb;
	if (len < sizeof(*agi))
		return -EINVAL;
	xk_be32_set(&agi->agi_magicnum, XK_AGI_MAGIC);
	xk_be32_set(&agi->agi_versionnum, XK_AGI_VERSION);
	xk_be32_set(&agi->agi_seqno, ai->agno);
	xk_be32_set(&agi->agi_length, ai->length);
	xk_be32_set(&agi->agi_root, ai->roots[XK_BT_INO]);
	xk_be32_set(&agi->agi_level, 1);
	if (ai->chunk_blocks) {
		xk_be32_set(&agi->agi_count, ai->chunk_inodes);
		xk_be32_set(&agi->agi_freecount,
			    ai->chunk_inodes - ai->chunk_used);
		xk_be32_set(&agi->agi_newino, agino);
	} else {
		xk_be32_set(&agi->agi_newino, XK_NULLAGINO);
	}
	xk_be32_set(&agi->agi_dirino, XK_NULLAGINO);
	for (int i = 0; i < XK_AGI_UNLINKED_BUCKETS; i++)
		xk_be32_set(&agi->agi_unlinked[i], XK_NULLAGINO);
	memcpy(agi->agi_uuid, mp->meta_uuid, 16);
	if (mp->g.has_finobt) {
		xk_be32_set(&agi->agi_free_root, ai->roots[XK_BT_FINO]);
		xk_be32_set(&agi->agi_free_level, 1);
	}
	if (mp->g.has_inobtcnt) {
		xk_be32_set(&agi->agi_iblocks, 1);
		if (mp->g.has_finobt)
			xk_be32_set(&agi->agi_fblocks, 1);
	}
	return 0;
}

static int
agfl_fill(const struct xk_mount *mp, const struct xk_ag_init *ai,
	  const struct xk_sb *sb, uint8_t *buf, uint32_t len)
{
	struct xk_agfl *agfl = (struct xk_agfl *)buf;
	uint32_t size = xk_agfl_size(len);

	(void)sb;
	if (ai->agfl_count + 1 > size)
		return -EINVAL;
	xk_be32_set(&agfl->agfl_magicnum, XK_AGFL_MAGIC);
	xk_be32_set(&agfl->agfl_seqno, ai->agno);
	memcpy(agfl->agfl_uuid, mp->meta_uuid, 16);
	for (uint32_t i = 0; i < size; i++)
		xk_be32_set(xk_agfl_bno(buf, i), XK_NULLAGBLOCK);
	for (uint32_t i = 0; i < ai->agfl_count; i++)
		xk_be32_set(xk_agfl_bno(buf, i + 1), ai->agfl[i]);
	return 0;
}

/* A short-form leaf header with no siblings, owned by the AG. */
static void
root_header(const struct xk_mount *mp, const struct xk_ag_init *ai,
	    enum xk_btnum bt, uint8_t *buf, uint16_t numrecs)
{
	struct xk_btree_sblock *h = (struct xk_btree_sblock *)buf;

	xk_be32_set(&h->bb_magic, xk_btree_ops_get(bt)->magic);
	xk_be16_set(&h->bb_level, 0);
	xk_be16_set(&h->bb_numrecs, numrecs);
	xk_be32_set(&h->bb_leftsib, XK_NULLAGBLOCK);
	xk_be32_set(&h->bb_rightsib, XK_NULLAGBLOCK);
	xk_be64_set(&h->bb_blkno, xk_agb_to_daddr(mp, ai->agno,
						  ai->roots[bt]));
	memcpy(h->bb_uuid, mp->meta_uuid, 16);
	xk_be32_set(&h->bb_owner, ai->agno);
}

static int
alloc_fill(const struct xk_mount *mp, const struct xk_ag_init *ai,
	   enum xk_btnum bt, uint8_t *buf)
{
	const struct xk_btree_ops *ops = xk_btree_ops_get(bt);
	struct xk_ag_extent recs[XK_AGINIT_MAX_FREE];
	uint32_t n = ai->nfree;

	memcpy(recs, ai->free, n * sizeof(recs[0]));
	if (bt == XK_BT_CNT) {
		/* By size, then by start. */
		for (uint32_t i = 1; i < n; i++) {
			struct xk_ag_extent r = recs[i];
			uint32_t j = i;

			while (j > 0 && (recs[j - 1].len > r.len ||
					 (recs[j - 1].len == r.len &&
					  recs[j - 1].start > r.start))) {
				recs[j] = recs[j - 1];
				j--;
			}
			recs[j] = r;
		}
	}
	root_header(mp, ai, bt, buf, (uint16_t)n);
	for (uint32_t i = 0; i < n; i++) {
		struct xk_alloc_rec *r = xk_btree_rec(ops, buf, i);

		xk_be32_set(&r->ar_startblock, recs[i].start);
		xk_be32_set(&r->ar_blockcount, recs[i].len);
	}
	return 0;
}

static int
bno_fill(const struct xk_mount *mp, const struct xk_ag_init *ai,
	 const struct xk_sb *sb, uint8_t *buf, uint32_t len)
{
	(void)sb;
	(void)len;
	return alloc_fill(mp, ai, XK_BT_BNO, buf);
}

static int
cnt_fill(const struct xk_mount *mp, const struct xk_ag_init *ai,
	 const struct xk_sb *sb, uint8_t *buf, uint32_t len)
{
	(void)sb;
	(void)len;
	return alloc_fill(mp, ai, XK_BT_CNT, buf);
}

/*
 * Inode btree records for the chunk: one per 64 inodes; the first
 * chunk_used inodes are in use.  With only_free (finobt) records without
 * a free inode are left out.
 */
static int
inobt_fill(const struct xk_mount *mp, const struct xk_ag_init *ai,
	   enum xk_btnum bt, uint8_t *buf)
{
	const struct xk_btree_ops *ops = xk_btree_ops_get(bt);
	uint32_t agino = ai->chunk_agbno << mp->g.inopblog;
	uint16_t n = 0;

	if (ai->chunk_blocks) {
		for (uint32_t i = 0; i < ai->chunk_inodes;
		     i += XK_INODES_PER_CHUNK) {
			struct xk_inobt_rec *r = xk_btree_rec(ops, buf, n);
			uint32_t used = ai->chunk_used > i ?
					ai->chunk_used - i : 0;
			uint64_t mask;

			if (used > XK_INODES_PER_CHUNK)
				used = XK_INODES_PER_CHUNK;
			if (bt == XK_BT_FINO && used == XK_INODES_PER_CHUNK)
				continue;
			mask = used == XK_INODES_PER_CHUNK ? 0 :
			       ~0ULL << used;
			xk_be32_set(&r->ir_startino, agino + i);
			if (mp->g.has_sparse) {
				xk_be16_set(&r->ir_u.sp.ir_holemask, 0);
				r->ir_u.sp.ir_count = XK_INODES_PER_CHUNK;
				r->ir_u.sp.ir_freecount =
					(uint8_t)(XK_INODES_PER_CHUNK - used);
			} else {
				xk_be32_set(&r->ir_u.f.ir_freecount,
					    XK_INODES_PER_CHUNK - used);
			}
			xk_be64_set(&r->ir_free, mask);
			n++;
		}
	}
	root_header(mp, ai, bt, buf, n);
	return 0;
}

static int
ino_fill(const struct xk_mount *mp, const struct xk_ag_init *ai,
	 const struct xk_sb *sb, uint8_t *buf, uint32_t len)
{
	(void)sb;
	(void)len;
	return inobt_fill(mp, ai, XK_BT_INO, buf);
}

static int
fino_fill(const struct xk_mount *mp, const struct xk_ag_init *ai,
	  const struct xk_sb *sb, uint8_t *buf, uint32_t len)
{
	(void)sb;
	(void)len;
	return inobt_fill(mp, ai, XK_BT_FINO, buf);
}

static int
rmap_fill(const struct xk_mount *mp, const struct xk_ag_init *ai,
	  const struct xk_sb *sb, uint8_t *buf, uint32_t len)
{
	const struct xk_btree_ops *ops = xk_btree_ops_get(XK_BT_RMAP);
	struct xk_ag_rmap recs[ROOT_MAX_RECS];
	uint32_t n = xk_ag_init_rmaps(mp, ai, recs, ROOT_MAX_RECS);

	(void)sb;
	if (n > xk_btree_maxrecs(ops, len, 1))
		return -ENOSPC;
	root_header(mp, ai, XK_BT_RMAP, buf, (uint16_t)n);
	for (uint32_t i = 0; i < n; i++) {
		struct xk_rmap_rec *r = xk_btree_rec(ops, buf, i);

		xk_be32_set(&r->rm_startblock, recs[i].start);
		xk_be32_set(&r->rm_blockcount, recs[i].len);
		xk_be64_set(&r->rm_owner, recs[i].owner);
		xk_be64_set(&r->rm_offset, 0);
	}
	return 0;
}

static int
refc_fill(const struct xk_mount *mp, const struct xk_ag_init *ai,
	  const struct xk_sb *sb, uint8_t *buf, uint32_t len)
{
	(void)sb;
	(void)len;
	root_header(mp, ai, XK_BT_REFC, buf, 0);
	return 0;
}

const struct xk_ag_hdr_init xk_ag_hdr_inits[] = {
	{ "superblock", never_skip, sb_where, sb_ops, sb_fill },
	{ "AGF", never_skip, agf_where, agf_ops, agf_fill },
	{ "AGI", never_skip, agi_where, agi_ops, agi_fill },
	{ "AGFL", never_skip, agfl_where, agfl_ops, agfl_fill },
	{ "bnobt root", never_skip, bno_where, bno_ops, bno_fill },
	{ "cntbt root", never_skip, cnt_where, cnt_ops, cnt_fill },
	{ "inobt root", never_skip, ino_where, ino_ops, ino_fill },
	{ "finobt root", skip_fino, fino_where, fino_ops, fino_fill },
	{ "rmapbt root", skip_rmap, rmap_where, rmap_ops, rmap_fill },
	{ "refcountbt root", skip_refc, refc_where, refc_ops, refc_fill },
	{ NULL, NULL, NULL, NULL, NULL },
};

int
xk_ag_init_write(struct xk_mount *mp, const struct xk_ag_init *ai,
		 const struct xk_sb *sb)
{
	for (const struct xk_ag_hdr_init *h = xk_ag_hdr_inits; h->name; h++) {
		struct xk_buf *bp;
		uint64_t daddr;
		uint32_t len;
		int err;

		if (h->skip(mp))
			continue;
		h->where(mp, ai, &daddr, &len);
		err = xk_buf_get(mp, daddr, len, h->ops(), &bp);
		if (err)
			return err;
		bp->agno = ai->agno;
		bp->owner = 0;
		err = h->fill(mp, ai, sb, bp->data, len);
		if (!err)
			xk_buf_dirty(bp);
		xk_buf_release(bp);
		if (err)
			return err;
	}
	return 0;
}
