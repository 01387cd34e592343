// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Inodes: where they live (cluster buffers), the cluster verifier, and
 * the full check of one v5 on-disk inode.  Each inode carries its own
 * CRC over inodesize bytes, so a cluster buffer has no CRC of its own;
 * the cluster verifier only checks that every slot looks like an inode,
 * as the kernel's buffer verifier does, and the per-inode rules run when
 * an inode is used.
 */
#include <string.h>

#include <xfskit/libfs.h>
#include <xfskit/meta.h>
#include <xfskit/format/dir.h>
#include <xfskit/format/rtgroup.h>

int
xk_imap(const struct xk_mount *mp, uint64_t ino, struct xk_imap *im)
{
	const struct xk_geom *g = &mp->g;
	uint32_t agno, agino, agbno, chunk, cluster;

	if (!xk_ino_valid(mp, ino))
		return -EINVAL;
	agno = xk_ino_to_agno(mp, ino);
	agino = xk_ino_to_agino(mp, ino);
	agbno = xk_agino_to_agbno(mp, agino);
	/* Chunks start on inoalignmt boundaries; clusters tile the chunk. */
	if (g->inoalign_mask)
		chunk = agbno & ~g->inoalign_mask;
	else
		chunk = agbno - agbno % g->ialloc_blks;
	cluster = chunk + (agbno - chunk) / g->cluster_blks * g->cluster_blks;
	if (!xk_agbext_valid(mp, agno, cluster, g->cluster_blks))
		return -EINVAL;
	im->daddr = xk_agb_to_daddr(mp, agno, cluster);
	im->len = g->cluster_blks << g->blocklog;
	im->offset = ((agbno - cluster) << g->blocklog) +
		     ((agino & (g->inopblock - 1)) << g->inodelog);
	return 0;
}

static int
cluster_verify(struct xk_buf *bp, struct xk_fail *f)
{
	uint32_t isz = bp->mp->g.inodesize;

	for (uint32_t off = 0; off + isz <= bp->len; off += isz) {
		const struct xk_dinode *dip =
			(const struct xk_dinode *)(bp->data + off);

		if (xk_be16_get(dip->di_magic) != XK_DINODE_MAGIC)
			return xk_fail_set(f, "magic", "inode %u of the "
					   "cluster has magic 0x%04x", off / isz,
					   xk_be16_get(dip->di_magic));
		if (dip->di_version != XK_DINODE_VERSION_3)
			return xk_fail_set(f, "version", "inode %u of the "
					   "cluster has version %u", off / isz,
					   dip->di_version);
	}
	return 0;
}

const struct xk_buf_ops xk_inode_cluster_buf_ops = {
	.name = "inode cluster",
	.crc_off = XK_NO_CRC,
	.verify = cluster_verify,
};

int
xk_inode_read(struct xk_mount *mp, uint64_t ino, unsigned int flags,
	      struct xk_buf **bpp, struct xk_dinode **dipp)
{
	struct xk_imap im;
	int err;

	*bpp = NULL;
	*dipp = NULL;
	err = xk_imap(mp, ino, &im);
	if (err)
		return err;
	err = xk_buf_read_ctx(mp, im.daddr, im.len, &xk_inode_cluster_buf_ops,
			      xk_ino_to_agno(mp, ino), 0, flags, bpp);
	if (*bpp)
		*dipp = (struct xk_dinode *)((*bpp)->data + im.offset);
	return err;
}

/* Extent size hints: the kernel's rules for di_extsize. */
static int
check_extsize(struct xk_mount *mp, const struct xk_dinode *dip,
	      uint16_t mode, uint16_t flags, struct xk_fail *f)
{
	uint32_t extsize = xk_be32_get(dip->di_extsize);
	int hint = (flags & XK_DIFLAG_EXTSIZE) != 0;
	int inherit = (flags & XK_DIFLAG_EXTSZINHERIT) != 0;
	uint16_t type = mode & XK_S_IFMT;

	if (hint && type != XK_S_IFREG)
		return xk_fail_set(f, "extsize", "extent size hint on a "
				   "non-regular file");
	if (inherit && type != XK_S_IFDIR)
		return xk_fail_set(f, "extsize", "inherited extent size hint "
				   "on a non-directory");
	if ((hint || inherit) && extsize == 0)
		return xk_fail_set(f, "extsize", "hint flag set but size 0");
	if (!(hint || inherit) && extsize != 0)
		return xk_fail_val(f, "extsize", 0, extsize);
	if (extsize > XK_MAX_BMBT_EXTLEN ||
	    extsize > mp->g.agblocks / 2)
		return xk_fail_set(f, "extsize", "hint of %u blocks is too "
				   "large", extsize);
	return 0;
}

static int
check_cowextsize(struct xk_mount *mp, const struct xk_dinode *dip,
		 uint16_t mode, uint16_t flags, uint64_t flags2,
		 struct xk_fail *f)
{
	uint32_t cow = xk_be32_get(dip->di_cowextsize);
	int hint = (flags2 & XK_DIFLAG2_COWEXTSIZE) != 0;
	uint16_t type = mode & XK_S_IFMT;

	if (hint && !mp->g.has_reflink)
		return xk_fail_set(f, "cowextsize", "CoW hint without the "
				   "reflink feature");
	if (hint && type != XK_S_IFREG && type != XK_S_IFDIR)
		return xk_fail_set(f, "cowextsize", "CoW hint on a file that "
				   "is neither regular nor a directory");
	if (hint && cow == 0)
		return xk_fail_set(f, "cowextsize", "hint flag set but size 0");
	if (!hint && cow != 0)
		return xk_fail_val(f, "cowextsize", 0, cow);
	if (hint && (flags & XK_DIFLAG_REALTIME))
		return xk_fail_set(f, "cowextsize", "CoW hint on a realtime "
				   "file");
	if (cow > XK_MAX_BMBT_EXTLEN || cow > mp->g.agblocks / 2)
		return xk_fail_set(f, "cowextsize", "hint of %u blocks is too "
				   "large", cow);
	return 0;
}

/* A fork's contents must fit the space its format claims. */
static int
check_fork_fit(struct xk_mount *mp, const struct xk_dinode *dip, int fork,
	       struct xk_fail *f)
{
	unsigned int size = xk_dfork_size(dip, mp->g.inodesize, fork);
	uint64_t nex = xk_dinode_fork_nextents(dip, fork);
	const char *name = fork == XK_DATA_FORK ? "data fork" : "attr fork";

	switch (xk_dfork_format(dip, fork)) {
	case XK_DINODE_FMT_EXTENTS:
		if (nex * sizeof(struct xk_bmbt_rec) > size)
			return xk_fail_set(f, name, "%llu extents do not fit "
					   "%u bytes", (unsigned long long)nex,
					   size);
		break;
	case XK_DINODE_FMT_BTREE: {
		const struct xk_bmdr_block *root = (const struct xk_bmdr_block *)
			xk_dfork_ptr(dip, fork);
		uint16_t level = xk_be16_get(root->bb_level);
		uint16_t nrecs = xk_be16_get(root->bb_numrecs);

		if (size < sizeof(*root) || level == 0 ||
		    level >= XK_BTREE_MAXLEVELS || nrecs == 0 ||
		    nrecs > xk_bmdr_maxrecs(size, 0))
			return xk_fail_set(f, name, "btree root (level %u, %u "
					   "records) does not fit %u bytes",
					   level, nrecs, size);
		break;
	}
	}
	return 0;
}

/* The first two rules of every inode check. */
static int
dinode_magic_version(const struct xk_dinode *dip, struct xk_fail *f)
{
	if (xk_be16_get(dip->di_magic) != XK_DINODE_MAGIC)
		return xk_fail_val(f, "magic", XK_DINODE_MAGIC,
				   xk_be16_get(dip->di_magic));
	if (dip->di_version != XK_DINODE_VERSION_3)
		return xk_fail_val(f, "version", XK_DINODE_VERSION_3,
				   dip->di_version);
	return 0;
}

/*
 * A metadata inode (the METADATA flag), as the kernel's verifier wants
 * it: 1. only on a METADIR filesystem; 2. a metafile type the format
 * knows; 3. the padding of the extent counters zero; 4. a directory or
 * a regular file with no permission bits; 5. no DMAPI masks; 6. uid and
 * gid 0 (metadata is never charged to quotas); 7. the flags every
 * metadata file has (directories also NOSYMLINKS); 8. not DAX.
 */
static int
check_metafile(struct xk_mount *mp, const struct xk_dinode *dip,
	       uint16_t mode, uint16_t flags, uint64_t flags2,
	       struct xk_fail *f)
{
	uint16_t type = mode & XK_S_IFMT;
	uint16_t need = type == XK_S_IFDIR ? XK_METADIR_DIFLAGS :
			XK_METAFILE_DIFLAGS;

	if (!mp->g.has_metadir)
		return xk_fail_set(f, "flags2", "metadata flag without the "
				   "metadir feature");
	if (xk_dinode_metatype(dip) >= XK_METAFILE_MAX)
		return xk_fail_set(f, "metatype", "metafile type %u is not "
				   "known", xk_dinode_metatype(dip));
	if ((flags2 & XK_DIFLAG2_NREXT64) ?
	    xk_be16_get(dip->di_nrext64_pad) != 0 :
	    xk_be16_get(dip->di_flushiter) != 0)
		return xk_fail_set(f, "flushiter", "padding of a metadata "
				   "inode is not zero");
	if (type != XK_S_IFDIR && type != XK_S_IFREG)
		return xk_fail_set(f, "mode", "metadata inode of mode 0%o is "
				   "neither a directory nor a regular file",
				   mode);
	if (mode & 0777)
		return xk_fail_set(f, "mode", "metadata inode has permission "
				   "bits 0%o", mode & 0777);
	if (xk_be32_get(dip->di_dmevmask) || xk_be16_get(dip->di_dmstate))
		return xk_fail_set(f, "dmevmask", "metadata inode has DMAPI "
				   "masks");
	if (xk_be32_get(dip->di_uid) || xk_be32_get(dip->di_gid))
		return xk_fail_set(f, "uid", "metadata inode owned by uid %u "
				   "gid %u, not 0", xk_be32_get(dip->di_uid),
				   xk_be32_get(dip->di_gid));
	if ((flags & need) != need)
		return xk_fail_set(f, "flags", "metadata inode lacks flags "
				   "0x%x", need & ~flags);
	if (flags2 & XK_DIFLAG2_DAX)
		return xk_fail_set(f, "flags2", "metadata inode with DAX");
	return 0;
}

/*
 * Rules, after the kernel's inode verifier: 1. magic "IN"; 2. version 3;
 * 3. CRC; 4. no v1 link count, and the inode number it records;
 * 5. metadata UUID (its LSN is noted, xk_mount_note_lsn, not judged),
 * and an unlinked-list pointer that is null or inside the AG's inode
 * range (the kernel's inode buffer verifier); 6. size below 2^63; 7. a
 * known file type; 8. directories and symlinks are not empty; 9. no more
 * extents than blocks; 10. the attr fork offset inside the literal area
 * (free inodes too); 11. no realtime files (no realtime device); 12. a
 * data fork format the file type allows (device, or local / extents /
 * btree; never local for regular files, and local data fits; a metadata
 * btree root only for the realtime groups' rmap and refcount inodes,
 * meta_btree_ok); 13. an
 * attr fork format that exists (or none); 14. extent size and CoW hint
 * rules; 15. flags2: reflink and CoW hints only with the reflink feature,
 * reflink only on regular files and not with realtime or DAX, bigtime and
 * large extent counters only with their features, no unknown bits,
 * the metadata flag only as check_metafile() allows;
 * 16. extent lists and btree roots fit their fork (the attr fork's also
 * for a free inode).
 */
/*
 * The metadata btree format (a btree root in the fork) belongs to the
 * realtime groups' rmap and refcount inodes: metadata files of those
 * types on a METADIR filesystem.
 */
static int
meta_btree_ok(const struct xk_mount *mp, const struct xk_dinode *dip)
{
	uint16_t metatype = xk_be16_get(dip->di_onlink);

	return mp->g.has_metadir &&
	       (xk_be64_get(dip->di_flags2) & XK_DIFLAG2_METADATA) &&
	       (metatype == XK_METAFILE_RTRMAP ||
		metatype == XK_METAFILE_RTREFCOUNT);
}

static int
dinode_check(struct xk_mount *mp, uint64_t ino, const struct xk_dinode *dip,
	     int check_crc, struct xk_fail *f)
{
	uint16_t mode = xk_be16_get(dip->di_mode);
	uint16_t flags = xk_be16_get(dip->di_flags);
	uint64_t flags2 = xk_be64_get(dip->di_flags2);
	uint64_t size = xk_be64_get(dip->di_size);
	uint16_t type = mode & XK_S_IFMT;
	int err;

	err = dinode_magic_version(dip, f);
	if (err)
		return err;
	if (check_crc && !xk_cksum_ok(dip, mp->g.inodesize, XK_DINODE_CRC_OFF)) {
		xk_fail_val(f, "crc", xk_cksum_calc(dip, mp->g.inodesize,
						    XK_DINODE_CRC_OFF),
			    xk_get_le32(dip->di_crc));
		f->crc_bad = 1;
		return XK_EBADCRC;
	}
	/* A metadata inode keeps its metafile type in di_onlink. */
	if (xk_be16_get(dip->di_onlink) &&
	    !((flags2 & XK_DIFLAG2_METADATA) && mp->g.has_metadir))
		return xk_fail_val(f, "onlink", 0, xk_be16_get(dip->di_onlink));
	if (ino && xk_be64_get(dip->di_ino) != ino)
		return xk_fail_val(f, "ino", ino, xk_be64_get(dip->di_ino));
	if (memcmp(dip->di_uuid, mp->meta_uuid, 16))
		return xk_fail_set(f, "uuid", "does not match the superblock");
	if (ino && xk_be32_get(dip->di_next_unlinked) != XK_NULLAGINO &&
	    !xk_agino_in_range(mp, xk_ino_to_agno(mp, ino),
			       xk_be32_get(dip->di_next_unlinked)))
		return xk_fail_set(f, "next_unlinked", "0x%x is neither null "
				   "nor an inode of the AG",
				   xk_be32_get(dip->di_next_unlinked));
	/*
	 * Before anything reads the extent counters, whose layout the
	 * flag chooses: a stray flag must be what is reported (and
	 * cleared), not the counters it misreads.
	 */
	if ((flags2 & XK_DIFLAG2_NREXT64) && !mp->g.has_nrext64)
		return xk_fail_set(f, "flags2", "large extent counters "
				   "without the nrext64 feature");
	if (size >> 63)
		return xk_fail_set(f, "size", "size 0x%llx is negative",
				   (unsigned long long)size);
	if (mode && xk_mode_to_ftype(mode) == XK_DIR3_FT_UNKNOWN)
		return xk_fail_set(f, "mode", "unknown file type in mode 0%o",
				   mode);
	if ((type == XK_S_IFDIR || type == XK_S_IFLNK) && size == 0)
		return xk_fail_set(f, "size", "empty %s",
				   type == XK_S_IFDIR ? "directory" :
				   "symlink");
	if (mode && xk_dinode_nextents(dip) + xk_dinode_anextents(dip) >
		    xk_be64_get(dip->di_nblocks))
		return xk_fail_set(f, "nblocks", "%llu blocks for %llu "
				   "extents", (unsigned long long)
				   xk_be64_get(dip->di_nblocks),
				   (unsigned long long)
				   (xk_dinode_nextents(dip) +
				    xk_dinode_anextents(dip)));
	if (xk_dinode_forkoff_bytes(dip) >=
		    xk_dinode_litino(mp->g.inodesize))
		return xk_fail_val(f, "forkoff",
				   xk_dinode_litino(mp->g.inodesize) / 8 - 1,
				   dip->di_forkoff);
	if (mode && (flags & XK_DIFLAG_REALTIME) && mp->sb.rblocks == 0)
		return xk_fail_set(f, "flags", "realtime file but no realtime "
				   "device");

	switch (type) {
	case XK_S_IFIFO:
	case XK_S_IFCHR:
	case XK_S_IFBLK:
	case XK_S_IFSOCK:
		if (dip->di_format != XK_DINODE_FMT_DEV)
			return xk_fail_val(f, "format", XK_DINODE_FMT_DEV,
					   dip->di_format);
		break;
	case XK_S_IFREG:
	case XK_S_IFLNK:
	case XK_S_IFDIR:
		switch (dip->di_format) {
		case XK_DINODE_FMT_LOCAL:
			if (type == XK_S_IFREG)
				return xk_fail_set(f, "format", "regular file "
						   "in local format");
			if (size > xk_dfork_dsize(dip, mp->g.inodesize))
				return xk_fail_set(f, "size", "local data of "
					"%llu bytes exceeds the %u-byte fork",
					(unsigned long long)size,
					xk_dfork_dsize(dip, mp->g.inodesize));
			if (xk_dinode_nextents(dip))
				return xk_fail_set(f, "nextents", "local fork "
						   "with extents");
			break;
		case XK_DINODE_FMT_EXTENTS:
		case XK_DINODE_FMT_BTREE:
			break;
		case XK_DINODE_FMT_META_BTREE:
			/* A realtime group's rmap or refcount btree root. */
			if (meta_btree_ok(mp, dip))
				break;
			/* fall through */
		default:
			return xk_fail_set(f, "format", "data fork format %u "
					   "is not valid", dip->di_format);
		}
		break;
	case 0:
		break;		/* free inode */
	}

	if (dip->di_forkoff) {
		switch (dip->di_aformat) {
		case XK_DINODE_FMT_LOCAL:
			if (xk_dinode_anextents(dip))
				return xk_fail_set(f, "anextents", "local attr "
						   "fork with extents");
			break;
		case XK_DINODE_FMT_EXTENTS:
		case XK_DINODE_FMT_BTREE:
			break;
		default:
			return xk_fail_set(f, "aformat", "attr fork format %u "
					   "is not valid", dip->di_aformat);
		}
	} else {
		if (dip->di_aformat != 0 &&
		    dip->di_aformat != XK_DINODE_FMT_EXTENTS)
			return xk_fail_set(f, "aformat", "attr fork format %u "
					   "without an attr fork",
					   dip->di_aformat);
		if (xk_dinode_anextents(dip))
			return xk_fail_set(f, "anextents", "attr extents "
					   "without an attr fork");
	}

	err = check_extsize(mp, dip, mode, flags, f);
	if (err)
		return err;
	if (flags2 & ~(XK_DIFLAG2_ANY | XK_DIFLAG2_METADATA))
		return xk_fail_set(f, "flags2", "unknown bits 0x%llx",
				   (unsigned long long)(flags2 &
				   ~(XK_DIFLAG2_ANY | XK_DIFLAG2_METADATA)));
	if (flags2 & XK_DIFLAG2_METADATA) {
		err = check_metafile(mp, dip, mode, flags, flags2, f);
		if (err)
			return err;
	}
	if ((flags2 & (XK_DIFLAG2_REFLINK | XK_DIFLAG2_COWEXTSIZE)) &&
	    !mp->g.has_reflink)
		return xk_fail_set(f, "flags2", "reflink flags without the "
				   "reflink feature");
	if ((flags2 & XK_DIFLAG2_REFLINK) && type != XK_S_IFREG)
		return xk_fail_set(f, "flags2", "reflink flag on a "
				   "non-regular file");
	/* Realtime groups with reflink share realtime extents too. */
	if ((flags2 & XK_DIFLAG2_REFLINK) &&
	    (((flags & XK_DIFLAG_REALTIME) && !xk_sb_has_rtgroups(&mp->sb)) ||
	     (flags2 & XK_DIFLAG2_DAX)))
		return xk_fail_set(f, "flags2", "reflink with realtime or "
				   "DAX");
	if ((flags2 & XK_DIFLAG2_BIGTIME) && !mp->g.has_bigtime)
		return xk_fail_set(f, "flags2", "bigtime timestamps without "
				   "the bigtime feature");
	err = check_cowextsize(mp, dip, mode, flags, flags2, f);
	if (err)
		return err;
	/* A free inode's attr fork is checked too, as the kernel does. */
	if (mode)
		err = check_fork_fit(mp, dip, XK_DATA_FORK, f);
	if (!err && dip->di_forkoff)
		err = check_fork_fit(mp, dip, XK_ATTR_FORK, f);
	return err;
}

int
xk_dinode_verify_copy(struct xk_mount *mp, uint64_t ino,
		      const struct xk_dinode *dip, struct xk_fail *f)
{
	return dinode_check(mp, ino, dip, 1, f);
}

int
xk_dinode_verify(struct xk_mount *mp, uint64_t ino,
		 const struct xk_dinode *dip, struct xk_fail *f)
{
	int err = dinode_check(mp, ino, dip, 1, f);

	if (!err)
		xk_mount_note_lsn(mp, xk_be64_get(dip->di_lsn));
	return err;
}

/*
 * What the kernel's inode buffer write verifier checks, and so what
 * xfs_db's plain write refuses: the magic, the version and an unlinked
 * pointer that is null or inside the AG.  Everything else in an inode is
 * the inode verifier's, which runs when the inode is read.
 */
int
xk_dinode_write_check(struct xk_mount *mp, uint64_t ino,
		      const struct xk_dinode *dip, struct xk_fail *f)
{
	uint32_t next = xk_be32_get(dip->di_next_unlinked);
	int err = dinode_magic_version(dip, f);

	if (err)
		return err;
	if (next != XK_NULLAGINO &&
	    !xk_agino_in_range(mp, xk_ino_to_agno(mp, ino), next))
		return xk_fail_set(f, "next_unlinked", "0x%x is neither null "
				   "nor an inode of the AG", next);
	return 0;
}

/*
 * Buffer ops for a single inode (db's "inode" type).  The buffer layer
 * checks the CRC on read and restamps it on write, so the structure
 * check here leaves it alone.
 */
static int
dinode_buf_verify(struct xk_buf *bp, struct xk_fail *f)
{
	if (bp->len < bp->mp->g.inodesize)
		return xk_fail_set(f, "size", "buffer smaller than an inode");
	return dinode_check(bp->mp, bp->owner,
			    (const struct xk_dinode *)bp->data, 0, f);
}

const struct xk_buf_ops xk_dinode_buf_ops = {
	.name = "inode",
	.crc_off = XK_DINODE_CRC_OFF,
	.lsn_off = offsetof(struct xk_dinode, di_lsn),
	.verify = dinode_buf_verify,
};
