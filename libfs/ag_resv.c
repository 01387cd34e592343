// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The kernel's per-AG reservations (see include/xfskit/ag_resv.h).
 */
#include <string.h>

#include <xfskit/ag.h>
#include <xfskit/ag_resv.h>
#include <xfskit/btree.h>
#include <xfskit/format/btree.h>
#include <xfskit/libfs.h>

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

uint32_t
xk_ag_log_blocks(const struct xk_mount *mp, uint32_t agno)
{
	if (xk_log_is_external(mp) ||
	    xk_fsb_to_agno(mp, mp->g.logstart) != agno)
		return 0;
	return mp->g.logblocks;
}

int
xk_ag_resv_state(struct xk_mount *mp, uint32_t agno, uint64_t *free,
		 struct xk_ag_resv_held *h)
{
	struct xk_buf *agfbp, *agibp;
	const struct xk_agf *agf;
	const struct xk_agi *agi;
	struct xk_btree_walk w;
	int err = xk_agf_read(mp, agno, 0, &agfbp);

	if (err)
		return err;
	err = xk_agi_read(mp, agno, 0, &agibp);
	if (err) {
		xk_buf_release(agfbp);
		return err;
	}
	agf = xk_buf_agf(agfbp);
	agi = xk_buf_agi(agibp);
	*free = (uint64_t)xk_be32_get(agf->agf_freeblks) +
		xk_be32_get(agf->agf_flcount);
	h->refc = mp->g.has_reflink ?
		  xk_be32_get(agf->agf_refcount_blocks) : 0;
	h->rmap = mp->g.has_rmapbt ? xk_be32_get(agf->agf_rmap_blocks) : 0;
	h->fino = 0;
	if (mp->g.has_finobt) {
		memset(&w, 0, sizeof(w));
		w.ops = &xk_finobt_ops;
		w.agno = agno;
		w.root = xk_be32_get(agi->agi_free_root);
		w.levels = xk_be32_get(agi->agi_free_level);
		err = xk_btree_walk(mp, &w);
		if (!err && w.nproblems)
			err = XK_ECORRUPT;
		h->fino = w.nblocks;
	}
	xk_buf_release(agfbp);
	xk_buf_release(agibp);
	return err;
}
