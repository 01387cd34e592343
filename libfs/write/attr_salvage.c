// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Salvaging the attributes of a damaged attr fork, entry by entry
 * (build_attr.h, xk_attr_list_salvage), for repair to write the fork
 * anew with what is intact.  Nothing above an entry is trusted: not a
 * short form's size or count beyond what the entries confirm, not a
 * leaf's count, used bytes, first-used offset or free map, not the
 * dabtree nodes (every attr leaf mapped by the fork is read, found by
 * its magic, and kept when its header names this inode, its own address
 * and this filesystem).  What vouches for a leaf entry is its own
 * consistency: a name record inside the block and above the entry table,
 * known flags, a hash equal to its name's (a chance of 2^-32 for
 * garbage), a value that the layout code accepts, and a remote value
 * whose blocks pass their verifier and add up.
 *
 * Past a leaf's count the entry table goes on while entries verify: the
 * kernel zeroes a slot it frees, so a verifying entry there is one a
 * damaged count left out.  A short form has no hash: its entries are
 * walked from the start, and its size field, when an entry ends exactly
 * at it, says how many there are; otherwise its count does.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <xfskit/build_attr.h>
#include <xfskit/format/attr.h>

#include "attr_fmt.h"
#include "attr_read.h"
#include "write_priv.h"

#define LEAF_HDR	sizeof(struct xk_attr3_leaf_hdr)
#define LEAF_FLAGS	(XK_ATTR_LOCAL | XK_ATTR_NSP_ONDISK_MASK | \
			 XK_ATTR_INCOMPLETE)

/* Where a kept attribute came from, for reporting a duplicate. */
struct origin {
	uint64_t	lblk;
	uint32_t	index;
};

/* A remote value's blocks: they are no stray blocks. */
struct rmt_range {
	uint64_t	blk;
	uint32_t	len;
};

struct salv {
	struct aread	ar;
	xk_attr_drop_fn	fn;
	void		*ctx;
	/* One per l->xa entry; spills with the list. */
	XK_VEC_OF(struct origin) org;
	struct rmt_range *rmt;
	uint64_t	nrmt, rmt_cap;
	uint64_t	*stray;		/* blocks of no known kind */
	uint64_t	nstray, stray_cap;
};

static void
drop(struct salv *s, uint64_t lblk, uint32_t index, uint8_t flags,
     const uint8_t *name, uint8_t namelen, const char *why)
{
	const struct xk_attr_dropped d = {
		.lblk = lblk, .index = index,
		.flags = flags & XK_ATTR_NSP_ONDISK_MASK,
		.namelen = name ? namelen : 0, .name = name, .why = why,
	};

	if (s->fn)
		s->fn(s->ctx, &d);
}

/*
 * Keep x (from lblk, entry index) unless the layout code would refuse
 * it; returns 0 or -ENOMEM.
 */
static int
keep(struct salv *s, const struct xk_bld_xattr *x, uint64_t lblk,
     uint32_t index)
{
	struct xk_attr_list *l = s->ar.l;
	int err;

	if (attr_xattr_check(x)) {
		drop(s, lblk, index, x->flags, x->name, x->namelen,
		     "its name, namespace or value breaks the format's "
		     "rules");
		return 0;
	}
	err = xk_attr_list_add(l, x->flags, x->name, x->namelen, x->value,
			       x->valuelen);
	if (err)
		return err;
	/* The list's last entry comes off again if its origin cannot stay. */
	err = xk_vec_push(&s->org.vec, &(struct origin){ lblk, index },
			  sizeof(struct origin));
	if (err)
		l->n--;
	return err;
}

/* ---- short form ---- */

static int
salvage_sf(struct salv *s, const struct xk_dinode *dip)
{
	const uint8_t *base = xk_dfork_aptr(dip);
	unsigned int asize = xk_dfork_asize(dip, s->ar.mp->g.inodesize);
	const struct xk_attr_sf_hdr *h = (const void *)base;
	unsigned int tot, bound, off, n = 0, nkeep, *offs;
	const char *stop = "the entry before it cannot be parsed";
	int landed = 0, err = 0;

	if (asize < sizeof(*h))
		return 0;
	tot = xk_be16_get(h->totsize);
	bound = tot >= sizeof(*h) && tot <= asize ? tot : asize;
	offs = malloc((asize / sizeof(struct xk_attr_sf_entry) + 1) *
		      sizeof(*offs));
	if (!offs)
		return -ENOMEM;
	/* The entries that parse, in order, up to where the size says. */
	for (off = sizeof(*h); off + sizeof(struct xk_attr_sf_entry) <= bound;) {
		const struct xk_attr_sf_entry *e = (const void *)(base + off);

		if (e->namelen == 0) {
			stop = "its name is empty";
			break;
		}
		if (off + xk_attr_sf_entsize(e) > bound) {
			stop = "it runs past the end of the short form";
			break;
		}
		offs[n++] = off;
		off += xk_attr_sf_entsize(e);
		if (off == tot) {
			landed = 1;
			break;
		}
	}
	/* An entry ending at the size confirms it; else trust the count. */
	nkeep = landed || n < h->count ? n : h->count;
	for (unsigned int i = 0; i < nkeep && !err; i++) {
		const struct xk_attr_sf_entry *e =
			(const void *)(base + offs[i]);
		struct xk_bld_xattr x = {
			.flags = e->flags, .name = e->nameval,
			.namelen = e->namelen,
			.value = e->valuelen ? e->nameval + e->namelen : NULL,
			.valuelen = e->valuelen,
		};

		if (e->flags & ~XK_ATTR_NSP_ONDISK_MASK)
			drop(s, XK_ATTR_SALVAGE_SF, i, e->flags, e->nameval,
			     e->namelen, "it has unknown flag bits");
		else
			err = keep(s, &x, XK_ATTR_SALVAGE_SF, i);
	}
	for (unsigned int i = nkeep; i < h->count && !landed; i++)
		drop(s, XK_ATTR_SALVAGE_SF, i, 0, NULL, 0, stop);
	free(offs);
	return err;
}

/* ---- leaf and node forks ---- */

static int
note_rmt(struct salv *s, uint32_t blk, uint32_t valuelen)
{
	int err = bld_grow((void **)&s->rmt, &s->rmt_cap, s->nrmt + 1,
		       sizeof(*s->rmt));

	if (err)
		return err;
	s->rmt[s->nrmt++] = (struct rmt_range){
		blk, xk_attr3_rmt_blocks(s->ar.bs, valuelen) };
	return 0;
}

static int
zero_slot(const struct xk_attr_leaf_entry *e)
{
	static const struct xk_attr_leaf_entry z;

	return !memcmp(e, &z, sizeof(z));
}

/*
 * Entry i of leaf d whose table reaches tab_end: NULL and x filled (a
 * remote value read into *val, to free) when it is intact, else why.
 * *err: memory or I/O.
 */
static const char *
leaf_entry_as(struct salv *s, const uint8_t *d, uint32_t i, uint32_t tab_end,
	      int local, struct xk_bld_xattr *x, uint8_t **val, int *err)
{
	const struct xk_attr_leaf_entry *e =
		&xk_attr3_leaf_entryp((const void *)d)[i];
	uint32_t bs = s->ar.bs, idx = xk_be16_get(e->nameidx), hash;

	memset(x, 0, sizeof(*x));
	x->flags = e->flags & XK_ATTR_NSP_ONDISK_MASK;
	if (e->flags & ~LEAF_FLAGS)
		return "it has unknown flag bits";
	if (idx < tab_end)
		return "its name record overlaps the entry table";
	if (local) {
		const struct xk_attr_leaf_name_local *n =
			(const void *)(d + idx);

		if (idx + 3u > bs || idx + 3u + n->namelen +
		    xk_be16_get(n->valuelen) > bs)
			return "its name record runs past the block";
		x->name = n->nameval;
		x->namelen = n->namelen;
		x->valuelen = xk_be16_get(n->valuelen);
		x->value = x->valuelen ? n->nameval + n->namelen : NULL;
	} else {
		const struct xk_attr_leaf_name_remote *n =
			(const void *)(d + idx);

		if (idx + 9u > bs || idx + 9u + n->namelen > bs)
			return "its name record runs past the block";
		x->name = n->name;
		x->namelen = n->namelen;
		x->valuelen = xk_be32_get(n->valuelen);
		if (x->flags & XK_ATTR_PARENT)
			return "a parent pointer with a remote value";
	}
	if (x->namelen == 0)
		return "its name is empty";
	if (x->flags == XK_ATTR_PARENT &&
	    x->valuelen == sizeof(struct xk_parent_rec))
		hash = xk_pptr_hashname(x->name, x->namelen,
					xk_get_be64(x->value));
	else
		hash = xk_da_hashname(x->name, x->namelen);
	if (hash != xk_be32_get(e->hashval))
		return "its hash is not its name's";
	if (x->valuelen > XK_XATTR_SIZE_MAX)
		return "its value is longer than 64 KiB";
	if (!local) {
		const struct xk_attr_leaf_name_remote *n =
			(const void *)(d + idx);
		uint32_t vb = xk_be32_get(n->valueblk);

		*err = note_rmt(s, vb, x->valuelen);
		*val = *err ? NULL : malloc(x->valuelen ? x->valuelen : 1);
		if (!*val) {
			*err = -ENOMEM;
			return "no memory";
		}
		s->ar.why = NULL;
		*err = read_rmt(&s->ar, vb, x->valuelen, *val);
		if (*err && !xk_err_operational(*err)) {
			*err = 0;
			return s->ar.why ? s->ar.why :
			       "its remote value cannot be read";
		}
		x->value = x->valuelen ? *val : NULL;
	}
	return NULL;
}

/*
 * Entry i as its flags say, else with its local flag flipped (a flipped
 * bit the name's hash and the record's bounds then vouch for).
 */
static const char *
leaf_entry(struct salv *s, const uint8_t *d, uint32_t i, uint32_t tab_end,
	   struct xk_bld_xattr *x, uint8_t **val, int *err)
{
	int local = xk_attr3_leaf_entryp((const void *)d)[i].flags &
		    XK_ATTR_LOCAL;
	struct xk_bld_xattr alt;
	uint8_t *altval = NULL;
	const char *why = leaf_entry_as(s, d, i, tab_end, local, x, val, err);

	if (!why || *err ||
	    leaf_entry_as(s, d, i, tab_end, !local, &alt, &altval, err)) {
		free(altval);
		return why;
	}
	free(*val);
	*val = altval;
	*x = alt;
	return NULL;
}

/* Whether slots i..count-1 below the name records are all zero. */
static int
rest_zero(const struct xk_attr_leaf_entry *ents, uint32_t i, uint32_t count,
	  uint32_t lowest)
{
	for (; i < count &&
	     LEAF_HDR + (i + 1) * sizeof(*ents) <= lowest; i++)
		if (!zero_slot(&ents[i]))
			return 0;
	return 1;
}

/*
 * One attr leaf (block lblk, bytes d): its table entry by entry, past
 * its count while the entries verify.
 */
static int
salvage_leaf(struct salv *s, uint64_t lblk, const uint8_t *d)
{
	const struct xk_attr3_leaf_hdr *h = (const void *)d;
	const struct xk_attr_leaf_entry *ents = xk_attr3_leaf_entryp(h);
	uint32_t count = xk_be16_get(h->count), lowest = s->ar.bs;
	uint32_t slots = (s->ar.bs - LEAF_HDR) / sizeof(*ents);
	int err = 0;

	for (uint32_t i = 0; i < slots && !err; i++) {
		uint32_t tab_end = LEAF_HDR + (i + 1) * sizeof(*ents);
		int past = i >= count;
		struct xk_bld_xattr x = { 0 };
		uint8_t *val = NULL;
		const char *why;

		/* The table cannot reach into names that verified. */
		if (tab_end > lowest)
			break;
		if (zero_slot(&ents[i])) {
			/* Past the last entry, even where the count says. */
			if (past || rest_zero(ents, i, count, lowest))
				break;
			drop(s, lblk, i, 0, NULL, 0, "its entry is zeroed");
			continue;
		}
		why = leaf_entry(s, d, i, tab_end, &x, &val, &err);
		if (err) {
			free(val);
			break;
		}
		if (why && past) {
			free(val);
			break;
		}
		if (why)
			drop(s, lblk, i, ents[i].flags, x.namelen ? x.name :
			     NULL, x.namelen, why);
		else if (ents[i].flags & XK_ATTR_INCOMPLETE) {
			/* The kernel's recovery removes these too. */
			if (!past)
				drop(s, lblk, i, ents[i].flags, x.name,
				     x.namelen, "it was being set or removed "
				     "(incomplete)");
		} else {
			err = keep(s, &x, lblk, i);
			if (xk_be16_get(ents[i].nameidx) < lowest)
				lowest = xk_be16_get(ents[i].nameidx);
		}
		free(val);
	}
	return err;
}

/*
 * Whether an attr leaf is this fork's by its header: owner, address and
 * filesystem.  A fork whose map went wrong reaches other inodes' leaves,
 * whose entries verify just as well (their hashes are their names').
 */
static int
leaf_is_ours(const struct salv *s, const struct xk_buf *bp)
{
	const struct xk_da3_blkinfo *h = (const void *)bp->data;

	return xk_be64_get(h->owner) == s->ar.ino &&
	       xk_be64_get(h->blkno) == bp->daddr &&
	       !memcmp(h->uuid, s->ar.mp->meta_uuid, sizeof(h->uuid));
}

static int
salvage_blocks(struct salv *s)
{
	const struct afork *af = s->ar.af;
	int err = 0;

	for (uint64_t k = 0; k < af->next && !err; k++) {
		for (uint64_t b = 0; b < af->ext[k].len && !err; b++) {
			uint64_t lblk = af->ext[k].loff + b;
			struct xk_buf *bp;

			err = ar_read(&s->ar, lblk, NULL, &bp);
			if (err)
				break;
			if (xk_get_be16(bp->data + 8) == XK_ATTR3_LEAF_MAGIC &&
			    !leaf_is_ours(s, bp))
				drop(s, lblk, XK_ATTR_SALVAGE_BLOCK, 0, NULL, 0,
				     "the attr leaf there belongs to another "
				     "inode or place");
			else if (xk_get_be16(bp->data + 8) ==
				 XK_ATTR3_LEAF_MAGIC)
				err = salvage_leaf(s, lblk, bp->data);
			else if (xk_get_be16(bp->data + 8) !=
				 XK_DA3_NODE_MAGIC &&
				 xk_get_be32(bp->data) != XK_ATTR3_RMT_MAGIC &&
				 !bld_grow((void **)&s->stray, &s->stray_cap,
				       s->nstray + 1, sizeof(*s->stray)))
				s->stray[s->nstray++] = lblk;
			xk_buf_release(bp);
		}
	}
	/* A block of no known kind that no value covers: lost content. */
	for (uint64_t i = 0; i < s->nstray && !err; i++) {
		uint64_t r;

		for (r = 0; r < s->nrmt; r++)
			if (s->stray[i] >= s->rmt[r].blk &&
			    s->stray[i] < s->rmt[r].blk + s->rmt[r].len)
				break;
		if (r == s->nrmt)
			drop(s, s->stray[i], XK_ATTR_SALVAGE_BLOCK, 0, NULL,
			     0, "the block is no attr leaf, node or remote "
			     "value: whatever it held is lost");
	}
	return err;
}

/* ---- duplicates ---- */

struct named {
	const struct xk_bld_xattr *x;
	size_t		i;		/* its place in the list */
};

static int
cmp_named(const void *a, const void *b)
{
	const struct named *p = a, *q = b;
	const struct xk_bld_xattr *x = p->x, *y = q->x;
	int c;

	if (x->flags != y->flags)
		return x->flags < y->flags ? -1 : 1;
	if (x->namelen != y->namelen)
		return x->namelen < y->namelen ? -1 : 1;
	c = memcmp(x->name, y->name, x->namelen);
	/* Parent pointers: one name may be in two directories. */
	if (!c && x->flags == XK_ATTR_PARENT) {
		if (x->valuelen != y->valuelen)
			return x->valuelen < y->valuelen ? -1 : 1;
		c = memcmp(x->value, y->value, x->valuelen);
	}
	if (c)
		return c;
	return (p->i > q->i) - (p->i < q->i);
}

/*
 * A name kept twice (say, a leaf left behind by a split): the first.
 * The sort's index and the marks spill with the list.
 */
static int
drop_duplicates(struct salv *s)
{
	struct xk_attr_list *l = s->ar.l;
	XK_VEC_OF(struct named) v = { .vec = { .spill = l->vec.spill } };
	XK_VEC_OF(uint8_t) gone = { .vec = { .spill = l->vec.spill } };
	size_t out = 0;
	int err = xk_vec_reserve(&v.vec, l->n, sizeof(*v.v));

	if (!err)
		err = xk_vec_reserve(&gone.vec, l->n, 1);
	if (err)
		goto out;
	for (size_t i = 0; i < l->n; i++) {
		v.v[i] = (struct named){ &l->xa[i], i };
		gone.v[i] = 0;
	}
	v.n = gone.n = l->n;
	xk_vec_sort(&v.vec, sizeof(*v.v), cmp_named);
	for (size_t i = 1, k = 0; i < l->n; i++) {
		if (attr_same_name(v.v[k].x, v.v[i].x))
			gone.v[v.v[i].i] = 1;
		else
			k = i;
	}
	for (size_t i = 0; i < l->n; i++) {
		if (!gone.v[i]) {
			s->org.v[out] = s->org.v[i];
			l->xa[out++] = l->xa[i];
			continue;
		}
		drop(s, s->org.v[i].lblk, s->org.v[i].index, l->xa[i].flags,
		     l->xa[i].name, l->xa[i].namelen, "another entry has "
		     "the same name");
	}
	l->n = out;
	s->org.n = out;
out:
	xk_vec_free(&v.vec);
	xk_vec_free(&gone.vec);
	return err;
}

int
xk_attr_list_salvage(struct xk_mount *mp, uint64_t ino,
		     const struct xk_dinode *dip, struct xk_attr_list *l,
		     xk_attr_drop_fn fn, void *ctx, const char **why)
{
	struct afork af;
	struct salv s = {
		.ar = { .mp = mp, .ino = ino, .af = &af, .l = l,
			.bs = mp->g.blocksize },
		.fn = fn, .ctx = ctx,
	};
	int err = 0;

	s.org.vec.spill = l->vec.spill;

	*why = NULL;
	memset(&af, 0, sizeof(af));
	if (!dip->di_forkoff)
		return 0;
	switch (dip->di_aformat) {
	case XK_DINODE_FMT_LOCAL:
		err = salvage_sf(&s, dip);
		break;
	case XK_DINODE_FMT_EXTENTS:
	case XK_DINODE_FMT_BTREE:
		err = af_load(mp, ino, dip, &af);
		if (err)
			*why = af.why;
		else
			err = salvage_blocks(&s);
		break;
	default:
		*why = "its attr fork has an unknown format";
		err = XK_ECORRUPT;
		break;
	}
	if (!err)
		err = drop_duplicates(&s);
	if (err == -ENOMEM && !*why)
		*why = "no memory";
	af_free(&af);
	xk_vec_free(&s.org.vec);
	free(s.rmt);
	free(s.stray);
	return err;
}
