// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Interval lookups over an AG's claim lists for reasm_block_takeable:
 * every bmbt record, leaf and directory block the scan offers is checked
 * against the blocks inodes claim, the free space, the rmapbt and the
 * refcountbt of its AG.  A walk over the whole list per check made a
 * big file's map cost records x claims.  Each list is sorted by start
 * (it usually is already: the space phase sorts used and free space,
 * the AG phase the rmapbt) and gets, per position, the furthest end of
 * any claim up to it: the claims overlapping a range are found by a
 * binary search for the last one starting before its end, then walking
 * back while that furthest end still reaches into the range.
 *
 * Built once per check pass (the lists are per pass) after the space
 * phase, when nothing adds claims any more; a list whose length changed
 * since is looked at whole (reasm_ivl_first says so).
 */
#include <stdlib.h>

#include "repair.h"
#include "reasm.h"

static int
cmp_claim_agbno(const void *a, const void *b)
{
	const struct claim *x = a, *y = b;

	/* The start alone matters to the lookups. */
	return (x->agbno > y->agbno) - (x->agbno < y->agbno);
}

/* c sorted by start (in place when it is not), and its furthest ends. */
static int
ivl_build(struct repair_ctx *rc, struct claims *c, struct reasm_ivl *ivl)
{
	uint32_t far = 0;

	for (size_t i = 1; i < c->n; i++)
		if (c->v[i - 1].agbno > c->v[i].agbno) {
			sort_v(c->v, c->n, sizeof(*c->v), cmp_claim_agbno);
			break;
		}
	ivl->far.n = 0;
	ivl->far.vec.spill = rc->spill;
	for (size_t i = 0; i < c->n; i++) {
		uint64_t end = (uint64_t)c->v[i].agbno + c->v[i].len;

		if (end > far)
			far = end > UINT32_MAX ? UINT32_MAX : (uint32_t)end;
		if (xk_vec_push(&ivl->far.vec, &far, sizeof(far)))
			return -ENOMEM;
	}
	return 0;
}

void
reasm_index_free(struct reasm_state *st)
{
	for (uint32_t a = 0; a < st->nagx; a++)
		for (int k = 0; k < REASM_IVL_NR; k++)
			xk_vec_free(&st->agx[a].ivl[k].far.vec);
	free(st->agx);
	st->agx = NULL;
	st->nagx = 0;
	st->index_pass = 0;
}

int
reasm_index(struct repair_ctx *rc)
{
	struct reasm_state *st = rc->reasm;
	const uint32_t agcount = rc->mp->g.agcount;
	int err = 0;

	if (st->agx && st->index_pass == rc->pass)
		return 0;
	reasm_index_free(st);
	st->agx = xk_calloc(agcount, sizeof(*st->agx));
	if (!st->agx)
		return -ENOMEM;
	st->nagx = agcount;
	for (uint32_t a = 0; a < agcount && !err; a++) {
		struct ag_scan *as = &rc->scan.ags[a];
		struct reasm_ag_index *x = &st->agx[a];

		err = ivl_build(rc, &as->used, &x->ivl[REASM_IVL_USED]);
		if (!err)
			err = ivl_build(rc, &as->freesp,
					&x->ivl[REASM_IVL_FREE]);
		if (!err)
			err = ivl_build(rc, &as->rmaps,
					&x->ivl[REASM_IVL_RMAP]);
		if (!err)
			err = ivl_build(rc, &as->refcs,
					&x->ivl[REASM_IVL_REFC]);
	}
	if (err) {
		reasm_index_free(st);
		return err;
	}
	st->index_pass = rc->pass;
	return 0;
}

size_t
reasm_ivl_first(const struct repair_ctx *rc, uint32_t agno, int which,
		const struct claims *c, uint64_t end)
{
	const struct reasm_state *st = rc->reasm;
	size_t lo = 0, hi = c->n;

	if (!st || agno >= st->nagx || st->index_pass != rc->pass ||
	    st->agx[agno].ivl[which].far.n != c->n)
		return c->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (c->v[mid].agbno < end)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

int
reasm_ivl_reaches(const struct repair_ctx *rc, uint32_t agno, int which,
		  const struct claims *c, size_t i, uint64_t start)
{
	const struct reasm_state *st = rc->reasm;

	/* Not indexed: every claim is looked at. */
	if (!st || agno >= st->nagx || st->index_pass != rc->pass ||
	    st->agx[agno].ivl[which].far.n != c->n)
		return 1;
	return st->agx[agno].ivl[which].far.v[i] > start;
}
