// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The metadata directory tree (-m metadir=1) of a filesystem without a
 * realtime volume, as mkfs.xfs 7.2 makes it: the tree's root in the
 * slot after the root directory (sb_metadirino), holding one empty
 * directory, /rtgroups, which exists with no realtime group at all.
 * No /quota, even with the quota options (geometry.c): as with 7.2, the
 * kernel makes it and the quota files at the first quota mount.
 *
 * Where /rtgroups goes, as observed of mkfs.xfs 7.2 (agcount 2 to 16,
 * the log in AG 0, 1, 3 or the middle one, an external log): in the AG
 * holding the internal log, AG 0 with an external log; in the free slot
 * after the root's chunk when that AG has it, else in a new chunk there,
 * placed as the kernel places one (mkfs_plan_chunk).
 *
 * Generations: mkfs.xfs 7.2 gives these inodes random ones (the root
 * directory's is 0); ours are drawn from the UUID and the inode number
 * (xk_inode_init_metadir_gen), so images stay reproducible with -m
 * uuid=.  The parent pointer of /rtgroups (with -n parent=1) names the
 * tree's root with its generation.
 */
#include <errno.h>

#include <xfskit/init.h>
#include <xfskit/format/dir.h>

#include "mkfs.h"

static const uint8_t rtgroups_name[] = "rtgroups";
#define RTGROUPS_NAMELEN	((uint8_t)(sizeof(rtgroups_name) - 1))

int
mkfs_metadir_plan(const struct xk_mount *mp, struct xk_ag_init *ags,
		  uint32_t agcount, uint64_t rootino, struct mkfs_metadir *md)
{
	struct xk_ag_init *ai = &ags[0];
	uint32_t agno = 0;
	int err;

	/* Planned with the root's chunk, in the slot after the root. */
	md->rootino = rootino + 1;
	for (uint32_t a = 0; a < agcount; a++)
		if (ags[a].log_blocks) {
			ai = &ags[a];
			agno = a;
		}
	md->new_chunk = !ai->chunk_blocks;
	if (md->new_chunk) {
		err = mkfs_plan_chunk(mp, ai, 0);
		if (err)
			return err;
	}
	if (ai->chunk_used >= ai->chunk_inodes)
		return -ENOSPC;
	md->rtgroups_agno = agno;
	md->rtgroupsino = xk_agino_to_ino(mp, agno, (ai->chunk_agbno <<
					  mp->g.inopblog) + ai->chunk_used);
	ai->chunk_used++;
	return 0;
}

int
mkfs_metadir_write(struct xk_mount *mp, const struct mkfs_cfg *cfg,
		   const struct xk_ag_init *ags, uint32_t agcount,
		   const struct mkfs_metadir *md, int64_t now_sec,
		   uint32_t now_nsec)
{
	const struct xk_ag_init *ai = &ags[md->rtgroups_agno];
	const struct xk_init_dirent ent = {
		.name = rtgroups_name,
		.namelen = RTGROUPS_NAMELEN,
		.ftype = XK_DIR3_FT_DIR,
		.ino = md->rtgroupsino,
	};
	struct xk_buf *bp;
	void *dip;
	int err;

	if (md->rtgroups_agno >= agcount)
		return -EINVAL;
	if (md->new_chunk) {
		err = xk_inode_init_chunk(mp, md->rtgroups_agno,
					  ai->chunk_agbno, ai->chunk_blocks);
		if (err)
			return err;
	}
	/* The tree's root: its own parent, ".", ".." and /rtgroups' "..". */
	err = xk_inode_init_get(mp, md->rootino, &bp, &dip);
	if (err)
		return err;
	xk_inode_init_metadir(mp, dip, md->rootino, md->rootino, 3, 3,
			      now_sec, now_nsec);
	if (!xk_inode_init_sfdir_ents(mp, dip, md->rootino, &ent, 1))
		err = -ENOSPC;
	xk_buf_dirty(bp);
	xk_buf_release(bp);
	if (err)
		return err;
	err = xk_inode_init_get(mp, md->rtgroupsino, &bp, &dip);
	if (err)
		return err;
	xk_inode_init_metadir(mp, dip, md->rtgroupsino, md->rootino, 2, 2,
			      now_sec, now_nsec);
	if (cfg->parent)
		err = xk_inode_init_pptr(mp, dip, rtgroups_name,
					 RTGROUPS_NAMELEN, md->rootino,
					 xk_inode_init_metadir_gen(mp,
								   md->rootino));
	xk_buf_dirty(bp);
	xk_buf_release(bp);
	return err;
}
