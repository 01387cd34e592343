// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * AG headers and per-AG btrees: AGF, AGI and AGFL of every AG through
 * their verifiers, then every block of the bnobt, cntbt, inobt, finobt,
 * rmapbt and refcountbt through the btree walker.
 *
 * In: an open handle.  Out: a finding per failed header, block or link.
 */
#include <string.h>

#include "repair.h"

struct walk_ctx {
	struct repair_ctx *rc;
};

static void
walk_fail(void *ctx, const struct xk_fail *f)
{
	struct walk_ctx *wc = ctx;

	fix_problem(wc->rc, PR_BTREE_BAD, f);
}

static void
walk_tree(struct repair_ctx *rc, const struct xk_btree_ops *ops,
	  uint32_t agno, uint32_t root, uint32_t levels)
{
	struct walk_ctx wc = { .rc = rc };
	struct xk_btree_walk w = {
		.ops = ops,
		.agno = agno,
		.root = root,
		.levels = levels,
		.ctx = &wc,
		.fail_fn = walk_fail,
	};
	int err = xk_btree_walk(rc->mp, &w);

	if (err && err != XK_ECORRUPT) {
		struct xk_fail f = { .structure = ops->name, .agno = agno };

		xk_fail_set(&f, "walk", "%s", xk_strerror(err));
		fix_problem(rc, PR_BTREE_BAD, &f);
	}
	if (rc->verbose)
		fprintf(rc->out, "        - AG %u %s: %llu blocks, %llu "
			"records\n", agno, ops->name,
			(unsigned long long)w.nblocks,
			(unsigned long long)w.nrecs);
}

static void
read_fail(struct repair_ctx *rc, enum problem pr, const char *what,
	  uint32_t agno, unsigned int sector, int err)
{
	struct xk_fail f = { .structure = what, .agno = agno };

	f.daddr = xk_ag_hdr_daddr(rc->mp, agno, sector);
	xk_fail_set(&f, "read", "%s", xk_strerror(err));
	fix_problem(rc, pr, &f);
}

static void
check_ag(struct repair_ctx *rc, uint32_t agno)
{
	struct xk_mount *mp = rc->mp;
	struct xk_buf *agf, *agi, *agfl;
	int err;

	err = xk_agf_read(mp, agno, XK_READ_SALVAGE, &agf);
	if (err && !agf)
		read_fail(rc, PR_AGF_BAD, "AGF", agno, XK_AGF_SECTOR, err);
	else if (err)
		fix_problem(rc, PR_AGF_BAD, &agf->fail);
	if (agf && (!err || err == XK_EBADCRC)) {
		const struct xk_agf *h = xk_buf_agf(agf);

		walk_tree(rc, &xk_bnobt_ops, agno,
			  xk_be32_get(h->agf_roots[XK_AGF_BNO]),
			  xk_be32_get(h->agf_levels[XK_AGF_BNO]));
		walk_tree(rc, &xk_cntbt_ops, agno,
			  xk_be32_get(h->agf_roots[XK_AGF_CNT]),
			  xk_be32_get(h->agf_levels[XK_AGF_CNT]));
		if (mp->g.has_rmapbt)
			walk_tree(rc, &xk_rmapbt_ops, agno,
				  xk_be32_get(h->agf_roots[XK_AGF_RMAP]),
				  xk_be32_get(h->agf_levels[XK_AGF_RMAP]));
		if (mp->g.has_reflink)
			walk_tree(rc, &xk_refcountbt_ops, agno,
				  xk_be32_get(h->agf_refcount_root),
				  xk_be32_get(h->agf_refcount_level));
	}
	xk_buf_release(agf);

	err = xk_agfl_read(mp, agno, XK_READ_SALVAGE, &agfl);
	if (err && !agfl)
		read_fail(rc, PR_AGFL_BAD, "AGFL", agno, XK_AGFL_SECTOR, err);
	else if (err)
		fix_problem(rc, PR_AGFL_BAD, &agfl->fail);
	xk_buf_release(agfl);

	err = xk_agi_read(mp, agno, XK_READ_SALVAGE, &agi);
	if (err && !agi)
		read_fail(rc, PR_AGI_BAD, "AGI", agno, XK_AGI_SECTOR, err);
	else if (err)
		fix_problem(rc, PR_AGI_BAD, &agi->fail);
	if (agi && (!err || err == XK_EBADCRC)) {
		const struct xk_agi *h = xk_buf_agi(agi);

		walk_tree(rc, &xk_inobt_ops, agno, xk_be32_get(h->agi_root),
			  xk_be32_get(h->agi_level));
		if (mp->g.has_finobt)
			walk_tree(rc, &xk_finobt_ops, agno,
				  xk_be32_get(h->agi_free_root),
				  xk_be32_get(h->agi_free_level));
	}
	xk_buf_release(agi);
}

int
phase_ag_headers(struct repair_ctx *rc)
{
	for (uint32_t agno = 0; agno < rc->mp->g.agcount; agno++) {
		if (rc->verbose)
			fprintf(rc->out, "        - agno = %u\n", agno);
		check_ag(rc, agno);
	}
	return 0;
}
