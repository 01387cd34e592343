// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The filesystem handle: open, derive geometry, close.
 */
#include <stdlib.h>
#include <string.h>

#include <xfskit/libfs.h>

#include "libfs_priv.h"

/* Inode cluster buffers are 8 KiB at 256-byte inodes, scaled with size. */
#define INODE_BIG_CLUSTER_SIZE	8192

static void
derive_geometry(struct xk_mount *mp)
{
	const struct xk_sb *sb = &mp->sb;
	struct xk_geom *g = &mp->g;
	uint32_t cluster_bytes;

	memset(g, 0, sizeof(*g));
	g->blocksize = sb->blocksize;
	g->blocklog = sb->blocklog;
	g->blkbb_log = sb->blocklog - XK_BBSHIFT;
	g->sectsize = sb->sectsize;
	g->sectlog = sb->sectlog;
	g->agblocks = sb->agblocks;
	g->agcount = sb->agcount;
	g->agblklog = sb->agblklog;
	g->dblocks = sb->dblocks;
	g->inodesize = sb->inodesize;
	g->inodelog = sb->inodelog;
	g->inopblock = sb->inopblock;
	g->inopblog = sb->inopblog;
	g->agino_log = sb->agblklog + sb->inopblog;

	g->has_finobt = xk_sb_has_ro_compat(sb, XK_SB_FEAT_RO_COMPAT_FINOBT);
	g->has_rmapbt = xk_sb_has_ro_compat(sb, XK_SB_FEAT_RO_COMPAT_RMAPBT);
	g->has_reflink = xk_sb_has_ro_compat(sb,
					     XK_SB_FEAT_RO_COMPAT_REFLINK);
	g->has_inobtcnt = xk_sb_has_ro_compat(sb,
					      XK_SB_FEAT_RO_COMPAT_INOBTCNT);
	g->has_sparse = xk_sb_has_incompat(sb, XK_SB_FEAT_INCOMPAT_SPINODES);
	g->has_ftype = xk_sb_has_incompat(sb, XK_SB_FEAT_INCOMPAT_FTYPE);
	g->has_bigtime = xk_sb_has_incompat(sb, XK_SB_FEAT_INCOMPAT_BIGTIME);
	g->has_nrext64 = xk_sb_has_incompat(sb, XK_SB_FEAT_INCOMPAT_NREXT64);
	g->has_meta_uuid = xk_sb_has_incompat(sb,
					      XK_SB_FEAT_INCOMPAT_META_UUID);
	g->has_exchrange = xk_sb_has_incompat(sb,
					      XK_SB_FEAT_INCOMPAT_EXCHRANGE);
	g->has_parent = xk_sb_has_incompat(sb, XK_SB_FEAT_INCOMPAT_PARENT);
	g->has_metadir = xk_sb_has_incompat(sb, XK_SB_FEAT_INCOMPAT_METADIR);
	g->has_quota = (sb->versionnum & XK_SB_VERSION_QUOTABIT) != 0;

	/* Inode chunks: 64 inodes, or one block if a block holds more. */
	g->ialloc_inos = sb->inopblock > XK_INODES_PER_CHUNK ?
			 sb->inopblock : XK_INODES_PER_CHUNK;
	g->ialloc_blks = g->ialloc_inos >> sb->inopblog;
	/* Cluster size scales with inode size when alignment allows it. */
	cluster_bytes = INODE_BIG_CLUSTER_SIZE;
	{
		uint32_t scaled = cluster_bytes * (sb->inodesize / 256);

		if (sb->inoalignmt >= (scaled >> sb->blocklog))
			cluster_bytes = scaled;
	}
	g->cluster_blks = cluster_bytes >> sb->blocklog;
	if (g->cluster_blks == 0)
		g->cluster_blks = 1;
	g->cluster_inos = g->cluster_blks << sb->inopblog;
	if ((sb->versionnum & XK_SB_VERSION_ALIGNBIT) &&
	    sb->inoalignmt >= g->cluster_blks)
		g->cluster_align = sb->inoalignmt;
	else
		g->cluster_align = 1;
	g->inoalign_mask = ((sb->versionnum & XK_SB_VERSION_ALIGNBIT) &&
			    sb->inoalignmt) ? sb->inoalignmt - 1 : 0;
	g->spino_align = sb->spino_align;
	g->ialloc_min_blks = g->has_sparse && sb->spino_align ?
			     sb->spino_align : g->ialloc_blks;

	g->dirblklog = sb->dirblklog;
	g->dirblksize = sb->blocksize << sb->dirblklog;

	g->logstart = sb->logstart;
	g->logblocks = sb->logblocks;
	/* An external log starts at the first block of its own device. */
	g->log_daddr = sb->logstart ? xk_fsb_to_daddr(mp, sb->logstart) : 0;
	g->logsectsize = sb->logsectsize ? sb->logsectsize : XK_BBSIZE;
	g->agfl_size = xk_agfl_size(sb->sectsize);

	for (int bt = 0; bt < XK_BT_NR; bt++) {
		const struct xk_btree_ops *ops = xk_btree_ops_get(bt);

		g->maxrecs[bt][0] = xk_btree_maxrecs(ops, sb->blocksize, 1);
		g->maxrecs[bt][1] = xk_btree_maxrecs(ops, sb->blocksize, 0);
	}
	g->maxlevels[XK_BT_BNO] = xk_btree_compute_maxlevels(
		g->maxrecs[XK_BT_BNO][0], g->maxrecs[XK_BT_BNO][1],
		((uint64_t)sb->agblocks + 1) / 2);
	g->maxlevels[XK_BT_CNT] = g->maxlevels[XK_BT_BNO];
	g->maxlevels[XK_BT_INO] = xk_btree_compute_maxlevels(
		g->maxrecs[XK_BT_INO][0], g->maxrecs[XK_BT_INO][1],
		((uint64_t)sb->agblocks << sb->inopblog) /
		XK_INODES_PER_CHUNK);
	g->maxlevels[XK_BT_FINO] = g->maxlevels[XK_BT_INO];
	/* With reflink an AG block may have many owners: no useful bound. */
	g->maxlevels[XK_BT_RMAP] = g->has_reflink ? XK_BTREE_MAXLEVELS :
		xk_btree_compute_maxlevels(g->maxrecs[XK_BT_RMAP][0],
					   g->maxrecs[XK_BT_RMAP][1],
					   sb->agblocks);
	g->maxlevels[XK_BT_REFC] = xk_btree_compute_maxlevels(
		g->maxrecs[XK_BT_REFC][0], g->maxrecs[XK_BT_REFC][1],
		sb->agblocks);
	g->maxlevels[XK_BT_BMAP] = XK_BTREE_MAXLEVELS;
	/* Rooted in an inode; the walker bounds their height. */
	g->maxlevels[XK_BT_RTRMAP] = XK_BTREE_MAXLEVELS;
	g->maxlevels[XK_BT_RTREFC] = XK_BTREE_MAXLEVELS;
	for (int bt = 0; bt < XK_BT_NR; bt++)
		if (g->maxlevels[bt] > XK_BTREE_MAXLEVELS)
			g->maxlevels[bt] = XK_BTREE_MAXLEVELS;
}

void
xk_mount_rederive(struct xk_mount *mp)
{
	derive_geometry(mp);
}

int
xk_mount_from_sb(struct xk_dev *dev, const struct xk_sb *sb,
		 unsigned int flags, struct xk_mount **mpp, struct xk_fail *f)
{
	struct xk_mount *mp;
	int err;

	*mpp = NULL;
	memset(f, 0, sizeof(*f));
	f->agno = -1;
	err = xk_sb_check(sb, dev ? dev->size : 0, f);
	if (err)
		return err;
	mp = calloc(1, sizeof(*mp));
	if (!mp)
		return -ENOMEM;
	mp->dev = dev;
	mp->flags = flags;
	mp->sb = *sb;
	memcpy(mp->meta_uuid, xk_sb_has_incompat(sb,
		XK_SB_FEAT_INCOMPAT_META_UUID) ? sb->meta_uuid : sb->uuid, 16);
	err = xk_bcache_init(mp);
	if (err) {
		free(mp);
		return err;
	}
	derive_geometry(mp);
	*mpp = mp;
	return 0;
}

int
xk_mount_open(const char *path, unsigned int flags, struct xk_mount **mpp,
	      struct xk_fail *f)
{
	struct xk_dev *dev;
	struct xk_dsb dsb;
	struct xk_sb sb;
	uint8_t sector[XK_BBSIZE];
	int err;

	*mpp = NULL;
	memset(f, 0, sizeof(*f));
	f->agno = -1;
	f->structure = "superblock";
	/* Writers get the device to themselves (O_EXCL on block devices). */
	err = xk_dev_open(path, ((flags & XK_MOUNT_RDONLY) ? XK_DEV_RDONLY :
				 XK_DEV_EXCL) |
			  ((flags & XK_MOUNT_DIRECT) ? XK_DEV_DIRECT : 0), &dev);
	if (err)
		return err;
	err = xk_dev_pread(dev, sector, sizeof(sector), 0);
	if (err) {
		if (err == XK_ETRUNC)
			xk_fail_set(f, "size", "device is only %llu bytes, "
				    "too small to hold a superblock",
				    (unsigned long long)dev->size);
		xk_dev_close(dev);
		return err;
	}
	memcpy(&dsb, sector, sizeof(dsb));
	xk_sb_decode(&sb, &dsb);
	err = xk_mount_from_sb(dev, &sb, flags, mpp, f);
	if (err) {
		xk_dev_close(dev);
		return err;
	}
	(*mpp)->owns_dev = 1;
	return 0;
}

int
xk_mount_close(struct xk_mount *mp)
{
	int err = 0;

	if (!mp)
		return 0;
	if (!(mp->flags & XK_MOUNT_RDONLY)) {
		err = xk_buf_flush(mp);
		if (!err)
			err = xk_dev_sync(mp->dev);
		if (!err && mp->logdev)
			err = xk_dev_sync(mp->logdev);
		if (!err && mp->rtdev)
			err = xk_dev_sync(mp->rtdev);
	}
	xk_needsrepair_disarm(mp);
	xk_bcache_destroy(mp);
	if (mp->owns_dev)
		xk_dev_close(mp->dev);
	if (mp->logdev)
		xk_dev_close(mp->logdev);
	if (mp->rtdev)
		xk_dev_close(mp->rtdev);
	free(mp);
	return err;
}

void
xk_mount_discard(struct xk_mount *mp)
{
	if (!mp)
		return;
	xk_needsrepair_disarm(mp);
	xk_buf_discard_dirty(mp);
	xk_bcache_destroy(mp);
	if (mp->owns_dev)
		xk_dev_close(mp->dev);
	if (mp->logdev)
		xk_dev_close(mp->logdev);
	if (mp->rtdev)
		xk_dev_close(mp->rtdev);
	free(mp);
}

uint32_t
xk_ag_blocks(const struct xk_mount *mp, uint32_t agno)
{
	if (agno + 1 < mp->g.agcount)
		return mp->g.agblocks;
	if (agno >= mp->g.agcount)
		return 0;
	return (uint32_t)(mp->g.dblocks -
			  (uint64_t)agno * mp->g.agblocks);
}

int
xk_ino_valid(const struct xk_mount *mp, uint64_t ino)
{
	uint32_t agno = xk_ino_to_agno(mp, ino);
	uint32_t agino = xk_ino_to_agino(mp, ino);

	if (ino >> mp->g.agino_log != agno || agno >= mp->g.agcount)
		return 0;
	return xk_agino_to_agbno(mp, agino) < xk_ag_blocks(mp, agno) &&
	       xk_agino_to_agbno(mp, agino) != 0;
}

/*
 * The inode numbers an AG can hold: from the first inode cluster after
 * the AGFL's block to the last whole cluster before the AG's end (the
 * range the kernel accepts for unlinked-list pointers).
 */
int
xk_agino_in_range(const struct xk_mount *mp, uint32_t agno, uint32_t agino)
{
	uint32_t align = mp->g.cluster_align ? mp->g.cluster_align : 1;
	uint64_t agfl_bno = (3ULL * mp->g.sectsize) >> mp->g.blocklog;
	uint64_t first = (agfl_bno + 1 + align - 1) / align * align;
	uint64_t end = xk_ag_blocks(mp, agno) / align * align;

	if (agno >= mp->g.agcount || end <= first)
		return 0;
	return agino >= first << mp->g.inopblog &&
	       agino < end << mp->g.inopblog;
}

int
xk_agbext_valid(const struct xk_mount *mp, uint32_t agno, uint32_t agbno,
		uint64_t len)
{
	if (agno >= mp->g.agcount || len == 0)
		return 0;
	return (uint64_t)agbno + len <= xk_ag_blocks(mp, agno);
}

int
xk_fsbext_valid(const struct xk_mount *mp, uint64_t fsb, uint64_t len)
{
	/*
	 * The AG number is the 32 bits above the AG block number, as the
	 * kernel and xfs_repair take it (XFS_FSB_TO_AGNO): bits above those
	 * are ignored by both, so a block number with them set names the
	 * same block, and calling it invalid would lose what it maps.
	 */
	return xk_agbext_valid(mp, xk_fsb_to_agno(mp, fsb),
			       xk_fsb_to_agbno(mp, fsb), len);
}

int
xk_fileext_valid(const struct xk_mount *mp, uint64_t off, uint64_t len)
{
	uint64_t max = ((1ULL << 63) - 1) >> mp->g.blocklog;

	return len > 0 && off + len > off && off + len - 1 < max;
}

const char *
xk_version(void)
{
	return PACKAGE_VERSION;
}
