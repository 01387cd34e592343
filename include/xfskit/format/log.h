/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The journal ("log") as written to disk: log records with their headers,
 * the operation headers that cut a record's payload into regions, the
 * transaction header, the unmount record, and the format structure of
 * every log item that recovery replays.
 *
 * Two byte orders live side by side here, and mixing them up is the
 * classic log-recovery bug:
 *
 *  - Record headers, extended headers and op headers are big-endian.
 *    They use the xk_be* types and have alignment 1 like every other
 *    on-disk header in this directory.
 *
 *  - Everything inside an op header's payload that the kernel builds as a
 *    plain C struct (transaction header, unmount record, every log item
 *    format, the logged inode core) is in the WRITER's native byte order:
 *    little-endian for a log written on x86.  Those structs are declared
 *    with plain uint16_t/uint32_t/uint64_t fields.  The exceptions are
 *    spelled out where they occur (icreate carries big-endian fields
 *    after a native type/size pair; logged buffer data, dquots and the
 *    bmbt root in inode fork regions are copies of big-endian metadata).
 *    A record's h_fmt says which order its writer used; like the kernel,
 *    a reader should refuse to replay a log whose h_fmt differs from
 *    XK_LOG_FMT_NATIVE rather than byte-swap it.
 *
 * Payload regions sit at any byte offset inside a record (an op header
 * is 12 bytes) and a region may even be split across records, so the
 * native-order structs are declared packed: they have alignment 1, member
 * access through a pointer into a log buffer is safe, and their layout
 * (with all padding spelled out) equals the kernel's on x86_64.  Do not
 * take the address of a member (gcc warns); to get an aligned copy, or
 * when the region may be shorter than the struct, memcpy the struct out
 * (xk_log_copy_item) and use the copy.  xk_get_ne16/32/64 read a native
 * field at a byte pointer without any struct.
 *
 * Layout of the physical log: a circular sequence of 512-byte basic
 * blocks.  Each log record starts with one record header block, followed
 * (v2 logs whose iclog size h_size exceeds 32 KiB) by extended header
 * blocks, followed by BTOBB(h_len) data blocks.  Before writing, the
 * first 32-bit word of every data block is saved into the cycle-data
 * array of the headers and replaced by the cycle number, so a torn write
 * is visible as a cycle mismatch; a reader must put the saved words back
 * (xk_log_rec_cycle_slot) before parsing the payload.  A record that runs
 * past the physical end of the log is written in two pieces, and every
 * block of the piece that lands at block 0 onwards is stamped with the
 * NEXT cycle (skipping XK_LOG_HEADER_MAGIC_NUM), before the CRC is
 * computed.
 *
 * The payload is a stream of (op header, oh_len bytes of region data).
 * A checkpoint transaction is: an empty op with XK_LOG_START_TRANS; one
 * region holding the transaction header; the item regions; an empty op
 * with XK_LOG_COMMIT_TRANS.  A clean unmount writes one op with
 * oh_clientid XK_LOG, flag XK_LOG_UNMOUNT_TRANS and an 8-byte unmount
 * record.  Each log item is the region holding its format struct
 * (first two native u16 fields: type, then the number of regions the item
 * occupies, itself included) followed by that many minus one regions.
 */
#ifndef XFSKIT_FORMAT_LOG_H
#define XFSKIT_FORMAT_LOG_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <xfskit/endian.h>

#define XK_LOG_PACKED	__attribute__((__packed__))

/* Basic block; the same definition as in sb.h. */
#ifndef XK_BBSHIFT
#define XK_BBSHIFT		9
#define XK_BBSIZE		(1 << XK_BBSHIFT)
#endif

/*
 * ------------------------------------------------------------------------
 * Log records
 * ------------------------------------------------------------------------
 */

#define XK_LOG_HEADER_MAGIC_NUM	0xfeedbabe	/* never a valid cycle */
#define XK_LOG_VERSION_1	1
#define XK_LOG_VERSION_2	2		/* big iclogs, stripe unit */
#define XK_LOG_VERSION_OKBITS	(XK_LOG_VERSION_1 | XK_LOG_VERSION_2)

#define XK_LOG_MIN_ICLOGS	2
#define XK_LOG_MAX_ICLOGS	8
#define XK_LOG_MIN_RECORD_BSHIFT 14
#define XK_LOG_BIG_RECORD_BSHIFT 15
#define XK_LOG_MAX_RECORD_BSHIFT 18
#define XK_LOG_MIN_RECORD_BSIZE	(1 << XK_LOG_MIN_RECORD_BSHIFT) /* 16k */
#define XK_LOG_BIG_RECORD_BSIZE	(1 << XK_LOG_BIG_RECORD_BSHIFT) /* 32k */
#define XK_LOG_MAX_RECORD_BSIZE	(1 << XK_LOG_MAX_RECORD_BSHIFT) /* 256k */

/* Every header block (record or extended) is one basic block. */
#define XK_LOG_HEADER_SIZE	512
/* Bytes of record data whose cycle words one header block can hold. */
#define XK_LOG_HEADER_CYCLE_SIZE (32 * 1024)
/* Saved cycle words per header block: 64. */
#define XK_LOG_CYCLE_DATA_SIZE	(XK_LOG_HEADER_CYCLE_SIZE / XK_BBSIZE)

/* h_fmt: byte order and origin of the writer. */
#define XK_LOG_FMT_UNKNOWN	0
#define XK_LOG_FMT_LINUX_LE	1
#define XK_LOG_FMT_LINUX_BE	2
#define XK_LOG_FMT_IRIX_BE	3
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
#define XK_LOG_FMT_NATIVE	XK_LOG_FMT_LINUX_BE
#else
#define XK_LOG_FMT_NATIVE	XK_LOG_FMT_LINUX_LE
#endif

/*
 * Log record header: first basic block of every record.  Only the first
 * XK_LOG_REC_SIZE bytes are covered by h_crc; the rest of the block is
 * zero.  h_len is the byte length of the record's data (for v2 logs it
 * includes the padding to the log stripe unit), h_size the iclog buffer
 * size the writer used (v2 only), h_num_logops the number of op headers
 * that start in this record, h_prev_block the block of the previous
 * record.
 */
struct xk_log_rec_header {
	xk_be32	h_magicno;		/* XK_LOG_HEADER_MAGIC_NUM */
	xk_be32	h_cycle;		/* cycle this record was written in */
	xk_be32	h_version;		/* XK_LOG_VERSION_* */
	xk_be32	h_len;			/* bytes of record data */
	xk_be64	h_lsn;			/* cycle/block of this record */
	xk_be64	h_tail_lsn;		/* log tail when it was written */
	uint8_t	h_crc[4];		/* CRC32c, little-endian */
	xk_be32	h_prev_block;		/* block of the previous record */
	xk_be32	h_num_logops;		/* op headers in this record */
	xk_be32	h_cycle_data[XK_LOG_CYCLE_DATA_SIZE]; /* saved words */
	xk_be32	h_fmt;			/* XK_LOG_FMT_* */
	uint8_t	h_fs_uuid[16];		/* sb_uuid of the filesystem */
	xk_be32	h_size;			/* iclog size (v2) */
	uint8_t	h_pad0[4];		/* x86_64 tail padding, zero */
	uint8_t	h_reserved[184];	/* rest of the basic block, zero */
};

/*
 * Extended header: one more basic block per further 32 KiB of iclog
 * (v2 logs).  Extended header n (counting from 1) holds the saved cycle
 * words of data blocks 64n..64n+63.
 */
struct xk_log_rec_ext_header {
	xk_be32	xh_cycle;		/* same as h_cycle */
	xk_be32	xh_cycle_data[XK_LOG_CYCLE_DATA_SIZE];
	uint8_t	xh_reserved[252];	/* rest of the basic block, zero */
};

/*
 * The record CRC is CRC32c (seed ~0, result inverted, stored LE) over:
 * the first XK_LOG_REC_SIZE bytes of the record header with h_crc taken
 * as zero; then, for v2 logs, the first XK_LOG_REC_EXT_SIZE bytes of
 * extended headers 1 .. DIV_ROUND_UP(h_len, 32k) - 1 (note: derived from
 * h_len, not from h_size); then the h_len bytes of data as written, i.e.
 * with the cycle numbers stamped in.  Writers on i386 covered only 324
 * header bytes (no tail padding): a reader that wants to accept such logs
 * retries with XK_LOG_REC_SIZE_I386 when the first check fails.
 */
#define XK_LOG_REC_SIZE		328
#define XK_LOG_REC_SIZE_I386	324
#define XK_LOG_REC_EXT_SIZE	260

/*
 * Number of header blocks in front of a record's data: extended headers
 * exist only for v2 records whose iclog size is over 32 KiB.  (The kernel
 * also requires the superblock's LOGV2 bit, which every v5 fs has.)
 */
static inline unsigned int xk_log_rec_hblks(uint32_t h_version,
					    uint32_t h_size)
{
	if ((h_version & XK_LOG_VERSION_2) &&
	    h_size > XK_LOG_HEADER_CYCLE_SIZE)
		return (h_size + XK_LOG_HEADER_CYCLE_SIZE - 1) /
		       XK_LOG_HEADER_CYCLE_SIZE;
	return 1;
}

/*
 * Byte offset, from the start of the record header block, of the saved
 * first word of data block i (0-based, counted from the first data
 * block).  Valid for i < 64 * xk_log_rec_hblks().
 */
static inline size_t xk_log_rec_cycle_slot(unsigned int i)
{
	unsigned int j = i / XK_LOG_CYCLE_DATA_SIZE;
	unsigned int k = i % XK_LOG_CYCLE_DATA_SIZE;

	if (j == 0)
		return offsetof(struct xk_log_rec_header, h_cycle_data) + 4 * k;
	return (size_t)j * XK_LOG_HEADER_SIZE +
	       offsetof(struct xk_log_rec_ext_header, xh_cycle_data) + 4 * k;
}

/*
 * The cycle number stamped in a log block: a record header block carries
 * it in h_cycle (its first word is the magic), any other block in its
 * first word.
 */
static inline uint32_t xk_log_block_cycle(const void *blk)
{
	const uint8_t *b = blk;

	if (xk_get_be32(b) == XK_LOG_HEADER_MAGIC_NUM)
		return xk_get_be32(b + 4);
	return xk_get_be32(b);
}

/*
 * Log sequence numbers: cycle in the high 32 bits, basic block number
 * within the log in the low 32 bits.  Stored big-endian in metadata
 * headers and record headers, native in the log item formats.
 */
static inline uint32_t xk_lsn_cycle(uint64_t lsn)
{
	return (uint32_t)(lsn >> 32);
}

static inline uint32_t xk_lsn_block(uint64_t lsn)
{
	return (uint32_t)lsn;
}

static inline uint64_t xk_lsn_make(uint32_t cycle, uint32_t block)
{
	return ((uint64_t)cycle << 32) | block;
}

/*
 * ------------------------------------------------------------------------
 * Operation headers, transaction header, unmount record
 * ------------------------------------------------------------------------
 */

/* oh_clientid */
#define XK_TRANSACTION		0x69	/* transaction (all current ops) */
#define XK_VOLUME		0x02	/* obsolete; never written by Linux */
#define XK_LOG			0xaa	/* the log itself (unmount record) */

/*
 * oh_flags.  A region too large for the rest of a record is split: the
 * first piece carries XK_LOG_CONTINUE_TRANS, each piece in a following
 * record XK_LOG_WAS_CONT_TRANS (append to the previous region), the
 * last one also XK_LOG_END_TRANS.
 */
#define XK_LOG_START_TRANS	0x01	/* empty op opening a transaction */
#define XK_LOG_COMMIT_TRANS	0x02	/* empty op committing it */
#define XK_LOG_CONTINUE_TRANS	0x04	/* region continues in next record */
#define XK_LOG_WAS_CONT_TRANS	0x08	/* continuation of previous region */
#define XK_LOG_END_TRANS	0x10	/* last piece of a split region */
#define XK_LOG_UNMOUNT_TRANS	0x20	/* unmount record */

/*
 * Op header: 12 bytes, big-endian, in front of every region.  oh_len is
 * the region's byte count; current kernels pad each region to a multiple
 * of XK_LOG_REGION_ALIGN with zeroes and count the padding in oh_len, so
 * item decoders must take lengths from the item, not from oh_len.
 */
struct xk_log_op_header {
	xk_be32	oh_tid;			/* transaction id (ticket) */
	xk_be32	oh_len;			/* bytes of region data that follow */
	uint8_t	oh_clientid;		/* XK_TRANSACTION, XK_LOG */
	uint8_t	oh_flags;		/* XK_LOG_*_TRANS */
	uint8_t	oh_res2[2];		/* zero */
};

#define XK_LOG_REGION_ALIGN	4

/*
 * Transaction header: the first region of every transaction.  NATIVE
 * byte order.  th_num_items is the number of regions the kernel wrote
 * for the checkpoint; recovery only uses it as a sanity check.
 */
#define XK_TRANS_HEADER_MAGIC	0x5452414e	/* "TRAN" as a native u32 */
#define XK_TRANS_CHECKPOINT	40	/* only th_type of CIL-era logs */

struct xk_trans_header {
	uint32_t th_magic;		/* XK_TRANS_HEADER_MAGIC */
	uint32_t th_type;		/* XK_TRANS_CHECKPOINT */
	int32_t	th_tid;			/* transaction id, unused */
	uint32_t th_num_items;		/* regions in the transaction */
} XK_LOG_PACKED;

/* Unmount record payload.  NATIVE byte order. */
#define XK_LOG_UNMOUNT_TYPE	0x556e	/* "Un" */

struct xk_unmount_log_format {
	uint16_t magic;			/* XK_LOG_UNMOUNT_TYPE */
	uint16_t pad1;			/* zero */
	uint32_t pad2;			/* zero */
} XK_LOG_PACKED;

/*
 * ------------------------------------------------------------------------
 * Log items (all formats NATIVE byte order unless noted)
 * ------------------------------------------------------------------------
 */

#define XK_LI_EFI		0x1236	/* extent free intent */
#define XK_LI_EFD		0x1237	/* extent free done */
#define XK_LI_IUNLINK		0x1238	/* in-memory only, never logged */
#define XK_LI_INODE		0x123b
#define XK_LI_BUF		0x123c
#define XK_LI_DQUOT		0x123d
#define XK_LI_QUOTAOFF		0x123e	/* obsolete; recovery skips it */
#define XK_LI_ICREATE		0x123f	/* inode chunk create */
#define XK_LI_RUI		0x1240	/* rmap update intent */
#define XK_LI_RUD		0x1241
#define XK_LI_CUI		0x1242	/* refcount update intent */
#define XK_LI_CUD		0x1243
#define XK_LI_BUI		0x1244	/* file mapping (bmap) intent */
#define XK_LI_BUD		0x1245
#define XK_LI_ATTRI		0x1246	/* xattr set/remove intent */
#define XK_LI_ATTRD		0x1247
#define XK_LI_XMI		0x1248	/* mapping exchange intent */
#define XK_LI_XMD		0x1249
/* Realtime-group variants (kernels after 6.1; same formats as above). */
#define XK_LI_EFI_RT		0x124a
#define XK_LI_EFD_RT		0x124b
#define XK_LI_RUI_RT		0x124c
#define XK_LI_RUD_RT		0x124d
#define XK_LI_CUI_RT		0x124e
#define XK_LI_CUD_RT		0x124f

/* Native-order field access at any byte address. */
static inline uint16_t xk_get_ne16(const void *p)
{
	uint16_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static inline uint32_t xk_get_ne32(const void *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static inline uint64_t xk_get_ne64(const void *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static inline void xk_put_ne16(void *p, uint16_t v)
{
	memcpy(p, &v, sizeof(v));
}

static inline void xk_put_ne32(void *p, uint32_t v)
{
	memcpy(p, &v, sizeof(v));
}

static inline void xk_put_ne64(void *p, uint64_t v)
{
	memcpy(p, &v, sizeof(v));
}

/* Type and region count shared by the start of every item format. */
static inline uint16_t xk_log_item_type(const void *region)
{
	return xk_get_ne16(region);
}

static inline uint16_t xk_log_item_size(const void *region)
{
	return xk_get_ne16((const uint8_t *)region + 2);
}

/*
 * Copy an item format out of a region of len bytes into dst (dstsize
 * bytes), zero-filling whatever the region does not cover.  Returns 0,
 * or -1 if the region is longer than dst.
 */
static inline int xk_log_copy_item(void *dst, size_t dstsize,
				   const void *region, size_t len)
{
	if (len > dstsize)
		return -1;
	memcpy(dst, region, len);
	memset((uint8_t *)dst + len, 0, dstsize - len);
	return 0;
}

/*
 * Buffer items (XK_LI_BUF).  The format region is followed by one region
 * per run of set bits in the dirty bitmap, in bitmap order; each bit
 * stands for XK_BLF_CHUNK bytes of the buffer, and a region holds the
 * (big-endian metadata) bytes of its run.  Only the used part of the
 * bitmap is logged: the format region is xk_buf_log_format_size() bytes.
 * Bitmap words are native unsigned 32-bit; bit n is word n / 32, mask
 * 1 << (n % 32).  blf_size counts the format region plus the data
 * regions.  A discontiguous buffer logs one format per mapping.
 */
#define XK_BLF_CHUNK		128
#define XK_BLF_SHIFT		7
#define XK_BLF_NBWORD		32	/* bits per bitmap word */
#define XK_BLF_BIT_TO_WORD_SHIFT 5
/* Words for a 64 KiB block (16), plus one so the struct size is odd. */
#define XK_BLF_DATAMAP_SIZE	((65536 / XK_BLF_CHUNK) / XK_BLF_NBWORD + 1)

/* blf_flags, low bits */
#define XK_BLF_INODE_BUF	(1 << 0)	/* holds inodes */
#define XK_BLF_CANCEL		(1 << 1)	/* freed: do not replay */
#define XK_BLF_UDQUOT_BUF	(1 << 2)	/* holds user dquots */
#define XK_BLF_PDQUOT_BUF	(1 << 3)	/* holds project dquots */
#define XK_BLF_GDQUOT_BUF	(1 << 4)	/* holds group dquots */

/*
 * blf_flags, top 5 bits: the buffer's type, which tells recovery where
 * the magic, LSN and CRC live so it can stamp and re-checksum the buffer.
 */
#define XK_BLFT_BITS		5
#define XK_BLFT_SHIFT		11
#define XK_BLFT_MASK		(((1 << XK_BLFT_BITS) - 1) << XK_BLFT_SHIFT)

#define XK_BLFT_UNKNOWN_BUF	0
#define XK_BLFT_UDQUOT_BUF	1
#define XK_BLFT_PDQUOT_BUF	2
#define XK_BLFT_GDQUOT_BUF	3
#define XK_BLFT_BTREE_BUF	4
#define XK_BLFT_AGF_BUF		5
#define XK_BLFT_AGFL_BUF	6
#define XK_BLFT_AGI_BUF		7
#define XK_BLFT_DINO_BUF	8
#define XK_BLFT_SYMLINK_BUF	9
#define XK_BLFT_DIR_BLOCK_BUF	10
#define XK_BLFT_DIR_DATA_BUF	11
#define XK_BLFT_DIR_FREE_BUF	12
#define XK_BLFT_DIR_LEAF1_BUF	13
#define XK_BLFT_DIR_LEAFN_BUF	14
#define XK_BLFT_DA_NODE_BUF	15
#define XK_BLFT_ATTR_LEAF_BUF	16
#define XK_BLFT_ATTR_RMT_BUF	17
#define XK_BLFT_SB_BUF		18
#define XK_BLFT_RTBITMAP_BUF	19
#define XK_BLFT_RTSUMMARY_BUF	20
#define XK_BLFT_MAX_BUF		(1 << XK_BLFT_BITS)

struct xk_buf_log_format {
	uint16_t blf_type;		/* XK_LI_BUF */
	uint16_t blf_size;		/* regions in this item */
	uint16_t blf_flags;		/* XK_BLF_* | type << XK_BLFT_SHIFT */
	uint16_t blf_len;		/* buffer length in basic blocks */
	int64_t	blf_blkno;		/* buffer daddr (512-byte units) */
	uint32_t blf_map_size;		/* bitmap words in use */
	uint32_t blf_data_map[XK_BLF_DATAMAP_SIZE]; /* dirty chunks */
} XK_LOG_PACKED;

static inline unsigned int xk_blft_from_flags(uint16_t flags)
{
	return (flags & XK_BLFT_MASK) >> XK_BLFT_SHIFT;
}

static inline uint16_t xk_blft_to_flags(uint16_t flags, unsigned int type)
{
	return (uint16_t)((flags & ~XK_BLFT_MASK) |
			  ((type << XK_BLFT_SHIFT) & XK_BLFT_MASK));
}

/* Logged length of a buffer format with map_size bitmap words. */
static inline size_t xk_buf_log_format_size(uint32_t map_size)
{
	return offsetof(struct xk_buf_log_format, blf_data_map) +
	       (size_t)map_size * sizeof(uint32_t);
}

/* Whether chunk `bit` is dirty; blf may point straight into a region. */
static inline int xk_blf_test_bit(const struct xk_buf_log_format *blf,
				  unsigned int bit)
{
	const uint8_t *w = (const uint8_t *)blf +
		offsetof(struct xk_buf_log_format, blf_data_map) +
		(bit >> XK_BLF_BIT_TO_WORD_SHIFT) * sizeof(uint32_t);

	return (xk_get_ne32(w) >> (bit & (XK_BLF_NBWORD - 1))) & 1;
}

/*
 * The next run of dirty chunks at or after *bit in a map of map_size
 * words: 1 with the run at [*bit, *bit + *nbits), or 0 when none is left.
 */
static inline int xk_blf_next_run(const struct xk_buf_log_format *blf,
				  unsigned int map_size, unsigned int *bit,
				  unsigned int *nbits)
{
	unsigned int b = *bit, n = 0, end = map_size * XK_BLF_NBWORD;

	while (b < end && !xk_blf_test_bit(blf, b))
		b++;
	if (b >= end)
		return 0;
	while (b + n < end && xk_blf_test_bit(blf, b + n))
		n++;
	*bit = b;
	*nbits = n;
	return 1;
}

/*
 * Inode items (XK_LI_INODE).  Regions: [0] the inode log format, [1] the
 * inode core as struct xk_log_dinode, [2] the data fork if ilf_fields has
 * a data-fork bit (ilf_dsize bytes), [3] the attr fork if it has an
 * attr-fork bit (ilf_asize bytes); ilf_size is the count.  Fork regions
 * are copies of the on-disk (big-endian) fork contents, except that a
 * btree root (XK_ILOG_DBROOT/ABROOT) is logged in its in-memory form, a
 * long-format btree block header followed by keys and pointers, which
 * recovery converts to the on-disk bmdr root.
 *
 * The normal layout has a 4-byte hole before ilf_ino; writers on i386
 * used the 52-byte layout without it.  Recovery tells them apart by the
 * region length (56 or 52).
 */
#define XK_ILOG_CORE		0x001	/* inode core */
#define XK_ILOG_DDATA		0x002	/* local data fork */
#define XK_ILOG_DEXT		0x004	/* data fork extent list */
#define XK_ILOG_DBROOT		0x008	/* data fork btree root */
#define XK_ILOG_DEV		0x010	/* ilf_u.ilfu_rdev */
#define XK_ILOG_UUID		0x020	/* never used */
#define XK_ILOG_ADATA		0x040	/* local attr fork */
#define XK_ILOG_AEXT		0x080	/* attr fork extent list */
#define XK_ILOG_ABROOT		0x100	/* attr fork btree root */
#define XK_ILOG_DOWNER		0x200	/* swap data fork bmbt owner */
#define XK_ILOG_AOWNER		0x400	/* swap attr fork bmbt owner */
/* In-memory only; must never appear in a logged ilf_fields. */
#define XK_ILOG_TIMESTAMP	0x4000
#define XK_ILOG_IVERSION	0x8000

#define XK_ILOG_DFORK		(XK_ILOG_DDATA | XK_ILOG_DEXT | XK_ILOG_DBROOT)
#define XK_ILOG_AFORK		(XK_ILOG_ADATA | XK_ILOG_AEXT | XK_ILOG_ABROOT)
/* Every bit that may legitimately be found in a logged ilf_fields. */
#define XK_ILOG_ONDISK_MASK	0x07ff

struct xk_inode_log_format {
	uint16_t ilf_type;		/* XK_LI_INODE */
	uint16_t ilf_size;		/* regions in this item */
	uint32_t ilf_fields;		/* XK_ILOG_* */
	uint16_t ilf_asize;		/* attr fork region bytes */
	uint16_t ilf_dsize;		/* data fork region bytes */
	uint32_t ilf_pad;		/* alignment hole, zero */
	uint64_t ilf_ino;		/* inode number */
	union {
		uint32_t ilfu_rdev;	/* device number (XK_ILOG_DEV) */
		uint8_t	ilfu_pad[16];
	} XK_LOG_PACKED ilf_u;
	int64_t	ilf_blkno;		/* inode cluster buffer daddr */
	int32_t	ilf_len;		/* its length in basic blocks */
	int32_t	ilf_boffset;		/* byte offset of the inode in it */
} XK_LOG_PACKED;

struct xk_inode_log_format_32 {
	uint16_t ilf_type;
	uint16_t ilf_size;
	uint32_t ilf_fields;
	uint16_t ilf_asize;
	uint16_t ilf_dsize;
	uint64_t ilf_ino;		/* no hole before it */
	union {
		uint32_t ilfu_rdev;
		uint8_t	ilfu_pad[16];
	} XK_LOG_PACKED ilf_u;
	int64_t	ilf_blkno;
	int32_t	ilf_len;
	int32_t	ilf_boffset;
} XK_LOG_PACKED;

/*
 * Logged inode core.  It mirrors the on-disk dinode field by field, but
 * in the WRITER's native byte order (little-endian on x86), so every
 * field is a plain native integer here.  Timestamps are a native u64
 * holding the bigtime value when XFS_DIFLAG2_BIGTIME is set in
 * di_flags2, otherwise two native int32s (seconds, then nanoseconds:
 * struct xk_log_legacy_timestamp).  di_lsn is whatever the writer had
 * in memory and must not be replayed; di_crc is recomputed by recovery.
 * v1/v2 inodes log only the first XK_LOG_DINODE_V2_SIZE bytes.
 */
typedef uint64_t xk_log_timestamp_t;

struct xk_log_legacy_timestamp {
	int32_t	t_sec;
	int32_t	t_nsec;
} XK_LOG_PACKED;

struct xk_log_dinode {
	uint16_t di_magic;		/* 0x494e "IN" */
	uint16_t di_mode;
	int8_t	di_version;
	int8_t	di_format;
	uint16_t di_metatype;		/* di_onlink on pre-metadir fs */
	uint32_t di_uid;
	uint32_t di_gid;
	uint32_t di_nlink;
	uint16_t di_projid_lo;
	uint16_t di_projid_hi;
	union {
		uint64_t di_big_nextents;	/* NREXT64 */
		uint64_t di_v3_pad;		/* v3 without NREXT64 */
		struct {
			uint8_t	di_v2_pad[6];
			uint16_t di_flushiter;	/* v2 inodes */
		} XK_LOG_PACKED;
	} XK_LOG_PACKED;
	xk_log_timestamp_t di_atime;
	xk_log_timestamp_t di_mtime;
	xk_log_timestamp_t di_ctime;
	int64_t	di_size;
	uint64_t di_nblocks;
	uint32_t di_extsize;
	union {
		struct {
			uint32_t di_nextents;
			uint16_t di_anextents;
		} XK_LOG_PACKED;
		struct {			/* NREXT64 */
			uint32_t di_big_anextents;
			uint16_t di_nrext64_pad;
		} XK_LOG_PACKED;
	} XK_LOG_PACKED;
	uint8_t	di_forkoff;
	int8_t	di_aformat;
	uint32_t di_dmevmask;
	uint16_t di_dmstate;
	uint16_t di_flags;
	uint32_t di_gen;
	uint32_t di_next_unlinked;	/* end of the v1/v2 core */
	uint32_t di_crc;
	uint64_t di_changecount;
	uint64_t di_lsn;		/* not meaningful, see above */
	uint64_t di_flags2;
	union {
		uint32_t di_cowextsize;
		uint32_t di_used_blocks;	/* zoned rtrmap inode */
	} XK_LOG_PACKED;
	uint8_t	di_pad2[12];
	xk_log_timestamp_t di_crtime;
	uint64_t di_ino;
	uint8_t	di_uuid[16];
} XK_LOG_PACKED;

#define XK_LOG_DINODE_V2_SIZE	offsetof(struct xk_log_dinode, di_next_unlinked)

/*
 * Inode chunk creation (XK_LI_ICREATE): one region.  icl_type and
 * icl_size are NATIVE; all later fields are BIG-ENDIAN.  Recovery
 * initialises icl_count inodes of icl_isize bytes at icl_agbno.
 */
struct xk_icreate_log {
	uint16_t icl_type;		/* XK_LI_ICREATE, native */
	uint16_t icl_size;		/* 1, native */
	xk_be32	icl_ag;			/* AG number */
	xk_be32	icl_agbno;		/* first block of the chunk */
	xk_be32	icl_count;		/* inodes to initialise */
	xk_be32	icl_isize;		/* inode size in bytes */
	xk_be32	icl_length;		/* chunk length in blocks */
	xk_be32	icl_gen;		/* generation number to give them */
};

/*
 * Dquot items (XK_LI_DQUOT): the format region, then a region with the
 * on-disk (big-endian) dquot; qlf_size is 2.
 */
struct xk_dq_logformat {
	uint16_t qlf_type;		/* XK_LI_DQUOT */
	uint16_t qlf_size;		/* regions in this item */
	uint32_t qlf_id;		/* user/group/project id */
	int64_t	qlf_blkno;		/* dquot buffer daddr */
	int32_t	qlf_len;		/* its length in basic blocks */
	uint32_t qlf_boffset;		/* byte offset of the dquot in it */
} XK_LOG_PACKED;

/* Quota-off items (XK_LI_QUOTAOFF); qf_flags holds sb_qflags bits. */
struct xk_qoff_logformat {
	uint16_t qf_type;		/* XK_LI_QUOTAOFF */
	uint16_t qf_size;
	uint32_t qf_flags;		/* quota types being turned off */
	uint8_t	qf_pad[12];
} XK_LOG_PACKED;

/*
 * Extent free intent / done (XK_LI_EFI / XK_LI_EFD): one region, a
 * 16-byte header and efi_nextents extents.  The kernel's extent is
 * {u64 start; u32 len} with the ABI's tail padding, so x86_64 writers
 * log 16-byte extents (xk_extent_64) and i386 writers 12-byte ones
 * (xk_extent_32).  Recovery picks the layout whose total size equals the
 * region length (xk_efi_log_format{32,64}_sizeof).  ext_start is a
 * filesystem block number (or rt block for the _RT types).
 */
struct xk_extent_32 {
	uint64_t ext_start;
	uint32_t ext_len;
} XK_LOG_PACKED;

struct xk_extent_64 {
	uint64_t ext_start;
	uint32_t ext_len;
	uint32_t ext_pad;		/* zero */
} XK_LOG_PACKED;

struct xk_efi_log_format_32 {
	uint16_t efi_type;		/* XK_LI_EFI */
	uint16_t efi_size;		/* 1 */
	uint32_t efi_nextents;		/* extents to free */
	uint64_t efi_id;		/* intent id, matched by the EFD */
	struct xk_extent_32 efi_extents[];
} XK_LOG_PACKED;

struct xk_efi_log_format_64 {
	uint16_t efi_type;
	uint16_t efi_size;
	uint32_t efi_nextents;
	uint64_t efi_id;
	struct xk_extent_64 efi_extents[];
} XK_LOG_PACKED;

struct xk_efd_log_format_32 {
	uint16_t efd_type;		/* XK_LI_EFD */
	uint16_t efd_size;		/* 1 */
	uint32_t efd_nextents;		/* extents freed */
	uint64_t efd_efi_id;		/* efi_id of the intent it ends */
	struct xk_extent_32 efd_extents[];
} XK_LOG_PACKED;

struct xk_efd_log_format_64 {
	uint16_t efd_type;
	uint16_t efd_size;
	uint32_t efd_nextents;
	uint64_t efd_efi_id;
	struct xk_extent_64 efd_extents[];
} XK_LOG_PACKED;

static inline size_t xk_efi_log_format32_sizeof(unsigned int nr)
{
	return sizeof(struct xk_efi_log_format_32) +
	       (size_t)nr * sizeof(struct xk_extent_32);
}

static inline size_t xk_efi_log_format64_sizeof(unsigned int nr)
{
	return sizeof(struct xk_efi_log_format_64) +
	       (size_t)nr * sizeof(struct xk_extent_64);
}

static inline size_t xk_efd_log_format32_sizeof(unsigned int nr)
{
	return sizeof(struct xk_efd_log_format_32) +
	       (size_t)nr * sizeof(struct xk_extent_32);
}

static inline size_t xk_efd_log_format64_sizeof(unsigned int nr)
{
	return sizeof(struct xk_efd_log_format_64) +
	       (size_t)nr * sizeof(struct xk_extent_64);
}

/*
 * Mapping extent, shared by RUI (reverse-mapping updates) and BUI (file
 * block mapping updates).  For an RUI, me_owner is an inode number or
 * special owner, me_startblock a filesystem block; for a BUI, me_owner is
 * the inode, me_startoff the file offset.  me_flags: low byte a type
 * code, high bits flags.
 */
struct xk_map_extent {
	uint64_t me_owner;
	uint64_t me_startblock;
	uint64_t me_startoff;
	uint32_t me_len;
	uint32_t me_flags;
} XK_LOG_PACKED;

/* RUI me_flags */
#define XK_RMAP_EXTENT_MAP		1
#define XK_RMAP_EXTENT_MAP_SHARED	2
#define XK_RMAP_EXTENT_UNMAP		3
#define XK_RMAP_EXTENT_UNMAP_SHARED	4
#define XK_RMAP_EXTENT_CONVERT		5
#define XK_RMAP_EXTENT_CONVERT_SHARED	6
#define XK_RMAP_EXTENT_ALLOC		7
#define XK_RMAP_EXTENT_FREE		8
#define XK_RMAP_EXTENT_TYPE_MASK	0xff
#define XK_RMAP_EXTENT_ATTR_FORK	(1u << 31)
#define XK_RMAP_EXTENT_BMBT_BLOCK	(1u << 30)
#define XK_RMAP_EXTENT_UNWRITTEN	(1u << 29)
#define XK_RMAP_EXTENT_FLAGS		(XK_RMAP_EXTENT_TYPE_MASK | \
					 XK_RMAP_EXTENT_ATTR_FORK | \
					 XK_RMAP_EXTENT_BMBT_BLOCK | \
					 XK_RMAP_EXTENT_UNWRITTEN)

/* RUI/CUI/BUI: 16-byte header followed by *_nextents extents. */
struct xk_rui_log_format {
	uint16_t rui_type;		/* XK_LI_RUI */
	uint16_t rui_size;		/* 1 */
	uint32_t rui_nextents;
	uint64_t rui_id;
	struct xk_map_extent rui_extents[];
} XK_LOG_PACKED;

struct xk_rud_log_format {
	uint16_t rud_type;		/* XK_LI_RUD */
	uint16_t rud_size;		/* 1 */
	uint32_t rud_pad;		/* zero */
	uint64_t rud_rui_id;
} XK_LOG_PACKED;

/* Refcount update extent (CUI).  pe_flags: low byte a type code. */
struct xk_phys_extent {
	uint64_t pe_startblock;		/* filesystem block */
	uint32_t pe_len;
	uint32_t pe_flags;
} XK_LOG_PACKED;

/* CUI pe_flags type codes (the kernel's refcount intent types) */
#define XK_REFCOUNT_INCREASE		1
#define XK_REFCOUNT_DECREASE		2
#define XK_REFCOUNT_ALLOC_COW		3
#define XK_REFCOUNT_FREE_COW		4
#define XK_REFCOUNT_EXTENT_TYPE_MASK	0xff
#define XK_REFCOUNT_EXTENT_FLAGS	XK_REFCOUNT_EXTENT_TYPE_MASK

struct xk_cui_log_format {
	uint16_t cui_type;		/* XK_LI_CUI */
	uint16_t cui_size;		/* 1 */
	uint32_t cui_nextents;
	uint64_t cui_id;
	struct xk_phys_extent cui_extents[];
} XK_LOG_PACKED;

struct xk_cud_log_format {
	uint16_t cud_type;		/* XK_LI_CUD */
	uint16_t cud_size;		/* 1 */
	uint32_t cud_pad;		/* zero */
	uint64_t cud_cui_id;
} XK_LOG_PACKED;

/* BUI me_flags; a BUI carries exactly one extent. */
#define XK_BMAP_MAP			1	/* type codes */
#define XK_BMAP_UNMAP			2
#define XK_BMAP_EXTENT_TYPE_MASK	0xff
#define XK_BMAP_EXTENT_ATTR_FORK	(1u << 31)
#define XK_BMAP_EXTENT_UNWRITTEN	(1u << 30)
#define XK_BMAP_EXTENT_REALTIME		(1u << 29)	/* after 6.1 */
#define XK_BMAP_EXTENT_FLAGS		(XK_BMAP_EXTENT_TYPE_MASK | \
					 XK_BMAP_EXTENT_ATTR_FORK | \
					 XK_BMAP_EXTENT_UNWRITTEN | \
					 XK_BMAP_EXTENT_REALTIME)

struct xk_bui_log_format {
	uint16_t bui_type;		/* XK_LI_BUI */
	uint16_t bui_size;		/* 1 */
	uint32_t bui_nextents;		/* 1 */
	uint64_t bui_id;
	struct xk_map_extent bui_extents[];
} XK_LOG_PACKED;

struct xk_bud_log_format {
	uint16_t bud_type;		/* XK_LI_BUD */
	uint16_t bud_size;		/* 1 */
	uint32_t bud_pad;		/* zero */
	uint64_t bud_bui_id;
} XK_LOG_PACKED;

static inline size_t xk_rui_log_format_sizeof(unsigned int nr)
{
	return sizeof(struct xk_rui_log_format) +
	       (size_t)nr * sizeof(struct xk_map_extent);
}

static inline size_t xk_cui_log_format_sizeof(unsigned int nr)
{
	return sizeof(struct xk_cui_log_format) +
	       (size_t)nr * sizeof(struct xk_phys_extent);
}

static inline size_t xk_bui_log_format_sizeof(unsigned int nr)
{
	return sizeof(struct xk_bui_log_format) +
	       (size_t)nr * sizeof(struct xk_map_extent);
}

/*
 * Extended attribute intent / done (XK_LI_ATTRI / XK_LI_ATTRD).  The
 * format region is followed by the name, then (parent-pointer replace)
 * the new name, then the value if any, then (pptr replace) the new
 * value, one region each; alfi_size counts them all.  For pptr replace
 * the name length field holds the old and new lengths as two u16s.
 */
#define XK_ATTRI_OP_FLAGS_SET		1
#define XK_ATTRI_OP_FLAGS_REMOVE	2
#define XK_ATTRI_OP_FLAGS_REPLACE	3
#define XK_ATTRI_OP_FLAGS_PPTR_SET	4	/* parent pointers */
#define XK_ATTRI_OP_FLAGS_PPTR_REMOVE	5
#define XK_ATTRI_OP_FLAGS_PPTR_REPLACE	6
#define XK_ATTRI_OP_FLAGS_TYPE_MASK	0xff
/* alfi_attr_filter: ROOT | SECURE | PARENT | INCOMPLETE attr flags */
#define XK_ATTRI_FILTER_MASK		0x8e

struct xk_attri_log_format {
	uint16_t alfi_type;		/* XK_LI_ATTRI */
	uint16_t alfi_size;		/* regions in this item */
	uint32_t alfi_igen;		/* generation of alfi_ino (pptr ops;
					   zero padding before pptrs) */
	uint64_t alfi_id;
	uint64_t alfi_ino;		/* inode whose attr is changed */
	uint32_t alfi_op_flags;		/* XK_ATTRI_OP_FLAGS_* */
	union {
		uint32_t alfi_name_len;
		struct {
			uint16_t alfi_old_name_len;
			uint16_t alfi_new_name_len;
		} XK_LOG_PACKED;
	} XK_LOG_PACKED;
	uint32_t alfi_value_len;
	uint32_t alfi_attr_filter;	/* XK_ATTRI_FILTER_MASK bits */
} XK_LOG_PACKED;

struct xk_attrd_log_format {
	uint16_t alfd_type;		/* XK_LI_ATTRD */
	uint16_t alfd_size;		/* 1 */
	uint32_t alfd_pad;		/* zero */
	uint64_t alfd_alf_id;		/* alfi_id it ends */
} XK_LOG_PACKED;

/*
 * File mapping exchange intent / done (XK_LI_XMI / XK_LI_XMD): exchange
 * xmi_blockcount blocks of file1 at startoff1 with file2 at startoff2.
 */
#define XK_EXCHMAPS_ATTR_FORK		(1ull << 0)	/* attr forks */
#define XK_EXCHMAPS_SET_SIZES		(1ull << 1)	/* set isize1/2 */
#define XK_EXCHMAPS_INO1_WRITTEN	(1ull << 2)	/* written only */
#define XK_EXCHMAPS_CLEAR_INO1_REFLINK	(1ull << 3)
#define XK_EXCHMAPS_CLEAR_INO2_REFLINK	(1ull << 4)
#define XK_EXCHMAPS_LOGGED_FLAGS	(XK_EXCHMAPS_ATTR_FORK | \
					 XK_EXCHMAPS_SET_SIZES | \
					 XK_EXCHMAPS_INO1_WRITTEN | \
					 XK_EXCHMAPS_CLEAR_INO1_REFLINK | \
					 XK_EXCHMAPS_CLEAR_INO2_REFLINK)

struct xk_xmi_log_format {
	uint16_t xmi_type;		/* XK_LI_XMI */
	uint16_t xmi_size;		/* 1 */
	uint32_t xmi_pad;		/* zero */
	uint64_t xmi_id;
	uint64_t xmi_inode1;
	uint64_t xmi_inode2;
	uint32_t xmi_igen1;
	uint32_t xmi_igen2;
	uint64_t xmi_startoff1;		/* file blocks */
	uint64_t xmi_startoff2;
	uint64_t xmi_blockcount;
	uint64_t xmi_flags;		/* XK_EXCHMAPS_* */
	uint64_t xmi_isize1;		/* new sizes (SET_SIZES) */
	uint64_t xmi_isize2;
} XK_LOG_PACKED;

struct xk_xmd_log_format {
	uint16_t xmd_type;		/* XK_LI_XMD */
	uint16_t xmd_size;		/* 1 */
	uint32_t xmd_pad;		/* zero */
	uint64_t xmd_xmi_id;
} XK_LOG_PACKED;

/*
 * ------------------------------------------------------------------------
 * Layout pins (kernel xfs_ondisk.h values, x86_64)
 * ------------------------------------------------------------------------
 */

_Static_assert(sizeof(struct xk_log_rec_header) == 512,
	       "xk_log_rec_header: on-disk size");
_Static_assert(offsetof(struct xk_log_rec_header, h_lsn) == 16,
	       "xk_log_rec_header: lsn offset");
_Static_assert(offsetof(struct xk_log_rec_header, h_tail_lsn) == 24,
	       "xk_log_rec_header: tail lsn offset");
_Static_assert(offsetof(struct xk_log_rec_header, h_crc) == 32,
	       "xk_log_rec_header: crc offset");
_Static_assert(offsetof(struct xk_log_rec_header, h_cycle_data) == 44,
	       "xk_log_rec_header: cycle data offset");
_Static_assert(offsetof(struct xk_log_rec_header, h_fmt) == 300,
	       "xk_log_rec_header: fmt offset");
_Static_assert(offsetof(struct xk_log_rec_header, h_size) == 320,
	       "xk_log_rec_header: size offset");
_Static_assert(offsetof(struct xk_log_rec_header, h_reserved) ==
	       XK_LOG_REC_SIZE, "xk_log_rec_header: reserved offset");
_Static_assert(offsetof(struct xk_log_rec_header, h_pad0) ==
	       XK_LOG_REC_SIZE_I386, "xk_log_rec_header: pad0 offset");
_Static_assert(sizeof(struct xk_log_rec_ext_header) == 512,
	       "xk_log_rec_ext_header: on-disk size");
_Static_assert(offsetof(struct xk_log_rec_ext_header, xh_reserved) ==
	       XK_LOG_REC_EXT_SIZE, "xk_log_rec_ext_header: reserved offset");
_Static_assert(sizeof(struct xk_log_op_header) == 12,
	       "xk_log_op_header: on-disk size");
_Static_assert(sizeof(struct xk_trans_header) == 16,
	       "xk_trans_header: on-disk size");
_Static_assert(sizeof(struct xk_unmount_log_format) == 8,
	       "xk_unmount_log_format: on-disk size");

_Static_assert(sizeof(struct xk_buf_log_format) == 88,
	       "xk_buf_log_format: on-disk size");
_Static_assert(offsetof(struct xk_buf_log_format, blf_blkno) == 8,
	       "xk_buf_log_format: blkno offset");
_Static_assert(offsetof(struct xk_buf_log_format, blf_data_map) == 20,
	       "xk_buf_log_format: data map offset");
_Static_assert(sizeof(struct xk_inode_log_format) == 56,
	       "xk_inode_log_format: on-disk size");
_Static_assert(offsetof(struct xk_inode_log_format, ilf_ino) == 16,
	       "xk_inode_log_format: ino offset");
_Static_assert(offsetof(struct xk_inode_log_format, ilf_blkno) == 40,
	       "xk_inode_log_format: blkno offset");
_Static_assert(sizeof(struct xk_inode_log_format_32) == 52,
	       "xk_inode_log_format_32: on-disk size");
_Static_assert(offsetof(struct xk_inode_log_format_32, ilf_ino) == 12,
	       "xk_inode_log_format_32: ino offset");
_Static_assert(sizeof(struct xk_log_legacy_timestamp) == 8,
	       "xk_log_legacy_timestamp: on-disk size");
_Static_assert(sizeof(struct xk_log_dinode) == 176,
	       "xk_log_dinode: on-disk size");
_Static_assert(offsetof(struct xk_log_dinode, di_atime) == 32,
	       "xk_log_dinode: atime offset");
_Static_assert(offsetof(struct xk_log_dinode, di_nextents) == 76,
	       "xk_log_dinode: nextents offset");
_Static_assert(offsetof(struct xk_log_dinode, di_forkoff) == 82,
	       "xk_log_dinode: forkoff offset");
_Static_assert(XK_LOG_DINODE_V2_SIZE == 96,
	       "xk_log_dinode: v2 core size");
_Static_assert(offsetof(struct xk_log_dinode, di_crc) == 100,
	       "xk_log_dinode: crc offset");
_Static_assert(offsetof(struct xk_log_dinode, di_lsn) == 112,
	       "xk_log_dinode: lsn offset");
_Static_assert(offsetof(struct xk_log_dinode, di_crtime) == 144,
	       "xk_log_dinode: crtime offset");
_Static_assert(offsetof(struct xk_log_dinode, di_uuid) == 160,
	       "xk_log_dinode: uuid offset");
_Static_assert(sizeof(struct xk_icreate_log) == 28,
	       "xk_icreate_log: on-disk size");
_Static_assert(sizeof(struct xk_dq_logformat) == 24,
	       "xk_dq_logformat: on-disk size");
_Static_assert(sizeof(struct xk_qoff_logformat) == 20,
	       "xk_qoff_logformat: on-disk size");

_Static_assert(sizeof(struct xk_extent_32) == 12,
	       "xk_extent_32: on-disk size");
_Static_assert(sizeof(struct xk_extent_64) == 16,
	       "xk_extent_64: on-disk size");
_Static_assert(sizeof(struct xk_efi_log_format_32) == 16,
	       "xk_efi_log_format_32: header size");
_Static_assert(sizeof(struct xk_efi_log_format_64) == 16,
	       "xk_efi_log_format_64: header size");
_Static_assert(sizeof(struct xk_efd_log_format_32) == 16,
	       "xk_efd_log_format_32: header size");
_Static_assert(sizeof(struct xk_efd_log_format_64) == 16,
	       "xk_efd_log_format_64: header size");
_Static_assert(offsetof(struct xk_efi_log_format_32, efi_extents) == 16,
	       "xk_efi_log_format_32: extents offset");
_Static_assert(offsetof(struct xk_efi_log_format_64, efi_extents) == 16,
	       "xk_efi_log_format_64: extents offset");
_Static_assert(sizeof(struct xk_map_extent) == 32,
	       "xk_map_extent: on-disk size");
_Static_assert(sizeof(struct xk_phys_extent) == 16,
	       "xk_phys_extent: on-disk size");
_Static_assert(sizeof(struct xk_rui_log_format) == 16,
	       "xk_rui_log_format: header size");
_Static_assert(offsetof(struct xk_rui_log_format, rui_extents) == 16,
	       "xk_rui_log_format: extents offset");
_Static_assert(sizeof(struct xk_rud_log_format) == 16,
	       "xk_rud_log_format: on-disk size");
_Static_assert(sizeof(struct xk_cui_log_format) == 16,
	       "xk_cui_log_format: header size");
_Static_assert(offsetof(struct xk_cui_log_format, cui_extents) == 16,
	       "xk_cui_log_format: extents offset");
_Static_assert(sizeof(struct xk_cud_log_format) == 16,
	       "xk_cud_log_format: on-disk size");
_Static_assert(sizeof(struct xk_bui_log_format) == 16,
	       "xk_bui_log_format: header size");
_Static_assert(offsetof(struct xk_bui_log_format, bui_extents) == 16,
	       "xk_bui_log_format: extents offset");
_Static_assert(sizeof(struct xk_bud_log_format) == 16,
	       "xk_bud_log_format: on-disk size");
_Static_assert(sizeof(struct xk_attri_log_format) == 40,
	       "xk_attri_log_format: on-disk size");
_Static_assert(offsetof(struct xk_attri_log_format, alfi_new_name_len) == 30,
	       "xk_attri_log_format: new name len offset");
_Static_assert(sizeof(struct xk_attrd_log_format) == 16,
	       "xk_attrd_log_format: on-disk size");
_Static_assert(sizeof(struct xk_xmi_log_format) == 88,
	       "xk_xmi_log_format: on-disk size");
_Static_assert(sizeof(struct xk_xmd_log_format) == 16,
	       "xk_xmd_log_format: on-disk size");

/* The native-order formats must stay safe at any byte offset. */
_Static_assert(_Alignof(struct xk_buf_log_format) == 1,
	       "xk_buf_log_format: alignment");
_Static_assert(_Alignof(struct xk_inode_log_format) == 1,
	       "xk_inode_log_format: alignment");
_Static_assert(_Alignof(struct xk_log_dinode) == 1,
	       "xk_log_dinode: alignment");
_Static_assert(_Alignof(struct xk_xmi_log_format) == 1,
	       "xk_xmi_log_format: alignment");

#endif /* XFSKIT_FORMAT_LOG_H */
