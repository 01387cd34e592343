// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The problem table: each finding's plain-language prefix, and the one
 * gate (fix_problem) that reports, counts and decides.
 */
#include <stdarg.h>
#include <string.h>

#include "repair.h"

static const struct {
	const char	*what;
} problems[PR_NR] = {
	[PR_SB_PRIMARY_BAD]	  = { "primary superblock is bad" },
	[PR_SB_SECONDARY_BAD]	  = { "secondary superblock is bad" },
	[PR_SB_SECONDARY_DIFFERS] = { "secondary superblock differs from "
				      "the primary" },
	[PR_AGF_BAD]		  = { "AGF is bad" },
	[PR_AGI_BAD]		  = { "AGI is bad" },
	[PR_AGFL_BAD]		  = { "AGFL is bad" },
	[PR_BTREE_BAD]		  = { "btree is bad" },
	[PR_AGF_COUNTER]	  = { "AGF counter is wrong" },
	[PR_AGI_COUNTER]	  = { "AGI counter is wrong" },
	[PR_CNTBT_MISMATCH]	  = { "free space btrees disagree" },
	[PR_FINOBT_MISMATCH]	  = { "finobt disagrees with inobt" },
	[PR_INODE_BAD]		  = { "inode is bad" },
	[PR_INODE_STATE]	  = { "inode allocation state is wrong" },
	[PR_FORK_BAD]		  = { "inode fork is bad" },
	[PR_DIR_BAD]		  = { "directory is bad" },
	[PR_ATTR_BAD]		  = { "extended attributes are bad" },
	[PR_SYMLINK_BAD]	  = { "symlink is bad" },
	[PR_SPACE_CONFLICT]	  = { "block claimed twice" },
	[PR_SPACE_LOST]		  = { "block is neither free nor used" },
	[PR_RMAP_MISMATCH]	  = { "reverse mapping is wrong" },
	[PR_REFCOUNT_MISMATCH]	  = { "reference count is wrong" },
	[PR_NLINK]		  = { "link count is wrong" },
	[PR_DISCONNECTED]	  = { "inode is disconnected" },
};

int
fix_problem(struct repair_ctx *rc, enum problem pr, const struct xk_fail *f)
{
	char line[512];

	rc->counts[pr]++;
	rc->nproblems++;
	xk_fail_format(f, line, sizeof(line));
	fprintf(rc->out, "%s: %s\n", problems[pr].what, line);
	/* Repairs arrive with the repair issue; until then, report only. */
	return 0;
}

int
report(struct repair_ctx *rc, enum problem pr, const char *structure,
       int64_t agno, uint64_t ino, uint64_t daddr, const char *check,
       const char *fmt, ...)
{
	struct xk_fail f;
	va_list ap;

	memset(&f, 0, sizeof(f));
	f.structure = structure;
	f.agno = agno;
	f.ino = ino;
	f.daddr = daddr;
	f.check = check;
	va_start(ap, fmt);
	vsnprintf(f.detail, sizeof(f.detail), fmt, ap);
	va_end(ap);
	return fix_problem(rc, pr, &f);
}
