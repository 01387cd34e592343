// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Freeing the space a grown AG gains into its bnobt and cntbt in place,
 * or taking the free tail of a shrunk AG out of them, the way the
 * kernel's extent free and exact allocation change them when no block
 * splits, joins or borrows: records move inside their leaves and a node key
 * changes only where a leaf's first record did.  Anything that would
 * change the trees' shape is refused (rules in grow_priv.h).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <xfskit/btree.h>
#include <xfskit/format/btree.h>
#include <xfskit/mount.h>

#include "grow_priv.h"

/* A root-to-leaf path: bp[0] is the leaf, idx[l] the slot at level l. */
struct path {
	struct xk_buf	*bp[XK_BTREE_MAXLEVELS];
	uint32_t	idx[XK_BTREE_MAXLEVELS];
	unsigned int	levels;
};

static void
rec_key(const struct xk_btree_ops *ops, uint32_t start, uint32_t len,
	struct xk_bkey *k)
{
	struct xk_alloc_rec r;
	struct xk_bkey hi;

	xk_be32_set(&r.ar_startblock, start);
	xk_be32_set(&r.ar_blockcount, len);
	ops->rec_keys(&r, k, &hi);
}

/* Hold bp until written; the same block may be touched twice. */
static int
touch(struct grow_freesp *fs, struct xk_buf *bp)
{
	for (unsigned int i = 0; i < fs->ntouched; i++)
		if (fs->touched[i] == bp) {
			xk_buf_release(bp);
			return 0;
		}
	if (fs->ntouched == GROW_FREESP_MAX_TOUCHED) {
		xk_buf_release(bp);
		return -E2BIG;
	}
	fs->changed[fs->ntouched] = 0;
	fs->touched[fs->ntouched++] = bp;
	return 0;
}

/* bp (held) was edited. */
static void
changed(struct grow_freesp *fs, const struct xk_buf *bp)
{
	for (unsigned int i = 0; i < fs->ntouched; i++)
		if (fs->touched[i] == bp)
			fs->changed[i] = 1;
}

/*
 * Descend to the leaf where key belongs: in a node the last key not
 * above it (the first when all are), in the leaf the slot after the
 * last record not above it.  Blocks are read through their verifier and
 * held in fs->touched (released only at the end).
 */
static int
descend(struct grow_freesp *fs, const struct xk_btree_ops *ops,
	uint32_t root, uint32_t levels, const struct xk_bkey *key,
	struct path *p)
{
	struct xk_mount *mp = fs->mp;
	uint32_t bno = root, nmax = xk_btree_maxrecs(ops, mp->g.blocksize, 0);

	if (levels < 1 || levels > XK_BTREE_MAXLEVELS)
		return XK_ECORRUPT;
	p->levels = levels;
	for (int l = (int)levels - 1; l >= 0; l--) {
		struct xk_buf *bp;
		uint32_t n, i;
		int err;

		err = xk_buf_read_ctx(mp, xk_agb_to_daddr(mp, fs->agno, bno),
				      mp->g.blocksize, ops->buf_ops, fs->agno,
				      0, 0, &bp);
		if (err)
			return err;
		err = touch(fs, bp);
		if (err)
			return err;
		if (xk_btree_block_level(bp->data) != (uint16_t)l)
			return XK_ECORRUPT;
		n = xk_btree_block_numrecs(bp->data);
		p->bp[l] = bp;
		for (i = 0; i < n; i++) {
			struct xk_bkey k, hi;

			if (l)
				ops->key_decode(xk_btree_key(ops, bp->data, i),
						&k);
			else
				ops->rec_keys(xk_btree_rec(ops, bp->data, i),
					      &k, &hi);
			if (xk_bkey_cmp(&k, key) > 0)
				break;
		}
		if (l == 0) {
			p->idx[0] = i;
			break;
		}
		if (n == 0)
			return XK_ECORRUPT;
		p->idx[l] = i ? i - 1 : 0;
		bno = xk_be32_get(*(xk_be32 *)xk_btree_ptr(ops, bp->data, nmax,
							  p->idx[l]));
	}
	return 0;
}

static void
set_numrecs(struct xk_buf *bp, uint32_t n)
{
	xk_be16_set(&((struct xk_btree_sblock *)bp->data)->bb_numrecs,
		    (uint16_t)n);
}

/* A leaf's first record changed: its key up the path, while first. */
static void
update_keys(struct grow_freesp *fs, const struct xk_btree_ops *ops,
	    const struct path *p)
{
	const void *first = xk_btree_rec(ops, p->bp[0]->data, 0);

	for (unsigned int l = 1; l < p->levels; l++) {
		/* Alloc btree keys are laid out as their records. */
		memcpy(xk_btree_key(ops, p->bp[l]->data, p->idx[l]), first,
		       ops->key_len);
		changed(fs, p->bp[l]);
		if (p->idx[l] != 0)
			break;
	}
}

static int
refuse(const struct grow_freesp *fs, const struct xk_btree_ops *ops,
       const char *what, char *msg, size_t msglen)
{
	snprintf(msg, msglen, "%s AG %u would %s a %s leaf, which is not "
		 "supported yet", fs->doing ? fs->doing :
		 "freeing the new space of", fs->agno, what, ops->name);
	return -EOPNOTSUPP;
}

/* The leaf where record (start, len) is or belongs; *n its records. */
static int
find_leaf(struct grow_freesp *fs, const struct xk_btree_ops *ops,
	  uint32_t root, uint32_t levels, uint32_t start, uint32_t len,
	  struct path *p, uint32_t *n)
{
	struct xk_bkey key;
	int err;

	rec_key(ops, start, len, &key);
	err = descend(fs, ops, root, levels, &key, p);
	if (!err)
		*n = xk_btree_block_numrecs(p->bp[0]->data);
	return err;
}

static int
leaf_insert(struct grow_freesp *fs, const struct xk_btree_ops *ops,
	    uint32_t root, uint32_t levels, uint32_t start, uint32_t len,
	    char *msg, size_t msglen)
{
	uint32_t lmax = xk_btree_maxrecs(ops, fs->mp->g.blocksize, 1), n;
	struct xk_alloc_rec *r;
	struct path p;
	uint8_t *leaf;
	int err = find_leaf(fs, ops, root, levels, start, len, &p, &n);

	if (err)
		return err;
	leaf = p.bp[0]->data;
	if (n >= lmax)
		return refuse(fs, ops, "split (or shift into a sibling)", msg,
			      msglen);
	memmove(xk_btree_rec(ops, leaf, p.idx[0] + 1),
		xk_btree_rec(ops, leaf, p.idx[0]),
		(n - p.idx[0]) * ops->rec_len);
	r = xk_btree_rec(ops, leaf, p.idx[0]);
	xk_be32_set(&r->ar_startblock, start);
	xk_be32_set(&r->ar_blockcount, len);
	set_numrecs(p.bp[0], n + 1);
	changed(fs, p.bp[0]);
	if (p.idx[0] == 0)
		update_keys(fs, ops, &p);
	return 0;
}

static int
leaf_delete(struct grow_freesp *fs, const struct xk_btree_ops *ops,
	    uint32_t root, uint32_t levels, uint32_t start, uint32_t len,
	    char *msg, size_t msglen)
{
	uint32_t lmax = xk_btree_maxrecs(ops, fs->mp->g.blocksize, 1), n, i;
	const struct xk_alloc_rec *r;
	struct path p;
	uint8_t *leaf;
	int err = find_leaf(fs, ops, root, levels, start, len, &p, &n);

	if (err)
		return err;
	leaf = p.bp[0]->data;
	/* The slot after the record: it is the one before. */
	i = p.idx[0];
	r = i ? xk_btree_rec(ops, leaf, i - 1) : NULL;
	if (!r || xk_be32_get(r->ar_startblock) != start ||
	    xk_be32_get(r->ar_blockcount) != len) {
		snprintf(msg, msglen, "the %s of AG %u has no record of the "
			 "free extent [%u, +%u) (run xfskit-repair first)",
			 ops->name, fs->agno, start, len);
		return XK_ECORRUPT;
	}
	/* Under minrecs a non-root leaf borrows or joins (kernel rule). */
	if (levels > 1 && n - 1 < lmax / 2)
		return refuse(fs, ops, "leave under half full", msg, msglen);
	i--;
	memmove(xk_btree_rec(ops, leaf, i), xk_btree_rec(ops, leaf, i + 1),
		(n - i - 1) * ops->rec_len);
	memset(xk_btree_rec(ops, leaf, n - 1), 0, ops->rec_len);
	set_numrecs(p.bp[0], n - 1);
	changed(fs, p.bp[0]);
	if (i == 0 && n > 1)
		update_keys(fs, ops, &p);
	return 0;
}

/* The bnobt record ending at start, found in the rightmost leaf. */
static int
bno_extend(struct grow_freesp *fs, uint32_t start, uint32_t len,
	   uint32_t *old_len, char *msg, size_t msglen)
{
	const struct xk_btree_ops *ops = &xk_bnobt_ops;
	struct xk_alloc_rec *r;
	struct xk_bkey key;
	struct path p;
	int err;

	*old_len = 0;
	rec_key(ops, start, 0, &key);
	err = descend(fs, ops, fs->bno_root, fs->bno_levels, &key, &p);
	if (err)
		return err;
	r = p.idx[0] ? xk_btree_rec(ops, p.bp[0]->data, p.idx[0] - 1) : NULL;
	if (r && xk_be32_get(r->ar_startblock) +
		 xk_be32_get(r->ar_blockcount) == start) {
		/* Its key (the start) stays: nothing above changes. */
		*old_len = xk_be32_get(r->ar_blockcount);
		xk_be32_set(&r->ar_blockcount, *old_len + len);
		changed(fs, p.bp[0]);
		return 0;
	}
	return leaf_insert(fs, ops, fs->bno_root, fs->bno_levels, start, len,
			   msg, msglen);
}

/* The largest free extent: the last record of the rightmost leaf. */
static int
cnt_longest(struct grow_freesp *fs, uint32_t *longest)
{
	const struct xk_btree_ops *ops = &xk_cntbt_ops;
	struct xk_bkey key = { { UINT64_MAX, UINT64_MAX, UINT64_MAX } };
	struct path p;
	int err = descend(fs, ops, fs->cnt_root, fs->cnt_levels, &key, &p);

	if (err)
		return err;
	*longest = p.idx[0] ? xk_be32_get(((struct xk_alloc_rec *)
		xk_btree_rec(ops, p.bp[0]->data, p.idx[0] - 1))->ar_blockcount)
		: 0;
	return 0;
}

int
grow_freesp_extend(struct grow_freesp *fs, uint32_t start, uint32_t len,
		   uint32_t *longest, char *msg, size_t msglen)
{
	const struct xk_btree_ops *cops = &xk_cntbt_ops;
	uint32_t old_len, first;
	int err;

	err = bno_extend(fs, start, len, &old_len, msg, msglen);
	if (err)
		return err;
	/* The kernel's order: the old cntbt record out, the new one in. */
	first = old_len ? start - old_len : start;
	if (old_len)
		err = leaf_delete(fs, cops, fs->cnt_root, fs->cnt_levels,
				  first, old_len, msg, msglen);
	if (!err)
		err = leaf_insert(fs, cops, fs->cnt_root, fs->cnt_levels,
				  first, old_len + len, msg, msglen);
	if (!err)
		err = cnt_longest(fs, longest);
	return err;
}

int
grow_freesp_trim(struct grow_freesp *fs, uint32_t start, uint32_t len,
		 uint32_t keep, uint32_t *longest, char *msg, size_t msglen)
{
	const struct xk_btree_ops *bops = &xk_bnobt_ops;
	const struct xk_btree_ops *cops = &xk_cntbt_ops;
	struct xk_alloc_rec *r;
	struct path p;
	uint32_t n;
	int err;

	/* The kernel's order: the cntbt record out (and in), then bnobt. */
	err = leaf_delete(fs, cops, fs->cnt_root, fs->cnt_levels, start, len,
			  msg, msglen);
	if (!err && keep)
		err = leaf_insert(fs, cops, fs->cnt_root, fs->cnt_levels,
				  start, keep, msg, msglen);
	if (err)
		return err;
	if (!keep) {
		err = leaf_delete(fs, bops, fs->bno_root, fs->bno_levels,
				  start, len, msg, msglen);
	} else {
		/* Its key (the start) stays: nothing above changes. */
		err = find_leaf(fs, bops, fs->bno_root, fs->bno_levels, start,
				len, &p, &n);
		r = !err && p.idx[0] ? xk_btree_rec(bops, p.bp[0]->data,
						    p.idx[0] - 1) : NULL;
		if (!err && (!r || xk_be32_get(r->ar_startblock) != start ||
			     xk_be32_get(r->ar_blockcount) != len)) {
			snprintf(msg, msglen, "the bnobt of AG %u has no record "
				 "of the free extent [%u, +%u) (run "
				 "xfskit-repair first)", fs->agno, start, len);
			err = XK_ECORRUPT;
		}
		if (!err) {
			xk_be32_set(&r->ar_blockcount, keep);
			changed(fs, p.bp[0]);
		}
	}
	if (!err)
		err = cnt_longest(fs, longest);
	return err;
}

void
grow_freesp_dirty(struct grow_freesp *fs)
{
	for (unsigned int i = 0; i < fs->ntouched; i++)
		if (fs->changed[i])
			xk_buf_dirty(fs->touched[i]);
}

void
grow_freesp_release(struct grow_freesp *fs)
{
	for (unsigned int i = 0; i < fs->ntouched; i++)
		xk_buf_release(fs->touched[i]);
	fs->ntouched = 0;
}
