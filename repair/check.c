// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The check, phase by phase, on an open handle.  Kept apart from main()
 * so that the fuzzing harness runs exactly what the tool runs.
 */
#include <malloc.h>
#include <stdlib.h>
#include <string.h>

#include "repair.h"
#include "reasm.h"
#include "phase_quota.h"

#define CHECK_CACHE_BYTES	(32ULL << 20)

/*
 * One of our phases begins: N numbers it for --progress-fd, WHAT names
 * it for -v (a step under xfs_repair's phase lines, report_xfs.c).
 */
static void
phase(struct repair_ctx *rc, int n, const char *what, const char *doing)
{
	rc->phase_what = doing;
	/* A progress-fd consumer sees the phase start. */
	progress_fd_line(rc, n, 0, 1);
	if (rc->opt.verbose) {
		live_clear(rc);
		fprintf(rc->out, "        - %s\n", what);
	}
}

/* Phase 2's last step: the root inode's chunk is in the inode btree. */
static void
root_chunk_found(struct repair_ctx *rc)
{
	struct xk_mount *mp = rc->mp;
	uint64_t root = mp->sb.rootino;
	uint32_t agno = xk_ino_to_agno(mp, root);
	uint32_t agino = xk_ino_to_agino(mp, root);

	if (agno >= mp->g.agcount)
		return;
	/* xfs_repair looks in the inobt alone (ours may come from the rmapbt). */
	for (size_t i = 0; !rc->scan.ags[agno].xr_agi_lost &&
	     i < rc->scan.ags[agno].chunks.n; i++) {
		uint32_t start = xk_be32_get(rc->scan.ags[agno].chunks.v[i]
					     .ir_startino);

		if (agino >= start && agino - start < XK_INODES_PER_CHUNK) {
			xr_step(rc, "found root inode chunk");
			return;
		}
	}
	/* Not a finding of its own: the one before it stays printed. */
	xr_flush(rc);
	xr_msg(rc, "root inode chunk not found");
}

/* "agno = N" for each AG, as xfs_repair lists the AGs a step went over. */
static void
ag_steps(struct repair_ctx *rc)
{
	for (uint32_t agno = 0; agno < rc->mp->g.agcount; agno++)
		xr_step(rc, "agno = %u", agno);
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
	for (uint32_t agno = 0; rc->scan.ags && agno < rc->mp->g.agcount; agno++) {
		struct ag_scan *as = &rc->scan.ags[agno];

		claims_free(&as->used);
		claims_free(&as->freesp);
		claims_free(&as->cntsp);
		claims_free(&as->rmaps);
		claims_free(&as->refcs);
		xk_vec_free(&as->chunks.vec);
		xk_vec_free(&as->fchunks.vec);
		free(as->seen_free);
	}
	free(rc->scan.ags);
	action_scan_free(rc);	/* its index into the lists */
	xk_vec_free(&rc->scan.inode_vec);
	xk_vec_free(&rc->scan.edge_vec);
	xk_vec_free(&rc->scan.rt_vec);
	plan_free(&rc->plan);
	quota_free(rc);
	rc->scan.ags = NULL;
}

/*
 * After each phase: its error (a phase returns 0 or a negative errno,
 * and records operational errors in rc->found.error), an interrupt
 * (interrupt.c), and the stop that XFSKIT_FAULT=phase:N asks for in test
 * builds.  Nonzero: stop the run.
 */
int
repair_phase_end(struct repair_ctx *rc, int err)
{
	if (err && !rc->found.error)
		repair_error(rc, err, "%s", rc->phase_what);
	if (!rc->found.error && repair_interrupted())
		repair_error(rc, -EINTR, "%s", rc->phase_what);
	if (!rc->found.error && xk_fault(XK_FAULT_PHASE))
		repair_error(rc, -ECANCELED, "%s (XFSKIT_FAULT stops after "
			     "this phase)", rc->phase_what);
	return rc->found.error;
}

int
repair_scan(struct repair_ctx *rc)
{
	struct repair_meter meter;
	int err;

	rc->scan.ags = xk_calloc(rc->mp->g.agcount, sizeof(*rc->scan.ags));
	if (!rc->scan.ags || plan_start(&rc->plan, rc->mp)) {
		repair_scan_free(rc);
		return repair_error(rc, -ENOMEM, "starting the check");
	}
	ags_attach_spill(rc);
	rc->plan.rtb_base = rc->found.nproblems;
	/*
	 * The scan reads each block once or twice in quick succession, so
	 * a small cache keeps nearly every hit and bounds memory.
	 */
	if (!rc->cache_bytes)
		rc->cache_bytes = CHECK_CACHE_BYTES;
	xk_mount_set_cache_limit(rc->mp, rc->cache_bytes);
	malloc_tuning();
	xr_step(rc, "scan filesystem freespace and inode maps...");
	phase(rc, 1, "check the superblocks...", "checking the superblocks");
	if (repair_phase_end(rc, phase_superblocks(rc)))
		return rc->found.error;
	phase(rc, 2, "scan AG headers and btrees...",
	      "scanning the AG headers and btrees");
	meter_start(rc, &meter, "Phase 2 - AG headers and btrees", "AGs", 1,
		    rc->mp->g.agcount);
	err = phase_ag_headers(rc);
	meter_end(rc);
	if (repair_phase_end(rc, err))
		return rc->found.error;
	root_chunk_found(rc);
	xr_phase(rc, 3);
	if (rc->scan.keep) {
		/* Only AG structures were rewritten since the last pass. */
		phase(rc, 3, "inodes as the last pass saw them...",
		      "taking the inodes the last pass saw");
		if (repair_phase_end(rc, phase_inodes_kept(rc)))
			return rc->found.error;
	} else {
		xr_step(rc, rc->opt.no_modify ? "scan (but don't clear) agi "
			"unlinked lists..." : "scan and clear agi unlinked "
			"lists...");
		xr_step(rc, "process known inodes and perform inode "
			"discovery...");
		phase(rc, 3, "check every inode...", "scanning inodes");
		if (repair_phase_end(rc, phase_inodes(rc)))
			return rc->found.error;
		xr_step(rc, "process newly discovered inodes...");
		rc->phase_what = "finding the inode chunks of lost AGs";
		if (repair_phase_end(rc, phase_find_chunks(rc)))
			return rc->found.error;
	}
	lists_report(rc);
	xr_phase(rc, 4);
	xr_step(rc, "setting up duplicate extent list...");
	xr_root_check(rc);
	phase(rc, 4, "check space ownership, free space, rmap and "
	      "refcount...", "checking space ownership");
	meter_start(rc, &meter, "Phase 4 - space cross-checks", "AGs", 1,
		    rc->mp->g.agcount);
	err = phase_space(rc);
	meter_end(rc);
	if (repair_phase_end(rc, err))
		return rc->found.error;
	xr_step(rc, "check for inodes claiming duplicate blocks...");
	ag_steps(rc);
	rc->phase_what = "checking the realtime bitmap and summary";
	if (repair_phase_end(rc, phase_rt(rc)))
		return rc->found.error;
	/* Repair: maps the rmapbt can restore (a no-op under -n). */
	rc->phase_what = "planning fork rebuilds from the rmapbt";
	check_rmap_forks(rc);
	if (rc->found.error)
		return rc->found.error;
	/* Lost directories the device scan gives back (reasm.c). */
	rc->phase_what = "rebuilding lost directories from the device scan";
	if (repair_phase_end(rc, reasm_dirs(rc)))
		return rc->found.error;
	/* Lost file block maps the scan's bmbt leaves give back. */
	rc->phase_what = "rebuilding block maps from the device scan";
	if (repair_phase_end(rc, reasm_forks(rc)))
		return rc->found.error;
	/* The counters need only the AG and inode scans. */
	xr_phase(rc, 5);
	if (!rc->opt.no_modify)
		xr_step(rc, "reset superblock...");
	phase(rc, 5, "check superblock counters...",
	      "checking the superblock counters");
	if (repair_phase_end(rc, phase_counters(rc)))
		return rc->found.error;
	xr_phase(rc, 6);
	xr_phase6_remade(rc);
	/* Printed with or without a realtime volume, as xfs_repair. */
	if (!rc->opt.no_modify)
		xr_step(rc, "resetting contents of realtime bitmap and "
			"summary inodes");
	xr_step(rc, "traversing filesystem ...");
	phase(rc, 6, "check directory connectivity and link counts...",
	      "checking directory connectivity and link counts");
	/* Its walks: the inodes twice, the entries once. */
	meter_start(rc, &meter, "Phase 6 - directory tree", "items", 1,
		    2 * (uint64_t)rc->scan.ninodes + rc->scan.nedges);
	err = phase_links(rc);
	meter_end(rc);
	if (repair_phase_end(rc, err))
		return rc->found.error;
	xr_step(rc, "traversal finished ...");
	xr_step(rc, "moving disconnected inodes to lost+found ...");
	xr_phase(rc, 7);
	phase(rc, 7, "check quota inodes and usage...", "checking quotas");
	if (repair_phase_end(rc, phase_quota(rc)))
		return rc->found.error;
	if (rc->mp->g.has_parent) {
		phase(rc, 8, "check parent pointers...",
		      "checking parent pointers");
		if (repair_phase_end(rc, phase_pptr(rc)))
			return rc->found.error;
	}
	rtb_guard(rc);
	return 0;
}

int
repair_check(struct repair_ctx *rc)
{
	int err = repair_scan(rc);

	repair_scan_free(rc);
	return err;
}
