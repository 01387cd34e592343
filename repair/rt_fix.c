// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The realtime repairs rt_check.c plans (rc->plan.rt_fix):
 *  - a bitmap or summary inode that is free, of another type or of the
 *    wrong size, whose data fork still maps every block the file must
 *    have on the data device, is made a regular file of the right size
 *    again over those blocks (its contents follow in the next pass).
 *    The superblock names it, so it is never freed: a free inode would
 *    be handed out by the kernel while still used as the bitmap.
 *  - one whose fork maps no usable blocks (cleared, free, a fork lost)
 *    is written anew inside the AG rebuild (rt_build): its old claims
 *    are not fed, the builder allocates its blocks, and the contents
 *    are written with it, as xfs_repair reinitializes it.
 *  - the contents: the bitmap from the realtime files' mappings the
 *    check gathered, the summary from that bitmap, and sb_frextents
 *    from its free extents, rewritten whole.  Only in a pass that
 *    changes no inode, so that the mappings are final.
 */
#include <stdlib.h>
#include <string.h>

#include <xfskit/build.h>
#include <xfskit/init.h>
#include <xfskit/rtbitmap.h>

#include "rt.h"

/* Remake one realtime metadata inode over the blocks it maps. */
static int
remake_inode(struct repair_ctx *rc, uint64_t ino, uint64_t nblocks,
	     int bitmap, unsigned long *applied)
{
	struct xk_mount *mp = rc->mp;
	const char *name = bitmap ? "bitmap" : "summary";
	uint64_t *fsb = xk_calloc(nblocks ? nblocks : 1, sizeof(*fsb));
	struct xk_dinode *dip;
	struct xk_buf *bp;
	struct xk_fail f;
	uint16_t flags;
	int err;

	if (!fsb)
		return -ENOMEM;
	err = xk_inode_read(mp, ino, XK_READ_SALVAGE, &bp, &dip);
	if (err && !bp) {
		free(fsb);
		return xk_err_operational(err) ? err : 0;
	}
	err = xk_rt_file_map(mp, ino, dip, nblocks, fsb, &f);
	free(fsb);
	if (err || xk_dfork_format(dip, XK_DATA_FORK) !=
		   XK_DINODE_FMT_EXTENTS) {
		xk_buf_release(bp);
		if (xk_err_operational(err))
			return err;
		/* The check saw it mapped: something changed it since. */
		return err ? err : XK_ECORRUPT;
	}
	xk_be16_set(&dip->di_mode, XK_S_IFREG |
		    (xk_be16_get(dip->di_mode) & 07777));
	if (!xk_be32_get(dip->di_nlink))
		xk_be32_set(&dip->di_nlink, 1);
	xk_be64_set(&dip->di_size, nblocks * mp->g.blocksize);
	xk_be64_set(&dip->di_nblocks, nblocks);
	flags = xk_be16_get(dip->di_flags);
	if (bitmap)
		flags |= XK_DIFLAG_NEWRTBM;
	xk_be16_set(&dip->di_flags, flags);
	xk_inode_init_crc(mp, dip);
	xk_buf_dirty(bp);
	xk_buf_release(bp);
	action_report(rc, ACT_INODE_FIXED, ino, -1, "", ": made the realtime "
		      "%s again (a regular file of %llu bytes over the blocks "
		      "it maps)", name,
		      (unsigned long long)(nblocks * mp->g.blocksize));
	(*applied)++;
	return 0;
}

/* Write nblocks blocks of data over the file's blocks fsb[]. */
static int
write_file(struct xk_mount *mp, const uint64_t *fsb, uint64_t nblocks,
	   const uint8_t *data)
{
	uint32_t bsize = mp->g.blocksize;

	for (uint64_t i = 0; i < nblocks; i++) {
		struct xk_buf *bp;
		int err = xk_buf_get(mp, xk_fsb_to_daddr(mp, fsb[i]), bsize,
				     NULL, &bp);

		if (err)
			return err;
		memcpy(bp->data, data + (uint64_t)i * bsize, bsize);
		xk_buf_dirty(bp);
		xk_buf_release(bp);
	}
	return 0;
}

/* The bitmap and summary files' blocks (all-or-nothing: 0 or error). */
static int
map_file(struct xk_mount *mp, uint64_t ino, uint64_t nblocks, uint64_t *fsb)
{
	struct xk_dinode *dip;
	struct xk_buf *bp;
	struct xk_fail f;
	int err = xk_inode_read(mp, ino, 0, &bp, &dip);

	if (err)
		return err;
	err = xk_rt_file_map(mp, ino, dip, nblocks, fsb, &f);
	xk_buf_release(bp);
	return err;
}

int
rt_set_frextents(struct repair_ctx *rc, uint64_t nfree)
{
	struct xk_mount *mp = rc->mp;
	struct xk_sb disk;
	struct xk_buf *bp;
	int err = xk_sb_read(mp, 0, 0, &bp);

	if (err)
		return err;
	xk_sb_decode(&disk, (const struct xk_dsb *)bp->data);
	disk.frextents = nfree;
	xk_sb_encode((struct xk_dsb *)bp->data, &disk);
	xk_buf_dirty(bp);
	xk_buf_release(bp);
	mp->sb.frextents = nfree;
	return 0;
}

/*
 * The bitmap from the realtime files' mappings, the summary from it and
 * sb_frextents from its free extents, written over the bitmap's blocks
 * fbm[] and the summary's fsum[].
 */
static int
write_contents(struct repair_ctx *rc, const uint64_t *fbm,
	       const uint64_t *fsum)
{
	struct xk_mount *mp = rc->mp;
	struct xk_sb *sb = &mp->sb;
	uint64_t bsize = mp->g.blocksize, nfree = 0, old = sb->frextents;
	uint64_t nbm = sb->rbmblocks, nsum = xk_rt_sum_blocks(sb);
	uint8_t *bm = xk_malloc(nbm * bsize + 1);
	uint8_t *sum = xk_malloc(nsum * bsize + 1);
	int err = -ENOMEM;

	if (!bm || !sum)
		goto out;
	xk_rtbitmap_init_free(bm, nbm * bsize, sb->rextents);
	for (size_t i = 0; i < rc->scan.nrt_claims; i++)
		xk_rtbitmap_mark_blocks(sb, bm, rc->scan.rt_claims[i].start,
					rc->scan.rt_claims[i].len);
	xk_rtsummary_compute(sb, bm, sum, &nfree);
	err = write_file(mp, fbm, nbm, bm);
	if (!err)
		err = write_file(mp, fsum, nsum, sum);
	if (!err)
		err = rt_set_frextents(rc, nfree);
	if (err)
		goto out;
	action_report(rc, ACT_RT_REBUILT, 0, -1, NULL, " the realtime bitmap "
		      "(%llu blocks) and summary (%llu blocks) from the "
		      "realtime files' mappings; %llu free realtime extents "
		      "(the superblock said %llu)", (unsigned long long)nbm,
		      (unsigned long long)nsum, (unsigned long long)nfree,
		      (unsigned long long)old);
out:
	free(bm);
	free(sum);
	return err;
}

static int
rewrite_contents(struct repair_ctx *rc, unsigned long *applied)
{
	struct xk_mount *mp = rc->mp;
	const struct xk_sb *sb = &mp->sb;
	uint64_t nbm = sb->rbmblocks, nsum = xk_rt_sum_blocks(sb);
	uint64_t *fbm = xk_calloc(nbm + 1, sizeof(*fbm));
	uint64_t *fsum = xk_calloc(nsum + 1, sizeof(*fsum));
	int err = -ENOMEM;

	if (!fbm || !fsum)
		goto out;
	/* The check read both: a failure now is not the filesystem's. */
	err = map_file(mp, sb->rbmino, nbm, fbm);
	if (!err)
		err = map_file(mp, sb->rsumino, nsum, fsum);
	if (!err)
		err = write_contents(rc, fbm, fsum);
	if (!err)
		(*applied)++;
out:
	free(fbm);
	free(fsum);
	return err;
}

int
rt_apply(struct repair_ctx *rc, int inodes_changed, unsigned long *applied)
{
	const struct xk_sb *sb = &rc->mp->sb;
	unsigned int fix = rc->plan.rt_fix;
	int err = 0;

	/* New inodes wait for the AG rebuild (rt_build); phase_rt clears. */
	rc->plan.rt_fix = fix & RTFIX_NEW;
	if (fix & RTFIX_BITMAP_INODE)
		err = remake_inode(rc, sb->rbmino, sb->rbmblocks, 1, applied);
	if (!err && (fix & RTFIX_SUMMARY_INODE))
		err = remake_inode(rc, sb->rsumino, xk_rt_sum_blocks(sb), 0,
				   applied);
	if (err || inodes_changed ||
	    (fix & (RTFIX_BITMAP_INODE | RTFIX_SUMMARY_INODE | RTFIX_NEW)))
		return err;
	if (fix & RTFIX_CONTENTS)
		err = rewrite_contents(rc, applied);
	if (!err && (fix & RTFIX_GROUPS)) {
		err = rtg_rewrite(rc);
		if (!err)
			(*applied)++;
	}
	if (!err && (fix & RTFIX_BTREES))
		err = rtb_rewrite(rc, applied);
	return err;
}

int
rt_rebuild_pending(const struct repair_ctx *rc)
{
	return (rc->plan.rt_fix & RTFIX_NEW) != 0;
}

int
rt_being_rebuilt(const struct repair_ctx *rc, uint64_t owner)
{
	const struct xk_sb *sb = &rc->mp->sb;

	return ((rc->plan.rt_fix & RTFIX_BITMAP_NEW) && owner == sb->rbmino) ||
	       ((rc->plan.rt_fix & RTFIX_SUMMARY_NEW) && owner == sb->rsumino);
}

void
rt_build_prepare(struct repair_ctx *rc)
{
	const struct xk_sb *sb = &rc->mp->sb;

	/* The scan may have seen it free: it is fed in use. */
	if (rc->plan.rt_fix & RTFIX_BITMAP_NEW)
		mark_in_use(rc, sb->rbmino);
	if (rc->plan.rt_fix & RTFIX_SUMMARY_NEW)
		mark_in_use(rc, sb->rsumino);
}

/*
 * Write realtime metadata inode ino anew: a regular file of nblocks
 * blocks the builder allocates, whose addresses go to fsb[].  The
 * contents are the caller's to write.
 */
static int
build_inode(struct repair_ctx *rc, struct xk_bld *b, uint64_t ino,
	    uint64_t nblocks, int bitmap, uint64_t *fsb)
{
	uint64_t bsize = rc->mp->g.blocksize;
	struct xk_bld_inode ip;
	int err;

	xk_bld_inode_init(b, &ip, ino, XK_S_IFREG);
	ip.size = nblocks * bsize;
	ip.diflags = bitmap ? XK_DIFLAG_NEWRTBM : 0;
	err = xk_bld_fork_alloc(b, &ip, XK_DATA_FORK, 0, nblocks, 0);
	for (uint64_t i = 0; i < nblocks && !err; i++)
		err = xk_bld_fork_map(&ip.data, i, &fsb[i]);
	if (!err)
		err = xk_bld_inode_write(b, &ip);
	if (err) {
		free(ip.data.ext);
		return err;
	}
	action_report(rc, ACT_INODE_FIXED, ino, -1, "", ": made the realtime "
		      "%s anew, a regular file of %llu blocks on new blocks "
		      "(its old ones mapped none usable)",
		      bitmap ? "bitmap" : "summary",
		      (unsigned long long)nblocks);
	return 0;
}

int
rt_build(struct repair_ctx *rc, struct xk_bld *b)
{
	const struct xk_sb *sb = &rc->mp->sb;
	unsigned int fix = rc->plan.rt_fix;
	uint64_t nbm = sb->rbmblocks, nsum = xk_rt_sum_blocks(sb);
	uint64_t *fbm, *fsum;
	int err = -ENOMEM;

	if (!(fix & RTFIX_NEW))
		return 0;
	rc->plan.rt_fix = 0;
	fbm = xk_calloc(nbm + 1, sizeof(*fbm));
	fsum = xk_calloc(nsum + 1, sizeof(*fsum));
	if (!fbm || !fsum)
		goto out;
	err = fix & RTFIX_BITMAP_NEW ?
	      build_inode(rc, b, sb->rbmino, nbm, 1, fbm) :
	      map_file(rc->mp, sb->rbmino, nbm, fbm);
	if (!err)
		err = fix & RTFIX_SUMMARY_NEW ?
		      build_inode(rc, b, sb->rsumino, nsum, 0, fsum) :
		      map_file(rc->mp, sb->rsumino, nsum, fsum);
	/*
	 * The other file was checked usable (or is being remade over its
	 * own blocks, in a pass before this one): failing now to map it is
	 * not the filesystem's doing, and the run stops.
	 */
	if (!err)
		err = write_contents(rc, fbm, fsum);
out:
	free(fbm);
	free(fsum);
	return err;
}
