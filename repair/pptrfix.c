// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Parent pointers rewritten (the PARENT feature): each inode pptr.c
 * planned gets exactly the pointers of the entries naming it, its other
 * attributes kept.  Its attributes are read whole, its parent pointers
 * replaced in the list, and the attr fork written anew by the builder
 * (build_attr.h), whose commit frees the old blocks and indexes the new
 * ones.  The builder loads its state from the AG btrees, so pptr.c plans
 * this only in a pass that found nothing else wrong.  An inode whose
 * fork cannot be rewritten stops the run before anything is written:
 * its old blocks may already be handed to the builder's free space.
 */
#include <stdlib.h>
#include <string.h>

#include <xfskit/build.h>
#include <xfskit/build_attr.h>
#include <xfskit/format/attr.h>

#include "repair.h"

/* Replace the parent pointers in l with w[0..n); *had: how many it had. */
static int
pptr_list_set(struct xk_attr_list *l, const struct pptr_want *w, size_t n,
	      const uint8_t *names, size_t *had)
{
	for (size_t i = 0; i < l->n;) {
		uint8_t name[XK_ATTR_NAME_MAX];
		uint8_t namelen = l->xa[i].namelen;

		if (l->xa[i].flags != XK_ATTR_PARENT) {
			i++;
			continue;
		}
		/* Every pointer by that name goes; the list closes up. */
		memcpy(name, l->xa[i].name, namelen);
		*had += xk_attr_list_remove(l, XK_ATTR_PARENT, name, namelen,
					    NULL, 0);
	}
	for (size_t i = 0; i < n; i++) {
		struct xk_parent_rec rec;
		int err;

		xk_be64_set(&rec.p_ino, w[i].parent);
		xk_be32_set(&rec.p_gen, w[i].gen);
		/* Once each, should an entry be listed twice. */
		xk_attr_list_remove(l, XK_ATTR_PARENT, names + w[i].name,
				    w[i].namelen, (const uint8_t *)&rec,
				    sizeof(rec));
		err = xk_attr_list_add(l, XK_ATTR_PARENT, names + w[i].name,
				       w[i].namelen, (const uint8_t *)&rec,
				       sizeof(rec));
		if (err)
			return err;
	}
	return 0;
}

/* Rewrite the parent pointers of ino to w[0..n) in session b. */
static int
pptr_fix_one(struct repair_ctx *rc, struct xk_bld *b, uint64_t ino,
	     const struct pptr_want *w, size_t n)
{
	struct xk_mount *mp = rc->mp;
	struct xk_attr_list l = { 0 };
	struct xk_dinode *dip;
	struct xk_buf *bp = NULL;
	struct xk_fail f;
	size_t had = 0;
	const char *why = NULL;
	int err;

	err = xk_inode_read(mp, ino, 0, &bp, &dip);
	if (!err && (xk_dinode_verify(mp, ino, dip, &f) ||
		     !xk_be16_get(dip->di_mode))) {
		why = "the inode no longer verifies";
		err = XK_ECORRUPT;
	}
	if (!err)
		err = xk_attr_list_read(mp, ino, dip, &l, &why);
	if (bp)
		xk_buf_release(bp);
	if (!err)
		err = pptr_list_set(&l, w, n, rc->plan.pptr_names.v, &had);
	if (!err)
		err = xk_bld_attr_rewrite(b, ino, &l, &why);
	xk_attr_list_free(&l);
	if (err)
		return repair_error(rc, err, "rewriting the parent pointers "
				    "of inode %llu%s%s",
				    (unsigned long long)ino, why ? ": " : "",
				    why ? why : "");
	action_report(rc, ACT_PPTR_SET, ino, -1, NULL, " to %zu (it had %zu)",
		      n, had);
	return 0;
}

int
pptr_apply(struct repair_ctx *rc, unsigned long *applied)
{
	const struct repair_plan *p = &rc->plan;
	struct xk_bld *b = NULL;
	size_t k = 0;
	int err;

	if (!p->pptr_inos.n)
		return 0;
	err = xk_bld_open(rc->mp, &b);
	if (err)
		return repair_error(rc, err, "loading the free space to "
				    "rewrite parent pointers");
	for (size_t i = 0; i < p->pptr_inos.n && !err; i++) {
		uint64_t ino = p->pptr_inos.v[i];
		size_t k0 = k;

		while (k < p->pptr_want.n && p->pptr_want.v[k].child == ino)
			k++;
		err = pptr_fix_one(rc, b, ino, &p->pptr_want.v[k0], k - k0);
		if (!err)
			(*applied)++;
	}
	if (!err) {
		err = xk_bld_commit(b);
		if (err)
			repair_error(rc, err, "indexing the space of the "
				     "rewritten parent pointers");
	}
	xk_bld_free(b);
	return err;
}
