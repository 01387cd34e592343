/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The repair plan: what the check decided to fix, recorded and nothing
 * else.  The checkers (the phases) record into it through the plan_*
 * functions below, only after fix_problem allowed a fix (never under
 * -n); the appliers (fix.c, dirfix.c, lostfound.c, rebuild*.c,
 * quotafix.c) read it once the check pass is over and write.  plan.c
 * only records: it neither reads the filesystem nor writes it, so
 * checkers and appliers meet here and never call each other
 * (tests/scripts/repair_layers.sh holds them to that).
 *
 * A recorder that cannot record (no memory) records an operational error
 * (repair_error): a plan left out would make a partial repair.
 */
#ifndef XFSKIT_REPAIR_PLAN_H
#define XFSKIT_REPAIR_PLAN_H

#include <stddef.h>
#include <stdint.h>

#include <xfskit/build.h>
#include <xfskit/vec.h>

struct repair_ctx;
struct inode_info;
struct xk_mount;

/*
 * A planned inode fix (repair only), applied between check passes.
 * Several plans for one inode are merged when applied.
 */
#define IFIX_CORE	(1u << 0)	/* rewrite the salvaged core */
#define IFIX_CLEAR	(1u << 1)	/* free the inode */
#define IFIX_NLINK	(1u << 2)	/* set di_nlink to val */
#define IFIX_NBLOCKS	(1u << 3)	/* set di_nblocks to val */
#define IFIX_SF_DROP	(1u << 4)	/* short-form dir: drop entry val */
#define IFIX_SF_PARENT	(1u << 5)	/* short-form dir: ".." = val */
#define IFIX_NOATTR	(1u << 6)	/* remove the attr fork */
#define IFIX_TRIM	(1u << 7)	/* drop invalid data fork extents */
#define IFIX_RMAP_FORK	(1u << 8)	/* rebuild the data fork from rmap */
#define IFIX_DOTDOT	(1u << 9)	/* block-form dir: ".." = val */
#define IFIX_RMAP_AFORK	(1u << 10)	/* rebuild the attr fork from rmap */
#define IFIX_FLAGS	(1u << 11)	/* set di_flags to val */
#define IFIX_PAD	(1u << 12)	/* zero the extent counters' padding */
#define IFIX_NSEC	(1u << 13)	/* zero out-of-range nanoseconds */
#define IFIX_NEXTENTS	(1u << 14)	/* set the data extent counter */
#define IFIX_ANEXTENTS	(1u << 15)	/* set the attr extent counter */
#define IFIX_UNLINKED	(1u << 16)	/* null di_next_unlinked */
#define IFIX_ATRIM	(1u << 17)	/* drop invalid attr fork extents */
#define IFIX_WRITTEN	(1u << 18)	/* clear in-inode unwritten flags */
#define IFIX_SF_FTYPE	(1u << 19)	/* short-form dir: file types */
#define IFIX_NEWROOT	(1u << 20)	/* a new, empty root directory */
#define IFIX_ATTR_USED	(1u << 21)	/* attr leaf at daddr val: usedbytes */
#define IFIX_NEWRTINO	(1u << 22)	/* an empty realtime bitmap/summary */
#define IFIX_DA_HASH	(1u << 23)	/* attr node hashes (da_hashes) */
#define IFIX_DIR_SIZE	(1u << 24)	/* directory: di_size = val */
#define IFIX_SCAN_FORK	(1u << 25)	/* data fork from the scan's bmbt */
#define IFIX_NEWMETAROOT (1u << 26)	/* a new, empty metadata tree root */
#define IFIX_AFORMAT	(1u << 27)	/* no attr fork: format extents */
#define IFIX_SCAN_AFORK	(1u << 28)	/* attr fork from the scan's bmbt */
#define IFIX_FLAGS2	(1u << 29)	/* set di_flags2 to val */

struct ifix {
	uint64_t	ino;
	uint32_t	what;		/* one IFIX_* bit */
	uint64_t	val;
};

/*
 * Why an inode is cleared or its xattrs dropped (IFIX_CLEAR, IFIX_NOATTR):
 * the finding that decided it, which the repair's action names.
 */
#define PLAN_WHY_MAX	240
struct ifix_why {
	uint64_t	ino;
	uint32_t	what;
	char		why[PLAN_WHY_MAX];
};

/* A vector (xk_vec) of inode fixes: v[0..n-1]. */
struct ifixes {
	XK_VEC_OF(struct ifix);
};

/* An inode no entry names, to reconnect under /lost+found. */
struct orphan {
	uint64_t	ino;
	uint16_t	mode;
	uint8_t		sfdir;
	uint32_t	suffix;		/* name "ino.suffix" when not 0 */
};

/*
 * /lost+found written by the directory rewrite (lostfound.c, its way 2):
 * planned by lostfound.c before anything is written, read by dirfix.c.
 */
#define ORPHAN_NAME_MAX	32	/* a decimal inode number, ".N", NUL */
struct lf_plan {
	uint64_t		lf;
	uint64_t		root;
	int			create;	/* lf is a new inode */
	struct xk_bld_dirent	*ents;	/* one per orphan */
	char			(*names)[ORPHAN_NAME_MAX];
	size_t			n;
	struct orphan		*dirs;	/* the orphan directories */
	size_t			ndirs;
	struct xk_bld_dirent	lfent;	/* the root's new entry */
};

/*
 * A parent pointer an inode is to carry (the PARENT feature): the name
 * and directory of an entry naming it.  pptrfix.c rewrites the inode's
 * parent pointers to exactly the set planned for it.
 */
struct pptr_want {
	uint64_t	child;
	uint64_t	parent;
	uint64_t	name;		/* offset in plan.pptr_names */
	uint32_t	gen;		/* the directory's generation */
	uint8_t		namelen;
};

/*
 * An attr fork's node entry whose hash is not its subtree's highest:
 * set to hash (xfs_repair corrects it too, keeping the xattrs).
 */
struct da_hash_fix {
	uint64_t	ino;
	uint64_t	daddr;		/* the node block */
	uint32_t	entry;
	uint32_t	hash;
};

/* Repair plans for one quota type (rc->plan.quota_fix[type]). */
#define PLAN_QTYPES	3	/* user, group, project */
#define QFIX_RECORDS	(1u << 0)	/* rewrite bad records, counters */
#define QFIX_UNCHECK	(1u << 1)	/* clear the CHKD flag */
#define QFIX_LOST	(1u << 2)	/* forget the quota inode */
#define QFIX_SIZE	(1u << 3)	/* set the quota inode's size to 0 */
#define QFIX_MISSING	(1u << 4)	/* ids in use without a dquot */

/* Realtime plans (rc->plan.rt_fix, rt_fix.c applies them). */
#define RTFIX_CONTENTS		(1u << 0)	/* bitmap, summary, frextents */
#define RTFIX_BITMAP_INODE	(1u << 1)	/* remake the bitmap inode */
#define RTFIX_SUMMARY_INODE	(1u << 2)	/* remake the summary inode */
/* A new inode on new blocks, written by the AG rebuild (rt_build). */
#define RTFIX_BITMAP_NEW	(1u << 3)
#define RTFIX_SUMMARY_NEW	(1u << 4)
#define RTFIX_NEW		(RTFIX_BITMAP_NEW | RTFIX_SUMMARY_NEW)
/* Realtime groups: every group's bitmap and summary, and frextents. */
#define RTFIX_GROUPS		(1u << 5)
/* Realtime groups: rmap and refcount btrees rewritten in place. */
#define RTFIX_BTREES		(1u << 6)

struct repair_plan {
	struct ifixes	ifix;		/* inode fixes, in the order planned */
	XK_VEC_OF(struct ifix_why) whys;	/* of the clears and drops */
	XK_VEC_OF(struct da_hash_fix) da_hashes;	/* IFIX_DA_HASH */
	uint8_t		*sb_bad;	/* per AG: rewrite this secondary */
	int		sb_primary_fix;	/* rewrite the primary from mp->sb */
	unsigned long	unfixable;	/* findings no fix is planned for */
	/* The metadata directory tree is damaged: nothing is written. */
	int		meta_refuse;
	/*
	 * With it: the realtime groups' btrees would have to follow the
	 * repair, and xfskit-repair does not rebuild them (rtbtree.c).
	 */
	int		rtb_refuse;
	/* Findings the RTFIX_BTREES rewrite answers (rtbtree.c), of the
	 * findings since this scan started (at rtb_base). */
	unsigned long	rtb_fixable, rtb_base;
	/* The metadata tree is to be made anew (metadir.c plans how). */
	int		meta_rebuild;
	/* Inodes to reconnect under /lost+found. */
	XK_VEC_OF(struct orphan) orphans;
	/* Block/leaf/node directories to rewrite from salvaged entries. */
	XK_VEC_OF(uint64_t) dirfix;
	/* Attr forks to rewrite from their salvaged entries (attrfix.c). */
	XK_VEC_OF(uint64_t) attrfix;
	struct lf_plan	*lfplan;	/* NULL: no rewrite of /lost+found */
	/* Quota (quotafix.c applies them with the check's rc->scan.quota). */
	unsigned int	quota_fix[PLAN_QTYPES];	/* QFIX_* per quota type */
	uint16_t	quota_flags_clear;	/* sb_qflags bits to clear */
	unsigned int	rt_fix;		/* RTFIX_* */
	/*
	 * Parent pointers: the inodes whose set is rewritten, each once,
	 * and the pointers each is to carry (none for some), grouped by
	 * child in the same order.
	 */
	XK_VEC_OF(uint64_t) pptr_inos;
	XK_VEC_OF(struct pptr_want) pptr_want;
	XK_VEC_OF(uint8_t) pptr_names;
};

/*
 * Fix inode ino: one IFIX_* with its value.  A clear or a drop of the
 * xattrs records the pass's last finding as its reason; plan_inode_why
 * gives the reason instead.
 */
void plan_inode(struct repair_ctx *rc, uint64_t ino, uint32_t what,
		uint64_t val);
void plan_inode_why(struct repair_ctx *rc, uint64_t ino, uint32_t what,
		    uint64_t val, const char *why);
/* Set an attr node entry's hash (IFIX_DA_HASH with a da_hash_fix). */
void plan_da_hash(struct repair_ctx *rc, uint64_t ino, uint64_t daddr,
		  uint32_t entry, uint32_t hash);
/* The reason recorded for clearing (or dropping the xattrs of) ino. */
const char *plan_why(const struct repair_plan *p, uint64_t ino,
		     uint32_t what);
/* Note a finding that no fix covers (the run then exits 1). */
void plan_none(struct repair_ctx *rc);
/* Rewrite the primary superblock from mp->sb; secondary agno from it. */
void plan_sb_primary(struct repair_ctx *rc);
void plan_sb_secondary(struct repair_ctx *rc, uint32_t agno);
/*
 * Quota: plan qfix (QFIX_*) for quota type type, or take it back (a
 * fix found not to be the repair's to make); clear sb_qflags bits.
 */
void plan_quota(struct repair_ctx *rc, unsigned int type, unsigned int qfix);
void plan_quota_unplan(struct repair_ctx *rc, unsigned int type,
		       unsigned int qfix);
void plan_quota_flags(struct repair_ctx *rc, uint16_t clear);
/* Realtime: plan rtfix (RTFIX_*). */
void plan_rt(struct repair_ctx *rc, unsigned int rtfix);
/* Reconnect the inode ii under /lost+found. */
void plan_orphan(struct repair_ctx *rc, const struct inode_info *ii);
/*
 * Give inode ino exactly the parent pointers that plan_pptr_add then
 * records for it (none, or some): once per inode, its pointers next.
 */
void plan_pptr(struct repair_ctx *rc, uint64_t ino);
void plan_pptr_add(struct repair_ctx *rc, uint64_t ino, uint64_t parent,
		   uint32_t gen, const uint8_t *name, uint8_t namelen);
/* Rewrite directory ino from its salvaged entries (dirfix.c). */
void plan_dir_rebuild(struct repair_ctx *rc, uint64_t ino);
/* Is the directory owner planned for a rewrite? */
int dir_being_rebuilt(const struct repair_ctx *rc, uint64_t owner);
/* Rewrite ino's attr fork from its salvaged entries (attrfix.c). */
void plan_attr_rewrite(struct repair_ctx *rc, uint64_t ino);
/* Is owner's attr fork planned for a rewrite (attrfix sorted)? */
int attr_being_rewritten(const struct repair_ctx *rc, uint64_t owner);
/*
 * Room for the per-AG plans of a pass over mp (0, or -ENOMEM); the
 * plans of one pass are dropped by plan_free.
 */
int plan_start(struct repair_plan *p, const struct xk_mount *mp);
void plan_free(struct repair_plan *p);
/* Drop the /lost+found rewrite (lostfound.c replaces or abandons it). */
void lf_plan_free(struct repair_plan *p);
/*
 * The plans of parallel scan workers, each of which scanned the AGs
 * agno % n == i, appended to dst in the order one thread would have
 * made them: AG by AG.  0 or -ENOMEM.
 */
int plan_merge(struct repair_plan *dst, struct repair_plan *const *src,
	       unsigned int n, const struct xk_mount *mp);

#endif /* XFSKIT_REPAIR_PLAN_H */
