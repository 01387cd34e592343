// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Generic btree block verification and tree walking, driven by the
 * per-tree ops tables in libfs/format/.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <xfskit/libfs.h>
#include <xfskit/format/btree.h>

int
xk_bkey_cmp(const struct xk_bkey *a, const struct xk_bkey *b)
{
	for (int i = 0; i < 3; i++) {
		if (a->k[i] < b->k[i])
			return -1;
		if (a->k[i] > b->k[i])
			return 1;
	}
	return 0;
}

const struct xk_btree_ops *
xk_btree_ops_get(enum xk_btnum btnum)
{
	static const struct xk_btree_ops *const table[XK_BT_NR] = {
		[XK_BT_BNO] = &xk_bnobt_ops,
		[XK_BT_CNT] = &xk_cntbt_ops,
		[XK_BT_INO] = &xk_inobt_ops,
		[XK_BT_FINO] = &xk_finobt_ops,
		[XK_BT_RMAP] = &xk_rmapbt_ops,
		[XK_BT_REFC] = &xk_refcountbt_ops,
		[XK_BT_BMAP] = &xk_bmbt_ops,
		[XK_BT_RTRMAP] = &xk_rtrmapbt_ops,
		[XK_BT_RTREFC] = &xk_rtrefcountbt_ops,
	};

	return (unsigned int)btnum < XK_BT_NR ? table[btnum] : NULL;
}

static size_t
key_slot(const struct xk_btree_ops *ops)
{
	return ops->overlapping ? 2 * ops->key_len : ops->key_len;
}

uint32_t
xk_btree_maxrecs(const struct xk_btree_ops *ops, uint32_t blocksize, int leaf)
{
	size_t space = blocksize - xk_btree_hdr_len(ops);

	if (leaf)
		return (uint32_t)(space / ops->rec_len);
	return (uint32_t)(space / (key_slot(ops) + ops->ptr_len));
}

unsigned int
xk_btree_compute_maxlevels(uint32_t leaf_max, uint32_t node_max,
			   uint64_t records)
{
	uint64_t minleaf = leaf_max / 2, minnode = node_max / 2;
	uint64_t blocks;
	unsigned int level;

	if (minleaf < 1)
		minleaf = 1;
	if (minnode < 2)
		minnode = 2;
	blocks = (records + minleaf - 1) / minleaf;
	for (level = 1; blocks > 1; level++)
		blocks = (blocks + minnode - 1) / minnode;
	return level;
}

void *
xk_btree_rec(const struct xk_btree_ops *ops, void *block, uint32_t i)
{
	return (uint8_t *)block + xk_btree_hdr_len(ops) + i * ops->rec_len;
}

void *
xk_btree_key(const struct xk_btree_ops *ops, void *block, uint32_t i)
{
	return (uint8_t *)block + xk_btree_hdr_len(ops) + i * key_slot(ops);
}

void *
xk_btree_high_key(const struct xk_btree_ops *ops, void *block, uint32_t i)
{
	return (uint8_t *)xk_btree_key(ops, block, i) + ops->key_len;
}

void *
xk_btree_ptr(const struct xk_btree_ops *ops, void *block, uint32_t maxrecs,
	     uint32_t i)
{
	return (uint8_t *)block + xk_btree_hdr_len(ops) +
	       maxrecs * key_slot(ops) + i * ops->ptr_len;
}

uint32_t
xk_btree_block_magic(const void *block)
{
	return xk_get_be32(block);
}

uint16_t
xk_btree_block_level(const void *block)
{
	return xk_get_be16((const uint8_t *)block + 4);
}

uint16_t
xk_btree_block_numrecs(const void *block)
{
	return xk_get_be16((const uint8_t *)block + 6);
}

uint64_t
xk_btree_block_sib(const struct xk_btree_ops *ops, const void *block,
		   int right)
{
	const uint8_t *b = block;

	if (ops->long_ptrs)
		return xk_get_be64(b + (right ? 16 : 8));
	return xk_get_be32(b + (right ? 12 : 8));
}

uint64_t
xk_btree_nullptr(const struct xk_btree_ops *ops)
{
	return ops->long_ptrs ? XK_NULLFSBLOCK : XK_NULLAGBLOCK;
}

static uint64_t
get_ptr(const struct xk_btree_ops *ops, const void *p)
{
	return ops->long_ptrs ? xk_get_be64(p) : xk_get_be32(p);
}

/* Whether a child pointer or sibling can name a block of this tree. */
static int
ptr_valid(struct xk_mount *mp, const struct xk_btree_ops *ops, int64_t agno,
	  uint64_t ptr)
{
	if (ops->long_ptrs)
		return xk_fsbext_valid(mp, ptr, 1);
	if (agno < 0)
		return ptr != 0 && ptr < mp->g.agblocks;
	return ptr != 0 && xk_agbext_valid(mp, (uint32_t)agno,
					   (uint32_t)ptr, 1);
}

/*
 * Rules: 1. magic is the tree's; 2. UUID is the metadata UUID; 3. the
 * block says it lives where it was read from; 4. owner is the AG (short
 * form) or the inode (long form, when the caller knows it); 5. level
 * below the tree's maximum height; 6. no more records than fit; 7. each
 * sibling null or a valid block other than this one; 8. in a leaf, each
 * record passes its own checks and records are in order; in a node,
 * keys strictly increase (low keys, for overlapping trees), each high
 * key is not below its low key, and every pointer is a valid block.
 */
int
xk_btree_block_verify(const struct xk_btree_ops *ops, struct xk_buf *bp,
		      struct xk_fail *f)
{
	struct xk_mount *mp = bp->mp;
	uint8_t *b = bp->data;
	size_t hdr = xk_btree_hdr_len(ops);
	uint16_t level = xk_btree_block_level(b);
	uint16_t numrecs = xk_btree_block_numrecs(b);
	uint32_t maxr;
	const uint8_t *uuid;
	uint64_t blkno;

	if (bp->len < hdr)
		return xk_fail_set(f, "size", "block too small");
	if (xk_btree_block_magic(b) != ops->magic)
		return xk_fail_val(f, "magic", ops->magic,
				   xk_btree_block_magic(b));
	uuid = b + (ops->long_ptrs ? 40 : 32);
	if (memcmp(uuid, mp->meta_uuid, 16))
		return xk_fail_set(f, "uuid", "does not match the superblock");
	blkno = xk_get_be64(b + (ops->long_ptrs ? 24 : 16));
	if (blkno != bp->daddr)
		return xk_fail_val(f, "blkno", bp->daddr, blkno);
	if (ops->long_ptrs) {
		uint64_t owner = xk_get_be64(b + 56);

		if (bp->owner && owner != bp->owner)
			return xk_fail_val(f, "owner", bp->owner, owner);
	} else if (bp->agno >= 0) {
		uint32_t owner = xk_get_be32(b + 48);

		if (owner != (uint64_t)bp->agno)
			return xk_fail_val(f, "owner", (uint64_t)bp->agno,
					   owner);
	}
	if (level >= mp->g.maxlevels[ops->btnum])
		return xk_fail_val(f, "level", mp->g.maxlevels[ops->btnum] - 1,
				   level);
	maxr = xk_btree_maxrecs(ops, bp->len, level == 0);
	if (numrecs > maxr)
		return xk_fail_val(f, "numrecs", maxr, numrecs);

	for (int right = 0; right < 2; right++) {
		uint64_t sib = xk_btree_block_sib(ops, b, right);

		if (sib == xk_btree_nullptr(ops))
			continue;
		if (!ptr_valid(mp, ops, bp->agno, sib))
			return xk_fail_set(f, right ? "rightsib" : "leftsib",
					   "sibling %llu is not a valid block",
					   (unsigned long long)sib);
		if (!ops->long_ptrs && bp->agno >= 0 &&
		    xk_agb_to_daddr(mp, (uint32_t)bp->agno,
				    (uint32_t)sib) == bp->daddr)
			return xk_fail_set(f, right ? "rightsib" : "leftsib",
					   "block names itself as sibling");
	}

	if (level == 0) {
		for (uint32_t i = 0; i < numrecs; i++) {
			const void *rec = b + hdr + i * ops->rec_len;
			int err = ops->rec_check(mp, bp->agno, rec, f);

			if (err) {
				size_t n = strlen(f->detail);

				snprintf(f->detail + n, sizeof(f->detail) - n,
					 "%srecord %u", n ? " in " : "", i);
				return err;
			}
			if (i && !ops->recs_inorder(rec - ops->rec_len, rec))
				return xk_fail_set(f, "record order",
						   "record %u is not after "
						   "record %u", i, i - 1);
		}
		return 0;
	}

	for (uint32_t i = 0; i < numrecs; i++) {
		struct xk_bkey lo, prev, hi;

		ops->key_decode(xk_btree_key(ops, b, i), &lo);
		if (i) {
			ops->key_decode(xk_btree_key(ops, b, i - 1), &prev);
			if (xk_bkey_cmp(&prev, &lo) >= 0 &&
			    !(ops->overlapping &&
			      xk_bkey_cmp(&prev, &lo) == 0))
				return xk_fail_set(f, "key order",
						   "key %u is not after key %u",
						   i, i - 1);
		}
		if (ops->overlapping) {
			ops->key_decode(xk_btree_high_key(ops, b, i), &hi);
			if (xk_bkey_cmp(&hi, &lo) < 0)
				return xk_fail_set(f, "high key",
						   "high key %u below its low "
						   "key", i);
		}
		if (!ptr_valid(mp, ops, bp->agno,
			       get_ptr(ops, xk_btree_ptr(ops, b, maxr, i))))
			return xk_fail_set(f, "ptr",
				"pointer %u (%llu) is not a valid block", i,
				(unsigned long long)get_ptr(ops,
					xk_btree_ptr(ops, b, maxr, i)));
	}
	return 0;
}

/* A small open-addressing set of visited block numbers. */
struct blkset {
	uint64_t	*slot;
	size_t		cap, n;
};

static int
blkset_add(struct blkset *s, uint64_t bno)
{
	uint64_t key = bno + 1;		/* 0 marks an empty slot */
	size_t i;

	if ((s->n + 1) * 2 > s->cap) {
		size_t ncap = s->cap ? s->cap * 2 : 64;
		uint64_t *ns = xk_calloc(ncap, sizeof(*ns));

		if (!ns)
			return -ENOMEM;
		for (size_t j = 0; j < s->cap; j++) {
			if (!s->slot[j])
				continue;
			i = (size_t)(s->slot[j] * 0x9e3779b97f4a7c15ULL) &
			    (ncap - 1);
			while (ns[i])
				i = (i + 1) & (ncap - 1);
			ns[i] = s->slot[j];
		}
		free(s->slot);
		s->slot = ns;
		s->cap = ncap;
	}
	i = (size_t)(key * 0x9e3779b97f4a7c15ULL) & (s->cap - 1);
	while (s->slot[i]) {
		if (s->slot[i] == key)
			return 1;	/* already there */
		i = (i + 1) & (s->cap - 1);
	}
	s->slot[i] = key;
	s->n++;
	return 0;
}

struct walk_state {
	struct xk_mount		*mp;
	struct xk_btree_walk	*w;
	struct blkset		seen;
	/* Last block met at each level, for the sibling chain check. */
	uint64_t		last[XK_BTREE_MAXLEVELS];
	/* Right sibling the last block at each level named. */
	uint64_t		next[XK_BTREE_MAXLEVELS];
	/* Last leaf record, for order across leaf boundaries. */
	uint8_t			lastrec[64];
	int			have_lastrec;
};

static void
walk_fail(struct walk_state *st, const struct xk_fail *f)
{
	st->w->nproblems++;
	if (st->w->fail_fn)
		st->w->fail_fn(st->w->ctx, f);
}

static void __attribute__((format(printf, 4, 5)))
walk_fail_at(struct walk_state *st, uint64_t daddr, const char *check,
	     const char *fmt, ...)
{
	struct xk_fail f;
	va_list ap;

	memset(&f, 0, sizeof(f));
	f.structure = st->w->ops->buf_ops->name;
	f.daddr = daddr;
	f.agno = st->w->agno;
	f.ino = st->w->owner;
	f.check = check;
	va_start(ap, fmt);
	vsnprintf(f.detail, sizeof(f.detail), fmt, ap);
	va_end(ap);
	walk_fail(st, &f);
}

static uint64_t
ptr_daddr(struct xk_mount *mp, const struct xk_btree_walk *w, uint64_t ptr)
{
	if (w->ops->long_ptrs)
		return xk_fsb_to_daddr(mp, ptr);
	return xk_agb_to_daddr(mp, (uint32_t)w->agno, (uint32_t)ptr);
}

/*
 * For overlapping trees: the highest key under a block, from its records
 * (leaf) or its high keys (node); the parent's high key must equal it.
 */
static void
check_high_key(struct walk_state *st, uint64_t daddr, void *block,
	       uint16_t numrecs, unsigned int level, const struct xk_bkey *want)
{
	const struct xk_btree_ops *ops = st->w->ops;
	struct xk_bkey max, k, lo;

	if (!want || !numrecs)
		return;
	memset(&max, 0, sizeof(max));
	for (uint32_t i = 0; i < numrecs; i++) {
		if (level == 0)
			ops->rec_keys(xk_btree_rec(ops, block, i), &lo, &k);
		else
			ops->key_decode(xk_btree_high_key(ops, block, i), &k);
		if (i == 0 || xk_bkey_cmp(&k, &max) > 0)
			max = k;
	}
	if (xk_bkey_cmp(&max, want) != 0)
		walk_fail_at(st, daddr, "high key", "the parent's high key "
			     "(%llu, %llu, %llu) is not the highest key here "
			     "(%llu, %llu, %llu)",
			     (unsigned long long)want->k[0],
			     (unsigned long long)want->k[1],
			     (unsigned long long)want->k[2],
			     (unsigned long long)max.k[0],
			     (unsigned long long)max.k[1],
			     (unsigned long long)max.k[2]);
}

/*
 * Visit the subtree at ptr, expected at `level`, with the parent's key
 * range [lo, next) (next NULL for the rightmost child) and, for
 * overlapping trees, the parent's high key for it (phigh).
 */
static int
walk_block(struct walk_state *st, uint64_t ptr, unsigned int level,
	   const struct xk_bkey *plo, const struct xk_bkey *phi,
	   const struct xk_bkey *phigh)
{
	struct xk_mount *mp = st->mp;
	struct xk_btree_walk *w = st->w;
	const struct xk_btree_ops *ops = w->ops;
	uint64_t daddr = ptr_daddr(mp, w, ptr);
	struct xk_buf *bp;
	uint16_t numrecs;
	int err, ret = 0;

	err = blkset_add(&st->seen, ptr);
	if (err < 0)
		return err;
	if (err > 0) {
		walk_fail_at(st, daddr, "loop",
			     "block %llu is reached twice (at level %u)",
			     (unsigned long long)ptr, level);
		return 0;
	}
	err = xk_buf_read_ctx(mp, daddr, mp->g.blocksize, ops->buf_ops,
			      w->agno, w->owner, w->flags | XK_READ_SALVAGE,
			      &bp);
	/* Memory or I/O: the walk cannot see the block, says nothing of it. */
	if (err && !bp && xk_err_operational(err))
		return err;
	if (err && !bp) {
		struct xk_fail f;

		memset(&f, 0, sizeof(f));
		f.structure = ops->buf_ops->name;
		f.daddr = daddr;
		f.agno = w->agno;
		xk_fail_set(&f, "read", "%s", xk_strerror(err));
		if (!w->read_err)
			w->read_err = err;
		walk_fail(st, &f);
		return 0;
	}
	w->nblocks++;
	if (w->block_fn) {
		ret = w->block_fn(w->ctx, level, ptr, bp);
		if (ret)
			goto out;
	}
	if (bp->error) {
		walk_fail(st, &bp->fail);
		/* A block with a bad CRC alone is still structurally sound. */
		if (bp->error != XK_EBADCRC)
			goto out;
	}
	if (xk_btree_block_level(bp->data) != level) {
		walk_fail_at(st, daddr, "level", "expected level %u, found %u",
			     level, xk_btree_block_level(bp->data));
		goto out;
	}
	/* Sibling chain: left sibling is the last block seen at this level. */
	if (xk_btree_block_sib(ops, bp->data, 0) != st->last[level])
		walk_fail_at(st, daddr, "leftsib",
			     "expected %llu, found %llu",
			     (unsigned long long)st->last[level],
			     (unsigned long long)xk_btree_block_sib(ops,
							bp->data, 0));
	if (st->last[level] != xk_btree_nullptr(ops) &&
	    st->next[level] != ptr)
		walk_fail_at(st, daddr, "rightsib",
			     "previous block at level %u names %llu as its "
			     "right sibling, but the parent leads here",
			     level, (unsigned long long)st->next[level]);
	st->last[level] = ptr;
	st->next[level] = xk_btree_block_sib(ops, bp->data, 1);

	numrecs = xk_btree_block_numrecs(bp->data);
	/* A cached block is not verified again: never read past it. */
	if (numrecs > xk_btree_maxrecs(ops, bp->len, level == 0)) {
		walk_fail_at(st, daddr, "numrecs", "%u records, more than a "
			     "block holds", numrecs);
		goto out;
	}
	if (numrecs == 0 && (level > 0 || plo)) {
		walk_fail_at(st, daddr, "numrecs",
			     "non-root block at level %u is empty", level);
	}
	if (ops->overlapping && (level == 0 ||
				 numrecs <= xk_btree_maxrecs(ops, mp->g.blocksize,
							    0)))
		check_high_key(st, daddr, bp->data, numrecs, level, phigh);
	if (level == 0) {
		for (uint32_t i = 0; i < numrecs; i++) {
			const void *rec = xk_btree_rec(ops, bp->data, i);
			struct xk_bkey lo, hi;

			ops->rec_keys(rec, &lo, &hi);
			if (i == 0 && plo && xk_bkey_cmp(&lo, plo) != 0)
				walk_fail_at(st, daddr, "parent key",
					     "first record does not match "
					     "the parent's key");
			if (phi && xk_bkey_cmp(&lo, phi) >= 0 &&
			    !ops->overlapping)
				walk_fail_at(st, daddr, "parent key",
					     "record %u lies beyond the "
					     "next parent key", i);
			if (i == 0 && st->have_lastrec &&
			    !ops->recs_inorder(st->lastrec, rec))
				walk_fail_at(st, daddr, "record order",
					     "first record is not after the "
					     "previous leaf's last");
			w->nrecs++;
			if (w->rec_fn) {
				ret = w->rec_fn(w->ctx, rec);
				if (ret)
					goto out;
			}
		}
		if (numrecs) {
			memcpy(st->lastrec,
			       xk_btree_rec(ops, bp->data, numrecs - 1),
			       ops->rec_len);
			st->have_lastrec = 1;
		}
		goto out;
	}

	{
		uint32_t maxr = xk_btree_maxrecs(ops, mp->g.blocksize, 0);
		struct xk_bkey *keys;

		if (numrecs > maxr)
			goto out;
		keys = xk_malloc(sizeof(*keys) * (numrecs + 1u));
		if (!keys) {
			ret = -ENOMEM;
			goto out;
		}
		for (uint32_t i = 0; i < numrecs; i++) {
			uint64_t child = get_ptr(ops, xk_btree_ptr(ops,
						 bp->data, maxr, i));

			ops->key_decode(xk_btree_key(ops, bp->data, i),
					&keys[i]);
			/* Ask for every child now; we visit them in turn. */
			if (ptr_valid(mp, ops, w->agno, child))
				xk_buf_readahead(mp, ptr_daddr(mp, w, child),
						 mp->g.blocksize);
		}
		if (numrecs && plo && xk_bkey_cmp(&keys[0], plo) != 0)
			walk_fail_at(st, daddr, "parent key",
				     "first key does not match the parent's "
				     "key");
		for (uint32_t i = 0; i < numrecs && !ret; i++) {
			uint64_t child = get_ptr(ops, xk_btree_ptr(ops,
						 bp->data, maxr, i));
			const struct xk_bkey *next = (i + 1 < numrecs) ?
				&keys[i + 1] : phi;
			struct xk_bkey high;

			if (!ptr_valid(mp, ops, w->agno, child))
				continue;	/* the verifier reported it */
			if (ops->overlapping)
				ops->key_decode(xk_btree_high_key(ops,
						bp->data, i), &high);
			ret = walk_block(st, child, level - 1, &keys[i], next,
					 ops->overlapping ? &high : NULL);
		}
		free(keys);
	}
out:
	xk_buf_release(bp);
	return ret;
}

/*
 * A root whose records sit in the inode fork (the realtime groups'
 * btrees): each record's own checks and order, then rec_fn.
 */
static int
walk_iroot_leaf(struct walk_state *st, unsigned int nrecs)
{
	struct xk_btree_walk *w = st->w;
	const struct xk_btree_ops *ops = w->ops;
	const uint8_t *recs = (const uint8_t *)w->iroot + 4;
	int ret = 0;

	for (unsigned int i = 0; i < nrecs && !ret; i++) {
		const uint8_t *rec = recs + i * ops->rec_len;
		struct xk_fail f;

		memset(&f, 0, sizeof(f));
		if (ops->rec_check(st->mp, -1, rec, &f)) {
			f.structure = ops->buf_ops->name;
			f.ino = w->owner;
			f.agno = -1;
			snprintf(f.detail + strlen(f.detail),
				 sizeof(f.detail) - strlen(f.detail),
				 " in in-inode root record %u", i);
			walk_fail(st, &f);
			continue;
		}
		if (i && !ops->recs_inorder(rec - ops->rec_len, rec))
			walk_fail_at(st, 0, "record order", "in-inode root "
				     "record %u is not after record %u", i,
				     i - 1);
		w->nrecs++;
		if (w->rec_fn)
			ret = w->rec_fn(w->ctx, rec);
	}
	return ret;
}

/*
 * A root in an inode fork: a 4-byte header (level, numrecs), then keys
 * (low and high for overlapping trees) and pointers sized for the whole
 * fork, or, where the tree allows it, records.  Its children are walked
 * left to right so sibling chains are checked across them.
 */
static int
walk_iroot(struct walk_state *st)
{
	struct xk_btree_walk *w = st->w;
	const struct xk_btree_ops *ops = w->ops;
	const uint8_t *r = w->iroot;
	size_t slot = key_slot(ops);
	unsigned int level, nrecs, maxr;
	struct xk_bkey *keys;
	int ret = 0;

	if (w->iroot_size < 4) {
		walk_fail_at(st, 0, "root", "fork too small for a root");
		return 0;
	}
	level = xk_get_be16(r);
	nrecs = xk_get_be16(r + 2);
	maxr = level ? (w->iroot_size - 4) /
		       ((ops->iroot_two_keys ? 2 : 1) * slot + ops->ptr_len) :
		       (w->iroot_size - 4) / ops->rec_len;
	if ((level == 0 && !ops->iroot_leaf) || level + 1 != w->levels ||
	    (level && nrecs == 0) || nrecs > maxr) {
		walk_fail_at(st, 0, "root", "in-inode root has level %u and "
			     "%u records (room for %u)", level, nrecs, maxr);
		return 0;
	}
	if (level == 0)
		return walk_iroot_leaf(st, nrecs);
	keys = xk_malloc(sizeof(*keys) * nrecs * 2);
	if (!keys)
		return -ENOMEM;
	for (unsigned int i = 0; i < nrecs; i++) {
		const uint8_t *k = r + 4 + i * slot;

		ops->key_decode(k, &keys[2 * i]);
		if (ops->overlapping)
			ops->key_decode(k + ops->key_len, &keys[2 * i + 1]);
		if (i && xk_bkey_cmp(&keys[2 * i - 2], &keys[2 * i]) >= 0 &&
		    !(ops->overlapping &&
		      xk_bkey_cmp(&keys[2 * i - 2], &keys[2 * i]) == 0))
			walk_fail_at(st, 0, "key order", "in-inode root key "
				     "%u is not after key %u", i, i - 1);
	}
	for (unsigned int i = 0; i < nrecs && !ret; i++) {
		uint64_t child = get_ptr(ops, r + 4 + maxr * slot +
					 i * ops->ptr_len);

		if (!ptr_valid(st->mp, ops, w->agno, child)) {
			walk_fail_at(st, 0, "ptr", "in-inode root pointer %u "
				     "(%llu) is not a valid block", i,
				     (unsigned long long)child);
			continue;
		}
		ret = walk_block(st, child, level - 1, &keys[2 * i],
				 i + 1 < nrecs ? &keys[2 * i + 2] : NULL,
				 ops->overlapping ? &keys[2 * i + 1] : NULL);
	}
	free(keys);
	return ret;
}

int
xk_btree_walk(struct xk_mount *mp, struct xk_btree_walk *w)
{
	struct walk_state st;
	int ret;

	memset(&st, 0, sizeof(st));
	st.mp = mp;
	st.w = w;
	w->nblocks = w->nrecs = 0;
	w->nproblems = 0;
	w->read_err = 0;
	for (int i = 0; i < XK_BTREE_MAXLEVELS; i++)
		st.last[i] = st.next[i] = xk_btree_nullptr(w->ops);
	if (w->levels < 1 || w->levels > XK_BTREE_MAXLEVELS ||
	    (w->iroot && w->levels < 2 && !w->ops->iroot_leaf) ||
	    w->ops->rec_len > sizeof(st.lastrec)) {
		walk_fail_at(&st, 0, "levels", "tree height %u is outside "
			     "1..%d", w->levels, XK_BTREE_MAXLEVELS);
		return XK_ECORRUPT;
	}
	if (w->iroot) {
		ret = walk_iroot(&st);
		goto done;
	}
	if (!ptr_valid(mp, w->ops, w->agno, w->root)) {
		walk_fail_at(&st, 0, "root", "root %llu is not a valid block",
			     (unsigned long long)w->root);
		return XK_ECORRUPT;
	}
	ret = walk_block(&st, w->root, w->levels - 1, NULL, NULL, NULL);
done:
	/* Each level's chain must end at its rightmost block. */
	for (unsigned int l = 0; !ret && l < w->levels; l++)
		if (st.next[l] != xk_btree_nullptr(w->ops))
			walk_fail_at(&st, 0, "rightsib", "rightmost block at "
				     "level %u names a right sibling (%llu)",
				     l, (unsigned long long)st.next[l]);
	free(st.seen.slot);
	if (ret)
		return ret;
	return w->nproblems ? XK_ECORRUPT : 0;
}
