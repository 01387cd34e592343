// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Recording the repair plan (plan.h).  Nothing here reads or writes the
 * filesystem: the checkers record, the appliers read.
 */
#include <stdlib.h>
#include <string.h>

#include "repair.h"

void
plan_inode_why(struct repair_ctx *rc, uint64_t ino, uint32_t what,
	       uint64_t val, const char *why)
{
	const struct ifix f = { ino, what, val };
	struct ifix_why w = { ino, what, "" };

	/* fix_problem already said no under -n; plans are repair-only. */
	if (rc->opt.no_modify)
		return;
	/* A plan left out would make a partial repair: stop. */
	if (xk_vec_push(&rc->plan.ifix.vec, &f, sizeof(f)))
		repair_error(rc, -ENOMEM, "planning a fix of inode %llu",
			     (unsigned long long)ino);
	if (what != IFIX_CLEAR && what != IFIX_NOATTR)
		return;
	snprintf(w.why, sizeof(w.why), "%s",
		 why ? why : rc->found.last_finding);
	if (xk_vec_push(&rc->plan.whys.vec, &w, sizeof(w)))
		repair_error(rc, -ENOMEM, "planning a fix of inode %llu",
			     (unsigned long long)ino);
}

void
plan_inode(struct repair_ctx *rc, uint64_t ino, uint32_t what, uint64_t val)
{
	plan_inode_why(rc, ino, what, val, NULL);
}

void
plan_da_hash(struct repair_ctx *rc, uint64_t ino, uint64_t daddr,
	     uint32_t entry, uint32_t hash)
{
	const struct da_hash_fix f = { ino, daddr, entry, hash };

	if (rc->opt.no_modify)
		return;
	if (xk_vec_push(&rc->plan.da_hashes.vec, &f, sizeof(f)))
		repair_error(rc, -ENOMEM, "planning a fix of inode %llu",
			     (unsigned long long)ino);
	else
		plan_inode(rc, ino, IFIX_DA_HASH, 0);
}

/* Few inodes are ever cleared: a linear look is enough. */
const char *
plan_why(const struct repair_plan *p, uint64_t ino, uint32_t what)
{
	for (size_t i = 0; i < p->whys.n; i++)
		if (p->whys.v[i].ino == ino && p->whys.v[i].what == what &&
		    p->whys.v[i].why[0])
			return p->whys.v[i].why;
	return NULL;
}

void
plan_none(struct repair_ctx *rc)
{
	rc->plan.unfixable++;
}

void
plan_dir_rebuild(struct repair_ctx *rc, uint64_t ino)
{
	if (rc->opt.no_modify)
		return;
	if (xk_vec_push(&rc->plan.dirfix.vec, &ino, sizeof(ino)))
		repair_error(rc, -ENOMEM, "planning the rewrite of directory "
			     "%llu", (unsigned long long)ino);
}

void
plan_attr_rewrite(struct repair_ctx *rc, uint64_t ino)
{
	if (rc->opt.no_modify)
		return;
	if (xk_vec_push(&rc->plan.attrfix.vec, &ino, sizeof(ino)))
		repair_error(rc, -ENOMEM, "planning the rewrite of the "
			     "xattrs of inode %llu", (unsigned long long)ino);
}

int
attr_being_rewritten(const struct repair_ctx *rc, uint64_t owner)
{
	size_t lo = 0, hi = rc->plan.attrfix.n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (rc->plan.attrfix.v[mid] == owner)
			return 1;
		if (rc->plan.attrfix.v[mid] < owner)
			lo = mid + 1;
		else
			hi = mid;
	}
	return 0;
}

/* Few directories are ever planned: a linear look is enough. */
int
dir_being_rebuilt(const struct repair_ctx *rc, uint64_t owner)
{
	for (size_t i = 0; i < rc->plan.dirfix.n; i++)
		if (rc->plan.dirfix.v[i] == owner)
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
	const struct orphan o = { ii->ino, ii->mode, ii->sfdir, 0 };

	if (rc->opt.no_modify)
		return;
	if (xk_vec_push(&rc->plan.orphans.vec, &o, sizeof(o)))
		repair_error(rc, -ENOMEM, "planning the reconnection of inode "
			     "%llu", (unsigned long long)ii->ino);
}

void
plan_pptr(struct repair_ctx *rc, uint64_t ino)
{
	if (rc->opt.no_modify)
		return;
	if (xk_vec_push(&rc->plan.pptr_inos.vec, &ino, sizeof(ino)))
		repair_error(rc, -ENOMEM, "planning the parent pointers of "
			     "inode %llu", (unsigned long long)ino);
}

void
plan_pptr_add(struct repair_ctx *rc, uint64_t ino, uint64_t parent,
	      uint32_t gen, const uint8_t *name, uint8_t namelen)
{
	struct repair_plan *p = &rc->plan;
	const struct pptr_want w = { ino, parent, p->pptr_names.n, gen,
				     namelen };

	if (rc->opt.no_modify)
		return;
	if (xk_vec_append(&p->pptr_names.vec, name, namelen, 1) ||
	    xk_vec_push(&p->pptr_want.vec, &w, sizeof(w)))
		repair_error(rc, -ENOMEM, "planning the parent pointers of "
			     "inode %llu", (unsigned long long)ino);
}

void
plan_quota(struct repair_ctx *rc, unsigned int type, unsigned int qfix)
{
	if (!rc->opt.no_modify)
		rc->plan.quota_fix[type] |= qfix;
}

void
plan_rt(struct repair_ctx *rc, unsigned int rtfix)
{
	if (!rc->opt.no_modify)
		rc->plan.rt_fix |= rtfix;
}

void
plan_quota_unplan(struct repair_ctx *rc, unsigned int type, unsigned int qfix)
{
	rc->plan.quota_fix[type] &= ~qfix;
}

void
plan_quota_flags(struct repair_ctx *rc, uint16_t clear)
{
	if (!rc->opt.no_modify)
		rc->plan.quota_flags_clear |= clear;
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

	xk_vec_free(&p->ifix.vec);
	xk_vec_free(&p->whys.vec);
	xk_vec_free(&p->da_hashes.vec);
	free(p->sb_bad);
	xk_vec_free(&p->orphans.vec);
	xk_vec_free(&p->dirfix.vec);
	xk_vec_free(&p->attrfix.vec);
	xk_vec_free(&p->pptr_inos.vec);
	xk_vec_free(&p->pptr_want.vec);
	xk_vec_free(&p->pptr_names.vec);
	lf_plan_free(p);
	memset(p, 0, sizeof(*p));
	/* The run's verdicts, not one pass's plans: main reads them. */
	p->sb_primary_fix = primary;
	p->unfixable = unfixable;
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
		err = xk_vec_append(&dst->ifix.vec, w->ifix.v + start,
				    *f - start, sizeof(*w->ifix.v));
		start = *d;
		while (!err && *d < w->dirfix.n &&
		       xk_ino_to_agno(mp, w->dirfix.v[*d]) == agno)
			(*d)++;
		if (!err)
			err = xk_vec_append(&dst->dirfix.vec,
					    w->dirfix.v + start, *d - start,
					    sizeof(*w->dirfix.v));
	}
	for (unsigned int i = 0; i < n && !err; i++) {
		const struct repair_plan *w = src[i];

		dst->unfixable += w->unfixable;
		err = xk_vec_append(&dst->whys.vec, w->whys.v, w->whys.n,
				    sizeof(*w->whys.v));
		if (!err)
			err = xk_vec_append(&dst->da_hashes.vec,
					    w->da_hashes.v, w->da_hashes.n,
					    sizeof(*w->da_hashes.v));
		if (err)
			break;
		/* A plan for an inode outside the worker's AGs: keep it. */
		err = xk_vec_append(&dst->ifix.vec, w->ifix.v + fi[i],
				    w->ifix.n - fi[i], sizeof(*w->ifix.v));
		if (!err)
			err = xk_vec_append(&dst->dirfix.vec,
					    w->dirfix.v + di[i],
					    w->dirfix.n - di[i],
					    sizeof(*w->dirfix.v));
		/* Sorted before use (attrs_prepare): any order. */
		if (!err)
			err = xk_vec_append(&dst->attrfix.vec, w->attrfix.v,
					    w->attrfix.n,
					    sizeof(*w->attrfix.v));
	}
out:
	free(fi);
	free(di);
	return err;
}
