/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Readahead that keeps pace with a walk (readahead.c): the walk lists
 * the byte ranges it will read, in the order it will read them, and
 * says where it is; the ranges are hinted to the kernel a bounded
 * distance ahead, neighbours merged into large requests.
 */
#ifndef XFSKIT_REPAIR_READAHEAD_H
#define XFSKIT_REPAIR_READAHEAD_H

#include <stddef.h>
#include <stdint.h>

#include <xfskit/libfs.h>

struct ra_range {
	uint64_t	off, len;	/* bytes on the device */
};

struct ra_plan {
	struct xk_dev	*dev;
	struct ra_range	*r;
	size_t		n, cap;
	size_t		hinted;		/* ranges hinted so far */
	size_t		done;		/* ranges the walk reached */
	uint64_t	ahead;		/* bytes hinted, not reached */
	/* An inode scan's plan (ra_chunks): its chunks, peeked ahead. */
	struct xk_mount	*mp;
	uint32_t	agno;
	const struct xk_inobt_rec *chunks;
	size_t		peeked;		/* chunks peeked so far */
	/* bmbt leaves of directories, to read when the scan is at due. */
	struct ra_leaf {
		uint64_t	fsb;
		size_t		due;
	}		leaves[64];
	size_t		nleaves;
};

void ra_init(struct ra_plan *ra, struct xk_dev *dev);
/* List the next range the walk will read (no-op if out of memory). */
void ra_add(struct ra_plan *ra, uint64_t off, uint64_t len);
/* The walk is about to read range i: keep the hints ahead of it. */
void ra_step(struct ra_plan *ra, size_t i);
void ra_free(struct ra_plan *ra);

/*
 * The inode chunks of one AG's scan, hinted as the scan goes; ra_step
 * also peeks at the chunks a little ahead of the scan and hints the
 * blocks of the directories in them.
 */
void ra_chunks(struct ra_plan *ra, struct xk_mount *mp, uint32_t agno,
	       const struct xk_inobt_rec *chunks, size_t nchunks);

#endif /* XFSKIT_REPAIR_READAHEAD_H */
