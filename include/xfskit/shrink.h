/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Shrinking the data section of an unmounted filesystem (xfskit-resize)
 * where the part cut off holds no used block; nothing moves.  The rules:
 *  1. the new size is rounded as the kernel's growfs rounds it: a tail
 *     shorter than XK_MIN_AG_BLOCKS past the last whole AG is dropped
 *     too, and at least 2 AGs remain (the kernel's shrink refuses fewer);
 *  2. every AG past the new last one is removed whole, and must be
 *     empty: no inodes, not the internal log, every block but its fixed
 *     headers and btree roots free (in its bnobt or on its AGFL), the
 *     free blocks counted by walking the bnobt, not trusted to the AGF;
 *  3. the new last AG, when it gets shorter, must end in one free extent
 *     covering the part cut off, reach no inode chunk past its new end
 *     (the whole chunk, sparse holes included, as the kernel checks) and
 *     not the internal log, and keep as many free blocks (AGFL included)
 *     as the per-AG reservation of its finobt, refcountbt and rmapbt
 *     asks (the finobt's part from the AG's length before the shrink,
 *     the others' from the new length: the kernel's shrink computes it
 *     so, and its limit equals ours without rmapbt; with rmapbt the
 *     kernel refuses a few dozen blocks more, for reasons not modelled
 *     here, while a mount of our result reserves without trouble); that
 *     extent is taken out of its bnobt and
 *     cntbt in place (libfs/grow_freesp.c), as the kernel's shrink of
 *     the last AG does (xfs_growfs -D since Linux 5.12), and its AGF and
 *     AGI lengths, free block count and longest extent follow;
 *  4. the primary superblock gets the new dblocks, agcount and fdblocks
 *     (less the free blocks, AGFL and free-space btree blocks removed);
 *     the secondaries of the remaining AGs become copies of it (each
 *     keeps its own LSN); those of removed AGs are left past the end,
 *     unreferenced.  icount, ifree, imax_pct and the log are untouched.
 * The write order is growing's: the primary, still the old size, marked
 * NEEDSREPAIR first (the handle's guard, needsrepair.h), the last AG's
 * headers and btrees, the secondaries, the primary, and last the
 * guard's clearing of the mark.
 */
#ifndef XFSKIT_SHRINK_H
#define XFSKIT_SHRINK_H

#include <xfskit/errors.h>

#include <stddef.h>
#include <stdint.h>

struct xk_mount;

#define XK_SHRINK_NAMED_INODES	4

/* What stops a shrink: the highest AG holding used blocks past the end. */
struct xk_shrink_block {
	uint32_t	agno;
	uint32_t	cut;		/* first agbno removed (0: the AG) */
	uint32_t	length;		/* the AG's length */
	uint64_t	used;		/* used blocks in [cut, length) */
	int		log;		/* the internal log lies there */
	uint32_t	chunk_end;	/* an inode chunk reaches up to here */
	/* The free blocks the AG would keep, and its btrees' reservation. */
	uint64_t	resv_free, resv_need;
	int		too_few_ags;	/* the size leaves fewer than 2 AGs */
	/*
	 * With rmapbt, the owners of the used blocks there: blocks of
	 * inodes (data, attr, bmbt), how many inodes and the lowest few,
	 * inode chunks, the log, other AG metadata.
	 */
	int		owners_known;
	uint64_t	inode_blocks, chunk_blocks, log_blocks, meta_blocks;
	uint64_t	ninodes;
	uint64_t	inodes[XK_SHRINK_NAMED_INODES];
};

struct xk_shrink_plan {
	uint64_t	old_dblocks, new_dblocks;
	uint32_t	old_agcount, new_agcount;
	/* The new last AG's length before and after. */
	uint32_t	last_old_len, last_new_len;
	uint64_t	removed_free;	/* taken from sb_fdblocks */
	uint64_t	unused;		/* asked for but dropped (rule 1) */
	/* Smallest size reachable without moving data (rules 1-3). */
	uint64_t	min_dblocks;
	struct xk_shrink_block block;	/* when the plan is refused */
};

/*
 * Plan shrinking to `want` blocks (want below the current size).
 * Reads the AG headers and walks the free-space and inode btrees of the
 * AGs concerned.  0: the plan can be applied; -ENOSPC: used blocks (or
 * the log, an inode chunk, the AG count) stop it, p->block says which
 * and p->min_dblocks what is possible today; another negative errno
 * with a sentence in msg when a header or btree cannot be read or does
 * not add up (run repair first).
 */
XK_MUST_CHECK int xk_shrink_plan(struct xk_mount *mp, uint64_t want,
				 struct xk_shrink_plan *p, char *msg,
				 size_t msglen);

/*
 * What xk_shrink_apply() does before its first write, for -n: the blocks
 * read and verified, the free-space btrees edited in memory (0, or the
 * error and sentence apply would give: -EOPNOTSUPP for a leaf that
 * would split or be left under half full).  Nothing is written; the
 * cached blocks hold the edits, so discard the handle afterwards
 * (xk_mount_discard), never flush it.
 */
XK_MUST_CHECK int xk_shrink_check(struct xk_mount *mp,
				  const struct xk_shrink_plan *p, char *msg,
				  size_t msglen);

/*
 * Carry out a plan xk_shrink_plan() accepted, on a writable handle
 * whose log is clean.  0, or a negative errno with a sentence in msg;
 * an error before the first write (a damaged header; -EOPNOTSUPP: a
 * free-space btree leaf would split or be left under half full) leaves
 * everything as it was.  After an error discard the handle, never flush
 * it.
 */
XK_MUST_CHECK int xk_shrink_apply(struct xk_mount *mp,
				  const struct xk_shrink_plan *p, char *msg,
				  size_t msglen);

/*
 * What the used blocks of the part cut off are, for moving data out of
 * it (step 2 of issue 25; the move itself is not implemented yet).  From
 * the rmapbt of the removed AGs and of the new last AG's tail: regular
 * files' data extents (written or unwritten, extents or btree forks) of
 * files without the reflink flag are what a move can take; the rest it
 * must refuse and names.  Blocks of removed AGs' own free-space btrees
 * and free list are left out (they go with the AG); the AGs' other
 * btree blocks there are counted apart (a move rebuilds every AG's
 * btrees, and puts none of them there).
 */
struct xk_shrink_moves {
	/* Movable: unshared data extents of regular files. */
	uint64_t	file_blocks, file_extents, nfiles;
	/* The AGs' own btrees and free lists: rebuilt elsewhere by a move. */
	uint64_t	agtree_blocks;
	/* Not movable (yet). */
	uint64_t	shared_blocks;	/* of files with the reflink flag */
	uint64_t	bmbt_blocks;	/* block-map btree blocks */
	uint64_t	dir_blocks, attr_blocks, symlink_blocks;
	uint64_t	chunk_blocks, log_blocks;
	uint64_t	meta_blocks;	/* AG btrees, quota/rt/metadir files */
	/* Free blocks below the new end (where moved data would go). */
	uint64_t	free_below;
};

/*
 * Survey the part cut off by plan p (one xk_shrink_plan() refused with
 * -ENOSPC for used blocks, or accepted).  0; -EOPNOTSUPP without the
 * rmapbt; another negative errno with a sentence in msg when a header,
 * btree or owner inode cannot be read.  Writes nothing.
 */
XK_MUST_CHECK int xk_shrink_moves_survey(struct xk_mount *mp,
					 const struct xk_shrink_plan *p,
					 struct xk_shrink_moves *m, char *msg,
					 size_t msglen);

/*
 * Moving the regular files' data out of the part cut off, when it holds
 * nothing else (the survey's movable blocks only).  Prepare does it all
 * in the cache, writing nothing: the builder (xfskit/build.h), loaded
 * from the AGs' btrees, hands out no block of the part cut off; each
 * extent there is unmapped, freed, and mapped again to new blocks below
 * the new end (split where free space is), the file's bmbt rebuilt by
 * the builder, then every AG's btrees are rebuilt (commit).  A new
 * xk_shrink_plan() on the same handle then sees the part cut off free.
 * Write arms the NEEDSREPAIR guard (the primary is marked before the
 * first write), copies each piece's data (not
 * unwritten ones), syncs, then writes the cached metadata; the step-1
 * xk_shrink_apply() that follows clears the mark last.
 */
struct xk_shrink_piece {
	uint64_t	src, dst;	/* fsbno */
	uint32_t	len;
	int		unwritten;
};

struct xk_shrink_move {
	uint64_t		blocks, extents, nfiles;
	struct xk_shrink_piece	*piece;
	size_t			npieces, cap;
};

/*
 * 0; -EOPNOTSUPP (with msg) when the part cut off holds what a move
 * cannot take, or without rmapbt; -ENOSPC when the data does not fit
 * below the new end; another negative errno (msg) when metadata cannot
 * be read.  After an error, discard the handle.  On a read-only handle
 * (-n) the cache keeps the edits: discard it afterwards.
 */
XK_MUST_CHECK int xk_shrink_move_prepare(struct xk_mount *mp,
					 const struct xk_shrink_plan *p,
					 struct xk_shrink_move *mv, char *msg,
					 size_t msglen);
XK_MUST_CHECK int xk_shrink_move_write(struct xk_mount *mp,
				       const struct xk_shrink_move *mv,
				       char *msg, size_t msglen);
void xk_shrink_move_free(struct xk_shrink_move *mv);

#endif /* XFSKIT_SHRINK_H */
