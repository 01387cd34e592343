/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Btree block headers and the records, keys and pointers of every
 * per-AG btree: free space by block (bnobt) and by size (cntbt), inodes
 * (inobt) and inodes with free slots (finobt), reverse mappings (rmapbt)
 * and reference counts (refcountbt).  Short-form headers carry 32-bit AG
 * block pointers; the long form (bmbt) carries 64-bit filesystem blocks.
 *
 * A node block is: header, keys[maxrecs], pointers[maxrecs].  A leaf is:
 * header, records[].  The rmapbt may overlap, so each node key is a pair
 * (low key, high key) and the key area is twice as wide.
 */
#ifndef XFSKIT_FORMAT_BTREE_H
#define XFSKIT_FORMAT_BTREE_H

#include <stddef.h>
#include <stdint.h>
#include <xfskit/endian.h>

#define XK_ABTB_CRC_MAGIC	0x41423342	/* "AB3B": bnobt */
#define XK_ABTC_CRC_MAGIC	0x41423343	/* "AB3C": cntbt */
#define XK_IBT_CRC_MAGIC	0x49414233	/* "IAB3": inobt */
#define XK_FIBT_CRC_MAGIC	0x46494233	/* "FIB3": finobt */
#define XK_RMAP_CRC_MAGIC	0x524d4233	/* "RMB3": rmapbt */
#define XK_REFC_CRC_MAGIC	0x52334643	/* "R3FC": refcountbt */
#define XK_BMAP_CRC_MAGIC	0x424d4133	/* "BMA3": bmbt */
#define XK_RTRMAP_CRC_MAGIC	0x4d415052	/* "MAPR": realtime rmapbt */
#define XK_RTREFC_CRC_MAGIC	0x52434e54	/* "RCNT": realtime refcountbt */

#define XK_BTREE_MAXLEVELS	9	/* deepest any XFS btree may be */

/* v5 short-form block header: 56 bytes. */
struct xk_btree_sblock {
	xk_be32	bb_magic;
	xk_be16	bb_level;
	xk_be16	bb_numrecs;
	xk_be32	bb_leftsib;
	xk_be32	bb_rightsib;
	xk_be64	bb_blkno;
	xk_be64	bb_lsn;
	uint8_t	bb_uuid[16];
	xk_be32	bb_owner;
	uint8_t	bb_crc[4];		/* CRC32c, little-endian */
};

_Static_assert(sizeof(struct xk_btree_sblock) == 56, "sblock: size");
_Static_assert(offsetof(struct xk_btree_sblock, bb_crc) == 52, "sblock: crc");
_Static_assert(offsetof(struct xk_btree_sblock, bb_lsn) == 24, "sblock: lsn");

/* v5 long-form block header: 72 bytes. */
struct xk_btree_lblock {
	xk_be32	bb_magic;
	xk_be16	bb_level;
	xk_be16	bb_numrecs;
	xk_be64	bb_leftsib;
	xk_be64	bb_rightsib;
	xk_be64	bb_blkno;
	xk_be64	bb_lsn;
	uint8_t	bb_uuid[16];
	xk_be64	bb_owner;
	uint8_t	bb_crc[4];		/* CRC32c, little-endian */
	xk_be32	bb_pad;
};

_Static_assert(sizeof(struct xk_btree_lblock) == 72, "lblock: size");
_Static_assert(offsetof(struct xk_btree_lblock, bb_crc) == 64, "lblock: crc");
_Static_assert(offsetof(struct xk_btree_lblock, bb_lsn) == 32, "lblock: lsn");

/* Free space (bnobt and cntbt share record and key). */
struct xk_alloc_rec {
	xk_be32	ar_startblock;
	xk_be32	ar_blockcount;
};
_Static_assert(sizeof(struct xk_alloc_rec) == 8, "alloc rec: size");

/* Inode chunk: 64 inodes.  With sparse inodes the middle word splits. */
#define XK_INODES_PER_CHUNK	64
#define XK_INODES_PER_HOLEMASK_BIT 4	/* 64 inodes / 16 holemask bits */
struct xk_inobt_rec {
	xk_be32	ir_startino;
	union {
		struct {
			xk_be16	ir_holemask;
			uint8_t	ir_count;
			uint8_t	ir_freecount;
		} sp;
		struct {
			xk_be32	ir_freecount;
		} f;
	} ir_u;
	xk_be64	ir_free;
};
_Static_assert(sizeof(struct xk_inobt_rec) == 16, "inobt rec: size");

struct xk_inobt_key {
	xk_be32	ir_startino;
};

/*
 * Reverse mapping.  rm_offset packs the logical offset (54 bits) with
 * three flags in the high bits.
 */
#define XK_RMAP_OFF_ATTR_FORK	(1ULL << 63)
#define XK_RMAP_OFF_BMBT_BLOCK	(1ULL << 62)
#define XK_RMAP_OFF_UNWRITTEN	(1ULL << 61)
#define XK_RMAP_OFF_MASK	((1ULL << 54) - 1)
#define XK_RMAP_OFF_FLAGS	(XK_RMAP_OFF_ATTR_FORK | \
				 XK_RMAP_OFF_BMBT_BLOCK | \
				 XK_RMAP_OFF_UNWRITTEN)

/* Special owners of space that belongs to no inode. */
#define XK_RMAP_OWN_NULL	((uint64_t)-1)	/* no owner (AGFL padding) */
#define XK_RMAP_OWN_UNKNOWN	((uint64_t)-2)	/* unknown owner */
#define XK_RMAP_OWN_FS		((uint64_t)-3)	/* sb, AG headers */
#define XK_RMAP_OWN_LOG		((uint64_t)-4)	/* internal log */
#define XK_RMAP_OWN_AG		((uint64_t)-5)	/* AG btrees and AGFL */
#define XK_RMAP_OWN_INOBT	((uint64_t)-6)	/* inobt and finobt */
#define XK_RMAP_OWN_INODES	((uint64_t)-7)	/* inode chunks */
#define XK_RMAP_OWN_REFC	((uint64_t)-8)	/* refcountbt */
#define XK_RMAP_OWN_COW		((uint64_t)-9)	/* CoW staging */
#define XK_RMAP_OWN_MIN		((uint64_t)-10)	/* lowest special owner */

static inline int xk_rmap_owner_is_special(uint64_t owner)
{
	return owner > XK_RMAP_OWN_MIN;
}

struct xk_rmap_rec {
	xk_be32	rm_startblock;
	xk_be32	rm_blockcount;
	xk_be64	rm_owner;
	xk_be64	rm_offset;
};
_Static_assert(sizeof(struct xk_rmap_rec) == 24, "rmap rec: size");

struct xk_rmap_key {
	xk_be32	rm_startblock;
	xk_be64	rm_owner;
	xk_be64	rm_offset;
};
_Static_assert(sizeof(struct xk_rmap_key) == 20, "rmap key: size");

/* Reference counts.  The top bit of the start block marks CoW staging. */
#define XK_REFC_COWFLAG		(1u << 31)
struct xk_refcount_rec {
	xk_be32	rc_startblock;
	xk_be32	rc_blockcount;
	xk_be32	rc_refcount;
};
_Static_assert(sizeof(struct xk_refcount_rec) == 12, "refcount rec: size");

struct xk_refcount_key {
	xk_be32	rc_startblock;
};

/* Short-form btree pointer: an AG block number. */
typedef xk_be32 xk_sbtree_ptr;
/* Long-form btree pointer: a filesystem block number. */
typedef xk_be64 xk_lbtree_ptr;

#endif /* XFSKIT_FORMAT_BTREE_H */
