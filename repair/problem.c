// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The problem table: each finding's plain-language prefix, and the one
 * gate (fix_problem) that reports, counts and decides.
 */
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
