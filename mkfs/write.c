// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Laying the filesystem down.  Everything is computed before the first
 * write (AG layouts, AGFL contents, where the root inode chunk goes, so
 * the superblock is final from the start); then, through libfs's buffer
 * cache and verifiers: every AG's headers and btree roots, the inode
 * chunk with the root directory and the realtime bitmap and summary
 * inodes (or the metadata directory tree, metadir.c), and a clean log.  The device is prepared first: an existing
 * signature refuses the device unless forced, stale signatures are
 * wiped, and free space is discarded unless -K.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <blkid/blkid.h>

#include <xfskit/rtbitmap.h>
#include <xfskit/build.h>
#include <xfskit/init.h>
#include <xfskit/format/attr.h>
#include <xfskit/format/dinode.h>

#include "mkfs.h"

/* Blocks mkfs.xfs zeroes at each end of the device against stale labels. */
#define WHACK_SIZE	(128u * 1024)

int
mkfs_probe_existing(const struct mkfs_cfg *cfg, char *what, size_t len)
{
	blkid_probe pr;
	const char *type = NULL;
	int found = 0;

	what[0] = '\0';
	if (cfg->is_file && cfg->devsize == 0)
		return 0;
	pr = blkid_new_probe_from_filename(cfg->dev);
	if (!pr)
		return 0;
	blkid_probe_enable_superblocks(pr, 1);
	blkid_probe_set_superblocks_flags(pr, BLKID_SUBLKS_TYPE);
	blkid_probe_enable_partitions(pr, 1);
	if (blkid_do_fullprobe(pr) == 0) {
		if (blkid_probe_lookup_value(pr, "TYPE", &type, NULL) == 0) {
			snprintf(what, len, "an existing filesystem (%s)",
				 type);
			found = 1;
		} else if (blkid_probe_lookup_value(pr, "PTTYPE", &type,
						    NULL) == 0) {
			snprintf(what, len, "a partition table (%s)", type);
			found = 1;
		}
	}
	blkid_free_probe(pr);
	return found;
}

/* Erase every signature libblkid knows, wherever it sits. */
static void
wipe_signatures(struct xk_dev *dev)
{
	blkid_probe pr = blkid_new_probe();

	if (!pr)
		return;
	if (blkid_probe_set_device(pr, dev->fd, 0, 0) == 0) {
		blkid_probe_enable_superblocks(pr, 1);
		blkid_probe_set_superblocks_flags(pr, BLKID_SUBLKS_MAGIC);
		blkid_probe_enable_partitions(pr, 1);
		blkid_probe_set_partitions_flags(pr, BLKID_PARTS_MAGIC);
		while (blkid_do_probe(pr) == 0)
			blkid_do_wipe(pr, 0);
	}
	blkid_free_probe(pr);
}

static int
zero_range(struct xk_dev *dev, uint64_t off, uint64_t len)
{
	uint8_t *z = calloc(1, len);
	int err;

	if (!z)
		return -ENOMEM;
	err = xk_dev_pwrite(dev, z, len, off);
	free(z);
	return err;
}

static int
prepare_device(const struct mkfs_cfg *cfg, int discard, struct xk_dev **devp)
{
	uint64_t need = cfg->dblocks << cfg->blocklog;
	struct xk_dev *dev;
	int err;

	err = xk_dev_open(cfg->dev, (cfg->is_file ? XK_DEV_CREATE :
				     XK_DEV_EXCL), &dev);
	if (err) {
		fprintf(stderr, "cannot open %s: %s\n", cfg->dev,
			xk_strerror(err));
		return 1;
	}
	if (cfg->is_file && dev->size < need) {
		err = xk_dev_set_size(dev, need);
		if (err) {
			fprintf(stderr, "cannot extend %s to %llu bytes: %s\n",
				cfg->dev, (unsigned long long)need,
				xk_strerror(err));
			xk_dev_close(dev);
			return 1;
		}
	}
	wipe_signatures(dev);
	if (discard && dev->size && xk_dev_discard(dev, 0, dev->size)) {
		/* A discard failure (no TRIM support) is not an error. */
	}
	/* Stale labels at the very end (MD, GPT backups). */
	if (dev->size >= WHACK_SIZE) {
		err = zero_range(dev, (dev->size - WHACK_SIZE) & ~511ULL,
				 WHACK_SIZE);
		if (!err)
			err = zero_range(dev, 0, WHACK_SIZE);
		if (err) {
			fprintf(stderr, "cannot write to %s: %s\n", cfg->dev,
				xk_strerror(err));
			xk_dev_close(dev);
			return 1;
		}
	}
	*devp = dev;
	return 0;
}

/* Everything about the AGs that is decided before writing. */
struct plan {
	struct xk_ag_init *ags;
	uint32_t	agcount;
	uint64_t	rootino;
	uint64_t	fdblocks;
	struct mkfs_metadir md;		/* -m metadir=1 */
	/* The realtime bitmap's and summary's blocks in AG 0 (if any). */
	uint32_t	rt_agbno[2], rt_len[2];
};

/*
 * Blocks for the realtime bitmap, then the summary, as mkfs.xfs 7.2
 * allocates them: each the free run of its length closest to the block
 * holding the inodes (the chunk's first), whichever side.
 */
static int
plan_rt_files(struct xk_mount *mp, struct plan *p)
{
	struct xk_ag_init *ai = &p->ags[0];
	const uint32_t len[2] = { mp->sb.rbmblocks,
				  xk_rt_sum_blocks(&mp->sb) };

	for (int i = 0; i < 2 && mp->sb.rblocks; i++) {
		int err = xk_ag_init_alloc_closest(ai, len[i],
						   ai->chunk_agbno,
						   &p->rt_agbno[i]);

		if (err)
			return err;
		p->rt_len[i] = len[i];
	}
	return 0;
}

/*
 * An inode chunk in AG ai, as the kernel places a new one: near the
 * inode btree root, aligned to the stripe unit when that is a multiple
 * of the inode alignment, else to the inode cluster alignment.  Its
 * first `used` inodes are in use.
 */
int
mkfs_plan_chunk(const struct xk_mount *mp, struct xk_ag_init *ai,
		uint32_t used)
{
	const struct xk_geom *g = &mp->g;
	uint32_t align = g->cluster_align, bno;
	int err;

	if (mp->sb.unit && g->inoalign_mask &&
	    !(mp->sb.unit & g->inoalign_mask))
		align = mp->sb.unit;
	err = xk_ag_init_alloc(ai, g->ialloc_blks, align,
			       ai->roots[XK_BT_INO], &bno);
	if (err && align != g->cluster_align)
		err = xk_ag_init_alloc(ai, g->ialloc_blks, g->cluster_align,
				       ai->roots[XK_BT_INO], &bno);
	if (err)
		return err;
	ai->chunk_agbno = bno;
	ai->chunk_blocks = g->ialloc_blks;
	ai->chunk_inodes = g->ialloc_inos;
	ai->chunk_used = used;
	return 0;
}

static int
make_plan(struct xk_mount *mp, const struct mkfs_cfg *cfg, struct plan *p)
{
	const struct xk_geom *g = &mp->g;
	uint32_t worst = 0;
	int err;

	p->agcount = g->agcount;
	p->ags = calloc(g->agcount, sizeof(*p->ags));
	if (!p->ags)
		return -ENOMEM;
	for (uint32_t agno = 0; agno < g->agcount; agno++) {
		uint32_t need = xk_ag_min_freelist(mp,
						   xk_ag_blocks(mp, agno));

		err = xk_ag_init_layout(mp, agno, &p->ags[agno]);
		if (err)
			return err;
		if (need > worst)
			worst = need;
	}
	for (uint32_t agno = 0; agno < g->agcount; agno++) {
		err = xk_ag_init_agfl(&p->ags[agno], worst);
		if (err)
			return err;
	}
	/*
	 * The root inode chunk in AG 0, the root first; then the realtime
	 * bitmap and summary, or the root of the metadata directory tree.
	 */
	err = mkfs_plan_chunk(mp, &p->ags[0], cfg->metadir ? 2 : 3);
	if (err)
		return err;
	p->rootino = xk_agino_to_ino(mp, 0, p->ags[0].chunk_agbno <<
				     g->inopblog);
	if (cfg->metadir) {
		err = mkfs_metadir_plan(mp, p->ags, p->agcount, p->rootino,
					&p->md);
		if (err)
			return err;
	}
	err = plan_rt_files(mp, p);
	if (err)
		return err;
	p->fdblocks = 0;
	for (uint32_t agno = 0; agno < g->agcount; agno++)
		p->fdblocks += xk_ag_init_freeblks(&p->ags[agno], NULL) +
			       p->ags[agno].agfl_count;
	return 0;
}

/*
 * The root directory as mkfs.xfs 7.2 leaves it: the inheritable hints
 * of -d daxinherit, projinherit, extszinherit and cowextsize, and the
 * xfs:autofsck property, a "trusted" (root namespace) attribute in a
 * short-form attr fork, whose setting counts as two more changes.
 */
static int
root_extras(const struct xk_mount *mp, const struct mkfs_cfg *cfg,
	    struct xk_dinode *dip)
{
	static const char name[] = "xfs:autofsck";
	uint16_t flags = xk_be16_get(dip->di_flags);
	uint64_t flags2 = xk_be64_get(dip->di_flags2);

	if (cfg->daxinherit)
		flags2 |= XK_DIFLAG2_DAX;
	if (cfg->projinherit) {
		flags |= XK_DIFLAG_PROJINHERIT;
		xk_dinode_set_projid(dip, cfg->projid);
	}
	if (cfg->extsize) {
		flags |= XK_DIFLAG_EXTSZINHERIT;
		xk_be32_set(&dip->di_extsize, cfg->extsize);
	}
	if (cfg->cowextsize) {
		flags2 |= XK_DIFLAG2_COWEXTSIZE;
		xk_be32_set(&dip->di_cowextsize, cfg->cowextsize);
	}
	xk_be16_set(&dip->di_flags, flags);
	xk_be64_set(&dip->di_flags2, flags2);
	xk_inode_init_crc(mp, dip);
	if (cfg->autofsck) {
		struct xk_bld_xattr xa = {
			.flags = XK_ATTR_ROOT,
			.name = (const uint8_t *)name,
			.namelen = sizeof(name) - 1,
			.value = (const uint8_t *)cfg->autofsck,
			.valuelen = (uint32_t)strlen(cfg->autofsck),
		};

		xk_be64_set(&dip->di_changecount,
			    xk_be64_get(dip->di_changecount) + 2);
		return xk_inode_init_sfattr(mp, dip, &xa, 1);
	}
	return 0;
}

/* The contents of a new realtime section's bitmap and summary. */
static int
write_rt_files(struct xk_mount *mp, const struct plan *p)
{
	uint32_t bs = mp->g.blocksize;
	uint64_t bytes[2] = { (uint64_t)p->rt_len[0] * bs,
			      (uint64_t)p->rt_len[1] * bs };
	uint8_t *data[2];
	uint64_t nfree;
	int err = 0;

	if (!mp->sb.rblocks)
		return 0;
	data[0] = malloc(bytes[0]);
	data[1] = malloc(bytes[1]);
	if (!data[0] || !data[1]) {
		free(data[0]);
		free(data[1]);
		return -ENOMEM;
	}
	xk_rtbitmap_init_free(data[0], bytes[0], mp->sb.rextents);
	xk_rtsummary_compute(&mp->sb, data[0], data[1], &nfree);
	for (int i = 0; i < 2 && !err; i++) {
		struct xk_buf *bp;

		err = xk_buf_get(mp, xk_fsb_to_daddr(mp, xk_agb_to_fsb(mp, 0,
				 p->rt_agbno[i])), (uint32_t)bytes[i], NULL,
				 &bp);
		if (err)
			break;
		memcpy(bp->data, data[i], bytes[i]);
		xk_buf_dirty(bp);
		xk_buf_release(bp);
	}
	free(data[0]);
	free(data[1]);
	return err;
}

static int
write_inodes(struct xk_mount *mp, const struct mkfs_cfg *cfg,
	     const struct plan *p)
{
	const struct xk_ag_init *ai = &p->ags[0];
	int64_t now_sec;
	uint32_t now_nsec;
	int sde;
	struct xk_inode_init ii = { 0 };
	struct xk_buf *bp;
	void *dip;
	int err;

	err = xk_inode_init_chunk(mp, 0, ai->chunk_agbno, ai->chunk_blocks);
	if (err)
		return err;
	/* SOURCE_DATE_EPOCH, when set, makes the image reproducible. */
	pop_time_now(&now_sec, &now_nsec, &sde);
	ii.now_sec = now_sec;
	ii.now_nsec = now_nsec;
	/* The root directory: short form, its own parent. */
	ii.mode = XK_S_IFDIR | 0755;
	ii.nlink = 2;
	ii.format = XK_DINODE_FMT_LOCAL;
	err = xk_inode_init_get(mp, p->rootino, &bp, &dip);
	if (err)
		return err;
	xk_inode_init_core(mp, dip, p->rootino, &ii);
	xk_inode_init_sfdir(mp, dip, p->rootino);
	err = root_extras(mp, cfg, dip);
	xk_buf_dirty(bp);
	xk_buf_release(bp);
	if (err)
		return err;
	if (cfg->metadir)
		return mkfs_metadir_write(mp, cfg, p->ags, p->agcount, &p->md,
					  now_sec, now_nsec);
	/*
	 * The realtime bitmap and summary: regular files, empty without a
	 * realtime section, else over the blocks planned for them.
	 */
	ii.mode = XK_S_IFREG;
	ii.nlink = 1;
	ii.format = XK_DINODE_FMT_EXTENTS;
	for (int i = 1; i <= 2; i++) {
		uint32_t len = p->rt_len[i - 1];

		err = xk_inode_init_get(mp, p->rootino + i, &bp, &dip);
		if (err)
			return err;
		ii.flags = i == 1 ? XK_DIFLAG_NEWRTBM : 0;
		ii.size = (uint64_t)len * mp->g.blocksize;
		xk_inode_init_core(mp, dip, p->rootino + i, &ii);
		if (len) {
			struct xk_bmbt_irec r = {
				.startblock = xk_agb_to_fsb(mp, 0,
							    p->rt_agbno[i - 1]),
				.blockcount = len,
			};

			xk_bmbt_rec_pack((struct xk_bmbt_rec *)
					 xk_dfork_dptr(dip), &r);
			xk_dinode_set_nextents(dip, 1, 0);
			xk_be64_set(&((struct xk_dinode *)dip)->di_nblocks,
				    len);
			xk_inode_init_crc(mp, dip);
		}
		xk_buf_dirty(bp);
		xk_buf_release(bp);
	}
	return write_rt_files(mp, p);
}

int
mkfs_write(const struct mkfs_cfg *cfg, int discard)
{
	struct xk_dev *dev;
	struct xk_mount *mp;
	struct xk_fail f;
	struct xk_sb sb = cfg->sb, sec;
	struct plan p = { 0 };
	uint32_t mid;
	int err;

	if (prepare_device(cfg, discard, &dev))
		return 1;
	err = xk_mount_from_sb(dev, &sb, 0, &mp, &f);
	if (err) {
		char msg[400];

		xk_fail_format(&f, msg, sizeof(msg));
		fprintf(stderr, "internal error: the new superblock is "
			"refused: %s\n", msg);
		xk_dev_close(dev);
		return 1;
	}
	mp->owns_dev = 1;
	if (cfg->logdev) {
		struct xk_dev *ldev;

		/* The log is zeroed and written below; nothing else. */
		err = xk_dev_open(cfg->logdev, XK_DEV_EXCL, &ldev);
		if (err) {
			fprintf(stderr, "cannot open %s: %s\n", cfg->logdev,
				xk_strerror(err));
			goto out;
		}
		if (discard && ldev->is_bdev &&
		    xk_dev_discard(ldev, 0, ldev->size)) {
			/* No TRIM support is not an error. */
		}
		xk_mount_set_logdev(mp, ldev);
	}
	err = make_plan(mp, cfg, &p);
	if (err) {
		fprintf(stderr, "cannot lay out the filesystem: %s\n",
			xk_strerror(err));
		goto out;
	}
	/* The final primary, and the secondaries as mkfs.xfs leaves them. */
	sb.rootino = p.rootino;
	sb.rbmino = p.rootino + 1;
	sb.rsumino = p.rootino + 2;
	if (cfg->metadir) {
		/* Realtime inodes live in the tree (none without a volume). */
		sb.metadirino = p.md.rootino;
		sb.rbmino = sb.rsumino = 0;
	}
	sb.icount = sb.ifree = 0;
	for (uint32_t agno = 0; agno < p.agcount; agno++) {
		sb.icount += p.ags[agno].chunk_inodes;
		sb.ifree += p.ags[agno].chunk_inodes - p.ags[agno].chunk_used;
	}
	sb.fdblocks = p.fdblocks;
	mp->sb = sb;
	sec = sb;
	sec.inprogress = 1;
	sec.icount = sec.ifree = 0;
	sec.frextents = 0;	/* as mkfs.xfs leaves the secondaries */
	sec.rootino = XK_NULLFSINO;
	if (cfg->metadir)
		sec.metadirino = XK_NULLFSINO;
	else
		sec.rbmino = sec.rsumino = XK_NULLFSINO;
	sec.fdblocks = cfg->dblocks - cfg->agcount * xk_ag_prealloc_blocks(mp) -
		       (cfg->logdev ? 0 : cfg->logblocks);
	mid = cfg->agcount > 2 ? (uint32_t)(cfg->agcount - 1) / 2 : 0;
	for (uint32_t agno = 0; agno < p.agcount; agno++) {
		struct xk_sb s = agno == 0 ? sb : sec;

		if (agno && (agno == p.agcount - 1 || agno == mid)) {
			s.rootino = sb.rootino;
			s.metadirino = sb.metadirino;
		}
		err = xk_ag_init_write(mp, &p.ags[agno], &s);
		if (err)
			break;
		/* Write back as we go so huge filesystems stay small. */
		if (agno % 64 == 63)
			err = xk_buf_flush(mp);
		if (err)
			break;
	}
	if (!err)
		err = write_inodes(mp, cfg, &p);
	if (!err)
		err = xk_log_init_clean(mp, mp->g.log_daddr,
					(uint64_t)cfg->logblocks <<
					(cfg->blocklog - XK_BBSHIFT),
					sb.logsunit > 1 ? sb.logsunit : 0);
	if (err)
		fprintf(stderr, "writing %s failed: %s\n", cfg->dev,
			xk_strerror(err));
out:
	free(p.ags);
	{
		int cerr = xk_mount_close(mp);

		if (cerr && !err) {
			fprintf(stderr, "writing %s failed: %s\n", cfg->dev,
				xk_strerror(cerr));
			err = cerr;
		}
	}
	return err ? 1 : 0;
}
