// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Directories of the metadata directory tree (METADIR) as a new
 * filesystem holds them, and the short-form pieces they are made of:
 * a short-form directory listing entries, and the parent pointer of an
 * inode that starts life with one.  What mkfs.xfs 7.2 writes, checked
 * field by field with xfs_db 7.2: mode S_IFDIR with no permission bits,
 * the metadata inode flags (immutable, sync, noatime, nodump, nodefrag,
 * nosymlinks), the METADATA flag2, the metafile type "dir" in the
 * di_onlink word, and every timestamp "now", atime included (the
 * metadata tree is made through the kernel's inode creation, not
 * mkfs's root path).  Their generations: mkfs.xfs 7.2 draws them at
 * random; ours are drawn from the metadata UUID and the inode number,
 * nonzero and different for every filesystem, yet the same for the same
 * -m uuid= (images stay reproducible).
 */
#include <errno.h>
#include <string.h>

#include <xfskit/build.h>
#include <xfskit/crc32c.h>
#include <xfskit/init.h>
#include <xfskit/libfs.h>
#include <xfskit/format/attr.h>
#include <xfskit/format/dinode.h>
#include <xfskit/format/dir.h>

#include "write/attr_fmt.h"

uint32_t
xk_inode_init_sfdir_ents(const struct xk_mount *mp, void *p, uint64_t parent,
			 const struct xk_init_dirent *ents, size_t n)
{
	struct xk_dinode *dip = p;
	struct xk_dir2_sf_hdr *h = (struct xk_dir2_sf_hdr *)xk_dfork_dptr(dip);
	int ftype = mp->g.has_ftype;
	/* Where the first entry would sit in a block: after "." and "..". */
	uint32_t off = XK_DIR3_DATA_ENTRY_OFFSET +
		       2 * xk_dir3_data_entsize(1, ftype);
	uint32_t i8 = parent > XK_DIR2_MAX_SHORT_INUM;
	uint32_t size;
	struct xk_dir2_sf_entry *e;

	if (n > UINT8_MAX)
		return 0;
	for (size_t i = 0; i < n; i++)
		i8 += ents[i].ino > XK_DIR2_MAX_SHORT_INUM;
	/* count: every entry; i8count: the numbers, ".." too, over 32 bits. */
	h->count = (uint8_t)n;
	h->i8count = (uint8_t)i8;
	xk_dir2_sf_put_parent(h, parent);
	size = xk_dir2_sf_hdr_size(h->i8count);
	e = xk_dir2_sf_firstentry(h);
	for (size_t i = 0; i < n; i++) {
		uint32_t entsize = xk_dir2_sf_entsize(h, ents[i].namelen,
						      ftype);

		if (size + entsize > xk_dinode_litino(mp->g.inodesize))
			return 0;
		e->namelen = ents[i].namelen;
		xk_dir2_sf_put_offset(e, (uint16_t)off);
		memcpy(e->name, ents[i].name, ents[i].namelen);
		xk_dir2_sf_put_ftype(e, ftype, ents[i].ftype);
		xk_dir2_sf_put_ino(h, e, ftype, ents[i].ino);
		off += xk_dir3_data_entsize(ents[i].namelen, ftype);
		size += entsize;
		e = xk_dir2_sf_nextentry(h, e, ftype);
	}
	xk_be64_set(&dip->di_size, size);
	xk_inode_init_crc(mp, dip);
	return size;
}

int
xk_inode_init_pptr(const struct xk_mount *mp, void *p, const uint8_t *name,
		   uint8_t namelen, uint64_t parent, uint32_t parent_gen)
{
	struct xk_dinode *dip = p;
	struct xk_parent_rec rec;
	struct xk_bld_xattr xa = {
		.flags = XK_ATTR_PARENT,
		.name = name,
		.namelen = namelen,
		.value = (const uint8_t *)&rec,
		.valuelen = sizeof(rec),
	};
	uint32_t lit = xk_dinode_litino(mp->g.inodesize);
	uint32_t fo = xk_dinode_default_forkoff(mp->g.inodesize);
	uint32_t bytes = sizeof(struct xk_attr_sf_hdr) +
			 xk_attr_sf_entsize_byname(namelen, sizeof(rec));
	uint64_t dsize;

	if (dip->di_forkoff || !xk_pptr_name_ok(name, namelen) ||
	    (dip->di_format != XK_DINODE_FMT_LOCAL &&
	     dip->di_format != XK_DINODE_FMT_EXTENTS))
		return -EINVAL;
	dsize = dip->di_format == XK_DINODE_FMT_LOCAL ?
		xk_be64_get(dip->di_size) :
		xk_dinode_nextents(dip) * sizeof(struct xk_bmbt_rec);
	if (dsize > fo * 8 || lit - fo * 8 < bytes)
		return -ENOSPC;
	xk_be64_set(&rec.p_ino, parent);
	xk_be32_set(&rec.p_gen, parent_gen);
	dip->di_forkoff = (uint8_t)fo;
	dip->di_aformat = XK_DINODE_FMT_LOCAL;
	attr_sf_fill(&xa, 1, xk_dfork_dptr(dip) + fo * 8);
	xk_inode_init_crc(mp, dip);
	return 0;
}

uint32_t
xk_inode_init_metadir_gen(const struct xk_mount *mp, uint64_t ino)
{
	uint8_t le[8];
	uint32_t gen;

	for (int i = 0; i < 8; i++)
		le[i] = (uint8_t)(ino >> (8 * i));
	gen = xk_crc32c_update(xk_crc32c_update(~0u, mp->meta_uuid, 16),
			       le, sizeof(le));
	return gen ? gen : 1;
}

void
xk_inode_init_metadir(const struct xk_mount *mp, void *p, uint64_t ino,
		      uint64_t parent, uint32_t nlink, uint64_t changes,
		      int64_t now_sec, uint32_t now_nsec)
{
	struct xk_dinode *dip = p;
	struct xk_inode_init ii = {
		.mode = XK_S_IFDIR,
		.nlink = nlink,
		.flags = XK_METADIR_DIFLAGS,
		.format = XK_DINODE_FMT_LOCAL,
		.now_sec = now_sec,
		.now_nsec = now_nsec,
	};
	struct xk_timespec now = { now_sec, now_nsec };

	xk_inode_init_core(mp, dip, ino, &ii);
	dip->di_atime = xk_timestamp_encode(now, mp->g.has_bigtime);
	xk_be32_set(&dip->di_gen, xk_inode_init_metadir_gen(mp, ino));
	xk_be16_set(&dip->di_onlink, XK_METAFILE_DIR);
	xk_be64_set(&dip->di_flags2,
		    xk_be64_get(dip->di_flags2) | XK_DIFLAG2_METADATA);
	xk_be64_set(&dip->di_changecount, changes);
	xk_inode_init_sfdir(mp, dip, parent);
}
