// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The confirming pass after an AG rebuild, without a second inode scan.
 *
 * The AG rebuild writes AG headers, AG btrees, the AGFL and superblock
 * counters, and no inode.  When every finding of the pass that led to it
 * was one the rebuild covers (nothing about inodes, forks, directories,
 * links or quota), the inodes are exactly as that pass saw them, so the
 * pass that confirms the rebuild keeps what the inode scan learned — the
 * space each inode owns, the inode list, the directory entries, which
 * inodes of each chunk were free — and reads again only what the rebuild
 * wrote: the AG headers and every btree (phase 2), then cross-checks it
 * all (phases 4 to 6) as usual.  The rebuilt inode btrees are compared
 * with the free masks the scan saw.  The inode scan is most of a pass,
 * so this halves a repair that only rebuilds.
 *
 * A confirming pass that still finds something is followed by a full
 * pass, so a repair never plans from kept state.
 */
#include <stdlib.h>
#include <string.h>

#include <xfskit/format/btree.h>

#include "repair.h"

/* What an inode scan learned, kept across one AG rebuild. */
struct scan_keep {
	struct claims	*used;		/* per AG: inode-owned claims */
	struct ag_chunks {
		struct xk_inobt_rec	*recs;
		uint64_t		*seen;
		size_t			n;
	}		*chunks;	/* per AG */
	struct xk_vec	inodes;		/* struct inode_info */
	struct xk_vec	edges;		/* struct edge */
};

/* Findings the rebuild fixes without touching an inode. */
static const enum problem rebuild_only[] = {
	PR_AGF_BAD, PR_AGI_BAD, PR_AGFL_BAD, PR_BTREE_BAD, PR_AGF_COUNTER,
	PR_AGI_COUNTER, PR_CNTBT_MISMATCH, PR_FINOBT_MISMATCH,
	PR_INODE_STATE, PR_SPACE_LOST, PR_RMAP_MISMATCH,
	PR_REFCOUNT_MISMATCH, PR_SB_COUNTER,
};

int
keep_allowed(const struct repair_ctx *rc)
{
	const struct xk_sb *sb = &rc->mp->sb;
	unsigned long covered = 0, all = 0;

	if (rc->opt.no_modify || rc->plan.dirfix.n || rc->plan.attrfix.n ||
	    rc->from_secondary)
		return 0;
	/* Realtime mappings are gathered by the inode scan too. */
	if (sb->rblocks)
		return 0;
	/* Quota usage is summed by the inode scan. */
	if (xk_ino_valid(rc->mp, sb->uquotino) ||
	    xk_ino_valid(rc->mp, sb->gquotino) ||
	    xk_ino_valid(rc->mp, sb->pquotino))
		return 0;
	for (size_t i = 0; i < sizeof(rebuild_only) / sizeof(rebuild_only[0]);
	     i++)
		covered += rc->found.counts[rebuild_only[i]];
	for (int i = 0; i < PR_NR; i++)
		all += rc->found.counts[i];
	return all && covered == all;
}

static int
inode_owned(const struct claim *c)
{
	return !xk_rmap_owner_is_special(c->owner) ||
	       c->owner == XK_RMAP_OWN_INODES;
}

static void *
dup_array(const void *v, size_t n, size_t size)
{
	void *p = xk_malloc(n ? n * size : 1);

	if (p && n)
		memcpy(p, v, n * size);
	return p;
}

void
keep_free(struct repair_ctx *rc)
{
	struct scan_keep *k = rc->scan.keep;

	if (!k)
		return;
	for (uint32_t agno = 0; agno < rc->mp->g.agcount; agno++) {
		if (k->used)
			claims_free(&k->used[agno]);
		if (k->chunks) {
			free(k->chunks[agno].recs);
			free(k->chunks[agno].seen);
		}
	}
	free(k->used);
	free(k->chunks);
	xk_vec_free(&k->inodes);
	xk_vec_free(&k->edges);
	free(k);
	rc->scan.keep = NULL;
}

int
keep_take(struct repair_ctx *rc)
{
	uint32_t agcount = rc->mp->g.agcount;
	struct scan_keep *k;
	int err = 0;

	keep_free(rc);
	k = xk_calloc(1, sizeof(*k));
	if (!k)
		return -ENOMEM;
	rc->scan.keep = k;
	k->used = xk_calloc(agcount, sizeof(*k->used));
	k->chunks = xk_calloc(agcount, sizeof(*k->chunks));
	if (!k->used || !k->chunks)
		err = -ENOMEM;
	/* Under -m the copies go to files as the lists themselves did. */
	k->inodes.spill = rc->spill;
	k->edges.spill = rc->spill;
	if (!err)
		err = xk_vec_append(&k->inodes, rc->scan.inodes, rc->scan.ninodes,
				 sizeof(*rc->scan.inodes));
	if (!err)
		err = xk_vec_append(&k->edges, rc->scan.edges, rc->scan.nedges,
				 sizeof(*rc->scan.edges));
	for (uint32_t agno = 0; agno < agcount && !err; agno++)
		k->used[agno].vec.spill = rc->spill;
	for (uint32_t agno = 0; agno < agcount && !err; agno++) {
		const struct ag_scan *as = &rc->scan.ags[agno];
		struct ag_chunks *ch = &k->chunks[agno];

		for (size_t i = 0; i < as->used.n && !err; i++) {
			const struct claim *c = &as->used.v[i];

			if (inode_owned(c))
				err = claims_add(&k->used[agno], c->agbno,
						 c->len, c->owner, c->offset);
		}
		ch->n = as->chunks.n;
		ch->recs = dup_array(as->chunks.v, as->chunks.n,
				     sizeof(*as->chunks.v));
		ch->seen = as->seen_free ?
			   dup_array(as->seen_free, as->chunks.n,
				     sizeof(*as->seen_free)) : NULL;
		if (!ch->recs || (as->seen_free && !ch->seen))
			err = -ENOMEM;
	}
	if (err)
		keep_free(rc);
	return err;
}

/* In use by the scan's count: the chunk's inodes outside holes. */
static uint64_t
hole_bits(const struct xk_mount *mp, const struct xk_inobt_rec *r)
{
	uint64_t m = 0;
	uint16_t hm;

	if (!mp->g.has_sparse)
		return 0;
	hm = xk_be16_get(r->ir_u.sp.ir_holemask);
	for (int b = 0; b < 16; b++)
		if (hm & (1u << b))
			m |= 0xfULL << (b * XK_INODES_PER_HOLEMASK_BIT);
	return m;
}

/* The rebuilt inobt against the free masks the scan saw. */
static void
compare_chunks(struct repair_ctx *rc, uint32_t agno,
	       const struct ag_chunks *ch)
{
	struct xk_mount *mp = rc->mp;
	const struct ag_scan *as = &rc->scan.ags[agno];

	if (ch->n != as->chunks.n)
		report(rc, PR_INODE_STATE, "inobt", agno, 0, XK_NO_DADDR,
		       "chunks", "the inobt has %zu chunks, the inode scan "
		       "saw %zu", as->chunks.n, ch->n);
	for (size_t i = 0; i < ch->n; i++) {
		const struct xk_inobt_rec *r = bsearch(&ch->recs[i], as->chunks.v,
						       as->chunks.n,
						       sizeof(*as->chunks.v),
						       cmp_chunk_start);
		uint32_t start = xk_be32_get(ch->recs[i].ir_startino);
		uint64_t holes, want, have;

		if (!r) {
			report(rc, PR_INODE_STATE, "inobt", agno, 0,
			       XK_NO_DADDR, "chunk", "no record for the chunk "
			       "at agino %u", start);
			continue;
		}
		holes = hole_bits(mp, &ch->recs[i]);
		want = (ch->seen ? ch->seen[i] : ~0ULL) & ~holes;
		have = xk_be64_get(r->ir_free) & ~holes;
		if (want != have || hole_bits(mp, r) != holes)
			report(rc, PR_INODE_STATE, "inobt", agno, 0,
			       XK_NO_DADDR, "free", "the chunk at agino %u "
			       "has free mask 0x%llx, the inodes say 0x%llx",
			       start, (unsigned long long)have,
			       (unsigned long long)want);
	}
}

int
phase_inodes_kept(struct repair_ctx *rc)
{
	struct scan_keep *k = rc->scan.keep;
	int err = 0;

	/* The lists move to the pass (kept state is used once). */
	xk_vec_move(&rc->scan.inode_vec, &k->inodes);
	xk_vec_move(&rc->scan.edge_vec, &k->edges);
	/* What phase 5 derives is derived again. */
	for (size_t i = 0; i < rc->scan.ninodes; i++) {
		rc->scan.inodes[i].refs = 0;
		rc->scan.inodes[i].reached = 0;
	}
	for (uint32_t agno = 0; agno < rc->mp->g.agcount && !err; agno++) {
		const struct claims *u = &k->used[agno];

		for (size_t i = 0; i < u->n && !err; i++)
			err = claims_add(&rc->scan.ags[agno].used, u->v[i].agbno,
					 u->v[i].len, u->v[i].owner,
					 u->v[i].offset);
		compare_chunks(rc, agno, &k->chunks[agno]);
	}
	return err;
}
