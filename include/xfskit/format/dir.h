/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Directory formats (v3, the v5 CRC-enabled directories).
 *
 * A directory is one of:
 *  - shortform: packed entries inside the inode's data fork;
 *  - block: one directory block holding data entries, the hash-sorted
 *    leaf array and a tail (magic XDB3);
 *  - leaf: data blocks (XDD3) plus one leaf block (LEAF1) whose tail
 *    records the best free space of every data block;
 *  - node: data blocks, a dabtree of leaf blocks (LEAFN under DA3 nodes)
 *    and free-index blocks (XDF3).
 * The directory's logical address space is cut into three 32 GiB regions:
 * data blocks from 0, leaf/node blocks from XK_DIR2_LEAF_OFFSET, free
 * index blocks from XK_DIR2_FREE_OFFSET.  A "dataptr" is a byte offset in
 * the data region divided by 8 (entries are 8-byte aligned); leaf entries
 * and shortform entries store it.  A directory block is
 * blocksize << sb_dirblklog bytes; helpers here take its log2 ("dblog").
 *
 * Every v5 filesystem made by current mkfs has the ftype feature, which
 * adds one file-type byte to each entry.  Helpers take has_ftype so a
 * filesystem without it is still read correctly.
 *
 * Pointer-returning helpers take const pointers and return plain ones, in
 * the manner of strchr().
 */
#ifndef XFSKIT_FORMAT_DIR_H
#define XFSKIT_FORMAT_DIR_H

#include <stddef.h>
#include <stdint.h>
#include <xfskit/endian.h>
#include <xfskit/format/da.h>
#include <xfskit/format/dinode.h>

#define XK_DIR3_BLOCK_MAGIC	0x58444233	/* "XDB3": single block */
#define XK_DIR3_DATA_MAGIC	0x58444433	/* "XDD3": data block */
#define XK_DIR3_FREE_MAGIC	0x58444633	/* "XDF3": free index */
#define XK_DIR3_LEAF1_MAGIC	0x3df1		/* leaf, leaf format */
#define XK_DIR3_LEAFN_MAGIC	0x3dff		/* leaf, node format */

/* File type byte (ftype feature). */
#define XK_DIR3_FT_UNKNOWN	0
#define XK_DIR3_FT_REG_FILE	1
#define XK_DIR3_FT_DIR		2
#define XK_DIR3_FT_CHRDEV	3
#define XK_DIR3_FT_BLKDEV	4
#define XK_DIR3_FT_FIFO		5
#define XK_DIR3_FT_SOCK		6
#define XK_DIR3_FT_SYMLINK	7
#define XK_DIR3_FT_WHT		8	/* whiteout */
#define XK_DIR3_FT_MAX		9

#define XK_NAME_MAX		255	/* longest entry name */

/* Address space. */
#define XK_DIR2_DATA_ALIGN_LOG	3
#define XK_DIR2_DATA_ALIGN	(1 << XK_DIR2_DATA_ALIGN_LOG)	/* 8 */
#define XK_DIR2_SPACE_SIZE	(1ULL << (32 + XK_DIR2_DATA_ALIGN_LOG))
#define XK_DIR2_MAX_SPACES	3
#define XK_DIR2_DATA_OFFSET	(0 * XK_DIR2_SPACE_SIZE)	/* 0 */
#define XK_DIR2_LEAF_OFFSET	(1 * XK_DIR2_SPACE_SIZE)	/* 32 GiB */
#define XK_DIR2_FREE_OFFSET	(2 * XK_DIR2_SPACE_SIZE)	/* 64 GiB */

#define XK_DIR2_NULL_DATAPTR	0u
#define XK_DIR2_MAX_DATAPTR	0xffffffffu
#define XK_DIR2_NULL_DATAOFF	0xffffu		/* unused "bests" slot */
#define XK_DIR2_MAX_SHORT_INUM	0xffffffffULL	/* fits a 4-byte sf inode */

static inline uint64_t xk_dir2_dataptr_to_byte(uint32_t dp)
{
	return (uint64_t)dp << XK_DIR2_DATA_ALIGN_LOG;
}

static inline uint32_t xk_dir2_byte_to_dataptr(uint64_t by)
{
	return (uint32_t)(by >> XK_DIR2_DATA_ALIGN_LOG);
}

static inline uint32_t xk_dir2_byte_to_db(uint64_t by, unsigned int dblog)
{
	return (uint32_t)(by >> dblog);
}

static inline uint64_t xk_dir2_db_to_byte(uint32_t db, unsigned int dblog)
{
	return (uint64_t)db << dblog;
}

static inline uint32_t xk_dir2_dataptr_to_db(uint32_t dp, unsigned int dblog)
{
	return xk_dir2_byte_to_db(xk_dir2_dataptr_to_byte(dp), dblog);
}

/* Byte offset of a dataptr inside its directory block. */
static inline uint32_t xk_dir2_dataptr_to_off(uint32_t dp, unsigned int dblog)
{
	return (uint32_t)(xk_dir2_dataptr_to_byte(dp) &
			  ((1ULL << dblog) - 1));
}

static inline uint32_t xk_dir2_db_off_to_dataptr(uint32_t db, uint32_t off,
						 unsigned int dblog)
{
	return xk_dir2_byte_to_dataptr(xk_dir2_db_to_byte(db, dblog) + off);
}

/*
 * Where the data space of a directory mapping (file blocks startoff +
 * blockcount) ends, in bytes; 0 for a mapping in the leaf or free space.
 * A directory's di_size is the largest of these over its fork: the
 * kernel grows and shrinks the size with its data blocks (and calls a
 * block directory whose size is not one block corrupt).
 */
static inline uint64_t xk_dir2_mapping_data_end(uint64_t startoff,
						uint64_t blockcount,
						unsigned int blocklog)
{
	uint64_t leaf_fsb = XK_DIR2_LEAF_OFFSET >> blocklog;
	uint64_t end = startoff + blockcount;

	if (startoff >= leaf_fsb)
		return 0;
	return (end > leaf_fsb ? leaf_fsb : end) << blocklog;
}

/* First logical directory block of the leaf and free regions. */
static inline uint32_t xk_dir2_leaf_firstdb(unsigned int dblog)
{
	return xk_dir2_byte_to_db(XK_DIR2_LEAF_OFFSET, dblog);
}

static inline uint32_t xk_dir2_free_firstdb(unsigned int dblog)
{
	return xk_dir2_byte_to_db(XK_DIR2_FREE_OFFSET, dblog);
}

/* ftype for an inode mode, XK_DIR3_FT_UNKNOWN if the type is invalid. */
static inline uint8_t xk_mode_to_ftype(uint32_t mode)
{
	switch (mode & XK_S_IFMT) {
	case XK_S_IFREG:	return XK_DIR3_FT_REG_FILE;
	case XK_S_IFDIR:	return XK_DIR3_FT_DIR;
	case XK_S_IFCHR:	return XK_DIR3_FT_CHRDEV;
	case XK_S_IFBLK:	return XK_DIR3_FT_BLKDEV;
	case XK_S_IFIFO:	return XK_DIR3_FT_FIFO;
	case XK_S_IFSOCK:	return XK_DIR3_FT_SOCK;
	case XK_S_IFLNK:	return XK_DIR3_FT_SYMLINK;
	default:		return XK_DIR3_FT_UNKNOWN;
	}
}

/* ---- shortform (in the inode) ---- */

/*
 * Header: entry count, count of entries needing 8-byte inode numbers,
 * then the parent inode number in 4 bytes (i8count == 0) or 8 bytes.
 * So the header is 6 or 10 bytes; sizeof gives the 10-byte form.
 *
 * Each entry: namelen, 2-byte big-endian offset (the entry's position
 * had it been in a block, used for readdir cookies), the name, the ftype
 * byte (if has_ftype), then the inode number in 4 or 8 bytes.  No
 * alignment anywhere.
 */
#define XK_INO32_SIZE		4
#define XK_INO64_SIZE		8

struct xk_dir2_sf_hdr {
	uint8_t	count;
	uint8_t	i8count;
	uint8_t	parent[8];
};

struct xk_dir2_sf_entry {
	uint8_t	namelen;
	uint8_t	offset[2];
	uint8_t	name[];
};

_Static_assert(sizeof(struct xk_dir2_sf_hdr) == 10, "xk_dir2_sf_hdr: size");
_Static_assert(sizeof(struct xk_dir2_sf_entry) == 3,
	       "xk_dir2_sf_entry: size");
_Static_assert(offsetof(struct xk_dir2_sf_entry, offset) == 1,
	       "xk_dir2_sf_entry: offset offset");
_Static_assert(offsetof(struct xk_dir2_sf_entry, name) == 3,
	       "xk_dir2_sf_entry: name offset");

static inline unsigned int xk_dir2_sf_inumsize(const struct xk_dir2_sf_hdr *h)
{
	return h->i8count ? XK_INO64_SIZE : XK_INO32_SIZE;
}

static inline unsigned int xk_dir2_sf_hdr_size(unsigned int i8count)
{
	return 2 + (i8count ? XK_INO64_SIZE : XK_INO32_SIZE);
}

static inline unsigned int xk_dir2_sf_entsize(const struct xk_dir2_sf_hdr *h,
					      unsigned int namelen,
					      int has_ftype)
{
	return sizeof(struct xk_dir2_sf_entry) + namelen +
	       (has_ftype ? 1 : 0) + xk_dir2_sf_inumsize(h);
}

static inline struct xk_dir2_sf_entry *
xk_dir2_sf_firstentry(const struct xk_dir2_sf_hdr *h)
{
	return (struct xk_dir2_sf_entry *)((uint8_t *)h +
					   xk_dir2_sf_hdr_size(h->i8count));
}

static inline struct xk_dir2_sf_entry *
xk_dir2_sf_nextentry(const struct xk_dir2_sf_hdr *h,
		     const struct xk_dir2_sf_entry *sfep, int has_ftype)
{
	return (struct xk_dir2_sf_entry *)((uint8_t *)sfep +
		xk_dir2_sf_entsize(h, sfep->namelen, has_ftype));
}

static inline uint16_t xk_dir2_sf_get_offset(const struct xk_dir2_sf_entry *e)
{
	return xk_get_be16(e->offset);
}

static inline void xk_dir2_sf_put_offset(struct xk_dir2_sf_entry *e,
					 uint16_t off)
{
	xk_put_be16(e->offset, off);
}

static inline uint8_t xk_dir2_sf_get_ftype(const struct xk_dir2_sf_entry *e,
					   int has_ftype)
{
	uint8_t ft;

	if (!has_ftype)
		return XK_DIR3_FT_UNKNOWN;
	ft = e->name[e->namelen];
	return ft < XK_DIR3_FT_MAX ? ft : XK_DIR3_FT_UNKNOWN;
}

static inline void xk_dir2_sf_put_ftype(struct xk_dir2_sf_entry *e,
					int has_ftype, uint8_t ft)
{
	if (has_ftype)
		e->name[e->namelen] = ft;
}

/* Where an entry's inode number starts. */
static inline uint8_t *xk_dir2_sf_inop(const struct xk_dir2_sf_entry *e,
				       int has_ftype)
{
	return (uint8_t *)e->name + e->namelen + (has_ftype ? 1 : 0);
}

static inline uint64_t xk_dir2_sf_get_ino(const struct xk_dir2_sf_hdr *h,
					  const struct xk_dir2_sf_entry *e,
					  int has_ftype)
{
	return xk_get_benn(xk_dir2_sf_inop(e, has_ftype),
			   xk_dir2_sf_inumsize(h)) & XK_MAXINUMBER;
}

static inline void xk_dir2_sf_put_ino(const struct xk_dir2_sf_hdr *h,
				      struct xk_dir2_sf_entry *e,
				      int has_ftype, uint64_t ino)
{
	xk_put_benn(xk_dir2_sf_inop(e, has_ftype), xk_dir2_sf_inumsize(h),
		    ino);
}

static inline uint64_t xk_dir2_sf_get_parent(const struct xk_dir2_sf_hdr *h)
{
	return xk_get_benn(h->parent, xk_dir2_sf_inumsize(h)) &
	       XK_MAXINUMBER;
}

static inline void xk_dir2_sf_put_parent(struct xk_dir2_sf_hdr *h,
					 uint64_t ino)
{
	xk_put_benn(h->parent, xk_dir2_sf_inumsize(h), ino);
}

/* ---- data and block directory blocks ---- */

/* Self-describing header that starts every v3 data, block and free block. */
struct xk_dir3_blk_hdr {
	xk_be32	magic;
	uint8_t	crc[4];			/* CRC32c, little-endian */
	xk_be64	blkno;			/* disk address (512-byte units) */
	xk_be64	lsn;
	uint8_t	uuid[16];		/* sb_meta_uuid */
	xk_be64	owner;			/* directory inode number */
};

_Static_assert(sizeof(struct xk_dir3_blk_hdr) == 48, "xk_dir3_blk_hdr: size");
_Static_assert(offsetof(struct xk_dir3_blk_hdr, crc) == 4,
	       "xk_dir3_blk_hdr: crc offset");
_Static_assert(offsetof(struct xk_dir3_blk_hdr, lsn) == 16,
	       "xk_dir3_blk_hdr: lsn offset");

/* The three largest free regions of a data block, largest first. */
#define XK_DIR2_DATA_FD_COUNT	3

struct xk_dir2_data_free {
	xk_be16	offset;			/* 0 if the slot is unused */
	xk_be16	length;
};

struct xk_dir3_data_hdr {
	struct xk_dir3_blk_hdr hdr;
	struct xk_dir2_data_free best_free[XK_DIR2_DATA_FD_COUNT];
	xk_be32	pad;
};

#define XK_DIR3_DATA_CRC_OFF	offsetof(struct xk_dir3_data_hdr, hdr.crc)

_Static_assert(sizeof(struct xk_dir2_data_free) == 4,
	       "xk_dir2_data_free: size");
_Static_assert(sizeof(struct xk_dir3_data_hdr) == 64,
	       "xk_dir3_data_hdr: size");
_Static_assert(offsetof(struct xk_dir3_data_hdr, hdr.crc) == 4,
	       "xk_dir3_data_hdr: crc offset");
_Static_assert(offsetof(struct xk_dir3_data_hdr, hdr.lsn) == 16,
	       "xk_dir3_data_hdr: lsn offset");

/*
 * Entries start right after the header.  Every data and block directory
 * begins with "." and "..", each 16 bytes, so in a fresh directory the
 * first other entry is at 96.
 */
#define XK_DIR3_DATA_ENTRY_OFFSET	64
#define XK_DIR3_DATA_DOT_OFFSET		64
#define XK_DIR3_DATA_DOTDOT_OFFSET	80
#define XK_DIR3_DATA_FIRST_OFFSET	96

/*
 * Active entry: inumber, namelen, name, ftype byte (if has_ftype), zero
 * padding to make the whole entry a multiple of 8, then the entry's own
 * offset in the block as a be16 "tag" in its last two bytes.  sizeof
 * covers the fixed part only (the kernel's includes alignment padding
 * that the name overlaps).
 */
struct xk_dir2_data_entry {
	xk_be64	inumber;
	uint8_t	namelen;
	uint8_t	name[];
};

_Static_assert(sizeof(struct xk_dir2_data_entry) == 9,
	       "xk_dir2_data_entry: fixed part");
_Static_assert(offsetof(struct xk_dir2_data_entry, name) == 9,
	       "xk_dir2_data_entry: name offset");

/*
 * Unused region: freetag 0xffff, total length (a multiple of 8, at least
 * 8), and the region's offset as a be16 tag in its last two bytes.
 */
#define XK_DIR2_DATA_FREE_TAG	0xffff

struct xk_dir2_data_unused {
	xk_be16	freetag;
	xk_be16	length;
};

_Static_assert(sizeof(struct xk_dir2_data_unused) == 4,
	       "xk_dir2_data_unused: fixed part");

static inline unsigned int xk_dir3_data_entsize(unsigned int namelen,
						int has_ftype)
{
	unsigned int len = sizeof(struct xk_dir2_data_entry) + namelen +
			   (has_ftype ? 1 : 0) + sizeof(xk_be16);

	return (len + XK_DIR2_DATA_ALIGN - 1) & ~(XK_DIR2_DATA_ALIGN - 1u);
}

static inline xk_be16 *
xk_dir3_data_entry_tag(const struct xk_dir2_data_entry *dep, int has_ftype)
{
	return (xk_be16 *)((uint8_t *)dep +
			   xk_dir3_data_entsize(dep->namelen, has_ftype) -
			   sizeof(xk_be16));
}

static inline uint8_t xk_dir3_data_get_ftype(const struct xk_dir2_data_entry *d,
					     int has_ftype)
{
	uint8_t ft;

	if (!has_ftype)
		return XK_DIR3_FT_UNKNOWN;
	ft = d->name[d->namelen];
	return ft < XK_DIR3_FT_MAX ? ft : XK_DIR3_FT_UNKNOWN;
}

static inline void xk_dir3_data_put_ftype(struct xk_dir2_data_entry *d,
					  int has_ftype, uint8_t ft)
{
	if (has_ftype)
		d->name[d->namelen] = ft;
}

static inline xk_be16 *
xk_dir2_data_unused_tag(const struct xk_dir2_data_unused *dup)
{
	return (xk_be16 *)((uint8_t *)dup + xk_be16_get(dup->length) -
			   sizeof(xk_be16));
}

/* True if the bytes at p start an unused region rather than an entry. */
static inline int xk_dir2_data_is_unused(const void *p)
{
	return xk_get_be16(p) == XK_DIR2_DATA_FREE_TAG;
}

/* ---- leaf entries, shared by block, leaf and node formats ---- */

struct xk_dir2_leaf_entry {
	xk_be32	hashval;
	xk_be32	address;		/* dataptr; 0 (NULL_DATAPTR): stale */
};

_Static_assert(sizeof(struct xk_dir2_leaf_entry) == 8,
	       "xk_dir2_leaf_entry: size");

/*
 * Block format: the last 8 bytes of the block are the tail; the leaf
 * array of count entries (stale ones included) ends where the tail
 * starts.
 */
struct xk_dir2_block_tail {
	xk_be32	count;
	xk_be32	stale;
};

_Static_assert(sizeof(struct xk_dir2_block_tail) == 8,
	       "xk_dir2_block_tail: size");

static inline struct xk_dir2_block_tail *
xk_dir2_block_tail_p(const void *block, unsigned int dirblksize)
{
	return (struct xk_dir2_block_tail *)((uint8_t *)block + dirblksize -
					     sizeof(struct xk_dir2_block_tail));
}

static inline struct xk_dir2_leaf_entry *
xk_dir2_block_leaf_p(const struct xk_dir2_block_tail *btp)
{
	return (struct xk_dir2_leaf_entry *)btp - xk_be32_get(btp->count);
}

/* ---- leaf blocks ---- */

struct xk_dir3_leaf_hdr {
	struct xk_da3_blkinfo info;	/* magic LEAF1 or LEAFN */
	xk_be16	count;
	xk_be16	stale;
	xk_be32	pad;
};

#define XK_DIR3_LEAF_CRC_OFF	offsetof(struct xk_dir3_leaf_hdr, info.crc)

_Static_assert(sizeof(struct xk_dir3_leaf_hdr) == 64,
	       "xk_dir3_leaf_hdr: size");
_Static_assert(offsetof(struct xk_dir3_leaf_hdr, info.crc) == 12,
	       "xk_dir3_leaf_hdr: crc offset");
_Static_assert(offsetof(struct xk_dir3_leaf_hdr, info.lsn) == 24,
	       "xk_dir3_leaf_hdr: lsn offset");

/*
 * LEAF1 blocks only: the block ends with this tail, preceded by
 * bestcount be16 "bests" (largest free length of each data block,
 * XK_DIR2_NULL_DATAOFF for holes).
 */
struct xk_dir2_leaf_tail {
	xk_be32	bestcount;
};

_Static_assert(sizeof(struct xk_dir2_leaf_tail) == 4,
	       "xk_dir2_leaf_tail: size");

static inline struct xk_dir2_leaf_entry *
xk_dir3_leaf_ents(const struct xk_dir3_leaf_hdr *hdr)
{
	return (struct xk_dir2_leaf_entry *)((uint8_t *)hdr +
					     sizeof(struct xk_dir3_leaf_hdr));
}

static inline struct xk_dir2_leaf_tail *
xk_dir2_leaf_tail_p(const void *leaf, unsigned int dirblksize)
{
	return (struct xk_dir2_leaf_tail *)((uint8_t *)leaf + dirblksize -
					    sizeof(struct xk_dir2_leaf_tail));
}

static inline xk_be16 *xk_dir2_leaf_bests_p(const struct xk_dir2_leaf_tail *t)
{
	return (xk_be16 *)t - xk_be32_get(t->bestcount);
}

/* Most entries a LEAFN block can hold. */
static inline unsigned int xk_dir3_leaf_max_ents(unsigned int dirblksize)
{
	return (dirblksize - sizeof(struct xk_dir3_leaf_hdr)) /
	       sizeof(struct xk_dir2_leaf_entry);
}

/* ---- free index blocks (node format) ---- */

struct xk_dir3_free_hdr {
	struct xk_dir3_blk_hdr hdr;	/* magic XDF3 */
	xk_be32	firstdb;		/* data block of bests[0] */
	xk_be32	nvalid;			/* bests[] slots in use */
	xk_be32	nused;			/* slots not XK_DIR2_NULL_DATAOFF */
	xk_be32	pad;
};

#define XK_DIR3_FREE_CRC_OFF	offsetof(struct xk_dir3_free_hdr, hdr.crc)

_Static_assert(sizeof(struct xk_dir3_free_hdr) == 64,
	       "xk_dir3_free_hdr: size");
_Static_assert(offsetof(struct xk_dir3_free_hdr, hdr.crc) == 4,
	       "xk_dir3_free_hdr: crc offset");
_Static_assert(offsetof(struct xk_dir3_free_hdr, hdr.lsn) == 16,
	       "xk_dir3_free_hdr: lsn offset");

static inline xk_be16 *xk_dir3_free_bests(const struct xk_dir3_free_hdr *f)
{
	return (xk_be16 *)((uint8_t *)f + sizeof(struct xk_dir3_free_hdr));
}

/* Data blocks whose bests one free block covers. */
static inline unsigned int xk_dir3_free_max_bests(unsigned int dirblksize)
{
	return (dirblksize - sizeof(struct xk_dir3_free_hdr)) /
	       sizeof(xk_be16);
}

/* Free block (logical db) that covers data block db, and the slot in it. */
static inline uint32_t xk_dir2_db_to_fdb(uint32_t db, unsigned int dblog)
{
	return xk_dir2_free_firstdb(dblog) +
	       db / xk_dir3_free_max_bests(1u << dblog);
}

static inline unsigned int xk_dir2_db_to_fdindex(uint32_t db,
						 unsigned int dblog)
{
	return db % xk_dir3_free_max_bests(1u << dblog);
}

#endif /* XFSKIT_FORMAT_DIR_H */
