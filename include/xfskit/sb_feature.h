/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Adding v5 features to an existing filesystem, as xfs_repair -c (the
 * engine behind xfs_admin -O) adds them: the features whose on-disk
 * change is the superblock bit alone (bigtime, nrext64, exchange: inodes
 * and dquots convert lazily when the kernel next writes them) and
 * inobtcount, which also fills each AGI's inode btree block counts.
 */
#ifndef XFSKIT_SB_FEATURE_H
#define XFSKIT_SB_FEATURE_H

#include <xfskit/errors.h>

#include <stddef.h>
#include <stdint.h>

struct xk_mount;

/* The feature bits xk_sb_add_features can add. */
#define XK_SB_ADDABLE_RO_COMPAT	XK_SB_FEAT_RO_COMPAT_INOBTCNT
#define XK_SB_ADDABLE_INCOMPAT	(XK_SB_FEAT_INCOMPAT_BIGTIME | \
				 XK_SB_FEAT_INCOMPAT_NREXT64 | \
				 XK_SB_FEAT_INCOMPAT_EXCHRANGE)

/*
 * Add the ro_compat and incompat feature bits asked for (bits already set
 * are left alone; nothing is written when every bit is).  Rules, each
 * refused with a sentence in msg before anything is written:
 *  1. only the bits above (-EINVAL);
 *  2. inobtcount needs the free inode btree (-EINVAL);
 *  3. a filesystem marked as needing repair is left alone (XK_ECORRUPT);
 *  4. the log must be clean (-EBUSY), as its replay would be lost;
 *  5. the log must hold the largest transaction of the new feature set
 *     (-ENOSPC, naming the blocks needed and present);
 *  6. every superblock copy and, for inobtcount, every inode btree must
 *     pass its verifier (their error).
 * Then, as xfs_repair leaves them: the primary gets the new bits, its
 * unset quota inodes written as NULLFSINO, and every secondary becomes a
 * copy of it.  With inobtcount, the primary is first marked NEEDSREPAIR
 * (and synced) so that a crash while the AGIs are written leaves a
 * filesystem the kernel refuses and xfs_repair finishes; the mark goes
 * with the last write.
 */
XK_MUST_CHECK int xk_sb_add_features(struct xk_mount *mp, uint32_t ro_compat,
				     uint32_t incompat, char *msg,
				     size_t msglen);

#endif /* XFSKIT_SB_FEATURE_H */
