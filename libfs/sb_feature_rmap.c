// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The rmapbt upgrade's builder: a filesystem without reverse mappings
 * has no list of owners to load, so the builder starts empty as
 * xfskit-repair's AG rebuild does (xk_bld_open_empty: the sector headers
 * and the internal log claimed by it) and is fed what the metadata says
 * is owned: every inode chunk of the inobt, every CoW staging extent of
 * the refcountbt, and every allocated inode's data and attr fork
 * mappings and bmbt blocks, reached through the metadata walker.  The
 * AG's own trees and AGFL get their owners on commit; what nobody claims
 * becomes free space, so each AG's free blocks and tree blocks are
 * compared before and after (sb_ag_space) to prove nothing was lost or
 * taken from the free space, and the rmapbt built is read back for
 * blocks with two owners where they cannot share (sb_check_owners).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <xfskit/ag.h>
#include <xfskit/btree.h>
#include <xfskit/build.h>
#include <xfskit/fork.h>
#include <xfskit/mount.h>
#include <xfskit/walk.h>

#include "sb_feature_priv.h"

struct observe {
	struct xk_bld		*b;
	struct xk_mount		*mp;
	struct xk_fork_map	map;
	uint32_t		agno;		/* the AG whose tree is read */
	int			err;
	uint64_t		bad_ino;	/* the inode that failed, or 0 */
};

static int
claim_fsb(struct observe *o, uint64_t fsb, uint64_t len, uint64_t owner,
	  uint64_t offset, unsigned int flags)
{
	if (!xk_fsbext_valid(o->mp, fsb, len))
		return XK_ECORRUPT;
	return xk_bld_claim(o->b, xk_fsb_to_agno(o->mp, fsb),
			    xk_fsb_to_agbno(o->mp, fsb), (uint32_t)len, owner,
			    offset, flags);
}

/* One fork's mappings (realtime data excepted) and its bmbt blocks. */
static int
claim_fork(struct observe *o, uint64_t ino, const struct xk_dinode *dip,
	   int whichfork)
{
	unsigned int fl = whichfork == XK_ATTR_FORK ? XK_BLD_ATTR_FORK : 0;
	int rt = whichfork == XK_DATA_FORK &&
		 (xk_be16_get(dip->di_flags) & XK_DIFLAG_REALTIME);
	int err = xk_fork_read(o->mp, ino, dip, whichfork,
			       XK_FORK_CHECK | XK_FORK_BLOCKS, &o->map);

	for (uint64_t i = 0; !err && !rt && i < o->map.next; i++) {
		const struct xk_bmbt_irec *e = &o->map.ext[i];

		err = claim_fsb(o, e->startblock, e->blockcount, ino,
				e->startoff,
				fl | (e->unwritten ? XK_BLD_UNWRITTEN : 0));
	}
	for (uint64_t i = 0; !err && i < o->map.nblk; i++)
		err = claim_fsb(o, o->map.blk[i].fsb, 1, ino, 0,
				fl | XK_BLD_BMBT);
	return err;
}

static int
visit_inode(void *ctx, const struct xk_walk_block *wb)
{
	struct observe *o = ctx;
	const struct xk_dinode *dip = (const struct xk_dinode *)wb->data;
	int err;

	if (wb->kind != XK_WALK_INODE)
		return 0;
	if (!dip || (wb->bp && wb->bp->error))
		err = wb->err ? wb->err : XK_ECORRUPT;
	else
		err = claim_fork(o, wb->owner, dip, XK_DATA_FORK);
	if (!err)
		err = claim_fork(o, wb->owner, dip, XK_ATTR_FORK);
	if (err) {
		o->bad_ino = wb->owner;
		o->err = err;
	}
	return err;
}

static void
walk_fail(void *ctx, const struct xk_fail *f)
{
	struct observe *o = ctx;

	(void)f;
	if (!o->err)
		o->err = XK_ECORRUPT;
}

static int
chunk_rec(void *ctx, const void *rec)
{
	struct observe *o = ctx;
	const struct xk_inobt_rec *r = rec;
	uint16_t holes = o->mp->g.has_sparse ?
			 xk_be16_get(r->ir_u.sp.ir_holemask) : 0;
	int err = xk_bld_add_ichunk(o->b, o->agno,
				    xk_be32_get(r->ir_startino), holes,
				    xk_be64_get(r->ir_free));

	if (err && !o->err)
		o->err = err;
	return 0;
}

/* CoW staging extents: blocks the refcountbt holds for a CoW fork. */
static int
cow_rec(void *ctx, const void *rec)
{
	struct observe *o = ctx;
	const struct xk_refcount_rec *r = rec;
	uint32_t start = xk_be32_get(r->rc_startblock);
	int err;

	if (!(start & XK_REFC_COWFLAG))
		return 0;
	err = xk_bld_claim(o->b, o->agno, start & ~XK_REFC_COWFLAG,
			   xk_be32_get(r->rc_blockcount), XK_RMAP_OWN_COW, 0,
			   0);
	if (err && !o->err)
		o->err = err;
	return 0;
}

static int
read_tree(struct observe *o, const struct xk_btree_ops *ops, uint32_t root,
	  uint32_t levels, int (*rec_fn)(void *, const void *))
{
	struct xk_btree_walk w;
	int err;

	memset(&w, 0, sizeof(w));
	w.ops = ops;
	w.agno = o->agno;
	w.root = root;
	w.levels = levels;
	w.ctx = o;
	w.rec_fn = rec_fn;
	err = xk_btree_walk(o->mp, &w);
	if (!err && w.nproblems)
		err = XK_ECORRUPT;
	return err ? err : o->err;
}

/* Every AG's inode chunks and CoW staging extents. */
static int
feed_ag_trees(struct observe *o, char *msg, size_t msglen)
{
	struct xk_mount *mp = o->mp;

	for (o->agno = 0; o->agno < mp->g.agcount; o->agno++) {
		struct xk_buf *agf_bp, *agi_bp;
		const struct xk_agf *agf;
		const struct xk_agi *agi;
		int err = xk_agf_read(mp, o->agno, 0, &agf_bp);

		if (!err) {
			err = xk_agi_read(mp, o->agno, 0, &agi_bp);
			if (err)
				xk_buf_release(agf_bp);
		}
		if (err) {
			snprintf(msg, msglen, "the AG headers of AG %u cannot "
				 "be read: %s (run xfskit-repair first)",
				 o->agno, xk_strerror(err));
			return err;
		}
		agf = xk_buf_agf(agf_bp);
		agi = xk_buf_agi(agi_bp);
		err = read_tree(o, &xk_inobt_ops, xk_be32_get(agi->agi_root),
				xk_be32_get(agi->agi_level), chunk_rec);
		if (!err && mp->g.has_reflink)
			err = read_tree(o, &xk_refcountbt_ops,
					xk_be32_get(agf->agf_refcount_root),
					xk_be32_get(agf->agf_refcount_level),
					cow_rec);
		xk_buf_release(agf_bp);
		xk_buf_release(agi_bp);
		if (err) {
			snprintf(msg, msglen, "the inode chunks or CoW staging "
				 "extents of AG %u cannot be loaded: %s (run "
				 "xfskit-repair first)", o->agno,
				 xk_strerror(err));
			return err;
		}
	}
	return 0;
}

int
sb_open_observed(struct xk_mount *mp, struct xk_bld **bp, char *msg,
		 size_t msglen)
{
	struct observe o = { .mp = mp };
	struct xk_walk w = {
		.ctx = &o, .visit = visit_inode, .fail = walk_fail,
	};
	int err = xk_bld_open_empty(mp, &o.b);

	if (err) {
		snprintf(msg, msglen, "the builder cannot start: %s",
			 xk_strerror(err));
		return err;
	}
	err = feed_ag_trees(&o, msg, msglen);
	if (!err) {
		err = xk_walk_metadata(mp, 0, mp->g.agcount - 1, &w);
		if (!err)
			err = o.err;
		if (err && o.bad_ino)
			snprintf(msg, msglen, "the forks of inode %llu cannot "
				 "be mapped: %s (run xfskit-repair first)",
				 (unsigned long long)o.bad_ino,
				 xk_strerror(err));
		else if (err)
			snprintf(msg, msglen, "the metadata does not walk "
				 "cleanly: %s (run xfskit-repair first)",
				 xk_strerror(err));
	}
	xk_fork_map_free(&o.map);
	if (err) {
		xk_bld_free(o.b);
		return err;
	}
	*bp = o.b;
	return 0;
}

/* A per-AG tree of the AGF or AGI, when the filesystem has it. */
struct ag_tree {
	const struct xk_btree_ops *ops;
	int		has;
	const xk_be32	*root, *level;
};

int
sb_ag_space(struct xk_mount *mp, uint32_t agno, uint64_t *blocks)
{
	struct xk_buf *agf_bp, *agi_bp;
	const struct xk_agf *agf;
	const struct xk_agi *agi;
	struct ag_tree t[6];
	int err = xk_agf_read(mp, agno, 0, &agf_bp);

	if (err)
		return err;
	err = xk_agi_read(mp, agno, 0, &agi_bp);
	if (err) {
		xk_buf_release(agf_bp);
		return err;
	}
	agf = xk_buf_agf(agf_bp);
	agi = xk_buf_agi(agi_bp);
	t[0] = (struct ag_tree){ &xk_bnobt_ops, 1, &agf->agf_roots[XK_AGF_BNO],
			       &agf->agf_levels[XK_AGF_BNO] };
	t[1] = (struct ag_tree){ &xk_cntbt_ops, 1, &agf->agf_roots[XK_AGF_CNT],
			       &agf->agf_levels[XK_AGF_CNT] };
	t[2] = (struct ag_tree){ &xk_rmapbt_ops, mp->g.has_rmapbt,
			       &agf->agf_roots[XK_AGF_RMAP],
			       &agf->agf_levels[XK_AGF_RMAP] };
	t[3] = (struct ag_tree){ &xk_refcountbt_ops, mp->g.has_reflink,
			       &agf->agf_refcount_root,
			       &agf->agf_refcount_level };
	t[4] = (struct ag_tree){ &xk_inobt_ops, 1, &agi->agi_root,
			       &agi->agi_level };
	t[5] = (struct ag_tree){ &xk_finobt_ops, mp->g.has_finobt,
			       &agi->agi_free_root, &agi->agi_free_level };
	*blocks = (uint64_t)xk_be32_get(agf->agf_freeblks) +
		  xk_be32_get(agf->agf_flcount);
	for (int i = 0; i < 6 && !err; i++) {
		uint64_t n = 0;

		if (!t[i].has)
			continue;
		err = sb_tree_blocks(mp, agno, t[i].ops,
				     xk_be32_get(*t[i].root),
				     xk_be32_get(*t[i].level), &n);
		*blocks += n;
	}
	xk_buf_release(agf_bp);
	xk_buf_release(agi_bp);
	return err;
}

/* Walking one AG's rebuilt rmapbt in key order. */
struct owners {
	int		reflink;
	uint64_t	end;		/* of the records met so far */
	int		shareable;	/* the record reaching end */
	int		found;
	uint32_t	bno;		/* the first block owned twice */
};

static int
owners_rec(void *ctx, const void *rec)
{
	struct owners *w = ctx;
	const struct xk_rmap_rec *r = rec;
	uint32_t start = xk_be32_get(r->rm_startblock);
	uint64_t end = (uint64_t)start + xk_be32_get(r->rm_blockcount);
	uint64_t owner = xk_be64_get(r->rm_owner);
	int shareable = w->reflink && !xk_rmap_owner_is_special(owner) &&
			!(xk_be64_get(r->rm_offset) &
			  (XK_RMAP_OFF_ATTR_FORK | XK_RMAP_OFF_BMBT_BLOCK));

	if (start < w->end && !(shareable && w->shareable) && !w->found) {
		w->found = 1;
		w->bno = start;
	}
	if (end > w->end) {
		w->end = end;
		w->shareable = shareable;
	}
	return 0;
}

int
sb_check_owners(struct xk_mount *mp, char *msg, size_t msglen)
{
	for (uint32_t agno = 0; agno < mp->g.agcount; agno++) {
		struct owners o = { .reflink = mp->g.has_reflink };
		struct xk_btree_walk w;
		const struct xk_agf *agf;
		struct xk_buf *bp;
		int err = xk_agf_read(mp, agno, 0, &bp);

		if (!err) {
			agf = xk_buf_agf(bp);
			memset(&w, 0, sizeof(w));
			w.ops = &xk_rmapbt_ops;
			w.agno = agno;
			w.root = xk_be32_get(agf->agf_roots[XK_AGF_RMAP]);
			w.levels = xk_be32_get(agf->agf_levels[XK_AGF_RMAP]);
			w.ctx = &o;
			w.rec_fn = owners_rec;
			err = xk_btree_walk(mp, &w);
			if (!err && w.nproblems)
				err = XK_ECORRUPT;
			xk_buf_release(bp);
		}
		if (err) {
			snprintf(msg, msglen, "the rmapbt of AG %u as built "
				 "does not read back: %s; nothing was changed",
				 agno, xk_strerror(err));
			return err;
		}
		if (o.found) {
			snprintf(msg, msglen, "AG %u block %u has two owners "
				 "that cannot share it (run xfskit-repair "
				 "first); nothing was changed", agno, o.bno);
			return XK_ECORRUPT;
		}
	}
	return 0;
}
