// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Opening and closing a builder: loading each AG's state from its
 * btrees (populate), or starting every AG empty for repair to claim
 * what it observed.
 *
 * When loading, the blocks of the AG's own btrees and of its AGFL are
 * counted free straight away: commit builds new trees, so the old blocks
 * are just space (their reverse mappings are dropped with them).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "write_priv.h"

struct xk_mount *
xk_bld_mount(const struct xk_bld *b)
{
	return b->mp;
}

uint64_t
xk_bld_rootino(const struct xk_bld *b)
{
	return b->rootino;
}

void
xk_bld_set_time(struct xk_bld *b, int64_t sec, uint32_t nsec)
{
	b->now_sec = sec;
	b->now_nsec = nsec;
}

void
xk_bld_free(struct xk_bld *b)
{
	if (!b)
		return;
	for (uint32_t i = 0; i < b->agcount; i++) {
		free(b->ags[i].free);
		free(b->ags[i].rmap);
		free(b->ags[i].chunk);
		free(b->ags[i].refc);
	}
	free(b->pending);
	free(b->ags);
	free(b->iobuf);
	free(b);
}

static int
bld_alloc_handle(struct xk_mount *mp, int cached, struct xk_bld **bp)
{
	struct xk_bld *b;

	*bp = NULL;
	if ((mp->flags & XK_MOUNT_RDONLY) && !cached)
		return XK_ERDONLY;
	b = calloc(1, sizeof(*b));
	if (!b)
		return -ENOMEM;
	b->mp = mp;
	b->agcount = mp->g.agcount;
	b->rootino = mp->sb.rootino;
	b->ags = calloc(b->agcount, sizeof(*b->ags));
	if (!b->ags) {
		free(b);
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < b->agcount; i++) {
		b->ags[i].agno = i;
		b->ags[i].length = xk_ag_blocks(mp, i);
	}
	b->iobuf_len = 1u << 20;
	if (b->iobuf_len < mp->g.blocksize)
		b->iobuf_len = mp->g.blocksize;
	b->iobuf = malloc(b->iobuf_len);
	if (!b->iobuf) {
		xk_bld_free(b);
		return -ENOMEM;
	}
	*bp = b;
	return 0;
}

int
bld_chunk_add(struct bld_ag *ag, const struct bld_chunk *c)
{
	uint32_t i = ag->nchunk;

	if (ag->nchunk == ag->chunk_alloc) {
		uint32_t n = ag->chunk_alloc ? ag->chunk_alloc * 2 : 16;
		struct bld_chunk *p = realloc(ag->chunk, n * sizeof(*p));

		if (!p)
			return -ENOMEM;
		ag->chunk = p;
		ag->chunk_alloc = n;
	}
	while (i > 0 && ag->chunk[i - 1].startino > c->startino)
		i--;
	if (i > 0 && ag->chunk[i - 1].startino == c->startino)
		return -EEXIST;
	memmove(&ag->chunk[i + 1], &ag->chunk[i],
		(ag->nchunk - i) * sizeof(*c));
	ag->chunk[i] = *c;
	ag->nchunk++;
	ag->icount += c->count;
	for (int k = 0; k < 64; k++)
		if (!(c->holemask & (1u << (k / 4))) &&
		    (c->freemask & (1ULL << k)))
			ag->ifree++;
	if (i < ag->ichunk_cursor)
		ag->ichunk_cursor = i;
	ag->dirty = 1;
	return 0;
}

/* --- loading from the on-disk btrees --- */

struct load_ctx {
	struct xk_bld	*b;
	struct bld_ag	*ag;
	enum xk_btnum	bt;
	int		err;
	uint32_t	nbad;
	/* Blocks of the old trees, freed once every tree is read. */
	uint32_t	*old;
	uint64_t	nold, old_alloc;
};

static int
load_rec(void *ctx, const void *rec)
{
	struct load_ctx *lc = ctx;
	struct bld_ag *ag = lc->ag;
	int err = 0;

	switch (lc->bt) {
	case XK_BT_BNO: {
		const struct xk_alloc_rec *r = rec;

		err = bld_free_add(ag, xk_be32_get(r->ar_startblock),
				   xk_be32_get(r->ar_blockcount));
		break;
	}
	case XK_BT_RMAP: {
		const struct xk_rmap_rec *r = rec;
		uint64_t owner = xk_be64_get(r->rm_owner);

		/* The AG's own trees and AGFL are rebuilt on commit. */
		if (owner == XK_RMAP_OWN_AG || owner == XK_RMAP_OWN_INOBT ||
		    owner == XK_RMAP_OWN_REFC)
			break;
		err = bld_rmap_add(ag, xk_be32_get(r->rm_startblock),
				   xk_be32_get(r->rm_blockcount), owner,
				   xk_be64_get(r->rm_offset));
		break;
	}
	case XK_BT_INO: {
		const struct xk_inobt_rec *r = rec;
		struct bld_chunk c = {
			.startino = xk_be32_get(r->ir_startino),
			.freemask = xk_be64_get(r->ir_free),
		};

		if (lc->b->mp->g.has_sparse) {
			c.holemask = xk_be16_get(r->ir_u.sp.ir_holemask);
			c.count = r->ir_u.sp.ir_count;
		} else {
			c.count = 64;
		}
		err = bld_chunk_add(ag, &c);
		break;
	}
	case XK_BT_REFC: {
		const struct xk_refcount_rec *r = rec;
		uint32_t start = xk_be32_get(r->rc_startblock);
		struct bld_refc *rc;

		/* With the rmapbt, refcounts are derived on commit. */
		if (lc->b->mp->g.has_rmapbt)
			break;
		err = bld_grow((void **)&ag->refc, &ag->refc_alloc,
			       ag->nrefc + 1, sizeof(*ag->refc));
		if (err)
			break;
		rc = &ag->refc[ag->nrefc++];
		rc->start = start & ~XK_REFC_COWFLAG;
		rc->cow = !!(start & XK_REFC_COWFLAG);
		rc->len = xk_be32_get(r->rc_blockcount);
		rc->count = xk_be32_get(r->rc_refcount);
		break;
	}
	default:
		break;
	}
	if (err && !lc->err)
		lc->err = err;
	return 0;
}

static int
load_block(void *ctx, unsigned int level, uint64_t bno, struct xk_buf *bp)
{
	struct load_ctx *lc = ctx;

	(void)level;
	if (bp->error && !lc->err)
		lc->err = bp->error;
	if (lc->nold == lc->old_alloc) {
		uint64_t n = lc->old_alloc ? lc->old_alloc * 2 : 64;
		uint32_t *p = realloc(lc->old, n * sizeof(*p));

		if (!p) {
			lc->err = -ENOMEM;
			return 0;
		}
		lc->old = p;
		lc->old_alloc = n;
	}
	lc->old[lc->nold++] = (uint32_t)bno;
	return 0;
}

static void
load_fail(void *ctx, const struct xk_fail *f)
{
	struct load_ctx *lc = ctx;

	(void)f;
	if (!lc->err)
		lc->err = XK_ECORRUPT;
}

static int
load_tree(struct load_ctx *lc, enum xk_btnum bt, uint32_t root,
	  uint32_t levels, int want_recs)
{
	struct xk_btree_walk w = {
		.ops = xk_btree_ops_get(bt),
		.agno = lc->ag->agno,
		.root = root,
		.levels = levels,
		.ctx = lc,
		.rec_fn = want_recs ? load_rec : NULL,
		.block_fn = load_block,
		.fail_fn = load_fail,
	};
	int err;

	lc->bt = bt;
	err = xk_btree_walk(lc->b->mp, &w);
	return err ? err : lc->err;
}

static int
load_ag(struct xk_bld *b, struct bld_ag *ag)
{
	struct xk_mount *mp = b->mp;
	struct load_ctx lc = { .b = b, .ag = ag };
	struct xk_buf *agf_bp = NULL, *agi_bp = NULL, *agfl_bp = NULL;
	struct xk_agf *agf;
	struct xk_agi *agi;
	int err;

	err = xk_agf_read(mp, ag->agno, 0, &agf_bp);
	if (!err)
		err = xk_agi_read(mp, ag->agno, 0, &agi_bp);
	if (!err)
		err = xk_agfl_read(mp, ag->agno, 0, &agfl_bp);
	if (err)
		goto out;
	agf = xk_buf_agf(agf_bp);
	agi = xk_buf_agi(agi_bp);
	err = load_tree(&lc, XK_BT_BNO, xk_be32_get(agf->agf_roots[XK_AGF_BNO]),
			xk_be32_get(agf->agf_levels[XK_AGF_BNO]), 1);
	if (!err)
		err = load_tree(&lc, XK_BT_CNT,
				xk_be32_get(agf->agf_roots[XK_AGF_CNT]),
				xk_be32_get(agf->agf_levels[XK_AGF_CNT]), 0);
	if (!err && mp->g.has_rmapbt)
		err = load_tree(&lc, XK_BT_RMAP,
				xk_be32_get(agf->agf_roots[XK_AGF_RMAP]),
				xk_be32_get(agf->agf_levels[XK_AGF_RMAP]), 1);
	if (!err && mp->g.has_reflink)
		err = load_tree(&lc, XK_BT_REFC,
				xk_be32_get(agf->agf_refcount_root),
				xk_be32_get(agf->agf_refcount_level), 1);
	if (!err)
		err = load_tree(&lc, XK_BT_INO, xk_be32_get(agi->agi_root),
				xk_be32_get(agi->agi_level), 1);
	if (!err && mp->g.has_finobt)
		err = load_tree(&lc, XK_BT_FINO,
				xk_be32_get(agi->agi_free_root),
				xk_be32_get(agi->agi_free_level), 0);
	if (err)
		goto out;
	/* The AGFL's blocks. */
	{
		uint32_t first = xk_be32_get(agf->agf_flfirst);
		uint32_t count = xk_be32_get(agf->agf_flcount);
		uint32_t size = mp->g.agfl_size;

		if (count > size || first >= size) {
			err = XK_ECORRUPT;
			goto out;
		}
		for (uint32_t i = 0; i < count; i++) {
			uint32_t bno = xk_be32_get(*xk_agfl_bno(agfl_bp->data,
							(first + i) % size));

			lc.bt = XK_BT_NR;
			load_block(&lc, 0, bno, agfl_bp);
		}
	}
	if (lc.err) {
		err = lc.err;
		goto out;
	}
	for (uint64_t i = 0; i < lc.nold && !err; i++) {
		xk_buf_invalidate(mp, xk_agb_to_daddr(mp, ag->agno, lc.old[i]),
				  mp->g.blocksize);
		err = bld_free_add(ag, lc.old[i], 1);
	}
	ag->dirty = 0;
out:
	free(lc.old);
	xk_buf_release(agf_bp);
	xk_buf_release(agi_bp);
	xk_buf_release(agfl_bp);
	return err;
}

static int
bld_open(struct xk_mount *mp, int cached, struct xk_bld **bp)
{
	struct xk_bld *b;
	int err = bld_alloc_handle(mp, cached, &b);

	if (err)
		return err;
	for (uint32_t i = 0; i < b->agcount && !err; i++)
		err = load_ag(b, &b->ags[i]);
	if (err) {
		xk_bld_free(b);
		return err;
	}
	*bp = b;
	return 0;
}

int
xk_bld_open(struct xk_mount *mp, struct xk_bld **bp)
{
	return bld_open(mp, 0, bp);
}

int
xk_bld_open_cached(struct xk_mount *mp, struct xk_bld **bp)
{
	return bld_open(mp, 1, bp);
}

/* --- starting empty, for repair --- */

/* Blocks holding the four sector headers at the start of every AG. */
static uint32_t
hdr_blocks(const struct xk_mount *mp)
{
	uint32_t bytes = 4u << mp->g.sectlog;

	return (bytes + mp->g.blocksize - 1) >> mp->g.blocklog;
}

int
xk_bld_open_empty(struct xk_mount *mp, struct xk_bld **bp)
{
	struct xk_bld *b;
	uint32_t hb = hdr_blocks(mp);
	int err = bld_alloc_handle(mp, 0, &b);

	if (err)
		return err;
	b->from_claims = 1;
	for (uint32_t i = 0; i < b->agcount && !err; i++) {
		struct bld_ag *ag = &b->ags[i];

		err = bld_free_add(ag, hb, ag->length - hb);
		if (!err)
			err = bld_rmap_add(ag, 0, hb, XK_RMAP_OWN_FS, 0);
		ag->dirty = 1;
	}
	if (!err && mp->sb.logstart) {
		uint32_t agno = xk_fsb_to_agno(mp, mp->sb.logstart);
		uint32_t agbno = xk_fsb_to_agbno(mp, mp->sb.logstart);

		if (agno >= b->agcount)
			err = XK_ECORRUPT;
		else
			err = xk_bld_claim(b, agno, agbno, mp->g.logblocks,
					   XK_RMAP_OWN_LOG, 0, 0);
	}
	if (err) {
		xk_bld_free(b);
		return err;
	}
	*bp = b;
	return 0;
}

int
xk_bld_claim(struct xk_bld *b, uint32_t agno, uint32_t agbno, uint32_t len,
	     uint64_t owner, uint64_t offset, unsigned int flags)
{
	struct bld_ag *ag;
	uint64_t off = offset & XK_RMAP_OFF_MASK;
	int err;

	if (agno >= b->agcount || len == 0)
		return -EINVAL;
	ag = &b->ags[agno];
	if ((uint64_t)agbno + len > ag->length)
		return -EINVAL;
	if (flags & XK_BLD_ATTR_FORK)
		off |= XK_RMAP_OFF_ATTR_FORK;
	if (flags & XK_BLD_BMBT)
		off = XK_RMAP_OFF_BMBT_BLOCK |
		      (off & XK_RMAP_OFF_ATTR_FORK);
	if (flags & XK_BLD_UNWRITTEN)
		off |= XK_RMAP_OFF_UNWRITTEN;
	if (xk_rmap_owner_is_special(owner))
		off = 0;
	/*
	 * Take what is still free; blocks already claimed stay claimed
	 * (shared extents, or a second claim of the same metadata).
	 */
	for (uint32_t bno = agbno; bno < agbno + len;) {
		uint32_t i, run;
		struct bld_ext *e;

		/* The free extent containing or following bno. */
		for (i = 0; i < ag->nfree &&
		     ag->free[i].start + ag->free[i].len <= bno; i++)
			;
		if (i == ag->nfree || ag->free[i].start >= agbno + len)
			break;
		e = &ag->free[i];
		if (e->start > bno)
			bno = e->start;
		run = e->start + e->len - bno;
		if (run > agbno + len - bno)
			run = agbno + len - bno;
		err = bld_free_take(ag, bno, run);
		if (err)
			return err;
		bno += run;
	}
	return bld_rmap_add(ag, agbno, len, owner, off);
}

int
xk_bld_add_ichunk(struct xk_bld *b, uint32_t agno, uint32_t startino,
		  uint16_t holemask, uint64_t freemask)
{
	const struct xk_geom *g = &b->mp->g;
	struct bld_chunk c = {
		.startino = startino,
		.holemask = holemask,
		.freemask = freemask,
	};
	uint32_t per_bit = XK_INODES_PER_HOLEMASK_BIT;
	uint32_t last = UINT32_MAX;
	int err;

	if (agno >= b->agcount || (startino & (XK_INODES_PER_CHUNK - 1)))
		return -EINVAL;
	for (int k = 0; k < 16; k++) {
		uint32_t agino, agbno, blks;

		if (holemask & (1u << k))
			continue;
		c.count += per_bit;
		agino = startino + k * per_bit;
		agbno = agino >> g->inopblog;
		/*
		 * A block holding inodes of several bits is claimed once, by
		 * the first that is no hole: a hole may cover its first
		 * inodes alone, and the rest are still in it.
		 */
		if (agbno == last)
			continue;
		last = agbno;
		blks = g->inopblock >= per_bit ? 1 : per_bit / g->inopblock;
		err = xk_bld_claim(b, agno, agbno, blks, XK_RMAP_OWN_INODES,
				   0, 0);
		if (err)
			return err;
	}
	/* Holes are recorded as free so the counts stay consistent. */
	for (int k = 0; k < 16; k++)
		if (holemask & (1u << k))
			c.freemask |= 0xfULL << (k * per_bit);
	return bld_chunk_add(&b->ags[agno], &c);
}
