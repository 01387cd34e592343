/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Growing the data section of an unmounted filesystem (xfskit-resize),
 * with the result the kernel's growfs leaves:
 *  1. the new size is rounded as the kernel rounds it: a tail shorter
 *     than XK_MIN_AG_BLOCKS past the last whole AG is left unused;
 *  2. the last AG grows up to agblocks: its AGF and AGI lengths, and
 *     the new space freed into its bnobt and cntbt in place (merged with
 *     a free extent ending at the old end; libfs/grow_freesp.c); the
 *     rmapbt gains nothing (free space has no owner) and the AGFL is
 *     left as it is;
 *  3. each new AG gets the headers and btree roots of a fresh AG (the
 *     libfs/mkfs initializers) with an empty AGFL, as the kernel writes
 *     them;
 *  4. the primary superblock gets the new dblocks, agcount and fdblocks
 *     (grown by the new free space) and null quota inodes where they
 *     were 0; every secondary, old and new, becomes a copy of it that
 *     keeps its own LSN.  imax_pct and the log are untouched.
 * Everything is read and checked before the first write.  The handle's
 * NEEDSREPAIR guard (needsrepair.h, armed here if it is not) marks the
 * primary (still the old size) before the first write; then come the
 * new AG headers, the last AG, the secondaries, the primary, and last
 * the guard's clearing of the mark: a run stopped half-way is never
 * mounted, and xfs_repair makes it consistent.
 */
#ifndef XFSKIT_GROW_H
#define XFSKIT_GROW_H

#include <xfskit/errors.h>

#include <stddef.h>
#include <stdint.h>

struct xk_mount;

struct xk_grow_plan {
	uint64_t	old_dblocks, new_dblocks;
	uint32_t	old_agcount, new_agcount;
	/* The old last AG's length before and after (equal: no change). */
	uint32_t	last_old_len, last_new_len;
	uint64_t	new_free;	/* added to sb_fdblocks */
	uint64_t	unused;		/* blocks of a tail too small for an AG */
};

/*
 * Plan growing to `want` blocks (rule 1).  -ENOSPC when want is below
 * the current size (a shrink), 0 otherwise; new_dblocks may equal
 * old_dblocks (nothing to do).
 */
XK_MUST_CHECK int xk_grow_plan(const struct xk_mount *mp, uint64_t want,
			       struct xk_grow_plan *p);

/*
 * Carry out the plan on a writable handle whose log is clean.  Returns
 * 0, or a negative errno with a sentence in msg; when the error comes
 * before the first write (a damaged header; -EOPNOTSUPP: freeing the
 * new space of the last AG would split a full free-space btree leaf or
 * leave one under half full) nothing was written.  After an error the
 * cached blocks may hold unwritten edits: discard the handle
 * (xk_mount_discard), never flush it.
 */
XK_MUST_CHECK int xk_grow_apply(struct xk_mount *mp,
				const struct xk_grow_plan *p, char *msg,
				size_t msglen);

#endif /* XFSKIT_GROW_H */
