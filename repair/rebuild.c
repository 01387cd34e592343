// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The AG rebuild: every per-AG btree (bnobt, cntbt, inobt, finobt,
 * rmapbt, refcountbt), the AGFL, the AGF and AGI and the superblock
 * counters are rebuilt from what the last check pass observed, through
 * the builder's repair entry (xk_bld_open_empty, xk_bld_claim,
 * xk_bld_add_ichunk, xk_bld_commit).  This is how damage to any of those
 * structures is fixed: nothing of the old trees is read back, their
 * blocks are simply not claimed and so become free space.
 *
 * Directories planned for a rewrite (dirfix.c), attr forks (attrfix.c)
 * and realtime bitmap or summary inodes made anew (rt_fix.c) are written
 * inside the same session: their old blocks are not fed, the builder
 * allocates new ones.
 *
 * In: rc->scan.ags from a check pass that planned no inode fix (so the claims
 * describe inodes as they will stay).  The rebuild refuses (and the run
 * ends with findings) when an AG's inode chunks are unknown: rebuilding
 * then would free live inodes.
 *
 * What is fed: every extent an inode owns (data and attr fork extents
 * with their offsets and unwritten state, bmbt blocks) and every inode
 * chunk with the free mask the inode scan saw.  The sector headers and
 * the log are claimed by the builder itself; CoW staging extents are
 * left out (after a clean unmount there are none worth keeping: the
 * kernel frees them at mount).
 */
#include <stdlib.h>
#include <string.h>

#include <xfskit/btree.h>
#include <xfskit/build.h>

#include "repair.h"
#include "reasm.h"

/* Findings a rebuild of the AG structures fixes. */
static const enum problem ag_problems[] = {
	PR_AGF_BAD, PR_AGI_BAD, PR_AGFL_BAD, PR_BTREE_BAD, PR_AGF_COUNTER,
	PR_AGI_COUNTER, PR_CNTBT_MISMATCH, PR_FINOBT_MISMATCH,
	PR_INODE_STATE, PR_SPACE_CONFLICT, PR_SPACE_LOST, PR_RMAP_MISMATCH,
	PR_REFCOUNT_MISMATCH, PR_SB_COUNTER, PR_UNLINKED,
};

int
need_rebuild(const struct repair_ctx *rc)
{
	for (size_t i = 0; i < sizeof(ag_problems) / sizeof(ag_problems[0]);
	     i++)
		if (rc->found.counts[ag_problems[i]])
			return 1;
	return 0;
}

static int
cmp_claim_start(const void *a, const void *b)
{
	const struct claim *x = a, *y = b;

	if (x->agbno != y->agbno)
		return x->agbno < y->agbno ? -1 : 1;
	return (x->owner > y->owner) - (x->owner < y->owner);
}

/* Owners whose claims the builder needs from us. */
static int
fed_owner(uint64_t owner)
{
	return !xk_rmap_owner_is_special(owner);
}

/*
 * Whether the builder gets claim c: not the blocks of a fork being
 * written anew (a directory being rewritten gets new data blocks and
 * an attr bmbt if it needs one, its attr blocks stay its own; an attr
 * fork being rewritten gets new blocks; so does a realtime bitmap or
 * summary inode being rebuilt).  The prepares (dirs_prepare,
 * attrs_prepare) have run.
 */
static int
claim_fed(const struct repair_ctx *rc, const struct claim *c)
{
	if (!fed_owner(c->owner) || rt_being_rebuilt(rc, c->owner))
		return 0;
	if (dir_being_rebuilt(rc, c->owner) &&
	    (c->offset & (XK_RMAP_OFF_ATTR_FORK | XK_RMAP_OFF_BMBT_BLOCK)) !=
	    XK_RMAP_OFF_ATTR_FORK)
		return 0;
	return !((c->offset & XK_RMAP_OFF_ATTR_FORK) &&
		 attr_being_rewritten(rc, c->owner));
}

/* File data that reflink may share (not bmbt blocks, not attr forks). */
static int
shareable(const struct claim *c)
{
	return !(c->offset & (XK_RMAP_OFF_BMBT_BLOCK | XK_RMAP_OFF_ATTR_FORK));
}

/*
 * Space claimed twice where sharing is not allowed (no reflink, or a
 * bmbt/attr block, or an inode extent over fixed metadata: headers, log,
 * inode chunks): the later inode is cleared, as xfs_repair does; the
 * fixed metadata always wins.  Returns the number of inodes planned.
 */
static unsigned long
resolve_conflicts(struct repair_ctx *rc, uint32_t agno, struct claims *used)
{
	unsigned long n = 0;
	uint64_t end = 0;
	const struct claim *prev = NULL;

	sort_v(used->v, used->n, sizeof(*used->v), cmp_claim_start);
	for (size_t i = 0; i < used->n; i++) {
		const struct claim *c = &used->v[i];
		int fixed = c->owner == XK_RMAP_OWN_FS ||
			    c->owner == XK_RMAP_OWN_LOG ||
			    c->owner == XK_RMAP_OWN_INODES;

		/*
		 * Blocks of a fork written anew are not kept (a damaged
		 * attr fork that maps another file's blocks loses them,
		 * the file keeps them).
		 */
		if (!fixed && !claim_fed(rc, c))
			continue;
		if (prev && c->agbno < end) {
			int ok = rc->mp->g.has_reflink && fed_owner(c->owner) &&
				 fed_owner(prev->owner) && shareable(c) &&
				 shareable(prev);

			if (!ok && !(fixed && !fed_owner(prev->owner))) {
				uint64_t victim = fed_owner(c->owner) ?
						  c->owner : prev->owner;
				char why[96];

				if (rc->opt.verbose)
					info(rc, "        - AG %u block %u is "
					     "claimed twice; clearing inode "
					     "%llu\n", agno, c->agbno,
					     (unsigned long long)victim);
				snprintf(why, sizeof(why), "AG %u block %u "
					 "is claimed by %s too", agno,
					 c->agbno, victim == c->owner ?
					 "an earlier owner" : "a later owner");
				plan_inode_why(rc, victim, IFIX_CLEAR, 0, why);
				n++;
			}
		}
		if ((uint64_t)c->agbno + c->len > end) {
			end = (uint64_t)c->agbno + c->len;
			prev = c;
		}
	}
	return n;
}

static int
feed_ag(struct repair_ctx *rc, struct xk_bld *b, uint32_t agno)
{
	struct xk_mount *mp = rc->mp;
	struct ag_scan *as = &rc->scan.ags[agno];
	int err = 0;

	for (size_t i = 0; i < as->used.n && !err; i++) {
		const struct claim *c = &as->used.v[i];
		unsigned int flags = 0;

		if (!claim_fed(rc, c))
			continue;
		if (c->offset & XK_RMAP_OFF_ATTR_FORK)
			flags |= XK_BLD_ATTR_FORK;
		if (c->offset & XK_RMAP_OFF_BMBT_BLOCK)
			flags |= XK_BLD_BMBT;
		if (c->offset & XK_RMAP_OFF_UNWRITTEN)
			flags |= XK_BLD_UNWRITTEN;
		err = xk_bld_claim(b, agno, c->agbno, c->len, c->owner,
				   c->offset & XK_RMAP_OFF_MASK, flags);
	}
	for (size_t i = 0; i < as->chunks.n && !err; i++) {
		const struct xk_inobt_rec *r = &as->chunks.v[i];
		uint16_t holes = mp->g.has_sparse ?
				 xk_be16_get(r->ir_u.sp.ir_holemask) : 0;
		uint64_t seen = as->seen_free ? as->seen_free[i] : ~0ULL;

		err = xk_bld_add_ichunk(b, agno, xk_be32_get(r->ir_startino),
					holes, seen);
	}
	return err;
}

/*
 * Test builds: the rebuilt inode btree of each AG holds one record per
 * chunk the scan saw, no more, no fewer.  Read back once written; a
 * read that fails (an injected fault) leaves the check undone, as it is
 * no part of the repair.
 */
static void
assert_inobt_counts(struct repair_ctx *rc)
{
	struct xk_mount *mp = rc->mp;

	for (uint32_t agno = 0; agno < mp->g.agcount; agno++) {
		struct xk_buf *bp;
		struct xk_btree_walk w = {
			.ops = &xk_inobt_ops, .agno = agno,
		};

		if (xk_agi_read(mp, agno, 0, &bp))
			return;
		w.root = xk_be32_get(xk_buf_agi(bp)->agi_root);
		w.levels = xk_be32_get(xk_buf_agi(bp)->agi_level);
		xk_buf_release(bp);
		if (xk_btree_walk(mp, &w))
			return;
		REPAIR_ASSERT(w.nrecs == rc->scan.ags[agno].chunks.n,
			      "AG %u's rebuilt inobt has %llu records, the "
			      "scan saw %zu chunks", agno,
			      (unsigned long long)w.nrecs,
			      rc->scan.ags[agno].chunks.n);
	}
}

/* No inode is on an unlinked list any more: the lists are emptied. */
static int
clear_unlinked(struct repair_ctx *rc)
{
	struct xk_mount *mp = rc->mp;

	for (uint32_t agno = 0; agno < mp->g.agcount; agno++) {
		struct xk_buf *bp;
		int err = xk_agi_read(mp, agno, 0, &bp);

		if (err)
			return err;
		for (int i = 0; i < XK_AGI_UNLINKED_BUCKETS; i++)
			xk_be32_set(&xk_buf_agi(bp)->agi_unlinked[i],
				    XK_NULLAGINO);
		xk_buf_dirty(bp);
		xk_buf_release(bp);
	}
	return 0;
}

/* What the rebuild wrote: each AG's structures, the counters. */
static void
report_rebuild(struct repair_ctx *rc)
{
	const struct xk_geom *g = &rc->mp->g;

	for (uint32_t agno = 0; agno < g->agcount; agno++)
		action_report(rc, ACT_AG_REBUILT, 0, agno, NULL, ": bnobt, "
			      "cntbt, inobt%s%s%s, AGFL, AGF and AGI "
			      "(unlinked lists emptied)",
			      g->has_finobt ? ", finobt" : "",
			      g->has_rmapbt ? ", rmapbt" : "",
			      g->has_reflink ? ", refcountbt" : "");
	action_report(rc, ACT_SB_WRITTEN, 0, 0, NULL, " (the primary): its "
		      "inode and free space counters recomputed");
}

int
rebuild_ags(struct repair_ctx *rc, unsigned long *applied)
{
	struct xk_mount *mp = rc->mp;
	struct xk_bld *b;
	struct attr_rewrites *aw = NULL;
	unsigned long conflicts = 0;
	int ndirs, nattrs, err;

	for (uint32_t agno = 0; agno < mp->g.agcount; agno++) {
		if (rc->scan.ags[agno].chunks_lost) {
			info(rc, "AG %u: its inode chunks are unknown (inode "
			     "btree and rmapbt both unreadable); not "
			     "rebuilding, to keep its inodes.\n", agno);
			return 0;
		}
	}
	/* First: which forks are written anew decides what conflicts. */
	ndirs = dirs_prepare(rc);
	nattrs = attrs_prepare(rc);
	for (uint32_t agno = 0; agno < mp->g.agcount && !rc->found.error;
	     agno++)
		conflicts += resolve_conflicts(rc, agno, &rc->scan.ags[agno].used);
	if (rc->found.error)
		return rc->found.error;
	if (conflicts)
		return apply_fixes(rc, applied);
	if (!ndirs && !nattrs && !need_rebuild(rc) && !reasm_pending(rc) &&
	    !rt_rebuild_pending(rc))
		return rc->found.error;
	if (rc->found.error)
		return rc->found.error;
	info(rc, "Rebuilding the AG btrees, free lists and counters...\n");
	err = xk_bld_open_empty(mp, &b);
	if (err)
		return err;
	rt_build_prepare(rc);
	for (uint32_t agno = 0; agno < mp->g.agcount && !err; agno++)
		err = feed_ag(rc, b, agno);
	/* Salvaged before any allocation can reuse their old blocks. */
	if (!err && nattrs)
		err = attrs_salvage(rc, &aw);
	if (!err)
		err = lf_alloc(rc, b);
	if (!err && rc->plan.dirfix.n)
		err = rebuild_dirs(rc, b);
	if (!err && nattrs)
		err = attrs_rewrite(rc, b, aw);
	attrs_free(aw);
	if (!err)
		err = reasm_build(rc, b);
	if (!err)
		err = rt_build(rc, b);
	if (!err)
		err = xk_bld_commit(b);
	xk_bld_free(b);
	/* Headers are verified when read back: write them first. */
	if (!err)
		err = xk_buf_flush(mp);
	if (!err && REPAIR_DEBUG)
		assert_inobt_counts(rc);
	if (!err)
		err = clear_unlinked(rc);
	if (!err)
		err = xk_buf_flush(mp);
	if (!err) {
		(*applied)++;
		report_rebuild(rc);
	}
	return err;
}
