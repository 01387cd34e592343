// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Upgrades that add per-AG btrees (finobt, reflink's refcountbt,
 * rmapbt): the builder loads each AG's free space, inode chunks and
 * reverse mappings from the trees it has (for the rmapbt, which has no
 * trees to load them from, it is fed what the metadata says is owned:
 * sb_feature_rmap.c), and its commit rebuilds every per-AG tree of the
 * new feature set from them (the free inode btree from the chunks with
 * a free inode, an empty refcountbt: nothing is shared yet, the rmapbt
 * from every owner), taking their blocks from the AG's free space and
 * setting the AGF, AGI, AGFL, rmapbt and superblock counters.  Each AG
 * must count as many free and tree blocks after as before.  Nothing
 * reaches the disk here: the caller writes the cache once every check
 * passed.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <xfskit/ag.h>
#include <xfskit/ag_resv.h>
#include <xfskit/btree.h>
#include <xfskit/build.h>
#include <xfskit/init.h>
#include <xfskit/mount.h>
#include <xfskit/sb_feature.h>

#include "sb_feature_priv.h"

int
sb_ag_resv(struct xk_mount *mp, uint32_t agno, uint64_t *free, uint64_t *need)
{
	struct xk_ag_resv_held h;
	uint64_t len;
	int err = xk_ag_resv_state(mp, agno, free, &h);

	if (err)
		return err;
	len = xk_ag_blocks(mp, agno) - xk_ag_log_blocks(mp, agno);
	*need = xk_ag_resv_needed(&mp->g, len, len, &h);
	return 0;
}

int
sb_check_reservations(struct xk_mount *mp, char *msg, size_t msglen)
{
	uint32_t nshort = 0, first = 0;
	uint64_t first_need = 0, first_free = 0;
	char trees[40] = "";
	int n = 0;

	for (uint32_t agno = 0; agno < mp->g.agcount; agno++) {
		uint64_t free, need;
		int err = sb_ag_resv(mp, agno, &free, &need);

		if (err) {
			snprintf(msg, msglen, "AG %u as rebuilt does not read "
				 "back: %s", agno, xk_strerror(err));
			return err;
		}
		if (need <= free)
			continue;
		if (!nshort++) {
			first = agno;
			first_need = need;
			first_free = free;
		}
	}
	if (!nshort)
		return 0;
	/* Fits: at most 26 bytes. */
	if (mp->g.has_finobt)
		n = snprintf(trees, sizeof(trees), "finobt");
	if (mp->g.has_reflink)
		n += snprintf(trees + n, sizeof(trees) - n, "%s%s",
			      n ? ", " : "", "refcountbt");
	if (mp->g.has_rmapbt)
		snprintf(trees + n, sizeof(trees) - n, "%s%s", n ? ", " : "",
			 "rmapbt");
	snprintf(msg, msglen, "AG %u lacks space: the kernel's per-AG "
		 "reservation for its %s needs %llu blocks beyond "
		 "what they hold, the AG would keep %llu free (free list "
		 "included); free %llu more blocks in it (%u AG%s short); "
		 "nothing was changed", first, trees,
		 (unsigned long long)first_need,
		 (unsigned long long)first_free,
		 (unsigned long long)(first_need - first_free), nshort,
		 nshort == 1 ? "" : "s");
	return -ENOSPC;
}

/*
 * Where xfs_repair expects the root directory of a filesystem with sb's
 * features: the first block mkfs could have put it in AG 0 (headers,
 * one root per btree, the initial AGFL, the log when it is there),
 * rounded up to the stripe unit or the inode alignment.
 */
static uint64_t
expected_rootino(const struct xk_mount *mp, const struct xk_sb *sb)
{
	uint64_t first = (4ULL * sb->sectsize + sb->blocksize - 1) /
			 sb->blocksize + 3;
	uint32_t mask = mp->g.inoalign_mask;

	first += xk_ag_min_freelist(mp, sb->agblocks);
	if (xk_sb_has_ro_compat(sb, XK_SB_FEAT_RO_COMPAT_FINOBT))
		first++;
	if (xk_sb_has_ro_compat(sb, XK_SB_FEAT_RO_COMPAT_RMAPBT))
		first++;
	if (xk_sb_has_ro_compat(sb, XK_SB_FEAT_RO_COMPAT_REFLINK))
		first++;
	if (sb->logstart && xk_fsb_to_agno(mp, sb->logstart) == 0)
		first += sb->logblocks;
	if ((sb->versionnum & XK_SB_VERSION_DALIGNBIT) && sb->unit && mask &&
	    !(sb->unit & mask))
		first = (first + sb->unit - 1) / sb->unit * sb->unit;
	else if ((sb->versionnum & XK_SB_VERSION_ALIGNBIT) &&
		 sb->inoalignmt > 1)
		first = (first + sb->inoalignmt - 1) / sb->inoalignmt *
			sb->inoalignmt;
	return first << sb->inopblog;
}

/*
 * xfs_repair reports a root directory that is not where it expects one
 * (every run, as a possible stripe unit change).  A new btree root can
 * move that place past an alignment boundary; the root inode cannot
 * follow, so such an upgrade is refused.
 */
static int
check_rootino(const struct xk_mount *mp, const struct xk_sb *want,
	      char *msg, size_t msglen)
{
	uint64_t before = expected_rootino(mp, &mp->sb);
	uint64_t after = expected_rootino(mp, want);

	if (before != mp->sb.rootino || after == before)
		return 0;
	snprintf(msg, msglen, "with the new btree roots xfs_repair expects "
		 "the root directory at inode %llu, this filesystem has it "
		 "at %llu (made with fewer per-AG btrees), and the root "
		 "inode cannot be moved: every xfs_repair run would report "
		 "it; nothing was changed", (unsigned long long)after,
		 (unsigned long long)mp->sb.rootino);
	return -EINVAL;
}

/*
 * The kernel's per-AG reservations summed over the AGs, as they come out
 * of the free blocks statfs reports: the metadata reservation (finobt
 * and refcountbt) beyond what those trees hold, the rmapbt's whole (its
 * blocks count as free space).
 */
static int
meta_resv_total(struct xk_mount *mp, uint64_t *total)
{
	struct xk_geom meta = mp->g, rmap = mp->g;
	struct xk_ag_resv_held none = { 0 };

	meta.has_rmapbt = 0;
	rmap.has_finobt = rmap.has_reflink = 0;
	*total = 0;
	for (uint32_t agno = 0; agno < mp->g.agcount; agno++) {
		struct xk_ag_resv_held h;
		uint64_t free, len;
		int err = xk_ag_resv_state(mp, agno, &free, &h);

		if (err)
			return err;
		len = xk_ag_blocks(mp, agno) - xk_ag_log_blocks(mp, agno);
		*total += xk_ag_resv_needed(&meta, len, len, &h) +
			  xk_ag_resv_needed(&rmap, len, len, &none);
	}
	return 0;
}

/* Every AG's free and tree blocks (sb_ag_space) into space[]. */
static int
ag_space_all(struct xk_mount *mp, uint64_t *space)
{
	for (uint32_t agno = 0; agno < mp->g.agcount; agno++) {
		int err = sb_ag_space(mp, agno, &space[agno]);

		if (err)
			return err;
	}
	return 0;
}

/*
 * The rebuilt trees took their blocks from the free space and gave the
 * old trees' back: an AG whose sum changed had blocks the metadata owns
 * in its free space, or blocks nothing owns outside it.
 */
static int
check_space(struct xk_mount *mp, const uint64_t *before, char *msg,
	    size_t msglen)
{
	for (uint32_t agno = 0; agno < mp->g.agcount; agno++) {
		uint64_t after;
		int err = sb_ag_space(mp, agno, &after);

		if (err) {
			snprintf(msg, msglen, "AG %u as rebuilt does not read "
				 "back: %s; nothing was changed", agno,
				 xk_strerror(err));
			return err;
		}
		if (after == before[agno])
			continue;
		snprintf(msg, msglen, "AG %u: its free space and btrees "
			 "hold %llu blocks, rebuilt from the blocks its "
			 "inodes, headers and log own %llu: the free space "
			 "does not match the owners (run xfskit-repair "
			 "first); nothing was changed", agno,
			 (unsigned long long)before[agno],
			 (unsigned long long)after);
		return XK_ECORRUPT;
	}
	return 0;
}

static void
set_features(struct xk_mount *mp, uint32_t ro_compat, uint32_t incompat)
{
	mp->sb.features_ro_compat = ro_compat;
	mp->sb.features_incompat = incompat;
	xk_mount_rederive(mp);
}

int
sb_build_new_trees(struct xk_mount *mp, const struct xk_sb *want,
		   struct xk_sb_upgrade *up, char *msg, size_t msglen)
{
	struct xk_sb old = mp->sb;
	struct xk_bld *b;
	uint64_t *space;
	int add_rmap = xk_sb_has_ro_compat(want, XK_SB_FEAT_RO_COMPAT_RMAPBT) &&
		       !mp->g.has_rmapbt;
	int err = check_rootino(mp, want, msg, msglen);

	if (err)
		return err;
	space = calloc(mp->g.agcount, sizeof(*space));
	if (!space) {
		snprintf(msg, msglen, "no memory for %u AGs", mp->g.agcount);
		return -ENOMEM;
	}
	err = meta_resv_total(mp, &up->resv_before);
	if (!err)
		err = ag_space_all(mp, space);
	if (err) {
		snprintf(msg, msglen, "the AG headers or btrees cannot be "
			 "read: %s (run xfskit-repair first)",
			 xk_strerror(err));
		free(space);
		return err;
	}
	if (add_rmap) {
		err = sb_open_observed(mp, &b, msg, msglen);
	} else {
		err = xk_bld_open(mp, &b);
		if (err)
			snprintf(msg, msglen, "the AG btrees cannot be read: "
				 "%s (run xfskit-repair first)",
				 xk_strerror(err));
	}
	if (err) {
		free(space);
		return err;
	}
	/* Loaded with the trees there are; rebuilt with the new set. */
	set_features(mp, want->features_ro_compat, want->features_incompat);
	err = xk_bld_commit(b);
	xk_bld_free(b);
	if (err == -ENOSPC)
		snprintf(msg, msglen, "an AG has no free blocks left for its "
			 "new btrees; nothing was changed");
	else if (err)
		snprintf(msg, msglen, "building the new btrees failed: %s; "
			 "nothing was changed", xk_strerror(err));
	if (!err) {
		err = xk_buf_seal(mp);
		if (err)
			snprintf(msg, msglen, "a rebuilt block fails its "
				 "verifier: %s; nothing was changed",
				 xk_strerror(err));
	}
	if (!err)
		err = check_space(mp, space, msg, msglen);
	if (!err && add_rmap)
		err = sb_check_owners(mp, msg, msglen);
	if (!err)
		err = sb_check_reservations(mp, msg, msglen);
	if (!err) {
		err = meta_resv_total(mp, &up->resv_after);
		if (err)
			snprintf(msg, msglen, "the rebuilt AGs do not read "
				 "back: %s", xk_strerror(err));
	}
	if (err) {
		xk_buf_discard_dirty(mp);
		mp->sb = old;
		xk_mount_rederive(mp);
	}
	free(space);
	return err;
}
