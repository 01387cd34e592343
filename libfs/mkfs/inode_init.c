// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Inodes as a fresh filesystem holds them: a chunk whose every slot is a
 * valid free inode (magic, version 3, its own number, the metadata UUID,
 * a null unlinked pointer, a CRC), and the allocated inodes mkfs creates
 * in it: the root directory (short form, holding only its parent) and
 * the realtime bitmap and summary files.  Core fields follow what
 * mkfs.xfs 6.1 writes: atime zero, the other times "now", change count
 * 2, generation 0, the BIGTIME and NREXT64 inode flags when the
 * filesystem has the features.
 */
#include <errno.h>
#include <string.h>

#include <xfskit/init.h>
#include <xfskit/libfs.h>
#include <xfskit/format/dinode.h>
#include <xfskit/format/dir.h>

#include "write/attr_fmt.h"

void
xk_inode_init_crc(const struct xk_mount *mp, void *dip)
{
	xk_cksum_update(dip, mp->g.inodesize, XK_DINODE_CRC_OFF);
}

static void
core_common(const struct xk_mount *mp, struct xk_dinode *dip, uint64_t ino)
{
	memset(dip, 0, mp->g.inodesize);
	xk_be16_set(&dip->di_magic, XK_DINODE_MAGIC);
	dip->di_version = XK_DINODE_VERSION_3;
	xk_be32_set(&dip->di_next_unlinked, XK_NULLAGINO);
	xk_be64_set(&dip->di_ino, ino);
	memcpy(dip->di_uuid, mp->meta_uuid, 16);
}

void
xk_inode_init_free(const struct xk_mount *mp, void *p, uint64_t ino)
{
	struct xk_dinode *dip = p;

	core_common(mp, dip, ino);
	xk_inode_init_crc(mp, dip);
}

void
xk_inode_init_core(const struct xk_mount *mp, void *p, uint64_t ino,
		   const struct xk_inode_init *ii)
{
	struct xk_dinode *dip = p;
	struct xk_timespec now = { ii->now_sec, ii->now_nsec };
	struct xk_timespec zero = { 0, 0 };
	int bigtime = mp->g.has_bigtime;
	uint64_t flags2 = 0;

	core_common(mp, dip, ino);
	xk_be16_set(&dip->di_mode, ii->mode);
	dip->di_format = ii->format;
	dip->di_aformat = XK_DINODE_FMT_EXTENTS;
	xk_be32_set(&dip->di_nlink, ii->nlink);
	dip->di_atime = xk_timestamp_encode(zero, bigtime);
	dip->di_mtime = xk_timestamp_encode(now, bigtime);
	dip->di_ctime = xk_timestamp_encode(now, bigtime);
	dip->di_crtime = xk_timestamp_encode(now, bigtime);
	xk_be64_set(&dip->di_size, ii->size);
	xk_be16_set(&dip->di_flags, ii->flags);
	xk_be64_set(&dip->di_changecount, 2);
	if (bigtime)
		flags2 |= XK_DIFLAG2_BIGTIME;
	if (mp->g.has_nrext64)
		flags2 |= XK_DIFLAG2_NREXT64;
	xk_be64_set(&dip->di_flags2, flags2);
	xk_inode_init_crc(mp, dip);
}

uint32_t
xk_inode_init_sfdir(const struct xk_mount *mp, void *dip, uint64_t parent)
{
	return xk_inode_init_sfdir_ents(mp, dip, parent, NULL, 0);
}

int
xk_inode_init_chunk(struct xk_mount *mp, uint32_t agno, uint32_t agbno,
		    uint32_t blocks)
{
	const struct xk_geom *g = &mp->g;
	uint32_t cblks = g->cluster_blks;

	if (cblks > blocks)
		cblks = blocks;
	for (uint32_t b = 0; b < blocks; b += cblks) {
		struct xk_buf *bp;
		uint32_t len = cblks << g->blocklog;
		int err = xk_buf_get(mp, xk_agb_to_daddr(mp, agno, agbno + b),
				     len, &xk_inode_cluster_buf_ops, &bp);

		if (err)
			return err;
		bp->agno = agno;
		for (uint32_t off = 0; off < len; off += g->inodesize) {
			uint32_t agino = ((agbno + b) << g->inopblog) +
					 (off >> g->inodelog);

			xk_inode_init_free(mp, bp->data + off,
					   xk_agino_to_ino(mp, agno, agino));
		}
		xk_buf_dirty(bp);
		xk_buf_release(bp);
	}
	return 0;
}

int
xk_inode_init_get(struct xk_mount *mp, uint64_t ino, struct xk_buf **bpp,
		  void **dipp)
{
	struct xk_imap im;
	int err = xk_imap(mp, ino, &im);

	*bpp = NULL;
	if (err)
		return err;
	/* The chunk was just written through the cache: no read happens. */
	err = xk_buf_read(mp, im.daddr, im.len, &xk_inode_cluster_buf_ops,
			  XK_READ_NOVERIFY, bpp);
	if (err)
		return err;
	*dipp = (*bpp)->data + im.offset;
	return 0;
}

/*
 * Where the kernel starts a new attr fork of `bytes` short-form bytes
 * on an inode without one whose data fork is short form or extents:
 * right below the attributes, but no higher than leaves room for an
 * attr bmbt root of 2 pointers and no lower than a data bmbt root of 3
 * pointers (or the data fork) needs.  0 when it does not fit.
 */
static uint32_t
sf_forkoff(uint32_t lit, uint32_t bytes, uint32_t dsize)
{
	uint32_t bmdr2 = 4 + 2 * 16, bmdr3 = 4 + 3 * 16;
	uint32_t offset, minfo, maxfo;

	if (bytes > lit)
		return 0;
	offset = (lit - bytes) >> 3;
	minfo = ((dsize > bmdr3 ? dsize : bmdr3) + 7) >> 3;
	maxfo = (lit - bmdr2) >> 3;
	if (offset >= maxfo)
		return maxfo;
	return offset >= minfo ? offset : 0;
}

int
xk_inode_init_sfattr(const struct xk_mount *mp, void *p,
		     const struct xk_bld_xattr *xa, size_t n)
{
	struct xk_dinode *dip = p;
	uint32_t lit = xk_dinode_litino(mp->g.inodesize);
	uint32_t bytes = sizeof(struct xk_attr_sf_hdr), dsize, fo;

	if (dip->di_forkoff || (dip->di_format != XK_DINODE_FMT_LOCAL &&
				dip->di_format != XK_DINODE_FMT_EXTENTS))
		return -EINVAL;
	for (size_t i = 0; i < n; i++) {
		if (xa[i].valuelen > 255)
			return -E2BIG;
		bytes += xk_attr_sf_entsize_byname(xa[i].namelen,
						   xa[i].valuelen);
	}
	dsize = dip->di_format == XK_DINODE_FMT_LOCAL ?
		(uint32_t)xk_be64_get(dip->di_size) :
		(uint32_t)(xk_dinode_nextents(dip) * sizeof(struct xk_bmbt_rec));
	fo = sf_forkoff(lit, bytes, dsize);
	if (!fo || lit - fo * 8 < bytes)
		return -ENOSPC;
	dip->di_forkoff = (uint8_t)fo;
	dip->di_aformat = XK_DINODE_FMT_LOCAL;
	attr_sf_fill(xa, n, xk_dfork_dptr(dip) + fo * 8);
	xk_inode_init_crc(mp, dip);
	return 0;
}
