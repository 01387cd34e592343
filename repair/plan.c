// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Recording the repair plan (plan.h).  Nothing here reads or writes the
 * filesystem: the checkers record, the appliers read.
 */
#include <stdlib.h>
#include <string.h>

#include "repair.h"

void
plan_inode(struct repair_ctx *rc, uint64_t ino, uint32_t what, uint64_t val)
{
	struct ifixes *p = &rc->plan.ifix;

	/* fix_problem already said no under -n; plans are repair-only. */
	if (rc->opt.no_modify)
		return;
	if (p->n == p->cap) {
		size_t ncap = p->cap ? p->cap * 2 : 64;
		struct ifix *nv = xk_realloc(p->v, ncap * sizeof(*nv));

		/* A plan left out would make a partial repair: stop. */
		if (!nv) {
			repair_error(rc, -ENOMEM, "planning a fix of inode "
				     "%llu", (unsigned long long)ino);
			return;
		}
		p->v = nv;
		p->cap = ncap;
	}
	p->v[p->n++] = (struct ifix){ ino, what, val };
}

void
plan_none(struct repair_ctx *rc)
{
	rc->plan.unfixable++;
}

void
plan_dir_rebuild(struct repair_ctx *rc, uint64_t ino)
{
	struct repair_plan *p = &rc->plan;

	if (rc->opt.no_modify)
		return;
	if (p->ndirfix == p->capdirfix) {
		size_t ncap = p->capdirfix ? p->capdirfix * 2 : 16;
		uint64_t *nv = xk_realloc(p->dirfix, ncap * sizeof(*nv));

		if (!nv) {
			repair_error(rc, -ENOMEM, "planning the rewrite of "
				     "directory %llu",
				     (unsigned long long)ino);
			return;
		}
		p->dirfix = nv;
		p->capdirfix = ncap;
	}
	p->dirfix[p->ndirfix++] = ino;
}

/* Few directories are ever planned: a linear look is enough. */
int
dir_being_rebuilt(const struct repair_ctx *rc, uint64_t owner)
{
	for (size_t i = 0; i < rc->plan.ndirfix; i++)
		if (rc->plan.dirfix[i] == owner)
			return 1;
	return 0;
}

void
lf_plan_free(struct repair_plan *plan)
{
	struct lf_plan *p = plan->lfplan;

	if (!p)
		return;
	free(p->ents);
	free(p->names);
	free(p->dirs);
	free(p);
	plan->lfplan = NULL;
}

void
plan_orphan(struct repair_ctx *rc, const struct inode_info *ii)
{
	struct repair_plan *p = &rc->plan;

	if (rc->opt.no_modify)
		return;
	if (p->norphans == p->caporphans) {
		size_t ncap = p->caporphans ? p->caporphans * 2 : 16;
		struct orphan *nv = xk_realloc(p->orphans, ncap * sizeof(*nv));

		if (!nv) {
			repair_error(rc, -ENOMEM, "planning the reconnection "
				     "of inode %llu",
				     (unsigned long long)ii->ino);
			return;
		}
		p->orphans = nv;
		p->caporphans = ncap;
	}
	p->orphans[p->norphans++] = (struct orphan){ ii->ino, ii->mode,
						     ii->sfdir };
}

void
plan_sb_primary(struct repair_ctx *rc)
{
	rc->plan.sb_primary_fix = 1;
}

void
plan_sb_secondary(struct repair_ctx *rc, uint32_t agno)
{
	rc->plan.sb_bad[agno] = 1;
}

int
plan_start(struct repair_plan *p, const struct xk_mount *mp)
{
	p->sb_bad = xk_calloc(mp->g.agcount, 1);
	return p->sb_bad ? 0 : -ENOMEM;
}

void
plan_free(struct repair_plan *p)
{
	int primary = p->sb_primary_fix;
	unsigned long unfixable = p->unfixable;

	free(p->ifix.v);
	free(p->sb_bad);
	free(p->orphans);
	free(p->dirfix);
	lf_plan_free(p);
	memset(p, 0, sizeof(*p));
	/* The run's verdicts, not one pass's plans: main reads them. */
	p->sb_primary_fix = primary;
	p->unfixable = unfixable;
}

static int
append(void **dst, size_t *n, size_t *cap, const void *src, size_t m,
       size_t size)
{
	if (*n + m > *cap) {
		size_t ncap = *n + m;
		void *nv = xk_realloc(*dst, ncap * size);

		if (!nv)
			return -ENOMEM;
		*dst = nv;
		*cap = ncap;
	}
	if (m)
		memcpy((char *)*dst + *n * size, src, m * size);
	*n += m;
	return 0;
}

int
plan_merge(struct repair_plan *dst, struct repair_plan *const *src,
	   unsigned int n, const struct xk_mount *mp)
{
	size_t *fi = xk_calloc(n, sizeof(*fi)), *di = xk_calloc(n, sizeof(*di));
	int err = 0;

	if (!fi || !di) {
		err = -ENOMEM;
		goto out;
	}
	for (uint32_t agno = 0; agno < mp->g.agcount && !err; agno++) {
		const struct repair_plan *w = src[agno % n];
		size_t *f = &fi[agno % n], *d = &di[agno % n], start;

		start = *f;
		while (*f < w->ifix.n &&
		       xk_ino_to_agno(mp, w->ifix.v[*f].ino) == agno)
			(*f)++;
		err = append((void **)&dst->ifix.v, &dst->ifix.n,
			     &dst->ifix.cap, w->ifix.v + start, *f - start,
			     sizeof(*dst->ifix.v));
		start = *d;
		while (!err && *d < w->ndirfix &&
		       xk_ino_to_agno(mp, w->dirfix[*d]) == agno)
			(*d)++;
		if (!err)
			err = append((void **)&dst->dirfix, &dst->ndirfix,
				     &dst->capdirfix, w->dirfix + start,
				     *d - start, sizeof(*dst->dirfix));
	}
	for (unsigned int i = 0; i < n && !err; i++) {
		const struct repair_plan *w = src[i];

		dst->unfixable += w->unfixable;
		/* A plan for an inode outside the worker's AGs: keep it. */
		if (fi[i] != w->ifix.n || di[i] != w->ndirfix) {
			err = append((void **)&dst->ifix.v, &dst->ifix.n,
				     &dst->ifix.cap, w->ifix.v + fi[i],
				     w->ifix.n - fi[i], sizeof(*dst->ifix.v));
			if (!err)
				err = append((void **)&dst->dirfix,
					     &dst->ndirfix, &dst->capdirfix,
					     w->dirfix + di[i],
					     w->ndirfix - di[i],
					     sizeof(*dst->dirfix));
		}
	}
out:
	free(fi);
	free(di);
	return err;
}
