// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Inode forks mapped to extents: the extent list in the inode, or the
 * bmbt rooted in the fork.  Every extent is checked (non-empty, inside
 * one AG, or inside the realtime volume for a realtime file's data, in
 * file-offset order without overlap) before a caller sees it;
 * bmbt blocks are claimed for the inode as they are walked.
 */
#include <string.h>

#include "repair.h"

struct fork_walk {
	struct repair_ctx	*rc;
	uint64_t		ino;
	int			fork;
	const struct fork_extent_fn *cb;
	uint64_t		next_off;	/* lowest offset still free */
	uint64_t		nrecs;
	uint64_t		bmbt_blocks;
	int			rt;		/* realtime extents */
	int			problems;
	int			ret;
};

static int
fork_extent(struct fork_walk *fw, const struct xk_bmbt_irec *r)
{
	const char *fname = fw->fork == XK_DATA_FORK ? "data fork" :
			    "attr fork";

	fw->nrecs++;
	if (r->blockcount == 0 ||
	    (fw->rt ? r->startblock + r->blockcount < r->startblock ||
	     r->startblock + r->blockcount > fw->rc->mp->sb.rblocks :
	     !xk_fsbext_valid(fw->rc->mp, r->startblock, r->blockcount)) ||
	    r->startoff + r->blockcount > XK_MAX_FILEOFF) {
		fw->problems++;
		return report(fw->rc, PR_FORK_BAD, fname, -1, fw->ino,
			      XK_NO_DADDR, "extent", "extent %llu: offset "
			      "%llu, block %llu, length %llu is not valid",
			      (unsigned long long)(fw->nrecs - 1),
			      (unsigned long long)r->startoff,
			      (unsigned long long)r->startblock,
			      (unsigned long long)r->blockcount);
	}
	if (r->startoff < fw->next_off) {
		fw->problems++;
		return report(fw->rc, PR_FORK_BAD, fname, -1, fw->ino,
			      XK_NO_DADDR, "extent order", "extent at offset "
			      "%llu overlaps or precedes the one before",
			      (unsigned long long)r->startoff);
	}
	fw->next_off = r->startoff + r->blockcount;
	return fw->cb ? fw->cb->fn(fw->cb->ctx, r) : 0;
}

static void
bmbt_fail(void *ctx, const struct xk_fail *f)
{
	struct fork_walk *fw = ctx;

	fw->problems++;
	fix_problem(fw->rc, PR_FORK_BAD, f);
}

static int
bmbt_block(void *ctx, unsigned int level, uint64_t bno, struct xk_buf *bp)
{
	struct fork_walk *fw = ctx;

	(void)level;
	(void)bp;
	fw->bmbt_blocks++;
	claim_fsb(fw->rc, bno, 1, fw->ino, XK_RMAP_OFF_BMBT_BLOCK |
		  (fw->fork == XK_ATTR_FORK ? XK_RMAP_OFF_ATTR_FORK : 0));
	return 0;
}

static int
bmbt_rec(void *ctx, const void *rec)
{
	struct fork_walk *fw = ctx;
	struct xk_bmbt_irec r;

	xk_bmbt_rec_unpack(rec, &r);
	return fork_extent(fw, &r) < 0 ? -1 : 0;
}

int
walk_fork(struct repair_ctx *rc, uint64_t ino, const struct xk_dinode *dip,
	  int fork, uint64_t *bmbt_blocks, const struct fork_extent_fn *cb)
{
	struct xk_mount *mp = rc->mp;
	struct fork_walk fw = { .rc = rc, .ino = ino, .fork = fork,
				.cb = cb };
	const uint8_t *p = xk_dfork_ptr(dip, fork);
	unsigned int size = xk_dfork_size(dip, mp->g.inodesize, fork);
	uint64_t nex = xk_dinode_fork_nextents(dip, fork);
	const char *fname = fork == XK_DATA_FORK ? "data fork" : "attr fork";

	*bmbt_blocks = 0;
	/* A realtime file's data extents are realtime block numbers. */
	fw.rt = fork_is_rt(mp, dip, fork);
	switch (xk_dfork_format(dip, fork)) {
	case XK_DINODE_FMT_EXTENTS:
		/* The inode verifier checked that nex records fit. */
		for (uint64_t i = 0; i < nex; i++) {
			struct xk_bmbt_irec r;

			xk_bmbt_rec_unpack((const struct xk_bmbt_rec *)
					   (p + i * 16), &r);
			fork_extent(&fw, &r);
		}
		break;
	case XK_DINODE_FMT_BTREE: {
		struct xk_btree_walk w = {
			.ops = &xk_bmbt_ops,
			.agno = -1,
			.owner = ino,
			.iroot = p,
			.iroot_size = size,
			.levels = xk_get_be16(p) + 1u,
			.ctx = &fw,
			.rec_fn = bmbt_rec,
			.block_fn = bmbt_block,
			.fail_fn = bmbt_fail,
		};
		int err = xk_btree_walk(mp, &w);

		if (err && err != XK_ECORRUPT && err != -1)
			report(rc, PR_FORK_BAD, fname, -1, ino, XK_NO_DADDR,
			       "bmbt", "%s", xk_strerror(err));
		*bmbt_blocks = fw.bmbt_blocks;
		if (!fw.problems && fw.nrecs != nex)
			report(rc, PR_FORK_BAD, fname, -1, ino, XK_NO_DADDR,
			       "nextents", "inode says %llu extents, its "
			       "bmbt holds %llu", (unsigned long long)nex,
			       (unsigned long long)fw.nrecs);
		break;
	}
	default:
		return 0;
	}
	return fw.problems;
}
