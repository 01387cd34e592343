// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The new root of a rebuilt metadata directory tree (IFIX_NEWMETAROOT,
 * planned by metadir.c): an empty metadata directory whose ".." names
 * itself, made as mkfs makes one.  The other metadata inodes are
 * cleared by their own plans, and the next pass sees the new tree.
 */
#include <xfskit/init.h>

#include "repair.h"

void
metadir_root_init(struct repair_ctx *rc, struct xk_dinode *dip, uint64_t ino)
{
	/* Its own parent: ".." of the metadata root names itself. */
	xk_inode_init_metadir(rc->mp, dip, ino, ino, 2, 2, repair_now(), 0);
	action_report(rc, ACT_METADIR_REBUILT, ino, -1, "", ": a new, empty "
		      "metadata root directory; the superblock names it");
}
