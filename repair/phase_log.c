// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The log, before anything else.
 *
 * -n: a dirty log is a finding.  Its replay is run in memory only and
 *     kept in the cache, so the check that follows sees the filesystem
 *     as replay will leave it (xfs_repair checks the stale blocks and
 *     warns of spurious findings instead).  If replay is not possible
 *     offline, the finding says why and the check sees the disk as is.
 * otherwise: a dirty log is replayed and written (say so), or, when
 *     replay is not possible offline, the run stops and asks for a
 *     mount, as xfs_repair does.
 * -L: the log is zeroed, whatever it holds (its changes are lost).
 *
 * Either way the log head, once known, is what the newest metadata LSN
 * the verifiers meet is held against at the end (xr_log_behind).
 *
 * Out: 0 to go on checking, or an exit status to stop with.
 */
#include <string.h>

#include <xfskit/logv.h>

#include "repair.h"

/*
 * The head LSN: metadata stamped with it or later is ahead of the log,
 * which the run's end then formats in a later cycle (xr_log_behind), as
 * xfs_repair does; the blocks themselves are not damaged.  A zeroed log
 * (never written, or its blocks lost) has its head at 0:0, behind every
 * metadata LSN: xfs_repair formats it at the end too, else the kernel
 * and xfs_repair -n find the metadata ahead of it.  Memory or I/O is
 * recorded (rc->found.error: main stops the run).
 */
static void
set_log_head(struct repair_ctx *rc)
{
	struct xk_log *log;
	const struct xk_log_state *st;
	int err = xk_log_open(rc->mp, &log);

	if (repair_oserr(rc, err, "finding the head of the log") || err)
		goto out;
	st = xk_log_get_state(log);
	rc->log_zeroed = st->empty;
	if (!st->empty && st->head_cycle)
		rc->log_head_lsn = ((uint64_t)st->head_cycle << 32) |
				   st->head_blk;
out:
	xk_log_close(log);
}

int
phase_log(struct repair_ctx *rc)
{
	struct xk_log_report rep;
	char after[128];
	size_t n = 0;
	int err;

	/* An external log without its device: named as not checked. */
	if (!xk_mount_log_dev(rc->mp))
		return 0;
	if (rc->opt.zero_log) {
		char msg[256] = "";

		err = xk_log_zero(rc->mp, msg, sizeof(msg));
		if (repair_oserr(rc, err, "zeroing the log%s%s",
				 msg[0] ? ": " : "", msg))
			return REPAIR_EXIT_ERROR;
		if (err) {
			fprintf(stderr, "xfskit-repair: zeroing the log "
				"failed: %s\n", msg[0] ? msg :
				xk_strerror(err));
			return REPAIR_EXIT_ERROR;
		}
		action_report(rc, ACT_LOG_ZEROED, 0, -1, NULL, ": the changes "
			      "it held are lost");
		set_log_head(rc);
		return 0;
	}

	/* -t N: replay verifies and applies on as many threads. */
	err = xk_log_recover(rc->mp, rc->opt.no_modify ?
			     (XK_LOG_DRYRUN | XK_LOG_DRYRUN_KEEP) : 0,
			     rc->opt.threads, &rep);
	/*
	 * Memory or I/O says nothing of the log: not "dirty", never a
	 * reason for -L.  The run stops (main says what was written).
	 */
	if (repair_oserr(rc, err, "%s the log%s%s", rc->opt.no_modify ?
			 "reading" : "replaying", rep.msg[0] ? ": " : "",
			 rep.msg))
		return REPAIR_EXIT_ERROR;
	if (!err && rep.state.clean) {
		set_log_head(rc);
		return 0;
	}
	if (rc->opt.no_modify) {
		if (err)
			report(rc, PR_LOG_DIRTY, "log", -1, 0,
			       rc->mp->g.log_daddr, "dirty", "the log holds "
			       "changes that cannot be replayed offline (%s); "
			       "the check sees the blocks as they are on "
			       "disk", rep.msg);
		else
			report(rc, PR_LOG_DIRTY, "log", -1, 0,
			       rc->mp->g.log_daddr, "dirty", "the log holds "
			       "%u transactions (%llu items) that replay "
			       "would write to %llu blocks; the check sees "
			       "the filesystem as replay will leave it",
			       rep.transactions,
			       (unsigned long long)rep.items,
			       (unsigned long long)rep.blocks_written);
		/* Replayed blocks would carry LSNs up to the head. */
		set_log_head(rc);
		/* Other handles would not see the replay kept in the cache. */
		if (!err)
			rc->opt.threads = 1;
		return 0;
	}
	if (err) {
		fprintf(stderr, "xfskit-repair: %s: the log is dirty and "
			"cannot be replayed offline: %s\n", rc->opt.device,
			rep.msg[0] ? rep.msg : xk_strerror(err));
		/* xfs_repair's words, which scripts and people look for. */
		fprintf(stderr, "ERROR: The filesystem has valuable metadata "
			"changes in a log which needs to\nbe replayed.  Mount "
			"the filesystem to replay the log, and unmount it "
			"before\nre-running xfskit-repair.  If you are unable to "
			"mount the filesystem, then use\nthe -L option to "
			"destroy the log and attempt a repair.\nNote that "
			"destroying the log may cause corruption -- please "
			"attempt a mount\nof the filesystem before doing "
			"this.\n");
		return REPAIR_EXIT_LOG;
	}
	/*
	 * What the kernel would have done at mount, done here: named, for
	 * the AG indexes are then rebuilt (their shapes differ from what
	 * the kernel's record-by-record updates leave).
	 */
	after[0] = '\0';
	if (rep.intents_finished)
		n += snprintf(after + n, sizeof(after) - n, "; %llu intent%s "
			      "finished",
			      (unsigned long long)rep.intents_finished,
			      rep.intents_finished == 1 ? "" : "s");
	if (rep.unlinked_freed)
		n += snprintf(after + n, sizeof(after) - n, "; %llu unlinked "
			      "inode%s freed",
			      (unsigned long long)rep.unlinked_freed,
			      rep.unlinked_freed == 1 ? "" : "s");
	if (rep.cow_freed)
		snprintf(after + n, sizeof(after) - n, "; %llu CoW staging "
			 "extent%s freed", (unsigned long long)rep.cow_freed,
			 rep.cow_freed == 1 ? "" : "s");
	action_report(rc, ACT_LOG_REPLAYED, 0, -1, NULL, ": %u transactions, "
		      "%llu blocks written%s", rep.transactions,
		      (unsigned long long)rep.blocks_written, after);
	set_log_head(rc);
	return 0;
}
