// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The realtime volume of a filesystem with realtime groups
 * (include/xfskit/format/rtgroup.h), when its device is given (-r):
 *  1. the realtime superblock at block 0 of the realtime device: magic,
 *     CRC, zero padding and tail, the label, UUID and metadata UUID of
 *     the filesystem's superblock;
 *  2. each group's bitmap and summary inode, found by name (N.bitmap,
 *     N.summary) in the /rtgroups directory of the metadata tree:
 *     regular metadata files of their metafile type and of rbmblocks and
 *     summary-blocks blocks, whose forks map every block;
 *  3. each of their blocks' headers (magic, owner, own address, metadata
 *     UUID, CRC);
 *  4. each group's bitmap, word by word, against the one the realtime
 *     files' mappings give (group 0's first extent holds the realtime
 *     superblock), conflicts between files reported as in the classic
 *     volume (rt_check.c);
 *  5. each group's summary against that bitmap;
 *  6. sb_frextents against the free extents of all groups.
 * The bitmaps, summaries and sb_frextents are rewritten from the
 * mappings (rtgroup_fix.c); any other finding here refuses the repair
 * (nothing written).  The groups' rmap and refcount btrees are checked
 * by rtbtree.c (step 7), and not rebuilt: unsupported.c refuses the
 * repair of a filesystem that has them.
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <xfskit/crc32c.h>
#include <xfskit/format/rtgroup.h>
#include <xfskit/pptr.h>

#include "rt.h"

void
rtg_refuse(struct repair_ctx *rc)
{
	plan_none(rc);
	rc->plan.meta_refuse = 1;
}

/* Step 1. */
static int
rtsb_check(struct repair_ctx *rc)
{
	struct xk_mount *mp = rc->mp;
	uint32_t bsize = mp->g.blocksize;
	uint8_t *b = xk_malloc(bsize);
	const struct xk_drtsb *r = (const void *)b;
	const char *what = NULL;
	int err;

	if (!b)
		return repair_error(rc, -ENOMEM, "reading the realtime "
				    "superblock");
	err = xk_dev_pread(mp->rtdev, b, bsize, 0);
	if (err) {
		free(b);
		return repair_error(rc, err, "reading the realtime "
				    "superblock");
	}
	if (xk_be32_get(r->rsb_magicnum) != XK_RTSB_MAGIC)
		what = "magicnum";
	else if (!xk_cksum_ok(b, bsize, offsetof(struct xk_drtsb, rsb_crc)))
		what = "crc";
	else if (xk_be32_get(r->rsb_pad))
		what = "pad";
	else if (memcmp(r->rsb_fname, mp->sb.fname, sizeof(r->rsb_fname)))
		what = "fname";
	else if (memcmp(r->rsb_uuid, mp->sb.uuid, 16))
		what = "uuid";
	else if (memcmp(r->rsb_meta_uuid, mp->meta_uuid, 16))
		what = "meta_uuid";
	for (uint32_t i = sizeof(*r); i < bsize && !what; i++)
		if (b[i])
			what = "tail";
	free(b);
	if (what && report(rc, PR_RT_SB, "realtime superblock", -1, 0,
			   XK_NO_DADDR, what,
			   "the realtime superblock (block 0 of the realtime "
			   "device) is bad (%s)", what))
		rtg_refuse(rc);
	return 0;
}

/* Step 2's lookup: every group's two inodes, or findings. */
static int
find_group_inodes(struct repair_ctx *rc, struct rtg_names *n)
{
	const struct xk_sb *sb = &rc->mp->sb;
	int err;

	err = rtg_find_inodes(rc, n);
	if (err)
		return repair_error(rc, err, "looking up /rtgroups in the "
				    "metadata directory tree");
	if (!n->dir) {
		if (report(rc, PR_RT_INODE, "realtime groups", -1,
			   sb->metadirino, XK_NO_DADDR, "rtgroups", "the "
			   "metadata directory tree has no /rtgroups "
			   "directory"))
			rtg_refuse(rc);
		return 0;
	}
	for (uint32_t g = 0; g < n->rgcount; g++) {
		if (n->bitmap[g] && n->summary[g])
			continue;
		if (report(rc, PR_RT_INODE, "realtime groups", -1, n->dir,
			   XK_NO_DADDR, "rtgroups", "/rtgroups has no %u.%s",
			   g, n->bitmap[g] ? "summary" : "bitmap"))
			rtg_refuse(rc);
	}
	return 0;
}

/* Steps 3 to 5 for group g; *nfree gets its free extents. */
static int
check_group(struct repair_ctx *rc, const struct rtg_names *n, uint32_t g,
	    const uint8_t *want_bm, uint64_t *nfree)
{
	const struct xk_sb *sb = &rc->mp->sb;
	struct xk_rtbm_geo geo;
	struct rt_file bm = { "bitmap", n->bitmap[g], sb->rbmblocks, g,
			      XK_METAFILE_RTBITMAP, 0, NULL, NULL };
	struct rt_file sum = { "summary", n->summary[g], 0, g,
			       XK_METAFILE_RTSUMMARY, 0, NULL, NULL };
	uint8_t *want_sum;
	int err = 0;

	xk_rtbm_geo_group(sb, g, &geo);
	bm.block_bytes = sum.block_bytes = geo.block_bytes;
	sum.nblocks = geo.sum_blocks;
	want_sum = xk_malloc((uint64_t)geo.sum_blocks * geo.block_bytes + 1);
	if (!want_sum)
		return repair_error(rc, -ENOMEM, "computing the summary of "
				    "realtime group %u", g);
	xk_rtsummary_compute_geo(&geo, want_bm, want_sum, nfree);
	if (bm.ino)
		err = rt_file_read(rc, &bm, 0);
	if (!err && sum.ino)
		err = rt_file_read(rc, &sum, 0);
	if (!err && bm.data)
		rt_compare(rc, PR_RT_BITMAP, &bm, want_bm);
	if (!err && sum.data)
		rt_compare(rc, PR_RT_SUMMARY, &sum, want_sum);
	free(want_sum);
	rt_file_free(&bm);
	rt_file_free(&sum);
	return err;
}

int
phase_rtgroups(struct repair_ctx *rc)
{
	const struct xk_sb *sb = &rc->mp->sb;
	struct rtg_names n = { sb->rgcount, NULL, NULL, NULL, NULL, 0 };
	struct rtg_want w = { sb, NULL, 0 };
	uint64_t nfree = 0;
	int err;

	err = rtsb_check(rc);
	if (err)
		return err;
	n.bitmap = xk_calloc(sb->rgcount + 1, sizeof(*n.bitmap));
	n.summary = xk_calloc(sb->rgcount + 1, sizeof(*n.summary));
	n.rmap = xk_calloc(sb->rgcount + 1, sizeof(*n.rmap));
	n.refcount = xk_calloc(sb->rgcount + 1, sizeof(*n.refcount));
	if (!n.bitmap || !n.summary || !n.rmap || !n.refcount ||
	    rtg_bitmaps_alloc(&w)) {
		err = repair_error(rc, -ENOMEM, "checking the realtime groups");
		goto out;
	}
	err = find_group_inodes(rc, &n);
	if (err)
		goto out;
	rtg_bitmaps_init(&w);
	rt_claims_walk(rc, rtg_linear, rtg_mark, &w);
	for (uint32_t g = 0; g < sb->rgcount && !err; g++) {
		uint64_t group_free = 0;

		err = check_group(rc, &n, g, w.bm + g * w.group_bytes,
				  &group_free);
		nfree += group_free;
		if (!err)
			err = rtb_check_group(rc, &n, g);
	}
	if (!err && nfree != sb->frextents &&
	    report(rc, PR_SB_COUNTER, "superblock", 0, 0, 0, "frextents",
		   "sb_frextents %llu, counted %llu",
		   (unsigned long long)sb->frextents,
		   (unsigned long long)nfree))
		plan_rt(rc, RTFIX_GROUPS);
out:
	free(n.bitmap);
	free(n.summary);
	free(n.rmap);
	free(n.refcount);
	free(w.bm);
	return err ? err : rc->found.error;
}
