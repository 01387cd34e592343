// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The metadata directory tree (METADIR) made anew.  Where its root is
 * not a metadata directory, or the tree names what it must not (a free
 * inode, a user inode), or holds a metadata inode it cannot reach or of
 * the wrong metafile type, the tree is rebuilt the way xfs_repair 7.2
 * rebuilds it on every run: a new, empty metadata root directory, and
 * every other metadata inode cleared.  On a filesystem without a
 * realtime volume and without quota files that root is the whole tree
 * (the kernel needs no /rtgroups then; xfs_repair 7.2 drops it too).
 *
 * The root goes where mkfs puts it, right after the root directory,
 * where xfs_repair 7.2 wants it (its "calculated value"); sb_metadirino
 * follows.  A slot that a user directory reaches is never taken.  The tree is refused, nothing
 * written, when it holds what a rebuild would have to keep and this one
 * does not remake: quota files, realtime metadata.
 *
 * In: phase_links' walk (ii->reached, ii->meta).  Out: the plans
 * (IFIX_NEWMETAROOT, which metadirfix.c writes, clears, the superblock)
 * or plan.meta_refuse.
 */
#include "repair.h"

/* Whether ii is what a metadata tree's root is: a metadata directory. */
int
metadir_root_fits(const struct inode_info *ii)
{
	return ii && ii->meta && (ii->mode & XK_S_IFMT) == XK_S_IFDIR &&
	       ii->metatype == XK_METAFILE_DIR;
}

/*
 * Where the metadata root is to be walked from: the slot mkfs gives it,
 * right after the root directory, which xfs_repair 7.2 wants
 * sb_metadirino to name ("calculated value"), when it holds a metadata
 * directory; a superblock naming another inode is what is wrong there
 * (set in repair, the tree kept).  0 when the slot holds none: a rebuild
 * is planned (repair).
 */
uint64_t
metadir_root_find(struct repair_ctx *rc)
{
	struct xk_sb *sb = &rc->mp->sb;
	uint64_t slot = sb->rootino + 1;

	if (!xk_ino_valid(rc->mp, slot) ||
	    !metadir_root_fits(inode_info_find(rc, slot))) {
		if (report(rc, PR_DISCONNECTED, "metadata directory", -1,
			   slot, XK_NO_DADDR, "metadirino", "the root of the "
			   "metadata tree (inode %llu, the superblock names "
			   "%llu) is not a metadata directory in use",
			   (unsigned long long)slot,
			   (unsigned long long)sb->metadirino))
			rc->plan.meta_rebuild = 1;
		return 0;
	}
	if (sb->metadirino != slot &&
	    report(rc, PR_SB_PRIMARY_BAD, "superblock", 0, 0, 0, "metadirino",
		   "the metadata root is inode %llu, not %llu, the metadata "
		   "directory after the root directory",
		   (unsigned long long)sb->metadirino,
		   (unsigned long long)slot)) {
		sb->metadirino = slot;
		plan_sb_primary(rc);
	}
	return slot;
}

/*
 * Whether the new root may go to inode ino: a slot of a chunk the scan
 * read, free, a metadata inode, or a user inode no user directory
 * reaches (the metadata root that lost its flag).
 */
static int
slot_fits(struct repair_ctx *rc, uint64_t ino)
{
	const struct inode_info *ii;

	if (!xk_ino_valid(rc->mp, ino) || !scan_saw_inode(rc, ino) ||
	    ino == rc->mp->sb.rootino)
		return 0;
	ii = inode_info_find(rc, ino);
	return !ii || ii->meta || !ii->reached;
}

/* Refuse, saying why (main says that nothing was written). */
static void
refuse(struct repair_ctx *rc, const char *why, uint64_t ino)
{
	notice(rc, "The metadata directory tree cannot be rebuilt: %s "
	     "(inode %llu).\n", why, (unsigned long long)ino);
	plan_none(rc);
	rc->plan.meta_refuse = 1;
}

uint64_t
metadir_rebuild_target(struct repair_ctx *rc)
{
	const struct xk_sb *sb = &rc->mp->sb;

	if (!rc->plan.meta_rebuild || rc->plan.meta_refuse)
		return 0;
	return slot_fits(rc, sb->rootino + 1) ? sb->rootino + 1 : 0;
}

void
metadir_rebuild_plan(struct repair_ctx *rc)
{
	struct xk_sb *sb = &rc->mp->sb;
	uint64_t target = metadir_rebuild_target(rc);

	if (!rc->plan.meta_rebuild || rc->plan.meta_refuse)
		return;
	if (sb->rblocks) {
		refuse(rc, "the filesystem has a realtime volume, whose "
		       "metadata xfskit-repair does not remake", sb->metadirino);
		return;
	}
	/* A quota file holds the limits set: not dropped, not re-linked. */
	for (size_t i = 0; i < rc->scan.ninodes; i++) {
		const struct inode_info *ii = &rc->scan.inodes[i];

		if (ii->meta && (ii->mode & XK_S_IFMT) == XK_S_IFREG &&
		    ii->metatype >= XK_METAFILE_USRQUOTA &&
		    ii->metatype <= XK_METAFILE_PRJQUOTA) {
			refuse(rc, "it holds a quota file, which "
			       "xfskit-repair does not put back in a new "
			       "tree", ii->ino);
			return;
		}
	}
	if (!target) {
		refuse(rc, "the slot of its root, after the root "
		       "directory, holds a user inode", sb->rootino + 1);
		return;
	}
	if (target != sb->metadirino &&
	    report(rc, PR_SB_PRIMARY_BAD, "superblock", 0, 0, 0, "metadirino",
		   "the metadata root is inode %llu; it is made anew at %llu",
		   (unsigned long long)sb->metadirino,
		   (unsigned long long)target)) {
		sb->metadirino = target;
		plan_sb_primary(rc);
	}
	plan_inode(rc, target, IFIX_NEWMETAROOT, 0);
	for (size_t i = 0; i < rc->scan.ninodes; i++) {
		const struct inode_info *ii = &rc->scan.inodes[i];

		if (ii->meta && ii->ino != target)
			plan_inode_why(rc, ii->ino, IFIX_CLEAR, 0, "a metadata "
				       "inode left out of the rebuilt "
				       "metadata tree");
	}
}
