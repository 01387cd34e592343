// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The check, phase by phase, on an open handle.  Kept apart from main()
 * so that the fuzzing harness runs exactly what the tool runs.
 */
#include <malloc.h>
#include <stdlib.h>
#include <string.h>

#include "repair.h"
#include "phase_quota.h"

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

/*
 * The scan's threads grow their lists and caches together.  With glibc's
 * defaults, each growth of a thread's heap is an mprotect, which takes
 * the address space lock for writing while the other thread's page
 * faults wait for it (a third of the blocking on a cold 1,000,000-inode
 * check); and freeing one large block raises the threshold above which
 * blocks are mapped on their own, so that the large lists grown after it
 * are copied on every realloc instead of remapped.  A fixed threshold
 * keeps large lists mapped (grown by mremap), and a larger pad grows the
 * heaps in fewer steps.  Untouched pad is not resident: the peak RSS
 * does not change.
 */
static void
malloc_tuning(void)
{
	mallopt(M_MMAP_THRESHOLD, 256 << 10);
	mallopt(M_TOP_PAD, 16 << 20);
}

void
repair_scan_free(struct repair_ctx *rc)
{
	for (uint32_t agno = 0; rc->ags && agno < rc->mp->g.agcount; agno++) {
		struct ag_scan *as = &rc->ags[agno];

		claims_free(&as->used);
		claims_free(&as->freesp);
		claims_free(&as->cntsp);
		claims_free(&as->rmaps);
		claims_free(&as->refcs);
		free(as->chunks);
		free(as->fchunks);
		free(as->seen_free);
	}
	free(rc->ags);
	action_scan_free(rc);	/* its index into the lists */
	xk_vec_free(&rc->inode_vec);
	xk_vec_free(&rc->edge_vec);
	free(rc->ifix.v);
	free(rc->sb_bad);
	free(rc->orphans);
	free(rc->dirfix);
	lf_plan_free(rc);
	quota_free(rc);
	rc->dirfix = NULL;
	rc->ndirfix = rc->capdirfix = 0;
	rc->orphans = NULL;
	rc->norphans = rc->caporphans = 0;
	rc->ags = NULL;
	memset(&rc->ifix, 0, sizeof(rc->ifix));
	rc->sb_bad = NULL;
}

int
repair_scan(struct repair_ctx *rc)
{
	rc->ags = calloc(rc->mp->g.agcount, sizeof(*rc->ags));
	rc->sb_bad = calloc(rc->mp->g.agcount, 1);
	if (!rc->ags || !rc->sb_bad) {
		repair_scan_free(rc);
		return -ENOMEM;
	}
	ags_attach_spill(rc);
	/*
	 * The scan reads each block once or twice in quick succession, so
	 * a small cache keeps nearly every hit and bounds memory.
	 */
	if (!rc->cache_bytes)
		rc->cache_bytes = CHECK_CACHE_BYTES;
	xk_mount_set_cache_limit(rc->mp, rc->cache_bytes);
	malloc_tuning();
	phase(rc, "Phase 1 - find and verify superblock...");
	phase_superblocks(rc);
	phase(rc, "Phase 2 - scan AG headers and btrees...");
	phase_ag_headers(rc);
	if (rc->keep) {
		/* Only AG structures were rewritten since the last pass. */
		phase(rc, "Phase 3 - inodes as the last pass saw them...");
		phase_inodes_kept(rc);
	} else {
		phase(rc, "Phase 3 - check every inode...");
		phase_inodes(rc);
		phase_find_chunks(rc);
	}
	lists_report(rc);
	phase(rc, "Phase 4 - check space ownership, free space, rmap and "
	      "refcount...");
	phase_space(rc);
	/* Repair: maps the rmapbt can restore (a no-op under -n). */
	plan_rmap_forks(rc);
	phase(rc, "Phase 5 - check directory connectivity and link "
	      "counts...");
	phase_links(rc);
	phase(rc, "Phase 6 - check superblock counters...");
	phase_counters(rc);
	phase(rc, "Phase 7 - check quota inodes and usage...");
	phase_quota(rc);
	if (rc->mp->g.has_parent) {
		phase(rc, "Phase 8 - check parent pointers...");
		phase_pptr(rc);
	}
	return 0;
}

int
repair_check(struct repair_ctx *rc)
{
	int err = repair_scan(rc);

	repair_scan_free(rc);
	return err;
}
