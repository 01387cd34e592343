// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The check, phase by phase, on an open handle.  Kept apart from main()
 * so that the fuzzing harness runs exactly what the tool runs.
 */
#include <stdlib.h>

#include "repair.h"

#define CHECK_CACHE_BYTES	(32ULL << 20)

static void
phase(struct repair_ctx *rc, const char *what)
{
	if (rc->progress && !rc->verbose) {
		fprintf(stderr, "\r\033[K%s", what);
		fflush(stderr);
	}
	if (rc->verbose)
		fprintf(rc->out, "%s\n", what);
}

static void
ctx_free(struct repair_ctx *rc)
{
	for (uint32_t agno = 0; agno < rc->mp->g.agcount; agno++) {
		struct ag_scan *as = &rc->ags[agno];

		claims_free(&as->used);
		claims_free(&as->freesp);
		claims_free(&as->cntsp);
		claims_free(&as->rmaps);
		claims_free(&as->refcs);
		free(as->chunks);
		free(as->fchunks);
	}
	free(rc->ags);
	free(rc->inodes);
	free(rc->edges);
	rc->ags = NULL;
	rc->inodes = NULL;
	rc->edges = NULL;
}

int
repair_check(struct repair_ctx *rc)
{
	rc->ags = calloc(rc->mp->g.agcount, sizeof(*rc->ags));
	if (!rc->ags)
		return -ENOMEM;
	/*
	 * The scan reads each block once or twice in quick succession, so
	 * a small cache keeps nearly every hit and bounds memory.
	 */
	if (!rc->cache_bytes)
		rc->cache_bytes = CHECK_CACHE_BYTES;
	xk_mount_set_cache_limit(rc->mp, rc->cache_bytes);
	phase(rc, "Phase 1 - find and verify superblock...");
	phase_superblocks(rc);
	phase(rc, "Phase 2 - scan AG headers and btrees...");
	phase_ag_headers(rc);
	phase(rc, "Phase 3 - check every inode...");
	phase_inodes(rc);
	phase(rc, "Phase 4 - check space ownership, free space, rmap and "
	      "refcount...");
	phase_space(rc);
	phase(rc, "Phase 5 - check directory connectivity and link "
	      "counts...");
	phase_links(rc);
	phase(rc, "Phase 6 - check superblock counters...");
	phase_counters(rc);
	ctx_free(rc);
	return 0;
}
