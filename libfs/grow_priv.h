/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libfs/grow.c's in-place edit of one AG's free-space btrees
 * (libfs/grow_freesp.c).
 */
#ifndef XFSKIT_GROW_PRIV_H
#define XFSKIT_GROW_PRIV_H

#include <stddef.h>
#include <stdint.h>

#include <xfskit/buf.h>
#include <xfskit/format/btree.h>

struct xk_mount;

/* Every block a change touches is held here until written. */
#define GROW_FREESP_MAX_TOUCHED	(4 * XK_BTREE_MAXLEVELS)

struct grow_freesp {
	struct xk_mount	*mp;
	uint32_t	agno;
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
/* Dirty the blocks the change edited (the flush writes them). */
void grow_freesp_dirty(struct grow_freesp *fs);
void grow_freesp_release(struct grow_freesp *fs);

#endif /* XFSKIT_GROW_PRIV_H */
