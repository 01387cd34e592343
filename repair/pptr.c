// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Parent pointers (filesystems with the PARENT feature): every directory
 * entry must have its parent pointer on the inode it names (the entry's
 * name, the directory's inode number and generation), and every parent
 * pointer must name a real entry.  Both sides are gathered after the
 * inode scan: the entries by reading each directory again (names are
 * not kept by the scan), the parent pointers by reading each inode's
 * attributes; the two lists are sorted and merged, and each side's
 * leftovers are reported.  Structural damage of directories and attr
 * forks is the other phases' to report: what cannot be read is left out
 * here, and entries naming inodes that are not in use are left to the
 * link phase.
 *
 * Repair plans, for each inode whose pointers differ from the entries
 * naming it, exactly the pointers those entries call for (pptrfix.c
 * writes them), as xfs_repair rebuilds them from the directory tree.
 * The entries are final only once every other repair is made (entries
 * dropped, directories rewritten, orphans moved to /lost+found, a new
 * root), so the plan is made only in a pass that found nothing else:
 * until then the findings are reported and left to a later pass.
 *
 * In: rc->scan.inodes (the inodes in use).  Out: a finding per mismatch,
 * and the parent pointer plans.
 */
#define _GNU_SOURCE		/* qsort_r */
#include <stdlib.h>
#include <string.h>

#include <xfskit/build_attr.h>
#include <xfskit/format/attr.h>
#include <xfskit/pptr.h>

#include "repair.h"

/* One side's record: child <- (parent, gen, name). */
struct pp_rec {
	uint64_t	child;
	uint64_t	parent;
	uint32_t	gen;
	uint32_t	name;		/* offset in the name pool */
	uint8_t		namelen;
};

struct pp_list {
	struct pp_rec	*v;
	size_t		n, cap;
};

struct pp_ctx {
	struct repair_ctx *rc;
	struct pp_list	ents, ptrs;
	uint8_t		*pool;
	size_t		pool_n, pool_cap;
	int		nomem;
	uint64_t	dir;		/* the directory being listed */
	uint32_t	dir_gen;
	/* Inodes with a malformed pointer, with unreadable attributes. */
	XK_VEC_OF(uint64_t) badval;
	XK_VEC_OF(uint64_t) unread;
};

static int
pp_add(struct pp_ctx *c, struct pp_list *l, uint64_t child, uint64_t parent,
       uint32_t gen, const uint8_t *name, uint8_t namelen)
{
	if (c->nomem)
		return -1;
	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 1024;
		struct pp_rec *v = xk_realloc(l->v, cap * sizeof(*v));

		if (!v)
			goto nomem;
		l->v = v;
		l->cap = cap;
	}
	if (c->pool_n + namelen > c->pool_cap) {
		size_t cap = c->pool_cap ? c->pool_cap * 2 : 65536;
		uint8_t *p;

		while (cap < c->pool_n + namelen)
			cap *= 2;
		p = xk_realloc(c->pool, cap);
		if (!p)
			goto nomem;
		c->pool = p;
		c->pool_cap = cap;
	}
	memcpy(c->pool + c->pool_n, name, namelen);
	l->v[l->n++] = (struct pp_rec){ child, parent, gen,
					(uint32_t)c->pool_n, namelen };
	c->pool_n += namelen;
	return 0;
nomem:
	c->nomem = 1;
	return -1;
}

/* An entry of the directory being listed, unless it names no inode in
 * use (the link phase reports those). */
static int
add_entry(void *ctx, const uint8_t *name, uint8_t namelen, uint64_t child,
	  uint8_t ftype)
{
	struct pp_ctx *c = ctx;
	const struct inode_info *ii = inode_info_find(c->rc, child);

	(void)ftype;
	if (ii && ii->mode)
		pp_add(c, &c->ents, child, c->dir, c->dir_gen, name, namelen);
	return 0;
}

/* Parent pointers of inode ino (its attributes in the PARENT namespace). */
static void
pointers(struct pp_ctx *c, uint64_t ino, const struct xk_dinode *dip)
{
	struct xk_attr_list l = { 0 };
	const char *why;
	int err = xk_attr_list_read(c->rc->mp, ino, dip, &l, &why);

	if (err) {
		xk_attr_list_free(&l);
		/* Memory or I/O stops the run. */
		if (repair_oserr(c->rc, err, "reading the parent pointers "
				 "of inode %llu", (unsigned long long)ino))
			return;
		/*
		 * One finding, not one per entry naming the inode: the
		 * attr check's repair comes first, the pointers after.
		 */
		report(c->rc, PR_PPTR, "parent pointer", -1, ino, XK_NO_DADDR,
		       "unreadable", "its parent pointers cannot be read: %s",
		       why ? why : "the attr fork is damaged");
		if (xk_vec_push(&c->unread.vec, &ino, sizeof(ino)))
			c->nomem = 1;
		return;
	}
	for (size_t i = 0; i < l.n; i++) {
		const struct xk_bld_xattr *x = &l.xa[i];
		const struct xk_parent_rec *r = (const void *)x->value;

		if (x->flags != XK_ATTR_PARENT)
			continue;
		if (x->valuelen != sizeof(*r) ||
		    !xk_pptr_name_ok(x->name, x->namelen)) {
			report(c->rc, PR_PPTR, "parent pointer", -1, ino,
			       XK_NO_DADDR, "value", "a parent pointer with "
			       "a %u-byte value or a name that is not an "
			       "entry name", x->valuelen);
			if ((!c->badval.n ||
			     c->badval.v[c->badval.n - 1] != ino) &&
			    xk_vec_push(&c->badval.vec, &ino, sizeof(ino)))
				c->nomem = 1;
			continue;
		}
		pp_add(c, &c->ptrs, ino, xk_be64_get(r->p_ino),
		       xk_be32_get(r->p_gen), x->name, x->namelen);
	}
	xk_attr_list_free(&l);
}

static int
rec_cmp(const struct pp_ctx *c, const struct pp_rec *a,
	const struct pp_rec *b)
{
	int d;

	if (a->child != b->child)
		return a->child < b->child ? -1 : 1;
	if (a->parent != b->parent)
		return a->parent < b->parent ? -1 : 1;
	if (a->gen != b->gen)
		return a->gen < b->gen ? -1 : 1;
	d = memcmp(c->pool + a->name, c->pool + b->name,
		   a->namelen < b->namelen ? a->namelen : b->namelen);
	if (d)
		return d;
	return (a->namelen > b->namelen) - (a->namelen < b->namelen);
}

/* By the inode named only (a search for an inode's records). */
static int
child_cmp(const void *pa, const void *pb)
{
	const struct pp_rec *a = pa, *b = pb;

	return (a->child > b->child) - (a->child < b->child);
}

static int
qcmp(const void *a, const void *b, void *ctx)
{
	return rec_cmp(ctx, a, b);
}

static void
say(struct pp_ctx *c, const struct pp_rec *r, int missing)
{
	char name[XK_ATTR_NAME_MAX + 1];

	memcpy(name, c->pool + r->name, r->namelen);
	name[r->namelen] = 0;
	for (unsigned int i = 0; i < r->namelen; i++)
		if (name[i] < 0x20 || name[i] == 0x7f)
			name[i] = '?';
	if (missing)
		report(c->rc, PR_PPTR, "parent pointer", -1, r->child,
		       XK_NO_DADDR, "missing", "the entry \"%s\" of directory "
		       "%llu (generation %u) has no parent pointer on the "
		       "inode it names", name,
		       (unsigned long long)r->parent, r->gen);
	else
		report(c->rc, PR_PPTR, "parent pointer", -1, r->child,
		       XK_NO_DADDR, "dangling", "parent pointer \"%s\" to "
		       "directory %llu (generation %u) names no entry of "
		       "that directory", name,
		       (unsigned long long)r->parent, r->gen);
}

static int
cmp_ino(const void *a, const void *b)
{
	const uint64_t *x = a, *y = b;

	return (*x > *y) - (*x < *y);
}

/* Is ino in l (in inode order)? */
static int
listed(const void *l, size_t n, uint64_t ino)
{
	return n && bsearch(&ino, l, n, sizeof(ino), cmp_ino) != NULL;
}

/* Whether this pass found anything but parent pointer problems. */
static int
other_findings(const struct repair_ctx *rc)
{
	for (int pr = 0; pr < PR_NR; pr++)
		if (rc->found.counts[pr] && pr != PR_PPTR)
			return 1;
	return 0;
}

/*
 * Plan child's pointers: exactly the entries e[0..n) naming it.  Its
 * attributes must have been read, or they would be lost.
 */
static void
plan_child(struct pp_ctx *c, uint64_t child, const struct pp_rec *e,
	   size_t n)
{
	if (listed(c->unread.v, c->unread.n, child)) {
		plan_none(c->rc);
		return;
	}
	plan_pptr(c->rc, child);
	for (size_t k = 0; k < n; k++)
		plan_pptr_add(c->rc, child, e[k].parent, e[k].gen,
			      c->pool + e[k].name, e[k].namelen);
}

/*
 * Merge the entries and pointers naming one inode (the lists' next run
 * for the smallest inode left): report each side's leftovers, and plan
 * the inode's pointers when it may.
 */
static void
merge_child(struct pp_ctx *c, size_t *pi, size_t *pj, int plan)
{
	size_t i = *pi, j = *pj, i0 = *pi;
	uint64_t child = i == c->ents.n ? c->ptrs.v[j].child :
			 j == c->ptrs.n ? c->ents.v[i].child :
			 c->ents.v[i].child < c->ptrs.v[j].child ?
			 c->ents.v[i].child : c->ptrs.v[j].child;
	int differ = listed(c->badval.v, c->badval.n, child);
	int unread = listed(c->unread.v, c->unread.n, child);

	for (;;) {
		int ie = i < c->ents.n && c->ents.v[i].child == child;
		int jp = j < c->ptrs.n && c->ptrs.v[j].child == child;
		int d;

		if (!ie && !jp)
			break;
		d = !ie ? 1 : !jp ? -1 :
		    rec_cmp(c, &c->ents.v[i], &c->ptrs.v[j]);
		if (d == 0) {
			i++;
			j++;
			continue;
		}
		differ = 1;
		if (!unread)
			say(c, d < 0 ? &c->ents.v[i] : &c->ptrs.v[j], d < 0);
		if (d < 0)
			i++;
		else
			j++;
	}
	if (differ && plan && !c->rc->opt.no_modify && !c->rc->found.error)
		plan_child(c, child, &c->ents.v[i0], i - i0);
	*pi = i;
	*pj = j;
}

int
phase_pptr(struct repair_ctx *rc)
{
	struct xk_mount *mp = rc->mp;
	struct pp_ctx c = { .rc = rc };
	size_t i = 0, j = 0;
	/* Before this phase reports anything of its own. */
	int plan = !other_findings(rc);

	if (!mp->g.has_parent)
		return 0;
	for (size_t k = 0; k < rc->scan.ninodes; k++) {
		uint64_t ino = rc->scan.inodes[k].ino;
		struct xk_dinode *dip;
		struct xk_buf *bp;
		struct xk_fail f;

		int err;

		if (!rc->scan.inodes[k].mode)
			continue;
		/*
		 * Salvage: a cluster whose other inode is bad still gives
		 * this one, judged alone; skipping the cluster reported a
		 * missing pointer for every entry naming its good inodes.
		 * An inode that cannot be judged is the inode scan's
		 * finding; the entries naming it say nothing here.
		 */
		err = xk_inode_read(mp, ino, XK_READ_SALVAGE, &bp, &dip);
		if (err && !bp && repair_oserr(rc, err, "reading inode %llu",
					       (unsigned long long)ino))
			goto out;
		if (!bp || xk_dinode_verify(mp, ino, dip, &f) ||
		    !xk_be16_get(dip->di_mode)) {
			xk_buf_release(bp);
			if (xk_vec_push(&c.unread.vec, &ino, sizeof(ino)))
				c.nomem = 1;
			continue;
		}
		if ((xk_be16_get(dip->di_mode) & XK_S_IFMT) == XK_S_IFDIR) {
			c.dir = ino;
			c.dir_gen = xk_be32_get(dip->di_gen);
			err = xk_dir_entries(mp, ino, dip, add_entry, &c);
			if (repair_oserr(rc, err, "reading directory %llu",
					 (unsigned long long)ino)) {
				xk_buf_release(bp);
				goto out;
			}
		}
		pointers(&c, ino, dip);
		xk_buf_release(bp);
		if (rc->found.error)
			goto out;
	}
	/* Part of the pointers or entries would give false findings. */
	if (c.nomem) {
		repair_error(rc, -ENOMEM, "checking parent pointers");
		goto out;
	}
	if (c.ents.n)
		qsort_r(c.ents.v, c.ents.n, sizeof(*c.ents.v), qcmp, &c);
	if (c.ptrs.n)
		qsort_r(c.ptrs.v, c.ptrs.n, sizeof(*c.ptrs.v), qcmp, &c);
	while ((i < c.ents.n || j < c.ptrs.n) && !rc->found.error)
		merge_child(&c, &i, &j, plan);
	/* Inodes with only malformed pointers are in neither list. */
	for (size_t k = 0; plan && k < c.badval.n && !rc->found.error; k++) {
		uint64_t ino = c.badval.v[k];
		struct pp_rec key = { .child = ino };

		if (!c.ptrs.n ||
		    !bsearch(&key, c.ptrs.v, c.ptrs.n, sizeof(key), child_cmp))
			if (!c.ents.n || !bsearch(&key, c.ents.v, c.ents.n,
						  sizeof(key), child_cmp))
				plan_child(&c, ino, NULL, 0);
	}
out:
	free(c.ents.v);
	free(c.ptrs.v);
	free(c.pool);
	xk_vec_free(&c.badval.vec);
	xk_vec_free(&c.unread.vec);
	return rc->found.error;
}
