// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The classic realtime volume (no rtgroups): its space is described by
 * the bitmap and summary files (include/xfskit/rtbitmap.h), not by any
 * AG.  The inode scan records every realtime file's mappings here
 * (rt_claim); this phase then checks
 *  1. the bitmap and summary inodes the superblock names: regular files
 *     in use, of rbmblocks and summary-blocks blocks (di_size), whose
 *     data forks map each of those blocks on the data device;
 *  2. that no two realtime files share a realtime extent, nor one file a
 *     block twice (the later inode is cleared, as xfs_repair does);
 *  3. the bitmap, word by word, against the one the mappings give (an
 *     extent is in use when any block of it is mapped);
 *  4. the summary against the one that bitmap gives;
 *  5. sb_frextents against the free extents counted.
 * Steps 3-5 need step 1's files; every difference is planned as a
 * rewrite of the bitmap, summary and counter (rt_fix.c), and a broken
 * bitmap or summary inode as that inode remade (over its own blocks when
 * its fork still maps them all, else on new ones).
 *
 * Without the realtime device (-r) nothing here runs: unsupported.c
 * names the realtime volume as not checked, and repairs are refused.
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <xfskit/format/rtgroup.h>

#include "rt.h"

void
rt_claim(struct repair_ctx *rc, uint64_t ino, const struct xk_bmbt_irec *r)
{
	struct rt_claim c = { r->startblock, r->blockcount, ino,
			      r->startoff | (r->unwritten ?
					     XK_RMAP_OFF_UNWRITTEN : 0) };

	if (xk_vec_push(&rc->scan.rt_vec, &c, sizeof(c)))
		repair_error(rc, -ENOMEM, "recording the realtime extents of "
			     "inode %llu", (unsigned long long)ino);
}

static int
cmp_rt_claim(const void *a, const void *b)
{
	const struct rt_claim *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	if (x->ino != y->ino)
		return x->ino < y->ino ? -1 : 1;
	return (x->len > y->len) - (x->len < y->len);
}

/*
 * A group's contents are rewritten with every group's (RTFIX_GROUPS);
 * any other finding about a group's files refuses the repair.
 */
static void
plan_rt_file(struct repair_ctx *rc, const struct rt_file *file,
	     unsigned int fix)
{
	if (file->rgno >= 0 && fix == RTFIX_CONTENTS) {
		plan_rt(rc, RTFIX_GROUPS);
	} else if (file->rgno >= 0) {
		plan_none(rc);
		rc->plan.meta_refuse = 1;
	} else if (fix) {
		plan_rt(rc, fix);
	} else {
		plan_none(rc);
	}
}

/*
 * A group's block: its header (magic, owner, own address, metadata
 * UUID, CRC), then its words, big-endian on disk, into out in host
 * order.
 */
static void
rtg_block_load(struct repair_ctx *rc, const struct rt_file *file,
	       uint64_t b, const struct xk_buf *bp, uint8_t *out)
{
	const struct xk_rtbuf_hdr *h = (const void *)bp->data;
	uint32_t magic = file->metatype == XK_METAFILE_RTBITMAP ?
			 XK_RTBITMAP_MAGIC : XK_RTSUMMARY_MAGIC;
	const char *what = NULL;

	if (xk_be32_get(h->rt_magic) != magic)
		what = "magic";
	else if (xk_be64_get(h->rt_owner) != file->ino)
		what = "owner";
	else if (xk_be64_get(h->rt_blkno) != bp->daddr)
		what = "blkno";
	else if (memcmp(h->rt_uuid, rc->mp->meta_uuid, 16))
		what = "uuid";
	else if (!xk_cksum_ok(bp->data, bp->len,
			      offsetof(struct xk_rtbuf_hdr, rt_crc)))
		what = "crc";
	if (what && report(rc, file->metatype == XK_METAFILE_RTBITMAP ?
			   PR_RT_BITMAP : PR_RT_SUMMARY, "realtime", -1,
			   file->ino, bp->daddr, what, "realtime group %lld "
			   "%s block %llu has a bad header (%s)",
			   (long long)file->rgno, file->name,
			   (unsigned long long)b, what))
		plan_rt_file(rc, file, RTFIX_CONTENTS);
	for (uint32_t i = 0; i < file->block_bytes / 4; i++)
		xk_rtword_set(out, i, xk_get_be32(bp->data + sizeof(*h) +
						  i * 4));
}

int
rt_file_read(struct repair_ctx *rc, struct rt_file *file, unsigned int fix)
{
	struct xk_mount *mp = rc->mp;
	uint64_t bsize = mp->g.blocksize, want = file->nblocks * bsize;
	struct xk_dinode *dip;
	struct xk_buf *bp;
	struct xk_fail f;
	uint16_t mode;
	int err, bad = 0, fmt;

	if (!xk_ino_valid(mp, file->ino)) {
		if (report(rc, PR_RT_INODE, "realtime inode", -1, 0,
			   XK_NO_DADDR, file->name, "the realtime %s inode "
			   "number %llu is not valid", file->name,
			   (unsigned long long)file->ino))
			plan_rt_file(rc, file, 0);
		return 0;
	}
	err = xk_inode_read(mp, file->ino, XK_READ_SALVAGE, &bp, &dip);
	if (err && !bp) {
		if (repair_oserr(rc, err, "reading realtime %s inode %llu",
				 file->name, (unsigned long long)file->ino))
			return rc->found.error;
		if (report(rc, PR_RT_INODE, "realtime inode", -1, file->ino,
			   XK_NO_DADDR, file->name, "realtime %s inode %llu "
			   "cannot be read: %s", file->name,
			   (unsigned long long)file->ino, xk_strerror(err)))
			plan_rt_file(rc, file, 0);
		return 0;
	}
	file->fsb = xk_calloc(file->nblocks ? file->nblocks : 1,
			      sizeof(*file->fsb));
	if (!file->fsb) {
		xk_buf_release(bp);
		return repair_error(rc, -ENOMEM, "reading the realtime %s",
				    file->name);
	}
	/* Its blocks, whatever else is wrong: what a remake keeps. */
	err = xk_rt_file_map(mp, file->ino, dip, file->nblocks, file->fsb, &f);
	if (xk_err_operational(err)) {
		xk_buf_release(bp);
		return repair_error(rc, err, "mapping the realtime %s",
				    file->name);
	}
	mode = xk_be16_get(dip->di_mode);
	if ((mode & XK_S_IFMT) != XK_S_IFREG)
		bad = report(rc, PR_RT_INODE, "realtime inode", -1, file->ino,
			     bp->daddr, "mode", "realtime %s inode %llu is %s "
			     "(mode 0%o), not a regular file", file->name,
			     (unsigned long long)file->ino,
			     mode ? "of another type" : "free", mode) + 1;
	else if (xk_be64_get(dip->di_size) != want)
		bad = report(rc, PR_RT_INODE, "realtime inode", -1, file->ino,
			     bp->daddr, "size", "realtime %s inode %llu has "
			     "bad size %llu (should be %llu)", file->name,
			     (unsigned long long)file->ino,
			     (unsigned long long)xk_be64_get(dip->di_size),
			     (unsigned long long)want) + 1;
	else if (file->rgno >= 0 &&
		 (!(xk_be64_get(dip->di_flags2) & XK_DIFLAG2_METADATA) ||
		  xk_be16_get(dip->di_onlink) != file->metatype))
		bad = report(rc, PR_RT_INODE, "realtime inode", -1, file->ino,
			     bp->daddr, "metatype", "realtime group %lld %s "
			     "inode %llu is not a metadata file of type %u",
			     (long long)file->rgno, file->name,
			     (unsigned long long)file->ino,
			     file->metatype) + 1;
	else if (err) {
		char line[400];

		xk_fail_format(&f, line, sizeof(line));
		bad = report(rc, PR_RT_INODE, "realtime inode", -1, file->ino,
			     bp->daddr, "mapping", "realtime %s inode %llu: "
			     "%s", file->name, (unsigned long long)file->ino,
			     line) + 1;
	}
	fmt = xk_dfork_format(dip, XK_DATA_FORK);
	xk_buf_release(bp);
	/*
	 * Remade over its own blocks when it maps them all, else made anew
	 * on new blocks by the AG rebuild (rt_fix.c), as xfs_repair does.
	 */
	if (bad == 2 && !err && fmt == XK_DINODE_FMT_EXTENTS)
		plan_rt_file(rc, file, fix);
	else if (bad == 2)
		plan_rt_file(rc, file, fix == RTFIX_BITMAP_INODE ?
			     RTFIX_BITMAP_NEW : RTFIX_SUMMARY_NEW);
	if (bad || err)
		return 0;
	file->data = xk_malloc(file->nblocks * file->block_bytes + 1);
	if (!file->data)
		return repair_error(rc, -ENOMEM, "reading the realtime %s",
				    file->name);
	for (uint64_t i = 0; i < file->nblocks; i++) {
		err = xk_buf_read(mp, xk_fsb_to_daddr(mp, file->fsb[i]),
				  (uint32_t)bsize, NULL, XK_READ_NOVERIFY, &bp);
		/* Unverified reads fail only for the run's reasons. */
		if (err) {
			free(file->data);
			file->data = NULL;
			return repair_error(rc, err, "reading block %llu of "
					    "the realtime %s",
					    (unsigned long long)i, file->name);
		}
		if (file->rgno >= 0)
			rtg_block_load(rc, file, i, bp, file->data +
				       i * file->block_bytes);
		else
			memcpy(file->data + i * bsize, bp->data, bsize);
		xk_buf_release(bp);
	}
	return 0;
}

void
rt_file_free(struct rt_file *file)
{
	free(file->fsb);
	free(file->data);
	file->fsb = NULL;
	file->data = NULL;
}

/*
 * Claim c falls in an extent inode other claims too: the later inode in
 * inode order is cleared (the one xfs_repair's walk meets second, and
 * clears); the other keeps its data.
 */
static void
rt_conflict(struct repair_ctx *rc, const struct rt_claim *c, uint64_t other)
{
	uint64_t victim = c->ino > other ? c->ino : other;
	char why[96];

	if (!report(rc, PR_SPACE_CONFLICT, "realtime space", -1, c->ino,
		    XK_NO_DADDR, "extent", "realtime blocks %llu-%llu of "
		    "inode %llu are in an extent inode %llu uses too",
		    (unsigned long long)c->start,
		    (unsigned long long)(c->start + c->len - 1),
		    (unsigned long long)c->ino, (unsigned long long)other))
		return;
	snprintf(why, sizeof(why), "realtime block %llu is claimed by inode "
		 "%llu too", (unsigned long long)c->start,
		 (unsigned long long)(victim == c->ino ? other : c->ino));
	plan_inode_why(rc, victim, IFIX_CLEAR, 0, why);
}

void
rt_claims_walk(struct repair_ctx *rc,
	       uint64_t (*linear)(const struct xk_sb *, uint64_t),
	       void (*mark)(void *ctx, uint64_t x, uint64_t n), void *ctx)
{
	const struct xk_sb *sb = &rc->mp->sb;
	struct rt_claim *v = rc->scan.rt_claims;
	size_t n = rc->scan.nrt_claims;
	uint64_t end = 0, end_x = 0, last_ino = 0;
	int rtreflink = xk_sb_has_rtgroups(sb) &&
			xk_sb_has_ro_compat(sb, XK_SB_FEAT_RO_COMPAT_REFLINK);

	/* Segmented block numbers keep their order as linear ones. */
	sort_v(v, n, sizeof(*v), cmp_rt_claim);
	for (size_t i = 0; i < n; i++) {
		uint64_t start = linear(sb, v[i].start);
		uint64_t x0 = start / sb->rextsize;
		uint64_t x1 = (start + v[i].len + sb->rextsize - 1) /
			      sb->rextsize;

		/* With realtime reflink, files share extents by design. */
		if (i && (start < end ||
			  (x0 < end_x && v[i].ino != last_ino)) &&
		    !(rtreflink && v[i].ino != last_ino))
			rt_conflict(rc, &v[i], last_ino);
		if (start + v[i].len > end) {
			end = start + v[i].len;
			last_ino = v[i].ino;
		}
		if (x1 > end_x)
			end_x = x1;
		if (x1 > sb->rextents)
			x1 = sb->rextents;
		if (x0 < x1)
			mark(ctx, x0, x1 - x0);
	}
}

static uint64_t
classic_linear(const struct xk_sb *sb, uint64_t rtb)
{
	(void)sb;
	return rtb;
}

static void
classic_mark(void *bm, uint64_t x, uint64_t n)
{
	xk_rtbitmap_mark_used(bm, x, n);
}

uint64_t
rt_compare(struct repair_ctx *rc, enum problem pr,
	   const struct rt_file *file, const uint8_t *want)
{
	uint64_t bytes = file->block_bytes, words = bytes / 4, bad = 0;
	char group[32] = "";

	if (file->rgno >= 0)
		snprintf(group, sizeof(group), " (%lld)",
			 (long long)file->rgno);
	for (uint64_t b = 0; b < file->nblocks; b++) {
		const uint8_t *h = file->data + b * bytes, *w = want + b * bytes;
		uint64_t lo = words, hi = 0;

		if (!memcmp(h, w, bytes))
			continue;
		for (uint64_t i = 0; i < words; i++) {
			if (xk_rtword_get(h, i) == xk_rtword_get(w, i))
				continue;
			if (lo == words)
				lo = i;
			hi = i;
		}
		bad++;
		if (report(rc, pr, "realtime", -1, file->ino,
			   xk_fsb_to_daddr(rc->mp, file->fsb[b]), file->name,
			   "discrepancy in %s%s at dblock 0x%llx words "
			   "0x%llx-0x%llx/0x%llx", file->name, group,
			   (unsigned long long)b, (unsigned long long)lo,
			   (unsigned long long)hi, (unsigned long long)words))
			plan_rt_file(rc, file, RTFIX_CONTENTS);
	}
	return bad;
}

int
phase_rt(struct repair_ctx *rc)
{
	struct xk_mount *mp = rc->mp;
	const struct xk_sb *sb = &mp->sb;
	uint64_t bsize = mp->g.blocksize, nfree = 0;
	struct rt_file bm = { "bitmap", sb->rbmino, sb->rbmblocks, -1, 0,
			      sb->blocksize, NULL, NULL };
	struct rt_file sum = { "summary", sb->rsumino, xk_rt_sum_blocks(sb),
			       -1, 0, sb->blocksize, NULL, NULL };
	uint8_t *want_bm = NULL, *want_sum = NULL;
	int err;

	/* Every pass plans afresh: a plan of the last one is stale. */
	rc->plan.rt_fix = 0;
	/* No realtime section, or no device: unsupported.c says so. */
	if (!sb->rblocks || !mp->rtdev || !sb->rextsize)
		return 0;
	if (xk_sb_has_rtgroups(sb))
		return phase_rtgroups(rc);
	err = rt_file_read(rc, &bm, RTFIX_BITMAP_INODE);
	if (!err)
		err = rt_file_read(rc, &sum, RTFIX_SUMMARY_INODE);
	if (err)
		goto out;
	want_bm = xk_malloc(bm.nblocks * bsize + 1);
	want_sum = xk_malloc(sum.nblocks * bsize + 1);
	if (!want_bm || !want_sum) {
		err = repair_error(rc, -ENOMEM, "computing the realtime "
				   "bitmap");
		goto out;
	}
	xk_rtbitmap_init_free(want_bm, bm.nblocks * bsize, sb->rextents);
	rt_claims_walk(rc, classic_linear, classic_mark, want_bm);
	xk_rtsummary_compute(sb, want_bm, want_sum, &nfree);
	if (nfree != sb->frextents &&
	    report(rc, PR_SB_COUNTER, "superblock", 0, 0, 0, "frextents",
		   "sb_frextents %llu, counted %llu",
		   (unsigned long long)sb->frextents,
		   (unsigned long long)nfree))
		plan_rt(rc, RTFIX_CONTENTS);
	if (bm.data)
		rt_compare(rc, PR_RT_BITMAP, &bm, want_bm);
	if (sum.data)
		rt_compare(rc, PR_RT_SUMMARY, &sum, want_sum);
out:
	free(want_bm);
	free(want_sum);
	rt_file_free(&bm);
	rt_file_free(&sum);
	return err ? err : rc->found.error;
}
