/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Bulk loading: build a whole btree bottom-up from records already in
 * key order, into blocks the caller reserved.  Repair rebuilds every
 * per-AG tree this way from what it observed, and a populating mkfs can
 * build trees without inserting record by record.
 *
 * Blocks are filled to `fill` records (or pointers) each, the last two
 * blocks of a level sharing what is left so neither is below half full;
 * leaves come first in the block list, then each level up, the root
 * last.
 */
#ifndef XFSKIT_BTREE_BULK_H
#define XFSKIT_BTREE_BULK_H

#include <xfskit/errors.h>

#include <xfskit/btree.h>
#include <xfskit/format/btree.h>

struct xk_btree_bulk {
	const struct xk_btree_ops *ops;
	int64_t		agno;		/* owner AG (short-form trees) */
	uint64_t	owner;		/* owner inode (bmbt) */
	uint32_t	leaf_fill;	/* records per leaf; 0 = maximum */
	uint32_t	node_fill;	/* pointers per node; 0 = maximum */
	/*
	 * Optional: counts[l][i] entries go into block i of level l, with
	 * levels and level_blocks[] set by the caller (the plan checks
	 * them instead of computing them).  Keeps the shape a tree had.
	 */
	uint32_t	*const *counts;
	/* Filled by xk_btree_bulk_plan. */
	unsigned int	levels;
	uint64_t	blocks;		/* total blocks needed */
	uint64_t	level_blocks[XK_BTREE_MAXLEVELS];
};

/* How many blocks (and levels) nrecs records need.  0 or -EFBIG. */
XK_MUST_CHECK int xk_btree_bulk_plan(struct xk_mount *mp,
				     struct xk_btree_bulk *bb, uint64_t nrecs);

/*
 * Write the tree: recs holds nrecs on-disk records in key order; blocks
 * holds bb->blocks block numbers (AG blocks, or fs blocks for long
 * pointers).  Buffers are dirtied in the cache (flush to write).  The
 * root's block number is returned in *root.  An empty tree is a single
 * empty leaf.
 */
XK_MUST_CHECK int xk_btree_bulk_load(struct xk_mount *mp,
				     struct xk_btree_bulk *bb, const void *recs,
				     uint64_t nrecs, const uint64_t *blocks,
				     uint64_t *root);

#endif /* XFSKIT_BTREE_BULK_H */
