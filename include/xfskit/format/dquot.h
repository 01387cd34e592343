/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Quota records.  Each quota inode (user, group, project) is a flat array
 * of 136-byte struct xk_dqblk records, one per id, packed into filesystem
 * blocks (blocksize / 136 per block, the rest of each block unused): id N
 * lives in file block N / per_block, slot N % per_block.  The record for
 * id 0 holds no usage of its own that matters for limits; its timer
 * fields store the default grace periods for the whole quota type.
 *
 * Expiry timers are 32-bit.  Without BIGTIME they are Unix seconds; with
 * XK_DQTYPE_BIGTIME in d_type they count 4-second units, which stretches
 * the range to match bigtime inode timestamps.  Grace periods (in id 0)
 * are plain seconds either way.
 */
#ifndef XFSKIT_FORMAT_DQUOT_H
#define XFSKIT_FORMAT_DQUOT_H

#include <stddef.h>
#include <stdint.h>
#include <xfskit/endian.h>

#define XK_DQUOT_MAGIC		0x4451		/* "DQ" */
#define XK_DQUOT_VERSION	0x01

/* d_type: which quota this record belongs to, plus the BIGTIME flag. */
#define XK_DQTYPE_USER		(1u << 0)
#define XK_DQTYPE_PROJ		(1u << 1)
#define XK_DQTYPE_GROUP		(1u << 2)
#define XK_DQTYPE_BIGTIME	(1u << 7)
#define XK_DQTYPE_REC_MASK	(XK_DQTYPE_USER | XK_DQTYPE_PROJ | \
				 XK_DQTYPE_GROUP)
#define XK_DQTYPE_ANY		(XK_DQTYPE_REC_MASK | XK_DQTYPE_BIGTIME)

/* Expiry range (0 means "no timer running"). */
#define XK_DQ_LEGACY_EXPIRY_MIN	((int64_t)1)
#define XK_DQ_LEGACY_EXPIRY_MAX	((int64_t)UINT32_MAX)
#define XK_DQ_BIGTIME_EXPIRY_MIN	((int64_t)1)	/* on-disk units */
#define XK_DQ_BIGTIME_EXPIRY_MAX	((int64_t)4074815106u)
#define XK_DQ_BIGTIME_SHIFT	2
#define XK_DQ_GRACE_MIN		((int64_t)0)
#define XK_DQ_GRACE_MAX		((int64_t)UINT32_MAX)

/* Quota records are allocated one filesystem block at a time. */
#define XK_DQUOT_CLUSTER_SIZE_FSB	1

struct xk_disk_dquot {
	xk_be16	d_magic;
	uint8_t	d_version;
	uint8_t	d_type;			/* XK_DQTYPE_* (was d_flags) */
	xk_be32	d_id;
	xk_be64	d_blk_hardlimit;
	xk_be64	d_blk_softlimit;
	xk_be64	d_ino_hardlimit;
	xk_be64	d_ino_softlimit;
	xk_be64	d_bcount;
	xk_be64	d_icount;
	xk_be32	d_itimer;		/* inode limit expiry */
	xk_be32	d_btimer;		/* block limit expiry */
	xk_be16	d_iwarns;
	xk_be16	d_bwarns;
	xk_be32	d_pad0;
	xk_be64	d_rtb_hardlimit;
	xk_be64	d_rtb_softlimit;
	xk_be64	d_rtbcount;
	xk_be32	d_rtbtimer;		/* realtime block limit expiry */
	xk_be16	d_rtbwarns;
	xk_be16	d_pad;
};

struct xk_dqblk {
	struct xk_disk_dquot dd_diskdq;
	uint8_t	dd_fill[4];
	uint8_t	dd_crc[4];		/* CRC32c, little-endian */
	xk_be64	dd_lsn;
	uint8_t	dd_uuid[16];		/* sb_meta_uuid */
};

#define XK_DQUOT_CRC_OFF	offsetof(struct xk_dqblk, dd_crc)

_Static_assert(sizeof(struct xk_disk_dquot) == 104,
	       "xk_disk_dquot: on-disk size");
_Static_assert(offsetof(struct xk_disk_dquot, d_itimer) == 56,
	       "xk_disk_dquot: itimer offset");
_Static_assert(offsetof(struct xk_disk_dquot, d_rtb_hardlimit) == 72,
	       "xk_disk_dquot: rtb_hardlimit offset");
_Static_assert(sizeof(struct xk_dqblk) == 136, "xk_dqblk: on-disk size");
_Static_assert(offsetof(struct xk_dqblk, dd_crc) == 108,
	       "xk_dqblk: crc offset");
_Static_assert(offsetof(struct xk_dqblk, dd_lsn) == 112,
	       "xk_dqblk: lsn offset");

static inline unsigned int xk_dqblk_per_block(unsigned int blocksize)
{
	return blocksize / sizeof(struct xk_dqblk);
}

/* Unix-seconds expiry of an on-disk timer value (0 stays 0). */
static inline int64_t xk_dquot_timer_decode(uint32_t ondisk, int bigtime)
{
	if (bigtime)
		return (int64_t)ondisk << XK_DQ_BIGTIME_SHIFT;
	return ondisk;
}

/*
 * On-disk timer value for a Unix-seconds expiry: bigtime rounds up to
 * the next 4-second unit; both encodings clamp to their range.  A
 * non-positive expiry means "no timer" and encodes as 0.
 */
static inline uint32_t xk_dquot_timer_encode(int64_t unix_sec, int bigtime)
{
	if (unix_sec <= 0)
		return 0;
	if (bigtime) {
		int64_t v = (unix_sec + (1 << XK_DQ_BIGTIME_SHIFT) - 1) >>
			    XK_DQ_BIGTIME_SHIFT;

		if (v > XK_DQ_BIGTIME_EXPIRY_MAX)
			v = XK_DQ_BIGTIME_EXPIRY_MAX;
		return (uint32_t)v;
	}
	if (unix_sec > XK_DQ_LEGACY_EXPIRY_MAX)
		return (uint32_t)XK_DQ_LEGACY_EXPIRY_MAX;
	return (uint32_t)unix_sec;
}

#endif /* XFSKIT_FORMAT_DQUOT_H */
