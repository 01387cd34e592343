/* SPDX-License-Identifier: GPL-2.0-or-later */
/* dabtree walks for directories and attribute forks (da.c). */
#ifndef XFSKIT_REPAIR_DA_H
#define XFSKIT_REPAIR_DA_H

#include "repair.h"

struct da_walk {
	struct repair_ctx	*rc;
	uint64_t		ino;
	const struct fork_map	*map;
	uint32_t		blksize;	/* bytes of one dabtree block */
	unsigned int		fsb_per_blk;
	enum problem		pr;
	const char		*what;
	/* Leaf blocks below a node, and the one a leaf-only root may be. */
	uint16_t		leaf_magic, root_leaf_magic;
	const struct xk_buf_ops	*leaf_ops, *root_leaf_ops;
	/* Called for each verified leaf; returns its highest hash. */
	int64_t			(*leaf_fn)(void *ctx, struct xk_buf *bp,
					   uint64_t lblk);
	void			*ctx;
	/* Filled by the walk: every logical block reached (free it). */
	uint64_t		*reached;
	size_t			nreached;
	/* Findings planned as fixes in place (the fork is kept). */
	unsigned long		fixed;
};

XK_MUST_CHECK int da_walk(struct da_walk *dw, uint64_t root);

#endif /* XFSKIT_REPAIR_DA_H */
