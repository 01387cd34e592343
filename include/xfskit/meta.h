/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Verifiers and readers for the metadata that hangs off inodes: inode
 * cluster buffers and single inodes, directory (dir3) blocks, attribute
 * (attr3) blocks, remote symlink blocks and dquot blocks.  Per-AG
 * headers are in ag.h, btree blocks in btree.h.
 *
 * Buffers of blocks that belong to an inode are read with
 * xk_buf_read_ctx(..., agno = -1, owner = inode number, ...) so the
 * verifier can check the owner field; owner 0 skips that check.
 */
#ifndef XFSKIT_META_H
#define XFSKIT_META_H

#include <xfskit/errors.h>

#include <xfskit/buf.h>
#include <xfskit/format/dinode.h>

struct xk_mount;

/* An inode cluster buffer: magic and version of every inode in it. */
extern const struct xk_buf_ops xk_inode_cluster_buf_ops;
/* One inode (inodesize bytes): every rule of xk_dinode_verify. */
extern const struct xk_buf_ops xk_dinode_buf_ops;
/* Directory blocks. */
extern const struct xk_buf_ops xk_dir3_block_buf_ops;	/* XDB3 */
extern const struct xk_buf_ops xk_dir3_data_buf_ops;	/* XDD3 */
extern const struct xk_buf_ops xk_dir3_leaf1_buf_ops;	/* 0x3df1 */
extern const struct xk_buf_ops xk_dir3_leafn_buf_ops;	/* 0x3dff */
extern const struct xk_buf_ops xk_dir3_free_buf_ops;	/* XDF3 */
extern const struct xk_buf_ops xk_da3_node_buf_ops;	/* 0x3ebe */
/* Attribute blocks. */
extern const struct xk_buf_ops xk_attr3_leaf_buf_ops;	/* 0x3bee */
extern const struct xk_buf_ops xk_attr3_rmt_buf_ops;	/* XARM */
/* Remote symlink target blocks. */
extern const struct xk_buf_ops xk_symlink_buf_ops;	/* XSLM */
/* Quota blocks. */
extern const struct xk_buf_ops xk_dquot_buf_ops;	/* DQ */

/*
 * The verifier of a directory or attribute block, chosen by its magic
 * (one fork holds several kinds).  An unknown magic gets the data (or
 * leaf) block verifier, which then says why the block is none of them;
 * NULL only when len is below a block header.
 */
const struct xk_buf_ops *xk_dir3_buf_ops_for(const void *buf, size_t len);
const struct xk_buf_ops *xk_attr3_buf_ops_for(const void *buf, size_t len);

/*
 * Check one on-disk inode.  ino is the number it must carry (0: do not
 * check).  Returns 0, XK_EBADCRC or XK_ECORRUPT with *f filled.
 */
int xk_dinode_verify(struct xk_mount *mp, uint64_t ino,
		     const struct xk_dinode *dip, struct xk_fail *f);
/*
 * The same for a copy whose CRC the caller computed (a salvage trial):
 * its LSN is not noted as the newest metadata's (xk_mount_note_lsn),
 * for the CRC no longer vouches for it; a damaged di_lsn would push the
 * log's format cycle anywhere.
 */
int xk_dinode_verify_copy(struct xk_mount *mp, uint64_t ino,
			  const struct xk_dinode *dip, struct xk_fail *f);
/* Only what the kernel checks before writing an inode buffer back. */
int xk_dinode_write_check(struct xk_mount *mp, uint64_t ino,
			  const struct xk_dinode *dip, struct xk_fail *f);

/* Where an inode lives: its cluster buffer and the byte offset in it. */
struct xk_imap {
	uint64_t	daddr;		/* cluster buffer */
	uint32_t	len;		/* bytes */
	uint32_t	offset;		/* of the inode inside the buffer */
};

/*
 * Map an inode number to its cluster buffer, using inode chunk alignment
 * (every v5 mkfs aligns chunks).  -EINVAL for an impossible number.
 */
XK_MUST_CHECK int xk_imap(const struct xk_mount *mp, uint64_t ino,
			  struct xk_imap *im);

/*
 * Read the cluster holding ino and point *dipp at the inode in it.  The
 * cluster verifier runs (magic/version of each inode); call
 * xk_dinode_verify for the inode itself.  Release *bpp when done.
 */
XK_MUST_CHECK int xk_inode_read(struct xk_mount *mp, uint64_t ino,
				unsigned int flags, struct xk_buf **bpp,
				struct xk_dinode **dipp);

/* Called per directory entry; non-zero stops the walk and is returned. */
typedef int (*xk_dirent_fn)(void *ctx, const uint8_t *name, uint8_t namelen,
			    uint64_t ino, uint8_t ftype);

/*
 * The entries of one directory data block, or of a single-block
 * directory's block, of len bytes ("." and ".." included), in block
 * order.  Returns 0, a callback's value, or XK_ECORRUPT at the first
 * entry or free space that does not fit (after the entries before it).
 */
XK_MUST_CHECK int xk_dir3_data_block_entries(const uint8_t *b, size_t len,
					     int has_ftype, xk_dirent_fn fn,
					     void *ctx);

#endif /* XFSKIT_META_H */
