// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * dabtree walks, for node-format directories (leaf space) and attribute
 * forks.  From the root block, every node entry leads to a child one
 * level down whose hashes do not exceed the entry's; each level's blocks
 * form a sibling chain (back/forw) in hash order; the root has no
 * siblings; no block is reached twice.  Leaves go to a callback after
 * their own verifier passed.
 */
#include <stdlib.h>
#include <string.h>

#include "repair.h"
#include "da.h"

#include <xfskit/format/attr.h>
#include <xfskit/format/da.h>
#include <xfskit/format/dir.h>

struct da_state {
	struct da_walk	*dw;
	uint64_t	last[XK_DA_NODE_MAXDEPTH + 1];	/* lblk + 1 */
	uint32_t	lastforw[XK_DA_NODE_MAXDEPTH + 1];
	uint64_t	*seen;
	size_t		nseen, capseen;
};

/* 1: reached before; 0: first time; -ENOMEM (recorded): stop. */
static int
seen_before(struct da_state *st, uint64_t lblk)
{
	for (size_t i = 0; i < st->nseen; i++)
		if (st->seen[i] == lblk)
			return 1;
	if (st->nseen == st->capseen) {
		size_t ncap = st->capseen ? st->capseen * 2 : 16;
		uint64_t *nv = xk_realloc(st->seen, ncap * sizeof(*nv));

		if (!nv)
			return repair_error(st->dw->rc, -ENOMEM, "walking the "
					    "dabtree of inode %llu",
					    (unsigned long long)st->dw->ino);
		st->seen = nv;
		st->capseen = ncap;
	}
	st->seen[st->nseen++] = lblk;
	return 0;
}

/*
 * An attr leaf whose only fault is usedbytes (the verifier checks it
 * last, and says what the records add up to): xfs_repair resets it and
 * keeps the leaf's attributes, and so do we.
 */
static int
attr_used_fixable(const struct da_walk *dw, const struct xk_buf_ops *ops,
		  const struct xk_buf *bp)
{
	return ops && ops == &xk_attr3_leaf_buf_ops && !bp->fail.crc_bad &&
	       bp->fail.check && !strcmp(bp->fail.check, "usedbytes") &&
	       bp->fail.has_values && bp->fail.expected <= dw->blksize;
}

/*
 * An attr node whose only fault is its hash order (the verifier checks
 * it last): the walk goes on below it, and each entry's hash is set to
 * its subtree's highest (plan_da_hash), as xfs_repair corrects them.
 * Should the subtrees themselves overlap, the next pass finds it again.
 */
static int
attr_hash_fixable(const struct da_walk *dw, const struct xk_buf_ops *ops,
		  const struct xk_buf *bp)
{
	return ops == &xk_da3_node_buf_ops && dw->pr == PR_ATTR_BAD &&
	       !bp->fail.crc_bad && bp->fail.check &&
	       !strcmp(bp->fail.check, "hashval");
}

static struct xk_buf *
read_lblk(struct da_walk *dw, uint64_t lblk, const struct xk_buf_ops *ops,
	  int *errp)
{
	struct repair_ctx *rc = dw->rc;
	uint64_t contig, fsb = fork_map_lookup(dw->map, lblk, &contig);
	struct xk_buf *bp;

	*errp = 0;
	if (fsb == XK_NULLFSBLOCK || contig < dw->fsb_per_blk) {
		report(rc, dw->pr, dw->what, -1, dw->ino, XK_NO_DADDR,
		       "mapping", "block %llu is not mapped whole",
		       (unsigned long long)lblk);
		*errp = -ENOENT;
		return NULL;
	}
	*errp = xk_buf_read_ctx(rc->mp, xk_fsb_to_daddr(rc->mp, fsb),
				dw->blksize, ops, -1, dw->ino,
				ops ? XK_READ_SALVAGE : XK_READ_NOVERIFY, &bp);
	if (!bp && repair_oserr(rc, *errp, "reading block %llu of inode "
				"%llu", (unsigned long long)lblk,
				(unsigned long long)dw->ino))
		return NULL;
	if (*errp && bp && attr_used_fixable(dw, ops, bp)) {
		/* A wrong total alone: corrected in place, the block read. */
		if (fix_problem(rc, dw->pr, &bp->fail))
			plan_inode(rc, dw->ino, IFIX_ATTR_USED, bp->daddr);
		dw->fixed++;
		*errp = 0;
	} else if (*errp && bp && attr_hash_fixable(dw, ops, bp)) {
		fix_problem(rc, dw->pr, &bp->fail);
		dw->fixed++;
		*errp = 0;
	} else if (*errp && bp) {
		fix_problem(rc, dw->pr, &bp->fail);
	} else if (*errp) {
		report(rc, dw->pr, dw->what, -1, dw->ino, XK_NO_DADDR, "read",
		       "block %llu: %s", (unsigned long long)lblk,
		       xk_strerror(*errp));
	}
	return bp;
}

/* Returns the highest hash under lblk, or -1 if the subtree is unusable. */
static int64_t
walk_lblk(struct da_state *st, uint64_t lblk, int level, int is_root)
{
	struct da_walk *dw = st->dw;
	struct repair_ctx *rc = dw->rc;
	const struct xk_da3_blkinfo *info;
	const struct xk_buf_ops *ops;
	struct xk_buf *bp;
	uint16_t magic;
	int64_t maxhash = -1;
	int err;

	err = seen_before(st, lblk);
	if (err < 0)
		return -1;
	if (err) {
		report(rc, dw->pr, dw->what, -1, dw->ino, XK_NO_DADDR, "loop",
		       "block %llu is reached twice", (unsigned long long)lblk);
		return -1;
	}
	bp = read_lblk(dw, lblk, NULL, &err);
	if (!bp)
		return -1;
	magic = xk_get_be16(bp->data + 8);
	xk_buf_release(bp);
	if (magic == XK_DA3_NODE_MAGIC)
		ops = &xk_da3_node_buf_ops;
	else if (dw->leaf_ops && magic == dw->leaf_magic)
		ops = dw->leaf_ops;
	else if (is_root && dw->root_leaf_ops && magic == dw->root_leaf_magic)
		ops = dw->root_leaf_ops;
	else {
		report(rc, dw->pr, dw->what, -1, dw->ino, XK_NO_DADDR, "magic",
		       "block %llu has magic 0x%04x, not a %s block",
		       (unsigned long long)lblk, magic,
		       level > 0 ? "node" : "leaf");
		return -1;
	}
	bp = read_lblk(dw, lblk, ops, &err);
	if (!bp)
		return -1;
	if (err && err != XK_EBADCRC)
		goto out;
	info = (const struct xk_da3_blkinfo *)bp->data;

	/* Position: level, and the sibling chain at this level. */
	{
		int blevel = ops == &xk_da3_node_buf_ops ?
			xk_get_be16(bp->data + 58) : 0;
		uint32_t back = xk_be32_get(info->hdr.back);
		uint32_t forw = xk_be32_get(info->hdr.forw);

		if (level >= 0 && blevel != level) {
			report(rc, dw->pr, dw->what, -1, dw->ino, bp->daddr,
			       "level", "block %llu is at level %d, its parent "
			       "expects %d", (unsigned long long)lblk, blevel,
			       level);
			goto out;
		}
		level = blevel;
		if (is_root && (back || forw))
			report(rc, dw->pr, dw->what, -1, dw->ino, bp->daddr,
			       "siblings", "root block has siblings (back %u, "
			       "forw %u)", back, forw);
		if (!is_root && back + 1ULL != (st->last[level] ?
						st->last[level] : 1))
			report(rc, dw->pr, dw->what, -1, dw->ino, bp->daddr,
			       "back", "block %llu says back %u, the previous "
			       "block at its level is %lld",
			       (unsigned long long)lblk, back,
			       (long long)st->last[level] - 1);
		if (!is_root && st->last[level] &&
		    st->lastforw[level] != lblk)
			report(rc, dw->pr, dw->what, -1, dw->ino, bp->daddr,
			       "forw", "the block before %llu at its level "
			       "names %u as next", (unsigned long long)lblk,
			       st->lastforw[level]);
		st->last[level] = lblk + 1;
		st->lastforw[level] = forw;
	}

	if (ops == &xk_da3_node_buf_ops) {
		const struct xk_da3_node_hdr *h = (const void *)bp->data;
		uint32_t count = xk_be16_get(h->count);

		if (level < 1 || level > XK_DA_NODE_MAXDEPTH)
			goto out;
		for (uint32_t i = 0; i < count; i++) {
			const struct xk_da_node_entry *e =
				xk_da3_node_entry(h, i);
			int64_t child = walk_lblk(st, xk_be32_get(e->before),
						  level - 1, 0);
			uint32_t hv = xk_be32_get(e->hashval);
			int attr = dw->pr == PR_ATTR_BAD;

			if (rc->found.error)
				break;

			if (child >= 0 && child != hv) {
				int fix = report(rc, dw->pr, dw->what, -1,
						 dw->ino, bp->daddr, "hashval",
						 "node block %llu entry %u says "
						 "hash 0x%x, its subtree ends "
						 "at 0x%llx",
						 (unsigned long long)lblk, i, hv,
						 (unsigned long long)child);

				/*
				 * As xfs_repair: an attr node's hash follows
				 * the tree below it, the xattrs are kept.
				 */
				if (attr && fix)
					plan_da_hash(rc, dw->ino, bp->daddr, i,
						     (uint32_t)child);
				if (attr)
					dw->fixed++;
			}
			maxhash = attr && child >= 0 ? child : hv;
		}
	} else {
		maxhash = dw->leaf_fn(dw->ctx, bp, lblk);
	}
out:
	xk_buf_release(bp);
	return maxhash;
}

int
da_walk(struct da_walk *dw, uint64_t root)
{
	struct da_state st;

	memset(&st, 0, sizeof(st));
	st.dw = dw;
	walk_lblk(&st, root, -1, 1);
	/* Each level's chain ends with its last block: forw must be 0. */
	for (int l = 0; l <= XK_DA_NODE_MAXDEPTH && !dw->rc->found.error; l++) {
		int err;
		struct xk_buf *bp;

		if (!st.last[l])
			continue;
		bp = read_lblk(dw, st.last[l] - 1, NULL, &err);
		if (!bp)
			continue;
		if (xk_get_be32(bp->data) != 0)
			report(dw->rc, dw->pr, dw->what, -1, dw->ino, bp->daddr,
			       "forw", "last block at level %d names a next "
			       "block (%u)", l, xk_get_be32(bp->data));
		xk_buf_release(bp);
	}
	dw->reached = st.seen;
	dw->nreached = st.nseen;
	return dw->rc->found.error;
}
