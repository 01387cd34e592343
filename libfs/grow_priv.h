/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What growing (libfs/grow.c) and shrinking (libfs/shrink.c) share: the
 * in-place edit of one AG's free-space btrees (libfs/grow_freesp.c) and
 * the superblock write sequence that keeps a stopped run from being
 * mounted.
 */
#ifndef XFSKIT_GROW_PRIV_H
#define XFSKIT_GROW_PRIV_H

#include <stddef.h>
#include <stdint.h>

#include <xfskit/buf.h>
#include <xfskit/format/btree.h>

struct xk_mount;
struct xk_sb;
struct xk_geom;

/* Every block a change touches is held here until written. */
#define GROW_FREESP_MAX_TOUCHED	(4 * XK_BTREE_MAXLEVELS)

struct grow_freesp {
	struct xk_mount	*mp;
	uint32_t	agno;
	/* For refusals: "removing the tail of"; NULL: a grow's wording. */
	const char	*doing;
	uint32_t	bno_root, bno_levels;	/* from the AGF */
	uint32_t	cnt_root, cnt_levels;
	struct xk_buf	*touched[GROW_FREESP_MAX_TOUCHED];
	int		changed[GROW_FREESP_MAX_TOUCHED];
	unsigned int	ntouched;
};

/*
 * Free [start, start + len), the space a grown AG gains past its old end
 * `start`, as the kernel's extent free does on trees that need no split
 * or rebalance: the bnobt record ending at start grows (or a record is
 * added at the end of the rightmost leaf), the cntbt record moves to its
 * new place; node keys follow a leaf's first record.  A change that
 * would split a full leaf or leave one under half full is refused with
 * -EOPNOTSUPP and a sentence in msg.  Blocks are edited in memory only
 * (grow_freesp_dirty() has them written); *longest gets the largest free
 * extent after the change.
 */
int grow_freesp_extend(struct grow_freesp *fs, uint32_t start, uint32_t len,
		       uint32_t *longest, char *msg, size_t msglen);
/*
 * Take [start + keep, start + len) out of the free extent (start, len)
 * that ends at the AG's end (a shrink of the AG): the bnobt record gets
 * the shorter length in place (or is deleted when keep is 0), the cntbt
 * record moves (or goes); the same in-place rules and refusals as
 * grow_freesp_extend().
 */
int grow_freesp_trim(struct grow_freesp *fs, uint32_t start, uint32_t len,
		     uint32_t keep, uint32_t *longest, char *msg,
		     size_t msglen);
/* Dirty the blocks the change edited (the flush writes them). */
void grow_freesp_dirty(struct grow_freesp *fs);
void grow_freesp_release(struct grow_freesp *fs);

/*
 * What a resize reads (and verifies) before its first write: the
 * superblocks of AGs 0 .. nsb-1, and the AGF, AGI and free-space btree
 * cursor of the one AG whose length changes (agf NULL: none).
 */
struct grow_held {
	struct xk_buf	*primary;
	struct xk_buf	**secondary;	/* [1 .. nsb-1] */
	uint32_t	nsb;
	struct xk_buf	*agf, *agi;
	struct grow_freesp freesp;
};

/* Read them; agno -1: no AG changes length.  A sentence in msg. */
int grow_held_read(struct xk_mount *mp, struct grow_held *h, uint32_t nsb,
		   int64_t agno, char *msg, size_t msglen);
/* The changed AG's new length in AGF and AGI, free blocks, longest. */
void grow_held_set_length(struct grow_held *h, uint32_t length,
			  int64_t dfree, uint32_t longest);
/* Dirty that AG's edited headers and btree blocks, and flush them. */
int grow_held_dirty(struct xk_mount *mp, struct grow_held *h);
void grow_held_release(struct grow_held *h);

/* The primary's bytes into a secondary (its own LSN kept), dirtied. */
void grow_copy_primary(struct xk_buf *bp, const struct xk_buf *primary);
/*
 * The handle's NEEDSREPAIR guard armed (needsrepair.h), if it is not:
 * the first write of the resize marks the primary as it is on disk (the
 * old size), synced; grow_finish_primary() clears it last.  Nothing is
 * written here.  A sentence in msg on error.
 */
int grow_guard_arm(struct xk_mount *mp, char *msg, size_t msglen);
/* The handle's size from here on (the verifiers check against it). */
void grow_set_size(struct xk_mount *mp, uint64_t dblocks, uint32_t agcount,
		   uint64_t fdblocks);
/*
 * The last: everything dirty flushed and synced, then the final primary
 * written (the guard keeps its mark) and synced, then the guard's
 * clearing of the mark, the run's last write.
 */
int grow_finish_primary(struct xk_mount *mp, struct xk_buf *primary);
/* A write failed: the handle's old size back, and the sentence. */
void grow_write_failed(struct xk_mount *mp, const struct xk_sb *old_sb,
		       const struct xk_geom *old_g, int err, char *msg,
		       size_t msglen);

#endif /* XFSKIT_GROW_PRIV_H */
