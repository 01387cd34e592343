/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Adding v5 features to an existing filesystem, as xfs_repair -c (the
 * engine behind xfs_admin -O) adds them: the features whose on-disk
 * change is the superblock bit alone (bigtime, nrext64, exchange: inodes
 * and dquots convert lazily when the kernel next writes them) and
 * inobtcount, which also fills each AGI's inode btree block counts.
 * Beyond xfs_repair: finobt, reflink and rmapbt, which add a btree to
 * every AG (the free inode btree built from the inode chunks with a free
 * inode, an empty refcount btree, the reverse-mapping btree from every
 * owner the metadata names: inode forks and their bmbt blocks, inode
 * chunks, AG headers and btrees, the AGFL, the log, CoW staging), and
 * parent (which xfs_repair 7.2 cannot add either): every directory
 * entry's parent pointer written on the inode it names.
 */
#ifndef XFSKIT_SB_FEATURE_H
#define XFSKIT_SB_FEATURE_H

#include <xfskit/errors.h>

#include <stddef.h>
#include <stdint.h>

struct xk_mount;

/* The feature bits xk_sb_add_features can add. */
#define XK_SB_ADDABLE_RO_COMPAT	(XK_SB_FEAT_RO_COMPAT_INOBTCNT | \
				 XK_SB_TREE_RO_COMPAT)
/* Those of them that add a per-AG btree. */
#define XK_SB_TREE_RO_COMPAT	(XK_SB_FEAT_RO_COMPAT_FINOBT | \
				 XK_SB_FEAT_RO_COMPAT_REFLINK | \
				 XK_SB_FEAT_RO_COMPAT_RMAPBT)
#define XK_SB_ADDABLE_INCOMPAT	(XK_SB_FEAT_INCOMPAT_BIGTIME | \
				 XK_SB_FEAT_INCOMPAT_NREXT64 | \
				 XK_SB_FEAT_INCOMPAT_EXCHRANGE | \
				 XK_SB_FEAT_INCOMPAT_PARENT)

/*
 * Add the ro_compat and incompat feature bits asked for (bits already set
 * are left alone; nothing is written when every bit is).  Rules, each
 * refused with a sentence in msg before anything is written:
 *  1. only the bits above (-EINVAL);
 *  2. inobtcount needs the free inode btree, exchange needs reflink,
 *     reflink and rmapbt a filesystem without a realtime section
 *     (-EINVAL);
 *  3. a filesystem marked as needing repair is left alone (XK_ECORRUPT);
 *  4. the log must be clean (-EBUSY), as its replay would be lost;
 *  5. the log must hold the largest transaction of the new feature set
 *     (-ENOSPC, naming the blocks needed and present);
 *  6. every superblock copy and, for inobtcount, every inode btree must
 *     pass its verifier (their error); for finobt, reflink and rmapbt
 *     every per-AG btree must load (for rmapbt every inode's forks
 *     map), every block rebuilt pass its verifier, and every AG count
 *     as many free and btree blocks after as before (XK_ECORRUPT: free
 *     space and owners disagree); for rmapbt, no block may have two
 *     owners unless reflink shares it as file data (XK_ECORRUPT);
 *  7. for finobt, reflink and rmapbt, every AG must keep free, after its new
 *     tree took its blocks, what the kernel reserves there at mount for
 *     the finobt, refcountbt and rmapbt (-ENOSPC, naming the first AG
 *     short and the blocks it needs);
 *  8. for parent: no metadata directory tree (XK_EUNSUPP); every inode
 *     reached from the root has as many entries naming it as links (a
 *     directory one), its attributes read and its attr fork can be
 *     widened where it is (XK_ECORRUPT or XK_EUNSUPP, naming the inode);
 *     the new attribute blocks fit in the free space each AG has beyond
 *     the kernel's reservations (-ENOSPC, giving at least how many
 *     blocks are missing).
 * Then, as xfs_repair leaves them: the primary gets the new bits, its
 * unset quota inodes written as NULLFSINO, and every secondary becomes a
 * copy of it.  Every upgrade writes under the handle's NEEDSREPAIR
 * guard (needsrepair.h, armed here: call it with none armed), so that a
 * crash while the AG headers, trees, attr forks and superblocks are
 * written leaves a filesystem the kernel refuses and xfs_repair
 * finishes; the guard's clear is the last write, after every superblock
 * has the new bits (parent's with ATTRBIT).  finobt and
 * reflink (and rmapbt) rebuild every per-AG btree of every AG (as xfskit-repair
 * does), so the AG headers, bnobt, cntbt, inobt and rmapbt are all
 * rewritten, and the superblock counters recomputed.  *up is filled
 * (zeroed when no per-AG btree was added).
 */
struct xk_sb_upgrade {
	/*
	 * finobt, reflink, rmapbt: the blocks the kernel's per-AG
	 * reservations (finobt and refcountbt beyond what they hold, the
	 * rmapbt's whole) take from the free space statfs reports at
	 * mount, summed over the AGs, before and after.
	 * Both 0 when no per-AG btree was added.
	 */
	uint64_t	resv_before;
	uint64_t	resv_after;
};

XK_MUST_CHECK int xk_sb_add_features(struct xk_mount *mp, uint32_t ro_compat,
				     uint32_t incompat,
				     struct xk_sb_upgrade *up, char *msg,
				     size_t msglen);

#endif /* XFSKIT_SB_FEATURE_H */
