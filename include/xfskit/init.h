/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Building a filesystem from nothing: the layout of a freshly formatted
 * AG, the table of AG header initializers, inode cores, the root
 * directory and a clean log.  mkfs writes a new filesystem with these and
 * repair rebuilds damaged headers with the very same code, so the two can
 * never disagree on what a correct header looks like.
 *
 * The flow: xk_ag_init_layout() places the fixed blocks of one AG (the
 * header sectors, the btree roots, the internal log when the AG holds
 * it); xk_ag_init_agfl() and xk_ag_init_alloc() then take blocks from its
 * free space the way the kernel's allocator does (the AGFL by size, the
 * inode chunk near the inode btree root, aligned); xk_ag_init_write()
 * fills and dirties every header and root block through the buffer cache
 * so the verifiers see them when they are flushed.
 */
#ifndef XFSKIT_INIT_H
#define XFSKIT_INIT_H

#include <xfskit/errors.h>

#include <stddef.h>
#include <stdint.h>

#include <xfskit/mount.h>

#define XK_AGINIT_MAX_FREE	8	/* free extents a new AG can have */
#define XK_AGINIT_MAX_AGFL	64	/* AGFL blocks mkfs pre-fills */
#define XK_AGINIT_MAX_RMAP	16

struct xk_ag_extent {
	uint32_t	start;
	uint32_t	len;
};

struct xk_ag_rmap {
	uint32_t	start;
	uint32_t	len;
	uint64_t	owner;		/* XK_RMAP_OWN_* */
};

/* One AG as mkfs leaves it. */
struct xk_ag_init {
	uint32_t	agno;
	uint32_t	length;		/* blocks in this AG */
	uint32_t	roots[XK_BT_NR]; /* root agbno, 0: tree off */
	uint32_t	prealloc;	/* first block after the fixed roots */
	uint32_t	log_start;	/* agbno, when log_blocks */
	uint32_t	log_blocks;
	struct xk_ag_extent free[XK_AGINIT_MAX_FREE];	/* by start */
	uint32_t	nfree;
	uint32_t	agfl[XK_AGINIT_MAX_AGFL];
	uint32_t	agfl_count;
	/* The inode chunk, when this AG holds one (AG of the root). */
	uint32_t	chunk_agbno;
	uint32_t	chunk_blocks;	/* 0: none */
	uint32_t	chunk_inodes;
	uint32_t	chunk_used;	/* leading inodes in use */
};

/* Blocks of the fixed AG metadata (headers and roots), before the log. */
uint32_t xk_ag_prealloc_blocks(const struct xk_mount *mp);
/* AGFL blocks the allocator keeps for btree splits at the given levels. */
uint32_t xk_ag_min_freelist(const struct xk_mount *mp, uint32_t agblocks);

/* Place the fixed blocks of AG agno and the log if the AG holds it. */
XK_MUST_CHECK int xk_ag_init_layout(const struct xk_mount *mp, uint32_t agno,
				    struct xk_ag_init *ai);
/* Fill the AGFL with `count` blocks taken like the kernel does (by size). */
XK_MUST_CHECK int xk_ag_init_agfl(struct xk_ag_init *ai, uint32_t count);
/*
 * Allocate len blocks aligned to align, as near as possible to block
 * `near` (the kernel's NEAR_BNO allocation).  Returns the agbno in *bnop
 * or -ENOSPC.
 */
XK_MUST_CHECK int xk_ag_init_alloc(struct xk_ag_init *ai, uint32_t len,
				   uint32_t align, uint32_t near,
				   uint32_t *bnop);
/*
 * Allocate len blocks starting as close as possible to block target,
 * anywhere in a free extent (a file's data blocks as mkfs.xfs 7.2
 * places the realtime bitmap and summary).  *bnop or -ENOSPC.
 */
XK_MUST_CHECK int xk_ag_init_alloc_closest(struct xk_ag_init *ai, uint32_t len,
					   uint32_t target, uint32_t *bnop);
/* Free blocks of the AG (btree records) and the longest extent. */
uint32_t xk_ag_init_freeblks(const struct xk_ag_init *ai, uint32_t *longest);
/* The reverse mappings of every static owner, sorted and merged. */
uint32_t xk_ag_init_rmaps(const struct xk_mount *mp,
			  const struct xk_ag_init *ai,
			  struct xk_ag_rmap *out, uint32_t max);

/*
 * Write the AG's headers and btree roots through the buffer cache (dirty,
 * not yet flushed): the superblock copy (sb, with inprogress as given),
 * AGF, AGI, AGFL, and the roots of every enabled btree with the records
 * described by ai.  Walks the initializer table below.
 */
XK_MUST_CHECK int xk_ag_init_write(struct xk_mount *mp,
				   const struct xk_ag_init *ai,
				   const struct xk_sb *sb);

/* One entry of the AG header initializer table. */
struct xk_ag_hdr_init {
	const char	*name;
	/* 0 when this header exists on this filesystem, 1 to skip it. */
	int		(*skip)(const struct xk_mount *mp);
	/* Where it lives: a daddr and a length in bytes. */
	void		(*where)(const struct xk_mount *mp,
				 const struct xk_ag_init *ai, uint64_t *daddr,
				 uint32_t *len);
	const struct xk_buf_ops *(*ops)(void);
	/* Fill the zeroed buffer. */
	int		(*fill)(const struct xk_mount *mp,
				const struct xk_ag_init *ai,
				const struct xk_sb *sb, uint8_t *buf,
				uint32_t len);
};

/* The table, terminated by an entry with a NULL name. */
extern const struct xk_ag_hdr_init xk_ag_hdr_inits[];

/* Inodes. */
struct xk_inode_init {
	uint16_t	mode;
	uint32_t	nlink;
	uint16_t	flags;		/* XK_DIFLAG_* */
	uint8_t		format;		/* data fork format */
	uint64_t	size;
	int64_t		now_sec;	/* mtime, ctime, crtime */
	uint32_t	now_nsec;
};

/* An unused inode slot as mkfs and the kernel write it (with its CRC). */
void xk_inode_init_free(const struct xk_mount *mp, void *dip, uint64_t ino);
/*
 * An allocated inode: core from ii (atime zero as mkfs.xfs leaves it),
 * change count 2, CRC computed.  The data fork is left zeroed; fill it
 * before calling xk_inode_init_crc() if it holds anything.
 */
void xk_inode_init_core(const struct xk_mount *mp, void *dip, uint64_t ino,
			const struct xk_inode_init *ii);
void xk_inode_init_crc(const struct xk_mount *mp, void *dip);
/* An empty short-form directory (only '..' to parent) in the data fork. */
uint32_t xk_inode_init_sfdir(const struct xk_mount *mp, void *dip,
			     uint64_t parent);
/* An entry of a short-form directory made by xk_inode_init_sfdir_ents. */
struct xk_init_dirent {
	const uint8_t	*name;
	uint8_t		namelen;
	uint8_t		ftype;		/* XK_DIR3_FT_* */
	uint64_t	ino;
};
/*
 * A short-form directory of ents[0..n) (in that order, with the offsets
 * they would have in a block) and '..' to parent; di_size set, CRC
 * computed.  Its size, or 0 when it does not fit in the inode.
 */
uint32_t xk_inode_init_sfdir_ents(const struct xk_mount *mp, void *dip,
				  uint64_t parent,
				  const struct xk_init_dirent *ents, size_t n);
/*
 * A directory of the metadata directory tree (METADIR), empty, '..' to
 * parent (itself for the tree's root): the metadata inode flags, the
 * METADATA flag2, metafile type "dir", every timestamp now, nlink and
 * change count as given.  CRC computed.
 */
/*
 * The generation of metadata directory ino: nonzero, drawn from the
 * metadata UUID and ino (the same for the same UUID).
 */
uint32_t xk_inode_init_metadir_gen(const struct xk_mount *mp, uint64_t ino);
void xk_inode_init_metadir(const struct xk_mount *mp, void *dip, uint64_t ino,
			   uint64_t parent, uint32_t nlink, uint64_t changes,
			   int64_t now_sec, uint32_t now_nsec);
/*
 * The parent pointer of an inode created with one (named name in the
 * directory parent of generation parent_gen): a short-form attr fork at
 * the kernel's default fork offset for such inodes.  The inode must have
 * no attr fork and a data fork that fits below that offset (-ENOSPC).
 */
XK_MUST_CHECK int xk_inode_init_pptr(const struct xk_mount *mp, void *dip,
				     const uint8_t *name, uint8_t namelen,
				     uint64_t parent, uint32_t parent_gen);
/*
 * A short-form attr fork holding xa[0..n) (in that order) on an inode
 * with no attr fork and a short-form or extents data fork, at the fork
 * offset the kernel would pick for it; CRC recomputed.  -ENOSPC when it
 * does not fit beside the data fork, -E2BIG for a value over 255 bytes.
 */
struct xk_bld_xattr;
XK_MUST_CHECK int xk_inode_init_sfattr(const struct xk_mount *mp, void *dip,
				       const struct xk_bld_xattr *xa,
				       size_t n);
/*
 * Write the inode chunk at agbno of AG agno (ai->chunk_*) through the
 * cache: every slot free.  Returns 0 or an errno.
 */
XK_MUST_CHECK int xk_inode_init_chunk(struct xk_mount *mp, uint32_t agno,
				      uint32_t agbno, uint32_t blocks);
/* The cluster buffer and the inode inside it, for editing after above. */
XK_MUST_CHECK int xk_inode_init_get(struct xk_mount *mp, uint64_t ino,
				    struct xk_buf **bpp, void **dipp);

/*
 * Write a clean log at log_daddr (bblen basic blocks) of the log's device
 * (xk_mount_log_dev(): the external log's when there is one): every block
 * zeroed (through discard where the device supports it, else by writing),
 * then
 * one record at block 0 in cycle 1 holding only an unmount record, laid
 * out as mkfs.xfs does (record length the log stripe unit, extended
 * headers for stripe units over 32 KiB), so the kernel mounts without
 * recovery.
 */
XK_MUST_CHECK int xk_log_init_clean(struct xk_mount *mp, uint64_t log_daddr,
				    uint64_t bblen, uint32_t sunit_bytes);

#endif /* XFSKIT_INIT_H */
