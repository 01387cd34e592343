// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Feature upgrades of an existing v5 filesystem (xfskit-admin -O): the
 * rules are in include/xfskit/sb_feature.h.  Everything is read and
 * verified, and every figure computed, before the first write, so a
 * refusal or a damaged block leaves the filesystem untouched.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <xfskit/ag.h>
#include <xfskit/btree.h>
#include <xfskit/log_resv.h>
#include <xfskit/mount.h>
#include <xfskit/needsrepair.h>
#include <xfskit/sb_feature.h>

#include "sb_feature_priv.h"

/* Inode btree block counts of one AG, for AGIs under inobtcount. */
struct agi_counts {
	uint64_t	iblocks;
	uint64_t	fblocks;
};

int
sb_tree_blocks(struct xk_mount *mp, uint32_t agno,
	       const struct xk_btree_ops *ops, uint32_t root, uint32_t levels,
	       uint64_t *blocks)
{
	struct xk_btree_walk w;
	int err;

	memset(&w, 0, sizeof(w));
	w.ops = ops;
	w.agno = agno;
	w.root = root;
	w.levels = levels;
	err = xk_btree_walk(mp, &w);
	if (!err && w.nproblems)
		err = XK_ECORRUPT;
	*blocks = w.nblocks;
	return err;
}

/* Walk both inode btrees of every AG (rule 6). */
static int
count_inode_btrees(struct xk_mount *mp, struct agi_counts *c, char *msg,
		   size_t msglen)
{
	for (uint32_t agno = 0; agno < mp->g.agcount; agno++) {
		const struct xk_agi *agi;
		struct xk_buf *bp;
		int err = xk_agi_read(mp, agno, 0, &bp);

		if (err) {
			snprintf(msg, msglen, "the AGI of AG %u cannot be "
				 "read: %s", agno, xk_strerror(err));
			return err;
		}
		agi = xk_buf_agi(bp);
		err = sb_tree_blocks(mp, agno, &xk_inobt_ops,
				     xk_be32_get(agi->agi_root),
				     xk_be32_get(agi->agi_level),
				     &c[agno].iblocks);
		if (!err)
			err = sb_tree_blocks(mp, agno, &xk_finobt_ops,
					     xk_be32_get(agi->agi_free_root),
					     xk_be32_get(agi->agi_free_level),
					     &c[agno].fblocks);
		xk_buf_release(bp);
		if (err) {
			snprintf(msg, msglen, "the inode btrees of AG %u "
				 "cannot be walked: %s (run xfskit-repair "
				 "first)", agno, xk_strerror(err));
			return err;
		}
	}
	return 0;
}

static int
write_agi_counts(struct xk_mount *mp, const struct agi_counts *c)
{
	for (uint32_t agno = 0; agno < mp->g.agcount; agno++) {
		struct xk_agi *agi;
		struct xk_buf *bp;
		int err = xk_agi_read(mp, agno, 0, &bp);

		if (err)
			return err;
		agi = xk_buf_agi(bp);
		xk_be32_set(&agi->agi_iblocks, (uint32_t)c[agno].iblocks);
		xk_be32_set(&agi->agi_fblocks, (uint32_t)c[agno].fblocks);
		err = xk_buf_write(bp);
		xk_buf_release(bp);
		if (err)
			return err;
	}
	return 0;
}

/* Every copy must be readable before any is written (rule 6). */
static int
verify_sb_copies(struct xk_mount *mp, char *msg, size_t msglen)
{
	for (uint32_t agno = 0; agno < mp->g.agcount; agno++) {
		struct xk_buf *bp;
		int err = xk_sb_read(mp, agno, 0, &bp);

		if (err) {
			snprintf(msg, msglen, "the superblock of AG %u cannot "
				 "be read: %s (run xfskit-repair first)", agno,
				 xk_strerror(err));
			return err;
		}
		xk_buf_release(bp);
	}
	return 0;
}

/* The primary as xfs_repair writes it, then every secondary a copy. */
static int
write_sb_copies(struct xk_mount *mp, struct xk_buf *primary)
{
	struct xk_dsb *d = (struct xk_dsb *)primary->data;

	xk_be32_set(&d->sb_features_ro_compat, mp->sb.features_ro_compat);
	xk_be32_set(&d->sb_features_incompat, mp->sb.features_incompat);
	/* Parent pointers are attributes: ATTRBIT goes with them. */
	xk_be16_set(&d->sb_versionnum, mp->sb.versionnum);
	xk_dsb_null_quota_inodes(d);
	for (uint32_t agno = 1; agno < mp->g.agcount; agno++) {
		struct xk_buf *bp;
		int err = xk_sb_read(mp, agno, 0, &bp);

		if (err)
			return err;
		memcpy(bp->data, primary->data, bp->len);
		err = xk_buf_write(bp);
		xk_buf_release(bp);
		if (err)
			return err;
	}
	/* Last: until here the primary still says what was there before. */
	return xk_buf_write(primary);
}

static int
check_request(const struct xk_sb *sb, const struct xk_sb *want, char *msg,
	      size_t msglen)
{
	if ((want->features_ro_compat & ~sb->features_ro_compat &
	     ~XK_SB_ADDABLE_RO_COMPAT) ||
	    (want->features_incompat & ~sb->features_incompat &
	     ~XK_SB_ADDABLE_INCOMPAT)) {
		snprintf(msg, msglen, "only inobtcount, finobt, reflink, "
			 "rmapbt, bigtime, nrext64, exchange and parent can "
			 "be added");
		return -EINVAL;
	}
	if (xk_sb_has_incompat(want, XK_SB_FEAT_INCOMPAT_EXCHRANGE) &&
	    !xk_sb_has_incompat(sb, XK_SB_FEAT_INCOMPAT_EXCHRANGE) &&
	    !xk_sb_has_ro_compat(want, XK_SB_FEAT_RO_COMPAT_REFLINK)) {
		snprintf(msg, msglen, "File exchange-range feature cannot be "
			 "added without reflink.");
		return -EINVAL;
	}
	if (xk_sb_has_ro_compat(want, XK_SB_FEAT_RO_COMPAT_REFLINK) &&
	    !xk_sb_has_ro_compat(sb, XK_SB_FEAT_RO_COMPAT_REFLINK) &&
	    sb->rblocks) {
		snprintf(msg, msglen, "reflink cannot be added to a "
			 "filesystem with a realtime section");
		return -EINVAL;
	}
	if (xk_sb_has_ro_compat(want, XK_SB_FEAT_RO_COMPAT_RMAPBT) &&
	    !xk_sb_has_ro_compat(sb, XK_SB_FEAT_RO_COMPAT_RMAPBT) &&
	    sb->rblocks) {
		snprintf(msg, msglen, "rmapbt cannot be added to a "
			 "filesystem with a realtime section");
		return -EINVAL;
	}
	if (xk_sb_has_ro_compat(want, XK_SB_FEAT_RO_COMPAT_INOBTCNT) &&
	    !xk_sb_has_ro_compat(want, XK_SB_FEAT_RO_COMPAT_FINOBT)) {
		snprintf(msg, msglen, "Inode btree count feature requires "
			 "free inode btree.");
		return -EINVAL;
	}
	if (xk_sb_has_incompat(sb, XK_SB_FEAT_INCOMPAT_NEEDSREPAIR)) {
		snprintf(msg, msglen, "the filesystem is marked as needing "
			 "repair: run xfskit-repair first");
		return XK_ECORRUPT;
	}
	return 0;
}

int
xk_sb_add_features(struct xk_mount *mp, uint32_t ro_compat,
		   uint32_t incompat, struct xk_sb_upgrade *up, char *msg,
		   size_t msglen)
{
	struct xk_sb old = mp->sb, want = mp->sb;
	struct agi_counts *counts = NULL;
	struct xk_buf *primary = NULL;
	uint32_t need;
	int add_counts, add_trees, add_pptr, rebuilt, marked = 0, err;

	msg[0] = 0;
	memset(up, 0, sizeof(*up));
	want.features_ro_compat |= ro_compat;
	want.features_incompat |= incompat;
	err = check_request(&old, &want, msg, msglen);
	if (err)
		return err;
	if (want.features_ro_compat == old.features_ro_compat &&
	    want.features_incompat == old.features_incompat)
		return 0;
	err = xk_log_require_clean(mp, msg, msglen);
	if (err)
		return err;
	need = xk_log_min_blocks(&want);
	if (old.logblocks < need) {
		snprintf(msg, msglen, "Filesystem log too small to upgrade "
			 "filesystem; need %u blocks, have %u.", need,
			 old.logblocks);
		return -ENOSPC;
	}
	err = verify_sb_copies(mp, msg, msglen);
	if (err)
		return err;
	add_trees = (want.features_ro_compat & ~old.features_ro_compat &
		     XK_SB_TREE_RO_COMPAT) != 0;
	add_pptr = !xk_sb_has_incompat(&old, XK_SB_FEAT_INCOMPAT_PARENT) &&
		   xk_sb_has_incompat(&want, XK_SB_FEAT_INCOMPAT_PARENT);
	rebuilt = add_trees || add_pptr;
	add_counts = !add_trees &&
		     !xk_sb_has_ro_compat(&old,
					  XK_SB_FEAT_RO_COMPAT_INOBTCNT) &&
		     xk_sb_has_ro_compat(&want, XK_SB_FEAT_RO_COMPAT_INOBTCNT);
	if (add_trees) {
		/* The new trees (and inobtcount's counts) in the cache. */
		err = sb_build_new_trees(mp, &want, up, msg, msglen);
		if (err)
			return err;
	}
	if (add_pptr) {
		/* On the new trees, if any: their blocks are in the cache. */
		err = sb_add_parent_pointers(mp, &want, msg, msglen);
		if (err)
			goto failed;
	}
	if (add_counts) {
		counts = calloc(mp->g.agcount, sizeof(*counts));
		if (!counts) {
			snprintf(msg, msglen, "no memory for %u AGs",
				 mp->g.agcount);
			return -ENOMEM;
		}
		err = count_inode_btrees(mp, counts, msg, msglen);
		if (err)
			goto out;
	}
	err = xk_sb_read(mp, 0, 0, &primary);
	/* The guard marks the primary before the first write below. */
	if (!err)
		err = xk_needsrepair_arm(mp);
	if (!err && add_counts)
		err = write_agi_counts(mp, counts);
	if (!err && rebuilt)
		err = xk_buf_flush(mp);
	if (!err && rebuilt)
		err = xk_dev_sync(mp->dev);
	if (err)
		goto failed;
	/* The counters stay as the rebuild left them. */
	mp->sb.features_ro_compat = want.features_ro_compat;
	mp->sb.features_incompat = want.features_incompat;
	xk_mount_rederive(mp);
	/* The new bits everywhere, then the guard's clear as the last write. */
	err = write_sb_copies(mp, primary);
	if (!err)
		err = xk_needsrepair_clear(mp);
failed:
	marked = xk_needsrepair_marked(mp);
	if (err && !marked) {
		/* Nothing written: the cache forgets the rebuilt trees. */
		xk_needsrepair_disarm(mp);
		if (primary)
			xk_buf_release(primary);
		primary = NULL;
		xk_buf_discard_dirty(mp);
	}
	if (err && (!rebuilt || !marked)) {
		mp->sb = old;
		xk_mount_rederive(mp);
	}
	if (err && !msg[0])
		snprintf(msg, msglen, "writing the upgrade failed: %s%s",
			 xk_strerror(err), marked ? " (the filesystem is "
			 "marked as needing repair)" : "");
out:
	if (primary)
		xk_buf_release(primary);
	free(counts);
	return err;
}
