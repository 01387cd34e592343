// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The realtime groups' rmap and refcount btrees: metadata files
 * /rtgroups/N.rmap and N.refcount whose data fork holds the root
 * (XK_DINODE_FMT_META_BTREE), blocks 'MAPR' and 'RCNT' on the data
 * device, records with group-relative realtime block numbers.
 *  1. rtb_fork_blocks, as the inodes are read: each tree's blocks are
 *     the inode's (claimed with the bmbt-block owner, as xfs_repair's
 *     rmap has them) and count in its di_nblocks;
 *  2. rtb_check_group, in the realtime phase: the inode (metafile type,
 *     fork format), then every block through libfs's btree walker
 *     (header: magic, CRC, UUID, owner, level, siblings; key and record
 *     order; each record inside the group);
 *  3. the rmap records against the realtime files' mappings (the
 *     claims) and the realtime superblock's extent: a mapping without a
 *     record is missing (xfs_repair's words), a record without a mapping
 *     is extra;
 *  4. the refcount records against the extents the mappings share, and
 *     every file with an extent in them carries the reflink flag.
 * The bitmap is checked against the same mappings (rtgroup_check.c), so
 * bitmap and rmap agree when both pass.  Every finding refuses the
 * repair: the trees are not rebuilt.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <xfskit/btree.h>
#include <xfskit/format/rtgroup.h>

#include "rt.h"

/* An rmap record (owner, offset with flags) or refcount record (owner:
 * the count, off: 1 for a CoW staging extent), group-relative. */
struct rtb_rec {
	uint64_t	start, len, owner, off;
};

static const struct xk_btree_ops *
rtb_ops(uint16_t metatype)
{
	if (metatype == XK_METAFILE_RTRMAP)
		return &xk_rtrmapbt_ops;
	if (metatype == XK_METAFILE_RTREFCOUNT)
		return &xk_rtrefcountbt_ops;
	return NULL;
}

struct claim_ctx {
	struct repair_ctx	*rc;
	uint64_t		ino, n;
};

static int
claim_block(void *ctx, unsigned int level, uint64_t bno, struct xk_buf *bp)
{
	struct claim_ctx *c = ctx;

	(void)level;
	/* A block that is not this tree's may be anyone's: not claimed. */
	if (bp->error && bp->error != XK_EBADCRC)
		return 0;
	claim_fsb(c->rc, bno, 1, c->ino, XK_RMAP_OFF_BMBT_BLOCK);
	c->n++;
	return c->rc->found.error;
}

static void
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

int
rtb_fork_blocks(struct repair_ctx *rc, uint64_t ino,
		const struct xk_dinode *dip, uint64_t *nblocks)
{
	const struct xk_btree_ops *ops = rtb_ops(xk_be16_get(dip->di_onlink));
	struct claim_ctx c = { rc, ino, 0 };
	struct xk_btree_walk w;
	int err;

	*nblocks = 0;
	if (!ops)
		return 0;
	rtb_walk_init(&w, rc->mp, ino, dip, ops);
	if (w.levels < 1)
		return 0;	/* rtb_check_group reports it */
	w.ctx = &c;
	w.block_fn = claim_block;
	err = xk_btree_walk(rc->mp, &w);
	*nblocks = c.n;
	if (rc->found.error)
		return rc->found.error;
	if (err < 0 && err != XK_ECORRUPT)
		return repair_error(rc, err, "reading the realtime btree of "
				    "inode %llu", (unsigned long long)ino);
	return 0;
}

/* One tree's check: its records gathered, its problems reported. */
struct tree_check {
	struct repair_ctx	*rc;
	const struct xk_btree_ops *ops;
	XK_VEC_OF(struct rtb_rec) recs;
	unsigned int		nfound;
	unsigned int		nhard;	/* of them, ones that lose records */
};

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
	struct tree_check *t = ctx;

	t->nfound++;
	t->nhard += !soft_check(f->check);
	fix_problem(t->rc, PR_RT_BTREE, f);
	rtg_refuse(t->rc);
}

static int
tree_rec(void *ctx, const void *rec)
{
	struct tree_check *t = ctx;
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

static void
finding(struct repair_ctx *rc, uint64_t ino, const char *check,
	const char *msg)
{
	report(rc, PR_RT_BTREE, "realtime btree", -1, ino, XK_NO_DADDR,
	       check, "%s", msg);
	rtg_refuse(rc);
}

/*
 * Read the tree of inode ino (a metadata file of metatype): the inode's
 * own checks, then the walk gathering t->recs.  *ok is 0 when the tree
 * was not walked whole (its records are then not compared).
 */
static int
tree_read(struct repair_ctx *rc, uint32_t g, uint64_t ino, uint16_t metatype,
	  struct tree_check *t, int *ok)
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
	if (err) {
		/* The inode phase reported the inode itself. */
		rtg_refuse(rc);
		return 0;
	}
	if (xk_be16_get(dip->di_onlink) != metatype ||
	    !(xk_be64_get(dip->di_flags2) & XK_DIFLAG2_METADATA)) {
		snprintf(msg, sizeof(msg), "rtgroup %u %s inode %llu has "
			 "metafile type %u", g, name, (unsigned long long)ino,
			 xk_be16_get(dip->di_onlink));
		finding(rc, ino, "metatype", msg);
	} else if (dip->di_format != XK_DINODE_FMT_META_BTREE) {
		snprintf(msg, sizeof(msg), "rtgroup %u %s inode %llu has data "
			 "fork format %u, not a metadata btree", g, name,
			 (unsigned long long)ino, dip->di_format);
		finding(rc, ino, "format", msg);
	} else {
		rtb_walk_init(&w, rc->mp, ino, dip, rtb_ops(metatype));
		w.ctx = t;
		w.rec_fn = tree_rec;
		w.fail_fn = tree_fail;
		err = xk_btree_walk(rc->mp, &w);
		if (err == XK_ECORRUPT && !t->nfound)
			finding(rc, ino, "btree", "the btree cannot be walked");
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
rmap_compare(struct repair_ctx *rc, uint32_t g, uint64_t ino,
	     struct tree_check *t)
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
			finding(rc, ino, "missing", msg);
			i++;
		}
		if (d >= 0) {
			rmap_say(msg, sizeof(msg), "Extra reverse-mapping "
				 "record (no file maps it)", g, h);
			finding(rc, ino, "extra", msg);
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
static int
refc_want(struct repair_ctx *rc, uint32_t g, struct xk_vec *out)
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
refc_compare(struct repair_ctx *rc, uint32_t g, uint64_t ino,
	     struct tree_check *t)
{
	XK_VEC_OF(struct rtb_rec) want = { 0 };
	char msg[240], a[80], b[80];
	size_t i = 0, j = 0;
	int err = refc_want(rc, g, &want.vec);

	if (err) {
		xk_vec_free(&want.vec);
		return repair_error(rc, err, "counting rtgroup %u's shared "
				    "extents", g);
	}
	/* Records pairwise, as xfs_repair compares them. */
	while (i < want.n || j < t->recs.n) {
		const struct rtb_rec *w = i < want.n ? &want.v[i] : NULL;
		const struct rtb_rec *h = j < t->recs.n ? &t->recs.v[j] : NULL;

		if (h && h->off) {
			refc_say(a, sizeof(a), g, h);
			snprintf(msg, sizeof(msg), "leftover CoW staging "
				 "extent %s", a);
			finding(rc, ino, "cow", msg);
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
		finding(rc, ino, "refcount", msg);
		i += w != NULL;
		j += h != NULL;
	}
	xk_vec_free(&want.vec);
	return 0;
}

static int
cmp_u64(const void *a, const void *b)
{
	const uint64_t *x = a, *y = b;

	return (*x > *y) - (*x < *y);
}

/*
 * Every file with an extent in a shared run of group g carries the
 * reflink flag (xfs_repair sets it: "setting reflink flag on inode").
 */
static int
reflink_flags(struct repair_ctx *rc, uint32_t g)
{
	const struct xk_sb *sb = &rc->mp->sb;
	XK_VEC_OF(struct rtb_rec) want = { 0 };
	XK_VEC_OF(uint64_t) inos = { 0 };
	struct rt_claim *c = rc->scan.rt_claims;
	int err = refc_want(rc, g, &want.vec);

	/* Both in block order: one pass finds the claims in shared runs. */
	for (size_t k = 0, w = 0; k < rc->scan.nrt_claims && !err; k++) {
		uint64_t s = xk_rtb_to_rgbno(sb, c[k].start);

		if (xk_rtb_to_rgno(sb, c[k].start) != g)
			continue;
		while (w < want.n && want.v[w].start + want.v[w].len <= s)
			w++;
		if (w < want.n && want.v[w].start < s + c[k].len)
			err = xk_vec_push(&inos.vec, &c[k].ino,
					  sizeof(c[k].ino));
	}
	sort_v(inos.v, inos.n, sizeof(*inos.v), cmp_u64);
	for (size_t k = 0; k < inos.n && !err; k++) {
		struct xk_dinode *dip;
		struct xk_buf *bp;

		if (k && inos.v[k] == inos.v[k - 1])
			continue;
		err = xk_inode_read(rc->mp, inos.v[k], 0, &bp, &dip);
		if (err) {
			/* The inode phase judged an unreadable inode. */
			err = xk_err_operational(err) ? err : 0;
			continue;
		}
		if (!(xk_be64_get(dip->di_flags2) & XK_DIFLAG2_REFLINK)) {
			char msg[80];

			snprintf(msg, sizeof(msg), "setting reflink flag on "
				 "inode %llu", (unsigned long long)inos.v[k]);
			finding(rc, inos.v[k], "reflink", msg);
		}
		xk_buf_release(bp);
	}
	xk_vec_free(&want.vec);
	xk_vec_free(&inos.vec);
	return err ? repair_error(rc, err, "checking the reflink flags of "
				  "rtgroup %u's files", g) : 0;
}

/*
 * The walk bounds records by a whole group; the last group may be
 * shorter: a record past its end is named here.
 */
static void
group_bounds(struct repair_ctx *rc, uint32_t g, uint64_t ino,
	     const struct tree_check *t)
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
		finding(rc, ino, "startblock", msg);
	}
}

static int
check_tree(struct repair_ctx *rc, uint32_t g, uint64_t ino, uint16_t metatype)
{
	struct tree_check t = { rc, rtb_ops(metatype), { { 0 } }, 0, 0 };
	int ok, err = tree_read(rc, g, ino, metatype, &t, &ok);

	if (!err)
		group_bounds(rc, g, ino, &t);

	if (!err && ok && metatype == XK_METAFILE_RTRMAP)
		err = rmap_compare(rc, g, ino, &t);
	else if (!err && ok)
		err = refc_compare(rc, g, ino, &t);
	xk_vec_free(&t.recs.vec);
	return err;
}

void
rtb_guard(struct repair_ctx *rc)
{
	const struct xk_sb *sb = &rc->mp->sb;

	if (rc->opt.no_modify || !rc->found.nproblems || !sb->rblocks ||
	    !xk_sb_has_rtgroups(sb) ||
	    !(xk_sb_has_ro_compat(sb, XK_SB_FEAT_RO_COMPAT_RMAPBT) ||
	      xk_sb_has_ro_compat(sb, XK_SB_FEAT_RO_COMPAT_REFLINK)))
		return;
	plan_none(rc);
	rc->plan.meta_refuse = 1;
	rc->plan.rtb_refuse = 1;
}

int
rtb_check_group(struct repair_ctx *rc, const struct rtg_names *n, uint32_t g)
{
	const struct xk_sb *sb = &rc->mp->sb;
	static const struct {
		uint32_t	feature;
		uint16_t	metatype;
		const char	*name;
	} trees[] = {
		{ XK_SB_FEAT_RO_COMPAT_RMAPBT, XK_METAFILE_RTRMAP, "rmap" },
		{ XK_SB_FEAT_RO_COMPAT_REFLINK, XK_METAFILE_RTREFCOUNT,
		  "refcount" },
	};
	int err = 0;

	for (size_t i = 0; i < 2 && !err; i++) {
		uint64_t ino = i ? n->refcount[g] : n->rmap[g];
		char msg[80];

		if (!xk_sb_has_ro_compat(sb, trees[i].feature))
			continue;
		if (!ino) {
			snprintf(msg, sizeof(msg), "/rtgroups has no %u.%s", g,
				 trees[i].name);
			finding(rc, n->dir, "rtgroups", msg);
			continue;
		}
		err = check_tree(rc, g, ino, trees[i].metatype);
		if (!err && trees[i].metatype == XK_METAFILE_RTREFCOUNT)
			err = reflink_flags(rc, g);
	}
	return err;
}
