/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The table-driven btree engine.  Each tree type supplies a const ops
 * table (sizes, how to make keys from records, record checks, order
 * rules); one block verifier and one walker serve them all, so check,
 * repair, db and the bulk loader agree on what a valid tree is.
 *
 * Keys are compared in a decoded form, up to three 64-bit words compared
 * lexicographically: (startblock) for bnobt, (blockcount, startblock)
 * for cntbt, (startblock, owner, offset) for rmapbt, and so on.
 */
#ifndef XFSKIT_BTREE_H
#define XFSKIT_BTREE_H

#include <xfskit/errors.h>

#include <stddef.h>
#include <stdint.h>

#include <xfskit/buf.h>
#include <xfskit/mount.h>

struct xk_bkey {
	uint64_t	k[3];
};

struct xk_btree_ops {
	const char	*name;		/* "bnobt" */
	enum xk_btnum	btnum;
	uint32_t	magic;
	int		long_ptrs;	/* 64-bit fsblock pointers (bmbt) */
	int		overlapping;	/* node keys are (low, high) pairs */
	int		iroot_leaf;	/* an in-inode root may hold records */
	/*
	 * The in-inode root's room for pointers is counted as if each had
	 * two keys (the realtime refcount btree's rule; its keys are still
	 * packed one per pointer).
	 */
	int		iroot_two_keys;
	size_t		rec_len;
	size_t		key_len;
	size_t		ptr_len;
	const struct xk_buf_ops *buf_ops;
	/* Low (and for overlapping trees, high) key of a record. */
	void		(*rec_keys)(const void *rec, struct xk_bkey *low,
				    struct xk_bkey *high);
	/* Decode an on-disk key. */
	void		(*key_decode)(const void *key, struct xk_bkey *k);
	/* Whether record a may precede record b (adjacent in a leaf). */
	int		(*recs_inorder)(const void *a, const void *b);
	/* Field checks of one record; agno is -1 for inode-rooted trees. */
	int		(*rec_check)(struct xk_mount *mp, int64_t agno,
				     const void *rec, struct xk_fail *f);
};

extern const struct xk_btree_ops xk_bnobt_ops;
extern const struct xk_btree_ops xk_cntbt_ops;
extern const struct xk_btree_ops xk_inobt_ops;
extern const struct xk_btree_ops xk_finobt_ops;
extern const struct xk_btree_ops xk_rmapbt_ops;
extern const struct xk_btree_ops xk_refcountbt_ops;
extern const struct xk_btree_ops xk_bmbt_ops;
extern const struct xk_btree_ops xk_rtrmapbt_ops;
extern const struct xk_btree_ops xk_rtrefcountbt_ops;

const struct xk_btree_ops *xk_btree_ops_get(enum xk_btnum btnum);

int xk_bkey_cmp(const struct xk_bkey *a, const struct xk_bkey *b);

static inline size_t xk_btree_hdr_len(const struct xk_btree_ops *ops)
{
	return ops->long_ptrs ? 72 : 56;
}

/* Records or key/pointer pairs that fit a block of this size. */
uint32_t xk_btree_maxrecs(const struct xk_btree_ops *ops, uint32_t blocksize,
			  int leaf);
/* Height needed to index `records` at minimum fill (half full blocks). */
unsigned int xk_btree_compute_maxlevels(uint32_t leaf_max, uint32_t node_max,
					uint64_t records);

/* Pointers into a block's record, key and pointer areas. */
void *xk_btree_rec(const struct xk_btree_ops *ops, void *block, uint32_t i);
void *xk_btree_key(const struct xk_btree_ops *ops, void *block, uint32_t i);
void *xk_btree_high_key(const struct xk_btree_ops *ops, void *block,
			uint32_t i);
void *xk_btree_ptr(const struct xk_btree_ops *ops, void *block,
		   uint32_t maxrecs, uint32_t i);

/* Header accessors that work for both block forms. */
uint32_t xk_btree_block_magic(const void *block);
uint16_t xk_btree_block_level(const void *block);
uint16_t xk_btree_block_numrecs(const void *block);
uint64_t xk_btree_block_sib(const struct xk_btree_ops *ops, const void *block,
			    int right);
/* The null sibling/pointer value for this tree's pointer width. */
uint64_t xk_btree_nullptr(const struct xk_btree_ops *ops);

/*
 * Verify one block: header (magic, UUID, self address, owner, level,
 * record count, sibling range), then record or key order and each
 * record's own checks.  Used as the buffer verifier of every tree.
 */
int xk_btree_block_verify(const struct xk_btree_ops *ops, struct xk_buf *bp,
			  struct xk_fail *f);

/* Walking a whole tree. */
struct xk_btree_walk {
	const struct xk_btree_ops *ops;
	int64_t		agno;		/* AG for short-form trees, else -1 */
	uint64_t	owner;		/* inode for bmbt, else 0 */
	uint64_t	root;		/* agbno or fsblock */
	unsigned int	levels;		/* as the header says */
	/*
	 * A root held in an inode fork (bmbt, the realtime groups' btrees):
	 * the fork bytes and their size.  When set, root is ignored and
	 * levels is the in-inode root's level + 1.
	 */
	const void	*iroot;
	unsigned int	iroot_size;
	unsigned int	flags;		/* XK_READ_* for each block read */
	void		*ctx;
	/* Called for each leaf record, in key order. */
	int		(*rec_fn)(void *ctx, const void *rec);
	/* Called for each block read, good or bad (bp->error says). */
	int		(*block_fn)(void *ctx, unsigned int level, uint64_t bno,
				    struct xk_buf *bp);
	/* Called for each problem found; the walk goes on around it. */
	void		(*fail_fn)(void *ctx, const struct xk_fail *f);
	/* Filled by the walk. */
	uint64_t	nblocks;
	uint64_t	nrecs;
	unsigned int	nproblems;
	/*
	 * The first read that failed for want of the block, not for its
	 * content (an I/O error, no memory): it is reported through
	 * fail_fn like any problem, and kept here so a caller can tell
	 * "could not look" from "is broken".
	 */
	int		read_err;
};

/*
 * Walk from the root block, depth first, checking every block through the
 * tree's verifier and the links between blocks: child level one below its
 * parent, parent keys bounding the child's, sibling chains, and that no
 * block is reached twice.  Returns 0 when clean, XK_ECORRUPT when any
 * problem was reported through fail_fn, another negative errno on an
 * operational error, or the first non-zero value a callback returned.
 */
XK_MUST_CHECK int xk_btree_walk(struct xk_mount *mp, struct xk_btree_walk *w);

#endif /* XFSKIT_BTREE_H */
