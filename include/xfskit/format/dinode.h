/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The on-disk inode (v3 only, as every v5 filesystem uses), its two forks
 * and the block-map records that describe a file's extents.
 *
 * An inode is sb_inodesize bytes: a fixed 176-byte core, then the "literal
 * area".  The literal area starts with the data fork; when di_forkoff is
 * non-zero the attribute fork starts di_forkoff * 8 bytes into it.  Each
 * fork is formatted according to di_format / di_aformat: device number,
 * local (inline) bytes, an array of bmbt extent records, or the root of a
 * bmap btree (struct xk_bmdr_block followed by keys and pointers).
 *
 * Two v3 features change how core fields are read, keyed by di_flags2:
 *  - BIGTIME: timestamps are one 64-bit nanosecond counter starting at
 *    1901-12-13 20:45:52 UTC instead of (signed seconds, nanoseconds).
 *  - NREXT64: the data fork extent count is the 64-bit word at offset 24
 *    (where v2 inodes had padding and the flush counter) and the attr fork
 *    count is the 32-bit word at offset 76 (where di_nextents was).
 * Use the accessors below rather than reading those fields directly.
 */
#ifndef XFSKIT_FORMAT_DINODE_H
#define XFSKIT_FORMAT_DINODE_H

#include <stddef.h>
#include <stdint.h>
#include <xfskit/endian.h>
#include <xfskit/format/sb.h>		/* XK_NULLFSINO, XK_NULLAGINO, ... */
#include <xfskit/format/btree.h>	/* long-form block header, bmbt magic */

#define XK_DINODE_MAGIC		0x494e		/* "IN" */
#define XK_DINODE_VERSION_3	3

/* Core sizes: v3 is the whole struct, v1/v2 stop before di_crc. */
#define XK_DINODE_CORE_SIZE	176
#define XK_DINODE_V2_CORE_SIZE	100

#define XK_DINODE_MIN_SIZE	(1 << XK_DINODE_MIN_LOG)	/* 256 */
#define XK_DINODE_MAX_SIZE	(1 << XK_DINODE_MAX_LOG)	/* 2048 */

/* Largest link count the kernel allows (pathconf is signed). */
#define XK_MAXLINK		((1u << 31) - 1u)

/* Inode numbers never exceed 56 bits. */
#define XK_MAXINUMBER		((1ULL << 56) - 1ULL)
#define XK_MAXINUMBER_32	((1ULL << 32) - 1ULL)

/* Fork selectors for the helpers below. */
#define XK_DATA_FORK		0
#define XK_ATTR_FORK		1

/* di_format / di_aformat */
#define XK_DINODE_FMT_DEV	0	/* be32 device number */
#define XK_DINODE_FMT_LOCAL	1	/* bytes held inline in the fork */
#define XK_DINODE_FMT_EXTENTS	2	/* array of struct xk_bmbt_rec */
#define XK_DINODE_FMT_BTREE	3	/* struct xk_bmdr_block root */
#define XK_DINODE_FMT_UUID	4	/* defined but never used */
#define XK_DINODE_FMT_META_BTREE 5	/* a metadata btree root (rtgroups'
				   rmap and refcount inodes) */

/* di_flags (16 bits; frozen, new flags go in di_flags2) */
#define XK_DIFLAG_REALTIME	(1u << 0)	/* data on the realtime dev */
#define XK_DIFLAG_PREALLOC	(1u << 1)	/* has preallocated space */
#define XK_DIFLAG_NEWRTBM	(1u << 2)	/* rtbitmap: new format */
#define XK_DIFLAG_IMMUTABLE	(1u << 3)
#define XK_DIFLAG_APPEND	(1u << 4)
#define XK_DIFLAG_SYNC		(1u << 5)
#define XK_DIFLAG_NOATIME	(1u << 6)
#define XK_DIFLAG_NODUMP	(1u << 7)
#define XK_DIFLAG_RTINHERIT	(1u << 8)	/* children get REALTIME */
#define XK_DIFLAG_PROJINHERIT	(1u << 9)	/* children get our projid */
#define XK_DIFLAG_NOSYMLINKS	(1u << 10)
#define XK_DIFLAG_EXTSIZE	(1u << 11)	/* di_extsize is a hint */
#define XK_DIFLAG_EXTSZINHERIT	(1u << 12)	/* children get di_extsize */
#define XK_DIFLAG_NODEFRAG	(1u << 13)
#define XK_DIFLAG_FILESTREAM	(1u << 14)
#define XK_DIFLAG_ANY		0x7fffu		/* bit 15 is never used */

/* di_flags2 (64 bits) */
#define XK_DIFLAG2_DAX		(1ULL << 0)
#define XK_DIFLAG2_REFLINK	(1ULL << 1)	/* blocks may be shared */
#define XK_DIFLAG2_COWEXTSIZE	(1ULL << 2)	/* di_cowextsize is a hint */
#define XK_DIFLAG2_BIGTIME	(1ULL << 3)	/* 64-bit ns timestamps */
#define XK_DIFLAG2_NREXT64	(1ULL << 4)	/* large extent counters */
#define XK_DIFLAG2_METADATA	(1ULL << 5)	/* in the metadata tree (metadir) */
/* Bits any v3 inode may carry; METADATA only with the METADIR feature. */
#define XK_DIFLAG2_ANY		0x1fULL

/*
 * What a metadata inode holds (METADIR filesystems): stored in the
 * inode's di_onlink word, which v3 inodes otherwise leave zero.
 */
#define XK_METAFILE_UNKNOWN	0
#define XK_METAFILE_DIR		1	/* a directory of the metadata tree */
#define XK_METAFILE_USRQUOTA	2
#define XK_METAFILE_GRPQUOTA	3
#define XK_METAFILE_PRJQUOTA	4
#define XK_METAFILE_RTBITMAP	5
#define XK_METAFILE_RTSUMMARY	6
#define XK_METAFILE_RTRMAP	7
#define XK_METAFILE_RTREFCOUNT	8
#define XK_METAFILE_MAX		9

/* Flags every metadata file carries; directories also NOSYMLINKS. */
#define XK_METAFILE_DIFLAGS	(XK_DIFLAG_IMMUTABLE | XK_DIFLAG_SYNC | \
				 XK_DIFLAG_NOATIME | XK_DIFLAG_NODUMP | \
				 XK_DIFLAG_NODEFRAG)
#define XK_METADIR_DIFLAGS	(XK_METAFILE_DIFLAGS | XK_DIFLAG_NOSYMLINKS)

/* File type bits of di_mode (the classic Unix values). */
#define XK_S_IFMT		0170000
#define XK_S_IFSOCK		0140000
#define XK_S_IFLNK		0120000
#define XK_S_IFREG		0100000
#define XK_S_IFBLK		0060000
#define XK_S_IFDIR		0040000
#define XK_S_IFCHR		0020000
#define XK_S_IFIFO		0010000
#define XK_S_ISUID		0004000
#define XK_S_ISGID		0002000
#define XK_S_ISVTX		0001000

/*
 * Extent count limits.  Without NREXT64 the counters are 31 and 15 bits
 * (they were once signed); with it 48 and 32 bits.
 */
#define XK_MAX_EXTCNT_DATA_FORK_LARGE	((1ULL << 48) - 1)
#define XK_MAX_EXTCNT_ATTR_FORK_LARGE	((1ULL << 32) - 1)
#define XK_MAX_EXTCNT_DATA_FORK_SMALL	((1ULL << 31) - 1)
#define XK_MAX_EXTCNT_ATTR_FORK_SMALL	((1ULL << 15) - 1)

/*
 * Timestamps.  On disk a timestamp is one big-endian 64-bit word.  Legacy
 * encoding splits it into signed 32-bit seconds since the Unix epoch and
 * 32-bit nanoseconds.  Bigtime encoding is an unsigned count of
 * nanoseconds since the legacy minimum, 1901-12-13 20:45:52 UTC, i.e.
 * Unix seconds + XK_BIGTIME_EPOCH_OFFSET.
 */
typedef xk_be64 xk_timestamp;

struct xk_legacy_timestamp {
	xk_be32	t_sec;
	xk_be32	t_nsec;
};

#define XK_NSEC_PER_SEC			1000000000ULL
#define XK_LEGACY_TIME_MIN		((int64_t)INT32_MIN)
#define XK_LEGACY_TIME_MAX		((int64_t)INT32_MAX)
#define XK_BIGTIME_EPOCH_OFFSET		(-(int64_t)INT32_MIN)	/* 2^31 */
/* Bigtime range in on-disk seconds; max rounded down to a multiple of 4. */
#define XK_BIGTIME_TIME_MIN		((int64_t)0)
#define XK_BIGTIME_TIME_MAX		((int64_t)((UINT64_MAX / \
						XK_NSEC_PER_SEC) & ~3ULL))

/* A decoded timestamp: seconds since the Unix epoch. */
struct xk_timespec {
	int64_t		tv_sec;
	uint32_t	tv_nsec;
};

/*
 * The inode core.  Fields keep the kernel's names; the two unions give
 * the alternative readings of the same bytes described at the top.
 */
struct xk_dinode {
	xk_be16	di_magic;
	xk_be16	di_mode;
	uint8_t	di_version;
	uint8_t	di_format;		/* XK_DINODE_FMT_*, data fork */
	xk_be16	di_onlink;		/* v1 only */
	xk_be32	di_uid;
	xk_be32	di_gid;
	xk_be32	di_nlink;
	xk_be16	di_projid_lo;
	xk_be16	di_projid_hi;
	union {
		xk_be64	di_big_nextents;	/* NREXT64: data extents */
		xk_be64	di_v3_pad;		/* v3 without NREXT64: 0 */
		struct {
			uint8_t	di_v2_pad[6];
			xk_be16	di_flushiter;	/* v2 only */
		};
	};
	xk_timestamp	di_atime;
	xk_timestamp	di_mtime;
	xk_timestamp	di_ctime;
	xk_be64	di_size;
	xk_be64	di_nblocks;		/* data + bmbt blocks, both forks */
	xk_be32	di_extsize;
	union {
		struct {			/* without NREXT64 */
			xk_be32	di_nextents;
			xk_be16	di_anextents;
		};
		struct {			/* with NREXT64 */
			xk_be32	di_big_anextents;
			xk_be16	di_nrext64_pad;	/* must be 0 */
		};
	};
	uint8_t	di_forkoff;		/* attr fork offset in 8-byte units */
	uint8_t	di_aformat;		/* XK_DINODE_FMT_*, attr fork */
	xk_be32	di_dmevmask;
	xk_be16	di_dmstate;
	xk_be16	di_flags;		/* XK_DIFLAG_* */
	xk_be32	di_gen;
	xk_be32	di_next_unlinked;	/* AGI unlinked list, XK_NULLAGINO */
	/* v3 from here on */
	uint8_t	di_crc[4];		/* CRC32c, little-endian */
	xk_be64	di_changecount;
	xk_be64	di_lsn;
	xk_be64	di_flags2;		/* XK_DIFLAG2_* */
	xk_be32	di_cowextsize;
	uint8_t	di_pad2[12];
	xk_timestamp	di_crtime;
	xk_be64	di_ino;
	uint8_t	di_uuid[16];		/* sb_meta_uuid */
};

#define XK_DINODE_CRC_OFF	offsetof(struct xk_dinode, di_crc)

_Static_assert(sizeof(struct xk_legacy_timestamp) == 8, "legacy ts: size");
_Static_assert(sizeof(xk_timestamp) == 8, "xk_timestamp: size");
_Static_assert(sizeof(struct xk_dinode) == XK_DINODE_CORE_SIZE,
	       "xk_dinode: on-disk size");
_Static_assert(offsetof(struct xk_dinode, di_crc) == XK_DINODE_V2_CORE_SIZE,
	       "xk_dinode: crc offset");
_Static_assert(offsetof(struct xk_dinode, di_lsn) == 112,
	       "xk_dinode: lsn offset");
_Static_assert(offsetof(struct xk_dinode, di_big_nextents) == 24,
	       "xk_dinode: big_nextents offset");
_Static_assert(offsetof(struct xk_dinode, di_flushiter) == 30,
	       "xk_dinode: flushiter offset");
_Static_assert(offsetof(struct xk_dinode, di_atime) == 32,
	       "xk_dinode: atime offset");
_Static_assert(offsetof(struct xk_dinode, di_nextents) == 76,
	       "xk_dinode: nextents offset");
_Static_assert(offsetof(struct xk_dinode, di_big_anextents) == 76,
	       "xk_dinode: big_anextents offset");
_Static_assert(offsetof(struct xk_dinode, di_anextents) == 80,
	       "xk_dinode: anextents offset");
_Static_assert(offsetof(struct xk_dinode, di_forkoff) == 82,
	       "xk_dinode: forkoff offset");
_Static_assert(offsetof(struct xk_dinode, di_next_unlinked) == 96,
	       "xk_dinode: next_unlinked offset");
_Static_assert(offsetof(struct xk_dinode, di_flags2) == 120,
	       "xk_dinode: flags2 offset");
_Static_assert(offsetof(struct xk_dinode, di_crtime) == 144,
	       "xk_dinode: crtime offset");
_Static_assert(offsetof(struct xk_dinode, di_ino) == 152,
	       "xk_dinode: ino offset");
_Static_assert(offsetof(struct xk_dinode, di_uuid) == 160,
	       "xk_dinode: uuid offset");

/* Core size for an inode version: 176 for v3, 100 for v1/v2. */
static inline unsigned int xk_dinode_size(int version)
{
	return version >= 3 ? XK_DINODE_CORE_SIZE : XK_DINODE_V2_CORE_SIZE;
}

static inline int xk_dinode_has_bigtime(const struct xk_dinode *dip)
{
	return dip->di_version >= 3 &&
	       (xk_be64_get(dip->di_flags2) & XK_DIFLAG2_BIGTIME);
}

static inline int xk_dinode_has_nrext64(const struct xk_dinode *dip)
{
	return dip->di_version >= 3 &&
	       (xk_be64_get(dip->di_flags2) & XK_DIFLAG2_NREXT64);
}

/* A metadata inode: one of the metadata directory tree (METADIR). */
static inline int xk_dinode_is_metafile(const struct xk_dinode *dip)
{
	return dip->di_version >= 3 &&
	       (xk_be64_get(dip->di_flags2) & XK_DIFLAG2_METADATA);
}

/* The metafile type of a metadata inode (its di_onlink word). */
static inline uint16_t xk_dinode_metatype(const struct xk_dinode *dip)
{
	return xk_be16_get(dip->di_onlink);
}

static inline uint32_t xk_dinode_projid(const struct xk_dinode *dip)
{
	return ((uint32_t)xk_be16_get(dip->di_projid_hi) << 16) |
	       xk_be16_get(dip->di_projid_lo);
}

static inline void xk_dinode_set_projid(struct xk_dinode *dip, uint32_t id)
{
	xk_be16_set(&dip->di_projid_lo, (uint16_t)id);
	xk_be16_set(&dip->di_projid_hi, (uint16_t)(id >> 16));
}

/* ---- extent counters ---- */

static inline uint64_t xk_dinode_nextents(const struct xk_dinode *dip)
{
	if (xk_dinode_has_nrext64(dip))
		return xk_be64_get(dip->di_big_nextents);
	return xk_be32_get(dip->di_nextents);
}

static inline uint32_t xk_dinode_anextents(const struct xk_dinode *dip)
{
	if (xk_dinode_has_nrext64(dip))
		return xk_be32_get(dip->di_big_anextents);
	return xk_be16_get(dip->di_anextents);
}

static inline uint64_t xk_dinode_fork_nextents(const struct xk_dinode *dip,
					       int whichfork)
{
	return whichfork == XK_DATA_FORK ? xk_dinode_nextents(dip) :
					   xk_dinode_anextents(dip);
}

/*
 * Store both counters in the layout selected by di_flags2 (so set
 * NREXT64 first), zeroing the padding the verifier checks.
 */
static inline void xk_dinode_set_nextents(struct xk_dinode *dip,
					  uint64_t data, uint32_t attr)
{
	if (xk_dinode_has_nrext64(dip)) {
		xk_be64_set(&dip->di_big_nextents, data);
		xk_be32_set(&dip->di_big_anextents, attr);
		xk_be16_set(&dip->di_nrext64_pad, 0);
	} else {
		if (dip->di_version >= 3)
			xk_be64_set(&dip->di_v3_pad, 0);
		xk_be32_set(&dip->di_nextents, (uint32_t)data);
		xk_be16_set(&dip->di_anextents, (uint16_t)attr);
	}
}

static inline uint64_t xk_max_nextents(int has_nrext64, int whichfork)
{
	if (whichfork == XK_DATA_FORK)
		return has_nrext64 ? XK_MAX_EXTCNT_DATA_FORK_LARGE :
				     XK_MAX_EXTCNT_DATA_FORK_SMALL;
	return has_nrext64 ? XK_MAX_EXTCNT_ATTR_FORK_LARGE :
			     XK_MAX_EXTCNT_ATTR_FORK_SMALL;
}

/* ---- forks ---- */

/* Bytes after the core: both forks share them. */
static inline unsigned int xk_dinode_litino(unsigned int inodesize)
{
	return inodesize - XK_DINODE_CORE_SIZE;
}

/* Byte offset of the attr fork inside the literal area (0: no attr fork). */
static inline unsigned int xk_dinode_forkoff_bytes(const struct xk_dinode *dip)
{
	return (unsigned int)dip->di_forkoff << 3;
}

static inline unsigned int xk_dfork_dsize(const struct xk_dinode *dip,
					  unsigned int inodesize)
{
	return dip->di_forkoff ? xk_dinode_forkoff_bytes(dip) :
				 xk_dinode_litino(inodesize);
}

static inline unsigned int xk_dfork_asize(const struct xk_dinode *dip,
					  unsigned int inodesize)
{
	return dip->di_forkoff ? xk_dinode_litino(inodesize) -
				 xk_dinode_forkoff_bytes(dip) : 0;
}

static inline unsigned int xk_dfork_size(const struct xk_dinode *dip,
					 unsigned int inodesize, int whichfork)
{
	return whichfork == XK_DATA_FORK ? xk_dfork_dsize(dip, inodesize) :
					   xk_dfork_asize(dip, inodesize);
}

/*
 * Fork pointers.  Like strchr() these take a const inode and hand back a
 * plain pointer; callers that only read should keep it const.  The core
 * is always the v3 size here: v5 filesystems have no older inodes.
 */
static inline uint8_t *xk_dfork_dptr(const struct xk_dinode *dip)
{
	return (uint8_t *)dip + XK_DINODE_CORE_SIZE;
}

static inline uint8_t *xk_dfork_aptr(const struct xk_dinode *dip)
{
	return xk_dfork_dptr(dip) + xk_dinode_forkoff_bytes(dip);
}

static inline uint8_t *xk_dfork_ptr(const struct xk_dinode *dip,
				    int whichfork)
{
	return whichfork == XK_DATA_FORK ? xk_dfork_dptr(dip) :
					   xk_dfork_aptr(dip);
}

static inline int xk_dfork_format(const struct xk_dinode *dip, int whichfork)
{
	return whichfork == XK_DATA_FORK ? dip->di_format : dip->di_aformat;
}

/*
 * Device inodes keep a 32-bit device number at the start of the data
 * fork: major in the top 14 bits, minor in the low 18.
 */
#define XK_DEV_MINORBITS	18
#define XK_DEV_MINORMASK	0x3ffffu

static inline uint32_t xk_dinode_get_rdev(const struct xk_dinode *dip)
{
	return xk_get_be32(xk_dfork_dptr(dip));
}

static inline void xk_dinode_put_rdev(struct xk_dinode *dip, uint32_t rdev)
{
	xk_put_be32(xk_dfork_dptr(dip), rdev);
}

static inline uint32_t xk_dev_major(uint32_t rdev)
{
	return rdev >> XK_DEV_MINORBITS;
}

static inline uint32_t xk_dev_minor(uint32_t rdev)
{
	return rdev & XK_DEV_MINORMASK;
}

static inline uint32_t xk_mkdev(uint32_t major, uint32_t minor)
{
	return (major << XK_DEV_MINORBITS) | (minor & XK_DEV_MINORMASK);
}

/* ---- timestamps ---- */

static inline struct xk_timespec xk_timestamp_decode(xk_timestamp ts,
						     int bigtime)
{
	struct xk_timespec tv;

	if (bigtime) {
		uint64_t ns = xk_be64_get(ts);

		tv.tv_sec = (int64_t)(ns / XK_NSEC_PER_SEC) -
			    XK_BIGTIME_EPOCH_OFFSET;
		tv.tv_nsec = (uint32_t)(ns % XK_NSEC_PER_SEC);
	} else {
		tv.tv_sec = (int32_t)xk_get_be32(&ts.b[0]);
		tv.tv_nsec = xk_get_be32(&ts.b[4]);
	}
	return tv;
}

/* Encode, clamping the seconds to what the encoding can hold. */
static inline xk_timestamp xk_timestamp_encode(struct xk_timespec tv,
					       int bigtime)
{
	xk_timestamp ts;
	int64_t sec = tv.tv_sec;

	if (bigtime) {
		int64_t lo = XK_BIGTIME_TIME_MIN - XK_BIGTIME_EPOCH_OFFSET;
		int64_t hi = XK_BIGTIME_TIME_MAX - XK_BIGTIME_EPOCH_OFFSET;

		if (sec < lo)
			sec = lo;
		if (sec > hi)
			sec = hi;
		xk_be64_set(&ts, (uint64_t)(sec + XK_BIGTIME_EPOCH_OFFSET) *
				 XK_NSEC_PER_SEC + tv.tv_nsec);
	} else {
		if (sec < XK_LEGACY_TIME_MIN)
			sec = XK_LEGACY_TIME_MIN;
		if (sec > XK_LEGACY_TIME_MAX)
			sec = XK_LEGACY_TIME_MAX;
		xk_put_be32(&ts.b[0], (uint32_t)(int32_t)sec);
		xk_put_be32(&ts.b[4], tv.tv_nsec);
	}
	return ts;
}

/* Decode one of the inode's own timestamps using its BIGTIME flag. */
static inline struct xk_timespec xk_dinode_time(const struct xk_dinode *dip,
						xk_timestamp ts)
{
	return xk_timestamp_decode(ts, xk_dinode_has_bigtime(dip));
}

/* ---- bmap btree: extent records, keys, pointers, in-inode root ---- */

/*
 * An extent record is two big-endian words, 128 bits read as:
 *   bit 127      extent flag (1 = unwritten)
 *   bits 73-126  startoff   (54 bits, file block)
 *   bits 21-72   startblock (52 bits, filesystem block)
 *   bits 0-20    blockcount (21 bits)
 */
#define XK_BMBT_EXNTFLAG_BITLEN		1
#define XK_BMBT_STARTOFF_BITLEN		54
#define XK_BMBT_STARTBLOCK_BITLEN	52
#define XK_BMBT_BLOCKCOUNT_BITLEN	21

#define XK_BMBT_STARTOFF_MASK	((1ULL << XK_BMBT_STARTOFF_BITLEN) - 1)
#define XK_BMBT_STARTBLOCK_MASK	((1ULL << XK_BMBT_STARTBLOCK_BITLEN) - 1)
#define XK_BMBT_BLOCKCOUNT_MASK	((1ULL << XK_BMBT_BLOCKCOUNT_BITLEN) - 1)

#define XK_MAX_BMBT_EXTLEN	XK_BMBT_BLOCKCOUNT_MASK
/* Largest file offset (in blocks) an extent may reach. */
#define XK_MAX_FILEOFF		(XK_BMBT_STARTOFF_MASK + \
				 XK_BMBT_BLOCKCOUNT_MASK)

struct xk_bmbt_rec {
	xk_be64	l0;
	xk_be64	l1;
};

/* A record decoded to host order. */
struct xk_bmbt_irec {
	uint64_t	startoff;
	uint64_t	startblock;
	uint64_t	blockcount;
	int		unwritten;
};

struct xk_bmbt_key {
	xk_be64	br_startoff;
};

/* Node pointer: a filesystem block number. */
typedef xk_be64 xk_bmbt_ptr;

/* Root of a bmap btree held in an inode fork (level is always >= 1). */
struct xk_bmdr_block {
	xk_be16	bb_level;
	xk_be16	bb_numrecs;
};

_Static_assert(sizeof(struct xk_bmbt_rec) == 16, "xk_bmbt_rec: size");
_Static_assert(sizeof(struct xk_bmbt_key) == 8, "xk_bmbt_key: size");
_Static_assert(sizeof(xk_bmbt_ptr) == 8, "xk_bmbt_ptr: size");
_Static_assert(sizeof(struct xk_bmdr_block) == 4, "xk_bmdr_block: size");

static inline void xk_bmbt_rec_unpack(const struct xk_bmbt_rec *rec,
				      struct xk_bmbt_irec *irec)
{
	uint64_t l0 = xk_be64_get(rec->l0);
	uint64_t l1 = xk_be64_get(rec->l1);

	irec->unwritten = (int)(l0 >> 63);
	irec->startoff = (l0 >> 9) & XK_BMBT_STARTOFF_MASK;
	irec->startblock = ((l0 & 0x1ffULL) << 43) | (l1 >> 21);
	irec->blockcount = l1 & XK_BMBT_BLOCKCOUNT_MASK;
}

/* True if every field fits its on-disk width. */
static inline int xk_bmbt_irec_fits(const struct xk_bmbt_irec *irec)
{
	return irec->startoff <= XK_BMBT_STARTOFF_MASK &&
	       irec->startblock <= XK_BMBT_STARTBLOCK_MASK &&
	       irec->blockcount <= XK_BMBT_BLOCKCOUNT_MASK;
}

/* Pack; fields wider than their slot are truncated (check _fits first). */
static inline void xk_bmbt_rec_pack(struct xk_bmbt_rec *rec,
				    const struct xk_bmbt_irec *irec)
{
	uint64_t off = irec->startoff & XK_BMBT_STARTOFF_MASK;
	uint64_t blk = irec->startblock & XK_BMBT_STARTBLOCK_MASK;
	uint64_t len = irec->blockcount & XK_BMBT_BLOCKCOUNT_MASK;

	xk_be64_set(&rec->l0, ((uint64_t)(irec->unwritten != 0) << 63) |
			      (off << 9) | (blk >> 43));
	xk_be64_set(&rec->l1, (blk << 21) | len);
}

/* Entries a bmbt block of blocksize bytes holds (v5 long-form header). */
static inline unsigned int xk_bmbt_maxrecs(unsigned int blocksize, int leaf)
{
	unsigned int space = blocksize - sizeof(struct xk_btree_lblock);

	if (leaf)
		return space / sizeof(struct xk_bmbt_rec);
	return space / (sizeof(struct xk_bmbt_key) + sizeof(xk_bmbt_ptr));
}

/*
 * In-inode root.  The fork holds the 4-byte header, then as many keys as
 * the fork could hold (maxrecs, computed from the fork size, not from
 * bb_numrecs), then the same number of pointer slots.  Indices here are
 * 0-based.
 */
static inline unsigned int xk_bmdr_maxrecs(unsigned int forksize, int leaf)
{
	unsigned int space = forksize - sizeof(struct xk_bmdr_block);

	if (leaf)
		return space / sizeof(struct xk_bmbt_rec);
	return space / (sizeof(struct xk_bmbt_key) + sizeof(xk_bmbt_ptr));
}

/* Bytes a root with nrecs keys and pointers needs. */
static inline unsigned int xk_bmdr_space_calc(unsigned int nrecs)
{
	return sizeof(struct xk_bmdr_block) +
	       nrecs * (sizeof(struct xk_bmbt_key) + sizeof(xk_bmbt_ptr));
}

/*
 * The attr fork offset (in 8-byte units) the kernel gives a new inode
 * that starts with an attr fork (parent pointers): a bmbt root of 2
 * pointers' room for attributes on 256-byte inodes, else a data fork of
 * 12 pointers' room.
 */
static inline unsigned int xk_dinode_default_forkoff(unsigned int inodesize)
{
	return (inodesize == 256 ?
		xk_dinode_litino(inodesize) - xk_bmdr_space_calc(2) :
		xk_bmdr_space_calc(12)) >> 3;
}

static inline struct xk_bmbt_key *xk_bmdr_key(const struct xk_bmdr_block *bb,
					      unsigned int i)
{
	return (struct xk_bmbt_key *)((uint8_t *)bb +
				      sizeof(struct xk_bmdr_block) +
				      i * sizeof(struct xk_bmbt_key));
}

static inline xk_bmbt_ptr *xk_bmdr_ptr(const struct xk_bmdr_block *bb,
				       unsigned int forksize, unsigned int i)
{
	unsigned int maxrecs = xk_bmdr_maxrecs(forksize, 0);

	return (xk_bmbt_ptr *)((uint8_t *)bb + sizeof(struct xk_bmdr_block) +
			       maxrecs * sizeof(struct xk_bmbt_key) +
			       i * sizeof(xk_bmbt_ptr));
}

#endif /* XFSKIT_FORMAT_DINODE_H */
