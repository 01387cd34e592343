// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The run's last line, with our report on (a terminal, --report, -v,
 * XFSKIT_REPAIR_REPORT=1): the verdict, then the filesystem as the last
 * check pass counted it (inodes in use by the inobt records; data
 * device blocks not free, of all).
 *
 *   clean: 1234 inodes, 5678 of 76800 blocks used
 *   clean after 1 change; ...                       (a log replayed, -L)
 *   repaired: 3 problems, 5 changes; 1234 inodes, 5678 of 76800 blocks used
 *   corrupt: 3 problems found, nothing written; ...            (-n)
 *   not repaired: 2 of 3 problems left; ...
 *   not checked in full: 0 problems found elsewhere; ...       (exit 5)
 *
 * xfs_repair's lines alone (piped or redirected without --report) end
 * with its "done" and nothing after it: scripts diff them whole.
 */
#include <stdio.h>
#include <string.h>

#include "repair.h"

void
summary_line(struct repair_ctx *rc, int status)
{
	unsigned long found = rc->found.first_problems;
	const char *s = found == 1 ? "" : "s";
	char what[160], size[160];

	if (status == REPAIR_EXIT_UNCHECKED)
		snprintf(what, sizeof(what), "not checked in full: %lu "
			 "problem%s found elsewhere", found, s);
	else if (!found && action_count(rc))
		/* A log replayed or zeroed (-L): written, though no finding. */
		snprintf(what, sizeof(what), "clean after %lu change%s",
			 action_count(rc), action_count(rc) == 1 ? "" : "s");
	else if (!found)
		snprintf(what, sizeof(what), "clean");
	else if (rc->opt.no_modify)
		snprintf(what, sizeof(what), "corrupt: %lu problem%s found, "
			 "nothing written", found, s);
	else if (status == REPAIR_EXIT_CORRUPT)
		snprintf(what, sizeof(what), "not repaired: %lu of %lu "
			 "problem%s left", rc->tally.left, found, s);
	else
		snprintf(what, sizeof(what), "repaired: %lu problem%s, %lu "
			 "change%s", found, s, action_count(rc),
			 action_count(rc) == 1 ? "" : "s");
	if (rc->tally.counted)
		snprintf(size, sizeof(size), "%llu inodes, %llu of %llu "
			 "blocks used", (unsigned long long)rc->tally.inodes,
			 (unsigned long long)rc->tally.used,
			 (unsigned long long)rc->tally.blocks);
	else
		snprintf(size, sizeof(size), "inodes and blocks not counted "
			 "(an AG's btrees are damaged)");
	fprintf(rc->out, "%s%s%s\n", what, strcmp(what, "clean") ? "; " :
		": ", size);
}
