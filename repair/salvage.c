// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Inode core rules that the check and the fix share: salvaging a core
 * that fails its verifier (the check reads on from a salvaged copy, the
 * fix writes the same copy), removing an attr fork from a core, and the
 * timestamps with out-of-range nanoseconds.  Pure functions of the
 * inode and the geometry, kept apart so that no check calls into a fix.
 */
#include <string.h>

#include <xfskit/init.h>

#include "repair.h"

/*
 * The extent counters brought within what each fork's format can hold:
 * none in a local or device fork or without an attr fork, no more than
 * fit an extent list (the fork walk then counts the real ones).  A btree
 * fork's counter is only checked against the bmbt by the walk.  Returns
 * whether a counter changed.
 */
static int
clamp_counters(const struct xk_mount *mp, struct xk_dinode *dip)
{
	uint64_t n[2];
	int changed = 0;

	for (int fork = XK_DATA_FORK; fork <= XK_ATTR_FORK; fork++) {
		uint64_t want = n[fork] = xk_dinode_fork_nextents(dip, fork);
		unsigned int size = xk_dfork_size(dip, mp->g.inodesize, fork);

		if (fork == XK_ATTR_FORK && !dip->di_forkoff)
			want = 0;
		else if (xk_dfork_format(dip, fork) == XK_DINODE_FMT_EXTENTS &&
			 want > size / sizeof(struct xk_bmbt_rec))
			want = size / sizeof(struct xk_bmbt_rec);
		else if (xk_dfork_format(dip, fork) == XK_DINODE_FMT_LOCAL ||
			 xk_dfork_format(dip, fork) == XK_DINODE_FMT_DEV)
			want = 0;
		if (want != n[fork]) {
			n[fork] = want;
			changed = 1;
		}
	}
	if (changed)
		xk_dinode_set_nextents(dip, n[XK_DATA_FORK], n[XK_ATTR_FORK]);
	return changed;
}

/*
 * The byte where a regular file's extent list ends (a size that shows
 * every block it maps); XK_ECORRUPT for any other data fork format.
 */
static int
extent_list_end(const struct xk_mount *mp, const struct xk_dinode *dip,
		uint64_t *end)
{
	const struct xk_bmbt_rec *recs = (const void *)xk_dfork_dptr(dip);
	uint64_t nex = xk_dinode_nextents(dip), last = 0;

	if (dip->di_format != XK_DINODE_FMT_EXTENTS ||
	    nex > xk_dfork_dsize(dip, mp->g.inodesize) / sizeof(*recs))
		return XK_ECORRUPT;
	for (uint64_t i = 0; i < nex; i++) {
		struct xk_bmbt_irec r;

		xk_bmbt_rec_unpack(&recs[i], &r);
		if (xk_fileext_valid(mp, r.startoff, r.blockcount) &&
		    r.startoff + r.blockcount > last)
			last = r.startoff + r.blockcount;
	}
	*end = last << mp->g.blocklog;
	return 0;
}

/* No attr fork: offset, format and counter reset, its bytes zeroed. */
static void
drop_attr_fork_core(const struct xk_mount *mp, struct xk_dinode *dip)
{
	if (dip->di_forkoff)
		memset(xk_dfork_ptr(dip, XK_ATTR_FORK), 0,
		       xk_dfork_size(dip, mp->g.inodesize, XK_ATTR_FORK));
	dip->di_forkoff = 0;
	dip->di_aformat = XK_DINODE_FMT_EXTENTS;
	xk_dinode_set_nextents(dip, xk_dinode_nextents(dip), 0);
}

/*
 * A user's inode that carries the metadata flag (metadir): it fails a
 * metadata inode's rule (check) and has what no metadata inode has,
 * permission bits or an owner.  The flag is what is wrong: it goes,
 * with the metafile type kept in di_onlink (xfs_repair 7.2 clears the
 * inode).  A metadata inode is never written so, by mkfs or the kernel.
 */
static int
user_flagged_metadata(const struct xk_mount *mp, const struct xk_dinode *dip,
		      const char *check)
{
	static const char *const rules[] = {
		"metatype", "flushiter", "mode", "dmevmask", "uid", "flags",
	};
	int rule = 0;

	if (!mp->g.has_metadir ||
	    !(xk_be64_get(dip->di_flags2) & XK_DIFLAG2_METADATA))
		return 0;
	for (size_t i = 0; i < sizeof(rules) / sizeof(rules[0]); i++)
		rule |= !strcmp(check, rules[i]);
	return rule && ((xk_be16_get(dip->di_mode) & 0777) ||
			xk_be32_get(dip->di_uid) || xk_be32_get(dip->di_gid));
}

/*
 * Reset what can be derived, one failed rule at a time (the verifier
 * stops at the first), until the core verifies or a rule fails whose
 * field cannot be derived:
 *  1. magic and version (only when the rest then verifies);
 *  2. di_onlink (always 0 in v3 inodes), di_ino, di_uuid, di_lsn, a
 *     di_next_unlinked outside the AG (set to null), and the realtime
 *     flag without a realtime device (dropped);
 *  3. the CRC, recomputed (the LSN it did not vouch for set to 0);
 *  4. unknown or unsupported di_flags2 bits cleared (features the
 *     filesystem lacks, DAX beside reflink);
 *  5. extent size hints that break their rules dropped (flag and value);
 *  6. an attr fork of no known format (or a format without a fork
 *     offset) removed, as xfs_repair does; likewise a fork offset past
 *     the literal area when the data fork is not local (the file is
 *     kept, its xattrs are lost; xfs_repair clears the file);
 *  6a. a regular file's negative size set to the end of its extent
 *     list (xfs_repair clears the file);
 *  7. extent counters that the fork's format cannot hold brought within
 *     it (clamp_counters; the fork walk counts the real ones); an attr
 *     fork whose shape still does not fit emptied (the file stays);
 *  7a. the metadata flag of a user's inode (user_flagged_metadata);
 *  8. di_nblocks set to the extent count, the least the verifier takes
 *     (the fork scan counts the real value next pass); a btree fork's
 *     counter too large for any block count lowered to fit (the bmbt
 *     walk counts the real one).
 * Anything else (mode, formats, sizes, fork offsets) means the inode is
 * not trusted and is cleared.
 */
int
salvage_core(struct repair_ctx *rc, uint64_t ino, struct xk_dinode *dip)
{
	struct xk_mount *mp = rc->mp;

	/*
	 * A CRC that did not match vouches for no field, the LSN included:
	 * kept, a damaged LSN would look newer than the log (the log
	 * formatted in a cycle it made up) and could make the kernel's log
	 * recovery skip the inode's items.  0 is "never logged".
	 */
	if (!xk_cksum_ok(dip, mp->g.inodesize, XK_DINODE_CRC_OFF))
		xk_be64_set(&dip->di_lsn, 0);
	for (int round = 0; round < 12; round++) {
		struct xk_fail f;
		uint64_t fl2 = xk_be64_get(dip->di_flags2), end;
		uint16_t fl = xk_be16_get(dip->di_flags);

		memset(&f, 0, sizeof(f));
		xk_inode_init_crc(mp, dip);
		if (xk_dinode_verify_copy(mp, ino, dip, &f) == 0)
			return 0;
		if (!f.check)
			return XK_ECORRUPT;
		if (user_flagged_metadata(mp, dip, f.check)) {
			xk_be64_set(&dip->di_flags2, fl2 & ~XK_DIFLAG2_METADATA);
			xk_be16_set(&dip->di_onlink, 0);
		} else if (!strcmp(f.check, "magic")) {
			xk_be16_set(&dip->di_magic, XK_DINODE_MAGIC);
		} else if (!strcmp(f.check, "version")) {
			dip->di_version = XK_DINODE_VERSION_3;
		} else if (!strcmp(f.check, "onlink")) {
			xk_be16_set(&dip->di_onlink, 0);
		} else if (!strcmp(f.check, "ino")) {
			xk_be64_set(&dip->di_ino, ino);
		} else if (!strcmp(f.check, "uuid")) {
			memcpy(dip->di_uuid, mp->meta_uuid, 16);
		} else if (!strcmp(f.check, "lsn")) {
			xk_be64_set(&dip->di_lsn, 0);
		} else if (!strcmp(f.check, "next_unlinked")) {
			xk_be32_set(&dip->di_next_unlinked, XK_NULLAGINO);
		} else if (!strcmp(f.check, "flags") &&
			   (fl & XK_DIFLAG_REALTIME) && !mp->sb.rblocks) {
			/* As xfs_repair: the flag goes, not the file. */
			xk_be16_set(&dip->di_flags,
				    fl & (uint16_t)~XK_DIFLAG_REALTIME);
		} else if (!strcmp(f.check, "flags2")) {
			fl2 &= XK_DIFLAG2_ANY;
			if (!mp->g.has_reflink ||
			    (xk_be16_get(dip->di_mode) & XK_S_IFMT) !=
			    XK_S_IFREG)
				fl2 &= ~(XK_DIFLAG2_REFLINK |
					 XK_DIFLAG2_COWEXTSIZE);
			/* Reflink wins over DAX, which is only a hint. */
			if (fl2 & XK_DIFLAG2_REFLINK)
				fl2 &= ~XK_DIFLAG2_DAX;
			/*
			 * Without their features the inode was written
			 * without them: the flag is what is wrong.
			 */
			if (!mp->g.has_bigtime)
				fl2 &= ~XK_DIFLAG2_BIGTIME;
			if (!mp->g.has_nrext64)
				fl2 &= ~XK_DIFLAG2_NREXT64;
			if (fl2 == xk_be64_get(dip->di_flags2))
				return XK_ECORRUPT;
			xk_be64_set(&dip->di_flags2, fl2);
		} else if (!strcmp(f.check, "extsize")) {
			xk_be16_set(&dip->di_flags, fl & ~(XK_DIFLAG_EXTSIZE |
						XK_DIFLAG_EXTSZINHERIT));
			xk_be32_set(&dip->di_extsize, 0);
		} else if (!strcmp(f.check, "cowextsize")) {
			xk_be64_set(&dip->di_flags2,
				    fl2 & ~XK_DIFLAG2_COWEXTSIZE);
			xk_be32_set(&dip->di_cowextsize, 0);
		} else if (!strcmp(f.check, "forkoff") &&
			   xk_dfork_format(dip, XK_DATA_FORK) !=
			   XK_DINODE_FMT_LOCAL) {
			/* Only the attrs are lost: the data fork grows. */
			dip->di_forkoff = 0;
			drop_attr_fork_core(mp, dip);
		} else if (!strcmp(f.check, "size") &&
			   (xk_be64_get(dip->di_size) >> 63) &&
			   (xk_be16_get(dip->di_mode) & XK_S_IFMT) ==
			   XK_S_IFREG) {
			if (extent_list_end(mp, dip, &end))
				return XK_ECORRUPT;
			xk_be64_set(&dip->di_size, end);
		} else if (!strcmp(f.check, "aformat")) {
			/*
			 * As xfs_repair: an attr fork of no known format
			 * goes, the file stays (the data fork keeps its
			 * place at the start of the literal area).
			 */
			drop_attr_fork_core(mp, dip);
		} else if (!strcmp(f.check, "attr fork")) {
			/*
			 * An attr fork whose shape the core cannot hold (a
			 * btree root that does not fit, as a fuzzed format
			 * leaves): its counter first, else the attr fork
			 * goes and the file stays, as xfs_repair keeps it.
			 * The fork offset stays: a btree data fork's root
			 * is laid out by it.
			 */
			if (!clamp_counters(mp, dip)) {
				memset(xk_dfork_ptr(dip, XK_ATTR_FORK), 0,
				       xk_dfork_size(dip, mp->g.inodesize,
						     XK_ATTR_FORK));
				dip->di_aformat = XK_DINODE_FMT_EXTENTS;
				xk_dinode_set_nextents(dip,
						       xk_dinode_nextents(dip),
						       0);
			}
		} else if (!strcmp(f.check, "nextents") ||
			   !strcmp(f.check, "anextents") ||
			   !strcmp(f.check, "data fork")) {
			if (!clamp_counters(mp, dip))
				return XK_ECORRUPT;
		} else if (!strcmp(f.check, "nblocks")) {
			/* Enough for the verifier; the next pass recounts. */
			uint64_t want, nex[2];

			if (clamp_counters(mp, dip))
				continue;
			nex[0] = xk_dinode_nextents(dip);
			nex[1] = xk_dinode_anextents(dip);
			for (int k = 0; k < 2; k++)
				if (nex[k] > mp->sb.dblocks &&
				    xk_dfork_format(dip, k) ==
				    XK_DINODE_FMT_BTREE)
					nex[k] = 1;
			xk_dinode_set_nextents(dip, nex[0], nex[1]);
			want = nex[0] + nex[1];
			if (want > mp->sb.dblocks)
				return XK_ECORRUPT;
			if (want > xk_be64_get(dip->di_nblocks))
				xk_be64_set(&dip->di_nblocks, want);
		} else if (strcmp(f.check, "crc") != 0) {
			return XK_ECORRUPT;
		}
	}
	return XK_ECORRUPT;
}

/* The legacy (seconds, nanoseconds) timestamps with nanoseconds >= 10^9. */
unsigned int
bad_nsec_mask(const struct xk_dinode *dip)
{
	const xk_timestamp *ts[4] = { &dip->di_atime, &dip->di_mtime,
				      &dip->di_ctime, &dip->di_crtime };
	unsigned int mask = 0;

	if (xk_be64_get(dip->di_flags2) & XK_DIFLAG2_BIGTIME)
		return 0;
	for (int i = 0; i < 4; i++)
		if ((xk_be64_get(*ts[i]) & 0xffffffffu) >= 1000000000u)
			mask |= 1u << i;
	return mask;
}
