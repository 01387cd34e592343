/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The per-AG block reservations the kernel makes when it mounts a
 * filesystem (one for the refcountbt and finobt together, one for the
 * rmapbt): each asks for enough blocks to index the whole AG with every
 * btree block half full (the rmapbt at least 1% of the AG), less what
 * the tree already holds, and the AG's free space and free list must
 * cover it.  Shrinking and feature upgrades refuse an AG that could not.
 */
#ifndef XFSKIT_AG_RESV_H
#define XFSKIT_AG_RESV_H

#include <stdint.h>

#include <xfskit/mount.h>

/* Blocks the reserved trees of one AG hold now. */
struct xk_ag_resv_held {
	uint64_t	refc;
	uint64_t	fino;
	uint64_t	rmap;
};

/* Blocks to index `records` with every block half full (the kernel's). */
uint64_t xk_btree_blocks_min_fill(const struct xk_geom *g, enum xk_btnum bt,
				  uint64_t records);

/*
 * Blocks the reservations take from the AG's free space and free list
 * beyond what the trees hold: refcountbt and rmapbt sized for `len`
 * blocks, the finobt for the inode chunks of `fino_len` blocks (both
 * without the internal log's blocks).  Trees the geometry does not have
 * ask for nothing.
 */
uint64_t xk_ag_resv_needed(const struct xk_geom *g, uint64_t len,
			   uint64_t fino_len, const struct xk_ag_resv_held *h);

/* The internal log's blocks in AG agno (0 where it is not there). */
uint32_t xk_ag_log_blocks(const struct xk_mount *mp, uint32_t agno);

/*
 * What AG agno keeps free (free space and free list) and holds in its
 * reserved trees, as its headers in the cache say now.
 */
XK_MUST_CHECK int xk_ag_resv_state(struct xk_mount *mp, uint32_t agno,
				   uint64_t *free, struct xk_ag_resv_held *h);

#endif /* XFSKIT_AG_RESV_H */
