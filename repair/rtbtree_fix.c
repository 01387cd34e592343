// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * RTFIX_BTREES (planned by rtbtree.c): a realtime group's rmap or
 * refcount btree whose records are wrong, rewritten in place from the
 * realtime files' mappings.  Only a tree the check walked whole (its
 * blocks sound, every record read) is rewritten, and only into the
 * blocks it has: the records spread evenly over the same leaves, each
 * node and the root in the inode keeping their pointers with their keys
 * made again, every block's header made again (siblings from the level's
 * order, LSN 0, CRC).  No block is allocated or freed, so the inode's
 * block count, the data device's space and its rmapbt stay as they are.
 * Written in a pass that changes nothing else (rt_apply), when every
 * finding of the run is one of these trees' (rtb_guard).
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <xfskit/btree.h>
#include <xfskit/crc32c.h>
#include <xfskit/format/rtgroup.h>

#include "rtbtree.h"

/* The tree's blocks, level by level, left to right (the walk's order). */
struct shape {
	XK_VEC_OF(uint64_t) lv[XK_BTREE_MAXLEVELS];
	int		err;
};

static int
shape_block(void *ctx, unsigned int level, uint64_t bno, struct xk_buf *bp)
{
	struct shape *s = ctx;

	(void)bp;
	if (level >= XK_BTREE_MAXLEVELS)
		return XK_ECORRUPT;
	s->err = xk_vec_push(&s->lv[level].vec, &bno, sizeof(bno));
	return s->err;
}

static void
shape_free(struct shape *s)
{
	for (int l = 0; l < XK_BTREE_MAXLEVELS; l++)
		xk_vec_free(&s->lv[l].vec);
}

/* A record's low and high keys, on-disk form (high unused if not
 * overlapping). */
static void
rec_keys(const struct xk_btree_ops *ops, const uint8_t *rec, uint8_t *lo,
	 uint8_t *hi)
{
	if (ops == &xk_rtrmapbt_ops) {
		uint32_t start = xk_get_be32(rec), len = xk_get_be32(rec + 4);
		uint64_t owner = xk_get_be64(rec + 8);
		uint64_t off = xk_get_be64(rec + 16) & ~XK_RMAP_OFF_UNWRITTEN;

		xk_put_be32(lo, start);
		xk_put_be64(lo + 4, owner);
		xk_put_be64(lo + 12, off);
		xk_put_be32(hi, start + len - 1);
		xk_put_be64(hi + 4, owner);
		xk_put_be64(hi + 12, xk_rmap_owner_is_special(owner) ? off :
				     off + len - 1);
	} else {
		memcpy(lo, rec, 4);
		memcpy(hi, rec, 4);
	}
}

/* *max = the larger of *max and k, as the tree compares keys. */
static void
key_max(const struct xk_btree_ops *ops, uint8_t *max, const uint8_t *k,
	int first)
{
	struct xk_bkey a, b;

	ops->key_decode(max, &a);
	ops->key_decode(k, &b);
	if (first || xk_bkey_cmp(&b, &a) > 0)
		memcpy(max, k, ops->key_len);
}

/* A block's header made again, its CRC set, the buffer dirtied. */
static void
block_finish(struct xk_mount *mp, const struct xk_btree_ops *ops,
	     struct xk_buf *bp, uint64_t ino, uint16_t level, uint16_t nrecs,
	     uint64_t left, uint64_t right)
{
	struct xk_btree_lblock *h = (struct xk_btree_lblock *)bp->data;

	xk_be32_set(&h->bb_magic, ops->magic);
	xk_be16_set(&h->bb_level, level);
	xk_be16_set(&h->bb_numrecs, nrecs);
	xk_be64_set(&h->bb_leftsib, left);
	xk_be64_set(&h->bb_rightsib, right);
	xk_be64_set(&h->bb_blkno, bp->daddr);
	xk_be64_set(&h->bb_lsn, 0);
	memcpy(h->bb_uuid, mp->meta_uuid, 16);
	xk_be64_set(&h->bb_owner, ino);
	xk_be32_set(&h->bb_pad, 0);
	xk_cksum_update(bp->data, mp->g.blocksize,
			offsetof(struct xk_btree_lblock, bb_crc));
	xk_buf_dirty(bp);
}

static uint64_t
sib(const uint64_t *v, size_t n, size_t i, int right)
{
	if (right)
		return i + 1 < n ? v[i + 1] : XK_NULLFSBLOCK;
	return i ? v[i - 1] : XK_NULLFSBLOCK;
}

/*
 * Keys of an index (a node block's or the inode root's): for each of
 * its n pointers the child's low and high keys, found by the child's
 * place in the level below (children come in that level's order).
 */
static int
index_keys(const struct xk_btree_ops *ops, uint8_t *keys, size_t slot,
	   const uint8_t *ptrs, unsigned int n, const uint64_t *below,
	   size_t nbelow, const uint8_t *blo, const uint8_t *bhi,
	   size_t *next)
{
	for (unsigned int i = 0; i < n; i++) {
		uint64_t child = xk_get_be64(ptrs + 8 * i);

		if (*next >= nbelow || below[*next] != child)
			return XK_ECORRUPT;
		memcpy(keys + i * slot, blo + *next * ops->key_len,
		       ops->key_len);
		if (ops->overlapping)
			memcpy(keys + i * slot + ops->key_len,
			       bhi + *next * ops->key_len, ops->key_len);
		(*next)++;
	}
	return 0;
}

/* Low and high key of an index of n children, from its keys. */
static void
index_range(const struct xk_btree_ops *ops, const uint8_t *keys, size_t slot,
	    unsigned int n, uint8_t *lo, uint8_t *hi)
{
	memcpy(lo, keys, ops->key_len);
	for (unsigned int i = 0; i < n; i++)
		key_max(ops, hi, keys + i * slot +
			(ops->overlapping ? ops->key_len : 0), i == 0);
}

/*
 * Write nrecs records (on-disk form) into the tree rooted in inode ino,
 * shaped as the check found it.  -EFBIG when they do not fit it (the
 * check planned only trees they fit).
 */
int
rtb_tree_write(struct repair_ctx *rc, uint64_t ino,
	       const struct xk_btree_ops *ops, const uint8_t *recs,
	       uint64_t nrecs)
{
	struct xk_mount *mp = rc->mp;
	struct shape s;
	struct xk_btree_walk w;
	struct xk_dinode *dip;
	struct xk_buf *ibp, *bp;
	uint8_t *fork, *lo = NULL, *hi = NULL, *nlo = NULL, *nhi = NULL;
	size_t slot = ops->overlapping ? 2 * ops->key_len : ops->key_len;
	unsigned int fsize, level;
	int err;

	memset(&s, 0, sizeof(s));
	err = xk_inode_read(mp, ino, 0, &ibp, &dip);
	if (err)
		return err;
	fork = xk_dfork_ptr(dip, XK_DATA_FORK);
	fsize = xk_dfork_size(dip, mp->g.inodesize, XK_DATA_FORK);
	level = xk_get_be16(fork);
	if (level == 0) {
		/* Records in the inode. */
		if (4 + nrecs * ops->rec_len > fsize) {
			err = -EFBIG;
			goto out;
		}
		memset(fork, 0, fsize);
		xk_put_be16(fork + 2, (uint16_t)nrecs);
		memcpy(fork + 4, recs, nrecs * ops->rec_len);
		goto inode_done;
	}
	memset(&w, 0, sizeof(w));
	w.ops = ops;
	w.agno = -1;
	w.owner = ino;
	w.iroot = fork;
	w.iroot_size = fsize;
	w.levels = level + 1;
	w.ctx = &s;
	w.block_fn = shape_block;
	/*
	 * Keys and siblings that disagree are what is being rewritten (the
	 * caller judged the tree sound otherwise): only an operational
	 * error stops here.
	 */
	err = xk_btree_walk(mp, &w);
	if (err == XK_ECORRUPT)
		err = 0;
	if (err || s.err) {
		err = err ? err : s.err;
		goto out;
	}
	{
		size_t nleaf = s.lv[0].n, done = 0;
		uint32_t maxr = xk_btree_maxrecs(ops, mp->g.blocksize, 1);
		size_t most = 0;

		for (unsigned int l = 0; l < level; l++)
			if (s.lv[l].n > most)
				most = s.lv[l].n;
		if (!nleaf || nrecs < nleaf || nrecs > nleaf * (uint64_t)maxr) {
			err = -EFBIG;
			goto out;
		}
		lo = xk_calloc(most + 1, ops->key_len);
		hi = xk_calloc(most + 1, ops->key_len);
		nlo = xk_calloc(most + 1, ops->key_len);
		nhi = xk_calloc(most + 1, ops->key_len);
		if (!lo || !hi || !nlo || !nhi) {
			err = -ENOMEM;
			goto out;
		}
		/* Leaves: the records spread evenly, in order. */
		for (size_t i = 0; i < nleaf && !err; i++) {
			uint64_t n = nrecs / nleaf + (i < nrecs % nleaf);
			uint8_t klo[32], khi[32];

			err = xk_buf_get(mp, xk_fsb_to_daddr(mp, s.lv[0].v[i]),
					 mp->g.blocksize, ops->buf_ops, &bp);
			if (err)
				break;
			memset(bp->data, 0, mp->g.blocksize);
			memcpy(xk_btree_rec(ops, bp->data, 0),
			       recs + done * ops->rec_len, n * ops->rec_len);
			for (uint64_t j = 0; j < n; j++) {
				rec_keys(ops, recs + (done + j) * ops->rec_len,
					 klo, khi);
				if (!j)
					memcpy(lo + i * ops->key_len, klo,
					       ops->key_len);
				key_max(ops, hi + i * ops->key_len, khi, !j);
			}
			done += n;
			block_finish(mp, ops, bp, ino, 0, (uint16_t)n,
				     sib(s.lv[0].v, nleaf, i, 0),
				     sib(s.lv[0].v, nleaf, i, 1));
			xk_buf_release(bp);
		}
		/* Nodes: their pointers kept, keys and headers made again. */
		for (unsigned int l = 1; l < level && !err; l++) {
			uint32_t nmax = xk_btree_maxrecs(ops, mp->g.blocksize,
							 0);
			size_t next = 0;

			for (size_t i = 0; i < s.lv[l].n && !err; i++) {
				uint16_t n;

				err = xk_buf_read(mp, xk_fsb_to_daddr(mp,
						  s.lv[l].v[i]),
						  mp->g.blocksize, ops->buf_ops,
						  XK_READ_NOVERIFY, &bp);
				if (err)
					break;
				n = xk_btree_block_numrecs(bp->data);
				err = n > nmax ? XK_ECORRUPT :
				      index_keys(ops, xk_btree_key(ops,
						 bp->data, 0), slot,
						 xk_btree_ptr(ops, bp->data,
							      nmax, 0),
						 n, s.lv[l - 1].v,
						 s.lv[l - 1].n, lo, hi,
						 &next);
				if (!err) {
					index_range(ops, xk_btree_key(ops,
						    bp->data, 0), slot, n,
						    nlo + i * ops->key_len,
						    nhi + i * ops->key_len);
					block_finish(mp, ops, bp, ino,
						     (uint16_t)l, n,
						     sib(s.lv[l].v, s.lv[l].n,
							 i, 0),
						     sib(s.lv[l].v, s.lv[l].n,
							 i, 1));
				}
				xk_buf_release(bp);
			}
			memcpy(lo, nlo, s.lv[l].n * ops->key_len);
			memcpy(hi, nhi, s.lv[l].n * ops->key_len);
		}
		/* The root in the inode: pointers kept, keys made again. */
		if (!err) {
			unsigned int n = xk_get_be16(fork + 2);
			uint32_t rmax = (fsize - 4) /
				((ops->iroot_two_keys ? 2 : 1) * slot +
				 ops->ptr_len);
			size_t next = 0;

			err = n > rmax ? XK_ECORRUPT :
			      index_keys(ops, fork + 4, slot,
					 fork + 4 + rmax * slot, n,
					 s.lv[level - 1].v, s.lv[level - 1].n,
					 lo, hi, &next);
		}
	}
	if (err)
		goto out;
inode_done:
	xk_cksum_update(dip, mp->g.inodesize, XK_DINODE_CRC_OFF);
	xk_buf_dirty(ibp);
out:
	xk_buf_release(ibp);
	free(lo);
	free(hi);
	free(nlo);
	free(nhi);
	shape_free(&s);
	return err;
}

/* A record as on disk. */
static void
encode(const struct xk_btree_ops *ops, const struct rtb_rec *r, uint8_t *d)
{
	if (ops == &xk_rtrmapbt_ops) {
		xk_put_be32(d, (uint32_t)r->start);
		xk_put_be32(d + 4, (uint32_t)r->len);
		xk_put_be64(d + 8, r->owner);
		xk_put_be64(d + 16, r->off);
	} else {
		xk_put_be32(d, (uint32_t)r->start);
		xk_put_be32(d + 4, (uint32_t)r->len);
		xk_put_be32(d + 8, (uint32_t)r->owner);
	}
}

static int
rewrite_tree(struct repair_ctx *rc, uint32_t g, uint64_t ino,
	     uint16_t metatype, unsigned long *applied)
{
	struct rtb_tree t = { .rc = rc, .ops = rtb_ops(metatype), .ino = ino,
				.quiet = 1 };
	XK_VEC_OF(struct rtb_rec) want = { 0 };
	uint8_t *recs = NULL;
	int ok, err = rtb_tree_judge(rc, g, ino, metatype, &t, &want.vec, &ok);

	/* The comparison, again, quietly: with out it stops at the list. */
	if (!err && ok) {
		struct rtb_tree q = { .rc = rc, .ops = t.ops, .ino = ino,
					.quiet = 1 };

		err = rtb_tree_judge(rc, g, ino, metatype, &q, NULL, &ok);
		t.ndiff += q.ndiff;
		t.nfound += q.nfound;
		xk_vec_free(&q.recs.vec);
	}
	if (!err && ok && (t.nfound || t.ndiff)) {
		recs = xk_malloc(want.n * t.ops->rec_len + 1);
		err = recs ? 0 : -ENOMEM;
		for (size_t i = 0; i < want.n && !err; i++)
			encode(t.ops, &want.v[i], recs + i * t.ops->rec_len);
		if (!err)
			err = rtb_tree_write(rc, ino, t.ops, recs, want.n);
		if (!err) {
			(*applied)++;
			action_report(rc, ACT_RT_REBUILT, 0, -1, NULL,
				      " realtime group %u's %s btree (inode "
				      "%llu) in its own blocks from the "
				      "realtime files' mappings: %llu records",
				      g, metatype == XK_METAFILE_RTRMAP ?
				      "rmap" : "refcount",
				      (unsigned long long)ino,
				      (unsigned long long)want.n);
		}
		if (err)
			err = repair_error(rc, err, "rewriting rtgroup %u's %s "
					   "btree", g, metatype ==
					   XK_METAFILE_RTRMAP ? "rmap" :
					   "refcount");
	} else if (!err && !ok) {
		err = repair_error(rc, XK_ECORRUPT, "rtgroup %u's realtime "
				   "btree changed since it was checked", g);
	}
	free(recs);
	xk_vec_free(&want.vec);
	xk_vec_free(&t.recs.vec);
	return err;
}

int
rtb_rewrite(struct repair_ctx *rc, unsigned long *applied)
{
	const struct xk_sb *sb = &rc->mp->sb;
	struct rtg_names n = { sb->rgcount, NULL, NULL, NULL, NULL, 0 };
	int err = 0;

	n.bitmap = xk_calloc(sb->rgcount + 1, sizeof(*n.bitmap));
	n.summary = xk_calloc(sb->rgcount + 1, sizeof(*n.summary));
	n.rmap = xk_calloc(sb->rgcount + 1, sizeof(*n.rmap));
	n.refcount = xk_calloc(sb->rgcount + 1, sizeof(*n.refcount));
	if (!n.bitmap || !n.summary || !n.rmap || !n.refcount)
		err = -ENOMEM;
	if (!err)
		err = rtg_find_inodes(rc, &n);
	if (err)
		err = repair_error(rc, err, "finding the realtime groups' "
				   "btrees");
	for (uint32_t g = 0; g < sb->rgcount && !err; g++) {
		if (n.rmap[g] &&
		    xk_sb_has_ro_compat(sb, XK_SB_FEAT_RO_COMPAT_RMAPBT))
			err = rewrite_tree(rc, g, n.rmap[g],
					   XK_METAFILE_RTRMAP, applied);
		if (!err && n.refcount[g] &&
		    xk_sb_has_ro_compat(sb, XK_SB_FEAT_RO_COMPAT_REFLINK))
			err = rewrite_tree(rc, g, n.refcount[g],
					   XK_METAFILE_RTREFCOUNT, applied);
	}
	free(n.bitmap);
	free(n.summary);
	free(n.rmap);
	free(n.refcount);
	return err;
}
