// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Superblock counters: inodes, free inodes and free blocks summed over
 * every AG as the scan observed them.  Free blocks, as the kernel counts
 * them, are the free extents plus the AGFL plus the free-space and rmap
 * btree blocks beyond their roots (those come back when the trees
 * shrink).
 *
 * In: rc->scan.ags from the AG phase.  Out: a finding per wrong counter.
 * Skipped when any AG's trees could not be read (a sum over a damaged AG
 * would only repeat that damage as a counter error) and when the
 * geometry came from a secondary (only the primary keeps counters).
 * The sums are also the run's summary line's (rc->tally).
 */
#include "repair.h"

int
phase_counters(struct repair_ctx *rc)
{
	struct xk_mount *mp = rc->mp;
	uint64_t icount = 0, ifree = 0, fdblocks = 0;

	rc->tally.counted = 0;
	for (uint32_t agno = 0; agno < mp->g.agcount; agno++) {
		struct ag_scan *as = &rc->scan.ags[agno];

		if (!as->trees_ok[XK_BT_BNO] || !as->trees_ok[XK_BT_CNT] ||
		    !as->trees_ok[XK_BT_INO] ||
		    (mp->g.has_rmapbt && !as->trees_ok[XK_BT_RMAP]))
			return 0;
		for (size_t i = 0; i < as->chunks.n; i++) {
			const struct xk_inobt_rec *r = &as->chunks.v[i];

			if (mp->g.has_sparse) {
				icount += r->ir_u.sp.ir_count;
				ifree += r->ir_u.sp.ir_freecount;
			} else {
				icount += XK_INODES_PER_CHUNK;
				ifree += xk_be32_get(r->ir_u.f.ir_freecount);
			}
		}
		for (size_t i = 0; i < as->freesp.n; i++)
			fdblocks += as->freesp.v[i].len;
		fdblocks += as->agfl_live;
		fdblocks += as->tree_blocks[XK_BT_BNO] - 1 +
			    as->tree_blocks[XK_BT_CNT] - 1;
		if (mp->g.has_rmapbt)
			fdblocks += as->tree_blocks[XK_BT_RMAP] - 1;
	}
	/* Counts that do not fit the geometry are no count at all. */
	if (ifree <= icount && fdblocks <= mp->sb.dblocks) {
		rc->tally.counted = 1;
		rc->tally.inodes = icount - ifree;
		rc->tally.used = mp->sb.dblocks - fdblocks;
		rc->tally.blocks = mp->sb.dblocks;
	}
	if (rc->from_secondary)
		return 0;
	if (icount != mp->sb.icount) {
		report(rc, PR_SB_COUNTER, "superblock", 0, 0, 0, "icount",
		       "superblock says %llu inodes, counted %llu",
		       (unsigned long long)mp->sb.icount,
		       (unsigned long long)icount);
		xr_msg(rc, "sb_icount %llu, counted %llu",
		       (unsigned long long)mp->sb.icount,
		       (unsigned long long)icount);
	}
	if (ifree != mp->sb.ifree) {
		report(rc, PR_SB_COUNTER, "superblock", 0, 0, 0, "ifree",
		       "superblock says %llu free inodes, counted %llu",
		       (unsigned long long)mp->sb.ifree,
		       (unsigned long long)ifree);
		xr_msg(rc, "sb_ifree %llu, counted %llu",
		       (unsigned long long)mp->sb.ifree,
		       (unsigned long long)ifree);
	}
	if (fdblocks != mp->sb.fdblocks) {
		report(rc, PR_SB_COUNTER, "superblock", 0, 0, 0, "fdblocks",
		       "superblock says %llu free blocks, counted %llu",
		       (unsigned long long)mp->sb.fdblocks,
		       (unsigned long long)fdblocks);
		xr_msg(rc, "sb_fdblocks %llu, counted %llu",
		       (unsigned long long)mp->sb.fdblocks,
		       (unsigned long long)fdblocks);
	}
	return 0;
}
