// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Superblocks: the primary was checked when the handle was opened; here
 * every secondary is read through the verifier and compared with the
 * primary's geometry fields.
 *
 * In: an open handle.  Out: a finding per bad or differing copy; in
 * repair, plan_sb_secondary marks the copies to rewrite from the primary.
 */
#include <stddef.h>
#include <string.h>

#include "repair.h"

/*
 * The geometry a secondary must share with the primary.  Inode numbers
 * and counters are left out: only the primary keeps them current, and
 * mkfs writes secondaries before the root inode exists.
 */
#define SB_FIELD(f) { #f, offsetof(struct xk_sb, f), sizeof(((struct xk_sb *)0)->f) }
static const struct {
	const char	*name;
	size_t		off, len;
} same_fields[] = {
	SB_FIELD(blocksize), SB_FIELD(dblocks), SB_FIELD(rblocks),
	SB_FIELD(rextents), SB_FIELD(uuid), SB_FIELD(logstart),
	SB_FIELD(rextsize), SB_FIELD(agblocks), SB_FIELD(agcount),
	SB_FIELD(rbmblocks), SB_FIELD(logblocks), SB_FIELD(versionnum),
	SB_FIELD(sectsize), SB_FIELD(inodesize), SB_FIELD(inopblock),
	SB_FIELD(blocklog), SB_FIELD(sectlog), SB_FIELD(inodelog),
	SB_FIELD(inopblog), SB_FIELD(agblklog), SB_FIELD(rextslog),
	SB_FIELD(imax_pct), SB_FIELD(inoalignmt), SB_FIELD(unit),
	SB_FIELD(width), SB_FIELD(dirblklog), SB_FIELD(logsectlog),
	SB_FIELD(logsectsize), SB_FIELD(logsunit), SB_FIELD(features2),
	SB_FIELD(features_compat), SB_FIELD(features_ro_compat),
	SB_FIELD(features_incompat), SB_FIELD(spino_align),
	SB_FIELD(meta_uuid),
};

static void
compare_with_primary(struct repair_ctx *rc, uint32_t agno, struct xk_buf *bp)
{
	struct xk_sb sec;
	const uint8_t *a = (const uint8_t *)&rc->mp->sb;
	const uint8_t *b = (const uint8_t *)&sec;

	xk_sb_decode(&sec, (const struct xk_dsb *)bp->data);
	/* (mkfs leaves inprogress set in the secondaries: it is not read.) */
	/*
	 * xfs_repair: "non-null user quota inode field in superblock N":
	 * a secondary names no quota inode but the primary's (growfs
	 * copies the primary's fields).
	 */
	{
		static const char *const which[] = { "user", "group",
						      "project" };
		const uint64_t mine[] = { sec.uquotino, sec.gquotino,
					  sec.pquotino };
		const uint64_t prim[] = { rc->mp->sb.uquotino,
					  rc->mp->sb.gquotino,
					  rc->mp->sb.pquotino };

		for (int q = 0; q < 3; q++)
			if (mine[q] && mine[q] != XK_NULLFSINO &&
			    mine[q] != prim[q] &&
			    report(rc, PR_SB_SECONDARY_BAD, "superblock",
				   agno, 0, bp->daddr, "quotino", "non-null "
				   "%s quota inode field in superblock %u "
				   "(%llu)", which[q], agno,
				   (unsigned long long)mine[q]))
				plan_sb_secondary(rc, agno);
	}
	/* xfs_repair: "non-null quota flags in superblock N". */
	if ((sec.qflags & ~rc->mp->sb.qflags) &&
	    report(rc, PR_SB_SECONDARY_BAD, "superblock", agno, 0, bp->daddr,
		   "qflags", "non-null quota flags in superblock %u (0x%x, "
		   "the primary 0x%x)", agno, sec.qflags, rc->mp->sb.qflags))
		plan_sb_secondary(rc, agno);
	if (sec.flags &&
	    report(rc, PR_SB_SECONDARY_BAD, "superblock", agno, 0, bp->daddr,
		   "flags", "bad flags field in superblock %u (0x%x: no flag "
		   "is defined)", agno, sec.flags))
		plan_sb_secondary(rc, agno);
	if (sec.bad_features2 != sec.features2 &&
	    report(rc, PR_SB_SECONDARY_BAD, "superblock", agno, 0, bp->daddr,
		   "bad_features2", "bad_features2 0x%x differs from "
		   "features2 0x%x", sec.bad_features2, sec.features2))
		plan_sb_secondary(rc, agno);
	for (size_t i = 0; i < sizeof(same_fields) / sizeof(same_fields[0]);
	     i++) {
		size_t o = same_fields[i].off, l = same_fields[i].len;
		uint64_t pv = 0, sv = 0;

		if (!memcmp(a + o, b + o, l))
			continue;
		/* The kernel sets these bits in the primary only, on use. */
		if (o == offsetof(struct xk_sb, versionnum) &&
		    ((rc->mp->sb.versionnum ^ sec.versionnum) &
		     ~(XK_SB_VERSION_ATTRBIT | XK_SB_VERSION_QUOTABIT)) == 0)
			continue;
		/*
		 * NEEDSREPAIR is the primary's alone: xfs_repair -n passes
		 * a copy that carries it (the repair clears it quietly).
		 */
		if (o == offsetof(struct xk_sb, features_incompat) &&
		    ((rc->mp->sb.features_incompat ^ sec.features_incompat) &
		     ~XK_SB_FEAT_INCOMPAT_NEEDSREPAIR) == 0)
			continue;
		if (l <= 8) {
			memcpy(&pv, a + o, l);
			memcpy(&sv, b + o, l);
		}
		if (report(rc, PR_SB_SECONDARY_DIFFERS, "superblock", agno,
			   0, bp->daddr, same_fields[i].name, "primary has "
			   "%llu (0x%llx), this copy %llu (0x%llx)",
			   (unsigned long long)pv, (unsigned long long)pv,
			   (unsigned long long)sv, (unsigned long long)sv))
			plan_sb_secondary(rc, agno);
	}
}

/*
 * The feature fields, where one damaged bit changes how everything else
 * is read.  Only the primary is kept current by the kernel, but none of
 * these changes after mkfs except through tools that write every copy
 * (and the attr and quota version bits, set in the primary on first
 * use, and NEEDSREPAIR, set in the primary only, which are left out of
 * the comparison).
 */
static const struct {
	const char	*name;
	size_t		off;
} vote_fields[] = {
	{ "versionnum", offsetof(struct xk_sb, versionnum) },
	{ "features2", offsetof(struct xk_sb, features2) },
	{ "features_compat", offsetof(struct xk_sb, features_compat) },
	{ "features_ro_compat", offsetof(struct xk_sb, features_ro_compat) },
	{ "features_incompat", offsetof(struct xk_sb, features_incompat) },
};

static uint32_t
vote_value(const struct xk_sb *sb, size_t i)
{
	uint32_t v;

	if (vote_fields[i].off == offsetof(struct xk_sb, versionnum))
		return sb->versionnum & (uint16_t)~(XK_SB_VERSION_ATTRBIT |
						    XK_SB_VERSION_QUOTABIT);
	memcpy(&v, (const uint8_t *)sb + vote_fields[i].off, sizeof(v));
	if (vote_fields[i].off == offsetof(struct xk_sb, features_incompat))
		v &= ~XK_SB_FEAT_INCOMPAT_NEEDSREPAIR;
	return v;
}

static void
vote_set(struct xk_sb *sb, size_t i, const struct xk_sb *from)
{
	if (vote_fields[i].off == offsetof(struct xk_sb, versionnum))
		sb->versionnum = (uint16_t)(from->versionnum |
			(sb->versionnum & (XK_SB_VERSION_ATTRBIT |
					   XK_SB_VERSION_QUOTABIT)));
	else if (vote_fields[i].off == offsetof(struct xk_sb,
						features_incompat))
		sb->features_incompat = vote_value(from, i) |
			(sb->features_incompat &
			 XK_SB_FEAT_INCOMPAT_NEEDSREPAIR);
	else
		memcpy((uint8_t *)sb + vote_fields[i].off,
		       (const uint8_t *)from + vote_fields[i].off,
		       sizeof(uint32_t));
}

/*
 * Whether same_fields[i] is voted on by vote_primary_features: not the
 * feature fields (voted with their masks), nor the size and AG count,
 * which a grow changes (the secondaries follow it, but a copy that
 * missed it must not shrink the filesystem; dblocks_voted below).  The UUIDs are: only
 * xfs_admin changes them, in every copy.
 */
static int
geometry_voted(size_t i)
{
	static const char *const not[] = {
		"versionnum", "features2", "features_compat",
		"features_ro_compat", "features_incompat", "dblocks",
		"agcount",
	};

	for (size_t j = 0; j < sizeof(not) / sizeof(not[0]); j++)
		if (!strcmp(same_fields[i].name, not[j]))
			return 0;
	return 1;
}

#define NSAME	(sizeof(same_fields) / sizeof(same_fields[0]))

/*
 * The size is voted one way: every secondary saying the filesystem is
 * larger than the primary says, by blocks its AG count covers and the
 * device holds, is a primary that lost blocks (a copy that missed a grow
 * is smaller, never larger).  Otherwise the primary's shortened size
 * would be written into every secondary and the last AG cut short.
 */
static int
dblocks_voted(const struct repair_ctx *rc, size_t i, const struct xk_sb *sec)
{
	const struct xk_sb *sb = &rc->mp->sb;
	uint64_t ag_end = (uint64_t)sb->agcount * sb->agblocks;

	return !strcmp(same_fields[i].name, "dblocks") &&
	       sec->dblocks > sb->dblocks && sec->agcount == sb->agcount &&
	       sec->dblocks > ag_end - sb->agblocks && sec->dblocks <= ag_end &&
	       sec->dblocks <= rc->mp->dev->size / sb->blocksize;
}

/*
 * The primary's feature and geometry fields against the secondaries: a
 * field on which every secondary that verifies agrees (at least two of
 * them, or the one there is) while the primary differs is damaged in the
 * primary, and takes their value, as xfs_repair takes the geometry most
 * copies share: nothing is ever judged, nor copied to the secondaries,
 * by a damaged primary.  The handle is then opened again from the
 * corrected superblock (its geometry derives from these fields).  In
 * repair the primary is rewritten.
 */
int
vote_primary_features(struct repair_ctx *rc)
{
	struct xk_mount *mp = rc->mp;
	struct xk_sb want = mp->sb, first;
	uint32_t nsec = 0, agree[5] = { 0 }, same[NSAME] = { 0 };
	int changed = 0, err;

	for (uint32_t agno = 1; agno < mp->g.agcount; agno++) {
		struct xk_buf *bp;
		struct xk_sb sec;

		err = xk_sb_read(mp, agno, XK_READ_SALVAGE, &bp);
		/* Memory or I/O: no vote on a partial electorate. */
		if (err && !bp && repair_oserr(rc, err, "reading superblock "
					       "%u", agno))
			return rc->found.error;
		/*
		 * A copy whose only fault is a UUID other than the
		 * primary's votes (the primary's may be the damaged one)
		 * when it has the primary's AG geometry, which the
		 * verifier checks after the UUID; so does one whose only
		 * fault is its size, the verifier's last check.
		 */
		if (err && !(bp && !bp->fail.crc_bad && bp->fail.check &&
			     (!strcmp(bp->fail.check, "uuid") ||
			      !strcmp(bp->fail.check, "dblocks")))) {
			xk_buf_release(bp);
			continue;
		}
		xk_sb_decode(&sec, (const struct xk_dsb *)bp->data);
		if (err && (sec.agcount != mp->sb.agcount ||
			    sec.agblocks != mp->sb.agblocks ||
			    sec.blocksize != mp->sb.blocksize)) {
			xk_buf_release(bp);
			continue;
		}
		xk_buf_release(bp);
		if (!nsec++)
			first = sec;
		for (size_t i = 0; i < 5; i++)
			if (vote_value(&sec, i) == vote_value(&first, i))
				agree[i]++;
		for (size_t i = 0; i < NSAME; i++)
			if (!memcmp((const uint8_t *)&sec + same_fields[i].off,
				    (const uint8_t *)&first +
				    same_fields[i].off, same_fields[i].len))
				same[i]++;
	}
	if (nsec == 0 || (nsec == 1 && mp->g.agcount > 2))
		return 0;
	for (size_t i = 0; i < 5; i++) {
		if (agree[i] != nsec ||
		    vote_value(&first, i) == vote_value(&mp->sb, i))
			continue;
		report(rc, PR_SB_PRIMARY_BAD, "superblock", 0, 0, 0,
		       vote_fields[i].name, "primary has 0x%x, all %u "
		       "secondaries 0x%x", vote_value(&mp->sb, i), nsec,
		       vote_value(&first, i));
		if (rc->found.error)
			return rc->found.error;
		/*
		 * -n too: the check goes on as the repair would, with the
		 * problem counted once (judged by the damaged value, each
		 * secondary and every structure the feature shapes would be
		 * findings the repair never meets).
		 */
		vote_set(&want, i, &first);
		changed = 1;
	}
	for (size_t i = 0; i < NSAME; i++) {
		size_t o = same_fields[i].off, l = same_fields[i].len;
		uint64_t pv = 0, sv = 0;

		if ((!geometry_voted(i) && !dblocks_voted(rc, i, &first)) ||
		    same[i] != nsec ||
		    !memcmp((const uint8_t *)&first + o,
			    (const uint8_t *)&mp->sb + o, l))
			continue;
		if (l <= 8) {
			memcpy(&pv, (const uint8_t *)&mp->sb + o, l);
			memcpy(&sv, (const uint8_t *)&first + o, l);
			report(rc, PR_SB_PRIMARY_BAD, "superblock", 0, 0, 0,
			       same_fields[i].name, "primary has %llu "
			       "(0x%llx), all %u secondaries %llu (0x%llx)",
			       (unsigned long long)pv, (unsigned long long)pv,
			       nsec, (unsigned long long)sv,
			       (unsigned long long)sv);
		} else {
			report(rc, PR_SB_PRIMARY_BAD, "superblock", 0, 0, 0,
			       same_fields[i].name, "the primary differs "
			       "from all %u secondaries", nsec);
		}
		if (rc->found.error)
			return rc->found.error;
		memcpy((uint8_t *)&want + o, (const uint8_t *)&first + o, l);
		changed = 1;
	}
	if (!changed)
		return 0;
	{
		struct xk_dev *dev = mp->dev;
		struct xk_fail f;

		/* Nothing was changed yet: the handle goes without writing. */
		mp->owns_dev = 0;
		xk_mount_discard(mp);
		rc->mp = NULL;
		memset(&f, 0, sizeof(f));
		err = xk_mount_from_sb(dev, &want, (rc->opt.no_modify ?
				       XK_MOUNT_RDONLY : 0) | (rc->opt.direct ?
				       XK_MOUNT_DIRECT : 0), &rc->mp, &f);
		if (err) {
			xk_dev_close(dev);
			return err;
		}
		rc->mp->owns_dev = 1;
	}
	if (!rc->opt.no_modify)
		plan_sb_primary(rc);
	return 0;
}

void
check_needsrepair(struct repair_ctx *rc)
{
	struct xk_sb *sb = &rc->mp->sb;

	if (!xk_sb_has_incompat(sb, XK_SB_FEAT_INCOMPAT_NEEDSREPAIR))
		return;
	sb->features_incompat &= ~XK_SB_FEAT_INCOMPAT_NEEDSREPAIR;
	/* A secondary's copy says nothing of the primary's mark. */
	if (rc->from_secondary)
		return;
	rc->needsrepair_found = 1;
	report(rc, PR_SB_NEEDSREPAIR, "superblock", 0, 0, 0, "needsrepair",
	       "the primary superblock carries the NEEDSREPAIR flag (a "
	       "repair or upgrade stopped before it finished): the kernel "
	       "refuses to mount it until a repair completes");
}

/* The log-incompatible bits a 6.18 kernel knows. */
#define LOG_INCOMPAT_KERNEL	(XK_SB_FEAT_LOG_INCOMPAT_XATTRS | \
				 XK_SB_FEAT_LOG_INCOMPAT_EXCHMAPS)

/* Whether the guard named the log's features as not checked (dirty log). */
static int
log_incompat_unchecked(const struct repair_ctx *rc)
{
	for (int i = 0; i < rc->found.nunsup; i++)
		if (!strcmp(rc->found.unsup[i].code, "log_incompat"))
			return 1;
	return 0;
}

/*
 * Primary fields that are not geometry and that xfs_repair corrects:
 *  1. the mkfs-in-progress flag: cleared;
 *  2. bad_features2 (where old kernels wrote features2) equal to
 *     features2: set to it;
 *  3. an LSN no log cycle can pass (xk_lsn_plausible): reset to 0, where
 *     xfs_repair formats the log in a negative cycle;
 *  4. the flags byte, where no flag is defined (xfs_repair 6.1 and 7.2
 *     call any bit bad, in every copy): cleared;
 *  5. log-incompatible bits no kernel knows, on a log with nothing to
 *     replay (guard.c lists them as not checked on a dirty one): they
 *     only say what records the log may hold, so none needs them, and
 *     the kernel's superblock write verifier refuses them (the mount
 *     passes them on a clean log; the first superblock write shuts the
 *     filesystem down).  All the bits are cleared, as the kernel clears
 *     the ones it knows on a clean log (older kernels know fewer).
 *     xfs_repair 6.1 and 7.2 -n pass them, and their repair stops at
 *     that write verifier.
 * Its LSN counts among the metadata's: one ahead of the log head (the
 * kernel refuses to mount: "Metadata has LSN ahead of current LSN") has
 * the log formatted past it at the end (xr_log_behind).
 */
static void
check_primary_fields(struct repair_ctx *rc)
{
	struct xk_sb *sb = &rc->mp->sb;

	if (!xk_lsn_plausible(sb->lsn) &&
	    report(rc, PR_SB_PRIMARY_BAD, "superblock", 0, 0, 0, "lsn",
		   "the LSN %u:%u is past any cycle a log can be formatted "
		   "in", (unsigned int)(sb->lsn >> 32), (unsigned int)sb->lsn)) {
		sb->lsn = 0;
		plan_sb_primary(rc);
	}
	xk_mount_note_lsn(rc->mp, sb->lsn);
	if (sb->inprogress &&
	    report(rc, PR_SB_PRIMARY_BAD, "superblock", 0, 0, 0, "inprogress",
		   "the mkfs-in-progress flag is %u", sb->inprogress)) {
		sb->inprogress = 0;
		plan_sb_primary(rc);
	}
	if (sb->bad_features2 != sb->features2 &&
	    report(rc, PR_SB_PRIMARY_BAD, "superblock", 0, 0, 0,
		   "bad_features2", "bad_features2 0x%x differs from "
		   "features2 0x%x", sb->bad_features2, sb->features2)) {
		sb->bad_features2 = sb->features2;
		plan_sb_primary(rc);
	}
	if (sb->flags &&
	    report(rc, PR_SB_PRIMARY_BAD, "superblock", 0, 0, 0, "flags",
		   "bad flags field in superblock 0 (0x%x: no flag is "
		   "defined)", sb->flags)) {
		sb->flags = 0;
		plan_sb_primary(rc);
	}
	if ((sb->features_log_incompat & ~LOG_INCOMPAT_KERNEL) &&
	    !log_incompat_unchecked(rc) &&
	    report(rc, PR_SB_PRIMARY_BAD, "superblock", 0, 0, 0,
		   "features_log_incompat", "unknown log-incompatible feature "
		   "bits 0x%x on a log with nothing to replay (the kernel "
		   "refuses to write a superblock carrying them)",
		   sb->features_log_incompat & ~LOG_INCOMPAT_KERNEL)) {
		/* Known ones too: the kernel clears them once the log is. */
		sb->features_log_incompat = 0;
		plan_sb_primary(rc);
	}
}

/*
 * Whether ino is a directory inode carrying its own number; an
 * operational error (recorded) when it could not be read.
 */
static int
is_dir_inode(struct repair_ctx *rc, uint64_t ino)
{
	struct xk_buf *bp;
	struct xk_dinode *dip;
	int ok, err;

	if (!xk_ino_valid(rc->mp, ino))
		return 0;
	err = xk_inode_read(rc->mp, ino, XK_READ_SALVAGE, &bp, &dip);
	if (err && !bp)
		return repair_oserr(rc, err, "reading the root inode %llu",
				    (unsigned long long)ino);
	ok = xk_be16_get(dip->di_magic) == XK_DINODE_MAGIC &&
	     xk_be64_get(dip->di_ino) == ino &&
	     (xk_be16_get(dip->di_mode) & XK_S_IFMT) == XK_S_IFDIR;
	xk_buf_release(bp);
	return ok;
}

/*
 * The primary's root and realtime inode numbers: the root must be a
 * directory, and mkfs puts the realtime bitmap and summary inodes right
 * after it (xfs_repair checks the same).  When they are wrong the repair
 * finds the root where mkfs puts it and corrects the copy in memory at
 * once, so the rest of the check judges the tree by the right root.
 */
static void
check_primary_inodes(struct repair_ctx *rc)
{
	struct xk_sb *sb = &rc->mp->sb;
	int root_ok = is_dir_inode(rc, sb->rootino);

	if (root_ok < 0)
		return;
	/*
	 * With the metadata tree the realtime inodes live in it: the
	 * superblock's words are 0.  Its root, sb_metadirino, is judged
	 * with the tree (phase_links.c, metadir.c).
	 */
	if (rc->mp->g.has_metadir) {
		if (!sb->rbmino && !sb->rsumino &&
		    (root_ok || xk_ino_valid(rc->mp, sb->rootino)))
			return;
		report(rc, PR_SB_PRIMARY_BAD, "superblock", 0, 0, 0,
		       "rootino", "root inode %llu%s, metadata root %llu, "
		       "realtime inodes %llu and %llu (0 with metadir)",
		       (unsigned long long)sb->rootino,
		       root_ok ? "" : " (not a directory)",
		       (unsigned long long)sb->metadirino,
		       (unsigned long long)sb->rbmino,
		       (unsigned long long)sb->rsumino);
		rc->plan.meta_refuse = 1;
		return;
	}
	/*
	 * Numbers where mkfs puts them: a root that is no longer a
	 * directory is rebuilt in its slot (phase_links.c).
	 */
	if (sb->rbmino == sb->rootino + 1 && sb->rsumino == sb->rootino + 2 &&
	    (root_ok || xk_ino_valid(rc->mp, sb->rootino)))
		return;
	if (!report(rc, PR_SB_PRIMARY_BAD, "superblock", 0, 0, 0, "rootino",
		    "root inode %llu%s, realtime inodes %llu and %llu",
		    (unsigned long long)sb->rootino,
		    root_ok ? "" : " (not a directory)",
		    (unsigned long long)sb->rbmino,
		    (unsigned long long)sb->rsumino))
		return;
	if (!root_ok)
		sb->rootino = XK_NULLFSINO;
	sb->rbmino = sb->rsumino = XK_NULLFSINO;
	secondary_sb_fixup(rc->mp);
	plan_sb_primary(rc);
}

int
phase_superblocks(struct repair_ctx *rc)
{
	struct xk_mount *mp = rc->mp;

	if (!rc->from_secondary) {
		check_primary_inodes(rc);
		check_primary_fields(rc);
	}
	/* xfs_repair's words, in its place (phase 2). */
	if (rc->needsrepair_found)
		xr_msg(rc, rc->opt.no_modify ? "would clear needsrepair flag "
		       "and regenerate metadata" : "clearing needsrepair flag "
		       "and regenerating metadata");
	for (uint32_t agno = 1; agno < mp->g.agcount; agno++) {
		struct xk_buf *bp;
		int err = xk_sb_read(mp, agno, XK_READ_SALVAGE, &bp);

		if (err && !bp && repair_oserr(rc, err, "reading the "
					       "superblock of AG %u", agno))
			break;
		if (err && !bp) {
			struct xk_fail f = { .structure = "superblock",
					     .agno = agno };

			f.daddr = xk_ag_hdr_daddr(mp, agno, XK_SB_SECTOR);
			xk_fail_set(&f, "read", "%s", xk_strerror(err));
			if (fix_problem(rc, PR_SB_SECONDARY_BAD, &f))
				plan_sb_secondary(rc, agno);
			continue;
		}
		if (err && fix_problem(rc, PR_SB_SECONDARY_BAD, &bp->fail))
			plan_sb_secondary(rc, agno);
		else if (!err)
			compare_with_primary(rc, agno, bp);
		xk_buf_release(bp);
	}
	return rc->found.error;
}
