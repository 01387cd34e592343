/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Symbolic links.  A short target is stored inline in the data fork
 * (XK_DINODE_FMT_LOCAL, no terminating NUL, di_size bytes).  A longer one
 * is "remote": kept in up to XK_SYMLINK_MAPS extents of the data fork,
 * and on v5 every filesystem block of it starts with this header followed
 * by that block's piece of the target.
 */
#ifndef XFSKIT_FORMAT_SYMLINK_H
#define XFSKIT_FORMAT_SYMLINK_H

#include <stddef.h>
#include <stdint.h>
#include <xfskit/endian.h>

#define XK_SYMLINK_MAGIC	0x58534c4d	/* "XSLM" */
#define XK_SYMLINK_MAXLEN	1024		/* longest target, bytes */
/* 1024 bytes over 512-byte blocks with headers: at most 3 extents. */
#define XK_SYMLINK_MAPS		3

struct xk_dsymlink_hdr {
	xk_be32	sl_magic;
	xk_be32	sl_offset;		/* byte offset of this piece */
	xk_be32	sl_bytes;		/* target bytes in this block */
	uint8_t	sl_crc[4];		/* CRC32c, little-endian */
	uint8_t	sl_uuid[16];		/* sb_meta_uuid */
	xk_be64	sl_owner;		/* inode number */
	xk_be64	sl_blkno;		/* disk address (512-byte units) */
	xk_be64	sl_lsn;
};

#define XK_SYMLINK_CRC_OFF	offsetof(struct xk_dsymlink_hdr, sl_crc)

_Static_assert(sizeof(struct xk_dsymlink_hdr) == 56,
	       "xk_dsymlink_hdr: on-disk size");
_Static_assert(offsetof(struct xk_dsymlink_hdr, sl_crc) == 12,
	       "xk_dsymlink_hdr: crc offset");
_Static_assert(offsetof(struct xk_dsymlink_hdr, sl_lsn) == 48,
	       "xk_dsymlink_hdr: lsn offset");

/* Target bytes one remote block of bufsize bytes carries (v5). */
static inline unsigned int xk_symlink_buf_space(unsigned int bufsize)
{
	return bufsize - sizeof(struct xk_dsymlink_hdr);
}

/* Filesystem blocks a remote target of pathlen bytes occupies. */
static inline unsigned int xk_symlink_blocks(unsigned int blocksize,
					     unsigned int pathlen)
{
	unsigned int space = xk_symlink_buf_space(blocksize);

	return (pathlen + space - 1) / space;
}

#endif /* XFSKIT_FORMAT_SYMLINK_H */
