// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * RTFIX_GROUPS (planned by rtgroup_check.c): every group's bitmap from
 * the realtime files' mappings (group 0's first extent kept for the
 * realtime superblock), its summary from that bitmap, each block with
 * its header made again (magic, owner, own address, metadata UUID, LSN
 * 0, CRC) and its words big-endian; sb_frextents from the free extents.
 * Written only in a pass that changes no inode (rt_apply), over the
 * blocks the check found each file to map; the inodes themselves were
 * found sound (any finding about them refuses the repair).
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <xfskit/crc32c.h>
#include <xfskit/format/rtgroup.h>

#include "rt.h"

/* Write one group file: nblocks blocks of words from data. */
static int
write_group_file(struct xk_mount *mp, uint64_t ino, uint32_t magic,
		 uint64_t nblocks, uint32_t block_bytes, const uint8_t *data)
{
	uint32_t bsize = mp->g.blocksize;
	uint64_t *fsb = xk_calloc(nblocks + 1, sizeof(*fsb));
	struct xk_dinode *dip;
	struct xk_buf *bp;
	struct xk_fail f;
	int err;

	if (!fsb)
		return -ENOMEM;
	err = xk_inode_read(mp, ino, 0, &bp, &dip);
	if (!err) {
		err = xk_rt_file_map(mp, ino, dip, nblocks, fsb, &f);
		xk_buf_release(bp);
	}
	for (uint64_t b = 0; b < nblocks && !err; b++) {
		uint64_t daddr = xk_fsb_to_daddr(mp, fsb[b]);
		struct xk_rtbuf_hdr *h;

		err = xk_buf_get(mp, daddr, bsize, NULL, &bp);
		if (err)
			break;
		memset(bp->data, 0, bsize);
		h = (struct xk_rtbuf_hdr *)bp->data;
		xk_be32_set(&h->rt_magic, magic);
		xk_be64_set(&h->rt_owner, ino);
		xk_be64_set(&h->rt_blkno, daddr);
		memcpy(h->rt_uuid, mp->meta_uuid, 16);
		for (uint32_t i = 0; i < block_bytes / 4; i++)
			xk_put_be32(bp->data + sizeof(*h) + i * 4,
				    xk_rtword_get(data + b * block_bytes, i));
		xk_cksum_update(bp->data, bsize,
				offsetof(struct xk_rtbuf_hdr, rt_crc));
		xk_buf_dirty(bp);
		xk_buf_release(bp);
	}
	free(fsb);
	return err;
}

int
rtg_rewrite(struct repair_ctx *rc)
{
	struct xk_mount *mp = rc->mp;
	const struct xk_sb *sb = &mp->sb;
	struct rtg_names n = { sb->rgcount, NULL, NULL, NULL, NULL, 0 };
	struct rtg_want w = { sb, NULL, 0 };
	uint64_t nfree = 0, old = sb->frextents;
	uint8_t *sum = NULL;
	int err = -ENOMEM;

	n.bitmap = xk_calloc(sb->rgcount + 1, sizeof(*n.bitmap));
	n.summary = xk_calloc(sb->rgcount + 1, sizeof(*n.summary));
	if (!n.bitmap || !n.summary || rtg_bitmaps_alloc(&w))
		goto out;
	err = rtg_find_inodes(rc, &n);
	if (err)
		goto out;
	rtg_bitmaps_init(&w);
	for (size_t i = 0; i < rc->scan.nrt_claims; i++) {
		const struct rt_claim *c = &rc->scan.rt_claims[i];
		uint64_t start = rtg_linear(sb, c->start);
		uint64_t x0 = start / sb->rextsize;
		uint64_t x1 = (start + c->len + sb->rextsize - 1) /
			      sb->rextsize;

		if (x1 > sb->rextents)
			x1 = sb->rextents;
		if (x0 < x1)
			rtg_mark(&w, x0, x1 - x0);
	}
	for (uint32_t g = 0; g < sb->rgcount && !err; g++) {
		const uint8_t *bm = w.bm + g * w.group_bytes;
		struct xk_rtbm_geo geo;
		uint64_t group_free = 0;

		/* The check found both: their absence now is not ours. */
		if (!n.bitmap[g] || !n.summary[g]) {
			err = -ESTALE;
			break;
		}
		xk_rtbm_geo_group(sb, g, &geo);
		free(sum);
		sum = xk_malloc((uint64_t)geo.sum_blocks * geo.block_bytes + 1);
		if (!sum) {
			err = -ENOMEM;
			break;
		}
		xk_rtsummary_compute_geo(&geo, bm, sum, &group_free);
		nfree += group_free;
		err = write_group_file(mp, n.bitmap[g], XK_RTBITMAP_MAGIC,
				       geo.blocks, geo.block_bytes, bm);
		if (!err)
			err = write_group_file(mp, n.summary[g],
					       XK_RTSUMMARY_MAGIC,
					       geo.sum_blocks, geo.block_bytes,
					       sum);
	}
	if (!err)
		err = rt_set_frextents(rc, nfree);
	if (!err)
		action_report(rc, ACT_RT_REBUILT, 0, -1, NULL, " the realtime "
			      "bitmaps and summaries of %u realtime groups "
			      "from the realtime files' mappings; %llu free "
			      "realtime extents (the superblock said %llu)",
			      sb->rgcount, (unsigned long long)nfree,
			      (unsigned long long)old);
out:
	free(sum);
	free(n.bitmap);
	free(n.summary);
	free(w.bm);
	return err;
}
