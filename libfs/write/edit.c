// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Edits to a loaded filesystem, for finishing what a crash left
 * half-done: the effects of the kernel's intent items (free an extent,
 * update a reverse mapping or a refcount, map or unmap file blocks) and
 * the inactivation of inodes that were unlinked while still open.
 *
 * Each edit changes the builder's state only; commit then rebuilds the
 * AG indexes from it.  That is why the order of intents matters less
 * than in the kernel: a refcount decrease only records the range, and
 * whatever in it is owned by nobody once every intent has been applied
 * is freed before commit (bld_settle_pending).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <xfskit/format/log.h>

#include "write_priv.h"

static struct bld_ag *
ag_of(struct xk_bld *b, uint64_t fsbno, uint32_t len, uint32_t *agbno)
{
	uint32_t agno = xk_fsb_to_agno(b->mp, fsbno);

	if (agno >= b->agcount || len == 0 ||
	    !xk_fsbext_valid(b->mp, fsbno, len))
		return NULL;
	*agbno = xk_fsb_to_agbno(b->mp, fsbno);
	return &b->ags[agno];
}

static int
owner_is_file(uint64_t owner, uint64_t offset)
{
	return !xk_rmap_owner_is_special(owner) &&
	       !(offset & XK_RMAP_OFF_BMBT_BLOCK);
}

/* Drop records of zero length left by the edits below. */
static void
rmap_compact(struct bld_ag *ag)
{
	uint64_t out = 0;

	for (uint64_t i = 0; i < ag->nrmap; i++)
		if (ag->rmap[i].len)
			ag->rmap[out++] = ag->rmap[i];
	ag->nrmap = out;
}

/*
 * Edit every mapping that overlaps [s, e) and matches (any owner, or
 * owner with the same fork/bmbt flags): remove the overlap, or with
 * toggle set flip its unwritten flag.  Pieces outside keep their
 * offsets in step with their blocks.
 */
static int
rmap_edit(struct bld_ag *ag, uint32_t s, uint32_t len, int any,
	  uint64_t owner, uint64_t fflags, int toggle)
{
	uint32_t e = s + len;
	uint64_t n = ag->nrmap;

	for (uint64_t i = 0; i < n; i++) {
		struct bld_rmap r = ag->rmap[i];
		uint32_t rs = r.start, re = r.start + r.len;
		uint32_t ms = rs > s ? rs : s, me = re < e ? re : e;
		int file = owner_is_file(r.owner, r.offset);
		int err;

		if (ms >= me || r.len == 0)
			continue;
		if (!any && (r.owner != owner ||
			     (r.offset & (XK_RMAP_OFF_ATTR_FORK |
					  XK_RMAP_OFF_BMBT_BLOCK)) != fflags))
			continue;
		/* The piece before the overlap stays in place. */
		ag->rmap[i].len = ms - rs;
		if (toggle) {
			err = bld_rmap_add(ag, ms, me - ms, r.owner,
					   (file ? r.offset + (ms - rs) :
						   r.offset) ^
					   XK_RMAP_OFF_UNWRITTEN);
			if (err)
				return err;
		}
		if (re > me) {
			err = bld_rmap_add(ag, me, re - me, r.owner,
					   file ? r.offset + (me - rs) :
						  r.offset);
			if (err)
				return err;
		}
	}
	rmap_compact(ag);
	ag->dirty = 1;
	return 0;
}

int
xk_bld_free_extent(struct xk_bld *b, uint64_t fsbno, uint32_t len)
{
	uint32_t agbno;
	struct bld_ag *ag = ag_of(b, fsbno, len, &agbno);
	int err;

	if (!ag)
		return XK_ECORRUPT;
	err = bld_free_add(ag, agbno, len);
	if (err == -EEXIST)
		return XK_ECORRUPT;	/* freeing free space */
	if (err)
		return err;
	return rmap_edit(ag, agbno, len, 1, 0, 0, 0);
}

static uint64_t
rmap_flags(unsigned int flags)
{
	uint64_t f = 0;

	if (flags & XK_BLD_ATTR_FORK)
		f |= XK_RMAP_OFF_ATTR_FORK;
	if (flags & XK_BLD_BMBT)
		f |= XK_RMAP_OFF_BMBT_BLOCK;
	return f;
}

int
xk_bld_rmap_update(struct xk_bld *b, unsigned int type, uint64_t owner,
		   uint64_t fsbno, uint64_t offset, uint32_t len,
		   unsigned int flags)
{
	uint32_t agbno;
	struct bld_ag *ag = ag_of(b, fsbno, len, &agbno);
	uint64_t ff = rmap_flags(flags);
	uint64_t off;

	if (!ag || !b->mp->g.has_rmapbt)
		return XK_ECORRUPT;
	off = xk_rmap_owner_is_special(owner) || (ff & XK_RMAP_OFF_BMBT_BLOCK) ?
	      ff : (offset & XK_RMAP_OFF_MASK) | ff;
	if (flags & XK_BLD_UNWRITTEN)
		off |= XK_RMAP_OFF_UNWRITTEN;
	switch (type) {
	case XK_RMAP_EXTENT_MAP:
	case XK_RMAP_EXTENT_MAP_SHARED:
	case XK_RMAP_EXTENT_ALLOC:
		return bld_rmap_add(ag, agbno, len, owner, off);
	case XK_RMAP_EXTENT_UNMAP:
	case XK_RMAP_EXTENT_UNMAP_SHARED:
	case XK_RMAP_EXTENT_FREE:
		return rmap_edit(ag, agbno, len, 0, owner, ff, 0);
	case XK_RMAP_EXTENT_CONVERT:
	case XK_RMAP_EXTENT_CONVERT_SHARED:
		return rmap_edit(ag, agbno, len, 0, owner, ff, 1);
	default:
		return XK_ECORRUPT;
	}
}

static int
pending_add(struct xk_bld *b, uint64_t fsbno, uint32_t len)
{
	int err = bld_grow((void **)&b->pending, &b->pending_alloc,
			   b->npending + 1, sizeof(*b->pending));

	if (err)
		return err;
	b->pending[b->npending++] = (struct bld_range){ fsbno, len };
	return 0;
}

static int
refc_cmp_start(const void *pa, const void *pb)
{
	const struct bld_refc *a = pa, *b = pb;

	if (a->cow != b->cow)
		return a->cow - b->cow;
	return a->start < b->start ? -1 : a->start > b->start;
}

/*
 * Cut [s, e) out of refcount record i, keeping what lies outside (a cut
 * in the middle appends the right part as a new record); a record left
 * empty has length 0 and is dropped by the caller.
 */
static int
refc_cut(struct bld_ag *ag, uint64_t i, uint32_t s, uint32_t e)
{
	struct bld_refc *r = &ag->refc[i];
	uint32_t rs = r->start, re = r->start + r->len;
	int err;

	if (rs < s && re > e) {
		err = bld_grow((void **)&ag->refc, &ag->refc_alloc,
			       ag->nrefc + 1, sizeof(*ag->refc));
		if (err)
			return err;
		r = &ag->refc[i];
		ag->refc[ag->nrefc++] = (struct bld_refc){
			e, re - e, r->count, r->cow };
		r->len = s - rs;
	} else if (rs < s) {
		r->len = s - rs;
	} else if (re > e) {
		r->start = e;
		r->len = re - e;
	} else {
		r->len = 0;
	}
	return 0;
}

/*
 * Without the rmapbt the refcount records are the only record of
 * sharing: add delta to the count of every block in [s, s+len) of the
 * shared domain (a block without a record counts 1).  Records left at 1
 * disappear; blocks that drop to 0 are freed, as the kernel's decrease
 * queues them to be.
 */
static int
refc_adjust(struct bld_ag *ag, uint32_t s, uint32_t len, int delta)
{
	uint32_t e = s + len, pos = s;
	uint64_t n = ag->nrefc;
	int err;

	/* The segments of [s, e): records cut to the range, gaps at 1. */
	struct bld_refc *seg = malloc((2 * n + 2) * sizeof(*seg));
	uint64_t nseg = 0;

	if (!seg)
		return -ENOMEM;
	if (n)
		qsort(ag->refc, n, sizeof(*ag->refc), refc_cmp_start);
	for (uint64_t i = 0; i < n; i++) {
		struct bld_refc *r = &ag->refc[i];
		uint32_t rs = r->start, re = r->start + r->len;
		uint32_t ms = rs > s ? rs : s, me = re < e ? re : e;

		if (r->cow || ms >= me)
			continue;
		if (ms > pos)
			seg[nseg++] = (struct bld_refc){ pos, ms - pos, 1, 0 };
		seg[nseg++] = (struct bld_refc){ ms, me - ms, r->count, 0 };
		pos = me;
		err = refc_cut(ag, i, s, e);
		if (err)
			goto out;
	}
	if (pos < e)
		seg[nseg++] = (struct bld_refc){ pos, e - pos, 1, 0 };
	for (uint64_t i = 0; i < nseg; i++) {
		int64_t c = (int64_t)seg[i].count + delta;

		if (c < 0) {
			err = XK_ECORRUPT;
			goto out;
		}
		if (c == 0) {
			err = bld_free_add(ag, seg[i].start, seg[i].len);
			if (err == -EEXIST)
				err = XK_ECORRUPT;
			if (err)
				goto out;
			continue;
		}
		if (c == 1)
			continue;
		err = bld_grow((void **)&ag->refc, &ag->refc_alloc,
			       ag->nrefc + 1, sizeof(*ag->refc));
		if (err)
			goto out;
		ag->refc[ag->nrefc++] = (struct bld_refc){
			seg[i].start, seg[i].len, (uint32_t)c, 0 };
	}
	err = 0;
out:
	free(seg);
	{
		uint64_t out = 0;

		for (uint64_t i = 0; i < ag->nrefc; i++)
			if (ag->refc[i].len)
				ag->refc[out++] = ag->refc[i];
		ag->nrefc = out;
	}
	return err;
}

/* Add or remove CoW staging records over [s, s+len). */
static int
refc_cow(struct bld_ag *ag, uint32_t s, uint32_t len, int add)
{
	uint32_t e = s + len;
	int err;

	if (add) {
		err = bld_grow((void **)&ag->refc, &ag->refc_alloc,
			       ag->nrefc + 1, sizeof(*ag->refc));
		if (err)
			return err;
		ag->refc[ag->nrefc++] = (struct bld_refc){ s, len, 1, 1 };
		return 0;
	}
	for (uint64_t i = 0, n = ag->nrefc; i < n; i++) {
		struct bld_refc *r = &ag->refc[i];
		uint32_t rs = r->start, re = r->start + r->len;

		if (!r->cow || re <= s || rs >= e)
			continue;
		err = refc_cut(ag, i, s, e);
		if (err)
			return err;
	}
	return 0;
}

int
xk_bld_refcount_update(struct xk_bld *b, unsigned int type, uint64_t fsbno,
		       uint32_t len)
{
	uint32_t agbno;
	struct bld_ag *ag = ag_of(b, fsbno, len, &agbno);

	if (!ag || !b->mp->g.has_reflink)
		return XK_ECORRUPT;
	if (!b->mp->g.has_rmapbt) {
		switch (type) {
		case XK_REFCOUNT_INCREASE:
			return refc_adjust(ag, agbno, len, 1);
		case XK_REFCOUNT_DECREASE:
			return refc_adjust(ag, agbno, len, -1);
		case XK_REFCOUNT_ALLOC_COW:
			return refc_cow(ag, agbno, len, 1);
		case XK_REFCOUNT_FREE_COW:
			return refc_cow(ag, agbno, len, 0);
		default:
			return XK_ECORRUPT;
		}
	}
	switch (type) {
	case XK_REFCOUNT_INCREASE:
		return 0;		/* derived from the new mapping */
	case XK_REFCOUNT_DECREASE:
		return pending_add(b, fsbno, len);
	case XK_REFCOUNT_ALLOC_COW:
	case XK_REFCOUNT_FREE_COW:
		/* CoW staging is freed whole after recovery anyway. */
		return pending_add(b, fsbno, len);
	default:
		return XK_ECORRUPT;
	}
}

/* Whether block agbno is mapped by any owner. */
static int
block_owned(const struct bld_ag *ag, uint32_t agbno)
{
	for (uint64_t i = 0; i < ag->nrmap; i++)
		if (ag->rmap[i].start <= agbno &&
		    agbno < ag->rmap[i].start + ag->rmap[i].len)
			return 1;
	return 0;
}

/* Whether block agbno is free space. */
static int
block_free(const struct bld_ag *ag, uint32_t agbno)
{
	uint32_t lo = 0, hi = ag->nfree;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (agbno < ag->free[mid].start)
			hi = mid;
		else if (agbno >= ag->free[mid].start + ag->free[mid].len)
			lo = mid + 1;
		else
			return 1;
	}
	return 0;
}

int
bld_settle_pending(struct xk_bld *b)
{
	for (uint64_t i = 0; i < b->npending; i++) {
		uint32_t agbno;
		struct bld_ag *ag = ag_of(b, b->pending[i].fsbno,
					  b->pending[i].len, &agbno);

		if (!ag)
			return XK_ECORRUPT;
		for (uint32_t k = 0; k < b->pending[i].len; k++) {
			int err;

			if (block_owned(ag, agbno + k) ||
			    block_free(ag, agbno + k))
				continue;
			err = bld_free_add(ag, agbno + k, 1);
			if (err)
				return err;
		}
	}
	b->npending = 0;
	return 0;
}

int
xk_bld_cow_cleanup(struct xk_bld *b, uint64_t *count)
{
	*count = 0;
	for (uint32_t a = 0; a < b->agcount; a++) {
		struct bld_ag *ag = &b->ags[a];

		for (uint64_t i = 0; i < ag->nrmap; i++) {
			struct bld_rmap *r = &ag->rmap[i];
			int err;

			if (r->owner != XK_RMAP_OWN_COW || !r->len)
				continue;
			err = pending_add(b, xk_agb_to_fsb(b->mp, a, r->start),
					  r->len);
			if (err)
				return err;
			r->len = 0;
			(*count)++;
		}
		rmap_compact(ag);
		/* Without the rmapbt the CoW records name the blocks. */
		for (uint64_t i = 0; i < ag->nrefc; i++) {
			struct bld_refc *rc = &ag->refc[i];
			int err;

			if (!rc->cow)
				continue;
			err = bld_free_add(ag, rc->start, rc->len);
			if (err && err != -EEXIST)
				return err;
			rc->len = 0;
			(*count)++;
		}
		{
			uint64_t out = 0;

			for (uint64_t i = 0; i < ag->nrefc; i++)
				if (ag->refc[i].len)
					ag->refc[out++] = ag->refc[i];
			ag->nrefc = out;
		}
	}
	return 0;
}

/* --- inode forks --- */

const char *
bld_fork_why(const char *check, int err)
{
	if (err == -ENOMEM)
		return "no memory for its fork mappings";
	if (err != XK_ECORRUPT || !check)
		return "its bmbt cannot be walked";
	if (!strcmp(check, "nextents"))
		return "its extent count does not fit its fork";
	if (!strcmp(check, "extent"))
		return "a mapping of its fork is empty or outside the "
		       "filesystem";
	if (!strcmp(check, "extent order"))
		return "the mappings of its fork overlap or are out of order";
	return "its bmbt is damaged";
}

int
bld_fork_read(struct xk_mount *mp, uint64_t ino, const struct xk_dinode *dip,
	      int whichfork, unsigned int flags, struct bld_fork_read *fr)
{
	struct xk_fork_map map = { 0 };
	int err;

	memset(fr, 0, sizeof(*fr));
	bld_bshape_init(&fr->shape,
			xk_btree_maxrecs(&xk_bmbt_ops, mp->g.blocksize, 1),
			xk_btree_maxrecs(&xk_bmbt_ops, mp->g.blocksize, 0),
			xk_dfork_size(dip, mp->g.inodesize, whichfork));
	err = xk_fork_read(mp, ino, dip, whichfork, flags | XK_FORK_BLOCKS,
			   &map);
	if (err == XK_ECORRUPT)
		fr->check = map.first.check;
	if (!err)
		err = bld_grow((void **)&fr->ext, &fr->alloc, map.next,
			       sizeof(*fr->ext));
	if (!err)
		err = bld_grow((void **)&fr->bmbt, &fr->bmbt_alloc, map.nblk,
			       sizeof(*fr->bmbt));
	for (uint64_t i = 0; !err && i < map.next; i++) {
		const struct xk_bmbt_irec *r = &map.ext[i];

		fr->ext[i] = (struct xk_bld_ext){ r->startoff, r->startblock,
						  (uint32_t)r->blockcount };
		if (r->unwritten)
			fr->ext[i].fsbno |= BLD_EXT_UNWRITTEN;
	}
	if (!err) {
		fr->next = map.next;
		fr->nblocks = map.nblocks;
	}
	/* The shape: each level's blocks in key order, the root last. */
	for (uint64_t i = 0; !err && i < map.nblk; i++) {
		fr->bmbt[fr->nbmbt++] = map.blk[i].fsb;
		err = bld_bshape_add_block(&fr->shape, map.blk[i].level,
					   map.blk[i].numrecs);
	}
	if (!err && xk_dfork_format(dip, whichfork) == XK_DINODE_FMT_BTREE) {
		err = bld_bshape_add_block(&fr->shape, map.root_level,
					   map.root_numrecs);
		bld_bshape_check(&fr->shape, fr->next);
	}
	xk_fork_map_free(&map);
	return err;
}

void
bld_fork_read_free(struct bld_fork_read *fr)
{
	free(fr->ext);
	free(fr->bmbt);
	bld_bshape_free(&fr->shape);
}

/* Give up blocks a file no longer maps (shared ones wait for settling). */
static int
release_blocks(struct xk_bld *b, uint64_t ino, uint64_t fsbno, uint32_t len,
	       uint64_t loff, int attr, int bmbt)
{
	uint32_t agbno;
	struct bld_ag *ag = ag_of(b, fsbno, len, &agbno);
	uint64_t ff = (attr ? XK_RMAP_OFF_ATTR_FORK : 0) |
		      (bmbt ? XK_RMAP_OFF_BMBT_BLOCK : 0);
	int err;

	(void)loff;
	if (!ag)
		return XK_ECORRUPT;
	if (b->mp->g.has_rmapbt) {
		err = rmap_edit(ag, agbno, len, 0, ino, ff, 0);
		if (err)
			return err;
		if (b->mp->g.has_reflink && !attr && !bmbt)
			return pending_add(b, fsbno, len);
	} else if (b->mp->g.has_reflink && !attr && !bmbt) {
		/* Lower the count; what reaches 0 is freed there. */
		return refc_adjust(ag, agbno, len, -1);
	}
	err = bld_free_add(ag, agbno, len);
	return err == -EEXIST ? XK_ECORRUPT : err;
}

static int
free_fork(struct xk_bld *b, uint64_t ino, const struct xk_dinode *dip,
	  int whichfork)
{
	struct bld_fork_read fr;
	int err = bld_fork_read(b->mp, ino, dip, whichfork, 0, &fr);

	for (uint64_t i = 0; i < fr.next && !err; i++)
		err = release_blocks(b, ino,
				     fr.ext[i].fsbno & ~BLD_EXT_UNWRITTEN,
				     fr.ext[i].len, fr.ext[i].loff,
				     whichfork == XK_ATTR_FORK, 0);
	for (uint64_t i = 0; i < fr.nbmbt && !err; i++)
		err = release_blocks(b, ino, fr.bmbt[i], 1, 0,
				     whichfork == XK_ATTR_FORK, 1);
	bld_fork_read_free(&fr);
	return err;
}

/* Mark an inode free in its chunk; free the chunk when it empties. */
static int
chunk_free_inode(struct xk_bld *b, uint64_t ino)
{
	struct xk_mount *mp = b->mp;
	uint32_t agno = xk_ino_to_agno(mp, ino);
	uint32_t agino = xk_ino_to_agino(mp, ino);
	struct bld_ag *ag = &b->ags[agno];

	for (uint32_t i = 0; i < ag->nchunk; i++) {
		struct bld_chunk *c = &ag->chunk[i];
		uint64_t all = 0;
		uint32_t bit;

		if (agino < c->startino || agino >= c->startino + 64)
			continue;
		bit = agino - c->startino;
		if (c->freemask & (1ULL << bit))
			return XK_ECORRUPT;	/* already free */
		c->freemask |= 1ULL << bit;
		ag->ifree++;
		if (i < ag->ichunk_cursor)
			ag->ichunk_cursor = i;
		for (int k = 0; k < 16; k++)
			if (!(c->holemask & (1u << k)))
				all |= 0xfULL << (k * 4);
		if ((c->freemask & all) != all || c->holemask)
			return 0;
		/* Every inode free: the chunk goes back to free space. */
		{
			uint32_t agbno = c->startino >> mp->g.inopblog;
			int err;

			err = rmap_edit(ag, agbno, mp->g.ialloc_blks, 0,
					XK_RMAP_OWN_INODES, 0, 0);
			if (!err)
				err = bld_free_add(ag, agbno,
						   mp->g.ialloc_blks);
			if (err)
				return err;
			xk_buf_invalidate(mp, xk_agb_to_daddr(mp, agno, agbno),
					  mp->g.ialloc_blks << mp->g.blocklog);
			ag->icount -= c->count;
			ag->ifree -= c->count;
			memmove(c, c + 1, (ag->nchunk - i - 1) * sizeof(*c));
			ag->nchunk--;
			ag->ichunk_cursor = 0;
		}
		return 0;
	}
	return XK_ECORRUPT;
}

/* Inactivate one unlinked inode; returns its next_unlinked. */
static int
free_one(struct xk_bld *b, uint64_t ino, uint32_t *next)
{
	struct xk_mount *mp = b->mp;
	struct xk_buf *bp;
	struct xk_dinode *dip;
	struct xk_fail f;
	int err;

	err = xk_inode_read(mp, ino, 0, &bp, &dip);
	if (err)
		return err;
	err = xk_dinode_verify(mp, ino, dip, &f);
	if (!err && xk_be32_get(dip->di_nlink) != 0)
		err = XK_ECORRUPT;	/* still linked: not ours to free */
	if (!err) {
		*next = xk_be32_get(dip->di_next_unlinked);
		err = free_fork(b, ino, dip, XK_DATA_FORK);
	}
	if (!err)
		err = free_fork(b, ino, dip, XK_ATTR_FORK);
	if (!err) {
		/* A free slot, as a new chunk has them. */
		xk_inode_init_free(mp, dip, ino);
		xk_buf_dirty(bp);
	}
	xk_buf_release(bp);
	if (!err)
		err = chunk_free_inode(b, ino);
	return err;
}

int
xk_bld_free_unlinked(struct xk_bld *b, uint64_t *count)
{
	struct xk_mount *mp = b->mp;

	*count = 0;
	for (uint32_t a = 0; a < b->agcount; a++) {
		uint32_t heads[XK_AGI_UNLINKED_BUCKETS];
		struct xk_buf *bp;
		int err = xk_agi_read(mp, a, 0, &bp);

		if (err)
			return err;
		for (int i = 0; i < XK_AGI_UNLINKED_BUCKETS; i++)
			heads[i] = xk_be32_get(xk_buf_agi(bp)->agi_unlinked[i]);
		xk_buf_release(bp);
		for (int i = 0; i < XK_AGI_UNLINKED_BUCKETS; i++) {
			uint32_t agino = heads[i];
			uint64_t guard = 0;

			while (agino != XK_NULLAGINO) {
				uint64_t ino = xk_agino_to_ino(mp, a, agino);

				if (!xk_ino_valid(mp, ino) ||
				    ++guard > ((uint64_t)1 << mp->g.agino_log))
					return XK_ECORRUPT;
				err = free_one(b, ino, &agino);
				if (err)
					return err;
				(*count)++;
			}
			if (heads[i] != XK_NULLAGINO)
				b->ags[a].clear_unlinked = 1;
		}
	}
	return 0;
}

/* --- file mapping updates --- */

/* Whether b continues a in the file and on disk, in the same state. */
static int
fork_contig(const struct xk_bld_ext *a, const struct xk_bld_ext *b)
{
	return a->loff + a->len == b->loff &&
	       (a->fsbno & ~BLD_EXT_UNWRITTEN) + a->len ==
	       (b->fsbno & ~BLD_EXT_UNWRITTEN) &&
	       (a->fsbno & BLD_EXT_UNWRITTEN) ==
	       (b->fsbno & BLD_EXT_UNWRITTEN) &&
	       (uint64_t)a->len + b->len <= XK_MAX_BMBT_EXTLEN;
}

static int
fork_insert(struct xk_bld_fork *fk, const struct xk_bld_ext *e,
	    struct bld_bshape *shape)
{
	uint64_t i = fk->next;
	int err = bld_grow((void **)&fk->ext, &fk->ext_alloc, fk->next + 1,
			   sizeof(*fk->ext));

	if (err)
		return err;
	while (i > 0 && fk->ext[i - 1].loff > e->loff)
		i--;
	if ((i > 0 && fk->ext[i - 1].loff + fk->ext[i - 1].len > e->loff) ||
	    (i < fk->next && e->loff + e->len > fk->ext[i].loff))
		return XK_ECORRUPT;	/* maps over a mapping */
	fk->nblocks += e->len;
	/* Join a neighbour it continues, as the kernel's map does. */
	if (i > 0 && fork_contig(&fk->ext[i - 1], e)) {
		fk->ext[i - 1].len += e->len;
		if (i < fk->next && fork_contig(&fk->ext[i - 1], &fk->ext[i])) {
			/* The right one is looked up and deleted. */
			bld_bshape_delete(shape, i);
			fk->ext[i - 1].len += fk->ext[i].len;
			memmove(&fk->ext[i], &fk->ext[i + 1],
				(fk->next - i - 1) * sizeof(*fk->ext));
			fk->next--;
			bld_bshape_settle(shape, fk->next);
		}
		return 0;
	}
	if (i < fk->next && fork_contig(e, &fk->ext[i])) {
		fk->ext[i].loff = e->loff;
		fk->ext[i].fsbno = e->fsbno;
		fk->ext[i].len += e->len;
		return 0;
	}
	bld_bshape_insert(shape, i, 0);
	memmove(&fk->ext[i + 1], &fk->ext[i],
		(fk->next - i) * sizeof(*fk->ext));
	fk->ext[i] = *e;
	fk->next++;
	bld_bshape_settle(shape, fk->next);
	return 0;
}

/*
 * Remove [loff, loff+len) from the fork's mappings as the kernel's unmap
 * does: one mapping a call, from the last down; a mapping cut in the
 * middle leaves its right part as a new one after it.
 */
static int
fork_remove(struct xk_bld_fork *fk, uint64_t loff, uint32_t len,
	    struct bld_bshape *shape)
{
	uint64_t end = loff + len;

	for (uint64_t k = fk->next; k-- > 0;) {
		struct xk_bld_ext x = fk->ext[k];
		uint64_t xe = x.loff + x.len;
		uint64_t ms = x.loff > loff ? x.loff : loff;
		uint64_t me = xe < end ? xe : end;

		if (ms >= me)
			continue;
		fk->nblocks -= me - ms;
		if (ms == x.loff && me == xe) {
			bld_bshape_delete(shape, k);
			memmove(&fk->ext[k], &fk->ext[k + 1],
				(fk->next - k - 1) * sizeof(*fk->ext));
			fk->next--;
		} else if (ms == x.loff) {
			fk->ext[k].loff = me;
			fk->ext[k].fsbno += me - x.loff;
			fk->ext[k].len = (uint32_t)(xe - me);
		} else if (me == xe) {
			fk->ext[k].len = (uint32_t)(ms - x.loff);
		} else {
			int err = bld_grow((void **)&fk->ext, &fk->ext_alloc,
					   fk->next + 1, sizeof(*fk->ext));

			if (err)
				return err;
			memmove(&fk->ext[k + 2], &fk->ext[k + 1],
				(fk->next - k - 1) * sizeof(*fk->ext));
			fk->ext[k].len = (uint32_t)(ms - x.loff);
			fk->ext[k + 1] = (struct xk_bld_ext){
				me, x.fsbno + (me - x.loff),
				(uint32_t)(xe - me) };
			fk->next++;
			bld_bshape_insert(shape, k + 1, 1);
		}
		bld_bshape_settle(shape, fk->next);
	}
	return 0;
}

int
xk_bld_bmap_update(struct xk_bld *b, unsigned int type, uint64_t ino,
		   int whichfork, uint64_t loff, uint64_t fsbno, uint32_t len,
		   int unwritten)
{
	struct xk_mount *mp = b->mp;
	struct xk_bld_inode tmp = { .ino = ino };
	struct xk_bld_fork *fk = whichfork == XK_ATTR_FORK ? &tmp.attr :
							     &tmp.data;
	struct bld_fork_read fr;
	struct xk_buf *bp;
	struct xk_dinode *dip;
	struct xk_fail f;
	uint64_t nblocks_old, nblocks = 0;
	uint8_t fmt;
	int err, fmt_now, remap = !!(type & XK_BLD_BMAP_REMAP);

	type &= ~XK_BLD_BMAP_REMAP;
	if (!xk_ino_valid(mp, ino) || len == 0 ||
	    (type != XK_BMAP_MAP && type != XK_BMAP_UNMAP))
		return XK_ECORRUPT;
	err = xk_inode_read(mp, ino, 0, &bp, &dip);
	if (err)
		return err;
	err = xk_dinode_verify(mp, ino, dip, &f);
	fmt_now = xk_dfork_format(dip, whichfork);
	if (!err && fmt_now != XK_DINODE_FMT_EXTENTS &&
	    fmt_now != XK_DINODE_FMT_BTREE)
		err = XK_ECORRUPT;
	if (!err && whichfork == XK_ATTR_FORK && !dip->di_forkoff)
		err = XK_ECORRUPT;
	if (err) {
		xk_buf_release(bp);
		return err;
	}
	err = bld_fork_read(b->mp, ino, dip, whichfork, 0, &fr);
	if (err) {
		bld_fork_read_free(&fr);
		xk_buf_release(bp);
		return err;
	}
	/* The old bmbt blocks go; the writer builds what the fork needs. */
	for (uint64_t i = 0; i < fr.nbmbt && !err; i++)
		err = release_blocks(b, ino, fr.bmbt[i], 1, 0,
				     whichfork == XK_ATTR_FORK, 1);
	nblocks_old = xk_be64_get(dip->di_nblocks) - fr.nbmbt;
	fk->format = XK_BLD_FMT_EXTENTS;
	fk->ext = fr.ext;
	fk->next = fr.next;
	fk->ext_alloc = fr.alloc;
	fr.ext = NULL;
	for (uint64_t i = 0; i < fk->next; i++)
		fk->nblocks += fk->ext[i].len;
	if (!err && type == XK_BMAP_MAP) {
		struct xk_bld_ext e = { loff, fsbno, len };

		if (unwritten)
			e.fsbno |= BLD_EXT_UNWRITTEN;
		err = fork_insert(fk, &e, &fr.shape);
		nblocks_old += len;
		/* The kernel's map queues the reverse mapping: do it. */
		if (!err && mp->g.has_rmapbt)
			err = xk_bld_rmap_update(b, XK_RMAP_EXTENT_MAP, ino,
				fsbno, loff, len,
				(whichfork == XK_ATTR_FORK ?
				 XK_BLD_ATTR_FORK : 0) |
				(unwritten ? XK_BLD_UNWRITTEN : 0));
	} else if (!err) {
		uint64_t before = fk->nblocks, end = loff + len;

		/*
		 * What leaves the map is released as the kernel's unmap
		 * does.  A BUI unmap (remap) is different: the kernel
		 * removes the mapping and its reverse mapping but never
		 * frees the blocks (a CUI decrease or an EFI logged beside
		 * it does, and the blocks of an exchange move to the other
		 * file).
		 */
		for (uint64_t i = 0; i < fk->next && !err; i++) {
			const struct xk_bld_ext *x = &fk->ext[i];
			uint64_t ms = x->loff > loff ? x->loff : loff;
			uint64_t me = x->loff + x->len < end ?
				      x->loff + x->len : end;

			if (ms < me && !remap)
				err = release_blocks(b, ino,
					(x->fsbno & ~BLD_EXT_UNWRITTEN) +
					(ms - x->loff), (uint32_t)(me - ms),
					ms, whichfork == XK_ATTR_FORK, 0);
			else if (ms < me && mp->g.has_rmapbt)
				err = xk_bld_rmap_update(b,
					XK_RMAP_EXTENT_UNMAP, ino,
					(x->fsbno & ~BLD_EXT_UNWRITTEN) +
					(ms - x->loff), ms,
					(uint32_t)(me - ms),
					whichfork == XK_ATTR_FORK ?
					XK_BLD_ATTR_FORK : 0);
		}
		if (!err)
			err = fork_remove(fk, loff, len, &fr.shape);
		nblocks_old -= before - fk->nblocks;
	}
	if (!err) {
		uint32_t space = xk_dfork_size(dip, mp->g.inodesize,
					       whichfork);

		err = bld_write_fork_shaped(b, &tmp, whichfork,
					    xk_dfork_ptr(dip, whichfork),
					    space, &fmt, &nblocks, &fr.shape);
	}
	if (!err) {
		/* nblocks counted the fork's data blocks plus new bmbt. */
		nblocks = nblocks_old + (nblocks - fk->nblocks);
		if (whichfork == XK_DATA_FORK)
			dip->di_format = fmt;
		else
			dip->di_aformat = fmt;
		xk_be64_set(&dip->di_nblocks, nblocks);
		if (xk_be64_get(dip->di_flags2) & XK_DIFLAG2_NREXT64) {
			if (whichfork == XK_DATA_FORK)
				xk_be64_set(&dip->di_big_nextents, fk->next);
			else
				xk_be32_set(&dip->di_big_anextents,
					    (uint32_t)fk->next);
		} else if (whichfork == XK_DATA_FORK) {
			xk_be32_set(&dip->di_nextents, (uint32_t)fk->next);
		} else {
			xk_be16_set(&dip->di_anextents, (uint16_t)fk->next);
		}
		xk_inode_init_crc(mp, dip);
		xk_buf_dirty(bp);
		/* A later BUI on this inode reads the new bmbt back. */
		err = bld_bmbt_stamp(b, ino, dip, whichfork);
	}
	xk_buf_release(bp);
	bld_fork_read_free(&fr);
	free(fk->ext);
	return err;
}

int
bld_fork_relayout(struct xk_bld *b, uint64_t ino, struct xk_dinode *dip,
		  int whichfork, uint32_t space)
{
	struct xk_mount *mp = b->mp;
	struct xk_bld_inode tmp = { .ino = ino };
	struct xk_bld_fork *fk = whichfork == XK_ATTR_FORK ? &tmp.attr :
							     &tmp.data;
	struct bld_fork_read fr;
	uint64_t nblocks = 0;
	uint8_t fmt;
	int err = bld_fork_read(mp, ino, dip, whichfork, XK_FORK_CHECK, &fr);

	/* The old bmbt blocks go; the writer builds what the room needs. */
	for (uint64_t i = 0; i < fr.nbmbt && !err; i++) {
		uint32_t agbno;
		struct bld_ag *ag = ag_of(b, fr.bmbt[i], 1, &agbno);

		err = ag ? release_blocks(b, ino, fr.bmbt[i], 1, 0,
					  whichfork == XK_ATTR_FORK, 1) :
			   XK_ECORRUPT;
		if (ag)
			ag->dirty = 1;
	}
	if (!err) {
		fk->format = XK_BLD_FMT_EXTENTS;
		fk->ext = fr.ext;
		fk->next = fr.next;
		fk->ext_alloc = fr.alloc;
		fk->nblocks = fr.nblocks;
		fr.ext = NULL;
		memset(xk_dfork_ptr(dip, whichfork), 0,
		       xk_dfork_size(dip, mp->g.inodesize, whichfork));
		/* The narrower data fork, for the bmbt walk that follows. */
		if (whichfork == XK_DATA_FORK)
			dip->di_forkoff = (uint8_t)(space / 8);
		err = bld_write_fork(b, &tmp, whichfork,
				     xk_dfork_ptr(dip, whichfork), space, &fmt,
				     &nblocks);
	}
	if (!err) {
		/* nblocks: the mapped blocks and the new bmbt's. */
		xk_be64_set(&dip->di_nblocks, xk_be64_get(dip->di_nblocks) -
			    fr.nbmbt - fr.nblocks + nblocks);
		if (whichfork == XK_DATA_FORK)
			dip->di_format = fmt;
		else
			dip->di_aformat = fmt;
		err = bld_bmbt_stamp(b, ino, dip, whichfork);
	}
	bld_fork_read_free(&fr);
	free(fk->ext);
	return err;
}
