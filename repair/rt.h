/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What the classic realtime check (rt_check.c) and the realtime groups'
 * check (rtgroup_check.c) share: reading a bitmap or summary file and
 * comparing its words with the ones the realtime files' mappings give.
 */
#ifndef XFSKIT_REPAIR_RT_H
#define XFSKIT_REPAIR_RT_H

#include <xfskit/rtbitmap.h>

#include "repair.h"

/* A bitmap or summary file, as read. */
struct rt_file {
	const char	*name;		/* "bitmap" or "summary" */
	uint64_t	ino;
	uint64_t	nblocks;	/* blocks it must have */
	int64_t		rgno;		/* its realtime group, -1: classic */
	uint8_t		metatype;	/* XK_METAFILE_* it must have (groups) */
	uint32_t	block_bytes;	/* bytes of words per block */
	uint64_t	*fsb;		/* its blocks on the data device */
	uint8_t		*data;		/* nblocks * block_bytes bytes of
					   host-order words, or NULL */
};

/*
 * Read file's inode and blocks: a finding about the inode plans fix
 * (classic) or refuses the repair (groups), and leaves file->data NULL
 * (the contents are then not compared).  A group's block whose header
 * is wrong is a finding too, its words still compared.  Returns 0 or an
 * operational error.
 */
XK_MUST_CHECK int rt_file_read(struct repair_ctx *rc, struct rt_file *file,
			       unsigned int fix);
void rt_file_free(struct rt_file *file);

/*
 * Each block of file against want (the same layout), a finding of kind
 * pr per block that differs naming its first and last differing words
 * as xfs_repair does.  Returns the number of blocks that differ.
 */
uint64_t rt_compare(struct repair_ctx *rc, enum problem pr,
		    const struct rt_file *file, const uint8_t *want);

/*
 * The claims sorted, and two files claiming one realtime extent (or one
 * file a block twice) reported as conflicts, the later inode planned
 * cleared.  linear(sb, start) gives a claim's block as a linear one
 * (extent x is blocks x * rextsize onwards); mark(ctx, x, n) is called
 * for extents [x, x + n) of every claim.
 */
void rt_claims_walk(struct repair_ctx *rc,
		    uint64_t (*linear)(const struct xk_sb *, uint64_t),
		    void (*mark)(void *ctx, uint64_t x, uint64_t n),
		    void *ctx);

/* rtgroup.c: each group's bitmap and summary inode, by name. */
struct rtg_names {
	uint32_t	rgcount;
	uint64_t	*bitmap;	/* [rgcount], 0: none found */
	uint64_t	*summary;
	uint64_t	*rmap;		/* N.rmap, N.refcount */
	uint64_t	*refcount;
	uint64_t	dir;		/* /rtgroups, 0: none found */
};
/* Fill n from the metadata tree; 0, or an operational error. */
XK_MUST_CHECK int rtg_find_inodes(struct repair_ctx *rc,
				  struct rtg_names *n);

/*
 * The bitmaps the mappings give, each group's (rbmblocks blocks' words)
 * after the one before: allocated (-ENOMEM), set all free but group 0's
 * first extent (the realtime superblock's), then the extents of every
 * claim marked in use: rt_claims_walk(rc, rtg_linear, rtg_mark, w).
 */
struct rtg_want {
	const struct xk_sb	*sb;
	uint8_t			*bm;
	uint64_t		group_bytes;	/* one group's bitmap */
};
XK_MUST_CHECK int rtg_bitmaps_alloc(struct rtg_want *w);
void rtg_bitmaps_init(struct rtg_want *w);
void rtg_mark(void *ctx, uint64_t x, uint64_t n);
uint64_t rtg_linear(const struct xk_sb *sb, uint64_t rtb);

/* rtgroup_check.c: a finding that refuses the repair (nothing written). */
void rtg_refuse(struct repair_ctx *rc);
/* rtgroup_check.c: phase_rt on a filesystem with realtime groups. */
XK_MUST_CHECK int phase_rtgroups(struct repair_ctx *rc);
/* rtgroup_fix.c: RTFIX_GROUPS, each group's files rewritten whole. */
XK_MUST_CHECK int rtg_rewrite(struct repair_ctx *rc);
/* rt_fix.c: sb_frextents set to nfree in the primary and the handle. */
XK_MUST_CHECK int rt_set_frextents(struct repair_ctx *rc, uint64_t nfree);

/*
 * rtbtree.c: a realtime group's rmap or refcount inode (META_BTREE data
 * fork): its btree blocks claimed as the inode's and counted in
 * *nblocks; problems are left to rtb_check_group.  0, or the run's
 * error.
 */
XK_MUST_CHECK int rtb_fork_blocks(struct repair_ctx *rc, uint64_t ino,
				  const struct xk_dinode *dip,
				  uint64_t *nblocks);
/*
 * Group g's rmap and refcount btrees (when the features have them)
 * against the realtime files' mappings; rt_claims_walk must have sorted
 * the claims.  0, or an operational error.
 */
XK_MUST_CHECK int rtb_check_group(struct repair_ctx *rc,
				  const struct rtg_names *n, uint32_t g);

/* RTFIX_BTREES: every tree that differs from the mappings, rewritten. */
XK_MUST_CHECK int rtb_rewrite(struct repair_ctx *rc, unsigned long *applied);
/* rtbtree_fix.c: nrecs on-disk records into tree ino's own blocks. */
XK_MUST_CHECK int rtb_tree_write(struct repair_ctx *rc, uint64_t ino,
				 const struct xk_btree_ops *ops,
				 const uint8_t *recs, uint64_t nrecs);

#endif /* XFSKIT_REPAIR_RT_H */
