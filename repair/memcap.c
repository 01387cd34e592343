// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * -m MB: the memory the check will need, estimated before it starts
 * from the model in doc/memory.md and the counters the superblock and
 * AG headers hold, so a run that cannot fit stops at once and says how
 * much it needs (as xfs_repair -m does) instead of failing half way.
 * When it fits, the buffer cache takes what the cap leaves, never more
 * than its usual budget.
 */
#include <stdio.h>

#include "repair.h"

/* Bytes the model charges, by doc/memory.md. */
#define PER_INODE	(32 + 24)	/* inode_info + one directory edge */
#define PER_EXTENT	24		/* one claim */
#define PER_FREE_EXT	48		/* bnobt + cntbt claims */
#define FIXED_BYTES	(8ULL << 20)	/* program, tables, stacks */
#define MIN_CACHE	(4ULL << 20)	/* per scan thread */

uint64_t
repair_memory_estimate(struct repair_ctx *rc, uint64_t *without_cache)
{
	struct xk_mount *mp = rc->mp;
	uint64_t inodes = mp->sb.icount > mp->sb.ifree ?
			  mp->sb.icount - mp->sb.ifree : 0;
	uint64_t extents = inodes, freeext = 0, bytes;
	uint32_t rmap_leaf = mp->g.maxrecs[XK_BT_RMAP][0];
	uint32_t bno_leaf = mp->g.maxrecs[XK_BT_BNO][0];

	if (mp->g.has_rmapbt)
		extents = 0;
	for (uint32_t agno = 0; agno < mp->g.agcount; agno++) {
		struct xk_buf *bp;
		const struct xk_agf *agf;

		if (xk_agf_read(mp, agno, XK_READ_SALVAGE, &bp) && !bp)
			continue;
		agf = xk_buf_agf(bp);
		/* Trees are at least half full: twice the blocks' worth. */
		if (mp->g.has_rmapbt)
			extents += (uint64_t)xk_be32_get(agf->agf_rmap_blocks) *
				   rmap_leaf;
		freeext += ((uint64_t)xk_be32_get(agf->agf_btreeblks) + 2) *
			   bno_leaf / 2;
		xk_buf_release(bp);
	}
	bytes = PER_INODE * inodes +
		PER_EXTENT * extents * (mp->g.has_rmapbt ? 2 : 1) +
		PER_FREE_EXT * freeext;
	/* Vectors grow by doubling: half as much again at the peak. */
	bytes += bytes / 2 + FIXED_BYTES;
	*without_cache = bytes;
	return bytes + (uint64_t)rc->threads * (rc->cache_bytes ?
						rc->cache_bytes : 32ULL << 20);
}

int
repair_memory_check(struct repair_ctx *rc)
{
	uint64_t base, need, cap = rc->mem_cap_mb << 20, per;

	if (!rc->mem_cap_mb)
		return 0;
	need = repair_memory_estimate(rc, &base);
	if (base + rc->threads * MIN_CACHE > cap) {
		fprintf(stderr, "xfskit-repair: checking %s needs at least "
			"%llu MiB (about %llu MiB with the usual cache; see "
			"doc/memory.md): -m %llu is not enough\n", rc->device,
			(unsigned long long)((base + rc->threads * MIN_CACHE +
					      (1ULL << 20) - 1) >> 20),
			(unsigned long long)(need >> 20),
			(unsigned long long)rc->mem_cap_mb);
		return -1;
	}
	per = (cap - base) / rc->threads;
	if (!rc->cache_bytes || per < rc->cache_bytes)
		rc->cache_bytes = per > (32ULL << 20) ? 32ULL << 20 : per;
	info(rc, "Memory: about %llu MiB of the %llu allowed (cache %llu MiB "
	     "per thread).\n", (unsigned long long)((base +
	     rc->threads * rc->cache_bytes) >> 20),
	     (unsigned long long)rc->mem_cap_mb,
	     (unsigned long long)(rc->cache_bytes >> 20));
	return 0;
}
