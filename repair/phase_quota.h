/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The quota phase: quota inodes, dquot blocks, and every dquot's usage
 * counters against the usage the inodes add up to (phase_quota.c); and
 * the repair of what it found (quotafix.c).  The check leaves its state
 * (usage tables, quota file maps) in rc->scan.quota and its plans in
 * rc->plan (QFIX_*, plan.h) for the fix.
 */
#ifndef XFSKIT_REPAIR_PHASE_QUOTA_H
#define XFSKIT_REPAIR_PHASE_QUOTA_H

#include "repair.h"

#include <xfskit/format/dquot.h>
#include <xfskit/format/sb.h>

#define NQTYPES		PLAN_QTYPES

/* One id's usage as the inodes add it up. */
struct qrec {
	uint32_t	id;
	uint8_t		used;
	uint8_t		ondisk;		/* seen in a dquot */
	uint64_t	bcount, rtbcount, icount;
};

/* Open addressing, at most half full; cap is a power of two. */
struct qtab {
	struct qrec	*v;
	size_t		n, cap;
};

/* The file blocks of a quota inode whose records could not be trusted. */
struct badblocks {
	XK_VEC_OF(uint64_t);
};


struct qtype {
	const char	*name;		/* "user quota" ... */
	uint8_t		dqtype;		/* XK_DQTYPE_* */
	uint16_t	chkd;		/* its sb_qflags CHKD bit */
	uint64_t	ino;
	int		usable;		/* inode and fork are sound */
	int		counting;	/* usage is compared */
	unsigned int	type;		/* its index: rc->plan.quota_fix[type] */
	uint64_t	dq_like;	/* records with magic and type right */
	struct fork_map	map;
	struct badblocks bad;
	struct qtab	tab;
	char		lost_why[96];	/* why QFIX_LOST was planned */
};

/* The sb_qflags bits a v5 filesystem may carry (no OQUOTA bits). */
#define QFLAGS_KNOWN \
	(XK_UQUOTA_ACCT | XK_UQUOTA_ENFD | XK_UQUOTA_CHKD | \
	 XK_GQUOTA_ACCT | XK_GQUOTA_ENFD | XK_GQUOTA_CHKD | \
	 XK_PQUOTA_ACCT | XK_PQUOTA_ENFD | XK_PQUOTA_CHKD)

/* What the check hands to the fix (rc->scan.quota). */
struct quota_state {
	struct qtype	qt[NQTYPES];
};

/*
 * Run after phase_inodes (it needs rc->scan.inodes: every inode in use).
 * Findings go through fix_problem; returns 0, or a negative errno when
 * the phase could not run at all.  In repair, the plans and the usage
 * counted stay in rc->scan.quota.
 */
XK_MUST_CHECK int phase_quota(struct repair_ctx *rc);

/* The usage of id, or NULL when absent (and !add) or out of memory. */
struct qrec *quota_tab_get(struct qtab *t, uint32_t id, int add);
/*
 * The first rule a record breaks (see phase_quota.c), as a short check
 * name with a sentence in why; NULL when the record is sound.
 */
const char *quota_record_problem(struct xk_mount *mp, const struct qtype *qt,
				 const struct xk_dqblk *d, uint32_t id,
				 char *why, size_t whylen);

/*
 * quotafix.c: apply the plans in rc->scan.quota (repair only; called between
 * check passes when no inode fix is pending, since those change the
 * usage) and count what was written in *applied.
 */
XK_MUST_CHECK int quota_apply(struct repair_ctx *rc,
				unsigned long *applied);
/*
 * The superblock forgets the quota inodes planned as lost (QFIX_LOST), at
 * once: called before the pass's inode fixes, which may free them, so
 * that it never names a freed inode.  Counts the write in *applied.
 */
XK_MUST_CHECK int quota_forget_lost(struct repair_ctx *rc,
				    unsigned long *applied);
/* Drop rc->scan.quota (plans not applied are made again by the next pass). */
void quota_free(struct repair_ctx *rc);

#endif /* XFSKIT_REPAIR_PHASE_QUOTA_H */
