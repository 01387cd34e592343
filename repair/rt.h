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

/* rtgroup_check.c: phase_rt on a filesystem with realtime groups. */
XK_MUST_CHECK int phase_rtgroups(struct repair_ctx *rc);

#endif /* XFSKIT_REPAIR_RT_H */
