/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The one walker over all metadata: every block reachable from the AG
 * headers, handed to a visitor with its type, address, owner and place.
 * Per AG, in this order: the superblock, AGF, AGI and AGFL; the bnobt,
 * cntbt, rmapbt and refcountbt (when the AGF passes its verifier); the
 * inobt and finobt (when the AGI does); then each inode the inobt calls
 * allocated, each followed by its data and attr fork bmbt blocks, then
 * its directory, remote symlink and attribute blocks (and the blocks of
 * the quota and realtime metadata inodes, when asked).  The internal
 * log's extent comes last, when asked.
 *
 * XK_WALK_DEPTH_FIRST changes two things, for a visitor that writes what
 * it meets as it goes (metadump): the finobt comes before the inobt,
 * and each inobt record's inodes are visited as the record is met, so
 * the inobt's blocks and its inodes interleave; and each fork's mapped
 * blocks follow its own bmbt blocks (data fork, then attr fork).
 *
 * XK_WALK_BY_HEADER instead puts each AG header before what it roots:
 * the AGF, the bnobt, cntbt, rmapbt and refcountbt, the AGFL; then the
 * AGI, the inobt and finobt (the finobt first when depth first).
 *
 * Damage does not stop the walk: a block that fails its verifier is
 * still visited (bp->error says why) and reported through fail; a btree
 * is walked around its bad blocks (xk_btree_walk); an inode that fails
 * its verifier is visited but its forks are not followed, unless its
 * CRC alone is wrong (a copy with a fresh CRC passes), as a btree block
 * with a bad CRC alone is still walked.  An AGF or AGI that fails its
 * verifier roots no walk, unless the visitor's follow says otherwise.
 */
#ifndef XFSKIT_WALK_H
#define XFSKIT_WALK_H

#include <stdint.h>

#include <xfskit/btree.h>
#include <xfskit/buf.h>
#include <xfskit/mount.h>

enum xk_walk_kind {
	XK_WALK_SB,
	XK_WALK_AGF,
	XK_WALK_AGI,
	XK_WALK_AGFL,
	XK_WALK_BTREE,		/* per-AG btree or bmbt block: type names it */
	XK_WALK_INODE,
	XK_WALK_DIR,
	XK_WALK_ATTR,
	XK_WALK_SYMLINK,
	XK_WALK_DQUOT,
	XK_WALK_RTMETA,		/* realtime bitmap or summary block */
	XK_WALK_ICLUSTER,	/* an inode cluster buffer (XK_WALK_CLUSTERS) */
	XK_WALK_LOG,		/* the whole internal log, not read */
	XK_WALK_NKINDS
};

/* Filesystem blocks a directory block may span (64 KiB of 1 KiB). */
#define XK_WALK_MAX_DIRBLK	64

enum xk_walk_flags {
	XK_WALK_QUOTA	= 1u << 0,	/* visit the quota inodes' blocks */
	XK_WALK_LOG_EXTENT = 1u << 1,	/* visit the internal log's extent */
	XK_WALK_RT	= 1u << 2,	/* visit the rt bitmap and summary */
	/*
	 * Visit each cluster buffer of an inode chunk (the sparse holes
	 * skipped) before the allocated inodes in it.
	 */
	XK_WALK_CLUSTERS = 1u << 3,
	XK_WALK_DEPTH_FIRST = 1u << 4,	/* the order above */
	XK_WALK_BY_HEADER = 1u << 5,	/* the order above */
	/* Not each AG's superblock (for a caller that checks them apart). */
	XK_WALK_NO_SB	= 1u << 6,
	/* Each AG's headers and btrees only: no inodes, no fork blocks. */
	XK_WALK_NO_INODES = 1u << 7,
};

struct xk_walk_block {
	enum xk_walk_kind kind;
	/* "sb", "agf", "agi", "agfl", a btree's name ("bnobt", "bmbt"...),
	 * "inode", "dir3", "attr3", "symlink", "dqblk", "rtbitmap",
	 * "rtsummary", "icluster", "log". */
	const char	*type;
	uint64_t	daddr;
	uint32_t	len;		/* bytes */
	int64_t		agno;		/* -1 for inodes and their blocks */
	uint64_t	owner;		/* the inode, 0 for AG metadata */
	uint64_t	pos;		/* btree level, file block, or a cluster's
				 * first agino */
	const struct xk_btree_ops *ops;	/* XK_WALK_BTREE: the tree's */
	/*
	 * The block as read (bp->error is the verifier's verdict) and its
	 * bytes (an inode's own bytes inside its cluster buffer); both NULL
	 * when it could not be read (err says why) and for the log.
	 */
	struct xk_buf	*bp;
	const uint8_t	*data;
	int		err;
	/*
	 * A directory block: the disk address of each of its filesystem
	 * blocks, which may lie in different extents (data holds them
	 * joined; bp is then the walk's own, not the cache's).  A block
	 * with a hole in it was reported through fail; each block of it
	 * that is mapped is then visited alone, unverified (bp NULL, data
	 * the raw bytes, err XK_ECORRUPT, npieces 1).
	 */
	const uint64_t	*pieces;
	unsigned int	npieces;
	/* XK_WALK_BTREE: the block's number in the tree's pointers (an
	 * agbno in a per-AG tree, an fsbno in a bmbt). */
	uint64_t	bno;
};

/* One btree as walked: a per-AG tree or an inode's bmbt. */
struct xk_walk_tree {
	const struct xk_btree_ops *ops;
	int64_t		agno;		/* -1 for a bmbt */
	uint64_t	owner;		/* the inode of a bmbt, else 0 */
	/* Filled when the tree is done (xk_btree_walk's counts). */
	uint64_t	nblocks;	/* blocks read */
	uint64_t	nrecs;		/* leaf records met */
	/*
	 * 0: walked clean; XK_ECORRUPT: problems reported; else what
	 * stopped it (an operational error or a callback's value), which
	 * then stops the whole walk.
	 */
	int		err;
};

struct xk_walk {
	unsigned int	flags;		/* XK_WALK_* */
	void		*ctx;
	/* Each block; a non-zero return stops the walk and is returned. */
	int		(*visit)(void *ctx, const struct xk_walk_block *b);
	/*
	 * Each problem met: a block failing its verifier (after its visit),
	 * a btree's structural problem or unreadable block, an inode
	 * failing its verifier.
	 */
	void		(*fail)(void *ctx, const struct xk_fail *f);
	/*
	 * Optional.  follow: after an AGF's or AGI's visit (b as visited),
	 * whether to walk what it roots: its trees, and an AGF's AGFL.
	 * Unset, a header's trees are walked when it passes its verifier
	 * and the AGFL always.
	 * rec: each leaf record of each tree; non-zero stops the walk.
	 * tree_fail: a tree's problems (unset: fail gets them).  tree_done:
	 * each tree once walked, however it ended.
	 */
	int		(*follow)(void *ctx, const struct xk_walk_block *b);
	int		(*rec)(void *ctx, const struct xk_walk_tree *t,
			       const void *rec);
	void		(*tree_fail)(void *ctx, const struct xk_walk_tree *t,
				     const struct xk_fail *f);
	void		(*tree_done)(void *ctx, const struct xk_walk_tree *t);
	/* Filled by the walk. */
	uint64_t	nvisits[XK_WALK_NKINDS];
	uint64_t	ninodes;	/* allocated inodes met, read or not */
	unsigned int	nproblems;
};

/*
 * Walk AGs first_ag .. last_ag (inclusive) and, with the flags, the
 * log.  Returns 0 when clean, XK_ECORRUPT when a problem was reported,
 * the first non-zero value visit returned, or a negative errno for an
 * operational error (memory).
 */
int xk_walk_metadata(struct xk_mount *mp, uint32_t first_ag,
		     uint32_t last_ag, struct xk_walk *w)
	__attribute__((warn_unused_result));

#endif /* XFSKIT_WALK_H */
