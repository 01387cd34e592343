// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The realtime groups' rmap and refcount btrees: metadata files
 * /rtgroups/N.rmap and N.refcount whose data fork holds the root
 * (XK_DINODE_FMT_META_BTREE), blocks 'MAPR' and 'RCNT' on the data
 * device, records with group-relative realtime block numbers.  Reading
 * and judging one tree, for the check (rtbtree_check.c) and the rewrite
 * (rtbtree_fix.c):
 *  1. the inode (metafile type, fork format), then every block through
 *     libfs's btree walker (header: magic, CRC, UUID, owner, level,
 *     siblings; key and record order; each record inside a group) and
 *     each record inside its own group (the last may be shorter);
 *  2. the rmap records against the realtime files' mappings (the
 *     claims) and the realtime superblock's extent: a mapping without a
 *     record is missing (xfs_repair's words), a record without a mapping
 *     is extra;
 *  3. the refcount records against the extents the mappings share.
 * The bitmap is checked against the same mappings (rtgroup_check.c), so
 * bitmap and rmap agree when both pass.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <xfskit/btree.h>
#include <xfskit/format/rtgroup.h>

#include "rtbtree.h"

const struct xk_btree_ops *
rtb_ops(uint16_t metatype)
{
	if (metatype == XK_METAFILE_RTRMAP)
		return &xk_rtrmapbt_ops;
	if (metatype == XK_METAFILE_RTREFCOUNT)
		return &xk_rtrefcountbt_ops;
	return NULL;
}

void
rtb_walk_init(struct xk_btree_walk *w, struct xk_mount *mp, uint64_t ino,
	      const struct xk_dinode *dip, const struct xk_btree_ops *ops)
{
	memset(w, 0, sizeof(*w));
	w->ops = ops;
	w->agno = -1;
	w->owner = ino;
	w->iroot = xk_dfork_ptr(dip, XK_DATA_FORK);
	w->iroot_size = xk_dfork_size(dip, mp->g.inodesize, XK_DATA_FORK);
	w->levels = w->iroot_size >= 4 ? xk_get_be16(w->iroot) + 1u : 0;
}


/*
 * Findings after which every record was still read: a key or sibling
 * that disagrees with the blocks, a CRC alone.  The records are then
 * compared too, as xfs_repair compares them.
 */
static int
soft_check(const char *check)
{
	static const char *const soft[] = {
		"parent key", "high key", "leftsib", "rightsib", "crc",
	};

	for (size_t i = 0; i < sizeof(soft) / sizeof(soft[0]); i++)
		if (check && !strcmp(check, soft[i]))
			return 1;
	return 0;
}

static void
tree_fail(void *ctx, const struct xk_fail *f)
{
	struct rtb_tree *t = ctx;

	t->nfound++;
	t->nhard += !soft_check(f->check);
	if (!t->quiet)
		fix_problem(t->rc, PR_RT_BTREE, f);
}

static int
tree_rec(void *ctx, const void *rec)
{
	struct rtb_tree *t = ctx;
	const uint8_t *p = rec;
	struct rtb_rec r;

	if (t->ops == &xk_rtrmapbt_ops) {
		r.start = xk_get_be32(p);
		r.len = xk_get_be32(p + 4);
		r.owner = xk_get_be64(p + 8);
		r.off = xk_get_be64(p + 16);
	} else {
		r.start = xk_get_be32(p) & ~XK_REFC_COWFLAG;
		r.off = (xk_get_be32(p) & XK_REFC_COWFLAG) != 0;
		r.len = xk_get_be32(p + 4);
		r.owner = xk_get_be32(p + 8);
	}
	return xk_vec_push(&t->recs.vec, &r, sizeof(r));
}

void
rtb_finding(struct repair_ctx *rc, uint64_t ino, const char *check,
	const char *msg)
{
	report(rc, PR_RT_BTREE, "realtime btree", -1, ino, XK_NO_DADDR,
	       check, "%s", msg);
}

/* A finding about tree t's records (counted only, under rtb_rewrite). */
static void
differs(struct rtb_tree *t, const char *check, const char *msg)
{
	t->ndiff++;
	if (!t->quiet)
		rtb_finding(t->rc, t->ino, check, msg);
}

static int
count_leaf(void *ctx, unsigned int level, uint64_t bno, struct xk_buf *bp)
{
	struct rtb_tree *t = ctx;

	(void)bno;
	(void)bp;
	t->nleaves += level == 0;
	return 0;
}

/*
 * Read the tree of inode ino (a metadata file of metatype): the inode's
 * own checks, then the walk gathering t->recs.  *ok is 0 when the tree
 * was not walked whole (its records are then not compared).
 */
static int
tree_read(struct repair_ctx *rc, uint32_t g, uint64_t ino, uint16_t metatype,
	  struct rtb_tree *t, int *ok)
{
	const char *name = metatype == XK_METAFILE_RTRMAP ? "rmap" : "refcount";
	struct xk_btree_walk w;
	struct xk_dinode *dip;
	struct xk_buf *bp;
	char msg[160];
	int err;

	*ok = 0;
	err = xk_inode_read(rc->mp, ino, 0, &bp, &dip);
	if (err && xk_err_operational(err))
		return repair_error(rc, err, "reading rtgroup %u %s inode "
				    "%llu", g, name, (unsigned long long)ino);
	if (err)
		return 0;	/* the inode phase reported the inode itself */
	if (xk_be16_get(dip->di_onlink) != metatype ||
	    !(xk_be64_get(dip->di_flags2) & XK_DIFLAG2_METADATA)) {
		snprintf(msg, sizeof(msg), "rtgroup %u %s inode %llu has "
			 "metafile type %u", g, name, (unsigned long long)ino,
			 xk_be16_get(dip->di_onlink));
		if (!t->quiet)
			rtb_finding(rc, ino, "metatype", msg);
	} else if (dip->di_format != XK_DINODE_FMT_META_BTREE) {
		snprintf(msg, sizeof(msg), "rtgroup %u %s inode %llu has data "
			 "fork format %u, not a metadata btree", g, name,
			 (unsigned long long)ino, dip->di_format);
		if (!t->quiet)
			rtb_finding(rc, ino, "format", msg);
	} else {
		rtb_walk_init(&w, rc->mp, ino, dip, rtb_ops(metatype));
		w.ctx = t;
		w.rec_fn = tree_rec;
		w.fail_fn = tree_fail;
		w.block_fn = count_leaf;
		t->root_level = w.levels ? w.levels - 1 : 0;
		t->fork_size = w.iroot_size;
		err = xk_btree_walk(rc->mp, &w);
		if (err == XK_ECORRUPT && !t->nfound && !t->quiet)
			rtb_finding(rc, ino, "btree", "the btree cannot be walked");
		else if (err < 0 && err != XK_ECORRUPT) {
			xk_buf_release(bp);
			return repair_error(rc, err, "walking rtgroup %u %s "
					    "btree", g, name);
		}
		*ok = err == 0 || (err == XK_ECORRUPT && !t->nhard &&
				   !w.read_err);
	}
	xk_buf_release(bp);
	return 0;
}

static int
cmp_rmap(const void *a, const void *b)
{
	const struct rtb_rec *x = a, *y = b;
	uint64_t xo = x->off & XK_RMAP_OFF_MASK, yo = y->off & XK_RMAP_OFF_MASK;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	if (x->owner != y->owner)
		return x->owner < y->owner ? -1 : 1;
	if (xo != yo)
		return xo < yo ? -1 : 1;
	return (x->len > y->len) - (x->len < y->len);
}

/* Adjacent mappings of one owner that continue each other, as one. */
static size_t
rmap_merge(struct rtb_rec *v, size_t n)
{
	size_t out = 0;

	for (size_t i = 0; i < n; i++) {
		struct rtb_rec *p = out ? &v[out - 1] : NULL;

		if (p && p->owner == v[i].owner &&
		    p->start + p->len == v[i].start &&
		    (xk_rmap_owner_is_special(p->owner) ||
		     (p->off + p->len == v[i].off))) {
			p->len += v[i].len;
			continue;
		}
		v[out++] = v[i];
	}
	return out;
}

static void
rmap_say(char *s, size_t size, const char *what, uint32_t g,
	 const struct rtb_rec *r)
{
	snprintf(s, size, "%s for (%u/%llu) len %llu owner %lld off %llu%s",
		 what, g, (unsigned long long)r->start,
		 (unsigned long long)r->len, (long long)r->owner,
		 (unsigned long long)(r->off & XK_RMAP_OFF_MASK),
		 (r->off & XK_RMAP_OFF_UNWRITTEN) ? " unwritten" : "");
}

/* Step 3: records in key order against the mappings, both merged. */
static int
rmap_compare(struct repair_ctx *rc, uint32_t g, struct rtb_tree *t,
	     struct xk_vec *out)
{
	const struct xk_sb *sb = &rc->mp->sb;
	XK_VEC_OF(struct rtb_rec) want = { 0 };
	struct rt_claim *c = rc->scan.rt_claims;
	size_t nw, nh, i = 0, j = 0;
	char msg[200];
	int err = 0;

	if (g == 0) {
		struct rtb_rec r = { 0, sb->rextsize, XK_RMAP_OWN_FS, 0 };

		err = xk_vec_push(&want.vec, &r, sizeof(r));
	}
	for (size_t k = 0; k < rc->scan.nrt_claims && !err; k++) {
		struct rtb_rec r = { xk_rtb_to_rgbno(sb, c[k].start),
				     c[k].len, c[k].ino, c[k].off };

		if (xk_rtb_to_rgno(sb, c[k].start) == g)
			err = xk_vec_push(&want.vec, &r, sizeof(r));
	}
	if (err) {
		xk_vec_free(&want.vec);
		return repair_error(rc, err, "listing rtgroup %u's mappings",
				    g);
	}
	sort_v(want.v, want.n, sizeof(*want.v), cmp_rmap);
	nw = rmap_merge(want.v, want.n);
	t->nwant = nw;
	if (out) {
		err = xk_vec_append(out, want.v, nw, sizeof(*want.v));
		xk_vec_free(&want.vec);
		return err ? repair_error(rc, err, "listing rtgroup %u's "
					  "mappings", g) : 0;
	}
	sort_v(t->recs.v, t->recs.n, sizeof(*t->recs.v), cmp_rmap);
	nh = rmap_merge(t->recs.v, t->recs.n);
	while (i < nw || j < nh) {
		const struct rtb_rec *w = i < nw ? &want.v[i] : NULL;
		const struct rtb_rec *h = j < nh ? &t->recs.v[j] : NULL;
		int d = !w ? 1 : !h ? -1 : cmp_rmap(w, h);

		if (d == 0 && w->off == h->off) {
			i++, j++;
			continue;
		}
		if (d <= 0) {
			rmap_say(msg, sizeof(msg), "Missing reverse-mapping "
				 "record", g, w);
			differs(t, "missing", msg);
			i++;
		}
		if (d >= 0) {
			rmap_say(msg, sizeof(msg), "Extra reverse-mapping "
				 "record (no file maps it)", g, h);
			differs(t, "extra", msg);
			j++;
		}
	}
	xk_vec_free(&want.vec);
	return 0;
}

struct rtb_edge {
	uint64_t	at;
	int64_t		delta;
};

static int
cmp_edge(const void *a, const void *b)
{
	const struct rtb_edge *x = a, *y = b;

	return (x->at > y->at) - (x->at < y->at);
}

/* Step 4: the shared extents the mappings give, each run of one count. */
int
rtb_refc_want(struct repair_ctx *rc, uint32_t g, struct xk_vec *out)
{
	const struct xk_sb *sb = &rc->mp->sb;
	XK_VEC_OF(struct rtb_edge) e = { 0 };
	struct rt_claim *c = rc->scan.rt_claims;
	uint64_t count = 0, from = 0;
	int err = 0;

	for (size_t k = 0; k < rc->scan.nrt_claims && !err; k++) {
		struct rtb_edge a = { xk_rtb_to_rgbno(sb, c[k].start), 1 };
		struct rtb_edge b = { a.at + c[k].len, -1 };

		if (xk_rtb_to_rgno(sb, c[k].start) != g)
			continue;
		err = xk_vec_push(&e.vec, &a, sizeof(a));
		if (!err)
			err = xk_vec_push(&e.vec, &b, sizeof(b));
	}
	sort_v(e.v, e.n, sizeof(*e.v), cmp_edge);
	for (size_t k = 0; k < e.n && !err; k++) {
		uint64_t at = e.v[k].at;

		if (at > from && count >= 2) {
			struct rtb_rec r = { from, at - from, count, 0 };
			struct rtb_rec *p = out->n ?
				(struct rtb_rec *)out->v + out->n - 1 : NULL;

			if (p && p->start + p->len == from &&
			    p->owner == count)
				p->len += r.len;
			else
				err = xk_vec_push(out, &r, sizeof(r));
		}
		from = at;
		count += e.v[k].delta;
	}
	xk_vec_free(&e.vec);
	return err;
}

static void
refc_say(char *s, size_t size, uint32_t g, const struct rtb_rec *r)
{
	snprintf(s, size, "(%u/%llu) len %llu nlinks %llu", g,
		 (unsigned long long)r->start, (unsigned long long)r->len,
		 (unsigned long long)r->owner);
}

static int
refc_compare(struct repair_ctx *rc, uint32_t g, struct rtb_tree *t,
	     struct xk_vec *out)
{
	XK_VEC_OF(struct rtb_rec) want = { 0 };
	char msg[240], a[80], b[80];
	size_t i = 0, j = 0;
	int err = rtb_refc_want(rc, g, &want.vec);

	t->nwant = want.n;
	if (!err && out)
		err = xk_vec_append(out, want.v, want.n, sizeof(*want.v));
	if (err || out) {
		xk_vec_free(&want.vec);
		return err ? repair_error(rc, err, "counting rtgroup %u's "
					  "shared extents", g) : 0;
	}
	/* Records pairwise, as xfs_repair compares them. */
	while (i < want.n || j < t->recs.n) {
		const struct rtb_rec *w = i < want.n ? &want.v[i] : NULL;
		const struct rtb_rec *h = j < t->recs.n ? &t->recs.v[j] : NULL;

		if (h && h->off) {
			refc_say(a, sizeof(a), g, h);
			snprintf(msg, sizeof(msg), "leftover CoW staging "
				 "extent %s", a);
			differs(t, "cow", msg);
			j++;
			continue;
		}
		if (w && h && w->start == h->start && w->len == h->len &&
		    w->owner == h->owner) {
			i++, j++;
			continue;
		}
		if (w && h) {
			refc_say(a, sizeof(a), g, h);
			refc_say(b, sizeof(b), g, w);
			snprintf(msg, sizeof(msg), "Incorrect reference count: "
				 "saw %s; should be %s", a, b);
		} else if (w) {
			refc_say(b, sizeof(b), g, w);
			snprintf(msg, sizeof(msg), "Missing reference count "
				 "record for %s", b);
		} else {
			refc_say(a, sizeof(a), g, h);
			snprintf(msg, sizeof(msg), "Extra reference count "
				 "record %s (no extent is shared there)", a);
		}
		differs(t, "refcount", msg);
		i += w != NULL;
		j += h != NULL;
	}
	xk_vec_free(&want.vec);
	return 0;
}

/*
 * The walk bounds records by a whole group; the last group may be
 * shorter: a record past its end is named here.
 */
static void
group_bounds(struct repair_ctx *rc, uint32_t g, struct rtb_tree *t)
{
	const struct xk_sb *sb = &rc->mp->sb;
	uint64_t end = xk_rtg_extents(sb, g) * sb->rextsize;
	char msg[160];

	for (size_t i = 0; i < t->recs.n; i++) {
		const struct rtb_rec *r = &t->recs.v[i];

		if (r->start + r->len <= end)
			continue;
		snprintf(msg, sizeof(msg), "record (%u/%llu) len %llu runs "
			 "past the %llu blocks of realtime group %u", g,
			 (unsigned long long)r->start,
			 (unsigned long long)r->len, (unsigned long long)end,
			 g);
		differs(t, "startblock", msg);
	}
}

/* Whether nwant records fit the tree's blocks as they are. */
int
rtb_tree_fits(struct repair_ctx *rc, const struct rtb_tree *t)
{
	uint32_t maxr = xk_btree_maxrecs(t->ops, rc->mp->g.blocksize, 1);

	if (t->root_level == 0)
		return 4 + t->nwant * t->ops->rec_len <= t->fork_size;
	return t->nleaves && t->nwant >= t->nleaves &&
	       t->nwant <= (uint64_t)t->nleaves * maxr;
}

/*
 * Tree ino of group g: read and compared; with out, the records the
 * mappings give appended to it (rtb_rewrite) and nothing reported.
 * *ok: walked whole.
 */
int
rtb_tree_judge(struct repair_ctx *rc, uint32_t g, uint64_t ino, uint16_t metatype,
	   struct rtb_tree *t, struct xk_vec *out, int *ok)
{
	int err = tree_read(rc, g, ino, metatype, t, ok);

	if (!err)
		group_bounds(rc, g, t);
	if (!err && *ok && metatype == XK_METAFILE_RTRMAP)
		err = rmap_compare(rc, g, t, out);
	else if (!err && *ok)
		err = refc_compare(rc, g, t, out);
	return err;
}

/* Records as on disk. */

/* RTFIX_BTREES for tree ino: rewritten when it differs, else kept. */

