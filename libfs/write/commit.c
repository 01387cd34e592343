// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Commit: rebuild every per-AG index from the builder's state.
 *
 * For each AG: the reverse mappings are sorted and merged, shared
 * extents become refcount records, and the blocks the new trees and the
 * AGFL need are taken from the front of the longest free extent (which
 * never adds a free extent, so the count the trees were sized for holds).
 * Taking blocks changes the records (one more rmap, one shorter free
 * extent), so sizing repeats until what was taken covers what is needed;
 * what is left over goes to the AGFL.  Then every tree is bulk loaded,
 * the AGF, AGI and AGFL are written whole, and the superblock counters
 * are summed.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <xfskit/btree_bulk.h>

#include "write_priv.h"

/* Order of rmapbt keys: start, owner, offset with fork flags. */
static int
rmap_cmp(const void *pa, const void *pb)
{
	const struct bld_rmap *a = pa, *b = pb;
	uint64_t ao = a->offset & ~XK_RMAP_OFF_UNWRITTEN;
	uint64_t bo = b->offset & ~XK_RMAP_OFF_UNWRITTEN;

	if (a->start != b->start)
		return a->start < b->start ? -1 : 1;
	if (a->owner != b->owner)
		return a->owner < b->owner ? -1 : 1;
	if (ao != bo)
		return ao < bo ? -1 : 1;
	return 0;
}

static int
rmap_mergeable(const struct bld_rmap *l, const struct bld_rmap *r)
{
	if (l->owner != r->owner || l->start + l->len != r->start ||
	    (l->offset & XK_RMAP_OFF_FLAGS) != (r->offset & XK_RMAP_OFF_FLAGS))
		return 0;
	if ((uint64_t)l->len + r->len > UINT32_MAX)
		return 0;
	if (xk_rmap_owner_is_special(l->owner) ||
	    (l->offset & XK_RMAP_OFF_BMBT_BLOCK))
		return 1;
	return (l->offset & XK_RMAP_OFF_MASK) + l->len ==
	       (r->offset & XK_RMAP_OFF_MASK);
}

/* Owner, flags, then start: an owner's mergeable pieces side by side. */
static int
rmap_cmp_owner(const void *pa, const void *pb)
{
	const struct bld_rmap *a = pa, *b = pb;
	uint64_t af = a->offset & XK_RMAP_OFF_FLAGS;
	uint64_t bf = b->offset & XK_RMAP_OFF_FLAGS;

	if (a->owner != b->owner)
		return a->owner < b->owner ? -1 : 1;
	if (af != bf)
		return af < bf ? -1 : 1;
	if (a->start != b->start)
		return a->start < b->start ? -1 : 1;
	return 0;
}

/*
 * Sort and merge in place; returns the new count.  Merging runs in
 * owner order first: with shared blocks another owner's record can sit
 * between two pieces of one mapping in key order.
 */
static uint64_t
rmap_normalize(struct bld_rmap *r, uint64_t n)
{
	uint64_t out = 0;

	if (n == 0)
		return 0;
	qsort(r, n, sizeof(*r), rmap_cmp_owner);
	for (uint64_t i = 0; i < n; i++) {
		if (out && rmap_mergeable(&r[out - 1], &r[i]))
			r[out - 1].len += r[i].len;
		else
			r[out++] = r[i];
	}
	qsort(r, out, sizeof(*r), rmap_cmp);
	return out;
}

struct edge {
	uint32_t	bno;
	int		delta;
};

static int
edge_cmp(const void *pa, const void *pb)
{
	const struct edge *a = pa, *b = pb;

	if (a->bno != b->bno)
		return a->bno < b->bno ? -1 : 1;
	return a->delta - b->delta;
}

static int
refc_push(struct bld_refc **v, uint64_t *n, uint64_t *alloc,
	  struct bld_refc rec)
{
	int err = bld_grow((void **)v, alloc, *n + 1, sizeof(**v));

	if (!err)
		(*v)[(*n)++] = rec;
	return err;
}

/* Refcount records: every stretch mapped by two or more inode owners. */
static int
refc_build(const struct bld_rmap *r, uint64_t n, struct bld_refc **out,
	   uint64_t *nout)
{
	struct edge *e = malloc((2 * n + 1) * sizeof(*e));
	struct bld_refc *rc = NULL;
	uint64_t ne = 0, nrc = 0, alloc = 0;
	uint32_t depth = 0;

	*out = NULL;
	*nout = 0;
	if (!e)
		return -ENOMEM;
	for (uint64_t i = 0; i < n; i++) {
		if (xk_rmap_owner_is_special(r[i].owner) ||
		    (r[i].offset & (XK_RMAP_OFF_BMBT_BLOCK |
				    XK_RMAP_OFF_ATTR_FORK)))
			continue;
		e[ne++] = (struct edge){ r[i].start, 1 };
		e[ne++] = (struct edge){ r[i].start + r[i].len, -1 };
	}
	if (ne)
		qsort(e, ne, sizeof(*e), edge_cmp);
	for (uint64_t i = 0; i < ne; i++) {
		uint32_t here = e[i].bno;

		/* Apply every edge at this block, then open a new stretch. */
		while (i < ne && e[i].bno == here)
			depth += (uint32_t)e[i++].delta;
		i--;
		if (depth >= 2 && i + 1 < ne) {
			uint32_t end = e[i + 1].bno;

			if (nrc && rc[nrc - 1].start + rc[nrc - 1].len == here &&
			    rc[nrc - 1].count == depth) {
				rc[nrc - 1].len += end - here;
				continue;
			}
			if (refc_push(&rc, &nrc, &alloc, (struct bld_refc){
					here, end - here, depth, 0 })) {
				free(rc);
				free(e);
				return -ENOMEM;
			}
		}
	}
	/* CoW staging extents follow, in the CoW key domain. */
	for (uint64_t i = 0; i < n; i++) {
		if (r[i].owner != XK_RMAP_OWN_COW)
			continue;
		if (refc_push(&rc, &nrc, &alloc, (struct bld_refc){
				r[i].start, r[i].len, 1, 1 })) {
			free(rc);
			free(e);
			return -ENOMEM;
		}
	}
	free(e);
	*out = rc;
	*nout = nrc;
	return 0;
}

/* Refcount key order: shared records, then the CoW domain. */
static int
refc_cmp(const void *pa, const void *pb)
{
	const struct bld_refc *a = pa, *b = pb;

	if (a->cow != b->cow)
		return a->cow - b->cow;
	return a->start < b->start ? -1 : a->start > b->start;
}

/* The trees of one AG, in the order their blocks are handed out. */
enum { T_BNO, T_CNT, T_RMAP, T_INO, T_FINO, T_REFC, T_NR };

static const enum xk_btnum t_btnum[T_NR] = {
	XK_BT_BNO, XK_BT_CNT, XK_BT_RMAP, XK_BT_INO, XK_BT_FINO, XK_BT_REFC,
};

static const uint64_t t_owner[T_NR] = {
	XK_RMAP_OWN_AG, XK_RMAP_OWN_AG, XK_RMAP_OWN_AG, XK_RMAP_OWN_INOBT,
	XK_RMAP_OWN_INOBT, XK_RMAP_OWN_REFC,
};

struct agc {
	struct xk_bld	*b;
	struct bld_ag	*ag;
	int		has[T_NR];
	struct xk_btree_bulk bb[T_NR];
	uint64_t	nrecs[T_NR];
	/* Blocks taken for the trees and the AGFL. */
	uint32_t	*taken;
	uint64_t	ntaken, taken_alloc;
	uint64_t	need;		/* tree blocks */
	uint32_t	agfl_count;
	struct bld_rmap	*rmap;		/* final mappings */
	uint64_t	nrmap;
	struct bld_refc	*refc;
	uint64_t	nrefc;
	uint32_t	nfreechunks;
};

static int
take_blocks(struct agc *c, uint64_t count)
{
	struct bld_ag *ag = c->ag;

	while (count) {
		uint32_t best = UINT32_MAX, n;
		int err;

		for (uint32_t i = 0; i < ag->nfree; i++)
			if (best == UINT32_MAX ||
			    bld_ext_usable(ag, &ag->free[i]).len >
			    bld_ext_usable(ag, &ag->free[best]).len)
				best = i;
		if (best == UINT32_MAX ||
		    !bld_ext_usable(ag, &ag->free[best]).len)
			return -ENOSPC;
		n = bld_ext_usable(ag, &ag->free[best]).len;
		if (n > count)
			n = (uint32_t)count;
		if (c->ntaken + n > c->taken_alloc) {
			uint64_t a = c->taken_alloc ? c->taken_alloc * 2 : 64;
			uint32_t *p;

			while (a < c->ntaken + n)
				a *= 2;
			p = realloc(c->taken, a * sizeof(*p));
			if (!p)
				return -ENOMEM;
			c->taken = p;
			c->taken_alloc = a;
		}
		for (uint32_t i = 0; i < n; i++)
			c->taken[c->ntaken++] = ag->free[best].start + i;
		err = bld_free_take(ag, ag->free[best].start, n);
		if (err)
			return err;
		count -= n;
	}
	return 0;
}

/* The final rmap list: the AG's own plus the trees' and AGFL blocks. */
static int
final_rmaps(struct agc *c)
{
	struct bld_ag *ag = c->ag;
	uint64_t n = ag->nrmap, k = 0;
	struct bld_rmap *r = malloc((n + c->ntaken + 1) * sizeof(*r));

	if (!r)
		return -ENOMEM;
	if (n)
		memcpy(r, ag->rmap, n * sizeof(*r));
	for (int t = 0; t < T_NR; t++) {
		if (!c->has[t])
			continue;
		for (uint64_t i = 0; i < c->bb[t].blocks && k < c->ntaken;
		     i++)
			r[n++] = (struct bld_rmap){ c->taken[k++], 1,
						    t_owner[t], 0 };
	}
	while (k < c->ntaken)
		r[n++] = (struct bld_rmap){ c->taken[k++], 1, XK_RMAP_OWN_AG,
					    0 };
	free(c->rmap);
	c->rmap = r;
	c->nrmap = rmap_normalize(r, n);
	return 0;
}

static int
plan_trees(struct agc *c)
{
	struct xk_mount *mp = c->b->mp;
	int err;

	c->nrecs[T_BNO] = c->nrecs[T_CNT] = c->ag->nfree;
	c->nrecs[T_RMAP] = c->nrmap;
	c->nrecs[T_INO] = c->ag->nchunk;
	c->nrecs[T_FINO] = c->nfreechunks;
	c->nrecs[T_REFC] = c->nrefc;
	c->need = 0;
	for (int t = 0; t < T_NR; t++) {
		if (!c->has[t])
			continue;
		c->bb[t] = (struct xk_btree_bulk){
			.ops = xk_btree_ops_get(t_btnum[t]),
			.agno = c->ag->agno,
		};
		err = xk_btree_bulk_plan(mp, &c->bb[t], c->nrecs[t]);
		if (err)
			return err;
		c->need += c->bb[t].blocks;
	}
	return 0;
}

/* Take blocks until the trees and the minimum AGFL fit. */
static int
size_ag(struct agc *c)
{
	struct xk_mount *mp = c->b->mp;
	uint64_t agfl_min = xk_ag_min_freelist(mp, c->ag->length);
	uint64_t agfl_max = mp->g.agfl_size;
	int err;

	if (agfl_min > agfl_max)
		agfl_min = agfl_max;
	for (int round = 0; round < 64; round++) {
		err = final_rmaps(c);
		if (!err)
			err = plan_trees(c);
		if (err)
			return err;
		if (c->ntaken < c->need + agfl_min) {
			err = take_blocks(c, c->need + agfl_min - c->ntaken);
			if (err)
				return err;
			continue;
		}
		if (c->ntaken - c->need > agfl_max) {
			/* Too many: give the surplus back and size again. */
			uint64_t give = c->ntaken - c->need - agfl_max;

			for (uint64_t i = 0; i < give; i++) {
				err = bld_free_add(c->ag,
						   c->taken[--c->ntaken], 1);
				if (err)
					return err;
			}
			continue;
		}
		/*
		 * The mappings were made with the previous plan's split of
		 * blocks between trees: redo them with this plan and accept
		 * only when the plan comes out the same.
		 */
		{
			uint64_t before[T_NR];
			int same = 1;

			for (int t = 0; t < T_NR; t++)
				before[t] = c->bb[t].blocks;
			err = final_rmaps(c);
			if (!err)
				err = plan_trees(c);
			if (err)
				return err;
			for (int t = 0; t < T_NR; t++)
				if (before[t] != c->bb[t].blocks)
					same = 0;
			if (!same)
				continue;
		}
		c->agfl_count = (uint32_t)(c->ntaken - c->need);
		return 0;
	}
	return -ENOSPC;
}

static int
cnt_cmp(const void *pa, const void *pb)
{
	const struct bld_ext *a = pa, *b = pb;

	if (a->len != b->len)
		return a->len < b->len ? -1 : 1;
	return a->start < b->start ? -1 : a->start > b->start;
}

/* Encode the records of tree t into a fresh array. */
static int
tree_recs(struct agc *c, int t, uint8_t **out)
{
	const struct xk_btree_ops *ops = c->bb[t].ops;
	struct bld_ag *ag = c->ag;
	int sparse = c->b->mp->g.has_sparse;
	uint8_t *r = calloc(c->nrecs[t] ? c->nrecs[t] : 1, ops->rec_len);
	uint64_t k = 0;

	if (!r)
		return -ENOMEM;
	switch (t) {
	case T_BNO:
	case T_CNT: {
		struct bld_ext *v = malloc((ag->nfree + 1) * sizeof(*v));

		if (!v) {
			free(r);
			return -ENOMEM;
		}
		memcpy(v, ag->free, ag->nfree * sizeof(*v));
		if (t == T_CNT)
			qsort(v, ag->nfree, sizeof(*v), cnt_cmp);
		for (uint32_t i = 0; i < ag->nfree; i++) {
			xk_put_be32(r + i * 8, v[i].start);
			xk_put_be32(r + i * 8 + 4, v[i].len);
		}
		free(v);
		break;
	}
	case T_RMAP:
		for (uint64_t i = 0; i < c->nrmap; i++) {
			uint8_t *p = r + i * 24;

			xk_put_be32(p, c->rmap[i].start);
			xk_put_be32(p + 4, c->rmap[i].len);
			xk_put_be64(p + 8, c->rmap[i].owner);
			xk_put_be64(p + 16, c->rmap[i].offset);
		}
		break;
	case T_INO:
	case T_FINO:
		for (uint32_t i = 0; i < ag->nchunk; i++) {
			const struct bld_chunk *ch = &ag->chunk[i];
			uint8_t *p = r + k * 16;
			uint32_t nfree = 0;

			for (int j = 0; j < 64; j++)
				if (!(ch->holemask & (1u << (j / 4))) &&
				    (ch->freemask & (1ULL << j)))
					nfree++;
			if (t == T_FINO && nfree == 0)
				continue;
			xk_put_be32(p, ch->startino);
			if (sparse) {
				xk_put_be16(p + 4, ch->holemask);
				p[6] = ch->count;
				p[7] = (uint8_t)nfree;
			} else {
				xk_put_be32(p + 4, nfree);
			}
			xk_put_be64(p + 8, ch->freemask);
			k++;
		}
		break;
	case T_REFC:
		for (uint64_t i = 0; i < c->nrefc; i++) {
			xk_put_be32(r + i * 12, c->refc[i].start |
				    (c->refc[i].cow ? XK_REFC_COWFLAG : 0));
			xk_put_be32(r + i * 12 + 4, c->refc[i].len);
			xk_put_be32(r + i * 12 + 8, c->refc[i].count);
		}
		break;
	}
	*out = r;
	return 0;
}

static int
write_headers(struct agc *c, const uint32_t root[T_NR],
	      const uint32_t *agfl)
{
	struct xk_mount *mp = c->b->mp;
	struct bld_ag *ag = c->ag;
	uint32_t ss = mp->g.sectsize, longest = 0, newino = XK_NULLAGINO;
	uint32_t unlinked[XK_AGI_UNLINKED_BUCKETS];
	struct xk_buf *bp;
	struct xk_agf *agf;
	struct xk_agi *agi;
	int err;

	for (uint32_t i = 0; i < ag->nfree; i++)
		if (ag->free[i].len > longest)
			longest = ag->free[i].len;
	for (int i = 0; i < XK_AGI_UNLINKED_BUCKETS; i++)
		unlinked[i] = XK_NULLAGINO;
	/* Keep the unlinked lists of an AGI that can still be read. */
	if (!ag->clear_unlinked && xk_agi_read(mp, ag->agno, 0, &bp) == 0) {
		for (int i = 0; i < XK_AGI_UNLINKED_BUCKETS; i++)
			unlinked[i] = xk_be32_get(
				xk_buf_agi(bp)->agi_unlinked[i]);
		xk_buf_release(bp);
	}
	if (ag->nchunk)
		newino = ag->chunk[ag->nchunk - 1].startino;

	err = xk_buf_get(mp, xk_ag_hdr_daddr(mp, ag->agno, XK_AGF_SECTOR), ss,
			 &xk_agf_buf_ops, &bp);
	if (err)
		return err;
	bp->agno = ag->agno;
	memset(bp->data, 0, ss);
	agf = xk_buf_agf(bp);
	xk_be32_set(&agf->agf_magicnum, XK_AGF_MAGIC);
	xk_be32_set(&agf->agf_versionnum, XK_AGF_VERSION);
	xk_be32_set(&agf->agf_seqno, ag->agno);
	xk_be32_set(&agf->agf_length, ag->length);
	xk_be32_set(&agf->agf_roots[XK_AGF_BNO], root[T_BNO]);
	xk_be32_set(&agf->agf_roots[XK_AGF_CNT], root[T_CNT]);
	xk_be32_set(&agf->agf_levels[XK_AGF_BNO], c->bb[T_BNO].levels);
	xk_be32_set(&agf->agf_levels[XK_AGF_CNT], c->bb[T_CNT].levels);
	if (c->has[T_RMAP]) {
		xk_be32_set(&agf->agf_roots[XK_AGF_RMAP], root[T_RMAP]);
		xk_be32_set(&agf->agf_levels[XK_AGF_RMAP],
			    c->bb[T_RMAP].levels);
		xk_be32_set(&agf->agf_rmap_blocks,
			    (uint32_t)c->bb[T_RMAP].blocks);
	}
	xk_be32_set(&agf->agf_flfirst, 0);
	xk_be32_set(&agf->agf_fllast, c->agfl_count ? c->agfl_count - 1 :
			mp->g.agfl_size - 1);
	xk_be32_set(&agf->agf_flcount, c->agfl_count);
	xk_be32_set(&agf->agf_freeblks, (uint32_t)ag->freeblks);
	xk_be32_set(&agf->agf_longest, longest);
	{
		uint64_t btreeblks = c->bb[T_BNO].blocks - 1 +
				     c->bb[T_CNT].blocks - 1 +
				     (c->has[T_RMAP] ?
				      c->bb[T_RMAP].blocks - 1 : 0);

		xk_be32_set(&agf->agf_btreeblks, (uint32_t)btreeblks);
		ag->fdblocks = ag->freeblks + c->agfl_count + btreeblks;
	}
	memcpy(agf->agf_uuid, mp->meta_uuid, 16);
	if (c->has[T_REFC]) {
		xk_be32_set(&agf->agf_refcount_root, root[T_REFC]);
		xk_be32_set(&agf->agf_refcount_level, c->bb[T_REFC].levels);
		xk_be32_set(&agf->agf_refcount_blocks,
			    (uint32_t)c->bb[T_REFC].blocks);
	}
	xk_buf_dirty(bp);
	xk_buf_release(bp);

	err = xk_buf_get(mp, xk_ag_hdr_daddr(mp, ag->agno, XK_AGI_SECTOR), ss,
			 &xk_agi_buf_ops, &bp);
	if (err)
		return err;
	bp->agno = ag->agno;
	memset(bp->data, 0, ss);
	agi = xk_buf_agi(bp);
	xk_be32_set(&agi->agi_magicnum, XK_AGI_MAGIC);
	xk_be32_set(&agi->agi_versionnum, XK_AGI_VERSION);
	xk_be32_set(&agi->agi_seqno, ag->agno);
	xk_be32_set(&agi->agi_length, ag->length);
	xk_be32_set(&agi->agi_count, (uint32_t)ag->icount);
	xk_be32_set(&agi->agi_root, root[T_INO]);
	xk_be32_set(&agi->agi_level, c->bb[T_INO].levels);
	xk_be32_set(&agi->agi_freecount, (uint32_t)ag->ifree);
	xk_be32_set(&agi->agi_newino, newino);
	xk_be32_set(&agi->agi_dirino, XK_NULLAGINO);
	for (int i = 0; i < XK_AGI_UNLINKED_BUCKETS; i++)
		xk_be32_set(&agi->agi_unlinked[i], unlinked[i]);
	memcpy(agi->agi_uuid, mp->meta_uuid, 16);
	if (c->has[T_FINO]) {
		xk_be32_set(&agi->agi_free_root, root[T_FINO]);
		xk_be32_set(&agi->agi_free_level, c->bb[T_FINO].levels);
	}
	if (mp->g.has_inobtcnt) {
		xk_be32_set(&agi->agi_iblocks, (uint32_t)c->bb[T_INO].blocks);
		if (c->has[T_FINO])
			xk_be32_set(&agi->agi_fblocks,
				    (uint32_t)c->bb[T_FINO].blocks);
	}
	xk_buf_dirty(bp);
	xk_buf_release(bp);

	err = xk_buf_get(mp, xk_ag_hdr_daddr(mp, ag->agno, XK_AGFL_SECTOR),
			 ss, &xk_agfl_buf_ops, &bp);
	if (err)
		return err;
	bp->agno = ag->agno;
	memset(bp->data, 0, ss);
	{
		struct xk_agfl *h = xk_buf_agfl(bp);

		xk_be32_set(&h->agfl_magicnum, XK_AGFL_MAGIC);
		xk_be32_set(&h->agfl_seqno, ag->agno);
		memcpy(h->agfl_uuid, mp->meta_uuid, 16);
		for (uint32_t i = 0; i < mp->g.agfl_size; i++)
			xk_be32_set(xk_agfl_bno(bp->data, i),
				    i < c->agfl_count ? agfl[i] :
							XK_NULLAGBLOCK);
	}
	xk_buf_dirty(bp);
	xk_buf_release(bp);
	return 0;
}

int
bld_commit_ag(struct xk_bld *b, struct bld_ag *ag)
{
	struct xk_mount *mp = b->mp;
	struct agc c = { .b = b, .ag = ag };
	uint32_t root[T_NR] = { 0 };
	uint64_t k = 0;
	int err;

	c.has[T_BNO] = c.has[T_CNT] = c.has[T_INO] = 1;
	c.has[T_RMAP] = mp->g.has_rmapbt;
	c.has[T_FINO] = mp->g.has_finobt;
	c.has[T_REFC] = mp->g.has_reflink;
	ag->nrmap = rmap_normalize(ag->rmap, ag->nrmap);
	/* Every owner claimed (repair): sharing follows from the claims. */
	if (mp->g.has_reflink && (mp->g.has_rmapbt || b->from_claims)) {
		err = refc_build(ag->rmap, ag->nrmap, &c.refc, &c.nrefc);
		if (err)
			return err;
	} else if (mp->g.has_reflink && ag->nrefc) {
		/* Without the rmapbt the loaded records are the truth. */
		c.refc = malloc(ag->nrefc * sizeof(*c.refc));
		if (!c.refc)
			return -ENOMEM;
		memcpy(c.refc, ag->refc, ag->nrefc * sizeof(*c.refc));
		c.nrefc = ag->nrefc;
		qsort(c.refc, c.nrefc, sizeof(*c.refc), refc_cmp);
	}
	for (uint32_t i = 0; i < ag->nchunk; i++) {
		const struct bld_chunk *ch = &ag->chunk[i];

		for (int j = 0; j < 64; j++)
			if (!(ch->holemask & (1u << (j / 4))) &&
			    (ch->freemask & (1ULL << j))) {
				c.nfreechunks++;
				break;
			}
	}
	err = size_ag(&c);
	if (err)
		goto out;
	for (int t = 0; t < T_NR && !err; t++) {
		uint64_t *blocks, rootbno = 0;
		uint8_t *recs;

		if (!c.has[t])
			continue;
		blocks = malloc(c.bb[t].blocks * sizeof(*blocks));
		if (!blocks) {
			err = -ENOMEM;
			break;
		}
		for (uint64_t i = 0; i < c.bb[t].blocks; i++)
			blocks[i] = c.taken[k++];
		err = tree_recs(&c, t, &recs);
		if (!err) {
			err = xk_btree_bulk_load(mp, &c.bb[t], recs,
						 c.nrecs[t], blocks, &rootbno);
			free(recs);
		}
		free(blocks);
		root[t] = (uint32_t)rootbno;
	}
	if (!err)
		err = write_headers(&c, root, c.taken + k);
	/* The builder's state now matches the disk. */
	if (!err) {
		free(ag->rmap);
		ag->rmap = c.rmap;
		ag->nrmap = ag->rmap_alloc = c.nrmap;
		c.rmap = NULL;
	}
out:
	free(c.taken);
	free(c.rmap);
	free(c.refc);
	return err;
}

int
xk_bld_commit(struct xk_bld *b)
{
	struct xk_mount *mp = b->mp;
	uint64_t icount = 0, ifree = 0, fdblocks = 0;
	struct xk_buf *bp;
	struct xk_sb sb;
	int err = 0;

	err = bld_settle_pending(b);
	for (uint32_t i = 0; i < b->agcount && !err; i++)
		err = bld_commit_ag(b, &b->ags[i]);
	if (err)
		return err;
	for (uint32_t i = 0; i < b->agcount; i++) {
		icount += b->ags[i].icount;
		ifree += b->ags[i].ifree;
		fdblocks += b->ags[i].fdblocks;
	}
	err = xk_sb_read(mp, 0, 0, &bp);
	if (err)
		return err;
	xk_sb_decode(&sb, (const struct xk_dsb *)bp->data);
	sb.icount = icount;
	sb.ifree = ifree;
	sb.fdblocks = fdblocks;
	xk_sb_encode((struct xk_dsb *)bp->data, &sb);
	mp->sb.icount = icount;
	mp->sb.ifree = ifree;
	mp->sb.fdblocks = fdblocks;
	xk_buf_dirty(bp);
	xk_buf_release(bp);
	return 0;
}
