// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Superblocks: the primary was checked when the handle was opened; here
 * every secondary is read through the verifier and compared with the
 * primary's geometry fields.
 *
 * In: an open handle.  Out: a finding per bad or differing copy.
 */
#include <string.h>

#include "repair.h"

int
phase_superblocks(struct repair_ctx *rc)
{
	struct xk_mount *mp = rc->mp;

	for (uint32_t agno = 1; agno < mp->g.agcount; agno++) {
		struct xk_buf *bp;
		int err = xk_sb_read(mp, agno, XK_READ_SALVAGE, &bp);

		if (err && !bp) {
			struct xk_fail f = { .structure = "superblock",
					     .agno = agno };

			f.daddr = xk_ag_hdr_daddr(mp, agno, XK_SB_SECTOR);
			xk_fail_set(&f, "read", "%s", xk_strerror(err));
			fix_problem(rc, PR_SB_SECONDARY_BAD, &f);
			continue;
		}
		if (err)
			fix_problem(rc, PR_SB_SECONDARY_BAD, &bp->fail);
		xk_buf_release(bp);
	}
	return 0;
}
