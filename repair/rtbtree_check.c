// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The realtime groups' rmap and refcount btrees, checked (rtbtree.c
 * reads and compares them):
 *  1. rtb_fork_blocks, as the inodes are read: each tree's blocks are
 *     the inode's (claimed with the bmbt-block owner, as xfs_repair's
 *     rmap has them) and count in its di_nblocks;
 *  2. rtb_check_group, in the realtime phase: each tree judged; one with
 *     findings is planned for a rewrite in its own blocks (RTFIX_BTREES)
 *     when it was read whole and the records fit, else the repair is
 *     refused; every file with an extent in a shared run carries the
 *     reflink flag;
 *  3. rtb_guard, after every phase: any other finding on a filesystem
 *     with these trees refuses the repair, as nothing keeps them in step
 *     with another change.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <xfskit/format/rtgroup.h>

#include "rtbtree.h"

struct claim_ctx {
	struct repair_ctx	*rc;
	uint64_t		ino, n;
};

static int
claim_block(void *ctx, unsigned int level, uint64_t bno, struct xk_buf *bp)
{
	struct claim_ctx *c = ctx;

	(void)level;
	/* A block that is not this tree's may be anyone's: not claimed. */
	if (bp->error && bp->error != XK_EBADCRC)
		return 0;
	claim_fsb(c->rc, bno, 1, c->ino, XK_RMAP_OFF_BMBT_BLOCK);
	c->n++;
	return c->rc->found.error;
}

int
rtb_fork_blocks(struct repair_ctx *rc, uint64_t ino,
		const struct xk_dinode *dip, uint64_t *nblocks)
{
	const struct xk_btree_ops *ops = rtb_ops(xk_be16_get(dip->di_onlink));
	struct claim_ctx c = { rc, ino, 0 };
	struct xk_btree_walk w;
	int err;

	*nblocks = 0;
	if (!ops)
		return 0;
	rtb_walk_init(&w, rc->mp, ino, dip, ops);
	if (w.levels < 1)
		return 0;	/* rtb_check_group reports it */
	w.ctx = &c;
	w.block_fn = claim_block;
	err = xk_btree_walk(rc->mp, &w);
	*nblocks = c.n;
	if (rc->found.error)
		return rc->found.error;
	if (err < 0 && err != XK_ECORRUPT)
		return repair_error(rc, err, "reading the realtime btree of "
				    "inode %llu", (unsigned long long)ino);
	return 0;
}

/*
 * Every file with an extent in a shared run of group g carries the
 * reflink flag (xfs_repair sets it: "setting reflink flag on inode").
 */
static int
reflink_flags(struct repair_ctx *rc, uint32_t g)
{
	const struct xk_sb *sb = &rc->mp->sb;
	XK_VEC_OF(struct rtb_rec) want = { 0 };
	XK_VEC_OF(uint64_t) inos = { 0 };
	struct rt_claim *c = rc->scan.rt_claims;
	int err = rtb_refc_want(rc, g, &want.vec);

	/* Both in block order: one pass finds the claims in shared runs. */
	for (size_t k = 0, w = 0; k < rc->scan.nrt_claims && !err; k++) {
		uint64_t s = xk_rtb_to_rgbno(sb, c[k].start);

		if (xk_rtb_to_rgno(sb, c[k].start) != g)
			continue;
		while (w < want.n && want.v[w].start + want.v[w].len <= s)
			w++;
		if (w < want.n && want.v[w].start < s + c[k].len)
			err = xk_vec_push(&inos.vec, &c[k].ino,
					  sizeof(c[k].ino));
	}
	sort_v(inos.v, inos.n, sizeof(*inos.v), cmp_u64);
	for (size_t k = 0; k < inos.n && !err; k++) {
		struct xk_dinode *dip;
		struct xk_buf *bp;

		if (k && inos.v[k] == inos.v[k - 1])
			continue;
		err = xk_inode_read(rc->mp, inos.v[k], 0, &bp, &dip);
		if (err) {
			/* The inode phase judged an unreadable inode. */
			err = xk_err_operational(err) ? err : 0;
			continue;
		}
		if (!(xk_be64_get(dip->di_flags2) & XK_DIFLAG2_REFLINK)) {
			char msg[80];

			snprintf(msg, sizeof(msg), "setting reflink flag on "
				 "inode %llu", (unsigned long long)inos.v[k]);
			rtb_finding(rc, inos.v[k], "reflink", msg);
			rtg_refuse(rc);
		}
		xk_buf_release(bp);
	}
	xk_vec_free(&want.vec);
	xk_vec_free(&inos.vec);
	return err ? repair_error(rc, err, "checking the reflink flags of "
				  "rtgroup %u's files", g) : 0;
}

/*
 * A tree with findings: rewritten (RTFIX_BTREES) when it was walked
 * whole and the records fit its blocks, else the repair is refused.
 */
static int
check_tree(struct repair_ctx *rc, uint32_t g, uint64_t ino, uint16_t metatype)
{
	struct rtb_tree t = { .rc = rc, .ops = rtb_ops(metatype), .ino = ino };
	unsigned long before = rc->found.nproblems;
	int ok, err = rtb_tree_judge(rc, g, ino, metatype, &t, NULL, &ok);

	if (!err && rc->found.nproblems > before) {
		if (ok && !t.nhard && rtb_tree_fits(rc, &t) &&
		    !rc->opt.no_modify) {
			rc->plan.rtb_fixable += rc->found.nproblems - before;
			plan_rt(rc, RTFIX_BTREES);
		} else {
			rtg_refuse(rc);
		}
	}
	xk_vec_free(&t.recs.vec);
	return err;
}

void
rtb_guard(struct repair_ctx *rc)
{
	const struct xk_sb *sb = &rc->mp->sb;
	/*
	 * The bitmap and summary say which realtime extents are free,
	 * not who owns them: rewritten from the files' extents, they
	 * change nothing the rt rmap and refcount btrees record.
	 */
	unsigned long free_space = rc->found.counts[PR_RT_BITMAP] +
				   rc->found.counts[PR_RT_SUMMARY];

	if (rc->opt.no_modify ||
	    rc->found.nproblems - rc->plan.rtb_base - free_space <=
	    rc->plan.rtb_fixable ||
	    !sb->rblocks ||
	    !xk_sb_has_rtgroups(sb) ||
	    !(xk_sb_has_ro_compat(sb, XK_SB_FEAT_RO_COMPAT_RMAPBT) ||
	      xk_sb_has_ro_compat(sb, XK_SB_FEAT_RO_COMPAT_REFLINK)))
		return;
	plan_none(rc);
	rc->plan.meta_refuse = 1;
	rc->plan.rtb_refuse = 1;
}

int
rtb_check_group(struct repair_ctx *rc, const struct rtg_names *n, uint32_t g)
{
	const struct xk_sb *sb = &rc->mp->sb;
	static const struct {
		uint32_t	feature;
		uint16_t	metatype;
		const char	*name;
	} trees[] = {
		{ XK_SB_FEAT_RO_COMPAT_RMAPBT, XK_METAFILE_RTRMAP, "rmap" },
		{ XK_SB_FEAT_RO_COMPAT_REFLINK, XK_METAFILE_RTREFCOUNT,
		  "refcount" },
	};
	int err = 0;

	for (size_t i = 0; i < 2 && !err; i++) {
		uint64_t ino = i ? n->refcount[g] : n->rmap[g];
		char msg[80];

		if (!xk_sb_has_ro_compat(sb, trees[i].feature))
			continue;
		if (!ino) {
			snprintf(msg, sizeof(msg), "/rtgroups has no %u.%s", g,
				 trees[i].name);
			rtb_finding(rc, n->dir, "rtgroups", msg);
			rtg_refuse(rc);
			continue;
		}
		err = check_tree(rc, g, ino, trees[i].metatype);
		if (!err && trees[i].metatype == XK_METAFILE_RTREFCOUNT)
			err = reflink_flags(rc, g);
	}
	return err;
}
