// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Which data forks the rmapbt can restore (after the space phase): an
 * inode in use whose data fork maps fewer blocks than the rmapbt gives
 * it, where the extra records collide with no other owner, gets a plan
 * to rebuild its fork from the rmapbt (IFIX_RMAP_FORK), which
 * rebuild_fork.c applies.  Repair only: a check plans nothing.
 */
#include <stdlib.h>

#include "repair.h"

static int
is_data(const struct claim *c)
{
	return !(c->offset & (XK_RMAP_OFF_ATTR_FORK | XK_RMAP_OFF_BMBT_BLOCK));
}

static int
overlaps_other(const struct repair_ctx *rc, uint32_t agno,
	       const struct claim *r)
{
	const struct claims *u = &rc->scan.ags[agno].used;

	for (size_t i = 0; i < u->n; i++) {
		const struct claim *c = &u->v[i];

		if (c->owner == r->owner || c->agbno >= r->agbno + r->len ||
		    c->agbno + c->len <= r->agbno)
			continue;
		if (rc->mp->g.has_reflink && is_data(c) &&
		    !xk_rmap_owner_is_special(c->owner))
			continue;
		return 1;
	}
	return 0;
}

static int
cmp_ino(const void *a, const void *b)
{
	const struct inode_info *x = a, *y = b;

	return (x->ino > y->ino) - (x->ino < y->ino);
}

/* Blocks per owner, in owner order. */
struct owned {
	uint64_t	owner;
	uint64_t	blocks;
};

static int
cmp_owned(const void *a, const void *b)
{
	const struct owned *x = a, *y = b;

	return (x->owner > y->owner) - (x->owner < y->owner);
}

/* Sum the data blocks of every inode owner in the lists chosen. */
static struct owned *
sum_owners(const struct repair_ctx *rc, int from_rmap, size_t *np, int *errp)
{
	XK_VEC_OF(struct owned) list = { 0 };
	struct owned *v;
	size_t n;

	for (uint32_t agno = 0; agno < rc->mp->g.agcount; agno++) {
		const struct claims *c = from_rmap ? &rc->scan.ags[agno].rmaps :
					 &rc->scan.ags[agno].used;

		for (size_t i = 0; i < c->n; i++) {
			const struct owned o = { c->v[i].owner, c->v[i].len };

			if (xk_rmap_owner_is_special(c->v[i].owner) ||
			    !is_data(&c->v[i]))
				continue;
			if (xk_vec_push(&list.vec, &o, sizeof(o))) {
				xk_vec_free(&list.vec);
				*errp = -ENOMEM;
				return NULL;
			}
		}
	}
	/* The caller frees the elements (a heap vector's are malloc'd). */
	v = list.v;
	n = list.n;
	sort_v(v, n, sizeof(*v), cmp_owned);
	/* One entry per owner. */
	{
		size_t out = 0;

		for (size_t i = 0; i < n; i++) {
			if (out && v[out - 1].owner == v[i].owner)
				v[out - 1].blocks += v[i].blocks;
			else
				v[out++] = v[i];
		}
		n = out;
	}
	*np = n;
	return v;
}

/* Whether any of ino's rmap data records collides with another owner. */
static int
rmap_clash(const struct repair_ctx *rc, uint64_t ino)
{
	for (uint32_t agno = 0; agno < rc->mp->g.agcount; agno++) {
		const struct claims *r = &rc->scan.ags[agno].rmaps;

		for (size_t i = 0; i < r->n; i++)
			if (r->v[i].owner == ino && is_data(&r->v[i]) &&
			    overlaps_other(rc, agno, &r->v[i]))
				return 1;
	}
	return 0;
}

/*
 * Sums per owner over the claims and over the rmap records, merged by
 * owner: linear after the sorts, so a large filesystem pays little.
 * Only an inode in use whose rmap data blocks exceed its mapped ones is
 * examined further (collisions) and planned.
 */
void
check_rmap_forks(struct repair_ctx *rc)
{
	struct owned *mapped, *known;
	size_t nm = 0, nk = 0, j = 0;
	int err = 0;

	/* Only plans come out of this: nothing to do for a check. */
	if (rc->opt.no_modify || !rmaps_usable(rc))
		return;
	mapped = sum_owners(rc, 0, &nm, &err);
	known = sum_owners(rc, 1, &nk, &err);
	if (err) {
		/* Plans from part of the owners would be a partial repair. */
		repair_error(rc, err, "comparing the block maps with the "
			     "rmapbt");
		free(mapped);
		free(known);
		return;
	}
	inodes_order(rc);
	for (size_t i = 0; known && i < nk; i++) {
		uint64_t have = 0;
		struct inode_info key = { .ino = known[i].owner };

		while (mapped && j < nm && mapped[j].owner < known[i].owner)
			j++;
		if (mapped && j < nm && mapped[j].owner == known[i].owner)
			have = mapped[j].blocks;
		if (known[i].blocks <= have || !rc->scan.ninodes ||
		    !bsearch(&key, rc->scan.inodes, rc->scan.ninodes, sizeof(key),
			     cmp_ino) ||
		    rmap_clash(rc, known[i].owner))
			continue;
		if (rc->opt.verbose)
			info(rc, "        - inode %llu maps %llu of the %llu "
			     "blocks the rmapbt gives it\n",
			     (unsigned long long)known[i].owner,
			     (unsigned long long)have,
			     (unsigned long long)known[i].blocks);
		plan_inode(rc, known[i].owner, IFIX_RMAP_FORK, 0);
	}
	free(mapped);
	free(known);
}
