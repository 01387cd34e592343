// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Inode forks mapped to extents through libfs's fork reader, salvaging:
 * every extent is checked (non-empty, inside one AG, or inside the
 * realtime volume for a realtime file's data, in file-offset order
 * without overlap) before a caller sees it, each problem is reported
 * where it was met, and bmbt blocks are claimed for the inode.
 */
#include <string.h>

#include <xfskit/fork.h>
#include <xfskit/format/rtgroup.h>

#include "repair.h"
#include "rt.h"

/*
 * Only a regular file's data may be preallocated; elsewhere the flag
 * would hide written blocks, so it goes and the data stays.
 */
static void
check_unwritten(struct repair_ctx *rc, uint64_t ino,
		const struct xk_dinode *dip, int fork,
		const struct xk_bmbt_irec *r)
{
	if (!r->unwritten || (fork == XK_DATA_FORK &&
	    (xk_be16_get(dip->di_mode) & XK_S_IFMT) == XK_S_IFREG))
		return;
	if (!report(rc, PR_FORK_BAD, fork == XK_DATA_FORK ? "data fork" :
		    "attr fork", -1, ino, XK_NO_DADDR, "unwritten",
		    "extent at offset %llu is marked unwritten",
		    (unsigned long long)r->startoff))
		return;
	if (xk_dfork_format(dip, fork) == XK_DINODE_FMT_EXTENTS)
		plan_inode(rc, ino, IFIX_WRITTEN, 0);
	else
		plan_none(rc);
}

/*
 * A realtime extent: inside the realtime volume, a valid file range, in
 * offset order.  The reader checks only data-device extents.
 */
static int
rt_extent_ok(struct repair_ctx *rc, uint64_t ino,
	     const struct xk_bmbt_irec *r, uint64_t *next_off)
{
	const struct xk_sb *sb = &rc->mp->sb;
	/* With realtime groups the block is segmented: inside one group. */
	int in_volume = xk_sb_has_rtgroups(sb) ?
			xk_rtb_range_valid(sb, r->startblock, r->blockcount) :
			r->startblock + r->blockcount <= sb->rblocks;

	if (r->blockcount == 0 ||
	    r->startblock + r->blockcount < r->startblock || !in_volume ||
	    !xk_fileext_valid(rc->mp, r->startoff, r->blockcount)) {
		report(rc, PR_FORK_BAD, "data fork", -1, ino, XK_NO_DADDR,
		       "extent", "realtime extent at offset %llu, block "
		       "%llu, length %llu is not valid",
		       (unsigned long long)r->startoff,
		       (unsigned long long)r->startblock,
		       (unsigned long long)r->blockcount);
		return 0;
	}
	if (r->startoff < *next_off) {
		report(rc, PR_FORK_BAD, "data fork", -1, ino, XK_NO_DADDR,
		       "extent order", "extent at offset %llu overlaps or "
		       "precedes the one before",
		       (unsigned long long)r->startoff);
		return 0;
	}
	*next_off = r->startoff + r->blockcount;
	return 1;
}

int
walk_fork(struct repair_ctx *rc, uint64_t ino, const struct xk_dinode *dip,
	  int fork, uint64_t *bmbt_blocks, const struct fork_extent_fn *cb)
{
	struct xk_fork_map map = { 0 };
	uint64_t owner_off = XK_RMAP_OFF_BMBT_BLOCK |
			     (fork == XK_ATTR_FORK ? XK_RMAP_OFF_ATTR_FORK : 0);
	uint64_t p = 0;
	int fmt = xk_dfork_format(dip, fork);
	const char *fname = fork == XK_DATA_FORK ? "data fork" : "attr fork";
	uint64_t next_off = 0, rtbad = 0;
	int err, rt, ret = 0;

	*bmbt_blocks = 0;
	/* A realtime group's rmap or refcount btree (rtbtree.c). */
	if (fmt == XK_DINODE_FMT_META_BTREE && fork == XK_DATA_FORK)
		return rtb_fork_blocks(rc, ino, dip, bmbt_blocks);
	if (fmt != XK_DINODE_FMT_EXTENTS && fmt != XK_DINODE_FMT_BTREE)
		return 0;
	/* A realtime file's data extents are realtime block numbers. */
	rt = fork_is_rt(rc->mp, dip, fork);
	err = xk_fork_read(rc->mp, ino, dip, fork, XK_FORK_SALVAGE |
			   (rt ? 0 : XK_FORK_CHECK) | XK_FORK_BLOCKS, &map);
	/* Memory or I/O: the run stops; anything else is damage. */
	if (err && err != XK_ECORRUPT &&
	    repair_oserr(rc, err, "reading the %s of inode %llu", fname,
			 (unsigned long long)ino)) {
		xk_fork_map_free(&map);
		return rc->found.error;
	}
	for (uint64_t i = 0; i < map.nblk && !rc->found.error; i++)
		claim_fsb(rc, map.blk[i].fsb, 1, ino, owner_off);
	if (rc->found.error) {
		xk_fork_map_free(&map);
		return rc->found.error;
	}
	*bmbt_blocks = map.nblk;
	/* Each problem in its place among the extents, as it was met. */
	for (uint64_t i = 0; i <= map.next && ret >= 0; i++) {
		while (p < map.nprob && map.prob[p].at <= i)
			fix_problem(rc, PR_FORK_BAD, &map.prob[p++].fail);
		if (i < map.next && rt &&
		    !rt_extent_ok(rc, ino, &map.ext[i], &next_off)) {
			rtbad++;
			continue;
		}
		if (i < map.next)
			check_unwritten(rc, ino, dip, fork, &map.ext[i]);
		if (i < map.next && cb)
			ret = cb->fn(cb->ctx, &map.ext[i]);
	}
	/* A callback's error (memory) ends the walk: the run stops. */
	if (ret < 0) {
		xk_fork_map_free(&map);
		return repair_error(rc, ret, "mapping the %s of inode %llu",
				    fname, (unsigned long long)ino);
	}
	ret = (int)(map.nprob + rtbad);
	/*
	 * A directory in extent format that maps nothing yet has a size or
	 * blocks has lost its map (its extent count zeroed): its blocks are
	 * still on disk, for the device scan to bring back (reasm.c), where
	 * taking the count at its word frees them and orphans every child.
	 */
	if (ret == 0 && fork == XK_DATA_FORK && fmt == XK_DINODE_FMT_EXTENTS &&
	    map.next == 0 &&
	    (xk_be16_get(dip->di_mode) & XK_S_IFMT) == XK_S_IFDIR &&
	    (xk_be64_get(dip->di_size) || xk_be64_get(dip->di_nblocks)) &&
	    report(rc, PR_FORK_BAD, fname, -1, ino, XK_NO_DADDR, "nextents",
		   "a directory of %llu bytes and %llu blocks maps no extent",
		   (unsigned long long)xk_be64_get(dip->di_size),
		   (unsigned long long)xk_be64_get(dip->di_nblocks)))
		ret = 1;
	/* A count that disagrees is corrected, not a reason to rebuild. */
	if (ret == 0 && fmt == XK_DINODE_FMT_BTREE &&
	    map.next != xk_dinode_fork_nextents(dip, fork) &&
	    report(rc, PR_FORK_BAD, fname, -1, ino, XK_NO_DADDR, "nextents",
		   "inode says %llu extents, its bmbt holds %llu",
		   (unsigned long long)xk_dinode_fork_nextents(dip, fork),
		   (unsigned long long)map.next))
		plan_inode(rc, ino, fork == XK_DATA_FORK ? IFIX_NEXTENTS :
			   IFIX_ANEXTENTS, map.next);
	xk_fork_map_free(&map);
	return ret;
}
