// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Attr forks rewritten from their salvaged entries.  An attr fork the
 * check found damaged (attr.c) in its structure, not its map, is read
 * entry by entry (xk_attr_list_salvage: every entry that is intact,
 * whatever its leaf's header or the dabtree says) and written anew by
 * the builder inside the AG rebuild session, as directories are
 * (dirfix.c): its old blocks are not fed, so they end up free, and the
 * builder allocates the new ones.  Every entry left out is reported
 * with its reason.  xfs_repair drops the whole fork for most of this
 * damage; we keep what verifies.
 *
 * Two steps, because the builder may hand out an old attr block of one
 * inode to anything it writes: first every fork is salvaged and emptied
 * in place (its blocks leave the inode's block count), before anything
 * is allocated; then, once the directories are written, each fork gets
 * its salvaged entries.  A fork the builder cannot write stays empty,
 * and that is reported as the drop of its attributes.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include <xfskit/build.h>
#include <xfskit/build_attr.h>
#include <xfskit/format/attr.h>
#include <xfskit/init.h>

#include "repair.h"

/* One attribute left out, as reported once the fork is written. */
/* In a lost_attr: an ACL dropped after salvage, not by the reader. */
#define XK_ATTR_SALVAGE_ACL	(XK_ATTR_SALVAGE_BLOCK - 1)

struct lost_attr {
	char		name[XK_ATTR_NAME_MAX * 4 + 16];
	const char	*why;
	uint64_t	lblk;
	uint32_t	index;
};

struct attr_rewrite {
	uint64_t	ino;
	struct xk_attr_list l;
	/* A kilobyte each: they spill with the list. */
	XK_VEC_OF(struct lost_attr) lost;
	int		nomem;
};

struct attr_rewrites {
	struct attr_rewrite *v;
	size_t		n;
};

/*
 * Keep the inodes whose fork can be salvaged: sorted, unique, in use,
 * verifying, not a directory being rewritten (dirfix.c keeps its attr
 * fork as it is; the next pass salvages it), an attr fork of a known
 * format.
 */
int
attrs_prepare(struct repair_ctx *rc)
{
	size_t out = 0;

	sort_v(rc->plan.attrfix.v, rc->plan.attrfix.n,
	       sizeof(*rc->plan.attrfix.v), cmp_u64);
	for (size_t i = 0; i < rc->plan.attrfix.n; i++) {
		uint64_t ino = rc->plan.attrfix.v[i];
		struct xk_buf *bp;
		struct xk_dinode *dip;
		int ok, err;

		if (out && rc->plan.attrfix.v[out - 1] == ino)
			continue;
		if (dir_being_rebuilt(rc, ino))
			continue;
		err = xk_inode_read(rc->mp, ino, 0, &bp, &dip);
		if (err && !bp && repair_oserr(rc, err, "reading inode %llu",
					       (unsigned long long)ino))
			break;
		if (err && !bp) {
			plan_none(rc);
			continue;
		}
		ok = !err && inode_info_find(rc, ino) && dip->di_forkoff &&
		     (dip->di_aformat == XK_DINODE_FMT_LOCAL ||
		      dip->di_aformat == XK_DINODE_FMT_EXTENTS ||
		      dip->di_aformat == XK_DINODE_FMT_BTREE);
		xk_buf_release(bp);
		if (ok)
			rc->plan.attrfix.v[out++] = ino;
		else
			plan_none(rc);
	}
	rc->plan.attrfix.n = out;
	return (int)out;
}

/* Printable: namespace prefix, then the name with odd bytes as '?'. */
static void
attr_name_text(char *buf, size_t len, uint8_t flags, const uint8_t *name,
	       uint8_t namelen)
{
	const char *ns = flags & XK_ATTR_ROOT ? "trusted." :
			 flags & XK_ATTR_SECURE ? "security." :
			 flags & XK_ATTR_PARENT ? "parent:" : "user.";
	size_t n = (size_t)snprintf(buf, len, "%s", ns);

	for (uint8_t i = 0; i < namelen && n + 1 < len; i++)
		buf[n++] = isprint(name[i]) ? (char)name[i] : '?';
	buf[n < len ? n : len - 1] = '\0';
}

static void
note_lost(void *ctx, const struct xk_attr_dropped *d)
{
	struct attr_rewrite *w = ctx;
	struct lost_attr *la;

	if (xk_vec_reserve(&w->lost.vec, w->lost.n + 1, sizeof(*la))) {
		w->nomem = 1;
		return;
	}
	la = &w->lost.v[w->lost.n++];
	if (d->namelen)
		attr_name_text(la->name, sizeof(la->name), d->flags, d->name,
			       d->namelen);
	else
		la->name[0] = '\0';
	la->why = d->why;
	la->lblk = d->lblk;
	la->index = d->index;
}

/*
 * A POSIX ACL the check found invalid is left out, as xfs_repair removes
 * it; the file and its other xattrs stay.  Where it was is no longer
 * known here: the report names it.
 */
static void
drop_bad_acls(struct attr_rewrite *w)
{
	size_t out = 0;

	for (size_t i = 0; i < w->l.n; i++) {
		struct xk_bld_xattr *x = &w->l.xa[i];
		const char *why = acl_problem(x->flags, x->name, x->namelen,
					      x->value, x->valuelen);

		if (!why) {
			w->l.xa[out++] = *x;
			continue;
		}
		note_lost(w, &(struct xk_attr_dropped){
			.lblk = XK_ATTR_SALVAGE_SF, .index = XK_ATTR_SALVAGE_ACL,
			.flags = x->flags, .namelen = x->namelen,
			.name = x->name, .why = why });
	}
	w->l.n = out;
}

/*
 * Salvage one fork into w and empty it in place; its blocks are no
 * longer counted (nor fed: they are free in the session).
 */
static int
salvage_one(struct repair_ctx *rc, struct attr_rewrite *w)
{
	struct xk_mount *mp = rc->mp;
	struct xk_buf *bp;
	struct xk_dinode *dip;
	const char *why = NULL;
	uint64_t nb, old;
	int err;

	err = xk_inode_read(mp, w->ino, 0, &bp, &dip);
	if (err)
		return repair_error(rc, err, "reading inode %llu to salvage "
				    "its xattrs", (unsigned long long)w->ino);
	/* A fork of a million xattrs spills like the scan's lists. */
	w->l.vec.spill = rc->spill;
	w->l.bytes.spill = rc->spill;
	w->lost.vec.spill = rc->spill;
	w->lost.vec.first = 8;
	err = xk_attr_list_salvage(mp, w->ino, dip, &w->l, note_lost, w,
				   &why);
	if (!err && w->nomem)
		err = -ENOMEM;
	if (xk_err_operational(err)) {
		xk_buf_release(bp);
		return repair_error(rc, err, "salvaging the xattrs of inode "
				    "%llu", (unsigned long long)w->ino);
	}
	if (!err) {
		drop_bad_acls(w);
		spill_list_report(rc, "salvaged xattr", w->ino, &w->l.vec,
				  sizeof(*w->l.xa), &w->l.bytes);
	}
	if (err) {
		/* Nothing readable: the fork goes, said so below. */
		xk_attr_list_free(&w->l);
		w->lost.n = 0;
		note_lost(w, &(struct xk_attr_dropped){
			.lblk = XK_ATTR_SALVAGE_SF,
			.index = XK_ATTR_SALVAGE_BLOCK,
			.why = why ? why : "its attr fork cannot be read" });
	}
	old = dip->di_aformat == XK_DINODE_FMT_LOCAL ? 0 :
	      attr_blocks_claimed(rc, w->ino);
	nb = xk_be64_get(dip->di_nblocks);
	drop_attr_fork(rc, dip);
	xk_be64_set(&dip->di_nblocks, nb > old ? nb - old : 0);
	xk_inode_init_crc(mp, dip);
	xk_buf_dirty(bp);
	xk_buf_release(bp);
	return 0;
}

int
attrs_salvage(struct repair_ctx *rc, struct attr_rewrites **out)
{
	struct attr_rewrites *aw = xk_calloc(1, sizeof(*aw));
	int err = 0;

	*out = aw;
	if (aw)
		aw->v = xk_calloc(rc->plan.attrfix.n, sizeof(*aw->v));
	if (!aw || !aw->v)
		return repair_error(rc, -ENOMEM, "salvaging xattrs");
	for (size_t i = 0; i < rc->plan.attrfix.n && !err; i++) {
		aw->v[i].ino = rc->plan.attrfix.v[i];
		aw->n++;
		err = salvage_one(rc, &aw->v[i]);
	}
	return err;
}

/* Each attribute left out of w's fork, with where it was and why. */
static void
report_lost(struct repair_ctx *rc, const struct attr_rewrite *w)
{
	for (size_t i = 0; i < w->lost.n; i++) {
		const struct lost_attr *la = &w->lost.v[i];
		char where[64];

		if (la->index == XK_ATTR_SALVAGE_ACL)
			snprintf(where, sizeof(where), "an invalid ACL");
		else if (la->index == XK_ATTR_SALVAGE_BLOCK &&
		    la->lblk == XK_ATTR_SALVAGE_SF)
			snprintf(where, sizeof(where), "all of them");
		else if (la->index == XK_ATTR_SALVAGE_BLOCK)
			snprintf(where, sizeof(where), "attr block %llu",
				 (unsigned long long)la->lblk);
		else if (la->lblk == XK_ATTR_SALVAGE_SF)
			snprintf(where, sizeof(where), "short-form entry %u",
				 la->index);
		else
			snprintf(where, sizeof(where), "attr block %llu "
				 "entry %u", (unsigned long long)la->lblk,
				 la->index);
		action_report_why(rc, ACT_XATTR_DROPPED, w->ino, -1, NULL,
				  la->why, ": %s%s%s%s", la->name,
				  la->name[0] ? " (" : "", where,
				  la->name[0] ? ")" : "");
	}
}

int
attrs_rewrite(struct repair_ctx *rc, struct xk_bld *b,
	      struct attr_rewrites *w)
{
	for (size_t i = 0; i < w->n; i++) {
		struct attr_rewrite *a = &w->v[i];
		const char *why = NULL;
		int err = a->l.n ? xk_bld_attr_rewrite(b, a->ino, &a->l, &why) :
			  0;

		if (xk_err_operational(err))
			return repair_error(rc, err, "writing the salvaged "
					    "xattrs of inode %llu",
					    (unsigned long long)a->ino);
		if (err) {
			action_report_why(rc, ACT_ATTR_DROPPED, a->ino, -1,
					  NULL, why ? why : "the builder "
					  "could not write them", ": %zu "
					  "salvaged could not be written",
					  a->l.n);
		} else {
			action_report(rc, ACT_ATTR_REWRITTEN, a->ino, -1, NULL,
				      " from %zu intact entries (%zu left "
				      "out)", a->l.n, a->lost.n);
		}
		report_lost(rc, a);
	}
	return 0;
}

void
attrs_free(struct attr_rewrites *w)
{
	if (!w)
		return;
	for (size_t i = 0; i < w->n; i++) {
		xk_attr_list_free(&w->v[i].l);
		xk_vec_free(&w->v[i].lost.vec);
	}
	free(w->v);
	free(w);
}
