/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The filesystem handle.  Opening an image reads and validates the
 * primary superblock and derives the geometry every other module uses:
 * AG layout, unit conversions, inode chunk and cluster geometry, btree
 * record limits and heights.  Everything libfs knows about one
 * filesystem hangs off this handle; there is no global state.
 */
#ifndef XFSKIT_MOUNT_H
#define XFSKIT_MOUNT_H

#include <xfskit/errors.h>

#include <stdint.h>

#include <xfskit/buf.h>
#include <xfskit/dev.h>
#include <xfskit/format/sb.h>

/* Btree types, indexing xk_geom's per-tree arrays and xk_btree_ops. */
enum xk_btnum {
	XK_BT_BNO,
	XK_BT_CNT,
	XK_BT_INO,
	XK_BT_FINO,
	XK_BT_RMAP,
	XK_BT_REFC,
	XK_BT_BMAP,
	XK_BT_RTRMAP,	/* a realtime group's rmap btree ('MAPR') */
	XK_BT_RTREFC,	/* a realtime group's refcount btree ('RCNT') */
	XK_BT_NR
};

struct xk_geom {
	uint32_t	blocksize;
	unsigned int	blocklog;
	unsigned int	blkbb_log;	/* blocklog - 9 */
	uint32_t	sectsize;
	unsigned int	sectlog;
	uint32_t	agblocks;
	uint32_t	agcount;
	unsigned int	agblklog;
	uint64_t	dblocks;
	uint32_t	inodesize;
	unsigned int	inodelog;
	uint32_t	inopblock;
	unsigned int	inopblog;
	unsigned int	agino_log;	/* agblklog + inopblog */
	/* inode chunks and clusters */
	uint32_t	ialloc_inos;	/* inodes per chunk (64 or more) */
	uint32_t	ialloc_blks;	/* blocks per chunk */
	uint32_t	cluster_blks;	/* blocks per inode cluster buffer */
	uint32_t	cluster_inos;
	uint32_t	cluster_align;	/* blocks */
	uint32_t	inoalign_mask;	/* 0 when not aligned */
	uint32_t	spino_align;	/* sparse chunk alignment, blocks */
	uint32_t	ialloc_min_blks;
	/* directories */
	uint32_t	dirblksize;
	unsigned int	dirblklog;
	/* log */
	uint64_t	logstart;	/* fsblock */
	uint32_t	logblocks;
	uint64_t	log_daddr;
	uint32_t	logsectsize;
	/* btree shape, [tree][0]=leaf, [1]=node */
	uint32_t	maxrecs[XK_BT_NR][2];
	unsigned int	maxlevels[XK_BT_NR];
	uint32_t	agfl_size;
	/* features */
	int		has_finobt, has_rmapbt, has_reflink, has_inobtcnt;
	int		has_sparse, has_ftype, has_bigtime, has_nrext64;
	int		has_meta_uuid, has_exchrange, has_parent;
	int		has_metadir;	/* the metadata directory tree */
	int		has_quota;
};

#define XK_MOUNT_RDONLY	(1u << 0)
#define XK_MOUNT_DIRECT	(1u << 1)	/* O_DIRECT I/O (dev.h XK_DEV_DIRECT) */

struct xk_bcache;
struct xk_needsrepair;

struct xk_mount {
	struct xk_dev	*dev;
	int		owns_dev;
	/*
	 * The external log's device (superblock logstart 0, mkfs.xfs -l
	 * logdev=), owned by the handle; NULL for an internal log, or when
	 * an external log's device was not given (the log is then neither
	 * read nor written: xk_log_open() says so).
	 */
	struct xk_dev	*logdev;
	/*
	 * The realtime device (sb.rblocks != 0, mkfs.xfs -r rtdev=), owned
	 * by the handle; NULL when not given.  Never written: it holds only
	 * file data.
	 */
	struct xk_dev	*rtdev;
	unsigned int	flags;
	struct xk_sb	sb;
	struct xk_geom	g;
	/* UUID that metadata blocks carry: meta_uuid when set, else uuid. */
	uint8_t		meta_uuid[16];
	struct xk_bcache *cache;
	uint64_t	write_lsn;	/* stamped on writes when non-zero */
	/*
	 * The newest LSN of the metadata that verified (blocks and inodes,
	 * xk_mount_note_lsn): a log whose head is not past it must be
	 * formatted in a later cycle (repair does, as xfs_repair).
	 */
	uint64_t	seen_lsn;
	/* Armed by xk_needsrepair_arm (needsrepair.h), else NULL. */
	struct xk_needsrepair *needsrepair;
};

/*
 * Check a decoded superblock for values the rest of libfs cannot live
 * with.  devsize may be 0 to skip the device-size rule.  Returns 0,
 * XK_ECORRUPT, XK_ENOTXFS or XK_EUNSUPP with *f filled.
 */
int xk_sb_check(const struct xk_sb *sb, uint64_t devsize, struct xk_fail *f);

/* Open an image: read the primary superblock, check it, derive geometry. */
XK_MUST_CHECK int xk_mount_open(const char *path, unsigned int flags,
				struct xk_mount **mpp, struct xk_fail *f);
/* Build a handle from a superblock in memory (mkfs, or a secondary). */
XK_MUST_CHECK int xk_mount_from_sb(struct xk_dev *dev, const struct xk_sb *sb,
				   unsigned int flags, struct xk_mount **mpp,
				   struct xk_fail *f);
/* Derive the geometry again after mp->sb changed (a feature upgrade). */
void xk_mount_rederive(struct xk_mount *mp);
/*
 * Attach the device holding this filesystem's external log, opened
 * read-only when the handle is.  Nothing is written.  Rules, each an
 * error with *f naming it (see logdev.c):
 *  1. the filesystem's log is external (sb.logstart 0): -EINVAL;
 *  2. the device is not the data device: -EINVAL;
 *  3. it holds the whole log (logblocks): XK_ETRUNC;
 *  4. it is this filesystem's log: the log record headers found in its
 *     first MiB carry the superblock's UUID, none another one, and at
 *     least one is there: -EXDEV (a zeroed or never-written device
 *     shows no evidence either way and is refused too).
 * Returns 0 or a negative errno; the handle is unchanged on error.
 */
XK_MUST_CHECK int xk_mount_open_logdev(struct xk_mount *mp, const char *path,
				       struct xk_fail *f);
/*
 * Hand an open device to the handle as its external log's, without the
 * identity check (mkfs, which is about to write the log).
 */
void xk_mount_set_logdev(struct xk_mount *mp, struct xk_dev *logdev);
/*
 * Attach the realtime device (see rtdev.c), opened read-only when the
 * handle is; nothing is written.  Errors, *f naming them: the
 * filesystem has no realtime section, or the device is the data or log
 * device (-EINVAL); it is smaller than sb.rblocks blocks (XK_ETRUNC).
 * The handle is unchanged on error.
 */
XK_MUST_CHECK int xk_mount_open_rtdev(struct xk_mount *mp, const char *path,
				      struct xk_fail *f);
/* Whether the log is on a device of its own (sb.logstart 0). */
static inline int xk_log_is_external(const struct xk_mount *mp)
{
	return mp->sb.logstart == 0;
}
/*
 * The device the log is read and written through: the external log's,
 * else the data device.  NULL for an external log whose device was not
 * given.
 */
static inline struct xk_dev *xk_mount_log_dev(const struct xk_mount *mp)
{
	return xk_log_is_external(mp) ? mp->logdev : mp->dev;
}

/* Writes begun on the handle's devices, the log's included. */
static inline uint64_t xk_mount_writes(const struct xk_mount *mp)
{
	return mp->dev->writes + (mp->logdev ? mp->logdev->writes : 0) +
	       (mp->rtdev ? mp->rtdev->writes : 0);
}

/* Flush dirty buffers (unless read-only) and free everything. */
XK_MUST_CHECK int xk_mount_close(struct xk_mount *mp);
/*
 * Free everything without writing: dirty buffers are dropped.  For a
 * read-only handle, or a run that stops on an error before its writes.
 */
void xk_mount_discard(struct xk_mount *mp);
/*
 * Set the cache's byte budget (default 256 MiB); returns the one it
 * replaces.
 */
uint64_t xk_mount_set_cache_limit(struct xk_mount *mp, uint64_t bytes);

/*
 * The first log cycle no LSN may reach: a log is formatted three cycles
 * past the newest metadata LSN, and a cycle is signed (xfs_lsn_t), so an
 * LSN at or past this one can only be a damaged field.
 */
#define XK_LSN_CYCLE_LIMIT	0x7ffffffcu

static inline int xk_lsn_plausible(uint64_t lsn)
{
	return (lsn >> 32) < XK_LSN_CYCLE_LIMIT;
}

/*
 * seen_lsn = max(seen_lsn, lsn), from any thread.  An implausible LSN
 * (all-ones, "none", among them) is never the newest: a damaged field
 * must not push the log's cycle past what a cycle can hold.
 */
static inline void xk_mount_note_lsn(struct xk_mount *mp, uint64_t lsn)
{
	uint64_t cur = __atomic_load_n(&mp->seen_lsn, __ATOMIC_RELAXED);

	while (xk_lsn_plausible(lsn) && lsn > cur &&
	       !__atomic_compare_exchange_n(&mp->seen_lsn, &cur, lsn, 1,
					    __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		;
}

/* Unit conversions. */
static inline uint64_t xk_agb_to_fsb(const struct xk_mount *mp,
				     uint32_t agno, uint32_t agbno)
{
	return ((uint64_t)agno << mp->g.agblklog) | agbno;
}

static inline uint32_t xk_fsb_to_agno(const struct xk_mount *mp, uint64_t fsb)
{
	return (uint32_t)(fsb >> mp->g.agblklog);
}

static inline uint32_t xk_fsb_to_agbno(const struct xk_mount *mp,
				       uint64_t fsb)
{
	return (uint32_t)(fsb & ((1ULL << mp->g.agblklog) - 1));
}

static inline uint64_t xk_agb_to_daddr(const struct xk_mount *mp,
				       uint32_t agno, uint32_t agbno)
{
	return ((uint64_t)agno * mp->g.agblocks + agbno) << mp->g.blkbb_log;
}

static inline uint64_t xk_fsb_to_daddr(const struct xk_mount *mp, uint64_t fsb)
{
	return xk_agb_to_daddr(mp, xk_fsb_to_agno(mp, fsb),
			       xk_fsb_to_agbno(mp, fsb));
}

/* Sector-sized AG header (sector index XK_*_SECTOR) as a daddr. */
static inline uint64_t xk_ag_hdr_daddr(const struct xk_mount *mp,
				       uint32_t agno, unsigned int sector)
{
	return xk_agb_to_daddr(mp, agno, 0) +
	       ((uint64_t)sector << (mp->g.sectlog - 9));
}

static inline uint32_t xk_ino_to_agno(const struct xk_mount *mp, uint64_t ino)
{
	return (uint32_t)(ino >> mp->g.agino_log);
}

static inline uint32_t xk_ino_to_agino(const struct xk_mount *mp,
				       uint64_t ino)
{
	return (uint32_t)(ino & ((1ULL << mp->g.agino_log) - 1));
}

static inline uint64_t xk_agino_to_ino(const struct xk_mount *mp,
				       uint32_t agno, uint32_t agino)
{
	return ((uint64_t)agno << mp->g.agino_log) | agino;
}

static inline uint32_t xk_agino_to_agbno(const struct xk_mount *mp,
					 uint32_t agino)
{
	return agino >> mp->g.inopblog;
}

/* Blocks in AG agno (the last AG may be short). */
uint32_t xk_ag_blocks(const struct xk_mount *mp, uint32_t agno);
/* Whether an inode number names a slot that can exist. */
int xk_ino_valid(const struct xk_mount *mp, uint64_t ino);
/* Whether agbno..agbno+len-1 lies inside AG agno. */
/* agino lies in the AG's inode range (first to last whole cluster). */
int xk_agino_in_range(const struct xk_mount *mp, uint32_t agno,
		      uint32_t agino);
int xk_agbext_valid(const struct xk_mount *mp, uint32_t agno, uint32_t agbno,
		    uint64_t len);
/*
 * Whether fsb..fsb+len-1 lies inside one AG of the filesystem (bits of
 * fsb above the 32-bit AG number ignored, as the kernel ignores them).
 */
int xk_fsbext_valid(const struct xk_mount *mp, uint64_t fsb, uint64_t len);
/*
 * Whether file blocks off..off+len-1 can exist: len > 0, no wrap, and
 * the last byte below 2^63 (the kernel's largest file offset).
 */
int xk_fileext_valid(const struct xk_mount *mp, uint64_t off, uint64_t len);

#endif /* XFSKIT_MOUNT_H */
