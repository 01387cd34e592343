/* SPDX-License-Identifier: GPL-2.0-or-later */
/* What sb_feature.c shares with the files of its upgrades. */
#ifndef XFSKIT_SB_FEATURE_PRIV_H
#define XFSKIT_SB_FEATURE_PRIV_H

#include <stddef.h>
#include <stdint.h>

struct xk_bld;
struct xk_btree_ops;
struct xk_mount;
struct xk_sb;
struct xk_sb_upgrade;

/*
 * sb_feature.c: the blocks of one per-AG tree, which must walk without
 * a problem (XK_ECORRUPT, or the walk's error).
 */
int sb_tree_blocks(struct xk_mount *mp, uint32_t agno,
		   const struct xk_btree_ops *ops, uint32_t root,
		   uint32_t levels, uint64_t *blocks);

/*
 * sb_feature_rmap.c: a builder fed from what the metadata says is owned
 * (inode chunks, CoW staging extents, every inode's fork mappings and
 * bmbt blocks; the headers and log by the builder), for a filesystem
 * without reverse mappings to load.  On error msg says why.
 */
int sb_open_observed(struct xk_mount *mp, struct xk_bld **bp, char *msg,
		     size_t msglen);

/*
 * sb_feature_rmap.c: the blocks of an AG that are free (free list
 * included) or hold its per-AG btrees (those mp's features have): what
 * a rebuild of those trees must leave the same.
 */
int sb_ag_space(struct xk_mount *mp, uint32_t agno, uint64_t *blocks);

/*
 * sb_feature_rmap.c: every AG's rmapbt read back; a block with two
 * owners where reflink cannot share it (not file data, or no reflink)
 * is XK_ECORRUPT, msg naming it.
 */
int sb_check_owners(struct xk_mount *mp, char *msg, size_t msglen);

/*
 * sb_feature_trees.c: give every AG the new per-AG btrees of `want`
 * (finobt, refcountbt, rmapbt) by rebuilding its trees through the builder, in
 * the cache only: every dirty block sealed (verified as it will be
 * written), the kernel's per-AG reservations checked against what each
 * AG keeps free.  On success mp->sb carries want's feature bits and the
 * geometry follows, and up holds the reservations; on error nothing is
 * left dirty, mp is as it was and msg says why.
 */
int sb_build_new_trees(struct xk_mount *mp, const struct xk_sb *want,
		       struct xk_sb_upgrade *up, char *msg, size_t msglen);

/*
 * sb_feature_trees.c: what AG agno keeps free (free list included) and
 * what the kernel's per-AG reservations need of it at mount beyond what
 * their trees hold, as the cache says now.
 */
int sb_ag_resv(struct xk_mount *mp, uint32_t agno, uint64_t *free,
	       uint64_t *need);

/*
 * sb_feature_trees.c: every AG must keep what the kernel reserves at
 * mount free (else it warns that the AG may run out of space, and the
 * trees the reservation is for can fail to grow): -ENOSPC, msg naming
 * the first AG short and the blocks it needs.  Read from the cache.
 */
int sb_check_reservations(struct xk_mount *mp, char *msg, size_t msglen);

/*
 * sb_feature_pptr.c: give every inode reached from the root directory
 * the parent pointer of each entry naming it, in the cache only, with
 * mp->sb carrying want's PARENT bit (and ATTRBIT) while the attr forks
 * are rewritten; every dirty block sealed, the kernel's per-AG
 * reservations checked.  On error nothing is left dirty, mp is as it
 * was and msg says why.
 */
int sb_add_parent_pointers(struct xk_mount *mp, const struct xk_sb *want,
			   char *msg, size_t msglen);

#endif /* XFSKIT_SB_FEATURE_PRIV_H */
