// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Where a freshly formatted AG puts things.  The header sectors come
 * first (superblock copy, AGF, AGI, AGFL), then one root block per btree
 * in a fixed order (bnobt, cntbt, inobt, finobt, rmapbt, refcountbt, the
 * last three only with their features).  The AG holding the internal log
 * has it right after the roots, rounded up to the stripe unit by mkfs.
 *
 * What remains is free space, from which the AGFL is pre-filled and the
 * first inode chunk taken.  The two small allocators here follow the
 * kernel's choices for an AG whose trees are single leaves, so the result
 * matches what mkfs.xfs leaves on disk block for block:
 *  - the AGFL refill asks for N blocks "by size": the smallest free
 *    extent that holds N (the lowest one among equals), or failing that
 *    the largest, taking blocks from its start, until N are found;
 *  - the inode chunk is a "near" allocation: the aligned position
 *    closest to the target block over all free extents that fit it.
 */
#include <errno.h>
#include <string.h>

#include <xfskit/init.h>
#include <xfskit/libfs.h>

uint32_t
xk_ag_prealloc_blocks(const struct xk_mount *mp)
{
	const struct xk_geom *g = &mp->g;
	uint32_t agfl_blk = (3 * g->sectsize) >> g->blocklog;
	uint32_t next = agfl_blk + 1 + 3;	/* bnobt, cntbt, inobt */

	if (g->has_finobt)
		next++;
	if (g->has_rmapbt)
		next++;
	if (g->has_reflink)
		next++;
	return next;
}

static uint32_t
min_u32(uint32_t a, uint32_t b)
{
	return a < b ? a : b;
}

uint32_t
xk_ag_min_freelist(const struct xk_mount *mp, uint32_t agblocks)
{
	const struct xk_geom *g = &mp->g;
	unsigned int alloc_max, rmap_max;
	uint32_t n;

	/* Fresh trees have one level; a split needs one block per level+1. */
	alloc_max = xk_btree_compute_maxlevels(g->maxrecs[XK_BT_BNO][0],
					       g->maxrecs[XK_BT_BNO][1],
					       ((uint64_t)agblocks + 1) / 2);
	n = 2 * min_u32(2, alloc_max);
	if (g->has_rmapbt) {
		rmap_max = g->maxlevels[XK_BT_RMAP];
		n += min_u32(2, rmap_max);
	}
	return n;
}

int
xk_ag_init_layout(const struct xk_mount *mp, uint32_t agno,
		  struct xk_ag_init *ai)
{
	const struct xk_geom *g = &mp->g;
	uint32_t b, end;

	memset(ai, 0, sizeof(*ai));
	if (agno >= g->agcount)
		return -EINVAL;
	ai->agno = agno;
	ai->length = xk_ag_blocks(mp, agno);
	b = ((3 * g->sectsize) >> g->blocklog) + 1;
	ai->roots[XK_BT_BNO] = b++;
	ai->roots[XK_BT_CNT] = b++;
	ai->roots[XK_BT_INO] = b++;
	if (g->has_finobt)
		ai->roots[XK_BT_FINO] = b++;
	if (g->has_rmapbt)
		ai->roots[XK_BT_RMAP] = b++;
	if (g->has_reflink)
		ai->roots[XK_BT_REFC] = b++;
	ai->prealloc = b;
	if (ai->prealloc >= ai->length)
		return -ENOSPC;
	end = ai->length;
	/* An external log (logstart 0) takes no room in any AG. */
	if (g->logblocks && g->logstart &&
	    xk_fsb_to_agno(mp, g->logstart) == agno) {
		ai->log_start = xk_fsb_to_agbno(mp, g->logstart);
		ai->log_blocks = g->logblocks;
		if (ai->log_start < ai->prealloc ||
		    (uint64_t)ai->log_start + ai->log_blocks > end)
			return -EINVAL;
		if (ai->log_start > ai->prealloc) {
			ai->free[ai->nfree].start = ai->prealloc;
			ai->free[ai->nfree++].len = ai->log_start -
						    ai->prealloc;
		}
		b = ai->log_start + ai->log_blocks;
	}
	if (b < end) {
		ai->free[ai->nfree].start = b;
		ai->free[ai->nfree++].len = end - b;
	}
	return 0;
}

/* Take len blocks at bno out of free extent i (bno inside it). */
static int
take(struct xk_ag_init *ai, uint32_t i, uint32_t bno, uint32_t len)
{
	struct xk_ag_extent *e = &ai->free[i];
	uint32_t tail_start = bno + len;
	uint32_t tail_len = e->start + e->len - tail_start;

	if (bno > e->start) {
		e->len = bno - e->start;
		if (tail_len) {
			if (ai->nfree >= XK_AGINIT_MAX_FREE)
				return -ENOSPC;
			memmove(&ai->free[i + 2], &ai->free[i + 1],
				(ai->nfree - i - 1) * sizeof(*e));
			ai->free[i + 1].start = tail_start;
			ai->free[i + 1].len = tail_len;
			ai->nfree++;
		}
	} else if (tail_len) {
		e->start = tail_start;
		e->len = tail_len;
	} else {
		memmove(&ai->free[i], &ai->free[i + 1],
			(ai->nfree - i - 1) * sizeof(*e));
		ai->nfree--;
	}
	return 0;
}

int
xk_ag_init_agfl(struct xk_ag_init *ai, uint32_t count)
{
	if (count > XK_AGINIT_MAX_AGFL)
		return -EINVAL;
	while (ai->agfl_count < count) {
		uint32_t want = count - ai->agfl_count, best = UINT32_MAX;
		uint32_t got, start;
		int err;

		for (uint32_t i = 0; i < ai->nfree; i++) {
			const struct xk_ag_extent *e = &ai->free[i];

			if (e->len >= want &&
			    (best == UINT32_MAX || e->len < ai->free[best].len))
				best = i;
		}
		if (best == UINT32_MAX) {
			/* Nothing holds it all: the largest, the lowest. */
			for (uint32_t i = 0; i < ai->nfree; i++)
				if (best == UINT32_MAX ||
				    ai->free[i].len > ai->free[best].len)
					best = i;
		}
		if (best == UINT32_MAX)
			return -ENOSPC;
		start = ai->free[best].start;
		got = min_u32(want, ai->free[best].len);
		err = take(ai, best, start, got);
		if (err)
			return err;
		for (uint32_t k = 0; k < got; k++)
			ai->agfl[ai->agfl_count++] = start + k;
	}
	return 0;
}

/*
 * The free extent and start for len blocks nearest block near: at each
 * extent's first aligned block, or (closest) anywhere in the extent.
 */
static int
alloc_nearest(struct xk_ag_init *ai, uint32_t len, uint32_t align,
	      uint32_t near, int closest, uint32_t *bnop)
{
	uint32_t best = UINT32_MAX, best_bno = 0;
	uint64_t best_dist = UINT64_MAX;

	if (align == 0)
		align = 1;
	for (uint32_t i = 0; i < ai->nfree; i++) {
		const struct xk_ag_extent *e = &ai->free[i];
		uint64_t end = (uint64_t)e->start + e->len;
		uint64_t a = ((uint64_t)e->start + align - 1) / align * align;
		uint64_t dist;

		if (a + len > end)
			continue;
		if (closest && near > a)
			a = near + len > end ? end - len : near;
		dist = a > near ? a - near : near - a;
		if (dist < best_dist) {
			best_dist = dist;
			best = i;
			best_bno = (uint32_t)a;
		}
	}
	if (best == UINT32_MAX)
		return -ENOSPC;
	*bnop = best_bno;
	return take(ai, best, best_bno, len);
}

int
xk_ag_init_alloc(struct xk_ag_init *ai, uint32_t len, uint32_t align,
		 uint32_t near, uint32_t *bnop)
{
	return alloc_nearest(ai, len, align, near, 0, bnop);
}

int
xk_ag_init_alloc_closest(struct xk_ag_init *ai, uint32_t len, uint32_t target,
			 uint32_t *bnop)
{
	return alloc_nearest(ai, len, 1, target, 1, bnop);
}

uint32_t
xk_ag_init_freeblks(const struct xk_ag_init *ai, uint32_t *longest)
{
	uint32_t sum = 0, lg = 0;

	for (uint32_t i = 0; i < ai->nfree; i++) {
		sum += ai->free[i].len;
		if (ai->free[i].len > lg)
			lg = ai->free[i].len;
	}
	if (longest)
		*longest = lg;
	return sum;
}

static void
rmap_add(struct xk_ag_rmap *out, uint32_t *n, uint32_t max, uint32_t start,
	 uint32_t len, uint64_t owner)
{
	if (*n < max && len) {
		out[*n].start = start;
		out[*n].len = len;
		out[*n].owner = owner;
		(*n)++;
	}
}

/*
 * The static owners: filesystem headers up to the first root, the free
 * space roots and every other AG-owned root, the inode btree roots, the
 * refcount root, the log, the AGFL blocks and the inode chunk.  Records
 * that the kernel would have merged (adjacent, same owner: the rmapbt
 * root and AGFL blocks right after it) are merged.
 */
uint32_t
xk_ag_init_rmaps(const struct xk_mount *mp, const struct xk_ag_init *ai,
		 struct xk_ag_rmap *out, uint32_t max)
{
	uint32_t n = 0, m = 0;

	rmap_add(out, &n, max, 0, ai->roots[XK_BT_BNO], XK_RMAP_OWN_FS);
	rmap_add(out, &n, max, ai->roots[XK_BT_BNO], 2, XK_RMAP_OWN_AG);
	rmap_add(out, &n, max, ai->roots[XK_BT_INO],
		 mp->g.has_finobt ? 2 : 1, XK_RMAP_OWN_INOBT);
	if (ai->roots[XK_BT_RMAP])
		rmap_add(out, &n, max, ai->roots[XK_BT_RMAP], 1,
			 XK_RMAP_OWN_AG);
	if (ai->roots[XK_BT_REFC])
		rmap_add(out, &n, max, ai->roots[XK_BT_REFC], 1,
			 XK_RMAP_OWN_REFC);
	if (ai->log_blocks)
		rmap_add(out, &n, max, ai->log_start, ai->log_blocks,
			 XK_RMAP_OWN_LOG);
	for (uint32_t i = 0; i < ai->agfl_count; i++)
		rmap_add(out, &n, max, ai->agfl[i], 1, XK_RMAP_OWN_AG);
	if (ai->chunk_blocks)
		rmap_add(out, &n, max, ai->chunk_agbno, ai->chunk_blocks,
			 XK_RMAP_OWN_INODES);
	/* Sort by start (few records: insertion sort), then merge. */
	for (uint32_t i = 1; i < n; i++) {
		struct xk_ag_rmap r = out[i];
		uint32_t j = i;

		while (j > 0 && out[j - 1].start > r.start) {
			out[j] = out[j - 1];
			j--;
		}
		out[j] = r;
	}
	for (uint32_t i = 0; i < n; i++) {
		if (m > 0 && out[m - 1].owner == out[i].owner &&
		    out[m - 1].start + out[m - 1].len == out[i].start) {
			out[m - 1].len += out[i].len;
			continue;
		}
		out[m++] = out[i];
	}
	return m;
}
