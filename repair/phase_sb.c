// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Superblocks: the primary was checked when the handle was opened; here
 * every secondary is read through the verifier and compared with the
 * primary's geometry fields.
 *
 * In: an open handle.  Out: a finding per bad or differing copy.
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
		if (l <= 8) {
			memcpy(&pv, a + o, l);
			memcpy(&sv, b + o, l);
		}
		report(rc, PR_SB_SECONDARY_DIFFERS, "superblock", agno, 0,
		       bp->daddr, same_fields[i].name, "primary has %llu "
		       "(0x%llx), this copy %llu (0x%llx)",
		       (unsigned long long)pv, (unsigned long long)pv,
		       (unsigned long long)sv, (unsigned long long)sv);
	}
}

int
phase_superblocks(struct repair_ctx *rc)
{
	struct xk_mount *mp = rc->mp;

	for (uint32_t agno = 1; agno < mp->g.agcount; agno++) {
		struct xk_buf *bp;
		int err = xk_sb_read(mp, agno, XK_READ_SALVAGE, &bp);

		if (err && !bp) {
			struct xk_fail f = { .structure = "superblock",
					     .agno = agno };

			f.daddr = xk_ag_hdr_daddr(mp, agno, XK_SB_SECTOR);
			xk_fail_set(&f, "read", "%s", xk_strerror(err));
			fix_problem(rc, PR_SB_SECONDARY_BAD, &f);
			continue;
		}
		if (err)
			fix_problem(rc, PR_SB_SECONDARY_BAD, &bp->fail);
		else
			compare_with_primary(rc, agno, bp);
		xk_buf_release(bp);
	}
	return 0;
}
