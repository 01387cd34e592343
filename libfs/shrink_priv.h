/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Helpers shared by libfs/shrink.c and libfs/shrink_moves.c. */
#ifndef XFSKIT_SHRINK_PRIV_H
#define XFSKIT_SHRINK_PRIV_H

#include <stddef.h>
#include <stdint.h>

#include <xfskit/btree.h>

/* Walk one of an AG's trees, every record through rec_fn. */
int shrink_walk_ag_tree(struct xk_mount *mp, const struct xk_btree_ops *ops,
			uint32_t agno, const xk_be32 *root,
			const xk_be32 *levels,
			int (*rec_fn)(void *ctx, const void *rec), void *ctx,
			uint64_t *nblocks);

/* An rmapbt record clipped to [from, to): 0 when nothing is left. */
uint32_t shrink_rmap_clip(const void *rec, uint32_t from, uint32_t to,
			  uint32_t *start);

/* Append x to *v (n used, cap allocated): 0 or -ENOMEM. */
int shrink_u64_push(uint64_t **v, size_t *n, size_t *cap, uint64_t x);

/* Sort v and count its distinct values. */
uint64_t shrink_u64_distinct(uint64_t *v, size_t n);

#endif /* XFSKIT_SHRINK_PRIV_H */
