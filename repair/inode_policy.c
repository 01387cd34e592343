// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Inode core rules that are xfs_repair's rather than the kernel's: the
 * kernel reads these inodes, xfs_repair -n reports them, so a repair
 * must leave none of them.  Checked on every inode, free or in use:
 *  1. di_flags: no unknown bit; the new-bitmap flag only on the
 *     realtime bitmap inode; no realtime flag without a realtime
 *     device, free inodes included; directory-only flags (realtime, project and
 *     extent size inheritance, no symlinks) only on directories and
 *     file-only flags (realtime, extent size hint) only on regular
 *     files, for an inode in use;
 *  2. the padding beside the extent counters is zero (di_v3_pad, or
 *     di_nrext64_pad with large extent counters);
 *  3. without bigtime, every timestamp's nanoseconds below 10^9;
 *  4. an inode in use is on no unlinked list (the repair empties the
 *     AGI's buckets), so its di_next_unlinked is null;
 *  5. an inode in use without an attr fork says extents for its format
 *     (the kernel also takes 0, which a new cluster's free inodes have);
 *  6. the DAX flag (di_flags2) only on regular files and directories,
 *     for an inode in use (xfs_repair 6.1 and 7.2 clear it elsewhere).
 * Each fix is planned as the field with the offending bits cleared.
 */
#include "repair.h"

#define DIR_ONLY_FLAGS	(XK_DIFLAG_RTINHERIT | XK_DIFLAG_EXTSZINHERIT | \
			 XK_DIFLAG_PROJINHERIT | XK_DIFLAG_NOSYMLINKS)
#define FILE_ONLY_FLAGS	(XK_DIFLAG_REALTIME | XK_DIFLAG_EXTSIZE)

static uint16_t
flags_wanted(const struct repair_ctx *rc, uint64_t ino, uint16_t mode,
	     uint16_t flags)
{
	uint16_t type = mode & XK_S_IFMT;
	uint16_t want = flags & XK_DIFLAG_ANY;

	if (ino != rc->mp->sb.rbmino)
		want &= (uint16_t)~XK_DIFLAG_NEWRTBM;
	if (!rc->mp->sb.rblocks)
		want &= (uint16_t)~XK_DIFLAG_REALTIME;
	if (mode && type != XK_S_IFDIR)
		want &= (uint16_t)~DIR_ONLY_FLAGS;
	if (mode && type != XK_S_IFREG)
		want &= (uint16_t)~FILE_ONLY_FLAGS;
	return want;
}

void
check_core_policy(struct repair_ctx *rc, uint64_t ino,
		  const struct xk_dinode *dip, uint64_t daddr)
{
	uint16_t flags = xk_be16_get(dip->di_flags);
	uint16_t want = flags_wanted(rc, ino, xk_be16_get(dip->di_mode),
				     flags);
	uint64_t flags2 = xk_be64_get(dip->di_flags2);
	uint16_t type = xk_be16_get(dip->di_mode) & XK_S_IFMT;
	int big = (flags2 & XK_DIFLAG2_NREXT64) != 0;

	if (want != flags &&
	    report(rc, PR_INODE_BAD, "inode", -1, ino, daddr, "flags",
		   "flags 0x%x not allowed here (0x%x)", flags,
		   (unsigned int)(flags & ~want)))
		plan_inode(rc, ino, IFIX_FLAGS, want);
	if ((big ? xk_be16_get(dip->di_nrext64_pad) != 0 :
		   xk_be64_get(dip->di_v3_pad) != 0) &&
	    report(rc, PR_INODE_BAD, "inode", -1, ino, daddr, "pad",
		   "the padding beside the extent counters is not zero"))
		plan_inode(rc, ino, IFIX_PAD, 0);
	if (xk_be16_get(dip->di_mode) &&
	    xk_be32_get(dip->di_next_unlinked) != XK_NULLAGINO &&
	    report(rc, PR_INODE_BAD, "inode", -1, ino, daddr, "next_unlinked",
		   "an inode in use points to 0x%x on an unlinked list",
		   xk_be32_get(dip->di_next_unlinked)))
		plan_inode(rc, ino, IFIX_UNLINKED, 0);
	if (xk_be16_get(dip->di_mode) && !dip->di_forkoff &&
	    dip->di_aformat != XK_DINODE_FMT_EXTENTS &&
	    report(rc, PR_INODE_BAD, "inode", -1, ino, daddr, "aformat",
		   "attr fork format %u without an attr fork, not extents",
		   dip->di_aformat))
		plan_inode(rc, ino, IFIX_AFORMAT, 0);
	if (type && type != XK_S_IFREG && type != XK_S_IFDIR &&
	    (flags2 & XK_DIFLAG2_DAX) &&
	    report(rc, PR_INODE_BAD, "inode", -1, ino, daddr, "flags2",
		   "DAX flag set on special inode %llu",
		   (unsigned long long)ino))
		plan_inode(rc, ino, IFIX_FLAGS2, flags2 & ~XK_DIFLAG2_DAX);
	if (bad_nsec_mask(dip) &&
	    report(rc, PR_INODE_BAD, "inode", -1, ino, daddr, "nsec",
		   "a timestamp has 10^9 nanoseconds or more"))
		plan_inode(rc, ino, IFIX_NSEC, 0);
}
