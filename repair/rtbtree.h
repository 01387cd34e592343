/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What the realtime groups' btree check (rtbtree_check.c) and rewrite
 * (rtbtree_fix.c) share (rtbtree.c): reading a tree and comparing its
 * records with the ones the realtime files' mappings give.
 */
#ifndef XFSKIT_REPAIR_RTBTREE_H
#define XFSKIT_REPAIR_RTBTREE_H

#include <xfskit/btree.h>

#include "rt.h"

/* An rmap record (owner, offset with flags) or refcount record (owner:
 * the count, off: 1 for a CoW staging extent), group-relative. */
struct rtb_rec {
	uint64_t	start, len, owner, off;
};

/* One tree's check: its records gathered, its problems reported. */
struct rtb_tree {
	struct repair_ctx	*rc;
	const struct xk_btree_ops *ops;
	XK_VEC_OF(struct rtb_rec) recs;
	unsigned int		nfound;
	unsigned int		nhard;	/* of them, ones that lose records */
	int			quiet;	/* rtb_rewrite: count, report nothing */
	uint64_t		ino;
	unsigned int		ndiff;	/* records that differ */
	uint64_t		nwant;	/* records the mappings give */
	unsigned int		root_level, nleaves, fork_size;
};

/* The ops of a metafile type's tree, or NULL. */
const struct xk_btree_ops *rtb_ops(uint16_t metatype);
/* A walk of the tree rooted in dip's data fork (levels 0: no room). */
void rtb_walk_init(struct xk_btree_walk *w, struct xk_mount *mp, uint64_t ino,
		  const struct xk_dinode *dip, const struct xk_btree_ops *ops);
/* A finding of kind PR_RT_BTREE about inode ino. */
void rtb_finding(struct repair_ctx *rc, uint64_t ino, const char *check,
		 const char *msg);
/* Group g's shared runs (struct rtb_rec: owner the count), in order. */
XK_MUST_CHECK int rtb_refc_want(struct repair_ctx *rc, uint32_t g,
				struct xk_vec *out);
/* Whether t->nwant records fit the tree's blocks as they are. */
int rtb_tree_fits(struct repair_ctx *rc, const struct rtb_tree *t);
/*
 * Tree ino of group g read and compared, findings reported unless
 * t->quiet; with out, the records the mappings give appended to it
 * instead of the comparison.  *ok: walked whole.  0, or the run's error.
 */
XK_MUST_CHECK int rtb_tree_judge(struct repair_ctx *rc, uint32_t g,
				 uint64_t ino, uint16_t metatype,
				 struct rtb_tree *t, struct xk_vec *out,
				 int *ok);

#endif /* XFSKIT_REPAIR_RTBTREE_H */
