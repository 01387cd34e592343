/* SPDX-License-Identifier: GPL-2.0-or-later */
/* State shared by the phases of xfskit-repair. */
#ifndef XFSKIT_REPAIR_H
#define XFSKIT_REPAIR_H

#include <stdio.h>

#include <xfskit/libfs.h>

/* Exit codes (documented in xfskit-repair(8)). */
#define REPAIR_EXIT_CLEAN	0
#define REPAIR_EXIT_CORRUPT	1
#define REPAIR_EXIT_USAGE	3
#define REPAIR_EXIT_ERROR	4

/* Every kind of finding, one line each in problem.c's table. */
enum problem {
	PR_SB_PRIMARY_BAD,
	PR_SB_SECONDARY_BAD,
	PR_SB_SECONDARY_DIFFERS,
	PR_AGF_BAD,
	PR_AGI_BAD,
	PR_AGFL_BAD,
	PR_BTREE_BAD,
	PR_NR
};

struct repair_ctx {
	struct xk_mount	*mp;
	const char	*device;
	int		no_modify;
	int		verbose;
	FILE		*out;
	unsigned long	counts[PR_NR];
	unsigned long	nproblems;
};

/*
 * The one gate every finding passes: prints it, counts it, and says
 * whether the caller may fix it (never under -n).
 */
int fix_problem(struct repair_ctx *rc, enum problem pr,
		const struct xk_fail *f);

int phase_superblocks(struct repair_ctx *rc);
int phase_ag_headers(struct repair_ctx *rc);

#endif /* XFSKIT_REPAIR_H */
