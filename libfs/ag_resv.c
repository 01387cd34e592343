// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The kernel's per-AG reservations (see include/xfskit/ag_resv.h).
 */
#include <xfskit/ag_resv.h>
#include <xfskit/format/btree.h>

uint64_t
xk_btree_blocks_min_fill(const struct xk_geom *g, enum xk_btnum bt,
			 uint64_t records)
{
	uint64_t lim = g->maxrecs[bt][0] / 2, blocks = 0;

	for (int level = 0; records > 1; level++) {
		records = (records + lim - 1) / lim;
		blocks += records;
		if (level == 0)
			lim = g->maxrecs[bt][1] / 2;
	}
	return blocks;
}

uint64_t
xk_ag_resv_needed(const struct xk_geom *g, uint64_t len, uint64_t fino_len,
		  const struct xk_ag_resv_held *h)
{
	uint64_t meta = 0, used = 0, need = 0, rmap;

	if (g->has_reflink) {
		meta += xk_btree_blocks_min_fill(g, XK_BT_REFC, len);
		used += h->refc;
	}
	if (g->has_finobt) {
		meta += xk_btree_blocks_min_fill(g, XK_BT_FINO, fino_len *
						 g->inopblock /
						 XK_INODES_PER_CHUNK);
		used += h->fino;
	}
	if (meta > used)
		need += meta - used;
	if (g->has_rmapbt) {
		rmap = xk_btree_blocks_min_fill(g, XK_BT_RMAP, len);
		if (rmap < len / 100)
			rmap = len / 100;
		if (rmap > h->rmap)
			need += rmap - h->rmap;
	}
	return need;
}
